"""``fctheory optimum``: the certified optimum of a preset or of a task given by its parameters, with its
certificate, as a table or the fctheory/1 object; refusals exit 2 with one line naming why.

Oracles: the library's own entry points called directly (the command must print exactly what they return), the
enumerated certified optimum (``symmetry=False``: the exact engine over every sentence) for the collapsed path, and
the norms recomputed here from the weights.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

import fctheory as fc
from fctheory.cli import main
from fctheory.cli import paper
from fctheory.trainer.presets import get_preset


def _json(capsys, *argv):
    assert main(["optimum", *argv, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["command"] == "optimum" and doc["notes"] == []
    return doc


def _refused(capsys, *argv):
    assert main(["optimum", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("fctheory optimum: error: ")
    return err


def test_a_preset_gives_its_certified_optimum_with_the_certificate(capsys):
    doc = _json(capsys, "--preset", "k50")
    res, stored = doc["results"], paper.stored_best("k50")
    assert doc["parameters"]["preset"] == "k50" and doc["parameters"]["lam"] == 1e-3
    assert doc["task"]["K"] == 50 and np.array_equal(doc["task"]["Z"], get_preset("k50").task().Z)
    assert res["certified"] and res["status"] == "certified" and res["width"] == 2
    assert res["lower_bound"] <= res["R"] and res["gap"] == pytest.approx(res["R"] - res["lower_bound"], abs=1e-16)
    assert res["rel_gap"] <= 1e-10
    # the stored certificate of the main job is a separate solve of the same problem
    assert abs(res["R"] - stored["R"]) <= res["gap"] + stored["gap"] + 1e-15
    np.testing.assert_allclose(res["concept_norms"], stored["concept_norms"], rtol=1e-8)
    assert len(res["word_norms"]) == 1200 and len(res["norms_by_rank"]) == 400


def test_a_task_from_parameters_and_a_seed_matches_the_enumerated_optimum(capsys):
    doc = _json(capsys, "--nc", "3", "--sc", "2", "--L", "3", "--K", "10", "--task-seed", "4", "--lam", "0.02")
    task = fc.Task.random(3, 2, 3, 10, seed=4)
    assert np.array_equal(np.array(doc["task"]["Z"]), task.Z)
    ref = fc.optimum(task, lam=0.02, symmetry=False)  # every sentence through the exact engine
    res = doc["results"]
    assert "collapsed problem" in res["optimum"]
    assert abs(res["R"] - ref.R) <= res["gap"] + ref.gap + 1e-15
    words = np.linalg.norm(ref.W, axis=0)
    np.testing.assert_allclose(res["word_norms"], words, rtol=1e-8)
    np.testing.assert_allclose(res["concept_norms"], words.reshape(3, 2).mean(axis=1), rtol=1e-8)
    assert res["ce"] == pytest.approx(ref.R - 0.02 * np.sum(ref.W**2), rel=1e-8)


def test_non_uniform_frequencies_are_enumerated_and_shown_by_rank(capsys):
    doc = _json(capsys, "--nc", "2", "--sc", "3", "--L", "2", "--K", "3", "--mu", "zipf", "--lam", "0.05")
    task = fc.Task.random(2, 3, 2, 3, mu="zipf", seed=0)
    ref = fc.optimum(task, lam=0.05)
    res = doc["results"]
    assert "enumeration" in res["optimum"] and res["certified"]
    assert res["R"] == ref.R and res["lower_bound"] == ref.lower_bound  # the library's own answer, unchanged
    by_rank = np.linalg.norm(ref.W, axis=0).reshape(2, 3).mean(axis=0)
    np.testing.assert_allclose(res["norms_by_rank"], by_rank, rtol=1e-12)
    assert res["norms_by_rank"][0] > res["norms_by_rank"][2]  # frequent words are longer


def test_the_table_prints_the_certificate_without_nan_within_100_columns(capsys):
    assert main(["optimum", "--preset", "k50"]) == 0
    text = capsys.readouterr().out
    rows = {line.split()[0]: line.split()[1:] for line in text.splitlines() if line and not line.startswith(" ")}
    for key in ("R", "lower_bound", "gap", "rel_gap", "certified", "width", "concept_norms"):
        assert key in rows, key
    assert rows["certified"] == ["True"] and rows["width"] == ["2"]
    assert "uniform mu: every rank" in text and not re.search(r"\bnan\b", text, re.I)
    assert max(len(line) for line in text.splitlines()) <= 100


def test_the_best_collapsed_h_star_of_a_preset(capsys):
    doc = _json(capsys, "--preset", "fig4c", "--quick", "--collapsed")
    p = get_preset("fig4c", quick=True)
    ref = fc.collapsed_optimum_star(p.task(), lam=p.lam_U, d=p.d)
    res = doc["results"]
    assert doc["parameters"]["network"] == "h*" and doc["parameters"]["d"] == p.d
    assert res["R"] == ref.R and res["certified"] and res["u_norm_mean"] == ref.c
    assert "feature-collapsed" in res["optimum"]


def test_h_star_local_minimiser_with_its_bound(capsys):
    doc = _json(
        capsys, "--nc", "2", "--sc", "1", "--L", "2", "--K", "4", "--lam", "0.05", "--network", "h*", "--d", "3"
    )
    res = doc["results"]
    assert res["lower_bound"] <= res["R"] + 1e-12 and res["status"] in ("local", "certified")
    # R* = CE + (lambda/2)|U|^2: the cross-entropy part is positive
    assert 0 < res["ce"] < res["R"]


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["--preset", "fig4a"], r"exceeds the memory budget"),  # Zipf words at K = 1000 of 3^15: enumeration
        (["--preset", "k50", "--nc", "3"], r"--nc=3 .*the preset fixes the task"),
        (["--quick", "--nc", "3", "--sc", "2", "--L", "2"], r"--quick.*add --preset"),
        (["--nc", "3", "--sc", "2", "--L", "2", "--collapsed"], r"--collapsed.*--network h\*"),
        (["--nc", "3", "--sc", "2", "--L", "2", "--network", "h*", "--collapsed"], r"--d=None.*embedding dimension"),
        (["--nc", "3", "--sc", "2"], r"--L"),
    ],
)
def test_refusals_exit_2_with_one_line(capsys, argv, match):
    assert re.search(match, _refused(capsys, *argv))


def test_lam_out_of_range_is_argparse_s_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["optimum", "--preset", "k50", "--lam", "0"])
    assert exc.value.code == 2 and "--lam" in capsys.readouterr().err
