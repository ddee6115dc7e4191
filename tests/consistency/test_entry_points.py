"""Every entry point reports the same theorem and the same numbers for one setting.

The library decides which theorem speaks about (task, network, d, λ_W, λ_U) in one place,
:func:`fctheory.predictions.applicable_theorem`. This suite checks, over a grid of tasks (uniform and
Zipf words, full and partial latent sets), weight decays (equal, unequal, an unpenalised W) and both
networks (h, h*), that each way a user meets the theory agrees with it: :func:`fctheory.predict`,
the prediction :func:`fctheory.train` attaches, :func:`fctheory.diagnose`, the ``--json`` output of
``fctheory train`` and ``fctheory diagnose``, a sweep point (``theory`` and ``train`` targets), and
the ``fctheory.testing`` assertion helpers.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import fctheory as fc
from fctheory.cli import main
from fctheory.diagnosis import load_run
from fctheory.predictions import applicable_theorem
from fctheory.sweep.targets import build_task, run_point
from fctheory.testing import TheoryAssertionError, assert_type1_optimal

D = 4
RTOL = 1e-12
TASKS = {  # sweep task parameters (n_c = 3, s_c = 2, L = 2: n_c^L = 9)
    "full-uniform": dict(n_c=3, s_c=2, L=2),
    "full-zipf": dict(n_c=3, s_c=2, L=2, mu="zipf"),
    "partial-uniform": dict(n_c=3, s_c=2, L=2, K=5),
    "partial-zipf": dict(n_c=3, s_c=2, L=2, K=5, mu="zipf"),
}
DECAYS = {"equal": (0.01, 0.01), "unequal": (0.01, 0.04), "W-free": (0.0, 0.02)}
GRID = [(t, dec, ln) for t in TASKS for dec in DECAYS for ln in (False, True)]
NUMBERS = ("R", "R0", "tau", "w_norm", "u_norm", "pca_W", "pca_U", "cos_within", "cos_across")


def _close(a, b, what):
    if a is None or b is None:
        assert a is None and b is None, what
        return
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=RTOL, atol=0, err_msg=what)


def _same_prediction(v, predicted, where):
    """A ``TheoryVerdict.predicted``-shaped dict (from a Diagnosis or JSON) equals the verdict's."""
    for k in NUMBERS:
        if k in v.predicted:
            _close(predicted[k], v.predicted[k], f"{where}: {k}")


def _same_trainer_view(v, p, where):
    """The trainer's ``theory_prediction`` keys (ce, length-3 spectra, r) equal the verdict's numbers."""
    if v.prediction is None and v.theorem is None:
        assert p == {}, where
        return
    assert p["theorem"] == v.theorem and p.get("provenance", "") == v.provenance, where
    if "R" not in v.predicted:
        return
    q = v.predicted
    if v.configuration == "III":
        assert "tau" not in p, where  # no τ in Theorem 2
    else:
        _close(p["tau"], q["tau"], f"{where}: tau")
    for k, key in (
        ("ce", "R0"),
        ("w_norm", "w_norm"),
        ("u_norm", "u_norm"),
        ("cos_within", "cos_within"),
        ("cos_across", "cos_across"),
    ):
        _close(p[k], q[key], f"{where}: {k}")
    n = len(q["pca_W"])
    _close(p["pca_W"][:n], q["pca_W"], f"{where}: pca_W")
    _close(p["pca_U"][:n], q["pca_U"], f"{where}: pca_U")
    if v.configuration == "III" or v.theorem is None:  # one norm per frequency rank: type III, certified optimum
        _close(p["r"], q["w_norm_by_rank"], f"{where}: r")


def _point(task_name, decay, layernorm):
    lam_W, lam_U = DECAYS[decay]
    return dict(
        TASKS[task_name],
        d=D,
        lam_W=lam_W,
        lam_U=lam_U,
        layernorm=layernorm,
        n_spl=2,
        epochs=1,
        batch=6,
        init_scale=0.3,
        lr=0.1,
        seed=0,
        backend="numpy",
    )


@pytest.mark.parametrize("task_name, decay, layernorm", GRID)
def test_library_entry_points_agree(task_name, decay, layernorm):
    p = _point(task_name, decay, layernorm)
    task, lam_W, lam_U = build_task(p), p["lam_W"], p["lam_U"]
    v = applicable_theorem(task, d=D, lam_W=lam_W, lam_U=lam_U, layernorm=layernorm)
    # predict (one decay λ: both decays for h, λ_U with λ_W = 0 for h*)
    if (lam_W == lam_U and not layernorm) or (lam_W == 0 and layernorm):
        net = "h*" if layernorm else "h"
        if v.prediction is None:
            with pytest.raises(fc.FCTheoryError):
                fc.predict(task, lam=lam_U, network=net, d=D)
        else:
            pred = fc.predict(task, lam=lam_U, network=net, d=D)
            assert pred.to_dict() == v.prediction.to_dict()
    # train's attached prediction (measure → theory_prediction)
    run = fc.train(
        task,
        **{
            k: p[k]
            for k in (
                "d",
                "lam_W",
                "lam_U",
                "layernorm",
                "n_spl",
                "epochs",
                "batch",
                "init_scale",
                "lr",
                "seed",
                "backend",
            )
        },
    )
    _same_trainer_view(v, run.measurements.predicted, "train")
    # diagnose on the trained weights
    dg = fc.diagnose(
        task, run.W, run.U, lam_W=lam_W, lam_U=lam_U, layernorm=layernorm, eps=run.config.eps, distances=False
    )
    assert (dg.theory.theorem, dg.theory.configuration) == (v.theorem, v.configuration)
    _same_prediction(v, dg.theory.predicted, "diagnose")
    # sweep points: the theory target and the train target
    th = run_point("theory", p)
    assert th["theorem"] == v.theorem
    for k in NUMBERS:
        if k in v.predicted:
            _close(th[f"predicted.{k}"], v.predicted[k], f"sweep theory: {k}")
    tr = run_point("train", p)
    assert tr.get("predicted.theorem") == v.theorem
    if "R" in v.predicted:
        _close(tr["predicted.w_norm"], v.predicted["w_norm"], "sweep train: w_norm")
        _close(tr["predicted.u_norm"], v.predicted["u_norm"], "sweep train: u_norm")


