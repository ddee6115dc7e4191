"""fctheory.io.runs: run directories (save_run / load_run) and single weights files read as runs."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from fctheory import FCTheoryError, Task
from fctheory.io import RunFiles, load_run, load_task, save_run
from fctheory.io.checkpoint import save_checkpoint
from fctheory.io.checkpoint import HISTORY_KEYS


@pytest.fixture
def run_parts():
    task = Task.random(3, 2, 2, 5, mu="zipf", seed=2)
    rng = np.random.default_rng(1)
    d = 3
    return task, rng.standard_normal((d, task.n_w)), rng.standard_normal((task.K, task.L * d))


def test_run_directory_round_trips(tmp_path, run_parts):
    task, W, U = run_parts
    out = save_run(tmp_path / "run", task, W, U, {"lam_W": 0.01, "layernorm": True})
    rf = load_run(out)
    assert isinstance(rf, RunFiles) and rf.source == "run-dir"
    assert np.array_equal(rf.W, W) and np.array_equal(rf.U, U)
    assert np.array_equal(rf.task.Z, task.Z) and np.array_equal(rf.task.mu, task.mu)
    assert rf.config == {"format": "fctheory-run", "version": 1, "lam_W": 0.01, "layernorm": True}


def test_run_directory_task_json_is_a_task_file(tmp_path, run_parts):
    task, W, U = run_parts
    out = save_run(tmp_path / "run", task, W, U, {})
    assert isinstance(out, str) and np.array_equal(load_task(tmp_path / "run" / "task.json").Z, task.Z)


def test_npz_with_Z_and_mu_gives_the_task(tmp_path, run_parts):
    task, W, U = run_parts
    np.savez(tmp_path / "w.npz", W=W, U=U, Z=task.Z, mu=task.mu)
    rf = load_run(tmp_path / "w.npz")
    assert rf.source == "npz" and rf.task.n_c == 3 and np.array_equal(rf.task.mu, task.mu)


def test_npz_without_Z_has_no_task(tmp_path, run_parts):
    _, W, U = run_parts
    np.savez(tmp_path / "w.npz", W=W, U=U)
    rf = load_run(tmp_path / "w.npz")
    assert rf.task is None and rf.config == {}


def _checkpoint(path, task, W, U, config):
    history = {k: np.zeros(0) for k in HISTORY_KEYS}
    return save_checkpoint(path, task, config, W.T, U, history, 0, 0.0)


def test_checkpoint_gives_task_and_configuration(tmp_path, run_parts):
    task, W, U = run_parts
    config = {"lam_U": 0.2, "d": W.shape[0], "dtype": "float64", "epochs": 3}
    p = _checkpoint(str(tmp_path / "c.ckpt.npz"), task, W, U, config)
    rf = load_run(p)
    assert rf.source == "checkpoint" and rf.config == config
    assert np.array_equal(rf.task.Z, task.Z) and np.array_equal(rf.W, W)


def test_damaged_checkpoint_configuration_is_refused_naming_path(tmp_path, run_parts):
    task, W, U = run_parts
    p = str(tmp_path / "c.ckpt.npz")
    _checkpoint(p, task, W, U, {"d": W.shape[0], "dtype": "float64", "epochs": 3})
    with np.load(p) as z:
        arrays = dict(z)
    arrays["config"] = np.array("{not json")
    np.savez(p, **arrays)  # same layout and header, configuration damaged
    with pytest.raises(FCTheoryError, match="^path.*invalid configuration"):
        load_run(p)


def test_checkpoint_whose_weights_disagree_with_its_configuration_is_refused(tmp_path, run_parts):
    task, W, U = run_parts
    p = _checkpoint(str(tmp_path / "c.ckpt.npz"), task, W, U, {"d": W.shape[0] + 1, "dtype": "float64", "epochs": 3})
    with pytest.raises(FCTheoryError, match="^path"):
        load_run(p)


def test_weights_that_do_not_fit_the_recorded_task_are_refused(tmp_path, run_parts):
    task, W, U = run_parts
    np.savez(tmp_path / "w.npz", W=W, U=U[:-1], Z=task.Z, mu=task.mu)
    with pytest.raises(FCTheoryError, match="^U.*recorded task"):
        load_run(tmp_path / "w.npz")


def test_folder_without_weights_is_refused(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(FCTheoryError, match="^path.*without weights.npz"):
        load_run(tmp_path / "empty")


def test_missing_path_is_refused_naming_path(tmp_path):
    with pytest.raises(FCTheoryError, match="^path.*does not exist"):
        load_run(tmp_path / "nope")


@pytest.mark.parametrize("bad, name", [("W", "W"), ("U", "U")])
def test_save_run_refuses_shapes_that_do_not_fit_the_task(tmp_path, run_parts, bad, name):
    task, W, U = run_parts
    W, U = (W[:, :-1], U) if bad == "W" else (W, U[:, :-1])
    with pytest.raises(FCTheoryError, match=f"^{name}"):
        save_run(tmp_path / "run", task, W, U, {})


@pytest.mark.parametrize("old", ["fctheory.diagnosis", "fctheory.diagnosis.files"])
@pytest.mark.parametrize("name", ["load_run", "save_run", "RunFiles"])
def test_old_paths_are_the_same_objects(old, name):
    assert getattr(importlib.import_module(old), name) is getattr(importlib.import_module("fctheory.io"), name)
