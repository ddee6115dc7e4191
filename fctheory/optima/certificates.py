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
from ..risk.empirical import check_data
from ..task import Task

__all__ = [
    "INTERVAL_MAX_PAIRS",
    "PREC_MIN",
    "certify_optimality",
    "certify_optimality_empirical",
    "certified_top_eig",
]


#: (sentence, class) pairs the ball-arithmetic certificate enumerates at most by default (about 10 s)
INTERVAL_MAX_PAIRS = 500_000
#: the lowest working precision accepted (bits): the bounds stay rigorous, only wider (soundness tests use it)
PREC_MIN = 16


@public(
    task=Instance(Task),
    W=Array(ndim=2),
    U=Array(ndim=2),
    lam=Real(lo=0.0, lo_open=True),
    prec=Int(min=PREC_MIN, max=4096),
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
        Working precision in bits (default 128; down to PREC_MIN = 16, where the balls are wide and the bounds
        loose but still rigorous).
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
    _check_shapes(task, W, U)
    s = task.s_c

    def items(flint):
        mu = [flint.arb(float(m)) for m in task.mu]
        for k in range(task.K):
            for betas in np.ndindex(*(s,) * task.L):
                c = flint.arb(1)
                for b in betas:
                    c *= mu[b]
                yield [int(task.Z[k, ell]) * s + b for ell, b in enumerate(betas)], k, c / task.K

    return _certify(task, W, U, lam, prec, items)


@public(
    task=Instance(Task),
    W=Array(ndim=2),
    U=Array(ndim=2),
    lam=Real(lo=0.0, lo_open=True),
    S=Array(ndim=2, integer=True, min=0),
    y=Array(ndim=1, integer=True, min=0),
    prec=Int(min=PREC_MIN, max=4096),
    max_pairs=Int(min=1).or_none(),
)
def certify_optimality_empirical(task: Task, W, U, lam, S, y, *, prec: int = 128, max_pairs: int | None = None) -> dict:
    """:func:`certify_optimality` for the training objective R̂ of the sentences (S, y): rigorous bounds on
    R̂(W, U) and on min R̂ over every width (the Fenchel bound of :mod:`fctheory.optima.empirical`).

    The same ball arithmetic with the N training sentences, each of weight 1/N, in place of the enumerated
    law of every class: f̂(X), ∇f̂(X) and E = (1/N) Σ_i H(p_i) at X = ÛᵀW, R̂(W, U) = f̂ + (λ/2)(‖W‖² + ‖U‖²),
    t ≥ ‖∇f̂(X)‖₂² by positive LDLᵀ pivots of t·I − ∇f̂ᵀ∇f̂, and min R̂ ≥ min(1, λ/√t)·E.

    Parameters
    ----------
    task : Task
    W : array_like, shape (d, n_w)
    U : array_like, shape (K, L·d)
    lam : float
    S : array_like of int, shape (N, L)
        Sentences (word indices α·s_c + β; every word of its class's concept).
    y : array_like of int, shape (N,)
        Labels.
    prec : int
        Working precision in bits (default 128, at least PREC_MIN = 16).
    max_pairs : int or None
        Refuse samples with more (sentence, class) pairs N·K than this (default :data:`INTERVAL_MAX_PAIRS`).

    Returns
    -------
    dict
        As :func:`certify_optimality`, for R̂: ``R`` (lo, hi), ``lower_bound``, ``gap``, ``rho``.
    """
    check_data(task, S, y, name="S")
    limit = INTERVAL_MAX_PAIRS if max_pairs is None else max_pairs
    if S.shape[0] * task.K > limit:
        fail("S", S, f"has {S.shape[0] * task.K} (sentence, class) pairs, above max_pairs={limit} for ball arithmetic")
    _check_shapes(task, W, U)

    def items(flint):
        c = flint.arb(1) / S.shape[0]
        for words, k in zip(S.tolist(), y.tolist()):
            yield words, k, c

    return _certify(task, W, U, lam, prec, items)


def _check_shapes(task, W, U):
    if W.shape[1] != task.n_w or U.shape != (task.K, task.L * W.shape[0]):
        fail("U", U, f"shapes {W.shape}, {U.shape} do not fit the task (W: (d, {task.n_w}), U: ({task.K}, L*d))")


def _certify(task, W, U, lam, prec, items) -> dict:
    """The certificate in balls: f, ∇f, E over ``items(flint)`` (words, class, weight), R, t ≥ ‖∇f‖₂², bounds."""
    with workprec(prec) as flint:
        Xb = _arb_matrix(flint, U_hat(U, L=task.L).T) * _arb_matrix(flint, W)
        X = [[Xb[i, j] for j in range(task.n_w)] for i in range(task.K * task.L)]
        f, G, E = _arb_f_grad(flint, task, X, items(flint))
        pen = sum((flint.arb(float(v)) ** 2 for v in np.concatenate([W.ravel(), U.ravel()])), flint.arb(0))
        out = _bounds(flint, f, G, E, pen, float(lam), prec)
    if not all(math.isfinite(v) for v in (*out["R"], out["lower_bound"], out["gap"], out["rho"])):
        fail("W", W, f"the bounds leave the float64 range at these weights: {out}")
    return out


def _bounds(flint, f, G, E, pen, lam, prec) -> dict:
    """R = f + (λ/2)·pen and the Fenchel bound s·E, s = min(1, λ/√t), each from the safe end of its ball."""
    lam_b = flint.arb(lam)
    R = f + lam_b * pen / 2
    t = certified_top_eig(flint, G)
    # s ≤ λ/√t ≤ λ/‖∇f‖₂ and s ≤ 1: the lower end of the ball of λ/√t (a larger s would overstate the bound)
    s = min(1.0, enclosure(lam_b / flint.arb(t).sqrt(), prec).lo)
    E_lo = enclosure(E, prec).lo
    # s·E_lo of two floats, rounded down (≤ half an ulp off before the step): no ball whose end could be mistaken
    LB = s * max(E_lo, 0.0)
    LB = math.nextafter(LB, -math.inf) if LB > 0 else 0.0
    eR = enclosure(R, prec)
    gap = enclosure(flint.arb(eR.hi) - flint.arb(LB), prec).hi
    rho = enclosure(flint.arb(t).sqrt() / lam_b, prec).hi
    return {"R": (eR.lo, eR.hi), "lower_bound": LB, "gap": gap, "rho": rho}


def _arb_matrix(flint, A):
    return flint.arb_mat(A.shape[0], A.shape[1], [float(v) for v in np.asarray(A, dtype=float).ravel()])


def _arb_f_grad(flint, task, X, items):
    """Balls of f(X) = Σ c·CE, ∇f(X) (nested lists KL×n_w) and E = Σ c·H(p) over the (words, class k, weight c)
    of ``items``: every enumerated sentence (population) or every training sentence (sample)."""
    K, L = task.K, task.L
    zero = flint.arb(0)
    G = [[zero for _ in range(task.n_w)] for _ in range(K * L)]
    f = E = zero
    for words, k, c in items:
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
    t0 = max(float(np.linalg.eigvalsh(mid)[-1]) if n else 0.0, 0.0)
    # the float eigenvalue of the midpoint is no bound: raise t until every matrix of the ball passes (the
    # relative step grows 4× per failure, from 1e-13 up to the ball's own relative width, which may be large at
    # a low working precision)
    delta = 1e-13
    for _ in range(60):
        t = t0 * (1 + delta) + 1e-300
        if _positive_definite(flint, M, t):
            return t
        delta *= 4.0
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
