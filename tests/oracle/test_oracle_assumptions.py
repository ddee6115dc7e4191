"""Oracles for every public number of fctheory.assumptions.

Everything is recomputed by brute force in tests/oracle/oracles.py, independently of the library's
vectorised counting: Python loops and Fractions for the identities (35) of Assumption A; sympy
``linsolve`` of the (θ_r, A_r) system for Lemma B (iii); the equations (44) of Assumption B
written pair by pair as an exact sympy matrix (its rank gives the solution space, its rows check
the basis and the certificates); mpmath's Jacobi eigenvalues for the certificate's λ_min; least
squares for the distance to 𝒜 = span{I, 11ᵀ}; and an itertools enumeration of every subset of 𝒵
for the existence counts.

Checklist (field -> test)
-------------------------
assumption_A_counts                                   -> test_assumption_A_counts_equal_loops[...]
AssumptionAResult.holds, violations (k, r, ell, alpha, count, expected), n_identities, integral, counts
                                                      -> test_assumption_A_result_equals_fraction_loops[...]
LemmaBResult.holds, i_holds, S_r, ii_holds, column_sums, iii_holds, theta, A
                                                      -> test_lemma_B_fields_equal_sympy_linsolve[...]
AssumptionBResult.holds, dim, basis, n_equations      -> test_assumption_B_solution_space_equals_exact_equations[...]
AssumptionBResult.certificate, certificate_min_eig, certificate_residual, certificate_distance,
analytic_certificate, sdp_status                      -> test_assumption_B_certificates_equal_independent_checks
ExistenceResult.counts, examples, n_sets, sizes(), method, property (search_assumption_A, both methods)
                                                      -> test_search_assumption_A_equals_subset_enumeration[...]
ExistenceResult of search_lemma_B (incl. with_origin) -> test_search_lemma_B_equals_subset_enumeration[...]
"""

import itertools

import numpy as np
import pytest
import sympy as sp

import fctheory as fc
from fctheory.assumptions import assumption_A_counts
from tests.oracle import oracles as O

LB_SET = np.array([[0, 0, 0], [0, 1, 1], [1, 0, 1], [1, 1, 0]])  # Lemma B with K = 4 < 2^3
Z_CASES = {
    "full_3_2": (O.full_Z(3, 2), 3),
    "full_2_3": (O.full_Z(2, 3), 2),
    "lemmaB_K4": (LB_SET, 2),
    "antipodal": (np.array([[0, 0, 0], [1, 1, 1]]), 2),
    "random_3_3": (fc.Task.random(3, 2, 3, 6, seed=4).Z, 3),
    "random_2_4": (fc.Task.random(2, 2, 4, 7, seed=1).Z, 2),
    "duplicates": (np.array([[0, 1], [0, 1], [1, 0], [1, 1]]), 2),
    "single": (np.array([[2, 0, 1]]), 3),
}


@pytest.mark.parametrize("name", list(Z_CASES))
def test_assumption_A_counts_equal_loops(name):
    Z, n_c = Z_CASES[name]
    counts, _, _ = O.bf_assumption_A(Z, n_c)
    np.testing.assert_array_equal(assumption_A_counts(Z, n_c=n_c), counts)


@pytest.mark.parametrize("name", list(Z_CASES))
def test_assumption_A_result_equals_fraction_loops(name):
    Z, n_c = Z_CASES[name]
    counts, viol, integral = O.bf_assumption_A(Z, n_c)
    res = fc.check_assumption_A(Z, n_c=n_c)
    K, L = Z.shape
    assert res.holds is (not viol) and bool(res) is res.holds
    assert [(v.k, v.r, v.ell, v.alpha, v.count, v.expected) for v in res.violations] == viol
    assert res.n_identities == K * L * L * n_c
    assert res.integral is integral
    np.testing.assert_array_equal(res.counts, counts)


@pytest.mark.parametrize("name", list(Z_CASES))
def test_lemma_B_fields_equal_sympy_linsolve(name):
    Z, n_c = Z_CASES[name]
    ref = O.bf_lemma_B(Z, n_c)
    res = fc.lemma_B_properties(Z, n_c=n_c)
    np.testing.assert_array_equal(res.S_r, ref["S"])
    np.testing.assert_array_equal(res.column_sums, ref["colsum"])
    assert (res.i_holds, res.ii_holds, res.iii_holds) == (ref["i"], ref["ii"], ref["iii"])
    assert res.holds == (ref["i"] and ref["ii"] and ref["iii"])
    for r, (t, A) in enumerate(zip(ref["theta"], ref["A"]), start=1):
        if not ref["i"] and len(set(ref["S"][:, r])) > 1:
            continue  # (iii) is not posed at this r; the library reports None
        if t is None:
            assert res.theta[r - 1] is None
            continue
        assert sp.Rational(res.theta[r - 1].numerator, res.theta[r - 1].denominator) == t
        got = [[sp.Rational(x.numerator, x.denominator) for x in row] for row in res.A[r - 1]]
        assert got == A


