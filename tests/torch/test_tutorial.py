"""The digits tutorial (docs/tutorials/digits.py) runs end to end at a reduced size."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch", reason="needs torch: pip install 'fctheory[torch]'")
pytest.importorskip("sklearn", reason="needs sklearn: pip install 'fctheory[torch-all]'")
pytest.importorskip("matplotlib")
pytest.importorskip("pyarrow")

SCRIPT = Path(__file__).resolve().parents[2] / "docs" / "tutorials" / "digits.py"


def _tutorial():
    spec = importlib.util.spec_from_file_location("digits_tutorial", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


EPOCHS = 30


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("digits")
    return _tutorial().main(epochs=EPOCHS, out=str(out), n_train=30, batch=32, progress=False), out


def test_tutorial_runs_at_reduced_size(run):
    res, out = run
    df = res["table"]
    assert df["epoch"].tolist() == list(range(EPOCHS))
    assert df["nc1"].iloc[-1] < 0.5 * df["nc1"].iloc[0]  # collapse has started
    assert df["train_loss"].iloc[-1] < df["train_loss"].iloc[0]
    for name in ("history.parquet", "nc_history.png", "report.md", "grams.png", "metrics.png"):
        assert (out / name).is_file(), name
    D = res["diagnosis"]
    assert D.N == 300 and D.K == 10 and D.applicability.applies
    assert isinstance(D.verdict, str) and D.verdict


def test_nc1_decreases_over_the_terminal_phase(run):
    """From the first epoch with zero training error on (the terminal phase of training, which it then never
    leaves) NC1 falls at every epoch and ends well below its value at the start of the phase."""
    df = run[0]["table"]
    perfect = (df["train_accuracy"] == 1.0).to_numpy()
    start = int(np.argmax(perfect))
    assert perfect[start] and perfect[start:].all() and start <= EPOCHS - 10, df["train_accuracy"].tolist()
    nc1 = df["nc1"].to_numpy()[start:]
    assert np.all(np.diff(nc1) < 0), nc1
    assert nc1[-1] < 0.8 * nc1[0]
