"""``fctheory train`` with the whole parameter set: a run directory that ``fctheory diagnose`` reads directly."""

from __future__ import annotations

import json
import shlex

import numpy as np
import pytest

import fctheory as fc
from fctheory.cli import main
from fctheory.diagnosis import load_run, load_task

TINY = [
    "--nc",
    "3",
    "--sc",
    "2",
    "--L",
    "2",
    "--d",
    "4",
    "--n-spl",
    "10",
    "--epochs",
    "4",
    "--lr",
    "0.5",
    "--batch",
    "10",
    "--lam-W",
    "0.01",
    "--lam-U",
    "0.02",
    "--backend",
    "numpy",
    "--dtype",
    "float64",
    "--init-scale",
    "0.1",
    "--no-progress",
]


def test_custom_run_directory_round_trips_into_diagnose(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["train", *TINY, "--out", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["parameters"]["lam_U"] == 0.02 and doc["results"]["epochs_done"] == 4
    for f in ("weights.npz", "task.json", "config.json", "summary.json", "checkpoint.npz"):
        assert (out / f).exists()
    rf = load_run(out)
    # the weights are the trainer's: same as an in-process run with the same arguments
    run = fc.train(
        fc.Task.full(3, 2, 2),
        n_spl=10,
        d=4,
        epochs=4,
        lr=0.5,
        batch=10,
        lam_W=0.01,
        lam_U=0.02,
        backend="numpy",
        dtype="float64",
        init_scale=0.1,
        measure=False,
    )
    np.testing.assert_array_equal(rf.W, run.W)
    np.testing.assert_array_equal(rf.U, run.U)
    assert main(["diagnose", str(out), "--json"]) == 0  # task, λ_W, λ_U from the run directory
    d = json.loads(capsys.readouterr().out)["results"]
    assert d["lam_W"] == 0.01 and d["lam_U"] == 0.02 and d["source"]["kind"] == "run-dir"
    assert d["R"] == pytest.approx(fc.true_risk_bruteforce(rf.task, rf.W, rf.U, 0.0).R0 + d["penalty"], rel=1e-12)


def test_random_latent_variables_are_saved_with_the_run(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["train", *TINY, "--K", "5", "--task-seed", "7", "--mu", "zipf", "--out", str(out)]) == 0
    task = load_task(out / "task.json")
    assert task.K == 5 and np.array_equal(task.Z, fc.Task.random(3, 2, 2, 5, mu="zipf", seed=7).Z)
    # the command to copy is one line, however long the temporary path
    assert f"diagnose it with: fctheory diagnose {shlex.quote(str(out))}" in capsys.readouterr().out.splitlines()


def test_task_file_drives_training(tmp_path, capsys):
    task = fc.Task.random(3, 2, 3, 6, seed=2)
    fc.save_task(task, tmp_path / "t.json")
    argv = [
        "train",
        "--task",
        str(tmp_path / "t.json"),
        "--d",
        "3",
        "--n-spl",
        "2",
        "--epochs",
        "1",
        "--backend",
        "numpy",
        "--no-progress",
        "--json",
    ]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["task"]["K"] == 6


def test_rerun_resumes_from_the_checkpoint(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["train", *TINY, "--out", str(out)]) == 0
    W4 = load_run(out).W
    i = TINY.index("--epochs")
    argv = TINY[: i + 1] + ["6"] + TINY[i + 2 :]
    assert main(["train", *argv, "--out", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["results"]["epochs_done"] == 6
    assert not np.array_equal(load_run(out).W, W4)


@pytest.mark.parametrize(
    "argv, match",
    [
        (["--preset", "fig3", "--nc", "3"], "--preset"),
        (["--nc", "3", "--sc", "2", "--L", "2", "--lr", "-1"], "--lr"),
        (["--nc", "3", "--sc", "2", "--L", "2", "--K", "10"], "--K"),
        (["--nc", "3", "--sc", "2"], "--L"),
        (["--sc", "2", "--L", "2"], "--nc"),
        (["--nc", "3", "--sc", "2", "--L", "2", "--quick"], "--quick"),
    ],
)
def test_user_errors_exit_2(argv, match, capsys):
    assert main(["train", *argv, "--backend", "numpy", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert match in err and len(err.splitlines()) == 1
