"""fctheory.diagnosis.report: a Diagnosis as JSON, a frame, PNG figures and a markdown report linking them."""
from __future__ import annotations

import json

import fctheory as fc
from fctheory.diagnosis import diagnose
from tests.diagnosis.test_core import LAM, _random_weights


def test_outputs_json_frame_figures_and_report(tmp_path):
    task = fc.Task.full(3, 2, 2)
    W, U = _random_weights(task, 4, 5, 0.5)
    D = diagnose(task, W, U, lam_W=LAM, lam_U=LAM)
    d = json.loads(json.dumps(D.to_dict(), allow_nan=False))
    assert d["task"]["n_c"] == 3 and d["R"] == D.R and "numpy" in d["versions"]
    f = D.to_frame()
    assert list(f.columns) == ["quantity", "observed", "predicted", "relative_difference"]
    assert f.loc[f.quantity == "true risk R", "observed"].item() == D.R
    path = D.report(tmp_path)
    text = (tmp_path / "report.md").read_text()
    assert path.endswith("report.md") and "Theorem 1" in text
    for name in ("pca_W", "pca_U", "norm_by_rank", "u_norms", "spectra"):
        png = tmp_path / f"{name}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
        assert f"({name}.png)" in text
    assert json.loads((tmp_path / "diagnosis.json").read_text())["R"] == D.R
