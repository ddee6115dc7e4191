"""proofs_check.interval_checks: the certified enclosures of precision='interval' against the mpmath oracle."""

import mpmath
import numpy as np
import pytest

import fctheory
from proofs_check import CheckFailed
from proofs_check import _oracle as orc
from proofs_check import interval_checks as ic
from proofs_check.library_mutants import get_mutants, run_mutant

pytest.importorskip("flint")


def test_every_enclosure_contains_the_oracle_value_and_is_tight():
    assert "enclosures contain" in ic.check_interval_enclosures(quick=True)


def test_oracle_values_shifted_below_float64_resolution_are_excluded():
    with pytest.raises(CheckFailed, match="does not contain"):
        ic.check_interval_enclosures(mutant=True, quick=True)


def test_oracle_lambda_max_type3_is_the_closed_form_of_condition_9():
    mu = np.array([6.0, 3.0, 2.0]) / 11
    # (9): lambda^2 < (L / n_c^(L+1)) sum mu^2, at n_c = 3, L = 2: sqrt(2/27 * sum mu^2)
    with mpmath.workdps(50):
        expected = mpmath.sqrt(mpmath.mpf(2) / 27 * sum(mpmath.mpf(float(m)) ** 2 for m in mu))
        assert abs(orc.lambda_max_type3(mu, 3, 2) - expected) <= mpmath.mpf(10) ** -45
    assert fctheory.lambda_max_type3(mu=mu, n_c=3, L=2, precision="interval").contains(orc.lambda_max_type3(mu, 3, 2))


@pytest.mark.parametrize("mid", ["enclosure-radius-dropped", "lambda-max-interval-no-sqrt"])
def test_a_wrong_enclosure_planted_in_the_library_is_caught(mid):
    (mutant,) = get_mutants(mid)
    res = run_mutant(mutant)
    assert res.status == "CAUGHT", res.detail
    assert "interval-enclosures" in res.detail
