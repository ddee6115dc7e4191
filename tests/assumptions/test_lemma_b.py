"""fctheory.assumptions.lemma_b: Lemma B (i)-(iii) decided exactly, θ_r and A_r recovered as rationals."""

from fractions import Fraction
from math import comb

import numpy as np
import pytest

from fctheory import Task
from fctheory.assumptions import all_latent, check_assumption_A, lemma_B_properties, subsets_balanced

from .cases import FULL


# ------------------------------------------------------------------------------------- Lemma B
@pytest.mark.parametrize("n_c,L", FULL[1:])
def test_lemma_B_theta_r_and_A_r_on_full_latent_set(n_c, L):
    res = lemma_B_properties(Task.full(n_c, 1, L))
    assert res.holds and res.i_holds and res.ii_holds and res.iii_holds
    for r in range(1, L + 1):
        assert int(res.S_r[0, r]) == comb(L, r) * (n_c - 1) ** r  # (39)
        assert res.theta[r - 1] == Fraction(n_c * r, (n_c - 1) * L)
        assert all(v == Fraction(-r, (n_c - 1) * L) for row in res.A[r - 1] for v in row)
    assert np.all(res.column_sums * n_c == n_c**L)  # (37)


@pytest.mark.parametrize("n_c,L", [(2, 2), (2, 4), (3, 3), (4, 2)])
def test_lemma_B_holds_for_repetition_code_with_K_below_n_c_power_L(n_c, L):
    Z = np.repeat(np.arange(n_c)[:, None], L, axis=1)
    res = lemma_B_properties(Z, n_c=n_c)
    assert res.holds
    assert res.theta[L - 1] == Fraction(n_c, n_c - 1)  # S_L(k) = the other n_c − 1 rows
    assert all(t is None for t in res.theta[:-1])  # empty spheres: (iii) vacuous
    assert not check_assumption_A(Z, n_c=n_c).holds


def test_lemma_B_reports_which_property_fails():
    res = lemma_B_properties(np.array([[0, 0], [0, 1], [1, 0]]), n_c=2)
    assert not res.holds and not res.i_holds and not res.ii_holds
    assert any(m.startswith("(i)") for m in res.messages) and any(m.startswith("(ii)") for m in res.messages)


def test_lemma_B_iii_can_fail_alone():
    # columns balanced and |S_r| constant, but the mean-value property (iii) fails
    found = None
    for Zs in search_all_balanced(2, 4, 8):
        res = lemma_B_properties(Zs, n_c=2)
        if res.i_holds and res.ii_holds and not res.iii_holds:
            found = res
            break
    assert found is not None and not found.holds
    assert any(m.startswith("(iii)") for m in found.messages)


def search_all_balanced(n_c, L, K):
    allz = all_latent(n_c, L)
    for sub in subsets_balanced(n_c, L, K):
        yield allz[list(sub)]
