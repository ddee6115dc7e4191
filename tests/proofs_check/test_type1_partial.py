"""proofs_check.type1_partial: the Claim-H certificate of Theorem 1's type-I point on partial tasks."""

import numpy as np

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
