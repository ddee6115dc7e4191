"""fctheory._mp: the mpmath root finder, precision context, error guard and vectorisation."""

import mpmath
import numpy as np
import pytest

import fctheory as fc
from fctheory._mp import mp_context, mp_guard, mp_root, vectorize_mp


def test_mp_root_finds_sqrt2_to_the_working_precision():
    with mpmath.workdps(50):
        r = mp_root(lambda x: x * x - 2, 0, 2)
        assert abs(r - mpmath.sqrt(2)) <= mpmath.mpf(10) ** -46


def test_mp_root_on_a_steep_exponential_agrees_with_the_closed_form():
    with mpmath.workdps(40):
        r = mp_root(lambda x: mpmath.exp(50 * x) - 3, 0, 1)
        assert abs(r - mpmath.log(3) / 50) <= mpmath.mpf(10) ** -36


def test_mp_root_without_a_sign_change_raises():
    with pytest.raises(ArithmeticError, match="no sign change"):
        mp_root(lambda x: x * x + 1, -1, 1)


def test_mp_context_sets_dps_and_refuses_out_of_range():
    with mp_context(60):
        assert mpmath.mp.dps == 60
    with pytest.raises(fc.FCTheoryError, match="dps"):
        mp_context(10)


def test_mp_guard_turns_a_reference_failure_into_the_project_error():
    with pytest.raises(fc.FCTheoryError, match="precision='float'"):
        with mp_guard(30):
            raise ZeroDivisionError("singular")


def test_vectorize_mp_broadcasts_like_numpy():
    out = vectorize_mp(lambda a, b: mpmath.mpf(a) * b, np.array([1.0, 2.0]), np.array([[3.0], [4.0]]))
    assert out.shape == (2, 2) and [float(v) for v in out.ravel()] == [3.0, 6.0, 4.0, 8.0]
    assert float(vectorize_mp(lambda a: mpmath.mpf(a) + 1, 2.0)) == 3.0
