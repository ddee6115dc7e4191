"""The cross-entropy UFM of any class counts in the count-group coordinates (M, t, c), and its Fenchel bound.

Notation of docs/ufm.md ("Any class counts"): groups a = 0..G−1 of m_a classes with count v_a (present groups
first), π_b = v_b/N, w_b = m_b π_b (Σ w_b = 1), λ = √(Nλ_Wλ_H). The logits of a sample of a class k of present
group b are, for a class j of group a,

    z_j = M_ab/√(m_a m_b π_b) + c_a                               (a ≠ b)
    z_j = (M_bb − t_b/(m_b − 1))/(m_b√π_b) + c_b                  (j ≠ k in group b)
    z_k = (M_bb + t_b)/(m_b√π_b) + c_b                            (the own class)

and f(M, t, c) = Σ_b w_b ℓ_CE(z, k); the problem is min f + λ(‖M‖_* + ‖t‖₁), c free (bias) or 0.

:class:`ReducedCE` evaluates F(M) = min_{t, c} f + λ‖t‖₁ and ∇F(M) = ∇_M f at the inner minimiser (Danskin), the
function handed to :func:`fctheory._nuclear.solve`. The inner minimisation is exact: t_b = 0 iff √π_b ≤ λ
(∂f/∂t_b = −√π_b at t_b = 0, whatever M and c), else the root of a scalar equation (Newton from the left on a
concave increasing function); c by damped Newton on the Schur complement of the (c, t) Hessian.
"""

from __future__ import annotations

import math

import numpy as np

from .._nuclear import fenchel_bound, nuclear_norm
from .groups import CountGroups

__all__ = ["ReducedCE", "certify_ce", "FLOOR_ULPS"]

#: f's float64 resolution in ulps of the largest logit difference: each ℓ_b carries a few ulps of max|A|
FLOOR_ULPS = 64

_NEWTON_MAX = 60


