"""proofs_check.empirical_checks: the training-set optimum and certify against an independent implementation."""

import numpy as np
import pytest

import fctheory
from fctheory import Task
from fctheory.risk.empirical import empirical_risk
from proofs_check import CheckFailed
from proofs_check import empirical_checks as ec


def test_checks_pass_and_their_mutants_are_caught():
    for check in (ec.check_empirical_certificate, ec.check_empirical_certify, ec.check_empirical_interval):
        assert check(quick=True)
        with pytest.raises(CheckFailed):
            check(mutant=True, quick=True)


def test_independent_risk_and_dual_agree_with_the_library_and_bound_the_minimum():
    task = Task.random(3, 2, 2, 5, seed=1, mu="zipf")
    S, y = task.sample(3, seed=2)
    lam = 0.02
    rng = np.random.default_rng(0)
    W, U = rng.normal(size=(3, task.n_w)), rng.normal(size=(task.K, task.L * 3))
    R, f, G, X = ec.sample_risk(task, S, y, W, U, lam)
    assert R == pytest.approx(empirical_risk(task, W, U, S, y, lam, grad=False)[0], rel=1e-13)
    res = fctheory.optimum(task, lam=lam, data=(S, y))
    assert ec.sample_dual(task, S, y, X, G, lam) <= res.R  # weak duality from a random point
    Ro, _, Go, Xo = ec.sample_risk(task, S, y, res.W, res.U, lam)
    assert Ro - ec.sample_dual(task, S, y, Xo, Go, lam) <= 1e-10 * Ro  # tight at the optimum