def _cli_args(task_name, decay, layernorm):
    t = TASKS[task_name]
    lam_W, lam_U = DECAYS[decay]
    args = [
        "--nc",
        str(t["n_c"]),
        "--sc",
        str(t["s_c"]),
        "--L",
        str(t["L"]),
        "--d",
        str(D),
        "--n-spl",
        "2",
        "--epochs",
        "1",
        "--batch",
        "6",
        "--lam-W",
        str(lam_W),
        "--lam-U",
        str(lam_U),
        "--backend",
        "numpy",
        "--init-scale",
        "0.3",
        "--no-progress",
    ]
    if "K" in t:
        args += ["--K", str(t["K"]), "--task-seed", "0"]
    if "mu" in t:
        args += ["--mu", t["mu"]]
    return args + (["--layernorm"] if layernorm else [])


@pytest.mark.parametrize(
    "task_name, decay, layernorm",
    [
        ("full-uniform", "unequal", False),
        ("full-zipf", "equal", False),
        ("partial-uniform", "equal", False),
        ("partial-zipf", "unequal", False),
        ("full-uniform", "W-free", True),
        ("partial-zipf", "unequal", True),
    ],
)
def test_command_line_json_agrees(task_name, decay, layernorm, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["train", *_cli_args(task_name, decay, layernorm), "--out", str(out), "--json"]) == 0
    trained = json.loads(capsys.readouterr().out)["results"]
    task = load_run(out).task
    lam_W, lam_U = DECAYS[decay]
    v = applicable_theorem(task, d=D, lam_W=lam_W, lam_U=lam_U, layernorm=layernorm)
    _same_trainer_view(v, trained["measurements"]["predicted"], "fctheory train --json")
    assert main(["diagnose", str(out), "--json"]) == 0
    th = json.loads(capsys.readouterr().out)["results"]["theory"]
    assert (th["theorem"], th["configuration"]) == (v.theorem, v.configuration)
    _same_prediction(v, th["predicted"], "fctheory diagnose --json")


def test_command_line_predict_states_the_dispatchers_numbers(capsys):
    task = fc.Task.full(3, 2, 2)
    v = applicable_theorem(task, d=D, lam_W=0.02, lam_U=0.02)
    assert main(["predict", "type1", "--nc", "3", "--sc", "2", "--L", "2", "--K", "9", "--lam", "0.02", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["results"]["predictions"][0]
    assert v.theorem == "Theorem 1"
    _close(row["c"], v.predicted["w_norm"], "predict type1: c")
    _close(row["c_prime"], v.predicted["u_norm"], "predict type1: c_prime")
    _close(row["risk"], v.predicted["R"], "predict type1: risk")


def test_the_unequal_decay_case_is_theorem_1_everywhere():
    """Task.full(3, 2, 2), d = 4, λ_W = 0.01, λ_U = 0.04: Theorem 1 at λ = 0.02 with ‖w‖ = 2.7568 from every entry."""
    task = fc.Task.full(3, 2, 2)
    v = applicable_theorem(task, d=4, lam_W=0.01, lam_U=0.04)
    assert v.theorem == "Theorem 1" and v.scale == pytest.approx(2**0.5, rel=1e-15)
    # ‖w‖ = a·√(τ/n_w) with τ = argmin H at λ = √(λ_W λ_U) = 0.02
    tau = fc.tau(n_c=3, n_w=6, L=2, K=9, lam=0.02)
    assert v.predicted["w_norm"] == pytest.approx(2**0.5 * math.sqrt(tau / 6), rel=1e-15)
    assert round(v.predicted["w_norm"], 4) == 2.7568
    run = fc.train(task, n_spl=2, d=4, epochs=1, lam_W=0.01, lam_U=0.04, backend="numpy")
    assert run.measurements.predicted["theorem"] == "Theorem 1"
    assert run.measurements.predicted["w_norm"] == v.predicted["w_norm"]
    dg = fc.diagnose(task, run.W, run.U, lam_W=0.01, lam_U=0.04, distances=False)
    assert dg.theory.theorem == "Theorem 1" and dg.theory.predicted["w_norm"] == v.predicted["w_norm"]


def test_testing_helpers_state_the_dispatchers_prediction():
    """assert_type1_optimal accepts the verdict's configuration and refuses it scaled by 1 + 1e-6."""
    task, lam = fc.Task.full(3, 2, 2), 0.02
    v = applicable_theorem(task, d=D, lam_W=lam, lam_U=lam)
    W, U = fc.type1_configuration(task, d=D, lam=lam, seed=0)
    np.testing.assert_allclose(np.linalg.norm(W, axis=0), v.predicted["w_norm"], rtol=RTOL)
    np.testing.assert_allclose(np.linalg.norm(U.reshape(-1, D), axis=1), v.predicted["u_norm"], rtol=RTOL)
    assert_type1_optimal(task, W, U, lam, gtol=1e-7)
    with pytest.raises(TheoryAssertionError):
        assert_type1_optimal(task, (1 + 1e-6) * W, U, lam, gtol=1e-7)