def test_lemma_B_theta_and_A_equal_the_paper_under_assumption_A():
    """Under Assumption A (the full set), Lemma B gives θ_r = n_c r/((n_c−1)L), A_r = −r/((n_c−1)L)·11ᵀ."""
    for n_c, L in ((3, 2), (2, 3)):
        res = fc.lemma_B_properties(O.full_Z(n_c, L), n_c=n_c)
        for r in range(1, L + 1):
            assert res.theta[r - 1] == sp.Rational(n_c * r, (n_c - 1) * L)
            assert all(x == sp.Rational(-r, (n_c - 1) * L) for row in res.A[r - 1] for x in row)


@pytest.mark.parametrize("name", ["full_3_2", "full_2_3", "lemmaB_K4", "random_3_3", "random_2_4"])
def test_assumption_B_solution_space_equals_exact_equations(name):
    Z, n_c = Z_CASES[name]
    E, n_rows, idx = O.bf_assumption_B_equations(Z, n_c)
    m = len(idx)
    dim = m - (E.rank() if n_rows else 0)
    res = fc.check_assumption_B(Z, n_c=n_c, sdp=False)
    assert res.dim == dim and len(res.basis) == dim
    assert res.n_equations == n_rows
    assert res.holds == (dim == 2)
    Ef = np.array(E.tolist(), dtype=float)
    V = np.stack([O.vec_from_sym(B, idx) for B in res.basis], 1)
    for B in res.basis:  # symmetric, and a solution of every equation (44)
        np.testing.assert_array_equal(B, B.T)
    assert np.abs(Ef @ V).max() <= 1e-12 * max(1.0, np.abs(V).max())
    assert np.linalg.matrix_rank(V, tol=1e-10) == dim  # a basis: independent
    # 𝒜 = span{I, 11ᵀ} always solves (44): it lies in the span of the basis
    for A in (np.eye(n_c), np.ones((n_c, n_c))):
        assert O.dist_to_span(A, res.basis) <= 1e-12 * np.linalg.norm(A)


def test_assumption_B_certificates_equal_independent_checks():
    Z, n_c = Z_CASES["random_3_3"]
    E, _, idx = O.bf_assumption_B_equations(Z, n_c)
    Ef = np.array(E.tolist(), dtype=float)
    Ef = Ef[np.any(Ef != 0, axis=1)]  # pairs with equal Γ give the empty equation 0 = 0
    Ef /= np.linalg.norm(Ef, axis=1, keepdims=True)
    calA = [np.eye(n_c), np.ones((n_c, n_c))]
    res = fc.check_assumption_B(Z, n_c=n_c)
    assert not res.holds and res.dim == 3 and res.sdp_status in ("optimal", "optimal_inaccurate")
    C = res.certificate
    np.testing.assert_allclose(C, C.T, rtol=0, atol=0)
    assert np.abs(Ef @ O.vec_from_sym(C, idx)).max() <= 1e-12 * np.abs(C).max()  # solves (44)
    lmin = O.mp_min_eig(C)
    assert abs(res.certificate_min_eig - lmin) <= 1e-13 * np.abs(C).max()
    assert lmin > 1e-6  # positive definite
    dist = O.dist_to_span(C, calA)
    assert abs(res.certificate_distance - dist) <= 1e-12 * dist and dist > 1e-6  # outside 𝒜
    assert 0 <= res.certificate_residual <= 1e-12 * np.abs(C).max()
    # the analytic certificate I + B/(2‖B‖₂), B ⊥ 𝒜 in the solution space
    A = res.analytic_certificate
    B = A - np.eye(n_c)
    assert all(abs(np.sum(B * M)) <= 1e-13 for M in calA)
    assert abs(np.linalg.svd(B, compute_uv=False)[0] - 0.5) <= 1e-14
    assert np.abs(Ef @ O.vec_from_sym(A, idx)).max() <= 1e-12
    assert O.mp_min_eig(A) >= 0.5 - 1e-14
    # sdp=False: the analytic certificate is the certificate, with its own checks
    r2 = fc.check_assumption_B(Z, n_c=n_c, sdp=False)
    np.testing.assert_allclose(r2.certificate, r2.analytic_certificate, rtol=0, atol=0)
    assert abs(r2.certificate_min_eig - O.mp_min_eig(r2.certificate)) <= 1e-14
    assert abs(r2.certificate_distance - O.dist_to_span(r2.certificate, calA)) <= 1e-14
    assert r2.sdp_status == "skipped"


