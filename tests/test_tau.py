"""Theorem 1: H(t), τ and the trivial-solution threshold λ₀."""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import fctheory as fc
from fctheory.tau import H_second
from tests.oracle import oracles as O

# --- strategies over the specified domain: n_c ∈ [2,100], L ∈ [1,5000], K ∈ [1, n_c^L] (≤ 1e300),
# n_w ≤ 1e9, λ ∈ [1e-12, 1e3]


@st.composite
def theorem1_params(draw, near_threshold=False):
    n_c = draw(st.integers(2, 100))
    L = draw(st.one_of(st.integers(1, 20), st.integers(1, 5000)))
    s_c = draw(st.integers(1, 10**9 // n_c))
    logN = L * math.log(n_c)
    frac = draw(st.floats(0, 1))
    K = float(max(1, math.floor(math.exp(min(frac * logN, 690.0)))))
    if logN < 52 * math.log(2):  # keep K exactly ≤ n_c^L
        K = float(min(K, n_c**L))
    lam0 = fc.lambda_trivial(n_c=n_c, n_w=n_c * s_c, L=L, K=K)
    if near_threshold:
        gap = draw(st.floats(1e-6, 0.3))
        lam = lam0 * (1 - gap)
    else:
        lam = 10 ** draw(st.floats(-12, 3))
    lam = min(max(lam, 1e-12), 1e3)
    return n_c, n_c * s_c, L, K, lam


def _rel(a, b):
    return abs(float(a) - float(b)) / abs(float(b)) if b != 0 else abs(float(a))


def test_theorem1_paper_value_K1000():
    # paper, section 3: c = √(τ/n_w) = 1.42214 for n_c=3, n_w=1200, L=15, K=1000, λ=1e-3
    t = fc.tau(n_c=3, n_w=1200, L=15, K=1000, lam=1e-3)
    assert round(math.sqrt(t / 1200), 5) == 1.42214


def test_theorem1_paper_value_K50():
    t = fc.tau(n_c=3, n_w=1200, L=15, K=50, lam=1e-3)
    assert round(math.sqrt(t / 1200), 5) == 0.61602


def test_theorem1_tiny_reference_H_value():
    # derivation notes B.11(a): (3,2,2,K=9), λ=0.01 → H(τ) = 0.3490664343
    t = fc.tau(n_c=3, n_w=6, L=2, K=9, lam=0.01)
    assert abs(fc.H(t, n_c=3, n_w=6, L=2, K=9, lam=0.01) - 0.3490664343) < 1e-10


def _assert_tau_matches_mp(p):
    """Float path vs 50-digit mpmath: 1e-12 relative everywhere (the bound of tau's docstring)."""
    n_c, n_w, L, K, lam = p
    x = fc.tau(n_c=n_c, n_w=n_w, L=L, K=K, lam=lam)
    assert math.isfinite(x)
    with mpmath.workdps(50):
        ref = fc.tau(n_c=n_c, n_w=n_w, L=L, K=K, lam=lam, precision="mp")
        assert _rel(x, ref) <= 1e-12, (x, ref)


@given(theorem1_params())
def test_tau_float_matches_mpmath_50_digits(p):
    _assert_tau_matches_mp(p)


@given(theorem1_params(near_threshold=True))
def test_tau_float_matches_mpmath_near_threshold(p):
    _assert_tau_matches_mp(p)


@given(theorem1_params())
def test_tau_is_stationary_and_H_is_strictly_convex_there(p):
    n_c, n_w, L, K, lam = p
    t = fc.tau(n_c=n_c, n_w=n_w, L=L, K=K, lam=lam)
    if t == 0:
        # trivial solution: H′(0) ≥ 0 (up to rounding of λ − λ₀)
        assert fc.H_prime(0.0, n_c=n_c, n_w=n_w, L=L, K=K, lam=lam) >= -1e-12 * lam
        return
    # H′(τ) = 0 relative to the two terms λ and ηL·E1E2 that cancel
    assert abs(fc.H_prime(t, n_c=n_c, n_w=n_w, L=L, K=K, lam=lam)) <= 1e-9 * lam
    assert H_second(t, n_c=n_c, n_w=n_w, L=L, K=K) > 0


@given(theorem1_params())
def test_trivial_threshold_lambda0_closed_form(p):
    n_c, n_w, L, K, lam = p
    lam0 = fc.lambda_trivial(n_c=n_c, n_w=n_w, L=L, K=K)
    # closed form √(LK/n_w)/(K + 1 − K/n_c^L), here in mpmath
    with mpmath.workdps(40):
        ref = mpmath.sqrt(mpmath.mpf(L) * K / n_w) / (K + 1 - mpmath.mpf(K) / mpmath.mpf(n_c) ** L)
        assert _rel(lam0, ref) < 1e-13
    # and H′(0) = λ − λ₀
    assert abs(fc.H_prime(0.0, n_c=n_c, n_w=n_w, L=L, K=K, lam=lam) - (lam - lam0)) <= 1e-12 * max(lam, lam0)


def test_tau_is_zero_exactly_at_and_above_threshold():
    lam0 = fc.lambda_trivial(n_c=3, n_w=6, L=2, K=9)
    assert fc.tau(n_c=3, n_w=6, L=2, K=9, lam=lam0 * (1 + 1e-12)) == 0.0
    assert fc.tau(n_c=3, n_w=6, L=2, K=9, lam=2 * lam0) == 0.0
    assert fc.tau(n_c=3, n_w=6, L=2, K=9, lam=lam0 * (1 - 1e-3)) > 0


def test_tau_minimises_H_on_a_grid():
    # an independent check of "argmin": H(τ) ≤ H(t) on a fine grid around τ
    args = dict(n_c=4, n_w=8, L=3, K=20, lam=0.005)
    t = fc.tau(**args)
    grid = t * (1 + np.linspace(-0.2, 0.2, 401))
    assert np.all(fc.H(grid, **args) >= fc.H(t, **args) - 1e-15)


def test_tau_broadcasts_as_one_call():
    lam = np.logspace(-6, -1, 50)[:, None]
    K = np.array([1, 10, 100, 1000])
    out = fc.tau(n_c=3, n_w=1200, L=15, K=K, lam=lam)
    assert out.shape == (50, 4)
    for i in (0, 17, 49):
        for j in range(4):
            assert out[i, j] == pytest.approx(fc.tau(n_c=3, n_w=1200, L=15, K=K[j], lam=lam[i, 0]), rel=1e-14)


def test_tau_numba_and_numpy_backends_agree():
    rng = np.random.default_rng(0)
    n_c = rng.integers(2, 50, 500)
    L = rng.integers(1, 300, 500)
    K = np.maximum(1, np.floor(np.exp(rng.uniform(0, 1, 500) * np.minimum(L * np.log(n_c), 600))))
    lam = fc.lambda_trivial(n_c=n_c, n_w=n_c * 7, L=L, K=K) * np.exp(-np.exp(rng.uniform(-10, 3, 500)))
    a = fc.tau(n_c=n_c, n_w=n_c * 7, L=L, K=K, lam=lam, backend="numba")
    b = fc.tau(n_c=n_c, n_w=n_c * 7, L=L, K=K, lam=lam, backend="numpy")
    np.testing.assert_allclose(a, b, rtol=1e-11)


def test_tau_extremes_are_finite():
    # the corners of the domain: no overflow, no NaN
    for args in [
        (2, 1e9, 5000, 1e300, 1e-12),
        (100, 1e9, 5000, 1e300, 1e-12),
        (100, 100, 5000, 1, 1e-12),
        (2, 2, 1, 1, 1e-12),
        (2, 2, 1, 2, 1e3),
        (100, 1e9, 1, 100, 1e-12),
    ]:
        kw = dict(zip(("n_c", "n_w", "L", "K", "lam"), args))
        x = fc.tau(**kw)
        assert math.isfinite(x) and x >= 0
        assert math.isfinite(fc.H(x, **kw))


def test_H_binomial_form_matches_direct_sum_over_distances():
    # Lemma B(i) + binomial identity: 1 + Σ_r |S_r| e^{−γr} = 1 − p + p(1+(n_c−1)e^{−γ})^L
    n_c, n_w, L, K, lam, t = 3, 6, 4, 81, 0.0, 7.5
    from fctheory.tau import eta as eta_fn

    g = eta_fn(n_c=n_c, n_w=n_w, L=L, K=K) * t
    S = [K / n_c**L * math.comb(L, r) * (n_c - 1) ** r for r in range(1, L + 1)]
    direct = math.log(1 + sum(s * math.exp(-g * r) for r, s in enumerate(S, start=1)))
    assert fc.H(t, n_c=n_c, n_w=n_w, L=L, K=K, lam=lam) == pytest.approx(direct, rel=1e-14)


# --- the float path at the threshold: λ a few ulps to a million ulps from λ₀, on both sides -------------


def _mp_tau(n_c, n_w, L, K, lam):
    with mpmath.workdps(100):
        return fc.tau(n_c=n_c, n_w=n_w, L=L, K=K, lam=lam, precision="mp", dps=100)


def test_tau_two_ulps_below_the_former_float_lambda0_is_the_tiny_positive_root(host_backend):
    # λ two ulps below the float λ₀ of 1.1 (0.010204495064760339; the true λ₀ is 0.01020449506476034719...):
    # the exact τ is 6.2024351e-12, where the float path used to return 0
    p = dict(n_c=7, n_w=7, L=9, K=12345, lam=0.010204495064760335)
    with mpmath.workdps(100):
        ref = O.mp_tau(*p.values())
    assert float(ref) == pytest.approx(6.2024351041e-12, rel=1e-10)
    assert _rel(fc.tau(**p, backend=host_backend), ref) <= 1e-13


def test_tau_at_a_dyadic_lambda0_is_zero_and_one_ulp_below_is_positive(host_backend):
    # n_c = n_w = 2, L = 1, K = 2: λ₀ = √(2/2)/(2 + 1 − 1) = 1/2 exactly, so λ = 0.5 needs the exact decision
    p = dict(n_c=2, n_w=2, L=1, K=2)
    assert fc.tau(**p, lam=0.5, backend=host_backend) == 0.0
    lam = float(np.nextafter(0.5, 0))
    assert _rel(fc.tau(**p, lam=lam, backend=host_backend), _mp_tau(2, 2, 1, 2, lam)) <= 1e-13


@st.composite
def near_threshold_lams(draw):
    """A task of the domain and λ's k ulps of the float λ₀ away, |k| ≤ 1e6 (k > 0: below λ₀)."""
    n_c, n_w, L, K, _ = draw(theorem1_params())
    ks = draw(st.lists(st.one_of(st.integers(-8, 8), st.integers(-(10**6), 10**6)), min_size=1, max_size=4))
    lam0 = fc.lambda_trivial(n_c=n_c, n_w=n_w, L=L, K=K)
    return (n_c, n_w, L, K), np.array([lam0 - k * np.spacing(lam0) for k in ks])


@given(near_threshold_lams())
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_tau_within_a_million_ulps_of_lambda0_matches_mpmath_100_digits(host_backend, p):
    task, lams = p
    got = fc.tau(n_c=task[0], n_w=task[1], L=task[2], K=task[3], lam=lams, backend=host_backend)
    for g, lam in zip(np.atleast_1d(got), lams):
        ref = _mp_tau(*task, lam)
        if ref == 0:
            assert g == 0, (task, lam, g)  # λ ≥ λ₀ decided exactly: no tiny spurious τ
        else:
            assert _rel(g, ref) <= 1e-12, (task, lam, g, ref)


@given(theorem1_params())
def test_lambda_trivial_is_rounded_to_nearest(p):
    n_c, n_w, L, K, _ = p
    lam0 = fc.lambda_trivial(n_c=n_c, n_w=n_w, L=L, K=K)
    with mpmath.workdps(60):
        ref = O.mp_lambda0(n_c, n_w, L, K)
        # half an ulp, plus the 2^-95 relative of the double-double evaluation
        assert abs(lam0 - ref) <= np.spacing(lam0) / 2 + abs(ref) * 2.0**-95
