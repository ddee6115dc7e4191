"""fctheory.diagnose: exact/Monte-Carlo risk, gradient, theorem verdicts, collapse distances, outputs."""

from __future__ import annotations

import math

import numpy as np
import pytest

import fctheory as fc
from fctheory.diagnosis import applicable_theorem, diagnose, monte_carlo_risk
from fctheory.risk import true_risk_bruteforce

LAM = 0.02


def _brute(task, W, U, lam_W, lam_U, layernorm=False):
    """Independent oracle: plain enumeration of R0 and its gradient, penalties added by hand."""
    r = true_risk_bruteforce(task, W, U, 0.0, layernorm=layernorm, grad=True)
    R = r.R0 + 0.5 * (lam_W * np.sum(W * W) + lam_U * np.sum(U * U))
    gW = np.asarray(r.grad_W) + lam_W * W
    gU = np.asarray(r.grad_U) + lam_U * U
    return R, r.R0, math.sqrt(np.sum(gW**2) + np.sum(gU**2))


@pytest.mark.parametrize("kind", ["I", "II", "III"])
def test_collapse_configurations_have_zero_distance_and_bruteforce_risk(kind):
    if kind == "I":
        task = fc.Task.full(3, 2, 2)
        W, U = fc.type1_configuration(task, d=4, lam=LAM, seed=1)
        lam_W, ln = LAM, False
    elif kind == "II":
        task = fc.Task.full(3, 2, 2, mu="zipf")
        W, U = fc.type2_configuration(task, d=4, lam=LAM, seed=1)
        lam_W, ln = 0.0, True
    else:
        task = fc.Task.full(3, 3, 2, mu="zipf")
        W, U = fc.type3_configuration(task, d=3, lam=LAM, seed=1)
        lam_W, ln = LAM, False
    D = diagnose(task, W, U, lam_W=lam_W, lam_U=LAM, layernorm=ln)
    assert D.method == "exact"
    assert D.distances[kind] < 1e-12
    R, R0, g = _brute(task, W, U, lam_W, LAM, ln)
    assert D.R == pytest.approx(R, rel=1e-12)
    assert D.R0 == pytest.approx(R0, rel=1e-12)
    assert D.grad_norm == pytest.approx(g, rel=1e-8, abs=1e-12)


def test_theorem1_optimum_from_minimize_is_a_matching_critical_point():
    task = fc.Task.full(3, 2, 2)
    W, U, res = fc.minimize_true_risk(task, d=4, lam=LAM, seed=0)
    D = diagnose(task, W, U, lam_W=LAM, lam_U=LAM)
    assert D.theory.theorem == "Theorem 1" and D.theory.applies
    assert D.critical and D.matches_theorem, D.verdict
    assert D.R == pytest.approx(float(fc.predict_type1(n_c=3, n_w=6, L=2, K=9, lam=LAM).risk), rel=1e-10)


def test_theorem3_optimum_from_minimize_is_a_matching_critical_point():
    task = fc.Task.full(3, 2, 2, mu="zipf")
    W, U, res = fc.minimize_true_risk(task, d=4, lam=LAM, layernorm=True, seed=0)
    D = diagnose(task, W, U, lam_W=0.0, lam_U=LAM, layernorm=True, eps=0.0)
    assert D.theory.theorem == "Theorem 3" and D.theory.applies
    assert D.critical and D.matches_theorem, D.verdict


def test_theorem2_type3_point_is_critical_and_matches():
    task = fc.Task.full(3, 3, 2, mu="zipf")
    W, U = fc.type3_configuration(task, d=3, lam=LAM, seed=0)
    D = diagnose(task, W, U, lam_W=LAM, lam_U=LAM)
    assert D.theory.theorem == "Theorem 2" and D.theory.applies
    assert D.critical and D.matches_theorem, D.verdict
    np.testing.assert_allclose(D.W_norm_by_rank, D.theory.predicted["w_norm_by_rank"], rtol=1e-12)


def test_type1_point_is_not_critical_for_zipf_words():
    # Theorem 2's remark: type-I collapse is never critical when the frequencies are not uniform
    task = fc.Task.full(3, 3, 2, mu="zipf")
    W, U = fc.type1_configuration(task, d=3, lam=LAM, seed=0)
    D = diagnose(task, W, U, lam_W=LAM, lam_U=LAM)
    assert D.critical is False and D.grad_rel > 1e-3


def test_unequal_weight_decays_reduce_exactly_to_their_geometric_mean():
    # W = aW', U = U'/a with a = (λ_U/λ_W)^(1/4) maps the λ = √(λ_W λ_U) optimum to the (λ_W, λ_U) one
    task = fc.Task.full(3, 2, 2)
    lam_W, lam_U = 0.04, 0.01
    lam = math.sqrt(lam_W * lam_U)
    a = (lam_U / lam_W) ** 0.25
    W, U = fc.type1_configuration(task, d=4, lam=lam, seed=0)
    D = diagnose(task, a * W, U / a, lam_W=lam_W, lam_U=lam_U)
    R, _, g = _brute(task, a * W, U / a, lam_W, lam_U)
    assert g < 1e-12  # independent check that the rescaled point is critical
    assert D.critical and D.matches_theorem, D.verdict
    assert D.R == pytest.approx(R, rel=1e-12)
    assert D.theory.predicted["w_norm"] == pytest.approx(np.linalg.norm(a * W, axis=0).mean(), rel=1e-12)