class ReducedCE:
    """F(M) and ∇F(M) of the reduced CE problem (module docstring) for count groups ``groups``.

    ``bias``: an unregularised bias c (then only the present groups have rows: an absent class's bias goes
    to −∞ and its row to 0, so the infimum equals the problem without it). ``nfev`` counts evaluations; the
    last inner minimiser (t, c) is kept as the warm start of the next call.
    """

    def __init__(self, groups: CountGroups, lam: float, bias: bool):
        self.groups, self.lam, self.bias = groups, float(lam), bool(bias)
        Gp = groups.Gp
        self.G = Gp if bias else groups.G
        self.Gp = Gp
        m = groups.sizes[: self.G].astype(np.float64)
        self.m, self.mp = m, m[:Gp]
        self.pi = groups.values[:Gp].astype(np.float64) / groups.N
        self.w = self.mp * self.pi
        self.sq = np.sqrt(self.pi)
        self.logm = np.log(m)
        self.scale = 1.0 / (np.sqrt(np.outer(m, self.mp)) * self.sq[None, :])  # ∂z/∂M: 1/√(m_a m_b π_b)
        self.gscale = np.sqrt(self.w[None, :] / m[:, None])  # ∂f/∂M_ab = √(w_b/m_a)·P_ab
        self.multi = self.mp >= 2
        self.active = self.multi & (self.sq > self.lam)  # t_b > 0 exactly there
        with np.errstate(divide="ignore"):
            self.log_others = np.log(self.mp - 1.0)  # −inf for a singleton group
        self.t = np.zeros(Gp)
        self.c = np.zeros(self.G)
        self.nfev = 0
        self.amax = 0.0  # the largest |logit difference| of the last evaluation (f's resolution)
        self.idx = np.arange(Gp)

    # ------------------------------------------------------------------------------------------ the types
    def logits(self, M, c):
        return M * self.scale + c[:, None]

    def types(self, L, t):
        """(ℓ_b, A) for logits L and t: A[a, b] = log(multiplicity) + logit − own logit of every other type
        (a ≠ b: the m_a classes of group a; a = b: the m_b − 1 others of the own group)."""
        idx = self.idx
        own_shift = np.where(self.multi, t, 0.0) / (self.mp * self.sq)  # t_b/(m_b√π_b); no t for a singleton
        Lbb = L[idx, idx]
        own = Lbb + own_shift
        A = self.logm[:, None] + L - own[None, :]
        with np.errstate(invalid="ignore"):
            A[idx, idx] = self.log_others - own_shift * self.mp / np.where(self.multi, self.mp - 1.0, 1.0)
        mx = np.maximum(A.max(axis=0), 0.0)
        S = np.exp(A - mx[None, :]).sum(axis=0)
        with np.errstate(divide="ignore"):
            ell = np.where(mx == 0.0, np.log1p(S), mx + np.log(np.exp(-mx) + S))
        finite = A[np.isfinite(A)]
        self.amax = float(np.max(np.abs(finite))) if finite.size else 0.0
        return ell, A

    def probabilities(self, ell, A):
        """P (G × G_p): the total probability of each type (a ≠ b: group a; a = b: the others of b) and
        1 − P_own = −expm1(−ℓ_b), without cancellation."""
        return np.exp(A - ell[None, :]), -np.expm1(-ell)

    # ------------------------------------------------------------------------------------------ inner t
    def solve_t(self, L):
        """The exact t*(M, c): 0 where √π_b ≤ λ, else the root u of ψ(u) = u + log(1 − κ) − log(A e^{−u/(m−1)}
        + κρ), κ = 1 − λ/√π_b, A = 1 + κ(m − 1), ρ = Σ_{a≠b} m_a e^{L_ab − L_bb} (t_b = u·m_b√π_b)."""
        t = np.zeros(self.Gp)
        act = np.flatnonzero(self.active)
        if act.size == 0:
            return t
        D = self.logm[:, None] + L[:, act] - L[act, act][None, :]
        D[act, np.arange(act.size)] = -np.inf
        log_rho = _logsumexp0(D)
        m = self.mp[act]
        r = self.lam / self.sq[act]  # 1 − κ ∈ (0, 1)
        kappa = 1.0 - r
        logA = np.log1p(kappa * (m - 1.0))
        with np.errstate(divide="ignore"):
            lkr = np.log(kappa) + log_rho
        lr = np.log(r)
        u = np.zeros(act.size)
        for _ in range(_NEWTON_MAX):
            a = logA - u / (m - 1.0)
            top = np.logaddexp(a, lkr)
            psi = u + lr - top
            sig = np.exp(a - top)
            step = psi / (1.0 + sig / (m - 1.0))
            u = u - step
            if np.all(np.abs(step) <= 4e-16 * (1.0 + np.abs(u))):
                break
        t[act] = np.maximum(u, 0.0) * m * self.sq[act]
        return t

    # ------------------------------------------------------------------------------------------ inner c
    def _phi(self, M, c):
        L = self.logits(M, c)
        t = self.solve_t(L)
        ell, A = self.types(L, t)
        return float(self.w @ ell) + self.lam * float(np.sum(t)), L, t, ell, A

    def solve_c(self, M, c):
        """The minimiser c of φ(c) = min_t f + λ‖t‖₁ (damped Newton on the Schur complement; Σc = 0)."""
        phi, _, t, ell, A = self._phi(M, c)
        for _ in range(_NEWTON_MAX):
            P, one_minus_own = self.probabilities(ell, A)
            g, H = self._c_derivatives(P, one_minus_own, ell)
            step = _psd_solve(H, -g)
            dec = -float(g @ step)  # ≈ 2(φ − min φ)
            if not dec > 0:
                break
            # below φ's resolution the decrease cannot be seen: Newton's full step (quadratic region), then stop
            resolved = dec > 64 * np.finfo(float).eps * max(abs(phi), 1.0)
            tau = 1.0
            while True:
                phin, _, tn, elln, An = self._phi(M, c + tau * step)
                if phin <= phi - 0.25 * tau * dec or not resolved:
                    break
                tau *= 0.5
                if tau < 1e-12:
                    return c - c.mean(), t
            c, phi, t, ell, A = c + tau * step, phin, tn, elln, An
            if not resolved:
                break
        return c - c.mean(), t

    def _c_derivatives(self, P, one_minus_own, ell):
        """∇_c φ and its Hessian (the (c, c) block minus the Schur term of the active t)."""
        idx = self.idx
        Ptot = P.copy()
        Ptot[idx, idx] += np.exp(-ell)  # the own class joins its group's total
        w = self.w
        g = Ptot @ w - w  # Σ_b w_b (P_ab − [a = b])
        H = np.diag(Ptot @ w) - (Ptot * w) @ Ptot.T
        act = np.flatnonzero(self.active)
        if act.size:
            m = self.mp[act]
            Po = P[act, act] / (m - 1.0)  # one other class of the own group
            Pown = np.exp(-ell[act])
            D = Pown - Po
            htt = (Pown + P[act, act] / (m - 1.0) ** 2 - D * D) / m
            hct = -Ptot[:, act] * (self.sq[act] * D)[None, :]
            hct[act, np.arange(act.size)] += self.sq[act] * D
            H = H - (hct / htt[None, :]) @ hct.T
        return g, H

    # ------------------------------------------------------------------------------------------ F and ∇F
    def inner(self, M):
        """(t, c) minimising f + λ‖t‖₁ at M (warm-started)."""
        if self.bias:
            self.c, t = self.solve_c(M, self.c)
        else:
            t = self.solve_t(self.logits(M, self.c))
        self.t = t
        return t, self.c

    def evaluate(self, M, t, c):
        """f, ∇_M f, ∂f/∂t, ∂f/∂c, ℓ and the type probabilities at (M, t, c)."""
        ell, A = self.types(self.logits(M, c), t)
        P, one_minus_own = self.probabilities(ell, A)
        return float(self.w @ ell), P, one_minus_own, ell

    def grad_M(self, P, one_minus_own):
        Gm = P.copy()
        Gm[self.idx, self.idx] -= one_minus_own  # P_o + P_own − 1
        return self.gscale * Gm

    def grad_t(self, P, one_minus_own):
        """∂f/∂t_b = √π_b·(P_own − 1 − P_o/(m_b − 1)) (0 for a singleton group)."""
        Po = np.where(self.multi, P[self.idx, self.idx] / np.where(self.multi, self.mp - 1.0, 1.0), 0.0)
        return np.where(self.multi, -self.sq * (one_minus_own + Po), 0.0)

    def __call__(self, M):
        self.nfev += 1
        t, c = self.inner(M)
        f, P, omo, _ = self.evaluate(M, t, c)
        return f + self.lam * float(np.sum(t)), self.grad_M(P, omo)

    # ------------------------------------------------------------------------------------------ ∇²F (no bias)
    def _curvature(self, M, t):
        """(Pt, ν, h_tt, h_mt) at (M, t): the type totals Pt (own class in its group's), and the pieces of the
        Schur complement of the inner t (docs: ∇²F = ∇²_MM f − ∇²_Mt f (∂²_tt f)⁻¹ ∇²_tM f, column by column)."""
        _, P, _, ell = self.evaluate(M, t, self.c)
        idx = self.idx
        Pown = np.exp(-ell)
        Po = P[idx, idx].copy()
        Pt = P.copy()
        Pt[idx, idx] = Po + Pown
        e_own = 1.0 / (self.mp * self.sq)  # ∂(own logit)/∂t_b
        e_o = np.where(self.multi, e_own / np.where(self.multi, self.mp - 1.0, 1.0), 0.0)  # −∂(other)/∂t_b
        nu = Pown * e_own - Po * e_o
        htt = self.w * (Pown * e_own**2 + Po * e_o**2 - nu**2)
        hmt = -self.w[None, :] * Pt * self.scale * nu[None, :]
        hmt[idx, idx] = self.w * self.scale[idx, idx] * nu * (1.0 - Pt[idx, idx])
        return Pt, htt, hmt

    def hessian(self, M, t):
        """D ↦ ∇²F(M)[D] (no bias): f's Hessian column by column, w_b S_b(diag(Pt) − PtPtᵀ)S_b, less the Schur
        term of the active t_b (F minimises over them)."""
        Pt, htt, hmt = self._curvature(M, t)
        S, w, act = self.scale, self.w, self.active

        def apply(D):
            dz = D * S
            mu = (Pt * dz).sum(axis=0)
            out = w[None, :] * S * (Pt * dz - Pt * mu[None, :])
            if act.any():
                corr = np.where(act, (hmt * D).sum(axis=0) / np.where(act, htt, 1.0), 0.0)
                out = out - hmt * corr[None, :]
            return out

        return apply

    def hessian_diagonal(self, M, t):
        """The diagonal of ∇²F(M) (no bias), the preconditioner's start."""
        Pt, htt, hmt = self._curvature(M, t)
        diag = self.w[None, :] * self.scale**2 * (Pt - Pt * Pt)
        if self.active.any():
            diag = diag - np.where(self.active[None, :], hmt**2 / np.where(self.active, htt, 1.0)[None, :], 0.0)
        return diag

    def floor(self) -> float:
        return FLOOR_ULPS * np.finfo(float).eps * max(self.amax, 1.0)


