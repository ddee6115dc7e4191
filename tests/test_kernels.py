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
