"""Theorem 3 (full collapse of h*): H*(t) and its minimiser τ*.

    H*(t) = log(1 − K/n_c^L + (K/n_c^L)(1 + (n_c − 1)e^{−η*t})^L) + (λ/2)t²,
    η* = (n_c/(n_c − 1))/√(KL/d).

H* is strictly convex and H*′(0) < 0, so τ* > 0 always (no trivial threshold: W is not
penalised in (10)). With s = η*t the stationarity condition λt = η*L·E1E2(s) reads, in logs,

    log(λ/(η*²L)) + log s − log(E1E2)(0) + D(s) = 0,

which is increasing in σ = log s with slope 1 + sD′(s) ≥ 1: safeguarded Newton in σ is
well conditioned everywhere (no polish needed, but the same long-double step is applied).
"""

from __future__ import annotations

import mpmath
import numpy as np

from ._interval import (
    adaptive,
    bisect_to_newton,
    bracket_increasing,
    enclosure,
    enclosure_array,
    exact_arb,
    exact_one_minus_p,
    flint_module,
    latent_terms,
)
from ._latent import LatentSum
from ._logmath import solve_monotone
from ._mp import mp_context, mp_guard, mp_root, vectorize_mp
from ._validate import Choice, Int, broadcast_flat, broadcast_shape, check_latent_size, float_array, int_array, public
from .tau import DPS, KK, LAM, LAM0, LEN, N_C, PRECISION, T, check_batch

D_EMB = Int(min=1, array=True)

__all__ = ["H_star", "H_star_prime", "H_star_second", "tau_star", "eta_star"]

# 1.0: everything after t is keyword-only; the 0.x positional order still works, with a DeprecationWarning
_H_LEGACY = ("n_c", "L", "K", "d", "lam")


def _params(n_c, L, K, d):
    n_c = int_array("n_c", n_c, min=2)
    L = int_array("L", L, min=1)
    K = int_array("K", K, min=1)
    d = int_array("d", d, min=1)
    check_batch(broadcast_shape(n_c=n_c, L=L, K=K, d=d), what="the broadcast (n_c, L, K, d)")
    check_latent_size(n_c, L, K)
    return n_c, L, K, d


def _log_eta_star(n_c, L, K, d):
    return np.log(n_c / (n_c - 1)) + 0.5 * (np.log(d) - np.log(K) - np.log(L))


def _out(x):
    x = np.asarray(x, dtype=np.float64)
    return float(x) if x.ndim == 0 else x


@public(n_c=N_C, L=LEN, K=KK, d=D_EMB, legacy_positional=("n_c", "L", "K", "d"))
def eta_star(*, n_c, L, K, d):
    """η* = (n_c/(n_c−1))/√(KL/d) of Theorem 3."""
    n_c, L, K, d = _params(n_c, L, K, d)
    return _out(np.exp(_log_eta_star(n_c, L, K, d)))


@public(t=T, n_c=N_C, L=LEN, K=KK, d=D_EMB, lam=LAM0, legacy_positional=_H_LEGACY)
def H_star(t, *, n_c, L, K, d, lam):
    """H*(t) of Theorem 3 (= R* of a type-II configuration with c = t/√(KL), Lemma R).

    Parameters
    ----------
    t : float or array_like, t ≥ 0
    n_c, L, K, d : int or array_like
        Concepts, sentence length, classes (1 ≤ K ≤ n_c^L), embedding dimension.
    lam : float or array_like, λ ≥ 0

    Returns
    -------
    float or ndarray
        H*(t); inf only where the true value exceeds the float64 range (λt²/2 > 1.8e308).
    """
    t = float_array("t", t, lo=0)
    lam = float_array("lam", lam, lo=0)
    n_c, L, K, d = _params(n_c, L, K, d)
    check_batch(broadcast_shape(t=t, n_c=n_c, L=L, K=K, d=d, lam=lam), what="H_star")
    with np.errstate(over="ignore"):  # documented: inf where λt²/2 exceeds the float range
        s = t * np.exp(_log_eta_star(n_c, L, K, d))
        return _out(LatentSum(n_c, L, K).G(s) + 0.5 * lam * t * t)


