"""fctheory._latent: the latent-variable sum G(s) of H and H* and its constants, against 50-digit mpmath
(tests/oracle/oracles.py) and mpmath differentiation."""

import mpmath
import numpy as np
import pytest

from fctheory._latent import LatentSum, one_minus_p
from tests.oracle import oracles as O

CASES = [(3, 2, 9), (3, 15, 1000), (2, 40, 50), (10, 3, 7)]


@pytest.mark.parametrize("n_c, L, K", CASES)
def test_one_minus_p_equals_the_exact_fraction(n_c, L, K):
    ref = mpmath.mpf(1) - mpmath.mpf(K) / mpmath.mpf(n_c) ** L
    assert float(one_minus_p(n_c, L, K)) == pytest.approx(float(ref), rel=1e-15, abs=0)


@pytest.mark.parametrize("n_c, L, K", CASES)
@pytest.mark.parametrize("s", [1e-8, 0.5, 3.0, 60.0])
def test_G_equals_the_printed_formula_at_50_digits(n_c, L, K, s):
    with mpmath.workdps(50):
        ref = O.mp_G(s, n_c, L, K)
    got = float(LatentSum(n_c, L, K).G(np.float64(s)))
    # (1 + (n_c − 1)e^{−s})^L in the float path costs about L ulps: 1e-12 relative up to L = 40
    assert got == pytest.approx(float(ref), rel=1e-12, abs=1e-300)


def test_G_is_vectorised_over_broadcast_sizes():
    lat = LatentSum(np.array([2, 3]), np.array([[2], [4]]), 3)
    s = np.array(0.7)
    got = lat.G(s)
    assert got.shape == (2, 2)
    for i, L in enumerate((2, 4)):
        for j, n_c in enumerate((2, 3)):
            with mpmath.workdps(50):
                assert got[i, j] == pytest.approx(float(O.mp_G(0.7, n_c, L, 3)), rel=1e-14)


def test_t_of_s_is_minus_L_log_of_the_expected_factor():
    lat = LatentSum(3, 4, 20)
    s = 0.9
    ref = -4 * mpmath.log(1 + (mpmath.exp(-s) - 1) * (1 - mpmath.mpf(1) / 3))
    assert float(lat.t_of_s(np.float64(s))) == pytest.approx(float(ref), rel=1e-14)
