"""The command line's error contract: user errors exit 2, runtime failures 1, Ctrl-C 130 —
always on one line, the traceback only with ``--debug`` (before or after the command)."""

import subprocess
import sys

import numpy as np
import pytest

import fctheory.risk
from fctheory import Task
from fctheory.cli import main
from fctheory.configurations import type1_configuration


@pytest.fixture
def weights(tmp_path):
    task = Task.full(3, 2, 2)
    W, U = type1_configuration(task, d=4, lam=0.01, seed=0)
    p = tmp_path / "w.npz"
    np.savez(p, W=W, U=U)
    return p


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def _one_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


# ----------------------------------------------------------------------------- user errors: exit 2, one line
@pytest.mark.parametrize(
    "argv,name",
    [
        (["risk", "{missing}"], "path"),
        (["risk", "{damaged}"], "damaged"),
        (["risk", "{p}", "--mu", "abc"], "--mu"),
        (["risk", "{p}", "--mu", "0.5,0.6"], "--mu"),
        (["risk", "{p}", "--nc", "4"], "--nc"),
        (["risk", "{p}", "--lam", "-1"], "--lam"),
        (["risk", "{p}", "--eps=-1e-5"], "--eps"),
        (["risk", "{p}", "--L", "5"], "U"),
        (["risk", "{p}", "--max-seconds", "1e-12"], "max_seconds"),
    ],
)
def test_risk_user_errors_exit_2_on_one_line(weights, tmp_path, capsys, argv, name):
    damaged = tmp_path / "damaged.npz"
    damaged.write_bytes(weights.read_bytes()[:100])
    argv = [a.format(p=weights, missing=tmp_path / "none.npz", damaged=damaged) for a in argv]
    code, _, err = run(capsys, *argv)
    line = _one_line(err)
    assert code == 2 and line.startswith("fctheory risk: error:") and name in line


@pytest.mark.parametrize(
    "opt,value",
    [
        ("--lam", "nan"),
        ("--lam", "abc"),
        ("--nc", "x"),
        ("--nc", "1"),
        ("--K", "0"),
        ("--task-seed", "-1"),
        ("--max-seconds", "0"),
        ("--eps", "inf"),
    ],
)
def test_risk_option_values_refused_by_argparse_on_one_error_line(weights, capsys, opt, value):
    with pytest.raises(SystemExit) as exc:
        main(["risk", str(weights), opt, value])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    errors = [ln for ln in err.splitlines() if "error:" in ln]
    assert len(errors) == 1 and f"argument {opt}" in errors[0] and "Traceback" not in err


def test_weights_file_with_bad_latent_variables_exits_2(tmp_path, capsys):
    task = Task.full(3, 2, 2)
    W, U = type1_configuration(task, d=4, lam=0.01, seed=0)
    p = tmp_path / "z.npz"
    np.savez(p, W=W, U=U, Z=np.full((9, 2), np.nan))
    code, _, err = run(capsys, "risk", p)
    assert code == 2 and "Z" in _one_line(err)


# ----------------------------------------------------------------------------- runtime failures: exit 1 / 130
@pytest.mark.parametrize(
    "exc,code,text",
    [
        (OSError("disk on fire"), 1, "OSError: disk on fire"),
        (MemoryError(), 1, "MemoryError"),
        (RuntimeError("boom"), 1, "RuntimeError: boom"),
        (KeyboardInterrupt(), 130, "interrupted"),
    ],
)
def test_runtime_failure_exits_1_on_one_line(weights, capsys, monkeypatch, exc, code, text):
    def explode(*a, **k):
        raise exc

    monkeypatch.setattr(fctheory.risk, "evaluate_risk", explode)
    got, _, err = run(capsys, "risk", weights)
    line = _one_line(err)
    assert got == code and line.startswith("fctheory risk:") and text in line


@pytest.mark.parametrize(
    "module,func,argv",
    [
        ("predict", "run", ["predict", "--paper"]),
        ("check", "_run", ["check"]),
        ("train", "run_train", ["train", "--preset", "fig3", "--quick"]),
        ("train", "run_reproduce", ["reproduce", "--quick"]),
    ],
)
def test_runtime_failure_of_every_command_exits_1(capsys, monkeypatch, module, func, argv):
    import importlib

    def explode(args):
        raise OSError(f"no space left while running {args.command}")

    monkeypatch.setattr(importlib.import_module(f"fctheory.cli.{module}"), func, explode)
    code, _, err = run(capsys, *argv)
    assert code == 1 and f"OSError: no space left while running {argv[0]}" in _one_line(err)


# ----------------------------------------------------------------------------- --debug
@pytest.mark.parametrize("where", ["before", "after"])
def test_debug_flag_shows_the_traceback_and_keeps_the_status(weights, tmp_path, capsys, where):
    argv = ["risk", str(tmp_path / "none.npz")]
    argv = ["--debug"] + argv if where == "before" else argv + ["--debug"]
    code, _, err = run(capsys, *argv)
    assert code == 2 and "Traceback (most recent call last)" in err
    assert err.strip().splitlines()[-1].startswith("fctheory risk: error:")


def test_debug_flag_on_a_runtime_failure(weights, capsys, monkeypatch):
    def explode(*a, **k):
        raise OSError("disk on fire")

    monkeypatch.setattr(fctheory.risk, "evaluate_risk", explode)
    code, _, err = run(capsys, "risk", weights, "--debug")
    assert code == 1 and "Traceback" in err and "explode" in err


# ----------------------------------------------------------------------------- other commands and the entry point
def test_train_with_an_unwritable_out_folder_exits_2_before_training(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = run(capsys, "train", "--preset", "fig3", "--quick", "--no-progress", "--out", blocker)
    assert code == 2 and "out" in _one_line(err)


def test_predict_user_error_exits_2_on_one_line(capsys):
    code, _, err = run(capsys, "predict", "type1", "--nc", "3", "--nw", "7")
    assert code == 2 and "n_w" in _one_line(err)


def test_console_entry_point_exit_codes_and_no_traceback(tmp_path):
    missing = str(tmp_path / "none.npz")
    res = subprocess.run([sys.executable, "-m", "fctheory", "risk", missing], capture_output=True, text=True)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    res = subprocess.run([sys.executable, "-m", "fctheory", "--debug", "risk", missing], capture_output=True, text=True)
    assert res.returncode == 2 and "Traceback" in res.stderr
