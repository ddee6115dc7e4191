"""fctheory.sweep.plots: phase-diagram and collapse plots are written; an unknown kind is refused."""

import os

import pytest

import fctheory as fc
from fctheory.sweep import plot
from tests.sweep.test_core import _train_spec

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")


def test_phase_diagram_plots_are_written(tmp_path):
    t = fc.sweep(
        {
            "target": "tau",
            "workers": 1,
            "fixed": {"n_c": 3, "s_c": 4, "L": 3},
            "grid": {"lam": [1e-3, 1e-2, 1e-1, 1.0], "K": [2, 9, 27]},
        }
    )
    assert os.path.getsize(plot(t, str(tmp_path / "tau.png"))) > 5000
    spec = _train_spec(tmp_path / "c", grid={"n_spl": [2, 4], "layernorm": [False, True]}, seeds=[0])
    del spec["fixed"]["n_spl"]
    c = fc.sweep(spec)
    assert os.path.getsize(plot(c, str(tmp_path / "c.png"), kind="collapse")) > 5000
    with pytest.raises(fc.FCTheoryError, match="kind="):
        plot(t, str(tmp_path / "x.png"), kind="pie")
