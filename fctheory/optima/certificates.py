"""Rigorous certificates in ball arithmetic (python-flint ``arb``) of the optima of :mod:`fctheory.optima`.

:func:`certify_optimality` re-does, at given float weights (W, U) of network h, every quantity of the Fenchel
certificate of :mod:`fctheory._nuclear` with outward rounding: f(X), ∇f(X) and E = f − ⟨∇f, X⟩ at X = ÛᵀW by
enumerating every sentence of every class, R(W, U), and an upper bound t ≥ ‖∇f(X)‖₂² certified by the positive
pivots of an LDLᵀ factorisation of t·I − ∇fᵀ∇f. Then lo ≤ min R ≤ R(W, U) ≤ hi, over every width.
"""

from __future__ import annotations

import math

import numpy as np

from .._interval import enclosure, workprec
from .._validate import Array, Int, Instance, Real, fail, public
from ..network import U_hat
from ..task import Task

__all__ = ["INTERVAL_MAX_PAIRS", "certify_optimality", "certified_top_eig"]


#: (sentence, class) pairs the ball-arithmetic certificate enumerates at most by default (about 10 s)
INTERVAL_MAX_PAIRS = 500_000


@public(
    task=Instance(Task),
    W=Array(ndim=2),
    U=Array(ndim=2),
    lam=Real(lo=0.0, lo_open=True),
    prec=Int(min=53, max=4096),
    max_pairs=Int(min=1).or_none(),
)
def certify_optimality(task: Task, W, U, lam, *, prec: int = 128, max_pairs: int | None = None) -> dict:
    """Rigorous bounds, in ball arithmetic, on R(W, U) of (5) and on min R, at the float weights (W, U).

    Every sentence of every class is enumerated with python-flint ``arb`` balls (outward rounding), at the
    exact float64 entries of W, U, λ and μ: f(X), ∇f(X) and E = f − ⟨∇f, X⟩ at X = ÛᵀW, and R(W, U). An
    upper bound t ≥ ‖∇f(X)‖₂² is certified by an LDLᵀ factorisation of t·I − ∇fᵀ∇f with positive pivots
    in ball arithmetic. Then min R ≥ s·E with s = min(1, λ/√t) (the Fenchel bound of
    :mod:`fctheory.risk.convex`), valid over every width.

    Parameters
    ----------
    task : Task
    W : array_like, shape (d, n_w)
    U : array_like, shape (K, L·d)
    lam : float
    prec : int
        Working precision in bits (default 128).
    max_pairs : int or None
        Refuse tasks with more (sentence, class) pairs than this (default :data:`INTERVAL_MAX_PAIRS`).

    Returns
    -------
    dict
        ``R``: (lo, hi) with lo ≤ R(W, U) ≤ hi; ``lower_bound``: lo ≤ min R; ``gap``: an upper bound of
        R(W, U) − min R; ``rho``: an upper bound of ‖∇f(X)‖₂/λ.
    """
    limit = INTERVAL_MAX_PAIRS if max_pairs is None else max_pairs
    pairs = task.K * task.s_c**task.L * task.K
    if pairs > limit:
        fail("task", task, f"has {pairs} (sentence, class) pairs, above max_pairs={limit} for ball arithmetic")
    if W.shape[1] != task.n_w or U.shape != (task.K, task.L * W.shape[0]):
        fail("U", U, f"shapes {W.shape}, {U.shape} do not fit the task (W: (d, {task.n_w}), U: ({task.K}, L*d))")
    with workprec(prec) as flint:
        Xb = _arb_matrix(flint, U_hat(U, L=task.L).T) * _arb_matrix(flint, W)
        X = [[Xb[i, j] for j in range(task.n_w)] for i in range(task.K * task.L)]
        f, G, E = _arb_f_grad(flint, task, X)
        lam_b = flint.arb(float(lam))
        pen = sum((flint.arb(float(v)) ** 2 for v in np.concatenate([W.ravel(), U.ravel()])), flint.arb(0))
        R = f + lam_b * pen / 2
        t = certified_top_eig(flint, G)
        s = flint.arb(1) if math.sqrt(t) <= float(lam) else lam_b / flint.arb(t).sqrt()
        E_lo = enclosure(E, prec).lo
        LB = s * flint.arb(max(E_lo, 0.0))
        eR, eL = enclosure(R, prec), enclosure(LB, prec)
        gap = enclosure(flint.arb(eR.hi) - flint.arb(eL.lo), prec).hi
        rho = enclosure(flint.arb(t).sqrt() / lam_b, prec).hi
    out = {"R": (eR.lo, eR.hi), "lower_bound": eL.lo, "gap": gap, "rho": rho}
    if not all(math.isfinite(v) for v in (eR.lo, eR.hi, eL.lo, gap, rho)):
        fail("W", W, f"the bounds leave the float64 range at these weights: {out}")
    return out


