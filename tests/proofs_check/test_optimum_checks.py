"""proofs_check.optimum_checks: the certified optimum against the independent enumeration and 50-digit H(tau)."""

import numpy as np
import pytest

import fctheory
from fctheory import Task
from proofs_check import CheckFailed, _risk
from proofs_check import optimum_checks as oc


def test_checks_pass_and_their_mutants_are_caught():
    for check in (oc.check_optimum_certificate, oc.check_optimum_interval):
        assert check(quick=True)
        with pytest.raises(CheckFailed):
            check(mutant=True, quick=True)


def test_exact_dual_is_a_lower_bound_at_any_point_and_tight_only_at_the_optimum():
    task, lam = Task.random(3, 2, 2, 5, seed=1), 0.02
    S = _risk.enumerate_sentences(task)
    rng = np.random.default_rng(0)
    res = fctheory.risk.optimum(task, lam=lam)
    assert res.R - oc.exact_dual(task, res.X, lam, S) <= 1e-10 * res.R
    for scale in (0.1, 1.0, 4.0):
        X = scale * rng.normal(size=res.X.shape)
        d = oc.exact_dual(task, X, lam, S)
        assert d <= res.R  # weak duality from a random point
        g = _risk.f_value(S, X) + lam * np.linalg.svd(X, compute_uv=False).sum()
        assert g - d > 1e-4  # a random point is visibly not optimal
