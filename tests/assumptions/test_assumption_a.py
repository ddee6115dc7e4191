"""fctheory.assumptions.assumption_a: Assumption A (35), its exact counts and every violated (k, r, ℓ, α)."""

import numpy as np
import pytest
from hypothesis import given

from fctheory import Task
from fctheory.assumptions import assumption_A_counts, check_assumption_A

from .cases import FULL, latent_sets
from .cases import rhs35 as _rhs35


@pytest.mark.parametrize("n_c,L", FULL)
def test_assumption_A_35_holds_on_full_latent_set(n_c, L):
    res = check_assumption_A(Task.full(n_c, 1, L))
    assert res.holds and res.integral and res.violations == []
    assert res.n_identities == n_c**L * L * L * n_c


@given(latent_sets())
def test_assumption_A_reports_exactly_the_violated_kr_l_alpha(case):
    n_c, Z = case
    K, L = Z.shape
    res = check_assumption_A(Z, n_c=n_c)
    reported = {(v.k, v.r, v.ell, v.alpha): v for v in res.violations}
    for k in range(K):
        for r in range(1, L + 1):
            for ell in range(L):
                for a in range(n_c):
                    cnt = sum(1 for z in Z if np.sum(z != Z[k]) == r and z[ell] == a)
                    e = _rhs35(K, n_c, L, r, Z[k, ell] == a)
                    assert (cnt != e) == ((k, r, ell, a) in reported)
                    if (k, r, ell, a) in reported:
                        assert reported[(k, r, ell, a)].count == cnt and reported[(k, r, ell, a)].expected == e
    assert res.holds == (not reported)


@given(latent_sets())
def test_assumption_A_needs_n_c_power_L_to_divide_K(case):
    """(35) at r = 1, z_kl != alpha requires the integer K/n_c^L: no set with K < n_c^L satisfies A."""
    n_c, Z = case
    K, L = Z.shape
    res = check_assumption_A(Z, n_c=n_c)
    assert res.integral == (K % n_c**L == 0)
    if K < n_c**L:
        assert not res.holds


def test_assumption_A_counts_sum_to_S_r():
    Z = Task.random(3, 1, 3, 11, seed=3).Z
    N = assumption_A_counts(Z, n_c=3)
    D = (Z[:, None] != Z[None]).sum(-1)
    for r in range(4):
        assert np.array_equal(N[:, r].sum(-1), np.repeat((D == r).sum(1)[:, None], 3, axis=1))


def test_assumption_A_expected_hook_changes_the_statement():
    full = Task.full(2, 1, 3)
    bad = lambda K, n, L, r, same: _rhs35(K, n, L, r, same) + (1 if same and r == 1 else 0)  # noqa: E731
    res = check_assumption_A(full, expected=bad)
    assert not res.holds
    assert {(v.r, v.count) for v in res.violations} == {(1, 2)}
    assert len(res.violations) == 8 * 3  # every k, every ℓ, the α = z_kℓ entry
