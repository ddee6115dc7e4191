"""Theorem 3: H*(t) and τ*."""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, strategies as st

import fctheory as fc
from fctheory.tau_star import H_star_second

T3 = ("n_c", "L", "K", "d", "lam")  # the order of theorem3_params() draws


@st.composite
def theorem3_params(draw):
    n_c = draw(st.integers(2, 100))
    L = draw(st.one_of(st.integers(1, 20), st.integers(1, 5000)))
    logN = L * math.log(n_c)
    K = float(max(1, math.floor(math.exp(min(draw(st.floats(0, 1)) * logN, 690.0)))))
    if logN < 52 * math.log(2):
        K = float(min(K, n_c**L))
    d = draw(st.integers(1, 10**6))
    lam = 10 ** draw(st.floats(-12, 3))
    return n_c, L, K, d, lam


def test_theorem3_reference_value_fig4c():
    # K=1000, d=100, n_c=3, L=15, λ=1e-3: τ* = 11.94703 (the acceptance value), c = τ*/√(KL) = 0.09755
    ts = fc.tau_star(n_c=3, L=15, K=1000, d=100, lam=1e-3)
    assert round(ts, 5) == 11.94703
    assert round(ts / math.sqrt(15000), 5) == 0.09755


def test_theorem3_tiny_reference_H_star_value():
    # derivation notes B.11(b): (3,3,2,K=9), d=4, λ=0.01 → H*(τ*) = 0.2314714626
    ts = fc.tau_star(n_c=3, L=2, K=9, d=4, lam=0.01)
    assert abs(fc.H_star(ts, n_c=3, L=2, K=9, d=4, lam=0.01) - 0.2314714626) < 1e-10


@given(theorem3_params())
def test_tau_star_float_matches_mpmath_50_digits(p):
    kw = dict(zip(T3, p))
    x = fc.tau_star(**kw)
    with mpmath.workdps(50):
        ref = fc.tau_star(**kw, precision="mp")
        assert math.isfinite(x) and x > 0
        assert abs(x - ref) / ref <= 1e-12, (x, ref)


def test_tau_star_tiny_root_of_a_huge_K_task_is_accurate_to_1e_12(host_backend):
    # s = η*τ* ≈ e^-330: the solve in σ = log s stops on a step ≤ rtol·|σ| + atol, which must stay below
    # 1e-12 (with rtol = 1e-14 the NumPy solver stopped 3.7e-12 away, on a bisection step)
    kw = dict(n_c=31, L=1008, K=4.60460640478299e299, d=69, lam=1.8993753097188562e-06)
    with mpmath.workdps(50):
        ref = fc.tau_star(**kw, precision="mp")
        assert abs(fc.tau_star(**kw, backend=host_backend) - ref) / ref <= 1e-12


@given(theorem3_params())
def test_tau_star_is_stationary_and_H_star_strictly_convex(p):
    kw = dict(zip(T3, p))
    ts = fc.tau_star(**kw)
    lam = p[-1]
    # H*′(τ*) = λτ* − η*L E1E2: relative to λτ*, the size of the cancelling terms
    assert abs(fc.H_star_prime(ts, **kw)) <= 1e-10 * lam * ts
    assert H_star_second(ts, **kw) > 0


def test_tau_star_minimises_H_star_on_a_grid():
    args = dict(n_c=3, L=4, K=30, d=5, lam=0.02)
    ts = fc.tau_star(**args)
    grid = ts * (1 + np.linspace(-0.3, 0.3, 601))
    assert np.all(fc.H_star(grid, **args) >= fc.H_star(ts, **args) - 1e-15)


def test_tau_star_never_trivial():
    # W is not penalised in (10): H*′(0) = −η*L·E1E2(0) < 0, so τ* > 0 for every λ
    assert fc.H_star_prime(0.0, n_c=3, L=15, K=1000, d=100, lam=1e3) < 0
    assert fc.tau_star(n_c=3, L=15, K=1000, d=100, lam=1e3) > 0


def test_tau_star_numba_and_numpy_backends_agree():
    rng = np.random.default_rng(1)
    n_c = rng.integers(2, 100, 400)
    L = rng.integers(1, 3000, 400)
    K = np.maximum(1, np.floor(np.exp(rng.uniform(0, 1, 400) * np.minimum(L * np.log(n_c), 600))))
    d = rng.integers(1, 1000, 400)
    lam = 10 ** rng.uniform(-12, 3, 400)
    np.testing.assert_allclose(
        fc.tau_star(n_c=n_c, L=L, K=K, d=d, lam=lam, backend="numba"),
        fc.tau_star(n_c=n_c, L=L, K=K, d=d, lam=lam, backend="numpy"),
        rtol=1e-11,
    )


def test_tau_star_broadcasts():
    out = fc.tau_star(n_c=3, L=15, K=np.array([10, 100, 1000]), d=np.array([[10], [100]]), lam=1e-3)
    assert out.shape == (2, 3)
    assert out[1, 2] == pytest.approx(fc.tau_star(n_c=3, L=15, K=1000, d=100, lam=1e-3), rel=1e-14)