@public(t=T, n_c=N_C, L=LEN, K=KK, d=D_EMB, lam=LAM0, legacy_positional=_H_LEGACY)
def H_star_prime(t, *, n_c, L, K, d, lam):
    """H*′(t) = λt − η*L·E1(s)E2(s), s = η*t."""
    t = float_array("t", t, lo=0)
    lam = float_array("lam", lam, lo=0)
    n_c, L, K, d = _params(n_c, L, K, d)
    check_batch(broadcast_shape(t=t, n_c=n_c, L=L, K=K, d=d, lam=lam), what="H_star")
    e = np.exp(_log_eta_star(n_c, L, K, d))
    with np.errstate(over="ignore"):  # documented: inf where λt exceeds the float range
        return _out(lam * t + e * LatentSum(n_c, L, K).G_prime(t * e))


@public(t=T, n_c=N_C, L=LEN, K=KK, d=D_EMB, lam=LAM0, legacy_positional=_H_LEGACY)
def H_star_second(t, *, n_c, L, K, d, lam):
    """H*″(t) = λ + η*²G″(η*t) > 0."""
    t = float_array("t", t, lo=0)
    lam = float_array("lam", lam, lo=0)
    n_c, L, K, d = _params(n_c, L, K, d)
    check_batch(broadcast_shape(t=t, n_c=n_c, L=L, K=K, d=d, lam=lam), what="H_star")
    e = np.exp(_log_eta_star(n_c, L, K, d))
    with np.errstate(over="ignore"):
        return _out(lam + e * e * LatentSum(n_c, L, K).G_second(t * e))


def _residual(lat: LatentSum, logb, sigma):
    s = np.exp(sigma)
    g = logb + sigma - lat.log_rhs0() + lat.delta_log_rhs(s)
    return g, 1.0 + s * lat.delta_log_rhs_prime(s)


@public(
    n_c=N_C,
    L=LEN,
    K=KK,
    d=D_EMB,
    lam=LAM,
    precision=PRECISION,
    dps=DPS,
    backend=Choice("numba", "numpy"),
    legacy_positional=("n_c", "L", "K", "d", "lam", "precision", "dps", "backend"),
)
def tau_star(*, n_c, L, K, d, lam, precision: str = "float", dps: int = 50, backend: str = "numba"):
    """τ* = argmin_{t ≥ 0} H*(t), Theorem 3.

    The type-II configuration with c = τ*/√(KL) is then a global minimiser of (10).

    Parameters
    ----------
    n_c, L, K, d : int or array_like
    lam : float or array_like, λ > 0
    precision : {"float", "mp", "interval"}
        "float": float64 (relative error ≲ 1e-12 over the tested domain); "mp": mpmath
        reference solving H*′(t) = 0 from the printed formula with ``dps`` digits; "interval": a
        certified :class:`~fctheory._interval.Enclosure` of the root of H*′ (interval Newton in arb
        ball arithmetic on a bracket with certified signs and H*″ > 0; python-flint, the
        ``fctheory[certify]`` extra), relative width below 1e-17 (see docs/certified.md).
    dps : int
        Decimal digits for ``precision="mp"``, in [20, 1000].
    backend : {"numba", "numpy"}
        Compiled scalar Newton per element (default) or the vectorised NumPy reference.

    Returns
    -------
    float, ndarray or Enclosure
        τ* > 0.

    Examples
    --------
    >>> round(tau_star(n_c=3, L=15, K=1000, d=100, lam=1e-3), 5)   # the setting of figure 4(c)
    11.94703
    """
    lam = float_array("lam", lam, lo=0, lo_open=True)
    n_c, L, K, d = _params(n_c, L, K, d)
    check_batch(
        broadcast_shape(n_c=n_c, L=L, K=K, d=d, lam=lam), what="tau_star", precision=precision, dps=dps, mp_seconds=0.4
    )
    shape, (n_c, L, K, d, lam) = broadcast_flat(n_c=n_c, L=L, K=K, d=d, lam=lam)
    if precision == "mp":
        with mp_context(dps), mp_guard(dps):
            return vectorize_mp(_tau_star_mp, n_c, L, K, d, lam, shape=shape)
    if precision == "interval":
        flint_module()
        guess = np.atleast_1d(tau_star(n_c=n_c, L=L, K=K, d=d, lam=lam, backend=backend))
        items = [
            _tau_star_enclosure(*map(int, v[:4]), float(v[4]), float(g)) for v, g in zip(zip(n_c, L, K, d, lam), guess)
        ]
        return enclosure_array(items, shape)
    lat = LatentSum(n_c, L, K)
    log_eta = _log_eta_star(n_c, L, K, d)
    logb = np.log(lam) - 2 * log_eta - np.log(L)
    hi = lat.log_rhs0() - logb  # g(σ) ≥ log β + σ − log RHS0
    lo = np.minimum(hi, -np.log1p(L)) - 2.0  # there D(e^σ) ≤ (1+L)e^σ ≤ 1/e², so g < 0

    if backend == "numba":
        from ._kernels import PARALLEL_MIN, tau_star_sigma, tau_star_sigma_serial  # noqa: PLC0415 - numba kernels: importing numba costs about a second, paid on first use

        kernel = tau_star_sigma if logb.shape[0] >= PARALLEL_MIN else tau_star_sigma_serial
        sigma = kernel(logb, lat.log_rhs0(), lat.n_c, lat.L, lat.log_nc, lat.c1, lat.logq, lat.log1mq)
    else:

        def fun(x, idx):
            return _residual(lat.take(idx), logb[idx], x)

        sigma, _ = solve_monotone(fun, lo, hi, increasing=True, rtol=1e-15, atol=1e-13, n_bisect=8)
    # σ is an absolute quantity solved to ~eps·|terms|, i.e. τ* to ~1e-15 relative: no polish needed
    t = np.exp(sigma - log_eta)
    return _out(t.reshape(shape))


