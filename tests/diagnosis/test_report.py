"""The diagnose figures: the PCA scatter keeps its legend off the data."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from fctheory.diagnosis.report import scatter_figure  # noqa: E402


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
