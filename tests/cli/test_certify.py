"""``fctheory certify`` and ``fctheory optimum --data``: a trained network's certificate on the command line.

Oracles: the library's :func:`fctheory.certify` and :func:`fctheory.optimum` called directly (the command prints
exactly their numbers), the plain-NumPy training objective :func:`fctheory.risk.empirical.empirical_risk` for R,
and the certified optimum R* for soundness: a certificate's gap must be at least R(W, U) − R* ≥ R(W, U) − min R̂
is false only if the bound is unsound, so perturbed optima (whose excess is known) test the bound's soundness.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import fctheory as fc
from fctheory.cli import main
from fctheory.io import save_sentences, training_sentences
from fctheory.risk.empirical import empirical_risk

LAM = 0.02


@pytest.fixture(scope="module")
def problem(tmp_path_factory):
    """A small task, its training set (the trainer's, n_spl = 4, seed 0) and the certified optimum's weights."""
    task = fc.Task.random(3, 2, 3, 6, seed=0)
    S, y = training_sentences(task, n_spl=4, seed=0)
    opt = fc.optimum(task, lam=LAM, data=(S, y))
    assert opt.certified
    folder = tmp_path_factory.mktemp("certify")
    save_sentences(folder / "s.npz", S, y, task=task)
    np.savez(folder / "opt.npz", W=opt.W, U=opt.U, Z=task.Z, mu=task.mu)
    return dict(task=task, S=S, y=y, opt=opt, folder=folder)


def _json(capsys, *argv, command="certify"):
    assert main([command, *map(str, argv), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["command"] == command
    return doc


def _refused(capsys, *argv, command="certify"):
    assert main([command, *map(str, argv)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"fctheory {command}: error: "), err
    return err


def _perturbed(problem, scale, seed):
    rng = np.random.default_rng(seed)
    W = problem["opt"].W + scale * rng.standard_normal(problem["opt"].W.shape)
    U = problem["opt"].U + scale * rng.standard_normal(problem["opt"].U.shape)
    path = problem["folder"] / f"perturbed-{scale}-{seed}.npz"
    np.savez(path, W=W, U=U, Z=problem["task"].Z, mu=problem["task"].mu)
    return path, W, U


def test_the_json_fields_are_the_library_certificate(problem, capsys):
    path, W, U = _perturbed(problem, 0.05, 1)
    doc = _json(capsys, path, "--data", problem["folder"] / "s.npz", "--lam", LAM, "--no-solve")
    ref = fc.certify(problem["task"], W, U, lam=LAM, data=(problem["S"], problem["y"]), solve=False)
    res = doc["results"]
    for key in ("R", "lower_bound", "gap", "rel_gap", "lower_bound_network", "rho", "align"):
        assert res[key] == pytest.approx(getattr(ref, key), rel=1e-12, abs=1e-15), key
    assert (res["width"], res["rank"], res["objective"]) == (ref.width, ref.rank, "training")
    assert res["lower_bound_optimum"] is None and res["bound"] == "network"  # no solve: nan → null, noted
    assert doc["parameters"]["N"] == 24 and doc["parameters"]["lam_from"] == "--lam"
    # R is the training objective, recomputed here in plain NumPy
    R = empirical_risk(problem["task"], W, U, problem["S"], problem["y"], LAM, grad=False)[0]
    assert res["R"] == pytest.approx(R, rel=1e-12)


@pytest.mark.parametrize("scale", [1e-3, 0.03, 0.3])
@pytest.mark.parametrize("solve", [False, True])
def test_a_perturbed_optimum_gap_is_at_least_its_excess(problem, capsys, scale, solve):
    path, W, U = _perturbed(problem, scale, 2)
    extra = () if solve else ("--no-solve",)
    res = _json(capsys, path, "--data", problem["folder"] / "s.npz", "--lam", LAM, *extra)["results"]
    opt = problem["opt"]
    excess = res["R"] - opt.R  # ≤ R − min R̂: what the certified gap must cover
    assert excess > 0
    assert res["gap"] >= excess - 1e-12 * abs(opt.R)
    assert res["lower_bound"] <= opt.R + 1e-12 * abs(opt.R)
    if solve:  # the bound at the solved optimum is (almost) min R̂ itself: the gap is the excess
        assert res["bound"] == "optimum" and res["gap"] == pytest.approx(excess, rel=1e-6, abs=1e-9)


def test_the_training_set_optimum_through_optimum_then_certify(problem, capsys):
    f = problem["folder"]
    doc = _json(capsys, "--data", f / "s.npz", "--lam", LAM, "--out", f / "o.npz", command="optimum")
    res, opt = doc["results"], problem["opt"]
    assert res["certified"] and res["status"] == "certified" and doc["parameters"]["N"] == 24
    assert abs(res["R"] - opt.R) <= res["gap"] + opt.gap + 1e-14
    assert res["width"] == opt.width and "training objective of 24 sentences" in res["optimum"]
    assert doc["task"]["K"] == 6  # the task came from the sentence file
    # the written weights carry the decays: certify needs no --lam, and the optimum certifies itself
    cert = _json(capsys, f / "o.npz", "--data", f / "s.npz", "--no-solve")
    assert cert["parameters"]["lam"] == LAM and cert["parameters"]["lam_from"] == "the run's configuration"
    assert cert["results"]["rel_gap"] <= 1e-8 and cert["results"]["R"] == pytest.approx(res["R"], rel=1e-12)


def test_without_data_the_population_certificate(problem, capsys):
    f = problem["folder"]
    res = _json(capsys, f / "opt.npz", "--lam", LAM, "--no-solve")["results"]
    ref = fc.certify(problem["task"], problem["opt"].W, problem["opt"].U, lam=LAM, solve=False)
    assert res["objective"] == "population" and "true risk (5)" in res["message"]
    for key in ("R", "lower_bound", "gap"):
        assert res[key] == pytest.approx(getattr(ref, key), rel=1e-12, abs=1e-15)
    R = fc.true_risk(problem["task"], problem["opt"].W, problem["opt"].U, LAM)
    assert res["R"] == pytest.approx(float(getattr(R, "R", R)), rel=1e-12)


def test_the_table_says_the_bound_and_the_sentence(problem, capsys):
    f = problem["folder"]
    assert main(["certify", str(f / "opt.npz"), "--data", str(f / "s.npz"), "--lam", str(LAM), "--no-solve"]) == 0
    out = capsys.readouterr().out
    assert "bound: the Fenchel bound at the network's own weights" in out
    assert "global minimiser of its own training objective" in out
    assert max(len(line) for line in out.splitlines()) <= 100


def _file(folder, name, **arrays):
    path = folder / name
    np.savez(path, **arrays)
    return path


def test_bad_files_paths_and_shapes_exit_2_naming_the_parameter(problem, capsys):
    f, S, y = problem["folder"], problem["S"], problem["y"]
    opt, data = f / "opt.npz", f / "s.npz"
    assert "path=" in _refused(capsys, f / "missing.npz", "--lam", LAM)
    assert "--data=" in _refused(capsys, opt, "--data", f / "missing.npz", "--lam", LAM)
    assert "--data=" in _refused(capsys, opt, "--data", _file(f, "noS.npz", X=S, y=y), "--lam", LAM)
    err = _refused(capsys, opt, "--data", _file(f, "short.npz", S=S[:, :2], y=y), "--lam", LAM)
    assert "--data=" in err and "L = 3" in err
    assert "--data=" in _refused(capsys, opt, "--data", _file(f, "labels.npz", S=S, y=y[:-1]), "--lam", LAM)
    assert "--data=" in _refused(capsys, opt, "--data", _file(f, "bigK.npz", S=S, y=y + 6), "--lam", LAM)
    other = fc.Task.random(3, 2, 3, 6, seed=5)
    S2, y2 = training_sentences(other, n_spl=2, seed=0)
    save_sentences(f / "other.npz", S2, y2, task=other)
    assert "different task" in _refused(capsys, opt, "--data", f / "other.npz", "--lam", LAM)
    err = _refused(capsys, opt, "--data", _file(f, "foreign.npz", S=S2, y=y2), "--lam", LAM)
    assert "--data=" in err and "must come from the task" in err
    bare = _file(f, "bare.npz", W=problem["opt"].W, U=problem["opt"].U)
    assert "--lam=" in _refused(capsys, opt, "--data", data)
    assert "--task=" in _refused(capsys, bare, "--lam", LAM)
    assert "--K=" in _refused(capsys, bare, "--data", data, "--lam", LAM, "--nc", 3, "--K", 7)
    assert "--data=" in _refused(capsys, "--data", data, "--lam", LAM, "--out", f / "x.npz", "--network", "h*",
                                 command="optimum")  # fmt: skip
    assert "--out=" in _refused(capsys, "--data", data, "--lam", LAM, "--out", f / "x.txt", command="optimum")
