"""proofs_check.type1_partial: the Claim-H certificate of Theorem 1's type-I point on partial tasks."""

import numpy as np
import pytest

from fctheory import Task
from proofs_check import _risk
from proofs_check import type1_partial as t1
from proofs_check.certificates import engine_grad_f


def test_rho_on_a_full_task_is_one_and_type1_is_certified():
    row = t1.type1_row(Task.full(2, 2, 3), 0.4, kind="full")
    assert abs(row.rho - 1) <= 1e-12
    assert abs(row.align) <= 1e-12
    assert abs(row.balance) <= 1e-12
    assert row.verdict == "certified"


def test_engine_gradient_equals_finite_differences_of_the_exact_risk_on_a_partial_task():
    task = Task.random(2, 2, 2, 3, seed=4)
    _, _, X = t1.type1_X(task, 0.3 * t1.lambda0(task))
    X = X + 0.3 * np.random.default_rng(0).normal(size=X.shape)  # a generic point, not only type I's
    _, G = engine_grad_f(task, X)
    S = _risk.enumerate_sentences(task)
    h = 1e-5
    fd = np.zeros_like(X)
    for idx in np.ndindex(X.shape):
        E = np.zeros_like(X)
        E[idx] = h
        fd[idx] = (_risk.f_value(S, X + E) - _risk.f_value(S, X - E)) / (2 * h)
    assert np.max(np.abs(G - fd)) <= 1e-9 * np.max(np.abs(G))


def test_refuted_case_minimiser_beats_type1_by_more_than_the_error_bound():
    n_c, s_c, L, K, seed, frac = t1.REFUTED
    task = Task.random(n_c, s_c, L, K, seed=seed)
    row = t1.type1_row(task, frac, seed=seed)
    assert row.verdict == "refuted" and row.rho > 1 + 1e3 * row.bound
    m = t1.minimiser_summary(task, frac, seeds=(0,))
    R1 = _risk.risk(task, *t1.type1_X(task, row.lam)[:2], row.lam)
    assert m.R_type1 == R1
    assert m.gap > 1e6 * row.bound * R1


def test_rows_are_deterministic_by_seed():
    def rows(seed):
        return t1.run_grid(tasks=[("random", seed, Task.random(3, 2, 2, 5, seed=seed))], fracs=(0.3, 0.8))

    a, b, c = rows(2), rows(2), rows(3)
    assert [r.__dict__ for r in a] == [r.__dict__ for r in b]
    assert a[0].z != c[0].z


def test_an_unbalanced_point_is_refuted():
    assert t1.verdict(1.0, 0.0, 1e-14, balance=1e-6) == "refuted"
    assert t1.verdict(1.0, 0.0, 1e-14, balance=0.0) == "certified"


def _next(x, direction=np.inf):
    return float(np.nextafter(x, direction))


def test_verdict_certifies_exactly_at_rho_one_plus_bound_and_refutes_one_ulp_beyond():
    b = 1e-13
    assert t1.verdict(1 + b, 0.0, b) == "certified"
    assert t1.verdict(_next(1 + b), 0.0, b) == "refuted"
    assert t1.verdict(0.5, 0.0, b) == "certified"  # ‖∇f‖₂ < λ: inside the subdifferential


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_verdict_certifies_exactly_at_an_alignment_of_plus_or_minus_bound_and_refutes_one_ulp_beyond(sign):
    b = 3e-14
    assert t1.verdict(1.0, sign * b, b) == "certified"
    assert t1.verdict(1.0, sign * _next(b), b) == "refuted"


def test_verdict_balance_tolerance_is_inclusive_and_an_unbalanced_point_is_refuted():
    tol = t1.BALANCE_TOL
    assert t1.verdict(1.0, 0.0, 1e-13, tol) == "certified"
    assert t1.verdict(1.0, 0.0, 1e-13, -tol) == "certified"
    assert t1.verdict(1.0, 0.0, 1e-13, _next(tol)) == "refuted"  # R > g(X): a balanced factorisation is lower
    # R < g(X) beyond the tolerance contradicts Claim G (R ≥ g): neither certified nor refuted
    assert t1.verdict(1.0, 0.0, 1e-13, -_next(tol)) == "undecided"


def test_certificate_bound_covers_the_engine_enumeration_distance_and_both_svd_bounds():
    from proofs_check.certificates import svd_bound

    task = Task.random(2, 2, 2, 3, seed=4)
    lam = 0.3 * t1.lambda0(task)
    _, _, X = t1.type1_X(task, lam)
    rho, align, bound, f, nuc = t1.certificate(task, X, lam)
    _, G = engine_grad_f(task, X)
    _, G_enum = _risk.f_grad(_risk.enumerate_sentences(task), X)
    sg, sx = np.linalg.svd(G, compute_uv=False), np.linalg.svd(X, compute_uv=False)
    assert rho == sg[0] / lam and nuc == pytest.approx(np.sum(sx), rel=1e-15)
    assert align == pytest.approx((np.sum(G * X) + lam * nuc) / (lam * nuc), rel=1e-12, abs=1e-15)
    cross = np.linalg.norm(G - G_enum) / lam
    expected = cross + svd_bound(G.shape, sg[0]) / lam + len(sx) * svd_bound(X.shape, sx[0]) / nuc
    assert bound == pytest.approx(expected, rel=1e-12) and bound > cross
    assert f == pytest.approx(_risk.f_value(_risk.enumerate_sentences(task), X), rel=1e-12)
