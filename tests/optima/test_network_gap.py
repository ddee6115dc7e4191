"""fctheory.optima.network_gap (fctheory.certify): the certificate of given weights (a trained network) against the global optimum.

Soundness, tested where the truth is known: the lower bound never exceeds the certified optimum (weak duality),
and the gap is at least the true excess R(W, U) − min R of the weights given — at perturbed optima and at networks
stopped early by minimize_empirical_risk. These tests fail for an unsound bound (s = 1 always; a spectral norm
taken too small: see docs/testing.md for the planted mutants)."""

from __future__ import annotations

import numpy as np
import pytest

import fctheory as fc
from fctheory import FCTheoryError
from fctheory.optima import certify, optimum
from fctheory.risk.empirical import minimize_empirical_risk


@pytest.fixture(scope="module")
def problem():
    task = fc.Task.random(3, 3, 3, 8, seed=0, mu="zipf")
    S, y = task.sample(3, seed=100)
    lam = 0.01
    opt = optimum(task, lam=lam, data=(S, y), tol=1e-12)
    assert opt.certified
    return task, S, y, lam, opt


def _check_sound(c, R_min_upper, R_min_lower):
    """lower_bound ≤ min R ≤ R_min_upper; gap ≥ R(W, U) − min R ≥ R − R_min_upper... from the certified optimum's
    bracket [R_min_lower, R_min_upper] of min R."""
    assert c.lower_bound <= R_min_upper
    assert c.gap >= c.R - R_min_upper  # the true excess is R − min R ≥ R − R_min_upper
    assert c.lower_bound_network <= R_min_upper and c.gap >= 0
    assert c.R >= R_min_lower


def test_perturbed_optima(problem):
    task, S, y, lam, opt = problem
    rng = np.random.default_rng(0)
    cases = [(t * opt.W, t * opt.U) for t in (0.5, 0.9, 0.97, 0.99, 1.01, 1.1, 2.0)]
    cases += [(opt.W + e * rng.normal(size=opt.W.shape), opt.U + e * rng.normal(size=opt.U.shape)) for e in (1e-3, 0.1)]
    cases += [(opt.W, 1.05 * opt.U), (0.95 * opt.W, opt.U)]  # unbalanced
    for W, U in cases:
        c = certify(task, W, U, lam=lam, data=(S, y), solve=False)
        _check_sound(c, opt.R, opt.lower_bound)
        assert c.gap > 0 and c.lower_bound == c.lower_bound_network
        assert c.gap == c.R - c.lower_bound and c.rel_gap == c.gap / abs(c.R)  # relative to R, not to the bound
    # with the solve, the bound is the optimum's, tight to the optimum's own gap
    c = certify(task, 0.9 * opt.W, 0.9 * opt.U, lam=lam, data=(S, y))
    _check_sound(c, opt.R, opt.lower_bound)
    assert c.lower_bound == pytest.approx(opt.lower_bound, rel=1e-9) and c.R_optimum == pytest.approx(opt.R, rel=1e-9)
    assert c.gap == c.R - c.lower_bound and c.rel_gap == c.gap / abs(c.R)


def test_networks_stopped_early(problem):
    task, S, y, lam, opt = problem
    for d, maxiter, seed in ((2, 3, 0), (4, 10, 1), (task.n_w + 1, 30, 2), (3, 200, 3)):
        W, U, info = minimize_empirical_risk(task, S, y, d=d, lam=lam, seed=seed, maxiter=maxiter)
        c = certify(task, W, U, lam=lam, data=(S, y))
        _check_sound(c, opt.R, opt.lower_bound)
        assert c.R == pytest.approx(info["R"], rel=1e-12) and c.width == d
        assert c.gap >= c.R - opt.R and c.lower_bound <= opt.R


def test_the_optimum_itself_is_certified(problem):
    task, S, y, lam, opt = problem
    c = certify(task, opt.W, opt.U, lam=lam, data=(S, y), solve=False)
    assert c.rel_gap <= 1e-9 and "global minimiser" in c.message and c.rank == opt.width
    assert c.rho <= 1 + 1e-8 and abs(c.align) <= 1e-8


def test_population_objective_where_the_engine_enumerates():
    task, lam = fc.Task.random(3, 2, 2, 5, seed=0, mu=np.array([0.7, 0.3])), 0.02
    opt = optimum(task, lam=lam)
    W, U = fc.type1_configuration(task, d=3, lam=lam)
    c = certify(task, W, U, lam=lam)
    assert c.objective == "population" and "true risk (5)" in c.message
    _check_sound(c, opt.R, opt.lower_bound)
    assert c.R == pytest.approx(fc.evaluate_risk(task, W, U, lam).R, rel=1e-12)
    c0 = certify(task, opt.W, opt.U, lam=lam, solve=False)
    assert c0.rel_gap <= 1e-9


def test_interval_certificate_of_a_network(problem):
    pytest.importorskip("flint")
    task, S, y, lam, opt = problem
    W, U, _ = minimize_empirical_risk(task, S, y, d=3, lam=lam, seed=0, maxiter=20)
    c = certify(task, W, U, lam=lam, data=(S, y), precision="interval")
    iv = c.interval
    assert iv["R"][0] <= c.R <= iv["R"][1] and iv["lower_bound"] <= opt.R and iv["gap"] >= c.R - opt.R


def test_bad_input(problem):
    task, S, y, lam, opt = problem
    with pytest.raises(FCTheoryError, match="U"):
        certify(task, opt.W, opt.U[:, :-1], lam=lam, data=(S, y))
    with pytest.raises(FCTheoryError, match="data"):
        certify(task, opt.W, opt.U, lam=lam, data=(S,))