def _logsumexp0(D):
    """log Σ_a e^{D_ab} per column (−inf for a column of −inf: a group alone, ρ = 0)."""
    mx = D.max(axis=0)
    mx = np.where(np.isfinite(mx), mx, 0.0)
    with np.errstate(divide="ignore"):
        return mx + np.log(np.exp(D - mx[None, :]).sum(axis=0))


def _psd_solve(H, g):
    """Solve H x = g for a PSD H with the null direction 1 (the constant bias shift): H + τ11ᵀ is definite."""
    n = H.shape[0]
    tau = max(float(np.mean(np.diagonal(H))), 1e-300)
    Hr = H + tau * np.ones((n, n)) / n
    try:
        L = np.linalg.cholesky(Hr)
        return np.linalg.solve(L.T, np.linalg.solve(L, g))
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(Hr, g, rcond=None)[0]


# ============================================================================== the certificate
def certify_ce(red: ReducedCE, M, t, c):
    """(g, LB, ρ, align) at (M, t, c): the objective g = f + λ(‖M‖_* + ‖t‖₁) and a lower bound on its minimum
    over all (M, t, c) (hence over all K × K_p matrices X and biases: the group reduction is exact).

    Fenchel: with q_b the softmax of the samples of group b, the dual point s·(q − e) is feasible when
    s·max(‖∇_M(q)‖₂, ‖∇_t(q)‖_∞) ≤ λ and, with a bias, its bias part Σ_b w_b(q_b − e_b) vanishes; its value is
    ≥ s·Σ_b w_b H(q_b). Without a bias q = p and Σ w H(p) = f − ⟨∇f, θ⟩ (:func:`fctheory._nuclear.fenchel_bound`,
    with the dual norm widened by ‖∇_t‖_∞). With a bias the computed p has Σ_b w_b(p_b − e_b) = r ≈ 0, not 0:
    q moves r_b⁺/w_b of each own class's probability onto the classes with r < 0 (:func:`_bias_free`), which
    makes the bias part vanish exactly; the bound is then s·Σ w H(q) (0, i.e. uninformative, if q < 0).
    """
    lam = red.lam
    t = np.where(red.multi, t, 0.0)  # a group of one class has no within-group part
    f, P, omo, ell = red.evaluate(M, t, c)
    nucM = nuclear_norm(M)
    g = f + lam * (nucM + float(np.sum(np.abs(t))))
    if not red.bias:
        gt = red.grad_t(P, omo)
        GM = red.grad_M(P, omo)
        lb, rho, align, _ = fenchel_bound(f - float(gt @ t), GM, M, lam, nucM)
        gt_inf = float(np.max(np.abs(gt))) if gt.size else 0.0
        gop = rho * lam
        if gt_inf > max(gop, lam):  # the t part of the dual norm decides s
            lb *= max(gop, lam) / gt_inf
        return g, lb, max(rho, gt_inf / lam), align
    Q, q_omo = _bias_free(red, P, omo, ell)
    if Q is None:
        return g, 0.0, math.inf, math.nan
    GM, gt = red.grad_M(Q, q_omo), red.grad_t(Q, q_omo)
    gop = float(np.linalg.norm(GM, 2))
    dual = max(gop, float(np.max(np.abs(gt))) if gt.size else 0.0)
    s = 1.0 if dual <= lam else lam / dual
    E = _entropy(red, Q, q_omo)
    inner = float(np.sum(GM * M))
    align = (inner + lam * nucM) / (lam * nucM) if nucM > 0 else 0.0
    return g, s * max(E, 0.0), dual / lam, align


