"""proofs_check.enumeration: the closed forms (92) and (124) the enumeration checks compare against, evaluated
against the tests' 50-digit oracle (tests/oracle/oracles.py)."""

import mpmath
import pytest

from proofs_check.enumeration import H_closed, H_star_closed
from tests.oracle import oracles as O


@pytest.mark.parametrize("t", [0.0, 0.3, 4.0, 40.0])
def test_H_closed_equals_the_50_digit_H(t):
    with mpmath.workdps(50):
        ref = float(O.mp_H(t, 3, 6, 2, 9, 0.01))
    assert H_closed(t, 3, 6, 2, 9, 0.01) == pytest.approx(ref, rel=1e-13, abs=1e-15)


@pytest.mark.parametrize("t", [0.0, 0.3, 4.0, 40.0])
def test_H_star_closed_equals_the_50_digit_H_star(t):
    with mpmath.workdps(50):
        ref = float(O.mp_H_star(t, 3, 2, 9, 4, 0.01))
    assert H_star_closed(t, 3, 2, 9, 4, 0.01) == pytest.approx(ref, rel=1e-13, abs=1e-15)