@pytest.mark.parametrize(
    "setting, fragment",
    [
        (dict(task=fc.Task.random(3, 2, 2, 5, seed=0), lam_W=LAM, lam_U=LAM), "Assumption A cannot hold"),
        (dict(task=fc.Task.random(3, 2, 2, 5, mu="zipf", seed=0), lam_W=LAM, lam_U=LAM), "no theorem covers h"),
        (dict(task=fc.Task.full(3, 2, 2, mu="zipf"), lam_W=5.0, lam_U=5.0), "violates condition (9)"),
        (dict(task=fc.Task.full(3, 2, 2), lam_W=LAM, lam_U=LAM, layernorm=True), "does not penalise W"),
        (dict(task=fc.Task.full(3, 2, 2), lam_W=0.0, lam_U=LAM), "no minimiser"),
        (dict(task=fc.Task.full(4, 2, 2), lam_W=LAM, lam_U=LAM, d=2), "no equiangular frame"),
    ],
)
def test_theory_reports_why_a_theorem_does_not_apply(setting, fragment):
    setting = dict(setting)  # the parametrized dict is shared between runs of the same process: never mutate it
    d = setting.pop("d", 4)
    v = applicable_theorem(setting.pop("task"), d=d, lam_W=setting.pop("lam_W"), lam_U=setting.pop("lam_U"), **setting)
    assert not v.applies
    assert any(fragment in r for r in v.reasons), v.reasons


def test_assumption_diagnostics_count_violations_below_full():
    task = fc.Task.random(3, 2, 2, 5, seed=0)
    v = applicable_theorem(task, d=4, lam_W=LAM, lam_U=LAM)
    assert v.assumption_A["holds"] is False
    assert v.assumption_A["n_violations"] == len(fc.check_assumption_A(task).violations) > 0
    assert v.assumption_B["holds"] == fc.check_assumption_B(task, sdp=False).holds


def _random_weights(task, d, seed, scale=1.0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((d, task.n_w)) * scale, rng.standard_normal((task.K, task.L * d)) * scale


def test_monte_carlo_is_unbiased_for_the_risk_and_gradient():
    task = fc.Task.full(2, 3, 2, mu=[0.5, 0.3, 0.2])
    W, U = _random_weights(task, 3, 0)
    R, _, g = _brute(task, W, U, LAM, LAM)
    ests = [monte_carlo_risk(task, W, U, lam_W=LAM, lam_U=LAM, n_samples=200, seed=s) for s in range(30)]
    Rm = np.array([e.R for e in ests])
    se = Rm.std(ddof=1) / math.sqrt(len(Rm))
    assert abs(Rm.mean() - R) < 4 * se
    g2 = np.array([e.grad_norm_sq for e in ests])
    assert abs(g2.mean() - g * g) < 4 * g2.std(ddof=1) / math.sqrt(len(g2))


def _coverage(seeds, confidence):
    task = fc.Task.full(2, 3, 2, mu=[0.5, 0.3, 0.2])
    W, U = _random_weights(task, 3, 1)
    R = _brute(task, W, U, LAM, LAM)[0]
    hits = 0
    for s in seeds:
        lo, hi = monte_carlo_risk(
            task, W, U, lam_W=LAM, lam_U=LAM, n_samples=200, seed=s, confidence=confidence, grad=False
        ).ci
        hits += lo <= R <= hi
    return hits


def test_monte_carlo_interval_covers_exact_risk_fast():
    # 99% intervals: P(at most 18 of 20 cover) = 1.7% if the level is right; require >= 95% coverage
    assert _coverage(range(20), 0.99) >= 19


@pytest.mark.slow
def test_monte_carlo_interval_covers_exact_risk_100_seeds():
    # 99% intervals, >= 95 of 100: a correct level fails this with probability 0.03%
    assert _coverage(range(100, 200), 0.99) >= 95
    # and the nominal 95% level: Bin(100, 0.95) < 89 has probability 0.4%
    assert _coverage(range(200, 300), 0.95) >= 89


def test_auto_switches_to_monte_carlo_over_the_time_limit_and_reports_exact_cost():
    task = fc.Task.full(2, 3, 3)
    W, U = _random_weights(task, 3, 2, 0.3)
    D = diagnose(task, W, U, lam_W=LAM, lam_U=LAM, max_seconds=1e-9, n_samples=50, seed=1)
    E = diagnose(task, W, U, lam_W=LAM, lam_U=LAM)
    assert D.method == "monte-carlo" and E.method == "exact"
    assert D.R_ci[0] <= D.R <= D.R_ci[1]
    assert D.exact_cost["pairs"] == task.K * task.s_c**task.L * task.K
    assert D.critical is None


def test_astronomical_task_reports_log_cost_and_refuses_exact():
    task = fc.Task.random(3, 400, 15, 20, seed=0)
    W, U = _random_weights(task, 3, 3, 1e-3)
    D = diagnose(task, W, U, lam_W=1e-3, lam_U=1e-3, n_samples=4, assumptions=False, distances=False)
    assert D.method == "monte-carlo" and D.exact_cost["seconds"] is None
    assert D.exact_cost["log10_pairs"] == pytest.approx(2 * math.log10(20) + 15 * math.log10(400))
    with pytest.raises(fc.FCTheoryError, match="method"):
        diagnose(task, W, U, lam_W=1e-3, lam_U=1e-3, method="exact", assumptions=False, distances=False)


@pytest.mark.parametrize("bad, name", [("W", "W"), ("U", "U")])
def test_shapes_that_do_not_fit_the_task_are_refused_naming_the_parameter(bad, name):
    task = fc.Task.full(3, 2, 2)
    W, U = _random_weights(task, 4, 0)
    if bad == "W":
        W = W[:, :-1]
    else:
        U = U[:-1]
    with pytest.raises(fc.FCTheoryError, match=f"^{name}="):
        diagnose(task, W, U, lam_W=LAM, lam_U=LAM)
