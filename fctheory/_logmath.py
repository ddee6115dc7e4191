"""Overflow-free building blocks shared by the predictors (float64 or long double).

All functions are ufunc compositions, so they work elementwise on arrays of dtype float64
(the fast path) and ``np.longdouble`` (used for the final Newton polish: 64-bit mantissa on
x86-64, which buys the ~3 digits lost to conditioning near thresholds).
"""
from __future__ import annotations

import numpy as np
from scipy.special import expit

__all__ = ["expit", "log1p_aexpm1", "log1p_aexpm1_prime", "solve_monotone"]


def log1p_aexpm1(logA, log1mA, t):
    """ℓ(A, t) = log(1 + A(e^t − 1)) for A ∈ [0, 1], t ≥ 0, given log A and log(1 − A).

    For small t it is log1p(A·expm1(t)) (accurate relative to its tiny size); for t ≥ 1 it is
    logaddexp(log(1 − A), log A + t), which cannot overflow however large t is.
    """
    small = t < 1
    ts = np.where(small, t, 0)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        a_small = np.log1p(np.exp(logA) * np.expm1(ts))
        a_big = np.logaddexp(log1mA, logA + t)
    return np.where(small, a_small, a_big)


def log1p_aexpm1_prime(logA, log1mA, t):
    """∂ℓ(A, t)/∂t = A e^t/(1 − A + A e^t) = expit(t + log A − log(1 − A))."""
    with np.errstate(invalid="ignore"):
        return expit(t + logA - log1mA)


def solve_monotone(fun, lo, hi, x0=None, *, increasing: bool, rtol: float, maxiter: int = 200, atol: float = 0.0,
                   n_bisect: int = 0):
    """Vectorised safeguarded Newton for a monotone scalar equation, elementwise.

    ``fun(x, mask)`` returns ``(f, f')`` at ``x[mask]``.  ``lo``/``hi`` bracket the root
    (sign of f known at each end); a Newton step leaving the bracket is replaced by bisection.
    Stops elementwise when the step is below ``rtol·|x| + atol``. ``n_bisect`` plain bisection
    steps are taken first (from the bracket midpoint when ``x0`` is None): cheap insurance
    against the slow Newton crawl on the far side of an exponential.

    Returns the root array and the number of iterations used by the slowest element.
    """
    lo = np.array(lo, copy=True)
    hi = np.array(hi, copy=True)
    for _ in range(n_bisect):
        mid = 0.5 * (lo + hi)
        f, _fp = fun(mid, (slice(None),))
        below = (f > 0) == increasing
        hi = np.where(below, mid, hi)
        lo = np.where(below, lo, mid)
    x = np.array(0.5 * (lo + hi) if x0 is None else x0, copy=True)
    active = np.ones(x.shape, dtype=bool)
    it = 0
    for it in range(1, maxiter + 1):
        idx = np.nonzero(active)
        f, fp = fun(x[idx], idx)
        xi, loi, hii = x[idx], lo[idx], hi[idx]
        pos = f > 0
        # the root is below x where (f > 0) == increasing
        below = pos == increasing
        hii = np.where(below, xi, hii)
        loi = np.where(below, loi, xi)
        with np.errstate(divide="ignore", invalid="ignore"):
            xn = xi - f / fp
        bad = ~np.isfinite(xn) | (xn <= loi) | (xn >= hii)
        xn = np.where(bad, 0.5 * (loi + hii), xn)
        step = np.abs(xn - xi)
        done = (step <= rtol * np.abs(xn) + atol) | (f == 0)
        x[idx], lo[idx], hi[idx] = np.where(f == 0, xi, xn), loi, hii
        sub = np.zeros(active.shape, dtype=bool)
        sub[idx] = done
        active &= ~sub
        if not active.any():
            break
    return x, it
