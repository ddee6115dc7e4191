"""The call's options of ``fctheory.sweep`` reach the run: the executor is built from the spec with the
call's executor, workers, scheduler address and output folder, and given the call's client; the output
folder records the spec that ran."""

import json

import pytest

import fctheory as fc
from fctheory.sweep import core

pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

TAU = {"target": "tau", "fixed": {"n_c": 3, "n_w": 6, "L": 2, "K": 9}, "grid": {"lam": [0.1, 0.2]}, "workers": 1}


class _Stop(Exception):
    """Raised by the stand-in executor factory: the test needs only its arguments."""


@pytest.fixture
def seen(monkeypatch):
    got = {}

    def make_executor(spec, client=None):
        got.update(spec=spec, client=client)
        raise _Stop

    monkeypatch.setattr(core, "make_executor", make_executor)
    return got


def test_executor_workers_address_output_and_client_reach_the_executor(seen, tmp_path):
    client = object()
    out = str(tmp_path / "o")
    with pytest.raises(_Stop):
        fc.sweep(TAU, executor="dask", workers=3, address="tcp://127.0.0.1:1", client=client, output=out)
    s = seen["spec"]
    assert (s.executor, s.workers, s.address, s.output) == ("dask", 3, "tcp://127.0.0.1:1", out)
    assert seen["client"] is client


def test_executor_alone_selects_dask(seen):
    with pytest.raises(_Stop):
        fc.sweep(TAU, executor="dask")
    s = seen["spec"]
    assert (s.executor, s.workers, s.address) == ("dask", 1, None)


def test_without_call_options_the_spec_is_used(seen):
    with pytest.raises(_Stop):
        fc.sweep(TAU)
    s = seen["spec"]
    assert (s.executor, s.workers, s.address, s.output) == ("local", 1, None, None)
    assert seen["client"] is None


def test_the_output_folder_records_the_spec_that_ran(tmp_path):
    out = tmp_path / "o"
    fc.sweep(TAU, output=str(out), progress=False)
    rec = json.loads((out / "spec.json").read_text())
    assert rec["target"] == "tau" and rec["grid"] == {"lam": [0.1, 0.2]} and rec["workers"] == 1
    assert rec["fixed"] == TAU["fixed"]
