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


def test_lemma_b_closed_form_is_theorem_1_on_full_tasks():
    """On the full set the Lemma-B closed form is Theorem 1: t* = tau and min H_Z = H(tau), lambda0_Z = lambda0."""
    task, lam = Task.full(3, 2, 2), 0.01
    t, HZ, lam0 = oc.lemma_b_scale(task, lam)
    tau = fctheory.tau(n_c=3, n_w=task.n_w, L=2, K=task.K, lam=lam)
    assert t == pytest.approx(tau, rel=1e-12)
    assert HZ == pytest.approx(fctheory.H(tau, n_c=3, n_w=task.n_w, L=2, K=task.K, lam=lam), rel=1e-13)
    assert lam0 == pytest.approx(fctheory.lambda_trivial(n_c=3, n_w=task.n_w, L=2, K=task.K), rel=1e-13)


def test_lemma_b_closed_form_differs_from_theorem_1_on_partial_sets():
    task = Task(2, 2, 3, np.array([[0, 0, 0], [0, 1, 1], [1, 0, 1], [1, 1, 0]]), "uniform")
    lam = 0.5 * oc.lemma_b_scale(task, 1.0)[2]
    assert abs(oc.lemma_b_scale(task, lam)[0] - oc.lemma_b_scale(task, lam, K_only=True)[0]) > 1e-2
    assert oc.check_lemma_b_optimal_scale(quick=True)
    with pytest.raises(CheckFailed):
        oc.check_lemma_b_optimal_scale(mutant=True, quick=True)