def test_assumption_B_holds_has_no_certificate():
    res = fc.check_assumption_B(O.full_Z(3, 2), n_c=3)
    assert res.holds and res.sdp_status == "not needed"
    assert (
        res.certificate,
        res.certificate_min_eig,
        res.certificate_residual,
        res.certificate_distance,
        res.analytic_certificate,
    ) == (None,) * 5


# ------------------------------------------------------------------------------------- existence
def _balanced(Zs, n_c):
    """Every (ℓ, α) appears exactly K/n_c times (37): the sets the exhaustive search examines."""
    K, L = Zs.shape
    return K % n_c == 0 and all(np.sum(Zs[:, l] == a) == K // n_c for l in range(L) for a in range(n_c))


def _enumerate(n_c, L, prop, with_origin=False):
    allz = O.full_Z(n_c, L)
    N = len(allz)
    counts, n_sets, first = {}, 0, {}
    for K in range(1, N + 1):
        c = 0
        for sub in itertools.combinations(range(N), K):
            if with_origin and 0 not in sub:
                continue
            Zs = allz[list(sub)]
            if not _balanced(Zs, n_c):
                continue
            n_sets += 1
            if prop(Zs):
                c += 1
                first.setdefault(K, Zs)
        counts[K] = c
    return counts, n_sets, first


def _A(n_c):
    return lambda Zs: not O.bf_assumption_A(Zs, n_c)[1]


def _B(n_c):
    def prop(Zs):
        S = np.array([[sum(1 for j in Zs if O._dist(j, k) == r) for r in range(Zs.shape[1] + 1)] for k in Zs])
        if np.any(S != S[0]):  # (i) first: cheap
            return False
        ref = O.bf_lemma_B(Zs, n_c)
        return ref["i"] and ref["ii"] and ref["iii"]

    return prop


def _check_existence(res, n_c, L, counts, n_sets, first, prop):
    assert (res.n_c, res.L) == (n_c, L)
    assert res.counts == counts
    assert res.n_sets == n_sets
    assert set(res.examples) == {K for K, c in counts.items() if c}
    allz = {tuple(z) for z in O.full_Z(n_c, L)}
    for K, Zs in res.examples.items():
        rows = [tuple(z) for z in Zs]
        assert len(rows) == K == len(set(rows)) and set(rows) <= allz
        assert prop(np.asarray(Zs))
    assert res.sizes() == sorted(K for K, c in counts.items() if c and K < n_c**L)


@pytest.mark.parametrize("n_c,L", [(2, 2), (2, 3), (4, 1), (3, 2)])
def test_search_assumption_A_equals_subset_enumeration(n_c, L):
    counts, n_sets, first = _enumerate(n_c, L, _A(n_c))
    res = fc.search_assumption_A(n_c=n_c, L=L)
    assert res.property == "assumption A" and res.method == "exhaustive"
    _check_existence(res, n_c, L, counts, n_sets, first, _A(n_c))
    integ = fc.search_assumption_A(n_c=n_c, L=L, method="integrality")
    assert integ.counts == counts and integ.method == "integrality"
    assert set(integ.examples) == set(res.examples)
    for K in integ.examples:
        assert sorted(map(tuple, integ.examples[K])) == sorted(map(tuple, res.examples[K]))


@pytest.mark.parametrize("n_c,L,with_origin", [(2, 2, False), (2, 3, False), (2, 3, True), (4, 1, False), (3, 2, True)])
def test_search_lemma_B_equals_subset_enumeration(n_c, L, with_origin):
    counts, n_sets, first = _enumerate(n_c, L, _B(n_c), with_origin)
    res = fc.search_lemma_B(n_c=n_c, L=L, with_origin=with_origin)
    assert res.property == "lemma B"
    _check_existence(res, n_c, L, counts, n_sets, first, _B(n_c))
    if with_origin:  # relabelling symmetry: the sets containing 0^L are the share K/n_c^L of all
        full, _, _ = _enumerate(n_c, L, _B(n_c)) if n_c**L <= 8 else (None, None, None)
        if full is not None:
            assert all(counts[K] * n_c**L == full[K] * K for K in counts)
