"""The checkpoint file format (fctheory/io/checkpoint.py), below the trainer: configurations travel as dicts."""

from __future__ import annotations

import ast
import inspect

import numpy as np
import pytest

import fctheory as fc
from fctheory.io import checkpoint as ck

TASK = fc.Task.random(3, 3, 3, 6, seed=0)
CONFIG = {"d": 4, "dtype": "float32", "epochs": 3, "seed": 7}


def _history(n):
    return {
        "epoch": np.arange(1, n + 1),
        "loss": np.full(n, 1.5),
        "train_acc": np.full(n, 0.5),
        "test_acc": np.full(n, np.nan),
        "test_loss": np.full(n, np.nan),
        "time": np.linspace(0.1, 0.2, n),
    }


def test_a_checkpoint_with_a_dict_configuration_reads_back_what_was_written(tmp_path):
    rng = np.random.default_rng(0)
    E = rng.standard_normal((TASK.n_w, 4)).astype(np.float32)
    U = rng.standard_normal((TASK.K, TASK.L * 4)).astype(np.float32)
    path = ck.save_checkpoint(tmp_path / "c.npz", TASK, CONFIG, E, U, _history(2), 2, 0.25)
    got = ck.read_checkpoint(path)
    assert got["config"] == CONFIG and got["epochs_done"] == 2 and got["wall_time"] == 0.25
    assert np.array_equal(got["E"], E) and np.array_equal(got["U"], U) and got["E"].dtype == np.float32
    assert np.array_equal(got["task"].Z, TASK.Z) and np.array_equal(got["history"]["time"], _history(2)["time"])


def test_a_checkpoint_whose_weights_do_not_match_its_configuration_is_refused(tmp_path):
    E = np.zeros((TASK.n_w, 5), np.float32)  # d = 5, the configuration says 4
    U = np.zeros((TASK.K, TASK.L * 4), np.float32)
    path = ck.save_checkpoint(tmp_path / "c.npz", TASK, CONFIG, E, U, _history(1), 1, 0.0)
    with pytest.raises(fc.FCTheoryError, match=r"ckpt=.*E has shape \(9, 5\), expected \(9, 4\)"):
        ck.read_checkpoint(path, "ckpt")


def test_the_checkpoint_format_imports_nothing_from_the_trainer():
    tree = ast.parse(inspect.getsource(ck))
    modules = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    modules += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert modules and not [m for m in modules if "trainer" in m]