def _tau_star_mp(n_c, L, K, d, lam):
    """Reference: root of H*′(t) = λt + d/dt log(1 − p + p(1+u)^L), u = (n_c−1)e^{−η*t}."""
    mpf = mpmath.mpf
    n_c, L, K, d, lam = (mpf(float(v)) for v in (n_c, L, K, d, lam))
    p = K / n_c**L
    et = n_c / (n_c - 1) / mpmath.sqrt(K * L / d)

    def f(s):  # H*′(s/η*)
        u = (n_c - 1) * mpmath.exp(-s)
        return lam * s / et + p * L * (1 + u) ** (L - 1) * (-et * u) / (1 - p + p * (1 + u) ** L)

    hi = mpf(1)
    while f(hi) < 0:
        hi *= 2
    return mp_root(f, 0, hi) / et


def _tau_star_enclosure(n_c: int, L: int, K: int, d: int, lam: float, t_float: float):
    """Certified τ* for one parameter set (``t_float``: the float path's τ*, a starting guess only).

    In s = η*t, H*′(t)/η* = g(s) = λs/η*² − L·E1E2(s), increasing (g′ = λ/η*² + G″ > 0) with g(0) < 0.
    """
    flint = flint_module()
    om = exact_one_minus_p(n_c, L, K)

    def solve(prec):
        eta = flint.arb(flint.fmpq(n_c, n_c - 1)) * flint.arb(flint.fmpq(d, K * L)).sqrt()
        b, om_b = exact_arb(lam) / (eta * eta), flint.arb(om)

        def g(s):
            e1, _, e2, _ = latent_terms(n_c, L, K, om_b, s)
            return b * s - L * e1 * e2

        def gp(s):
            e1, me1, e2, me2 = latent_terms(n_c, L, K, om_b, s)
            return b + L * (e1 * me1 * e2 + L * e1 * e1 * e2 * me2)

        br = bracket_increasing(g, t_float * float(eta.mid()))
        X = None if br is None else bisect_to_newton(g, gp, *br)
        return None if X is None else X / eta

    ball, prec = adaptive(solve, what="tau_star")
    return enclosure(ball, prec)
