"""The progress bar of ``fctheory.sweep``: over every point of the spec, those already finished counted as
done, labelled with the sweep's name (or its target), shown only when asked and when there is work."""

import io
import sys
from dataclasses import replace

import pytest

import fctheory as fc
from fctheory.sweep.core import _progress_bar
from fctheory.sweep.spec import load_spec

pytest.importorskip("tqdm")
pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

TAU = {"target": "tau", "fixed": {"n_c": 3, "n_w": 6, "L": 2, "K": 9}, "workers": 1}


@pytest.fixture
def spec():
    return load_spec({**TAU, "grid": {"lam": [0.1]}})


def test_bar_counts_every_point_with_the_finished_ones_done(spec):
    bar = _progress_bar(True, spec, 10, 4)
    try:
        assert (bar.total, bar.n, bar.unit, bar.desc) == (10, 6, "point", "tau")
        assert bar.dynamic_ncols  # follows the terminal's width
    finally:
        bar.close()


def test_bar_is_labelled_with_the_sweep_name(spec):
    bar = _progress_bar(True, replace(spec, name="scan"), 3, 3)
    try:
        assert (bar.total, bar.n, bar.desc) == (3, 0, "scan")
    finally:
        bar.close()


def test_no_bar_unless_asked_and_work_is_left(spec):
    assert _progress_bar(False, spec, 10, 4) is None
    assert _progress_bar(True, spec, 10, 0) is None


def test_sweep_bar_advances_by_the_rows_of_each_unit(tmp_path, capsys):
    lams = [0.01 * (i + 1) for i in range(5)]
    fc.sweep({**TAU, "grid": {"lam": lams[:2]}, "chunk": 1, "output": str(tmp_path / "o")}, progress=False)
    capsys.readouterr()
    t = fc.sweep({**TAU, "grid": {"lam": lams}, "chunk": 2, "output": str(tmp_path / "o")}, progress=True)
    err = capsys.readouterr().err
    assert len(t) == 5 and t.attrs["ran"] == 3
    assert "tau:" in err and "2/5" in err and "5/5" in err and "6/5" not in err


def test_sweep_shows_no_bar_when_stderr_is_not_a_terminal(capsys):
    fc.sweep({**TAU, "grid": {"lam": [0.1]}})  # under pytest stderr is captured, not a terminal
    assert "point" not in capsys.readouterr().err


class _Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize(("progress", "shown"), [(None, True), (False, False), (True, True)])
def test_sweep_on_a_terminal_shows_the_bar_unless_told_not_to(monkeypatch, progress, shown):
    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    fc.sweep({**TAU, "grid": {"lam": [0.1, 0.2]}}, progress=progress)
    assert ("2/2" in term.getvalue()) is shown
