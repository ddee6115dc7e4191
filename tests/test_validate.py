"""fctheory._validate: the boundary checks every public function uses: integers, word frequencies, latent-set
sizes, broadcasting, and the @public decorator's declared kinds (each refusal names the parameter)."""

from fractions import Fraction

import numpy as np
import pytest

import fctheory as fc
from fctheory._validate import (
    Int,
    Real,
    broadcast_shape,
    check_int,
    check_latent_size,
    check_mu,
    public,
)


def test_check_int_accepts_integral_values_exactly():
    assert check_int("n", 10**30) == 10**30 and check_int("n", 4.0) == 4 and check_int("n", np.int8(3)) == 3


@pytest.mark.parametrize("bad", [True, 2.5, float("nan"), "3", None])
def test_check_int_refuses_non_integers_naming_the_parameter(bad):
    with pytest.raises(fc.FCTheoryError, match=r"^n="):
        check_int("n", bad)


def test_check_int_bounds_are_inclusive():
    assert check_int("n", 2, min=2, max=2) == 2
    with pytest.raises(fc.FCTheoryError, match="must be >= 3"):
        check_int("n", 2, min=3)


def test_zipf_frequencies_are_the_normalised_harmonic_weights():
    mu = check_mu("zipf", 4)
    ref = [Fraction(1, b) / sum(Fraction(1, j) for j in range(1, 5)) for b in range(1, 5)]
    np.testing.assert_allclose(mu, [float(r) for r in ref], rtol=1e-15)
    np.testing.assert_array_equal(check_mu("uniform", 3), np.full(3, 1 / 3))


@pytest.mark.parametrize("bad", [[0.5, 0.6], [1.2, -0.2], [0.5, np.nan]])
def test_frequencies_that_are_not_a_distribution_are_refused(bad):
    with pytest.raises(fc.FCTheoryError, match="mu="):
        check_mu(np.array(bad))


def test_latent_size_is_checked_without_forming_n_c_power_L():
    check_latent_size(np.array([10]), np.array([400]), np.array([10**18]))  # 10^400 overflows a float
    with pytest.raises(fc.FCTheoryError, match="K="):
        check_latent_size(np.array([3]), np.array([2]), np.array([10]))


def test_broadcast_shape_names_the_arrays_that_do_not_broadcast():
    assert broadcast_shape(a=np.zeros(3), b=np.zeros((2, 1))) == (2, 3)
    with pytest.raises(fc.FCTheoryError, match="a.*b|b.*a"):
        broadcast_shape(a=np.zeros(3), b=np.zeros(4))


def test_public_applies_the_declared_kinds_in_order():
    @public(n=Int(min=1), x=Real(lo=0, lo_open=True))
    def f(*, n, x):
        return n, x

    assert f(n=3.0, x=0.5) == (3, 0.5) and isinstance(f(n=3.0, x=0.5)[0], int)
    with pytest.raises(fc.FCTheoryError, match=r"^n=0"):
        f(n=0, x=1.0)
    with pytest.raises(fc.FCTheoryError, match=r"^x=0"):
        f(n=1, x=0.0)