def _bias_free(red: ReducedCE, P, omo, ell):
    """Type probabilities q with Σ_b w_b (q_b − e_b) = 0 exactly (in exact arithmetic), from p with residual
    r_a = Σ_b w_b (P_ab − [a = b]): own class of group a gives up r_a⁺/w_a, spread over the classes of the
    groups with r < 0 in proportion to r⁻. (None where an own probability would turn negative.)"""
    idx = red.idx
    own = np.exp(-ell)
    Ptot = P.copy()
    Ptot[idx, idx] += own
    r = Ptot @ red.w - red.w
    rp, rm = np.maximum(r, 0.0), np.maximum(-r, 0.0)
    Rm = float(rm.sum())
    if Rm == 0.0:
        return P, omo
    eps = rp / red.w  # the own probability each class of group b gives up
    if np.any(eps > own):
        return None, None
    Q = P + np.outer(rm / Rm, eps)  # type (a, b), a ≠ b: group a receives eps_b·r_a⁻/R⁻ in total
    Q[idx, idx] = P[idx, idx] + eps * rm / Rm  # the others of group b (r_b⁻ = 0 where eps_b > 0)
    return Q, omo + eps


def _entropy(red: ReducedCE, Q, q_omo):
    """Σ_b w_b H(q_b), the entropy of every class's softmax: the type (a, b) holds Q_ab over its classes."""
    idx = red.idx
    mult = np.broadcast_to(red.m[:, None], Q.shape).copy()
    mult[idx, idx] = red.mp - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        per = np.where(Q > 0, -Q * np.log(Q / np.where(mult > 0, mult, 1.0)), 0.0)
        own = 1.0 - q_omo
        own_h = np.where(own > 0, -own * np.log1p(-q_omo), 0.0)
    return float(red.w @ (per.sum(axis=0) + own_h))