def _arb_matrix(flint, A):
    return flint.arb_mat(A.shape[0], A.shape[1], [float(v) for v in np.asarray(A, dtype=float).ravel()])


def _arb_f_grad(flint, task, X):
    """Balls of f(X), ∇f(X) (nested lists KL×n_w) and E = Σ_x c_x H(p_x), every sentence enumerated."""
    K, L, s = task.K, task.L, task.s_c
    mu = [flint.arb(float(m)) for m in task.mu]
    zero = flint.arb(0)
    G = [[zero for _ in range(task.n_w)] for _ in range(K * L)]
    f = E = zero
    for k in range(K):
        for betas in np.ndindex(*(s,) * L):
            words = [int(task.Z[k, ell]) * s + b for ell, b in enumerate(betas)]
            c = flint.arb(1)
            for b in betas:
                c *= mu[b]
            c /= K
            y = [sum((X[j * L + ell][w] for ell, w in enumerate(words)), zero) for j in range(K)]
            m = flint.arb(max(float(v.mid()) for v in y))
            lse = m + sum(((v - m).exp() for v in y), zero).log()
            p = [(v - lse).exp() for v in y]
            f += c * (lse - y[k])
            E += c * (lse - sum((pj * yj for pj, yj in zip(p, y)), zero))
            for j in range(K):
                q = c * (p[j] - (1 if j == k else 0))
                for ell, w in enumerate(words):
                    G[j * L + ell][w] += q
    return f, G, E


def certified_top_eig(flint, G) -> float:
    """A float t with ‖G‖₂² ≤ t, certified by positive pivots of LDLᵀ(t·I − GᵀG) in ball arithmetic."""
    rows, cols = len(G), len(G[0])
    Gm = flint.arb_mat(rows, cols, [v for row in G for v in row])
    M = Gm.transpose() * Gm if cols <= rows else Gm * Gm.transpose()
    n = M.nrows()
    mid = np.array([[float(M[i, j].mid()) for j in range(n)] for i in range(n)])
    t = float(np.linalg.eigvalsh(mid)[-1]) if n else 0.0
    t = max(t, 0.0) * (1 + 1e-13) + 1e-300
    for _ in range(60):
        if _positive_definite(flint, M, t):
            return t
        t *= 1 + 1e-11 * 10 ** (_ // 6)
    fail("precision", "interval", "could not certify an upper bound of the gradient's spectral norm")


def _positive_definite(flint, M, t) -> bool:
    """Whether every matrix of the ball t·I − M is positive definite (LDLᵀ pivots certainly > 0)."""
    n = M.nrows()
    A = [[(flint.arb(t) if i == j else flint.arb(0)) - M[i, j] for j in range(n)] for i in range(n)]
    D, Lw = [], [[None] * n for _ in range(n)]
    for j in range(n):
        dj = A[j][j] - sum((Lw[j][k] ** 2 * D[k] for k in range(j)), flint.arb(0))
        if not dj > 0:
            return False
        D.append(dj)
        for i in range(j + 1, n):
            Lw[i][j] = (A[i][j] - sum((Lw[i][k] * Lw[j][k] * D[k] for k in range(j)), flint.arb(0))) / dj
    return True
