"""The dispatcher on partial tasks (K < n_c^L): every prediction says where its numbers come from."""

from __future__ import annotations

import json

import numpy as np
import pytest

import fctheory as fc
from fctheory.predictions import APPROXIMATION, COLLAPSED_STAR, EXACT, LEMMA_B, applicable_theorem
from fctheory.optima import optimum
from fctheory.predictions import predict_exact

LEMMA_B_TASK = fc.Task(2, 2, 3, np.array([[0, 0, 0], [0, 1, 1], [1, 0, 1], [1, 1, 0]]), "uniform")
GENERIC = fc.Task.random(3, 2, 2, 5, seed=0)
ZIPF = fc.Task.random(3, 2, 2, 5, mu="zipf", seed=0)
LAM = 0.02


def test_full_task_keeps_theorem_1():
    task = fc.Task.full(3, 2, 2)
    p = fc.predict(task, lam=LAM)
    assert isinstance(p, fc.TypeIPrediction)
    assert predict_exact(task, lam=LAM).to_dict() == p.to_dict()
    assert applicable_theorem(task, d=4, lam_W=LAM, lam_U=LAM).provenance == ""


def test_lemma_b_partial_task_gets_the_closed_form():
    p = fc.predict(LEMMA_B_TASK, lam=LAM)
    b = fc.lemma_b_scale(LEMMA_B_TASK, lam=LAM)
    assert isinstance(p, fc.PartialPrediction) and p.provenance == LEMMA_B
    assert p.tau == b.t_star and p.risk == b.risk and p.lambda_bound == b.lambda0
    np.testing.assert_array_equal(p.w_norms, np.full(LEMMA_B_TASK.n_w, b.word_norm))
    v = applicable_theorem(LEMMA_B_TASK, d=4, lam_W=LAM, lam_U=LAM)
    assert v.provenance == LEMMA_B and v.predicted["w_norm"] == b.word_norm and v.predicted["R"] == b.risk
    json.dumps(p.to_dict())


def test_generic_partial_task_gets_the_certified_collapsed_optimum():
    """Uniform μ off Lemma B: the dispatcher's numbers are the certified optimum's (the engine's enumeration
    agrees), with Theorem 1's K-only word norm beside them."""
    p = fc.predict(GENERIC, lam=LAM)
    p1 = fc.predict_type1(n_c=3, n_w=6, L=2, K=5, lam=LAM)
    res = optimum(GENERIC, lam=LAM, symmetry=False)
    assert p.provenance == EXACT and p.theorem1_c == p1.c and 0 <= p.gap <= 1e-10 * p.risk
    np.testing.assert_allclose(p.w_norms, np.linalg.norm(res.W, axis=0), rtol=1e-6)
    assert p.risk == pytest.approx(res.R, rel=1e-12)
    v = applicable_theorem(GENERIC, d=4, lam_W=LAM, lam_U=LAM)
    assert v.provenance == EXACT and v.predicted["R"] == p.risk and v.predicted["w_norm"] == p.c
    assert v.predicted["cos_within"] == 1.0 and -1.0 <= v.predicted["cos_across"] < 0


def test_generic_partial_task_over_the_budget_is_labelled_an_approximation():
    with fc.budget(max_bytes=1000):  # a new Task object: the dispatcher keeps the optima it has computed per task
        p = fc.predict(fc.Task.random(3, 2, 2, 5, seed=0), lam=LAM)
    p1 = fc.predict_type1(n_c=3, n_w=6, L=2, K=5, lam=LAM)
    assert p.provenance == APPROXIMATION and p.c == p1.c == p.theorem1_c and p.risk == p1.risk


def test_unequal_decays_scale_the_partial_word_norms():
    v1 = applicable_theorem(LEMMA_B_TASK, d=4, lam_W=LAM, lam_U=LAM)
    v2 = applicable_theorem(LEMMA_B_TASK, d=4, lam_W=LAM / 4, lam_U=LAM * 4)
    assert v2.scale == pytest.approx(
        2.0, rel=1e-15
    )  # a = (lam_U/lam_W)^(1/4) = 16^(1/4); lam = sqrt(lam_W lam_U) = LAM
    assert v2.predicted["w_norm"] == pytest.approx(2 * v1.predicted["w_norm"], rel=1e-12)


@pytest.mark.parametrize("task", [LEMMA_B_TASK, GENERIC, ZIPF], ids=["lemma-B", "generic", "zipf"])
def test_exact_dispatch_gives_the_certified_optimums_word_norms(task):
    p = predict_exact(task, lam=LAM)
    res = optimum(task, lam=LAM)
    assert p.provenance == EXACT and res.certified and p.gap <= 1e-10 * p.risk
    np.testing.assert_allclose(p.w_norms, np.linalg.norm(res.W, axis=0), rtol=1e-6)
    assert p.risk == pytest.approx(res.R, rel=1e-12)
    assert p.norm_W == pytest.approx(p.norm_U, rel=1e-6)  # balanced
    assert p.ce == pytest.approx(p.risk - LAM * p.tau, rel=1e-6)
    json.dumps(p.to_dict())


