"""fctheory.predictions.applicable_theorem: the one dispatcher (theorem, prediction, failed hypotheses).

The reduction of unequal weight decays is checked against an independent oracle: a direct L-BFGS
minimisation of the exact risk with the penalty (λ_W/2)‖W‖² + (λ_U/2)‖U‖² written out here.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize

import fctheory as fc
from fctheory.predictions import TheoryVerdict, applicable_theorem, predict
from fctheory.predictions.verdict import equal_decay_reduction


def _risk_unequal(task, W, U, lam_W, lam_U):
    r = fc.evaluate_risk(task, W, U, 0.0, grad=True)
    R = r.R0 + 0.5 * (lam_W * np.sum(W * W) + lam_U * np.sum(U * U))
    return R, np.asarray(r.grad_W) + lam_W * W, np.asarray(r.grad_U) + lam_U * U


@pytest.mark.slow  # ~5 s of L-BFGS; the criticality test below is the fast check of the same reduction
def test_unequal_decays_reduce_to_the_direct_minimiser_of_the_exact_risk():
    task, d, lam_W, lam_U = fc.Task.full(3, 2, 2), 4, 0.01, 0.04
    nW = d * task.n_w

    def f(x):
        R, gW, gU = _risk_unequal(task, x[:nW].reshape(d, -1), x[nW:].reshape(task.K, -1), lam_W, lam_U)
        return R, np.concatenate([gW.ravel(), gU.ravel()])

    x0 = np.random.default_rng(0).standard_normal(nW + task.K * task.L * d) * 0.3
    res = minimize(f, x0, jac=True, method="L-BFGS-B", options=dict(gtol=1e-11, ftol=1e-15, maxiter=2000))
    W, U = res.x[:nW].reshape(d, -1), res.x[nW:].reshape(task.K, -1)
    p = applicable_theorem(task, d=d, lam_W=lam_W, lam_U=lam_U).predicted
    assert res.fun == pytest.approx(p["R"], rel=1e-12)
    np.testing.assert_allclose(np.linalg.norm(W, axis=0), p["w_norm"], rtol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(U.reshape(-1, d), axis=1), p["u_norm"], rtol=1e-6)


@pytest.mark.parametrize("lam_W, lam_U", [(0.01, 0.04), (0.05, 0.002), (1e-3, 1e-3)])
def test_rescaled_type1_point_is_critical_for_the_unequal_risk(lam_W, lam_U):
    task = fc.Task.full(3, 2, 2)
    v = applicable_theorem(task, d=4, lam_W=lam_W, lam_U=lam_U)
    W1, U1 = fc.type1_configuration(task, d=4, lam=v.lam, seed=0)
    W, U = v.scale * W1, U1 / v.scale
    R, gW, gU = _risk_unequal(task, W, U, lam_W, lam_U)
    assert R == pytest.approx(v.predicted["R"], rel=1e-13)
    scale = np.linalg.norm(lam_W * W) + np.linalg.norm(lam_U * U)
    assert math.hypot(np.linalg.norm(gW), np.linalg.norm(gU)) <= 1e-12 * scale
    np.testing.assert_allclose(np.linalg.norm(W, axis=0), v.predicted["w_norm"], rtol=1e-13)


def test_equal_decay_reduction_is_exact_for_equal_decays_and_finite_at_extremes():
    assert equal_decay_reduction(0.3, 0.3) == (0.3, 1.0)
    lam, a = equal_decay_reduction(1e-300, 1e300)
    assert lam == pytest.approx(1.0, rel=1e-13) and a == pytest.approx(1e150, rel=1e-13)


@pytest.mark.parametrize(
    "task, network, theorem",
    [
        (fc.Task.full(3, 2, 2), "h", "Theorem 1"),
        (fc.Task.full(3, 3, 2, mu="zipf"), "h", "Theorem 2"),
        (fc.Task.full(3, 3, 2, mu="zipf"), "h*", "Theorem 3"),
        (fc.Task.random(3, 2, 2, 5, seed=0), "h", "Theorem 1"),
        (fc.Task.random(3, 2, 2, 5, seed=0), "h*", "Theorem 3"),
    ],
)
def test_predict_returns_the_verdicts_prediction(task, network, theorem):
    ln = network == "h*"
    v = applicable_theorem(task, d=4, lam_W=0.0 if ln else 0.02, lam_U=0.02, layernorm=ln)
    assert (
        v.theorem == theorem and v.configuration == {"Theorem 1": "I", "Theorem 2": "III", "Theorem 3": "II"}[theorem]
    )
    assert predict(task, lam=0.02, network=network, d=4).to_dict() == v.prediction.to_dict()


def test_predict_refuses_where_the_verdict_has_no_prediction():
    zipf_partial = fc.Task.random(3, 2, 2, 5, mu="zipf", seed=0)
    with fc.budget(max_seconds=1e-9):  # the certified optimum by enumeration does not fit: no prediction
        v = applicable_theorem(zipf_partial, d=4, lam_W=0.02, lam_U=0.02)
        assert (
            v.theorem is None
            and v.prediction is None
            and "nor its sample-average approximation fits the budget" in v.reasons[0]
        )
        with pytest.raises(fc.FCTheoryError, match="no theorem covers"):
            predict(zipf_partial, lam=0.02)
    full_zipf = fc.Task.full(3, 2, 2, mu="zipf")
    v = applicable_theorem(full_zipf, d=4, lam_W=5.0, lam_U=5.0)
    assert v.theorem == "Theorem 2" and not v.applies and set(v.predicted) == {"lambda_bound"}
    with pytest.raises(fc.FCTheoryError, match="^lam"):
        predict(full_zipf, lam=5.0)


def test_h_star_with_too_small_d_reports_instead_of_raising():
    v = applicable_theorem(fc.Task.full(4, 2, 2), d=3, lam_W=0.0, lam_U=0.02, layernorm=True)
    assert v.theorem is None and any("mean-zero equiangular frame" in r for r in v.reasons)


def test_the_old_import_paths_name_the_same_objects():
    import importlib

    from fctheory import diagnosis, trainer
    from fctheory.risk import montecarlo

    core = importlib.import_module("fctheory.diagnosis.core")
    old_mc = importlib.import_module("fctheory.diagnosis.montecarlo")
    measure = importlib.import_module("fctheory.trainer.measure")
    geometry = importlib.import_module("fctheory.metrics.geometry")
    assert diagnosis.applicable_theorem is core.applicable_theorem is applicable_theorem
    assert diagnosis.TheoryVerdict is core.TheoryVerdict is TheoryVerdict
    assert trainer.theory_prediction is measure.theory_prediction
    assert old_mc.monte_carlo_risk is montecarlo.monte_carlo_risk is diagnosis.monte_carlo_risk
    assert measure.pca_singular_values is geometry.pca_singular_values
    assert measure.concept_cosines is geometry.concept_cosines
