"""proofs_check._oracle: the checks' 50-digit oracle against the independent oracle of the tests
(tests/oracle/oracles.py), so that the two references of the same formulas are compared with each other."""

import mpmath
import numpy as np
import pytest

from proofs_check import _oracle as P
from tests.oracle import oracles as O

CASES = [(3, 6, 2, 9, 0.01), (2, 4, 3, 8, 1e-3), (4, 8, 2, 10, 0.05)]


def _rel(a, b):
    return abs(mpmath.mpf(a) - mpmath.mpf(b)) / abs(mpmath.mpf(b))


@pytest.mark.parametrize("n_c, n_w, L, K, lam", CASES)
def test_H_equals_the_tests_oracle(n_c, n_w, L, K, lam):
    with mpmath.workdps(50):
        for t in (0.1, 1.0, 7.5):
            assert _rel(P.H(t, n_c, n_w, L, K, lam), O.mp_H(t, n_c, n_w, L, K, lam)) <= mpmath.mpf(10) ** -40


@pytest.mark.parametrize("n_c, n_w, L, K, lam", CASES)
def test_tau_equals_the_tests_oracle(n_c, n_w, L, K, lam):
    with mpmath.workdps(50):
        assert _rel(P.tau(n_c, n_w, L, K, lam), O.mp_tau(n_c, n_w, L, K, lam)) <= mpmath.mpf(10) ** -30


def test_lambda_trivial_equals_the_tests_oracle():
    with mpmath.workdps(50):
        assert _rel(P.lambda_trivial(3, 6, 2, 9), O.mp_lambda0(3, 6, 2, 9)) <= mpmath.mpf(10) ** -40


def test_tau_star_equals_the_tests_oracle():
    with mpmath.workdps(50):
        assert _rel(P.tau_star(3, 2, 9, 4, 0.01), O.mp_tau_star(3, 2, 9, 4, 0.01)) <= mpmath.mpf(10) ** -30


def test_type3_solution_satisfies_the_tests_residuals():
    mu = [0.5, 0.3, 0.2]
    c, r = P.solve_type3(mu, 2, 2, 0.01)
    res7, res8 = O.mp_residuals(mu, 2, 2, 0.01, c, r)
    assert float(res7) <= 1e-12 and float(res8) <= 1e-12


def test_frame_is_equiangular_and_phi_equals_the_tests_layernorm():
    F = P.frame(4, 6, mean_zero=True)
    np.testing.assert_allclose(F.T @ F, (4 * np.eye(4) - 1) / 3, atol=1e-14)
    np.testing.assert_allclose(F.sum(axis=0), 0, atol=1e-14)
    W = np.random.default_rng(0).normal(size=(5, 7))
    np.testing.assert_allclose(P.phi(W, eps=1e-5), O.my_phi(W, eps=1e-5), rtol=1e-13, atol=1e-13)
