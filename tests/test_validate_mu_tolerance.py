"""The sum-to-one tolerance of word frequencies μ (``check_mu``, through ``Task`` and the predictors).

docs/api.md states "probabilities > 0 summing to 1 (±1e-12)". A vector whose sum is off by 0.99e-12
must be accepted, one off by 1.01e-12 refused with FCTheoryError naming ``mu``; the float rounding
of the sum itself (≤ s_c·ε ≈ 1e-15 here) is far below the 1e-14 margin.
"""

import numpy as np
import pytest

import fctheory as fc
from fctheory._validate import check_mu


def _mu(s_c, delta):
    """s_c frequencies summing to 1 + δ (the sum of the powers of two below is exact)."""
    mu = np.full(s_c, 1.0 / s_c)
    mu[-1] += delta
    return mu


@pytest.mark.parametrize("sign", [1, -1])
def test_a_single_word_frequency_within_1e_12_of_one_is_accepted(sign):
    mu = _mu(1, sign * 0.99e-12)
    assert check_mu(mu, 1)[0] == mu[0]  # returned as given, not renormalised
    fc.Task.full(2, 1, 2, mu=mu)


@pytest.mark.parametrize("sign", [1, -1])
def test_a_single_word_frequency_off_by_more_than_1e_12_is_refused(sign):
    with pytest.raises(fc.FCTheoryError, match="mu=.*sum to 1"):
        fc.Task.full(2, 1, 2, mu=_mu(1, sign * 1.01e-12))


@pytest.mark.parametrize("s_c", [2, 4, 64])
def test_frequencies_summing_to_within_1e_12_are_accepted(s_c):
    for sign in (1, -1):
        fc.Task.full(2, s_c, 1, mu=_mu(s_c, sign * 0.99e-12))
        fc.predict_type3(mu=_mu(s_c, sign * 0.99e-12), n_c=3, L=2, lam=1e-3)


@pytest.mark.parametrize("s_c", [2, 4, 64])
def test_frequencies_off_by_more_than_1e_12_are_refused(s_c):
    for sign in (1, -1):
        with pytest.raises(fc.FCTheoryError, match="mu="):
            fc.Task.full(2, s_c, 1, mu=_mu(s_c, sign * 1.01e-12))


@pytest.mark.parametrize("s_c", [2, 4, 64])
def test_frequencies_off_by_twice_the_documented_tolerance_times_sqrt_s_c_are_refused(s_c):
    # far outside the documented tolerance whatever s_c
    for sign in (1, -1):
        with pytest.raises(fc.FCTheoryError, match="mu="):
            fc.Task.full(2, s_c, 1, mu=_mu(s_c, sign * 2 * np.sqrt(s_c) * 1e-12))


def test_float_normalised_frequencies_are_accepted_for_many_words():
    # w / w.sum() in float64 sums to 1 only up to rounding (~s_c·ε): never refused
    rng = np.random.default_rng(0)
    for s_c in (10, 1000, 100000):
        w = rng.random(s_c) + 1e-3
        check_mu(w / w.sum(), s_c)
