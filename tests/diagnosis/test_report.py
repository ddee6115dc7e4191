"""fctheory.diagnosis.report: a Diagnosis as JSON, a frame, PNG figures (legend off the data) and a markdown report."""

from __future__ import annotations

import json

import numpy as np

import fctheory as fc
from fctheory.diagnosis import diagnose
from fctheory.diagnosis.report import scatter_figure
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


def test_pca_scatter_legend_lies_outside_the_axes_and_inside_the_figure():
    t = np.linspace(0, 2 * np.pi, 13)[:-1]
    pts = np.column_stack([np.cos(t), np.sin(t)])  # collapse: points all around the circle
    fig = scatter_figure(pts, np.arange(12) % 3, 3, "PCA", radius=1.0, radius_label="Theorem 1: ‖w‖ = 1")
    fig.canvas.draw()
    ax = fig.axes[0]
    leg = ax.get_legend().get_window_extent()
    box = ax.get_window_extent()
    assert leg.x0 >= box.x1  # right of the axes: no data point can sit under it
    assert leg.x1 <= fig.bbox.x1 and leg.y0 >= fig.bbox.y0  # and not cut off by the figure's edge
