"""fctheory.optima.star: network h*, the best local minimiser of (10) and the relaxation's lower bound."""

import pytest

from fctheory import Task
from fctheory.optima import optimum
from fctheory.risk import minimize_true_risk


def test_h_star_full_task_relaxation_certifies_type2():
    task = Task.full(2, 2, 2)
    res = optimum(task, lam=0.05, network="h*", d=3, n_starts=2)
    assert res.network == "h*" and res.lower_bound <= res.R + 1e-13
    assert res.rel_gap <= 1e-9 and res.certified
    assert res.R == pytest.approx(res.R_type1, rel=1e-10)  # Theorem 3's type II is that optimum


def test_h_star_partial_task_bound_is_valid_and_says_local():
    task = Task.random(2, 2, 3, 3, seed=0)
    lam, d = 0.05, 3
    res = optimum(task, lam=lam, network="h*", d=d, n_starts=2)
    assert res.status == "local" and not res.certified and res.grad_norm <= 1e-9
    others = [minimize_true_risk(task, d=d, lam=lam, layernorm=True, seed=s)[2].R for s in (5, 6, 7)]
    assert res.lower_bound <= min(others) and res.lower_bound <= res.R
    assert 0 < res.gap <= 1e-2 * res.R
