"""proofs_check.partial: the dispatcher against the enumerated certified optimum on partial tasks (the report)."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

import fctheory as fc
from fctheory.predictions import EXACT, LEMMA_B
from proofs_check import partial as pt

GENERIC = fc.Task.random(3, 2, 2, 5, seed=0)
LEMMA_B_TASK = fc.Task(2, 2, 3, np.array([[0, 0, 0], [0, 1, 1], [1, 0, 1], [1, 1, 0]]), "uniform")


def test_generic_row_dispatcher_matches_the_enumerated_optimum():
    r = pt.partial_row(GENERIC, 0.5)
    assert r.provenance == EXACT and r.rel_gap <= 1e-10
    assert r.err_dispatch < 1e-8 and r.r2_dispatch == pytest.approx(1.0, abs=1e-12)
    assert r.err_theorem1 > 0.01 and r.r2_theorem1 < 0.5  # Theorem 1's constant norm misses the spread
    assert r.R_dispatch == pytest.approx(r.R_opt, rel=1e-12)


def test_lemma_b_row_uses_the_closed_form():
    r = pt.partial_row(LEMMA_B_TASK, 0.3, kind="lemmaB")
    assert r.provenance == LEMMA_B and r.err_dispatch < 1e-8 and np.isnan(r.r2_dispatch)  # equal norms: no R²


def test_a_wrong_dispatcher_shows_in_the_row(monkeypatch):
    """The report can fail: a dispatcher returning Theorem 1's K-only numbers is caught by the error column."""
    real = fc.predict

    def theorem1_only(task, *, lam, network="h", d=None):
        p = real(task, lam=lam, network=network, d=d)
        c = fc.predict_type1(n_c=task.n_c, n_w=task.n_w, L=task.L, K=task.K, lam=lam).c
        return type(p)(**{**p.to_dict(), "w_norms": np.full(task.n_w, c)}) if hasattr(p, "w_norms") else p

    monkeypatch.setattr(fc, "predict", theorem1_only)
    r = pt.partial_row(GENERIC, 0.5)
    assert r.err_dispatch == pytest.approx(r.err_theorem1, rel=1e-12) and r.err_dispatch > 0.01


def test_quick_report_writes_every_row(tmp_path):
    out = tmp_path / "partial-tasks"
    res = pt.write_report(str(out), quick=True, command="python -m proofs_check.partial --quick")
    with open(out / "rows.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == res["rows"] > 10 and res["worst_error"] < 1e-8
    summary = json.loads((out / "summary.json").read_text())
    assert summary["paper"][0]["name"] == "k50" and summary["paper"][0]["certified"]
    k50 = summary["paper"][0]
    assert k50["R_mc"] == pytest.approx(k50["R"], rel=1e-12)  # collapsed weights: every sentence scores the same
    assert all(r["rel_gap"] <= 1e-10 for r in summary["nonuniform"])
    text = (tmp_path / "partial-tasks.md").read_text()
    assert "## Result (uniform μ)" in text and "| k50 |" in text
    # the presets against their trained networks: k50 (finite samples on its own sentences) and fig4c (h*)
    pre = {r["name"]: r for r in summary["presets"]}
    assert set(pre) == {"k50", "fig4c"} and "| fig4c |" in text
    assert pre["k50"]["err_w"] < 0.005 < pre["k50"]["theory_err_w"]
    assert pre["fig4c"]["err_u"] < pre["fig4c"]["theory_err_u"] and pre["fig4c"]["rel_gap"] <= 1e-10


def test_presets_table_flags_a_prediction_worse_than_the_theorem():
    """The report's sentence under the presets table names every mean where the theorem is closer."""
    row = dict(name="x", n_c=3, s_c=4, L=2, K=5, mu="uniform", network="h", n_spl=5, method="m", seconds=1.0,
               w=(1.0, 0.1), u=(2.0, 0.1), ce=None, recorded=dict(w=(1.1, 0.1), u=(2.0, 0.1), ce=0.1),
               err_w=0.1, theory_err_w=0.05, err_u=0.0, theory_err_u=0.01)  # fmt: skip
    md, note = pt._presets_md([row])
    assert "| x |" in md and note == "The prediction is not closer than the theorem on: x (‖w‖)."
    row.update(err_w=0.01)
    assert pt._presets_md([row])[1].startswith("The prediction is closer")
