"""The digits tutorial (docs/tutorials/digits.py) runs end to end at a reduced size."""

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("sklearn")
pytest.importorskip("matplotlib")
pytest.importorskip("pyarrow")

SCRIPT = Path(__file__).resolve().parents[2] / "docs" / "tutorials" / "digits.py"


def _tutorial():
    spec = importlib.util.spec_from_file_location("digits_tutorial", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_tutorial_runs_at_reduced_size(tmp_path):
    res = _tutorial().main(epochs=10, out=str(tmp_path), n_train=30, batch=32, progress=False)
    df = res["table"]
    assert df["epoch"].tolist() == list(range(10))
    assert df["nc1"].iloc[-1] < 0.5 * df["nc1"].iloc[0]  # collapse has started
    assert df["train_loss"].iloc[-1] < df["train_loss"].iloc[0]
    for name in ("history.parquet", "nc_history.png", "report.md", "grams.png", "metrics.png"):
        assert (tmp_path / name).is_file(), name
    D = res["diagnosis"]
    assert D.N == 300 and D.K == 10 and D.applicability.applies
    assert isinstance(D.verdict, str) and D.verdict
