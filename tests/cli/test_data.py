"""``fctheory data``: the trainer's training sentences of a preset, a run or a task, written to a sentence file.

Oracle: the trainer's own data (:func:`fctheory.trainer.data.make_data` and a run's ``keep_data``), drawn by its
code path, against the file the command writes.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import fctheory as fc
from fctheory.cli import main
from fctheory.io import load_sentences
from fctheory.trainer.data import make_data
from fctheory.trainer.presets import get_preset


def _run(capsys, *argv):
    assert main(["data", *map(str, argv), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_preset_training_set_is_the_trainers(tmp_path, capsys):
    doc = _run(capsys, "--preset", "fig4b", "--quick", "--out", tmp_path / "s.npz")
    p = get_preset("fig4b", quick=True)
    ref = make_data(p.task(), n_spl=p.n_spl, seed=p.seed)
    sf = load_sentences(tmp_path / "s.npz")
    assert np.array_equal(sf.S, ref.X_train) and np.array_equal(sf.y, ref.y_train)
    assert np.array_equal(sf.task.Z, p.task().Z) and np.allclose(sf.task.mu, p.task().mu)
    assert (sf.n_spl, sf.seed) == (p.n_spl, p.seed) and doc["results"]["N"] == p.K * p.n_spl


def test_a_run_directory_training_set_is_the_one_it_trained_on(tmp_path, capsys):
    task = fc.Task.random(3, 2, 3, 5, seed=1)
    run = fc.train(task, n_spl=3, d=4, epochs=1, seed=11, backend="numpy", keep_data=True, n_test=0)
    fc.io.save_run(tmp_path / "run", task, run.W, run.U, run.config.to_dict())
    _run(capsys, tmp_path / "run", "--out", tmp_path / "s.npz")
    sf = load_sentences(tmp_path / "s.npz", task=task)
    assert np.array_equal(sf.S, run.data.X_train) and np.array_equal(sf.y, run.data.y_train)
    assert (sf.n_spl, sf.seed) == (3, 11)


def test_task_options_with_n_spl_and_seed(tmp_path, capsys):
    doc = _run(capsys, "--nc", 2, "--sc", 3, "--L", 2, "--K", 3, "--n-spl", 2, "--seed", 5, "--out", tmp_path / "s.npz")
    task = fc.Task.random(2, 3, 2, 3, seed=0)
    assert np.array_equal(doc["task"]["Z"], task.Z)
    assert np.array_equal(load_sentences(tmp_path / "s.npz").S, make_data(task, n_spl=2, seed=5).X_train)


@pytest.mark.parametrize(
    "argv, name",
    [
        (["--preset", "fig3", "--out", "{tmp}/s.txt"], "--out="),
        (["--nc", "2", "--sc", "2", "--L", "2", "--out", "{tmp}/s.npz"], "--n-spl="),
        (["{tmp}/nothing", "--out", "{tmp}/s.npz"], "RUN="),
        (["--preset", "fig3", "--nc", "2", "--out", "{tmp}/s.npz"], "--preset="),
        (["--quick", "--nc", "2", "--out", "{tmp}/s.npz"], "--quick="),
    ],
)
def test_refusals_exit_2_with_one_line(tmp_path, capsys, argv, name):
    assert main(["data", *[a.replace("{tmp}", str(tmp_path)) for a in argv]]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("fctheory data: error: ") and name in err, err
