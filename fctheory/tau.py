"""Theorem 1 (full collapse of h): H(t), its minimiser τ, and the trivial-solution threshold.

    H(t) = log(1 − K/n_c^L + (K/n_c^L)(1 + (n_c − 1)e^{−ηt})^L) + λt,
    η = (n_c/(n_c − 1))/√(n_w K L).

H is strictly convex on [0, ∞) (see :meth:`LatentSum.G_second`), so τ = argmin_{t≥0} H is unique.
Writing s = ηt, H′(t) = λ − ηL·E1(s)E2(s) and H′(0) = λ − λ₀ with the closed form

    λ₀ = √(L K/n_w) / (K + 1 − K/n_c^L),

so τ = 0 (the trivial solution (W, U) = (0, 0) wins) exactly when λ ≥ λ₀ (:func:`lambda_trivial`).
For λ < λ₀ the float path solves r = log(λ₀/λ) = D(s) (see :mod:`fctheory._latent`) by safeguarded
Newton in float64. τ is as accurate as r (d log s/d log r ∈ (0, 1]), and near the threshold r is a
difference of nearly equal numbers: there it is formed from the double-double gap (λ₀/λ)² − 1, and
decided in exact rationals within a few ulps of λ₀ (see :func:`_tau_near_threshold`).
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np

from ._interval import (
    adaptive,
    bisect_to_newton,
    bracket_increasing,
    enclosure,
    enclosure_array,
    exact_arb,
    exact_fmpq,
    exact_one_minus_p,
    flint_module,
    latent_terms,
)
from ._latent import LatentSum
from ._logmath import solve_monotone
from ._numerics import dd_add, dd_div, dd_mul, dd_sqrt, two_prod, two_sum
from ._mp import mp_context, mp_guard, mp_root, vectorize_mp
from ._budget import check_work
from ._validate import (
    Choice,
    Int,
    Real,
    broadcast_flat,
    broadcast_shape,
    check_latent_size,
    fail,
    float_array,
    int_array,
    public,
)

# parameter kinds shared by the Theorem 1 and 3 predictors (arrays broadcast; K may be a float up to 1e300)
N_C = Int(min=2, array=True)
N_W = Int(min=1, array=True)
LEN = Int(min=1, array=True)
KK = Int(min=1, array=True)
LAM = Real(lo=0, lo_open=True, array=True)
LAM0 = Real(lo=0, array=True)
T = Real(lo=0, array=True)
PRECISION = Choice("float", "mp", "interval")
DPS = Int(min=20, max=1000)

# float path: ~20 float64 temporaries per element (the numpy backend's vectorised Newton)
_BYTES_PER_ITEM = 8 * 24
# interval path: a few dozen arb evaluations at 128 bits per element (estimate, for the budget)
_INTERVAL_SECONDS = 0.005


def check_batch(shape, *, what: str, precision: str = "float", dps: int = 50, mp_seconds: float = 0.05) -> None:
    """Refuse a broadcast request too large for the budget, before anything is allocated.

    ``shape`` is the broadcast shape of the arguments (arrays that broadcast against each other can
    describe far more elements than any of them holds). The mp reference costs ``mp_seconds`` per
    element at 50 digits, growing like dps^1.5.
    """
    n = 1
    for k in shape:
        n *= int(k)
    check_work("shape", shape, items=n, bytes=n * _BYTES_PER_ITEM, what=what)
    if precision == "mp":
        check_work(
            "shape", shape, seconds=n * mp_seconds * (dps / 50) ** 1.5, what=f"{what} with precision='mp', dps={dps}"
        )
    if precision == "interval":
        check_work("shape", shape, seconds=n * _INTERVAL_SECONDS, what=f"{what} with precision='interval'")


__all__ = ["H", "H_prime", "H_second", "tau", "lambda_trivial", "eta"]

# 1.0: everything after t is keyword-only; the 0.x positional order still works, with a DeprecationWarning
_H_LEGACY = ("n_c", "n_w", "L", "K", "lam")


def _params(n_c, n_w, L, K):
    n_c = int_array("n_c", n_c, min=2)
    n_w = int_array("n_w", n_w, min=1)
    L = int_array("L", L, min=1)
    K = int_array("K", K, min=1)
    check_batch(broadcast_shape(n_c=n_c, n_w=n_w, L=L, K=K), what="the broadcast (n_c, n_w, L, K)")
    bad = np.broadcast_to(np.mod(n_w, n_c) != 0, np.broadcast(n_w, n_c).shape)
    if bad.any():
        i = tuple(np.argwhere(bad)[0])
        fail(
            "n_w",
            np.broadcast_to(n_w, bad.shape)[i],
            f"must be divisible by n_c = {np.broadcast_to(n_c, bad.shape)[i]:g} (n_w = n_c·s_c)",
        )
    check_latent_size(n_c, L, K)
    return n_c, n_w, L, K


def _log_eta(n_c, n_w, L, K):
    return np.log(n_c / (n_c - 1)) - 0.5 * (np.log(n_w) + np.log(K) + np.log(L))


@public(n_c=N_C, n_w=N_W, L=LEN, K=KK, legacy_positional=("n_c", "n_w", "L", "K"))
def eta(*, n_c, n_w, L, K):
    """η = (n_c/(n_c−1))/√(n_w K L) of Theorem 1 (computed in logs: n_w K L may overflow)."""
    n_c, n_w, L, K = _params(n_c, n_w, L, K)
    check_batch(broadcast_shape(n_c=n_c, n_w=n_w, L=L, K=K), what="eta")
    return _out(np.exp(_log_eta(n_c, n_w, L, K)))


def _log_lambda0(lat: LatentSum, n_w):
    return 0.5 * (np.log(lat.L) + lat.logK - np.log(n_w)) - lat.log_Kom


@public(
    n_c=N_C,
    n_w=N_W,
    L=LEN,
    K=KK,
    precision=Choice("float", "interval"),
    legacy_positional=("n_c", "n_w", "L", "K"),
)
def lambda_trivial(*, n_c, n_w, L, K, precision: str = "float"):
    """The threshold λ₀ = √(LK/n_w)/(K + 1 − K/n_c^L) of Theorem 1.

    H′(0) = λ − λ₀, so τ > 0 iff λ < λ₀; for λ ≥ λ₀ the minimiser of H is τ = 0 and the
    trivial solution (W, U) = (0, 0) is the global minimiser of (5) (under Assumption A).

    Parameters
    ----------
    n_c, n_w, L, K : int or array_like
        As in :func:`H` (broadcast).
    precision : {"float", "interval"}
        "float": float64 (computed in logs); "interval": a certified :class:`~fctheory._interval.Enclosure`
        of the closed form evaluated in arb ball arithmetic (needs python-flint, ``fctheory[certify]``;
        relative width below 1e-17, see docs/certified.md).

    Returns
    -------
    float, ndarray or Enclosure
        With "float", λ₀ rounded to nearest from a double-double evaluation (relative error below
        2^-95 before the rounding): within half an ulp plus 2^-95 relative, so ``tau`` at
        ``lam=lambda_trivial(...)`` is 0 or the tiny positive τ of the rounded-down λ₀.
    """
    n_c, n_w, L, K = _params(n_c, n_w, L, K)
    check_batch(broadcast_shape(n_c=n_c, n_w=n_w, L=L, K=K), what="lambda_trivial", precision=precision)
    if precision == "interval":
        flint_module()
        shape, flat = broadcast_flat(n_c=n_c, n_w=n_w, L=L, K=K)
        return enclosure_array([_lambda0_enclosure(*map(int, v)) for v in zip(*flat)], shape)
    shape, (n_c, n_w, L, K) = broadcast_flat(n_c=n_c, n_w=n_w, L=L, K=K)
    return _out(_lambda0_float(n_c, n_w, L, K).reshape(shape))


# ---------------------------------------------------------------------------- λ₀ and λ₀/λ in double-double
# With K = k·2^κ and A = K + 1 − p = a·2^α (k, a ∈ [0.5, 1)), λ₀ = √(LK/n_w)/A and
# (λ₀/λ)² = LK/(n_w A² λ²) are formed on the mantissas, the powers of two applied exactly: nothing
# overflows for K up to 1e300, and every operation is double-double (relative error ~2^-104 each).


def _one_minus_p_dd(n_c, L, K):
    """1 − p = 1 − K/n_c^L as a double-double.

    Where n_c^L is an exact double, (n_c^L − K)/n_c^L is a double-double quotient of exact integers.
    Elsewhere n_c^L > 2^53 and the float p = exp(log K − L log n_c) is enough: its relative error ε ≲ 2^-43
    (an exponent difference of terms up to ~700) moves A = K + 1 − p by ε·p ≤ ε·K/n_c^L < 2^-96·A.
    """
    exact = L * np.log2(n_c) <= 53
    N = np.power(n_c, np.where(exact, L, 0))
    q = dd_div((N - np.where(exact, K, 0.0), 0.0 * N), (N, 0.0 * N))
    p = np.exp(np.minimum(np.log(K) - L * np.log(n_c), 0.0))
    r = two_sum(1.0, -p)
    return np.where(exact, q[0], r[0]), np.where(exact, q[1], r[1])


def _scaled_denominator(n_c, L, K):
    """A = K + 1 − p as (a, α): a double-double mantissa a ∈ [0.5, 1) and A = a·2^α."""
    A = dd_add((K, 0.0 * K), _one_minus_p_dd(n_c, L, K))
    a, e = np.frexp(A[0])
    return (a, np.ldexp(A[1], -e)), e


def _lambda0_float(n_c, n_w, L, K):
    """λ₀ = √(LK/n_w)/(K + 1 − p), rounded to the nearest double from a double-double evaluation."""
    n_c, n_w, L, K = (np.asarray(v, dtype=np.float64) for v in (n_c, n_w, L, K))
    a, alpha = _scaled_denominator(n_c, L, K)
    k, kappa = np.frexp(K)
    odd = kappa % 2 != 0  # make the exponent even: √(k·2^κ) = √(2k)·2^((κ−1)/2)
    k, kappa = np.where(odd, 2 * k, k), np.where(odd, kappa - 1, kappa)
    zero = 0.0 * K
    root = dd_sqrt(dd_div(two_prod(L, k), (n_w, zero)))
    q = dd_div(root, a)
    return np.ldexp(q[0] + q[1], kappa // 2 - alpha)


def _threshold_gap(n_c, n_w, L, K, lam):
    """X = (λ₀/λ)² − 1 = (LK − n_w A²λ²)/(n_w A²λ²), λ as the exact double it stores.

    LK is exact and n_w A²λ² a double-double with relative error below 2^-95 (2^-96 from A, see
    :func:`_one_minus_p_dd`, else ~2^-102), so X has an absolute error below 2^-95: a relative error below
    2^-45 (3e-14) wherever |X| ≥ 2^-50 (:data:`_GAP_EXACT`, λ a few ulps or more from λ₀). Meant for
    |log(λ₀/λ)| < 1 (where the scaled terms are near n_w, far from overflow).
    """
    n_c, n_w, L, K, lam = (np.asarray(v, dtype=np.float64) for v in (n_c, n_w, L, K, lam))
    a, alpha = _scaled_denominator(n_c, L, K)
    k, kappa = np.frexp(K)
    m, mu = np.frexp(lam)
    e = kappa - 2 * alpha - 2 * mu
    lhs = two_prod(L, k)
    lhs = (np.ldexp(lhs[0], e), np.ldexp(lhs[1], e))
    rhs = dd_mul(dd_mul(a, a), dd_mul(two_prod(m, m), (n_w, 0.0 * lam)))
    gap = dd_add(lhs, (-rhs[0], -rhs[1]))
    return (gap[0] + gap[1]) / (rhs[0] + rhs[1])


# below this |X| the double-double gap may be dominated by its error: X is recomputed in exact rationals
_GAP_EXACT = 2.0**-50
# n_c^L above 2^_EXACT_P_BITS: p = K/n_c^L is dropped from the exact A = K + 1 − p. That moves λ₀ by a
# relative 2^-4096 at most, and any τ of a λ in between is below n_c·√(n_w L)·2^-2048: 0 in float64.
_EXACT_P_BITS = 4096


def _threshold_gap_exact(n_c, n_w, L, K, lam) -> float:
    """X = (λ₀/λ)² − 1 for one element in exact rational arithmetic, correctly rounded to a double."""
    n_c, n_w, L, K = int(n_c), int(n_w), int(L), int(K)
    A = Fraction(K + 1)
    if L * math.log2(n_c) <= _EXACT_P_BITS:
        A -= Fraction(K, n_c**L)
    return float(Fraction(L * K, n_w) / (Fraction(float(lam)) ** 2 * A * A) - 1)


def _lambda0_ball(n_c: int, n_w: int, L: int, K: int, om):
    """λ₀ = √(LK/n_w)/(K + 1 − p) as a ball (``om`` = 1 − p exact) at the current flint precision."""
    flint = flint_module()
    return flint.arb(flint.fmpq(L * K, n_w)).sqrt() / flint.arb(flint.fmpq(K) + om)


def _lambda0_enclosure(n_c: int, n_w: int, L: int, K: int):
    om = exact_one_minus_p(n_c, L, K)
    ball, prec = adaptive(lambda prec: _lambda0_ball(n_c, n_w, L, K, om), what="lambda_trivial")
    return enclosure(ball, prec)


def _out(x):
    x = np.asarray(x, dtype=np.float64)
    return float(x) if x.ndim == 0 else x


@public(t=T, n_c=N_C, n_w=N_W, L=LEN, K=KK, lam=LAM0, legacy_positional=_H_LEGACY)
def H(t, *, n_c, n_w, L, K, lam):
    """H(t) of Theorem 1 (the risk (5) of a type-I configuration with n_w c² = t, Lemma K).

    Parameters
    ----------
    t : float or array_like, t ≥ 0
    n_c, n_w, L, K : int or array_like
        Concepts, vocabulary size (divisible by n_c), sentence length, number of classes
        (1 ≤ K ≤ n_c^L; may be given as a float up to 1e300).
    lam : float or array_like, λ ≥ 0
        Weight decay.

    Returns
    -------
    float or ndarray
        H(t), computed without overflow for any parameters; inf only where the true value exceeds
        the float64 range (λt > 1.8e308).
    """
    t = float_array("t", t, lo=0)
    lam = float_array("lam", lam, lo=0)
    n_c, n_w, L, K = _params(n_c, n_w, L, K)
    check_batch(broadcast_shape(t=t, n_c=n_c, n_w=n_w, L=L, K=K, lam=lam), what="H")
    lat = LatentSum(n_c, L, K)
    with np.errstate(over="ignore"):  # documented: inf where λt exceeds the float range
        s = t * np.exp(_log_eta(n_c, n_w, L, K))
        return _out(lat.G(s) + lam * t)


@public(t=T, n_c=N_C, n_w=N_W, L=LEN, K=KK, lam=LAM0, legacy_positional=_H_LEGACY)
def H_prime(t, *, n_c, n_w, L, K, lam):
    """H′(t) = λ − ηL·E1(s)E2(s), s = ηt (see :mod:`fctheory._latent`)."""
    t = float_array("t", t, lo=0)
    lam = float_array("lam", lam, lo=0)
    n_c, n_w, L, K = _params(n_c, n_w, L, K)
    check_batch(broadcast_shape(t=t, n_c=n_c, n_w=n_w, L=L, K=K, lam=lam), what="H_prime")
    e = np.exp(_log_eta(n_c, n_w, L, K))
    lat = LatentSum(n_c, L, K)
    with np.errstate(over="ignore"):  # ηt = inf is harmless: G′(∞) = 0
        return _out(lam + e * lat.G_prime(t * e))


@public(t=T, n_c=N_C, n_w=N_W, L=LEN, K=KK, lam=LAM0, legacy_positional=_H_LEGACY)
def H_second(t, *, n_c, n_w, L, K, lam=0.0):
    """H″(t) = η²·G″(ηt) > 0: H is strictly convex (λ does not enter)."""
    t = float_array("t", t, lo=0)
    n_c, n_w, L, K = _params(n_c, n_w, L, K)
    check_batch(broadcast_shape(t=t, n_c=n_c, n_w=n_w, L=L, K=K, lam=lam), what="H_second")
    e = np.exp(_log_eta(n_c, n_w, L, K))
    lat = LatentSum(n_c, L, K)
    with np.errstate(over="ignore"):
        return _out(e * e * lat.G_second(t * e) + 0 * np.asarray(lam))


def _solve_s(lat: LatentSum, log_ratio):
    """Solve D(s) = log_ratio > 0 for s > 0, as log D(e^σ) = log(log_ratio) in σ = log s.

    D is increasing with D(0) = 0, D′ ≤ 1 + L and D(s) ≥ max(s − log n_c, log(1 + s/n_c)), so
    σ ∈ [log(r/(1+L)), log(min(r + log n_c, n_c·expm1(r)))] brackets the root; in σ the
    equation is nearly linear (slope sD′/D ∈ (0, 1]) at both ends.
    """
    r = log_ratio
    lo = np.log(r / (1.0 + lat.L))
    hi = np.log(np.minimum(r + lat.log_nc, lat.n_c * np.expm1(np.minimum(r, 700.0))))
    target = np.log(r)

    def fun(x, idx):
        sub = lat.take(idx)
        s = np.exp(x)
        D = sub.delta_log_rhs(s)
        return np.log(D) - target[idx], s * sub.delta_log_rhs_prime(s) / D

    sigma, _ = solve_monotone(fun, lo, hi, increasing=True, rtol=0, atol=1e-13, n_bisect=6)
    return np.exp(sigma)


@public(
    n_c=N_C,
    n_w=N_W,
    L=LEN,
    K=KK,
    lam=LAM,
    precision=PRECISION,
    dps=DPS,
    backend=Choice("numba", "numpy"),
    legacy_positional=("n_c", "n_w", "L", "K", "lam", "precision", "dps", "backend"),
)
def tau(*, n_c, n_w, L, K, lam, precision: str = "float", dps: int = 50, backend: str = "numba"):
    """τ = argmin_{t ≥ 0} H(t), Theorem 1.

    The type-I configuration with c = √(τ/n_w), c′ = √(τ/(KL)) is then a global minimiser of
    the true risk (5) (under Assumption 1). All arguments broadcast, so a sweep is one call.

    Parameters
    ----------
    n_c, n_w, L, K : int or array_like
        As in :func:`H`. Domain exercised by the tests: n_c ∈ [2, 100], L ∈ [1, 5000],
        K ∈ [1, n_c^L] (up to 1e300), n_w up to 1e9.
    lam : float or array_like, λ > 0
    precision : {"float", "mp", "interval"}
        "float": float64 result with relative error ≤ 1e-12 for every λ < λ₀ (tested against
        100-digit mpmath from λ₀(1 − 1e-6) down to 1e-12 and within a million ulps of λ₀ on both
        sides; typically a few 1e-15), and exactly 0 when λ ≥ λ₀ (:func:`lambda_trivial`). Near λ₀
        τ is proportional to λ₀ − λ, so r = log(λ₀/λ) is formed from the double-double gap
        (λ₀/λ)² − 1 (relative error ≤ 2^-45) and, within a few ulps of λ₀, its sign is decided in exact
        rational arithmetic: the only tolerance is that p = K/n_c^L is dropped from that decision when
        n_c^L > 2^4096, which changes nothing representable (any τ it could zero is below 1e-300).
        "mp": mpmath reference with ``dps`` digits, solving H′(t) = 0 from the formula as printed
        (returns ``mpf`` or an object array).
        "interval": a certified :class:`~fctheory._interval.Enclosure` (python-flint arb balls, the
        ``fctheory[certify]`` extra): τ = 0 exactly when λ ≥ λ₀ (decided in exact rationals), else the
        root of H′ enclosed by interval Newton on a bracket with certified signs and H″ > 0; relative
        width below 1e-17 (see docs/certified.md).
    dps : int
        Decimal digits for ``precision="mp"``, in [20, 1000].
    backend : {"numba", "numpy"}
        Float-path solver: compiled scalar Newton per element (default, fast) or the vectorised
        NumPy reference.

    Returns
    -------
    float, ndarray or Enclosure
        τ ≥ 0; exactly 0 when λ ≥ λ₀ (the exact λ₀ of the inputs, not its float rounding: one ulp
        below ``lambda_trivial(...)`` τ may be positive, ~1e-12). Finite for every valid input (λ down
        to 5e-324, K up to 1e300, L up to 10**4 and beyond): τ grows only like log(1/λ).

    Raises
    ------
    FCTheoryError
        Invalid input, or a broadcast request over the budget (:func:`fctheory.set_budget`; the mp
        path is budgeted in estimated seconds).

    Examples
    --------
    >>> round(tau(n_c=3, n_w=1200, L=15, K=1000, lam=1e-3), 4)   # the setting of figure 3
    2426.9804
    """
    lam = float_array("lam", lam, lo=0, lo_open=True)
    n_c, n_w, L, K = _params(n_c, n_w, L, K)
    check_batch(broadcast_shape(n_c=n_c, n_w=n_w, L=L, K=K, lam=lam), what="tau", precision=precision, dps=dps)
    shape, (n_c, n_w, L, K, lam) = broadcast_flat(n_c=n_c, n_w=n_w, L=L, K=K, lam=lam)
    if precision == "mp":
        with mp_context(dps), mp_guard(dps):
            return vectorize_mp(_tau_mp, n_c, n_w, L, K, lam, shape=shape)
    if precision == "interval":
        flint_module()
        guess = np.atleast_1d(tau(n_c=n_c, n_w=n_w, L=L, K=K, lam=lam, backend=backend))
        items = [
            _tau_enclosure(*map(int, v[:4]), float(v[4]), float(g)) for v, g in zip(zip(n_c, n_w, L, K, lam), guess)
        ]
        return enclosure_array(items, shape)
    return _out(_tau_float(n_c, n_w, L, K, lam, backend).reshape(shape))


def _tau_float(n_c, n_w, L, K, lam, backend):
    """The float path on flat arrays: |log(λ₀/λ)| ≥ :data:`_R_NEAR` solved from the float r (or 0), the rest
    by :func:`_tau_near_threshold`."""
    if backend == "numba":
        from ._kernels import PARALLEL_MIN, tau_direct, tau_direct_serial  # noqa: PLC0415 - numba kernels: importing numba costs about a second, paid on first use

        t, r = (tau_direct if n_c.shape[0] >= PARALLEL_MIN else tau_direct_serial)(n_c, n_w, L, K, lam, _R_NEAR)
        near = np.nonzero(np.isnan(t))[0]
        if near.size:
            t[near] = _tau_near_threshold(n_c[near], n_w[near], L[near], K[near], lam[near], backend)
        return t
    lat = LatentSum(n_c, L, K)
    log_ratio = _log_lambda0(lat, n_w) - np.log(lam)
    t = np.zeros(lam.shape)
    far = np.nonzero(log_ratio >= _R_NEAR)[0]
    if far.size:
        sub = lat.take(far)
        s_far = _solve_s(sub, log_ratio[far])
        t[far] = s_far * np.exp(-_log_eta(n_c[far], n_w[far], L[far], K[far]))
    near = np.nonzero(np.abs(log_ratio) < _R_NEAR)[0]
    if near.size:
        t[near] = _tau_near_threshold(n_c[near], n_w[near], L[near], K[near], lam[near], backend)
    return t


# for |r| = |log(λ₀/λ)| below this, r is re-formed from the double-double gap (see _tau_near_threshold):
# the float r's absolute error (≲ 3e-13 for K = 1e300, from logs of size ~700) is then below 3e-13·r
_R_NEAR = 1.0


def _tau_near_threshold(n_c, n_w, L, K, lam, backend):
    """τ for |log(λ₀/λ)| < :data:`_R_NEAR`: 0 exactly when λ ≥ λ₀, else relative-accurate however close.

    r = log(λ₀/λ) is a difference of logs of size up to ~700; as r → 0 its float value keeps only its
    absolute accuracy (the former long-double formation kept ~3 more digits, and none where long double is
    float64). Here r = ½·log1p(X) from the gap X = (λ₀/λ)² − 1 in double-double (:func:`_threshold_gap`),
    relative error ≤ 2^-45; where |X| < 2^-50 (λ within a few ulps of λ₀) X is recomputed in exact
    rationals (:func:`_threshold_gap_exact`), so the sign of λ₀ − λ, hence τ = 0 or τ > 0, is decided
    exactly. The rest of the solve is relative-accurate in float64 (D is built from log1p/expm1, and
    d log s/d log r ∈ (0, 1]).
    """
    X = _threshold_gap(n_c, n_w, L, K, lam)
    for i in np.nonzero(np.abs(X) < _GAP_EXACT)[0]:
        X[i] = _threshold_gap_exact(n_c[i], n_w[i], L[i], K[i], lam[i])
    ok = X > 0
    r = 0.5 * np.log1p(np.where(ok, X, 0.0))
    lat = LatentSum(n_c, L, K)
    r1 = np.where(ok, r, 1.0)  # placeholder where τ = 0 (the solve needs r > 0)
    if backend == "numba":
        from ._kernels import PARALLEL_MIN, tau_sigma, tau_sigma_serial  # noqa: PLC0415 - numba kernels: importing numba costs about a second, paid on first use

        kernel = tau_sigma if r1.shape[0] >= PARALLEL_MIN else tau_sigma_serial
        s = np.exp(kernel(r1, lat.n_c, lat.L, lat.log_nc, lat.c1, lat.logq, lat.log1mq))
    else:
        s = _solve_s(lat, r1)
    return np.where(ok, s * np.exp(-_log_eta(n_c, n_w, L, K)), 0.0)


def _tau_mp(n_c, n_w, L, K, lam):
    """Reference: root of H′(t) = λ + d/dt log(1 − p + p(1+u)^L), u = (n_c−1)e^{−ηt}, as printed."""
    mpf = mpmath.mpf
    n_c, n_w, L, K, lam = (mpf(float(v)) for v in (n_c, n_w, L, K, lam))
    p = K / n_c**L
    et = n_c / (n_c - 1) / mpmath.sqrt(n_w * K * L)

    def Hp(s):  # H′ as a function of s = ηt
        u = (n_c - 1) * mpmath.exp(-s)
        return lam + p * L * (1 + u) ** (L - 1) * (-et * u) / (1 - p + p * (1 + u) ** L)

    if Hp(mpf(0)) >= 0:
        return mpf(0)
    hi = mpf(1)
    while Hp(hi) < 0:
        hi *= 2
    return mp_root(Hp, 0, hi) / et


def _tau_enclosure(n_c: int, n_w: int, L: int, K: int, lam: float, t_float: float):
    """Certified τ for one parameter set (``t_float``: the float path's τ, a starting guess only).

    In s = ηt, H′(t) = 0 reads f(s) = λ/η − L·E1E2(s) = 0 with f′ = G″ > 0 (:mod:`fctheory._latent`).
    """
    flint = flint_module()
    om = exact_one_minus_p(n_c, L, K)
    # Theorem 1: τ = 0 iff λ ≥ λ₀ ⟺ λ²(K + 1 − p)² ≥ LK/n_w, decided exactly in rationals
    if exact_fmpq(lam) ** 2 * (flint.fmpq(K) + om) ** 2 >= flint.fmpq(L * K, n_w):
        return enclosure(flint.arb(0), 0)

    def solve(prec):
        eta = flint.arb(flint.fmpq(n_c, n_c - 1)) / flint.arb(flint.fmpz(n_w * K * L)).sqrt()
        a, om_b = exact_arb(lam) / eta, flint.arb(om)

        def f(s):
            e1, _, e2, _ = latent_terms(n_c, L, K, om_b, s)
            return a - L * e1 * e2

        def fp(s):
            e1, me1, e2, me2 = latent_terms(n_c, L, K, om_b, s)
            return L * (e1 * me1 * e2 + L * e1 * e1 * e2 * me2)

        br = bracket_increasing(f, t_float * float(eta.mid()))
        X = None if br is None else bisect_to_newton(f, fp, *br)
        return None if X is None else X / eta

    ball, prec = adaptive(solve, what="tau")
    return enclosure(ball, prec)
