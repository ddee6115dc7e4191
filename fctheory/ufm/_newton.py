"""A Newton polish for the reduced CE problem where its optimum has full rank (docs/ufm.md, "Any class counts").

Where λ is small (below every √π_b, the regime that approaches SELI) the optimum M* has full rank once the
common-shift direction √m (f is invariant under M → M + √m κᵀ, and ‖M‖_* is smallest without it) is removed:
N = Qᵀ M with Q an orthonormal basis of √m^⊥ (a Householder reflector). There ‖N‖_* is smooth and
g(N) = F(QN) + λ‖N‖_* is minimised by Newton's method: ∇g = Qᵀ∇F + λ·UV₁ᵀ (the polar factor of N = UΣV₁ᵀ) and

    ∇²g[D] = Qᵀ∇²F[QD] + λ·U(Ω V₁ᵀ + diag(1/σ)D̃₂V₂ᵀ),   Ω_ij = (D̃_ij − D̃_ji)/(σ_i + σ_j),

D̃ = UᵀD[V₁ V₂] (the derivative of the polar factor). The Newton systems are solved by conjugate gradients in the
SVD basis, preconditioned by the nuclear term's 2 × 2 blocks plus the diagonal of ∇²F moved to that basis. The
first-order solver (:func:`fctheory._nuclear.solve`) crawls there (the softmax saturates: f is nearly flat along
the margins); Newton converges quadratically from its output. Only for problems without a bias; the result is
certified by :func:`fctheory.ufm._reduced.certify_ce` like any other point.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ._reduced import ReducedCE, certify_ce

__all__ = ["newton_polish"]

#: the smallest singular value, relative to the largest, at which ‖N‖_* still counts as smooth
RANK_FLOOR = 1e-9
#: conjugate-gradient iterations per Newton step at most
CG_MAX = 300


class _Reflector:
    """H = I − 2uuᵀ with H·(√m/‖√m‖) = e₁: M = H[0; N], N = (HM)[1:]."""

    def __init__(self, v):
        v = v / np.linalg.norm(v)
        u = -v
        u[0] += 1.0
        nu = np.linalg.norm(u)
        self.u = u / nu if nu > 1e-300 else None

    def apply(self, A):
        return A if self.u is None else A - 2.0 * np.outer(self.u, self.u @ A)

    def to_M(self, N):
        return self.apply(np.vstack([np.zeros((1, N.shape[1])), N]))

    def to_N(self, A):
        return self.apply(A)[1:]


def _g(red, ref, N, lam):
    F, GM = red(ref.to_M(N))
    return F + lam * float(np.sum(np.linalg.svd(N, compute_uv=False))), GM


class _Step:
    """The Newton system at N: ∇g in the SVD basis and the Hessian-vector products there (module docstring)."""

    def __init__(self, red: ReducedCE, ref: _Reflector, N, GM):
        self.red, self.ref, self.lam = red, ref, red.lam
        U, s, Vt = np.linalg.svd(N, full_matrices=True)
        p = N.shape[0]
        self.U, self.s, self.V1, self.V2 = U, s, Vt[:p].T, Vt[p:].T
        M = ref.to_M(N)
        self.hv = red.hessian(M, red.t)
        grad = ref.to_N(GM) + self.lam * U @ self.V1.T
        self.r1, self.r2 = -(U.T @ grad @ self.V1), -(U.T @ grad @ self.V2)
        self.grad = grad
        self.kap = self.lam / (s[:, None] + s[None, :])
        # the diagonal of ∇²F in M, moved to N (Q = H[:, 1:]) and to the SVD basis: the preconditioner's f part
        Q = ref.apply(np.eye(M.shape[0]))[:, 1:]
        DN = (Q * Q).T @ red.hessian_diagonal(M, red.t)
        self.D1 = (U * U).T @ DN @ (self.V1 * self.V1)
        self.D2 = (U * U).T @ DN @ (self.V2 * self.V2)

    def apply(self, X1, X2):
        D = self.U @ X1 @ self.V1.T + self.U @ X2 @ self.V2.T
        HN = self.ref.to_N(self.hv(self.ref.to_M(D)))
        Y1 = self.U.T @ HN @ self.V1 + self.lam * (X1 - X1.T) * self.kap / self.lam
        Y2 = self.U.T @ HN @ self.V2 + self.lam * X2 / self.s[:, None]
        return Y1, Y2

    def precondition(self, R1, R2):
        a, b, k = self.D1, self.D1.T, self.kap
        det = (a + k) * (b + k) - k * k
        Z1 = ((b + k) * R1 + k * R1.T) / det
        di = np.diag_indices(Z1.shape[0])
        Z1[di] = R1[di] / np.maximum(self.D1[di], 1e-300)
        return Z1, R2 / (self.D2 + self.lam / self.s[:, None])

    def solve(self):
        """Preconditioned CG to a relative residual min(0.1, √‖r₀‖) (an inexact Newton step)."""
        r1, r2 = self.r1.copy(), self.r2.copy()
        x1, x2 = np.zeros_like(r1), np.zeros_like(r2)
        z1, z2 = self.precondition(r1, r2)
        d1, d2 = z1.copy(), z2.copy()
        rz = float(np.sum(r1 * z1) + np.sum(r2 * z2))
        r0 = math.sqrt(float(np.sum(r1 * r1) + np.sum(r2 * r2)))
        for _ in range(CG_MAX):
            q1, q2 = self.apply(d1, d2)
            dq = float(np.sum(d1 * q1) + np.sum(d2 * q2))
            if not dq > 0:
                break
            alpha = rz / dq
            x1, x2, r1, r2 = x1 + alpha * d1, x2 + alpha * d2, r1 - alpha * q1, r2 - alpha * q2
            if math.sqrt(float(np.sum(r1 * r1) + np.sum(r2 * r2))) <= min(0.1, math.sqrt(r0)) * r0:
                break
            z1, z2 = self.precondition(r1, r2)
            rz, rz_old = float(np.sum(r1 * z1) + np.sum(r2 * z2)), rz
            d1, d2 = z1 + (rz / rz_old) * d1, z2 + (rz / rz_old) * d2
        return self.U @ x1 @ self.V1.T + self.U @ x2 @ self.V2.T


def newton_polish(red: ReducedCE, M, *, tol: float, deadline: float, maxiter: int = 40):
    """Newton's method from M on the full-rank reduced problem (module docstring). Returns (M, g, lower bound)
    of the best certified point met (M itself when its rank is not full: nothing is done)."""
    ref = _Reflector(np.sqrt(red.m))
    lam = red.lam
    g0, lb0, _, _ = certify_ce(red, M, *red.inner(M))
    best = (M, g0, lb0)
    N = ref.to_N(M)
    s = np.linalg.svd(N, compute_uv=False)
    if g0 - lb0 <= tol * abs(g0) or s[-1] <= RANK_FLOOR * s[0]:
        return best
    for _ in range(maxiter):
        if time.perf_counter() > deadline:
            break
        g, GM = _g(red, ref, N, lam)
        step = _Step(red, ref, N, GM)
        D = step.solve()
        dec = -float(np.sum(step.grad * D))
        if not dec > 0:
            break
        # below g's resolution the decrease cannot be seen: the full step (the quadratic region; the certificate
        # of each iterate decides what is kept)
        tau = 1.0
        while dec > 64 * np.finfo(float).eps * abs(g) and tau > 1e-10:
            if _g(red, ref, N + tau * D, lam)[0] <= g - 1e-4 * tau * dec:
                break
            tau *= 0.5
        if not tau > 1e-10:
            break
        N = N + tau * D
        Mn = ref.to_M(N)
        g_cert, lb, _, _ = certify_ce(red, Mn, *red.inner(Mn))
        if g_cert - lb < best[1] - best[2]:
            best = (Mn, g_cert, lb)
        s = np.linalg.svd(N, compute_uv=False)
        if g_cert - lb <= tol * abs(g_cert) or s[-1] <= RANK_FLOOR * s[0]:
            break
    return best
