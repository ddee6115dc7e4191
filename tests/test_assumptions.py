"""fctheory.assumptions: Assumption A (35), Lemma B (i)-(iii), Assumption B (44), existence search."""

from fractions import Fraction
from math import comb

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fctheory import FCTheoryError, Task
from fctheory.assumptions import (
    assumption_A_counts,
    check_assumption_A,
    check_assumption_B,
    lemma_B_properties,
    search_assumption_A,
    search_lemma_B,
)

FULL = [(2, 1), (2, 2), (2, 3), (3, 2), (3, 3), (4, 2), (2, 5)]


def _rhs35(K, n_c, L, r, same):
    if same:
        return Fraction(K * comb(L - 1, r) * (n_c - 1) ** r, n_c**L)
    return Fraction(K * comb(L - 1, r - 1) * (n_c - 1) ** (r - 1), n_c**L)


@st.composite
def latent_sets(draw, max_K=12):
    n_c = draw(st.integers(2, 4))
    L = draw(st.integers(1, 3))
    N = n_c**L
    K = draw(st.integers(1, min(N, max_K)))
    idx = draw(st.lists(st.integers(0, N - 1), min_size=K, max_size=K, unique=True))
    Z = np.array([[(i // n_c**p) % n_c for p in range(L - 1, -1, -1)] for i in idx], dtype=np.int64)
    return n_c, Z


# ------------------------------------------------------------------------------------- Assumption A
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


def test_assumption_A_validates_input():
    with pytest.raises(FCTheoryError, match="n_c"):
        check_assumption_A(np.zeros((2, 2), dtype=int))
    with pytest.raises(FCTheoryError, match="Z"):
        check_assumption_A(np.array([[0, 3]]), n_c=3)
    with pytest.raises(FCTheoryError, match="Z"):
        check_assumption_A(np.array([0, 1]), n_c=2)
    with pytest.raises(FCTheoryError, match="n_c"):
        check_assumption_A(Task.full(2, 1, 2), n_c=3)


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
    from fctheory.assumptions import _all_latent, _subsets_balanced

    allz = _all_latent(n_c, L)
    for sub in _subsets_balanced(n_c, L, K):
        yield allz[list(sub)]


# ------------------------------------------------------------------------------------- Assumption B
@pytest.mark.parametrize("n_c,L", FULL[1:6])
def test_lemma_C_assumption_B_holds_on_full_latent_set(n_c, L):
    res = check_assumption_B(Task.full(n_c, 1, L))
    assert res.holds and res.dim == 2 and res.certificate is None


def _gamma(Z, n_c, j, k):
    L = Z.shape[1]
    Zj = np.zeros((n_c, L))
    Zk = np.zeros((n_c, L))
    Zj[Z[j], np.arange(L)] = 1
    Zk[Z[k], np.arange(L)] = 1
    return Zj @ (Zj - Zk).T


def _spread_44(A, Z, n_c):
    D = (Z[:, None] != Z[None]).sum(-1)
    worst = 0.0
    for r in range(1, Z.shape[1] + 1):
        v = [np.sum(A * _gamma(Z, n_c, j, k)) for j, k in np.argwhere(D == r)]
        if v:
            worst = max(worst, max(v) - min(v))
    return worst


@given(latent_sets(max_K=10))
def test_assumption_B_solution_space_contains_span_I_11T(case):
    """<aI + b11^T, Gamma^(j,k)> = a dist(z_j, z_k): the set A always solves (44), so dim >= 2."""
    n_c, Z = case
    res = check_assumption_B(Z, n_c=n_c, sdp=False)
    assert res.dim >= 2
    for A in (np.eye(n_c), np.ones((n_c, n_c))):
        assert _spread_44(A, Z, n_c) <= 1e-12
    for B in res.basis:
        assert _spread_44(B, Z, n_c) <= 1e-9 * max(1.0, np.abs(B).max())
    assert res.holds == (res.dim == 2)


@pytest.mark.parametrize("seed", range(3))
def test_assumption_B_sdp_certificate_is_psd_solution_outside_A(seed):
    task = Task.random(3, 1, 3, 3, seed=seed)
    res = check_assumption_B(task)
    assert not res.holds and res.dim > 2
    A = res.certificate
    assert res.sdp_status == "optimal"
    assert np.linalg.eigvalsh(A).min() > 1e-6
    assert _spread_44(A, task.Z, 3) <= 1e-10
    # distance from span{I, 11ᵀ}
    Q = np.linalg.qr(np.stack([np.eye(3).ravel(), np.ones(9)], 1))[0]
    assert np.linalg.norm(A.ravel() - Q @ (Q.T @ A.ravel())) > 1e-3
    # the analytic certificate I + B/(2||B||) is positive definite and solves (44) too
    Aa = res.analytic_certificate
    assert np.linalg.eigvalsh(Aa).min() >= 0.5 - 1e-12
    assert _spread_44(Aa, task.Z, 3) <= 1e-10


def test_assumption_B_holds_for_moderate_random_K():
    # the paper calls B "mild": with K = 10 of 27 latent variables it holds on these seeds
    assert all(check_assumption_B(Task.random(3, 1, 3, 10, seed=s)).holds for s in range(3))


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
