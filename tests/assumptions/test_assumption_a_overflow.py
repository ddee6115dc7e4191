"""assumption_A_counts refuses an n_c whose counts array could never exist, by exact integer arithmetic.

n_c may be a Python int beyond the float range (10**400): the refusal is a FCTheoryError naming n_c, never an
OverflowError from a float size estimate, and an n_c that fits still gives exact counts.
"""

from __future__ import annotations

import numpy as np
import pytest

import fctheory as fc
from fctheory.assumptions import assumption_A_counts

Z = np.array([[0, 1], [1, 0]])


@pytest.mark.parametrize("n_c", [10**400, 2**1100, 10**308, 2**63])
def test_n_c_beyond_the_float_range_is_a_named_error(n_c):
    with pytest.raises(fc.FCTheoryError, match=r"^n_c=.*is too large"):
        assumption_A_counts(Z, n_c=n_c)


def test_n_c_beyond_the_float_range_is_refused_even_without_a_budget():
    with fc.budget(max_bytes=float("inf"), max_items=float("inf"), max_seconds=float("inf")):
        with pytest.raises(fc.FCTheoryError, match=r"^n_c="):
            assumption_A_counts(Z, n_c=10**400)


def test_n_c_over_the_memory_budget_is_refused_naming_n_c():
    with pytest.raises(fc.FCTheoryError, match=r"^n_c=.*max_bytes"):
        assumption_A_counts(Z, n_c=2**40)


def test_unused_concepts_count_zero():
    # brute-force oracle: N[k, r, l, a] = #{j : dist(z_j, z_k) = r and z_{j,l} = a}
    n_c = 5
    counts = assumption_A_counts(Z, n_c=n_c)
    expected = np.zeros((2, 3, 2, n_c), dtype=np.int64)
    for k in range(2):
        for j in range(2):
            r = int((Z[j] != Z[k]).sum())
            for ell in range(2):
                expected[k, r, ell, Z[j, ell]] += 1
    assert counts.dtype == np.int64 and np.array_equal(counts, expected)