def test_exact_and_closed_form_agree_on_lemma_b_and_theorem_1_does_not():
    """The closed form is the certified optimum on a Lemma-B partial set; Theorem 1's K-only word norm is not."""
    e, c = predict_exact(LEMMA_B_TASK, lam=LAM), fc.predict(LEMMA_B_TASK, lam=LAM)
    np.testing.assert_allclose(e.w_norms, c.w_norms, rtol=1e-6)
    assert abs(e.theorem1_c - e.c) / e.c > 0.05


def test_exact_dispatch_falls_back_when_the_engine_refuses():
    with fc.budget(max_bytes=1000):
        assert predict_exact(fc.Task.random(3, 2, 2, 5, seed=0), lam=LAM, max_bytes=1).provenance == APPROXIMATION
    with pytest.raises(fc.FCTheoryError, match="no theorem covers.*does not fit the budget"):
        predict_exact(ZIPF, lam=LAM, max_bytes=1)
    with fc.budget(max_seconds=1e-9), pytest.raises(fc.FCTheoryError, match="does not fit the budget"):
        fc.predict(ZIPF, lam=LAM)


def test_non_uniform_partial_task_is_answered_by_its_certified_optimum():
    """fc.predict on K < n_c^L with Zipf words: the enumerated optimum's word norms, which no multi-start local
    minimiser of (5) beats (an independent check of the optimum, not of the dispatcher's copy)."""
    p = fc.predict(ZIPF, lam=LAM)
    assert p.provenance == EXACT and p.gap <= 1e-10 * p.risk and p.theorem1_c is None
    best = min((fc.minimize_true_risk(ZIPF, d=ZIPF.n_w, lam=LAM, seed=s) for s in range(4)), key=lambda r: r[2].R)
    assert p.risk <= best[2].R * (1 + 1e-12)
    np.testing.assert_allclose(p.w_norms, np.linalg.norm(best[0], axis=0), rtol=1e-4)
    v = applicable_theorem(ZIPF, d=4, lam_W=LAM / 4, lam_U=LAM * 4)  # a = 2: W norms doubled
    assert v.theorem is None and v.provenance == EXACT
    assert v.predicted["w_norm"] == pytest.approx(2 * p.c, rel=1e-12)
    np.testing.assert_allclose(v.prediction.w_norms, 2 * p.w_norms, rtol=1e-12)
    by_rank = p.w_norms.reshape(ZIPF.n_c, ZIPF.s_c).mean(axis=0)
    np.testing.assert_allclose(v.predicted["w_norm_by_rank"], 2 * by_rank, rtol=1e-12)


def test_the_dispatchers_collapsed_optimum_is_computed_once_per_task_and_lambda(monkeypatch):
    import fctheory.predictions.partial as pr

    task = fc.Task.random(3, 2, 3, 9, seed=11)
    calls = []
    real = pr.collapsed_optimum

    def counted(t, *, lam):
        calls.append(lam)
        return real(t, lam=lam)

    monkeypatch.setattr(pr, "collapsed_optimum", counted)
    a = fc.predict(task, lam=LAM)
    b = applicable_theorem(task, d=4, lam_W=LAM, lam_U=LAM)
    assert calls == [LAM] and b.predicted["R"] == a.risk
    fc.predict(task, lam=2 * LAM)
    assert calls == [LAM, 2 * LAM]
    with fc.budget(max_bytes=1000):  # a refusal is not remembered: the same task later gets the exact answer
        assert fc.predict(fc.Task.random(3, 2, 3, 9, seed=12), lam=LAM).provenance == APPROXIMATION


# ----------------------------------------------------------------------------- network h* on partial tasks
@pytest.mark.parametrize("mu", ["uniform", "zipf"])
def test_h_star_partial_task_gets_the_best_collapsed_network(mu):
    """h* on a partial set: the dispatcher's numbers are collapsed_optimum_star's (any μ), labelled as such,
    with Theorem 3's K-only c beside them; the verdict's table carries the same R, ‖u‖ and τ."""
    task = fc.Task.random(3, 2, 3, 9, mu=mu, seed=0)
    p = fc.predict(task, lam=LAM, network="h*", d=8)
    ref = fc.collapsed_optimum_star(task, lam=LAM, d=8)
    t3 = fc.predict_type2(n_c=3, L=3, K=9, d=8, lam=LAM, n_w=task.n_w)
    assert isinstance(p, fc.PartialStarPrediction) and p.provenance == COLLAPSED_STAR
    assert p.risk == ref.R and p.c == ref.c and p.theorem3_c == pytest.approx(t3.c, rel=1e-14)
    assert p.risk < t3.risk and p.phi_norm == pytest.approx(np.sqrt(8), rel=1e-15)
    np.testing.assert_array_equal(p.u_norms, ref.u_norms)
    v = applicable_theorem(task, d=8, lam_W=0.0, lam_U=LAM, layernorm=True)
    assert v.provenance == COLLAPSED_STAR and v.predicted["R"] == ref.R and v.predicted["u_norm"] == ref.c
    assert v.predicted["tau"] == ref.tau and any("collapsed_optimum_star" in n for n in v.notes)
    json.dumps(p.to_dict())


