"""proofs_check.training_sets: the measures of a trained network against the certified optimum of its training
objective, on a tiny setting whose optimum and networks are known exactly."""

from __future__ import annotations

import json

import numpy as np
import pytest

import fctheory as fc
from proofs_check import training_sets as T

TINY = T.Setting("tiny", lambda: fc.Task.random(3, 2, 3, 6, seed=1, mu="zipf"), 4, 6, 0.1, 10, 0.1, "a test")


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    """The tiny setting's optimum, solved once and cached as the report caches it."""
    cache = str(tmp_path_factory.mktemp("runs") / "tiny.optimum.npz")
    task = TINY.make_task()
    S, y = fc.io.training_sentences(task, n_spl=TINY.n_spl, seed=0)
    opt = T._optimum(task, S, y, cache, 1e-10)
    return task, S, y, opt, cache


def test_compare_measures_against_numpy():
    task = TINY.make_task()
    rng = np.random.default_rng(0)
    Wp, Up = rng.normal(size=(4, task.n_w)), rng.normal(size=(task.K, task.L * 4))
    W, U = Wp * 1.1, Up * 0.9
    m = T.compare(task, Wp, Up, W, U)
    wp, wt = np.linalg.norm(Wp, axis=0), np.linalg.norm(W, axis=0)
    assert m["w_mean_err"] == pytest.approx(abs(wp.mean() - wt.mean()) / wt.mean(), rel=1e-12)
    assert m["w_spread_err"] == pytest.approx(abs(wp.std() - wt.std()) / wt.std(), rel=1e-12)
    assert m["w_r2"] == pytest.approx(1 - np.sum((wp - wt) ** 2) / np.sum((wt - wt.mean()) ** 2), rel=1e-12)
    assert m["sigma_err_max"] == pytest.approx(0.1 / 1.1, rel=1e-10)  # every σ of W scaled by 1.1
    assert m["u_mean_err"] == pytest.approx(0.1 / 0.9, rel=1e-10)


def test_the_optimum_itself_is_predicted_exactly_and_certified(solved):
    task, S, y, opt, cache = solved
    row = T.setting_row(TINY, opt["W"], opt["U"], source="optimum", cache=cache, tol=1e-9)
    assert row["certified"] and row["rel_gap_opt"] <= 1e-9
    assert abs(row["rel_excess_trained"]) <= 1e-12 and row["cert_rel_gap_trained"] <= 1e-9
    assert row["w_mean_err"] <= 1e-12 and row["w_r2"] == pytest.approx(1.0, abs=1e-12)
    assert row["sigma_err_max"] <= 1e-10 and row["ce_pred"] == pytest.approx(row["ce_trained"], rel=1e-12)


def test_a_network_short_of_the_optimum_is_reported_with_its_excess_and_a_sound_gap(solved):
    task, S, y, opt, cache = solved
    W, U = 0.8 * opt["W"], 0.8 * opt["U"]
    row = T.setting_row(TINY, W, U, source="scaled", cache=cache, polish=True)
    assert row["excess_trained"] > 0 and row["cert_gap_trained"] >= row["excess_trained"]
    assert row["w_mean_err"] == pytest.approx(0.25, rel=1e-9)  # ‖w‖ 0.8× the optimum's: the prediction is 1/0.8
    # trained on until certified: the polish reaches the optimum, and the prediction then holds to rounding
    assert row["polished"]["rel_excess"] <= 1e-9 and row["polished"]["w_mean_err"] <= 1e-4


def test_report_is_strict_json_and_markdown(solved, tmp_path):
    task, S, y, opt, cache = solved
    row = T.setting_row(TINY, opt["W"], opt["U"], source="optimum", cache=cache)
    row["memorisation_err_mean"] = float("nan")  # an undefined measure
    md = T.write_report([row], str(tmp_path / "ts"), "python -m proofs_check.training_sets --test")
    text = open(md, encoding="utf-8").read()
    assert "| tiny |" in text and "python -m proofs_check.training_sets --test" in text
    data = json.loads((tmp_path / "ts" / "summary.json").read_text(encoding="utf-8"), parse_constant=pytest.fail)
    assert data["rows"][0]["memorisation_err_mean"] is None and data["lam"] == T.LAM


def test_a_stored_sample_average_is_what_the_dispatcher_answers(tmp_path, monkeypatch):
    """--store-saa writes the entry fctheory.predict reads for that task and λ (and only for them)."""
    import fctheory.predictions.partial as fpp

    path = tmp_path / "sample_averages.json"
    monkeypatch.setattr(fpp, "STORED_SAMPLE_AVERAGES", path)
    task = fc.Task.random(3, 2, 2, 4, seed=0, mu="zipf")
    entry = T.store_sample_average(task, 0.02, n_spl=10, replicates=2, seed=1, path=str(path))
    p = fpp.sample_average_prediction(task, 0.02, fpp.stored_sample_average(task, 0.02))
    assert "stored" in p.provenance and p.w_norms == pytest.approx(entry["w_norms"], rel=1e-15)
    assert fpp.stored_sample_average(task, 0.03) is None
    assert json.loads(path.read_text(encoding="utf-8"), parse_constant=pytest.fail)["entries"]


def test_a_network_narrower_than_rank_x_star_is_compared_with_the_width_d_minimiser(solved):
    """rank X* > d: the prediction is the width-d minimiser from X*'s top d directions, whose R̂ is at or above
    the convex minimum; a width-d network at that minimiser is predicted exactly."""
    task, S, y, opt, cache = solved
    assert opt["rank"] >= 2
    W1, U1 = T._truncate(task, opt["W"], opt["U"], 1)
    W1, U1, _ = fc.finite_sample.minimize_empirical_risk(task, S, y, 1, T.LAM, W0=W1, U0=U1, gtol=1e-9)
    row = T.setting_row(TINY, W1, U1, source="width 1", cache=cache)
    wl = row["width_limited"]
    assert wl["R"] >= row["R_opt"] * (1 - 1e-12) and row["excess_trained"] > 0
    assert wl["w_mean_err"] <= 1e-6 and wl["sigma_err_max"] <= 1e-6
