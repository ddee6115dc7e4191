"""fctheory._kernels: the scalar numba building blocks of the predictors, against mpmath and against the
vectorised twins in fctheory._latent."""

import math

import mpmath
import numpy as np
import pytest

from fctheory._kernels import D_and_Dp, ell, ell_prime, expit, logaddexp
from fctheory._latent import LatentSum


@pytest.mark.parametrize("x", [-800.0, -30.0, -1e-3, 0.0, 2.0, 40.0, 800.0])
def test_expit_is_the_logistic_function_without_overflow(x):
    with mpmath.workdps(40):
        assert expit(x) == pytest.approx(float(1 / (1 + mpmath.exp(-x))), rel=1e-15, abs=1e-320)


def test_logaddexp_is_exact_for_far_apart_and_infinite_arguments():
    assert logaddexp(1000.0, 0.0) == pytest.approx(1000.0 + math.log1p(math.exp(-1000.0)), rel=1e-16)
    assert logaddexp(-np.inf, -np.inf) == -np.inf and logaddexp(-np.inf, 2.0) == 2.0


@pytest.mark.parametrize("A", [1e-300, 1e-5, 0.3, 1 - 1e-9])
@pytest.mark.parametrize("t", [1e-12, 0.5, 1.0, 30.0, 5000.0])
def test_ell_is_log_of_one_plus_A_expm1_t(A, t):
    with mpmath.workdps(60):
        ref = mpmath.log(1 + mpmath.mpf(A) * mpmath.expm1(t))
        log1mA = float(mpmath.log(1 - mpmath.mpf(A)))
    assert ell(math.log(A), log1mA, t) == pytest.approx(float(ref), rel=1e-13)


def test_ell_prime_is_the_derivative_of_ell():
    logA, log1mA = math.log(0.2), math.log(0.8)
    for t in (0.3, 2.0, 9.0):
        h = 1e-6
        fd = (ell(logA, log1mA, t + h) - ell(logA, log1mA, t - h)) / (2 * h)
        assert ell_prime(logA, log1mA, t) == pytest.approx(fd, rel=1e-8)


@pytest.mark.parametrize("n_c, L, K", [(3, 2, 9), (3, 15, 1000), (5, 4, 17)])
def test_D_and_its_derivative_equal_the_vectorised_latent_sum(n_c, L, K):
    lat = LatentSum(n_c, L, K)
    for s in (1e-3, 0.7, 6.0):
        D, Dp = D_and_Dp(s, float(n_c), float(L), float(lat.log_nc), float(lat.c1), float(lat.logq), float(lat.log1mq))
        assert D == pytest.approx(float(lat.delta_log_rhs(np.float64(s))), rel=1e-14)
        assert Dp == pytest.approx(float(lat.delta_log_rhs_prime(np.float64(s))), rel=1e-14)


def test_serial_kernels_agree_with_the_parallel_ones_and_the_predictors_pick_them_by_size(monkeypatch):
    """The serial twins run the same per-element solve (same numbers, in the same process), and tau uses them
    below PARALLEL_MIN elements (a thread-pool wake-up costs more than a few solves)."""
    import fctheory as fc
    from fctheory import _kernels as k

    rng = np.random.default_rng(0)
    n = 200
    n_c = rng.integers(2, 6, n).astype(float)
    L = rng.integers(1, 20, n).astype(float)
    K = np.minimum(rng.integers(2, 1000, n).astype(float), n_c**L)
    n_w = n_c * rng.integers(1, 50, n)
    lam = 10.0 ** rng.uniform(-6, -1, n)
    a = k.tau_direct(n_c, n_w, L, K, lam, 1e-3)
    b = k.tau_direct_serial(n_c, n_w, L, K, lam, 1e-3)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    called = []
    real = k.tau_direct_serial
    monkeypatch.setattr(k, "tau_direct_serial", lambda *a: called.append(1) or real(*a))
    t1 = fc.tau(n_c=3, n_w=6, L=2, K=5, lam=0.01)
    assert called and t1 == pytest.approx(
        float(k.tau_direct(*(np.array([v]) for v in (3.0, 6.0, 2.0, 5.0, 0.01)), 1e-3)[0][0])
    )


def test_tau_and_tau_star_give_the_same_numbers_serial_and_parallel():
    """A batch of PARALLEL_MIN or more elements runs the parallel kernels; one element at a time, the serial ones."""
    import fctheory as fc
    from fctheory._kernels import PARALLEL_MIN

    lam = np.geomspace(1e-5, 1e-2, PARALLEL_MIN + 6)
    batch = fc.tau(n_c=3, n_w=1200, L=15, K=1000, lam=lam)
    one = np.array([fc.tau(n_c=3, n_w=1200, L=15, K=1000, lam=v) for v in lam])
    np.testing.assert_array_equal(batch, one)
    batch = fc.tau_star(n_c=3, L=15, K=1000, d=100, lam=lam)
    one = np.array([fc.tau_star(n_c=3, L=15, K=1000, d=100, lam=v) for v in lam])
    np.testing.assert_array_equal(batch, one)
