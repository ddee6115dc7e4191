"""fctheory.assumptions.existence: which small latent sets satisfy Assumption A or Lemma B (exhaustive search
under the time budget, and the divisibility argument)."""

import pytest

from fctheory import FCTheoryError
from fctheory.assumptions import lemma_B_properties, search_assumption_A, search_lemma_B


# ------------------------------------------------------------------------------------- existence
@pytest.mark.parametrize("n_c,L", [(2, 1), (2, 2), (2, 3), (3, 1), (3, 2), (2, 4), (4, 2)])
def test_no_latent_set_with_K_below_n_c_power_L_satisfies_assumption_A(n_c, L):
    ex = search_assumption_A(n_c=n_c, L=L)
    assert ex.sizes() == []
    assert ex.counts[n_c**L] == 1
    assert ex.counts == search_assumption_A(n_c=n_c, L=L, method="integrality").counts


@pytest.mark.parametrize(
    "n_c,L,expected",
    [(2, 2, {2: 2, 4: 1}), (2, 3, {2: 4, 4: 2, 8: 1}), (3, 2, {3: 6, 9: 1}), (4, 2, {4: 24, 16: 1})],
)
def test_lemma_B_sets_counts_small_cases(n_c, L, expected):
    res = search_lemma_B(n_c=n_c, L=L)
    assert {k: v for k, v in res.counts.items() if v} == expected
    for K, Zs in res.examples.items():
        assert lemma_B_properties(Zs, n_c=n_c).holds


def test_search_validates_input():
    with pytest.raises(FCTheoryError, match="exhaustive"):
        search_assumption_A(n_c=3, L=3)
    with pytest.raises(FCTheoryError, match="method"):
        search_assumption_A(n_c=2, L=2, method="ilp")
    with pytest.raises(FCTheoryError, match="K"):
        search_assumption_A(n_c=2, L=2, K=5)
    assert search_assumption_A(n_c=3, L=5, method="integrality").sizes() == []


@pytest.mark.parametrize("n_c,L", [(2, 3), (2, 4), (4, 2)])
def test_lemma_B_search_with_origin_counts_total_times_K_over_N(n_c, L):
    """Lemma B is invariant under per-position concept relabellings (transitive on C^L): double counting."""
    full = search_lemma_B(n_c=n_c, L=L)
    orig = search_lemma_B(n_c=n_c, L=L, with_origin=True)
    for K, v in full.counts.items():
        assert orig.counts[K] * n_c**L == v * K
    with pytest.raises(FCTheoryError, match="27"):
        search_lemma_B(n_c=2, L=5, with_origin=True)
