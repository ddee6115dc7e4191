"""Regularised unconstrained-features models (review §2.4–2.5; Zhu et al. 2021, Tirer & Bruna 2022).

Objective, with W ∈ R^{K×d}, H ∈ R^{d×N} (columns class-major, n_spl per class, N = K·n_spl), b ∈ R^K:

    CE  (review eq. (21)):  (1/N) Σ_{k,i} ℓ_CE(W h_{k,i} + b, e_k) + (λ_W/2)‖W‖² + (λ_H/2)‖H‖²
    MSE (review eq. (28)):  (1/(2N)) ‖W H + b 1ᵀ − Y‖² + (λ_W/2)‖W‖² + (λ_H/2)‖H‖²

``bias=False``: b = 0; ``bias=True``: b is a free, unregularised variable. The control parameter
is q = √(n λ_W λ_H); the trivial solution (0, 0) is optimal iff K·q ≥ 1.

The closed forms work with log q = (log n + log λ_W + log λ_H)/2, so any λ > 0 (1e-300, 1e300) and
any n give the right answer without overflow; a norm that is itself beyond the float64 range is
refused with the reason. The numerical checks (L-BFGS, cvxpy) are sized against the budget and
need λ_W, λ_H and q within [1e-8, 1e8], where an iterative solver reaches the optimum to ~1e-9.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .._budget import check_work
from .._validate import Array, Bool, Choice, Int, Real, Seed, fail, public
from ..metrics import pairs as _pairs
from .gram import frame_gram
from .imbalanced import ce_counts, check_counts, mse_counts
from ._common import (
    KIND_K,
    KIND_LAM,
    KIND_LAM0,
    KIND_N,
    KIND_STARTS,
    NumericalOptimum,
    UFMOptimum,
    check_finite_result,
    exp_or_fail,
    exp_or_none,
    gram_budget,
    labels,
    lbfgs_multistart,
    rng_of,
    seconds_of,
    softmax_ce,
    solver_budget,
)

__all__ = ["ce", "mse", "ce_objective", "mse_objective", "solve_ce", "solve_mse", "convex_ce", "convex_mse"]

_SRC_CE = "Zhu et al. 2021 Thm 3.1 (review §2.4, eq. (21)); closed-form ρ*, value: review notes §2.4"
_SRC_MSE = "Tirer & Bruna 2022 (review §2.5, eq. (28)); exact minimisers: review notes §2.5"

#: λ range in which the iterative checks (L-BFGS, cvxpy) are run
SOLVER_LAM_RANGE = (1e-8, 1e8)


def _logs(K, n, lam_W, lam_H):
    """log q and log(K·q), q = √(nλ_Wλ_H), without forming the (possibly over/underflowing) product."""
    lq = 0.5 * (math.log(n) + math.log(lam_W) + math.log(lam_H))
    return lq, math.log(K) + lq


def _gap_to_threshold(K, n, lam_W, lam_H, lKq):
    """s = 1 − K·q (q = √(nλ_Wλ_H)) to full relative precision, also next to the threshold K·q = 1.

    ``-expm1(log(Kq))`` carries log's absolute rounding (≥ 1e-16, more for extreme λ) into s: a
    relative error ~1e-16/s (8e-6 at λ = λ₀(1 − 1e-10)). Instead the product x = K²nλ_Wλ_H is formed
    exactly (floats are dyadic rationals), 1 − x rounded once, and s = (1 − x)/(1 + √x) has no
    cancellation: a few ulps at any distance from the threshold. s ≤ 0 exactly when (0, 0) is optimal.
    Where x is beyond the float64 range (λ products of ~1e±300) s is 1 to every digit, or only its sign
    (negative: trivial) is used.
    """
    x = Fraction(K * K * n) * Fraction(lam_W) * Fraction(lam_H)
    if _X_MIN < x < _X_MAX:
        return float(1 - x) / (1.0 + math.sqrt(float(x)))
    return -math.expm1(lKq) if x <= _X_MIN else -1.0


_X_MIN, _X_MAX = Fraction(2.0**-1000), Fraction(2.0**1000)


def _etf(K):
    E = np.full((K, K), -1.0 / K)
    E[np.diag_indices(K)] += 1.0
    return E


def _extras_q(lq, lKq):
    return {"q": exp_or_none(lq), "Kq": exp_or_none(lKq), "log_q": float(lq)}


_CLOSED_KINDS = dict(
    K=KIND_K.or_none(),
    n_spl=KIND_N.or_none(),
    lam_W=KIND_LAM,
    lam_H=KIND_LAM,
    bias=Bool(),
    counts=Array(ndim=1, integer=True, min=0).or_none(),
)
_CE_KINDS = dict(
    _CLOSED_KINDS,
    tol=Real(lo=1e-15, hi=1.0),
    maxiter=Int(min=1, max=10**7),
    max_seconds=Real(lo=0.0, lo_open=True).or_none(),
)


def _sizes(K, n_spl, counts):
    """The count groups (``counts`` given) or None (the balanced closed form, K and n_spl required)."""
    if counts is not None:
        if n_spl is not None:
            fail("n_spl", n_spl, "give either n_spl (n_spl samples in every class) or counts, not both")
        return check_counts(counts, K)
    for name, value in (("K", K), ("n_spl", n_spl)):
        if value is None:
            fail(name, value, "is required (or give counts=, one sample count per class)")
    return None


@public(**_CE_KINDS, renamed={"n": "n_spl"}, legacy_positional=("K", "n_spl", "lam_W", "lam_H", "bias"))
def ce(
    *,
    K: int | None = None,
    n_spl: int | None = None,
    lam_W: float,
    lam_H: float,
    bias: bool = False,
    counts=None,
    tol: float = 1e-10,
    maxiter: int = 20000,
    max_seconds: float | None = None,
) -> UFMOptimum:
    """Global optimum of the weight-decay cross-entropy UFM (review eq. (21)), for n_spl samples in every class
    (closed form) or for any class ``counts`` (certified convex program).

    With q = √(nλ_Wλ_H): if K·q < 1,

        ρ* = ‖W*‖² = (K−1)√(nλ_H/λ_W)·log(1/q − (K−1)),
        value = −log(1 − (K−1)q) + (K−1)·q·log(1/q − (K−1)),

    W*W*ᵀ = ρ*/(K−1)·(I − 11ᵀ/K) (a simplex ETF), h_{k,i} = √(λ_W/(nλ_H))·w_k, b* = 0; otherwise
    (K·q ≥ 1) the minimiser is (0, 0) with value log K.

    Parameters
    ----------
    K, n_spl : int
        Classes (≥ 2) and samples per class (≥ 1); the K×K Gram matrices are sized against the
        memory budget first. With ``counts``, K is optional (it must equal len(counts)) and n_spl not given.
    lam_W, lam_H : float
        Weight decay on W and H (> 0, any magnitude: the formulas are evaluated through log q; with
        ``counts``, λ = √(Nλ_Wλ_H) must lie in [1e-8, 1e8]).
    bias : bool
        Include an unregularised bias. The balanced optimum is unchanged (b* = 0): the convex
        reformulation (23) is invariant under class permutations, and a symmetric bias b ∝ 1
        does not change the loss.
    counts : array_like of int, optional
        n_k ≥ 0 samples of each class (zeros allowed: an absent class keeps its classifier row in every
        softmax). Returns a :class:`~fctheory.ufm.imbalanced.CertifiedUFMOptimum`: the minimum of the convex
        reduction (docs/ufm.md, "Any class counts"; :mod:`fctheory.ufm.imbalanced`) over the count groups,
        solved by proximal gradient and certified by a Fenchel lower bound (``lower_bound``, ``gap``,
        ``rel_gap``, ``certified``).
    tol, maxiter, max_seconds
        ``counts`` only: the relative certified gap to reach (default 1e-10), the proximal iterations at most,
        and a wall-clock limit (default: the budget in force).

    Notes
    -----
    Holds for feature dimension d ≥ K−1 (Zhu et al.). The reduced problem in ρ is convex. The logit
    gap is evaluated as log(1 + (1 − Kq)/q) with 1 − Kq from the exact product K²nλ_Wλ_H, accurate at
    both ends (to a few ulps at λ = λ₀(1 − 1e-10)).
    ``extras["q"]``/``["Kq"]`` are None when beyond the float64 range (``extras["log_q"]`` is always
    given); a ρ* or ‖H*‖² beyond the float64 range (λ_H/λ_W > ~1e600) is refused.
    """
    groups = _sizes(K, n_spl, counts)
    if groups is not None:
        kw = dict(lam_W=lam_W, lam_H=lam_H, bias=bias, tol=tol, maxiter=maxiter, max_seconds=max_seconds)
        return ce_counts(groups, **kw)
    return _ce_closed(K, n_spl, lam_W, lam_H, bias)


def _ce_closed(K, n_spl, lam_W, lam_H, bias) -> UFMOptimum:
    """The closed form of :func:`ce` for n_spl samples in every class."""
    n = n_spl  # the papers' n (samples per class)
    if K < _pairs.LARGE_K:  # dense K×K Grams; from LARGE_K on the three numbers of a FrameGram
        gram_budget("K", K, K, 3, "ufm.ce")
    else:  # the classes are counted as items (and the bias is a K-vector)
        check_work("K", K, items=K, bytes=8 * K if bias else 0, what="ufm.ce (K classes)")
    lq, lKq = _logs(K, n, lam_W, lam_H)
    t = _gap_to_threshold(K, n, lam_W, lam_H, lKq)  # 1 − Kq, no cancellation near the threshold
    trivial = t <= 0.0
    l_hw = 0.5 * (math.log(lam_W) - math.log(n) - math.log(lam_H))  # log of h/w = √(λ_W/(nλ_H))
    if trivial:
        value, rho, gap, Hn2, mg = math.log(K), 0.0, 0.0, 0.0, 0.0
    else:
        lr = math.log(t) - lq  # log((1 − Kq)/q)
        gap = lr + math.log1p(math.exp(-lr)) if lr > 0 else math.log1p(math.exp(lr))  # log(1/q − (K−1))
        q = math.exp(lq)  # < 1/K
        value = -math.log1p(-(K - 1) * q) + (K - 1) * q * gap
        lg = math.log((K - 1) * gap)
        rho = exp_or_fail("lam_W", lam_W, lg + 0.5 * (math.log(n) + math.log(lam_H) - math.log(lam_W)), "ρ* = ‖W*‖²")
        Hn2 = exp_or_fail("lam_H", lam_H, lg + 0.5 * (math.log(n) + math.log(lam_W) - math.log(lam_H)), "‖H*‖²")
        mg = exp_or_fail("lam_H", lam_H, math.log(gap) + l_hw, "the class-mean Gram scale")  # (h/w)²ρ/(K−1)
    scale = exp_or_none(l_hw)
    return UFMOptimum(
        model="ce+bias" if bias else "ce",
        value=float(value),
        W_norm_sq=float(rho),
        H_norm_sq=float(Hn2),
        W_gram=frame_gram(K, rho / (K - 1), "etf"),
        means_gram=frame_gram(K, mg, "etf"),
        bias=np.zeros(K) if bias else None,
        threshold=1.0,
        trivial=bool(trivial),
        closed_form=True,
        conditions="d >= K-1; threshold K*sqrt(n_spl*lam_W*lam_H) = 1 (trivial solution at and above it)",
        source=_SRC_CE,
        extras={
            **_extras_q(lq, lKq),
            "logit_gap": float(gap),
            "rho": float(rho),
            "h_over_w": scale,
            "log_h_over_w": float(l_hw),
        },
    )


@public(**_CLOSED_KINDS, renamed={"n": "n_spl"}, legacy_positional=("K", "n_spl", "lam_W", "lam_H", "bias"))
def mse(
    *, K: int | None = None, n_spl: int | None = None, lam_W: float, lam_H: float, bias: bool = False, counts=None
) -> UFMOptimum:
    """Global optimum of the weight-decay MSE UFM (review eq. (28)), for n_spl samples in every class or any
    class ``counts`` (a :class:`~fctheory.ufm.imbalanced.CertifiedUFMOptimum`: X* is the singular-value
    soft-thresholding of diag(√π), centred by P = I − √π√πᵀ with a bias; docs/ufm.md, "Any class counts").

    With q = √(nλ_Wλ_H) and s = (1 − K·q)₊ (singular-value thresholding of the target):

    * ``bias=False``: A F̄ = s·I_K, W Wᵀ = s√(nλ_H/λ_W)·I_K (orthogonal frame),
      value = Kq − (Kq)²/2 if Kq < 1 else 1/2; needs d ≥ K.
    * ``bias=True`` (unregularised b): b* = 1/K, W Wᵀ = s√(nλ_H/λ_W)·(I − 11ᵀ/K) (simplex ETF),
      value = ((K−1)/K)(Kq − (Kq)²/2) if Kq < 1 else (K−1)/(2K); needs d ≥ K−1.

    In both cases h_{k,i} = √(λ_W/(nλ_H))·w_k and (0, 0) (with b = 1/K) is optimal iff K·q ≥ 1.
    Evaluated through log q (any λ > 0, any n); norms beyond the float64 range are refused.
    """
    groups = _sizes(K, n_spl, counts)
    if groups is not None:
        return mse_counts(groups, lam_W=lam_W, lam_H=lam_H, bias=bias)
    n = n_spl  # the papers' n (samples per class)
    if K < _pairs.LARGE_K:  # dense K×K Grams; from LARGE_K on the three numbers of a FrameGram
        gram_budget("K", K, K, 3, "ufm.mse")
    else:  # the classes are counted as items (and the bias is a K-vector)
        check_work("K", K, items=K, bytes=8 * K if bias else 0, what="ufm.mse (K classes)")
    lq, lKq = _logs(K, n, lam_W, lam_H)
    s = _gap_to_threshold(K, n, lam_W, lam_H, lKq)  # 1 − Kq without cancellation
    trivial = s <= 0.0
    kind = "etf" if bias else "identity"
    r = K - 1 if bias else K  # rank of the target
    l_hw = 0.5 * (math.log(lam_W) - math.log(n) - math.log(lam_H))
    if trivial:
        s, half, a2, Hn2, mg = 0.0, 0.5, 0.0, 0.0, 0.0
    else:
        Kq = math.exp(lKq)
        half = Kq - Kq * Kq / 2
        ls = math.log(s)
        a2 = exp_or_fail("lam_W", lam_W, ls + 0.5 * (math.log(n) + math.log(lam_H) - math.log(lam_W)), "‖w_k‖²")
        Hn2 = r * exp_or_fail("lam_H", lam_H, ls + 0.5 * (math.log(n) + math.log(lam_W) - math.log(lam_H)), "‖H*‖²/r")
        mg = exp_or_fail("lam_H", lam_H, ls + l_hw, "the class-mean Gram scale")
    value = (K - 1) / K * half if bias else half
    Wn2 = r * a2
    check_finite_result("lam_W", lam_W, Wn2, Hn2, what="‖W*‖² or ‖H*‖²")
    return UFMOptimum(
        model="mse+bias" if bias else "mse",
        value=float(value),
        W_norm_sq=float(Wn2),
        H_norm_sq=float(Hn2),
        W_gram=frame_gram(K, a2, kind),
        means_gram=frame_gram(K, mg, kind),
        bias=np.full(K, 1.0 / K) if bias else None,
        threshold=1.0,
        trivial=bool(trivial),
        closed_form=True,
        conditions=("d >= K-1" if bias else "d >= K") + "; threshold K*sqrt(n_spl*lam_W*lam_H) = 1",
        source=_SRC_MSE,
        extras={**_extras_q(lq, lKq), "s": float(s)},
    )


# ----------------------------------------------------------------------------- objectives
def _unpack(x, K, m, N, bias):
    W = x[: K * m].reshape(K, m)
    H = x[K * m : K * m + m * N].reshape(m, N)
    b = x[K * m + m * N :] if bias else None
    return W, H, b


def _check_point(W, H, b, N, n=None):
    """Shapes of (W, H, b) for N samples (n per class when given): W (K, d), H (d, N), b (K,)."""
    K, m = W.shape
    if K < 2:
        fail("W", W, f"must have K >= 2 rows (classes), got shape {W.shape}")
    if H.shape != (m, N):
        if n is not None:
            fail("H", H, f"must have shape (m, K*n) = ({m}, {N}) for W of shape {W.shape} and n = {n}, got {H.shape}")
        fail("H", H, f"must have shape (m, N) = ({m}, {N}) for W of shape {W.shape} and these counts, got {H.shape}")
    if b is not None and b.shape != (K,):
        fail("b", b, f"must have K = {K} entries, got shape {b.shape}")
    return K


def _labels_of(K, n_spl, counts):
    """(K, N) for n_spl samples per class or for ``counts`` (exactly one of them given)."""
    if counts is not None:
        if n_spl is not None:
            fail("n_spl", n_spl, "give either n_spl (n_spl samples in every class) or counts, not both")
        if counts.size < 2 or int(counts.sum()) < 1:
            fail("counts", counts, "must have K >= 2 entries and at least one sample")
        if K is not None and K != counts.size:
            fail("counts", counts, f"must have K = {K} entries, got {counts.size}")
        return counts.size, int(counts.sum())
    for name, value in (("K", K), ("n_spl", n_spl)):
        if value is None:
            fail(name, value, "is required (or give counts=, one sample count per class)")
    return K, K * n_spl


def _labels(K, n_spl, counts):
    """The class-major labels (after the sizes were checked)."""
    return labels(K, n_spl) if counts is None else np.repeat(np.arange(K), counts)


_OBJ_KINDS = dict(
    W=Array(ndim=2),
    H=Array(ndim=2),
    b=Array(ndim=1).or_none(),
    n_spl=KIND_N.or_none(),
    lam_W=KIND_LAM0,
    lam_H=KIND_LAM0,
    counts=Array(ndim=1, integer=True, min=0).or_none(),
)


def _ce_objective(W, H, b, y, lam_W, lam_H):
    Z = W @ H + (b[:, None] if b is not None else 0.0)
    loss, G = softmax_ce(Z, y)
    val = loss + 0.5 * lam_W * np.sum(W * W) + 0.5 * lam_H * np.sum(H * H)
    return val, G @ H.T + lam_W * W, W.T @ G + lam_H * H, (G.sum(axis=1) if b is not None else None)


def _mse_objective(W, H, b, y, lam_W, lam_H):
    K = W.shape[0]
    N = H.shape[1]
    Y = np.zeros((K, N))
    Y[y, np.arange(N)] = 1.0
    R = W @ H + (b[:, None] if b is not None else 0.0) - Y
    val = 0.5 * np.sum(R * R) / N + 0.5 * lam_W * np.sum(W * W) + 0.5 * lam_H * np.sum(H * H)
    G = R / N
    return val, G @ H.T + lam_W * W, W.T @ G + lam_H * H, (G.sum(axis=1) if b is not None else None)


def _checked_objective(fn, W, H, b, n_spl, counts, lam_W, lam_H):
    K, N = _labels_of(W.shape[0], n_spl, counts)
    _check_point(W, H, b, N, n_spl)
    y = _labels(K, n_spl, counts)
    with np.errstate(over="ignore", invalid="ignore"):
        out = fn(W, H, b, y, lam_W, lam_H)
    check_finite_result(
        "W",
        f"array of shape {W.shape}",
        out[0],
        out[1],
        out[2],
        out[3],
        what="the objective or its gradient at (W, H) of this magnitude",
    )
    return out


@public(**_OBJ_KINDS, renamed={"n": "n_spl"}, legacy_positional=("n_spl", "lam_W", "lam_H"))
def ce_objective(W, H, b, *, n_spl=None, lam_W, lam_H, counts=None):
    """Value and gradients (dW, dH, db) of the CE UFM objective (21) at (W, H, b); b may be None.

    W is K×d, H is d×N (class-major columns: n_spl per class, N = K·n_spl, or ``counts[k]`` of class k), b has
    K entries; λ_W, λ_H ≥ 0; the loss is averaged over the N samples. A point so large that the objective
    overflows float64 is refused.
    """
    return _checked_objective(_ce_objective, W, H, b, n_spl, counts, lam_W, lam_H)


@public(**_OBJ_KINDS, renamed={"n": "n_spl"}, legacy_positional=("n_spl", "lam_W", "lam_H"))
def mse_objective(W, H, b, *, n_spl=None, lam_W, lam_H, counts=None):
    """Value and gradients (dW, dH, db) of the MSE UFM objective (28); b may be None.

    Shapes (and ``counts``) as in :func:`ce_objective`.
    """
    return _checked_objective(_mse_objective, W, H, b, n_spl, counts, lam_W, lam_H)


def _solver_lams(K, n, lam_W, lam_H):
    lo, hi = SOLVER_LAM_RANGE
    for name, lam in (("lam_W", lam_W), ("lam_H", lam_H)):
        if not lo <= lam <= hi:
            fail(name, lam, f"the numerical solvers need {lo:g} <= lam <= {hi:g} (use the closed form outside)")
    # q² = nλ_Wλ_H compared exactly (floats are dyadic rationals): exp(log q) rounds q = 1e-8 at
    # λ_W = λ_H = 1e-8, n = 1 to 9.99…e-9, which would refuse the documented end of the range
    q2 = Fraction(n) * Fraction(lam_W) * Fraction(lam_H)
    if not Fraction(lo) ** 2 <= q2 <= Fraction(hi) ** 2:
        q = math.exp(_logs(K, n, lam_W, lam_H)[0])
        fail("n_spl", n, f"the numerical solvers need q = sqrt(n_spl*lam_W*lam_H) in [{lo:g}, {hi:g}], got {q:.3g}")


def _solve(obj, K, sizes, counts, m, lam_W, lam_H, bias, n_starts, seed, scale, what):
    n_spl = sizes.get("n_spl")
    K, N = _labels_of(K, n_spl, counts)
    sizes = dict(K=K, n_spl=n_spl, d=m) if counts is None else dict(K=K, counts=N, d=m)
    _solver_lams(K, n_spl if counts is None else max(1, N // K), lam_W, lam_H)
    dim = K * m + m * N + (K if bias else 0)
    solver_budget(
        sizes,
        dim=dim,
        flops=8 * K * m * N + 30 * K * N,
        n_starts=n_starts,
        extra_bytes=8 * 8 * K * N,
        what=what,
    )
    y = _labels(K, n_spl, counts)
    rng = rng_of(seed)

    def fun(x):
        W, H, b = _unpack(x, K, m, N, bias)
        v, gW, gH, gb = obj(W, H, b, y, lam_W, lam_H)
        g = np.concatenate([gW.ravel(), gH.ravel()] + ([gb] if bias else []))
        return v, g

    x0s = [scale * rng.standard_normal(dim) for _ in range(n_starts)]
    with np.errstate(over="ignore", invalid="ignore"):
        x, f, vals, gn = lbfgs_multistart(fun, x0s)
    check_finite_result("lam_W", lam_W, f, what="the L-BFGS optimum")
    W, H, b = _unpack(x, K, m, N, bias)
    return NumericalOptimum(float(f), W.copy(), H.copy(), None if b is None else b.copy(), gn, vals, "L-BFGS")


_SOLVE_KINDS = dict(
    K=KIND_K.or_none(),
    n_spl=KIND_N.or_none(),
    d=Int(min=1),
    lam_W=KIND_LAM,
    lam_H=KIND_LAM,
    bias=Bool(),
    n_starts=KIND_STARTS,
    seed=Seed(),
    counts=Array(ndim=1, integer=True, min=0).or_none(),
)


@public(
    **_SOLVE_KINDS, renamed={"n": "n_spl", "m": "d"}, legacy_positional=("K", "n_spl", "d", "lam_W", "lam_H", "bias")
)
def solve_ce(
    *, K=None, n_spl=None, d, lam_W, lam_H, bias=False, n_starts=3, seed=None, counts=None
) -> NumericalOptimum:
    """Numerical minimiser of the CE UFM (21) by multi-start L-BFGS on (W, H, b) in dimension d, for n_spl
    samples per class or for ``counts`` (H then has N = Σ counts class-major columns).

    Needs λ_W, λ_H and q = √(nλ_Wλ_H) (n = N/K) in [1e-8, 1e8] (:data:`SOLVER_LAM_RANGE`); the problem size
    is checked against the budget before any work.
    """
    sizes = dict(n_spl=n_spl)
    return _solve(_ce_objective, K, sizes, counts, d, lam_W, lam_H, bias, n_starts, seed, 1.0, "ufm.solve_ce (L-BFGS)")


@public(
    **_SOLVE_KINDS, renamed={"n": "n_spl", "m": "d"}, legacy_positional=("K", "n_spl", "d", "lam_W", "lam_H", "bias")
)
def solve_mse(
    *, K=None, n_spl=None, d, lam_W, lam_H, bias=False, n_starts=3, seed=None, counts=None
) -> NumericalOptimum:
    """Numerical minimiser of the MSE UFM (28) by multi-start L-BFGS in dimension d (sizes, λ range and
    budget as in :func:`solve_ce`)."""
    sizes = dict(n_spl=n_spl)
    return _solve(
        _mse_objective, K, sizes, counts, d, lam_W, lam_H, bias, n_starts, seed, 0.5, "ufm.solve_mse (L-BFGS)"
    )


# ----------------------------------------------------------------------------- convex reformulations
_CVX_SOLVERS = ("CLARABEL", "SCS")


def _convex(K, n_spl, counts, lam_W, lam_H, bias, loss, solver):
    K, N = _labels_of(K, n_spl, counts)
    if counts is not None:
        blame = ("counts", counts)
    else:
        blame = ("n_spl", n_spl) if n_spl >= K else ("K", K)
    _solver_lams(K, n_spl if counts is None else max(1, N // K), lam_W, lam_H)
    # an interior-point SDP on (K+N)² unknowns: measured ~1e-6·(K+N)^4 s
    what = f"ufm.convex_{loss} (cvxpy SDP)"
    check_work(*blame, bytes=8 * 60 * (K + N) ** 2, seconds=seconds_of(1000 * (K + N) ** 4), what=what)
    y = _labels(K, n_spl, counts)
    try:
        import cvxpy as cp  # noqa: PLC0415 - optional heavy import
    except ImportError as exc:  # pragma: no cover
        fail("solver", solver, f"cvxpy is not importable ({exc})")
    Z = cp.Variable((K, N))
    b = cp.Variable(K) if bias else None
    logits = Z + (cp.reshape(b, (K, 1), order="F") @ np.ones((1, N)) if bias else 0)
    Y = np.zeros((K, N))
    Y[y, np.arange(N)] = 1.0
    if loss == "ce":
        data = (cp.sum(cp.log_sum_exp(logits, axis=0)) - cp.sum(cp.multiply(Y, logits))) / N
    else:
        data = cp.sum_squares(logits - Y) / (2 * N)
    # (24): min_{WH=Z} (λ_W/2)‖W‖² + (λ_H/2)‖H‖² = √(λ_Wλ_H)‖Z‖_* when d ≥ K
    prob = cp.Problem(cp.Minimize(data + np.sqrt(lam_W * lam_H) * cp.normNuc(Z)))
    # a solver failure is reported as the project error; CLARABEL falls back to SCS first
    tried = [solver] + [s for s in _CVX_SOLVERS if s != solver and solver == "CLARABEL"]
    errors = []
    for s in tried:
        try:
            prob.solve(solver=s)
        except Exception as exc:  # noqa: BLE001 - cvxpy.SolverError and solver-internal failures
            errors.append(f"{s}: {type(exc).__name__}: {exc}")
            continue
        if (
            prob.status in ("optimal", "optimal_inaccurate")
            and prob.value is not None
            and np.isfinite(prob.value)
            and Z.value is not None
        ):
            return float(prob.value), Z.value, (None if b is None else b.value)
        errors.append(f"{s}: status {prob.status}")
    fail("solver", solver, "the convex program was not solved (" + "; ".join(errors) + ")")


_CVX_KINDS = dict(
    K=KIND_K.or_none(),
    n_spl=KIND_N.or_none(),
    lam_W=KIND_LAM,
    lam_H=KIND_LAM,
    bias=Bool(),
    solver=Choice(*_CVX_SOLVERS),
    counts=Array(ndim=1, integer=True, min=0).or_none(),
)


@public(**_CVX_KINDS, renamed={"n": "n_spl"}, legacy_positional=("K", "n_spl", "lam_W", "lam_H", "bias"))
def convex_ce(*, K=None, n_spl=None, lam_W, lam_H, bias=False, solver="CLARABEL", counts=None):
    """Value of the convex reformulation (23)–(24) of the CE UFM, solved with cvxpy (d ≥ K).

    Returns (value, Z, b), Z the K × N logits of every sample (n_spl per class, or ``counts[k]`` of class k:
    nothing is assumed about collapse or the count groups, an oracle independent of :func:`ce`). Interior-point
    accuracy (~1e-7). λ range as in :func:`solve_ce`; the SDP is sized against the budget (≈1e-6·(K+N)⁴ s). A
    solver failure (CLARABEL falls back to SCS) is reported as :class:`~fctheory.FCTheoryError`.
    """
    return _convex(K, n_spl, counts, lam_W, lam_H, bias, "ce", solver)


@public(**_CVX_KINDS, renamed={"n": "n_spl"}, legacy_positional=("K", "n_spl", "lam_W", "lam_H", "bias"))
def convex_mse(*, K=None, n_spl=None, lam_W, lam_H, bias=False, solver="CLARABEL", counts=None):
    """Value of the nuclear-norm reformulation of the MSE UFM, solved with cvxpy (d ≥ K); see
    :func:`convex_ce`."""
    return _convex(K, n_spl, counts, lam_W, lam_H, bias, "mse", solver)