def test_h_star_full_task_stays_theorem_3_and_refusal_falls_back_to_it():
    """Full tasks keep Theorem 3's type II (proven there); over the memory budget a partial task gets
    Theorem 3's K-only numbers (a TypeIIPrediction, the verdict's reasons saying 'large-K idealisation')."""
    full = fc.Task.full(3, 1, 3)
    assert isinstance(fc.predict(full, lam=LAM, network="h*", d=8), fc.TypeIIPrediction)
    task = fc.Task.random(3, 2, 3, 9, seed=21)
    with fc.budget(max_bytes=1000):
        p = fc.predict(task, lam=LAM, network="h*", d=8)
    assert isinstance(p, fc.TypeIIPrediction)
    assert p.c == pytest.approx(fc.predict_type2(n_c=3, L=3, K=9, d=8, lam=LAM, n_w=task.n_w).c, rel=1e-15)


def test_h_star_uncertified_collapsed_network_is_not_returned(monkeypatch):
    """A collapsed h* the solver could not certify (here: one iteration) is not passed off as the prediction:
    the dispatcher keeps Theorem 3's numbers, and does not cache the failure as an answer."""
    import fctheory.predictions.partial as pr

    real = pr.collapsed_optimum_star
    monkeypatch.setattr(pr, "collapsed_optimum_star", lambda t, *, lam, d: real(t, lam=lam, d=d, maxiter=1))
    task = fc.Task.random(3, 2, 3, 9, seed=31)
    p = fc.predict(task, lam=LAM, network="h*", d=8)
    assert isinstance(p, fc.TypeIIPrediction)


# ----------------------------------------------------------------------------- beyond enumeration: sample averages
def _no_enumeration(monkeypatch):
    import fctheory.predictions.partial as pr

    monkeypatch.setattr(pr, "_enumerated_or_none", lambda task, lam: None)
    pr._SAMPLED.clear()
    return pr


def test_beyond_enumeration_the_sample_average_answers_with_its_error(monkeypatch):
    pr = _no_enumeration(monkeypatch)
    p = fc.predict(ZIPF, lam=LAM)
    assert p.provenance.startswith(pr.SAMPLE_AVERAGE) and "3 samples of 100 sentences per class" in p.provenance
    exact = optimum(ZIPF, lam=LAM, symmetry=False)
    w = np.linalg.norm(exact.W, axis=0)
    assert p.gap is None and 0 < p.error < 0.2 and p.w_norms_se.shape == (ZIPF.n_w,)
    assert np.max(np.abs(p.w_norms - w) / w) <= p.error  # the stated error covers the true one
    lo, hi = p.risk_bracket
    assert lo <= exact.R <= hi
    v = applicable_theorem(ZIPF, d=4, lam_W=LAM / 4, lam_U=LAM * 4)  # the decay reduction applies as for EXACT
    assert v.theorem is None and v.provenance == p.provenance
    np.testing.assert_allclose(v.prediction.w_norms, 2 * p.w_norms, rtol=1e-12)
    assert "relative error" in v.notes[-1]


def test_a_stored_sample_average_is_used_for_its_task_only(monkeypatch, tmp_path):
    from fctheory.io.tasks import task_fingerprint

    pr = _no_enumeration(monkeypatch)
    entry = dict(
        w_norms=[1.0] * ZIPF.n_w, w_norms_se=[0.01] * ZIPF.n_w, tau=6.0, tau_se=0.1, u_norm_mean=0.5, u_norm_std=0.1,
        norm_U=2.5, R_lower=0.28, R_lower_se=0.001, R_upper=0.29, R_upper_se=0.001, pca_W=[1.0, 0.5],
        pca_U=[1.0, 0.5], cos_across=-0.5, n_spl=7, replicates=3, n_validation=7, certified=True, error=0.05,
        rel_gaps=[1e-9] * 3,
    )  # fmt: skip
    store = tmp_path / "sample_averages.json"
    store.write_text(json.dumps({"entries": {f"{task_fingerprint(ZIPF)}@{LAM!r}": entry}}), encoding="utf-8")
    monkeypatch.setattr(pr, "STORED_SAMPLE_AVERAGES", store)
    monkeypatch.setattr(pr, "sample_average_optimum", lambda *a, **k: pytest.fail("the stored entry was not used"))
    p = fc.predict(ZIPF, lam=LAM)
    assert "7 sentences per class, stored" in p.provenance and p.c == 1.0 and p.error == 0.05
    with pytest.raises(fc.FCTheoryError):  # another λ, another task: not that entry (and nothing else fits)
        with fc.budget(max_seconds=1e-9):
            fc.predict(ZIPF, lam=2 * LAM)


def test_neither_answer_fitting_the_budget_is_said(monkeypatch):
    _no_enumeration(monkeypatch)
    with fc.budget(max_seconds=1e-9):
        v = applicable_theorem(ZIPF, d=4, lam_W=LAM, lam_U=LAM)
        assert v.prediction is None and "sample-average approximation fits the budget" in v.reasons[0]
