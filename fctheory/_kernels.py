"""numba kernels for the predictors' hot loops (one scalar Newton solve per element).

The NumPy code in :mod:`fctheory._latent` is the readable reference and the long-double
polish; these kernels are the same formulas, scalar, compiled and run in parallel, because a
vectorised NumPy Newton pays ~15 full-array transcendental passes per iteration for every
element, converged or not.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

_NB = dict(cache=True, nogil=True, fastmath=False, error_model="numpy")
#: below this many elements the predictors run the serial kernels: waking numba's thread pool costs more
#: (milliseconds on a loaded machine) than solving a few elements
PARALLEL_MIN = 64


@njit(**_NB)
def expit(x):
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


@njit(**_NB)
def logaddexp(a, b):
    m = max(a, b)
    if m == -np.inf:
        return -np.inf
    return m + math.log1p(math.exp(-abs(a - b)))


@njit(**_NB)
def ell(logA, log1mA, t):
    """ℓ(A, t) = log(1 + A(e^t − 1)), t ≥ 0."""
    if t < 1.0:
        return math.log1p(math.exp(logA) * math.expm1(t))
    return logaddexp(log1mA, logA + t)


@njit(**_NB)
def ell_prime(logA, log1mA, t):
    return expit(t + logA - log1mA)


@njit(**_NB)
def D_and_Dp(s, n_c, L, log_nc, c1, logq, log1mq):
    """D(s) = ℓ(1/n_c, s) + ℓ(q, t(s)) and D′(s) (see fctheory._latent)."""
    log1m_inv_nc = c1 - log_nc
    t = -L * math.log1p(math.expm1(-s) * (1.0 - 1.0 / n_c))
    D = ell(-log_nc, log1m_inv_nc, s) + ell(logq, log1mq, t)
    Dp = expit(s - c1) + ell_prime(logq, log1mq, t) * L * expit(c1 - s)
    return D, Dp


@njit(**_NB)
def _s_upper(r, n_c, L, log_nc, logq):
    """min(s₁, s₂) with ℓ(1/n_c, s₁) = r and ℓ(q, t(s₂)) = r: an upper bound of D⁻¹(r).

    D = ℓ₁ + ℓ₂ ≥ each term, so the root of D(s) = r lies below both one-term roots, and
    above the one-term roots for r/2 (D ≤ 2 max(ℓ₁, ℓ₂)).
    """
    s1 = math.log1p(n_c * math.expm1(r)) if r < 700.0 else r + log_nc
    if logq == -np.inf:
        return s1
    lr = math.log(math.expm1(r)) if r < 700.0 else r
    t = logaddexp(0.0, lr - logq)  # ℓ₂⁻¹(r)
    y = -math.expm1(-t / L) / (1.0 - 1.0 / n_c)
    if y >= 1.0:
        return s1
    return min(s1, -math.log1p(-y))


@njit(**_NB)
def _residual(kind, x, a, n_c, L, log_nc, c1, logq, log1mq):
    """(f, f′) in σ = log s. kind 0 (Theorem 1): log D(e^σ) − a, a = log log(λ₀/λ);
    kind 1 (Theorem 3): σ − a + D(e^σ), a = log(E1E2)(0) − log(λ/(η*²L))."""
    s = math.exp(x)
    D, Dp = D_and_Dp(s, n_c, L, log_nc, c1, logq, log1mq)
    if kind == 0:
        return math.log(D) - a, s * Dp / D
    return x - a + D, 1.0 + s * Dp


@njit(**_NB)
def _bracketed_newton(kind, x, lo, hi, a, n_c, L, log_nc, c1, logq, log1mq):
    """Newton on an increasing residual, falling back to bisection when a step leaves [lo, hi]
    (``lo = -inf``: unknown lower bracket, replaced by unit steps down until f < 0)."""
    for _ in range(200):
        f, fp = _residual(kind, x, a, n_c, L, log_nc, c1, logq, log1mq)
        if f == 0.0:
            return x
        if f > 0:
            hi = x
        else:
            lo = x
        xn = x - f / fp
        if not (lo <= xn <= hi):
            # bisect; with no lower bracket yet, step down by e in s instead
            xn = 0.5 * (lo + hi) if lo > -np.inf else x - 1.0
        if abs(xn - x) <= 1e-15 * max(1.0, abs(x)):
            return xn
        x = xn
    return x


@njit(**_NB)
def _rtsafe_tau(r, n_c, L, log_nc, c1, logq, log1mq):
    """σ = log s solving log D(e^σ) = log r (Theorem 1), started at the one-term upper bound."""
    hi = math.log(_s_upper(r, n_c, L, log_nc, logq))
    # the lower bracket (the one-term roots for r/2) is found by the downward steps if needed
    return _bracketed_newton(0, hi, -np.inf, hi, math.log(r), n_c, L, log_nc, c1, logq, log1mq)


@njit(parallel=True, **_NB)
def tau_sigma(r, n_c, L, log_nc, c1, logq, log1mq):
    out = np.empty(r.shape[0])
    for i in prange(r.shape[0]):
        out[i] = _rtsafe_tau(r[i], n_c[i], L[i], log_nc[i], c1[i], logq[i], log1mq[i])
    return out


@njit(**_NB)
def tau_sigma_serial(r, n_c, L, log_nc, c1, logq, log1mq):
    """:func:`tau_sigma` in the calling thread (a function of its own: one numba cache entry each)."""
    out = np.empty(r.shape[0])
    for i in range(r.shape[0]):
        out[i] = _rtsafe_tau(r[i], n_c[i], L[i], log_nc[i], c1[i], logq[i], log1mq[i])
    return out


@njit(**_NB)
def _rtsafe_tau_star(logb, log_rhs0, n_c, L, log_nc, c1, logq, log1mq):
    """σ = log s solving log β + σ − log RHS0 + D(e^σ) = 0 (Theorem 3)."""
    A = log_rhs0 - logb
    hi = A
    lo = min(hi, -math.log1p(L)) - 2.0
    # start from the root of σ + e^σ = A (D(s) ≈ s for large s, ≈ 0 for small s)
    y = math.log(A) if A > 1.0 else A - 1.0
    for _ in range(6):
        y -= (y + math.exp(y) - A) / (1.0 + math.exp(y))
    return _bracketed_newton(1, min(max(y, lo), hi), lo, hi, A, n_c, L, log_nc, c1, logq, log1mq)


@njit(parallel=True, **_NB)
def tau_star_sigma(logb, log_rhs0, n_c, L, log_nc, c1, logq, log1mq):
    out = np.empty(logb.shape[0])
    for i in prange(logb.shape[0]):
        out[i] = _rtsafe_tau_star(logb[i], log_rhs0[i], n_c[i], L[i], log_nc[i], c1[i], logq[i], log1mq[i])
    return out


@njit(**_NB)
def tau_star_sigma_serial(logb, log_rhs0, n_c, L, log_nc, c1, logq, log1mq):
    """:func:`tau_star_sigma` in the calling thread."""
    out = np.empty(logb.shape[0])
    for i in range(logb.shape[0]):
        out[i] = _rtsafe_tau_star(logb[i], log_rhs0[i], n_c[i], L[i], log_nc[i], c1[i], logq[i], log1mq[i])
    return out


@njit(**_NB)
def _theorem1_constants(n_c, n_w, L, K, lam):
    """Per-element constants of Theorem 1 (same formulas as fctheory._latent.LatentSum):
    r = log(λ₀/λ), log n_c, log(n_c−1), log q, log(1−q), log η."""
    log_nc = math.log(n_c)
    logK = math.log(K)
    if L * math.log2(n_c) <= 53.0:  # n_c^L is an exact double: 1 − p exactly
        N = n_c**L
        om = (N - K) / N
    else:
        om = -math.expm1(min(logK - L * log_nc, 0.0))
    om = max(om, 0.0)
    log_Kom = logK + math.log1p(om / K)
    logq = math.log(om) - log_Kom if om > 0.0 else -np.inf
    log1mq = logK - log_Kom
    log_n_w = math.log(n_w)
    logL = math.log(L)
    r = 0.5 * (logL + logK - log_n_w) - log_Kom - math.log(lam)
    log_eta = math.log(n_c / (n_c - 1.0)) - 0.5 * (log_n_w + logK + logL)
    return r, log_nc, math.log(n_c - 1.0), logq, log1mq, log_eta


@njit(parallel=True, **_NB)
def tau_direct(n_c, n_w, L, K, lam, r_near):
    """τ for flat arrays, constants computed in the kernel. Elements with |r| < r_near are returned
    as NaN (with their r) for the caller's threshold treatment: there the float r is too inaccurate
    to decide the sign of r = log(λ₀/λ) or to give it to full relative accuracy."""
    n = n_c.shape[0]
    out = np.empty(n)
    r_out = np.empty(n)
    for i in prange(n):
        out[i], r_out[i] = _tau_one(n_c[i], n_w[i], L[i], K[i], lam[i], r_near)
    return out, r_out


@njit(**_NB)
def tau_direct_serial(n_c, n_w, L, K, lam, r_near):
    """:func:`tau_direct` in the calling thread."""
    n = n_c.shape[0]
    out = np.empty(n)
    r_out = np.empty(n)
    for i in range(n):
        out[i], r_out[i] = _tau_one(n_c[i], n_w[i], L[i], K[i], lam[i], r_near)
    return out, r_out


@njit(**_NB)
def _tau_one(n_c, n_w, L, K, lam, r_near):
    """(τ or 0 or NaN, r) of one element of :func:`tau_direct`."""
    r, log_nc, c1, logq, log1mq, log_eta = _theorem1_constants(n_c, n_w, L, K, lam)
    if r <= -r_near:
        return 0.0, r
    if r < r_near:
        return np.nan, r
    sigma = _rtsafe_tau(r, n_c, L, log_nc, c1, logq, log1mq)
    return math.exp(sigma - log_eta), r
