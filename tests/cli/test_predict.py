"""`fctheory predict`: the paper's headline numbers and the error contract of the CLI."""

import json
import subprocess
import sys

import pytest

from fctheory.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_predict_paper_reproduces_headline_numbers(capsys):
    code, out, _ = run(capsys, "predict", "--paper", "--json")
    assert code == 0
    answers = {
        (r["preset"], r["key"], a["source"]): a["value"]
        for r in json.loads(out)["results"]["rows"]
        for a in r["answers"]
    }
    assert round(answers[("fig3", "word_norm", "theorem")], 5) == 1.42214 == answers[("fig3", "word_norm", "paper")]
    assert round(answers[("k50", "word_norm", "theorem")], 5) == 0.61602
    assert round(answers[("fig4c", "tau_star", "theorem")], 5) == 11.94703
    assert round(answers[("fig3", "pca_W_1", "theorem")], 3) == 34.835
    assert [round(v, 5) for v in answers[("k50", "word_norm", "exact optimum")]] == [0.60487, 0.59318, 0.62277]
    assert round(answers[("fig4c", "ce", "exact optimum")], 5) == 0.0164


def test_predict_paper_table_is_readable(capsys):
    code, out, _ = run(capsys, "predict", "--paper")
    assert code == 0 and "1.42214" in out and "exact optimum" in out


def test_predict_paper_reads_the_stored_certificates_and_solves_nothing(capsys, monkeypatch):
    """The main job stays a few seconds (docs/performance.md) because it solves no optimum: with the solvers
    disabled it prints the same table; --recompute calls them."""
    from fctheory.cli import paper

    code, before, _ = run(capsys, "predict", "--paper")

    def refuse(*args, **kwargs):
        raise AssertionError("the main job solved an optimum")

    monkeypatch.setattr(paper, "collapsed_optimum", refuse)
    monkeypatch.setattr(paper, "collapsed_optimum_star", refuse)
    code, after, _ = run(capsys, "predict", "--paper")
    assert code == 0 and after == before
    code, _, err = run(capsys, "predict", "--paper", "--recompute")
    assert code == 1 and "solved an optimum" in err


def test_predict_type1_json(capsys):
    code, out, _ = run(
        capsys, "predict", "type1", "--nc", "3", "--nw", "6", "--L", "2", "--K", "9", "--lam", "0.01", "--json"
    )
    d = json.loads(out)
    assert code == 0 and d["parameters"]["kind"] == "type1"
    assert d["results"]["predictions"][0]["risk"] == pytest.approx(0.3490664343, abs=1e-10)


def test_predict_type3_zipf(capsys):
    code, out, _ = run(
        capsys, "predict", "type3", "--nc", "3", "--sc", "3", "--L", "2", "--lam", "0.02", "--mu", "zipf", "--json"
    )
    assert code == 0 and json.loads(out)["results"]["predictions"][0]["c"] == pytest.approx(1.1870394734, abs=1e-10)


def test_predict_type2_table(capsys):
    code, out, _ = run(capsys, "predict", "type2", "--K", "1000", "--d", "100")
    assert code == 0 and "tau_star" in out and "11.94702852" in out


def test_invalid_input_exits_2_with_message(capsys):
    code, _, err = run(capsys, "predict", "type3", "--lam", "1e-3", "--mu", "zipf")
    assert code == 2 and "lambda_max" in err and "lam=0.001" in err
    code, _, err = run(capsys, "predict", "type1", "--nc", "3", "--nw", "7")
    assert code == 2 and "n_w" in err


def test_console_script_entry_point():
    res = subprocess.run(
        [sys.executable, "-m", "fctheory", "predict", "--paper", "--json"], capture_output=True, text=True
    )
    assert res.returncode == 0 and json.loads(res.stdout)
