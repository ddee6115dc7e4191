"""One output format for every ``fctheory`` command: the ``fctheory/1`` JSON object,
``--csv`` rows, tables within 100 columns, and ``--precision mp`` values at full precision."""

from __future__ import annotations

import csv
import io
import json
import math
import re
import textwrap

import mpmath
import numpy as np
import pytest

import fctheory as fc
from fctheory.cli import main
from fctheory.cli._output import SCHEMA, WIDTH
from fctheory.configurations import type1_configuration

TINY_TRAIN = [
    "--nc",
    "3",
    "--sc",
    "2",
    "--L",
    "2",
    "--d",
    "4",
    "--n-spl",
    "4",
    "--epochs",
    "2",
    "--lr",
    "0.5",
    "--batch",
    "10",
    "--backend",
    "numpy",
    "--dtype",
    "float64",
    "--init-scale",
    "0.1",
    "--no-progress",
]
SWEEP = """target = "lambda_trivial"
workers = 1
[fixed]
n_c = 3
s_c = 4
L = 2
[grid]
K = [2, 4, 9]
"""


# ----------------------------------------------------------------------------- the schema, as a validator
def _reject_constant(name):  # json.loads would otherwise accept NaN / Infinity
    raise AssertionError(f"non-standard JSON constant {name}")


def _looks_numeric(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _walk(v, path, mp_ok):
    """Every number is a JSON number: no string that parses as a number, except --precision mp values."""
    if isinstance(v, dict):
        for k, x in v.items():
            assert isinstance(k, str)
            _walk(x, f"{path}.{k}", mp_ok)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            _walk(x, f"{path}[{i}]", mp_ok)
    elif isinstance(v, str):
        assert mp_ok or not _looks_numeric(v.strip()), f"{path} is a number written as a string: {v!r}"
    else:
        assert v is None or isinstance(v, (bool, int, float)), f"{path}: {type(v).__name__}"
        if isinstance(v, float):
            assert math.isfinite(v)


def validate(text: str, command: str) -> dict:
    """Parse ``text`` as one fctheory/1 object and check the required keys and their types."""
    doc = json.loads(text, parse_constant=_reject_constant)
    assert isinstance(doc, dict)
    assert set(doc) == {"schema", "command", "fctheory_version", "versions", "task", "parameters", "results", "notes"}
    assert doc["schema"] == SCHEMA and doc["command"] == command
    assert doc["fctheory_version"] == fc.__version__
    v = doc["versions"]
    assert isinstance(v, dict) and {"python", "numpy", "scipy", "numba", "mpmath"} <= set(v)
    assert all(x is None or isinstance(x, str) for x in v.values())
    t = doc["task"]
    if t is not None:
        assert isinstance(t, dict)
        for key in ("n_c", "s_c", "L", "n_w"):
            assert isinstance(t[key], int) and not isinstance(t[key], bool), key
        assert isinstance(t["K"], (int, float)) and t["n_w"] == t["n_c"] * t["s_c"]
        assert t["mu"] in ("uniform", "zipf") or (isinstance(t["mu"], list) and len(t["mu"]) == t["s_c"])
        assert "Z" not in t or t["Z"] == "full" or (isinstance(t["Z"], list) and len(t["Z"]) == t["K"])
    assert isinstance(doc["parameters"], dict) and isinstance(doc["results"], dict)
    assert isinstance(doc["notes"], list) and all(isinstance(n, str) for n in doc["notes"])
    mp = doc["parameters"].get("precision") == "mp"
    for key in ("task", "parameters", "notes"):
        _walk(doc[key], key, False)
    _walk(doc["results"], "results", mp)
    return doc


def run(capsys, *argv, code=0):
    rc = main([str(a) for a in argv])
    out = capsys.readouterr()
    assert rc == code, out.err
    return out.out


@pytest.fixture
def weights(tmp_path):
    task = fc.Task.full(3, 2, 2)
    W, U = type1_configuration(task, d=4, lam=0.01, seed=0)
    p = tmp_path / "w.npz"
    np.savez(p, W=W, U=U)
    return p


@pytest.fixture
def sweep_spec(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text(SWEEP)
    return p


# ----------------------------------------------------------------------------- JSON: every command
def test_predict_json_follows_the_schema(capsys):
    doc = validate(
        run(capsys, "predict", "type1", "--nc", "3", "--nw", "6", "--L", "2", "--K", "9", "--lam", "0.01", "--json"),
        "predict",
    )
    assert doc["task"] == {"n_c": 3, "s_c": 2, "L": 2, "K": 9, "n_w": 6, "mu": "uniform"}
    (p,) = doc["results"]["predictions"]
    assert p["tau"] == fc.tau(n_c=3, n_w=6, L=2, K=9, lam=0.01)  # the double itself, bit for bit


def test_predict_paper_json_follows_the_schema(capsys):
    doc = validate(run(capsys, "predict", "--paper", "--json"), "predict")
    assert doc["task"] is None and doc["parameters"] == {"paper": True, "recompute": False}
    for r in doc["results"]["rows"]:
        for a in r["answers"]:
            assert a["value"] is None or isinstance(a["value"], float) or all(isinstance(v, float) for v in a["value"])
            assert a["error"] is None or isinstance(a["error"], float)


def test_predict_type3_json_lists_mu_and_r(capsys):
    doc = validate(
        run(capsys, "predict", "type3", "--sc", "3", "--L", "2", "--lam", "0.02", "--mu", "zipf", "--json"), "predict"
    )
    assert doc["task"]["mu"] == "zipf" and doc["task"]["K"] == 9
    assert len(doc["results"]["predictions"][0]["r"]) == 3


def test_risk_json_follows_the_schema_and_nan_is_null_with_a_note(tmp_path, capsys):
    rng = np.random.default_rng(0)
    p = tmp_path / "w3.npz"
    np.savez(p, W=rng.normal(size=(3, 6)), U=rng.normal(size=(5, 6)))  # K = 5 < n_c^L: no theorem applies
    # no theorem, and the certified optimum by enumeration refused by the budget: no prediction
    with fc.budget(max_seconds=0.05):
        doc = validate(run(capsys, "risk", p, "--mu", "0.7,0.3", "--json"), "risk")
    assert doc["results"]["predicted_R"] is None and doc["results"]["theorem"] == "none"
    assert any(n.startswith("results.predicted_R: NaN") for n in doc["notes"])
    assert doc["task"]["mu"] == [0.7, 0.3] and doc["task"]["K"] == 5 and len(doc["task"]["Z"]) == 5
    # within the budget the certified optimum answers, with its provenance
    doc = validate(run(capsys, "risk", p, "--mu", "0.7,0.3", "--json"), "risk")
    assert doc["results"]["theorem"] == "none" and doc["results"]["provenance"] == "exact (certified optimum)"
    assert doc["results"]["predicted_R"] <= doc["results"]["R"]


def test_risk_json_task_is_a_task_file(weights, capsys):
    from fctheory.diagnosis import task_from_dict

    doc = validate(run(capsys, "risk", weights, "--lam", "0.01", "--json"), "risk")
    t = task_from_dict({k: v for k, v in doc["task"].items() if k != "n_w"})
    assert t.K == 9 and np.array_equal(t.Z, fc.Task.full(3, 2, 2).Z)


def test_check_json_follows_the_schema(capsys):
    doc = validate(run(capsys, "check", "--only", "lemmaF-claimA-value", "--json"), "check")
    assert doc["results"]["ok"] is True and [c["id"] for c in doc["results"]["checks"]] == ["lemmaF-claimA-value"]
    doc = validate(run(capsys, "check", "--list", "--json", "--only", "thmG-nuclear*"), "check")
    assert doc["results"]["checks"][0]["id"] == "thmG-nuclear-inequality"


def test_train_and_diagnose_json_follow_the_schema(tmp_path, capsys):
    out = tmp_path / "run"
    doc = validate(run(capsys, "train", *TINY_TRAIN, "--out", out, "--json"), "train")
    assert doc["task"]["K"] == 9 and doc["parameters"]["n_spl"] == 4 and doc["results"]["epochs_done"] == 2
    doc = validate(run(capsys, "diagnose", out, "--method", "exact", "--json"), "diagnose")
    assert doc["task"]["Z"] == "full" and isinstance(doc["results"]["R"], float)
    assert doc["parameters"]["lam_W"] == 1e-3 and "versions" not in doc["results"]


def test_reproduce_json_follows_the_schema(tmp_path, capsys):
    doc = validate(
        run(capsys, "reproduce", "--quick", "--no-train", "--presets", "k50", "--out", tmp_path / "r", "--json"),
        "reproduce",
    )
    assert doc["task"] is None and doc["results"]["report"].endswith("report.md")


def test_sweep_json_follows_the_schema(sweep_spec, tmp_path, capsys):
    doc = validate(run(capsys, "sweep", sweep_spec, "--output", tmp_path / "o", "--no-progress", "--json"), "sweep")
    assert doc["results"]["finished"] == 3 and doc["results"]["complete"] is True


# ----------------------------------------------------------------------------- CSV: one header, one row per item
def _csv(text):
    rows = list(csv.reader(io.StringIO(text)))
    return rows[0], rows[1:]


def test_predict_csv_has_one_row_per_setting(capsys):
    head, rows = _csv(
        run(capsys, "predict", "type1", "--nw", "6", "--L", "2", "--K", "9", "--lam", "0.01,0.02,0.03", "--csv")
    )
    assert len(rows) == 3 and all(len(r) == len(head) for r in rows)
    col = head.index("tau")
    for r, lam in zip(rows, (0.01, 0.02, 0.03)):
        assert float(r[col]) == fc.tau(n_c=3, n_w=6, L=2, K=9, lam=lam)  # repr: round-trips exactly
    assert [float(r[head.index("lam")]) for r in rows] == [0.01, 0.02, 0.03]


def test_risk_csv_is_one_row(weights, capsys):
    head, rows = _csv(run(capsys, "risk", weights, "--lam", "0.01", "--csv"))
    assert len(rows) == 1 and "R" in head and float(rows[0][head.index("R")]) > 0


def test_check_csv_has_one_row_per_check(capsys):
    head, rows = _csv(run(capsys, "check", "--only", "lemmaF-claimA-value,lemmaB-i-pascal", "--quick", "--csv"))
    assert head[:5] == ["kind", "id", "statement", "method", "status"]
    assert sorted(r[1] for r in rows) == ["lemmaB-i-pascal", "lemmaF-claimA-value"]
    assert all(r[4] == "PASS" for r in rows)


def test_sweep_csv_has_one_row_per_point(sweep_spec, tmp_path, capsys):
    head, rows = _csv(run(capsys, "sweep", sweep_spec, "--output", tmp_path / "o", "--no-progress", "--csv"))
    assert len(rows) == 3 and "K" in head and sorted(int(float(r[head.index("K")])) for r in rows) == [2, 4, 9]


def test_json_and_csv_are_exclusive(capsys):
    with pytest.raises(SystemExit) as exc:  # argparse's own usage error: status 2
        main(["predict", "type1", "--json", "--csv"])
    assert exc.value.code == 2 and "not allowed with" in capsys.readouterr().err


# ----------------------------------------------------------------------------- tables: 100 columns
# a line a user copies: ``label: fctheory ...`` / ``label: /abs/path`` (cli._table.hint) or a path alone (a
# wrapped line of prose whose path did not fit); such lines are never wrapped, so they may exceed 100 columns
# a path is copyable as the CLI prints it: bare, or shell-quoted where it holds spaces (any temp folder may)
_COPYABLE = re.compile(r"^\s*(?:[a-z][a-z ]*: )?(?:fctheory \S.*|/\S*|'/[^']*'|[A-Za-z]:\\\S*)$")


def _width(text):
    """The widest line of ``text``, copyable commands and paths aside."""
    return max((len(line) for line in text.splitlines() if not _COPYABLE.match(line)), default=0)


def test_width_exempts_only_copyable_commands_and_paths():
    long_path = "/" + "a-very-long-folder-name/" * 6 + "run"
    assert _width(f"run directory: {long_path}\ndiagnose it with: fctheory diagnose {long_path}\n  {long_path}") == 0
    assert _width(f"quantity             K=1000               {long_path}") > WIDTH  # a table row is held to 100
    spaced = "'/tmp/a folder with spaces/" + "and-a-very-long-name/" * 6 + "run'"
    assert _width(f"run directory: {spaced}\n{spaced}") == 0  # shell-quoted, as the CLI prints such a path
    assert _width(f"theory: {'Theorem 1 applies ' * 8}") > WIDTH  # and so is prose


@pytest.mark.parametrize(
    "argv",
    [
        ["predict", "--paper"],
        ["optimum", "--preset", "k50"],
        ["optimum", "--nc", "2", "--sc", "3", "--L", "2", "--K", "3", "--mu", "zipf", "--lam", "0.05"],
        ["predict", "type1"],
        ["predict", "type2", "--K", "1000", "--d", "100"],
        ["predict", "type1", "--lam", "1e-3,1e-2,1e-1", "--K", "50,1000"],
        [
            "predict",
            "type3",
            "--mu",
            "zipf",
            "--sc",
            "4",
            "--L",
            "2",
            "--lam",
            "0.02",
            "--precision",
            "mp",
            "--dps",
            "60",
        ],
        ["check", "--only", "lemmaF-claimA-value,predictors-mpmath", "--quick"],
    ],
)
def test_tables_fit_100_columns(argv, capsys):
    assert _width(run(capsys, *argv)) <= WIDTH


def test_risk_train_diagnose_sweep_tables_fit_100_columns(weights, sweep_spec, tmp_path, capsys):
    assert _width(run(capsys, "risk", weights, "--lam", "0.01")) <= WIDTH
    assert _width(run(capsys, "train", *TINY_TRAIN, "--out", tmp_path / "run")) <= WIDTH
    assert _width(run(capsys, "diagnose", weights, "--nc", "3", "--lam-W", "0.01", "--lam-U", "0.01")) <= WIDTH
    assert _width(run(capsys, "sweep", sweep_spec, "--output", tmp_path / "o", "--no-progress")) <= WIDTH


def test_table_wraps_long_cells_instead_of_cutting_them():
    from fctheory.cli._table import table

    text = table([["reason", "word " * 60]], ["quantity", "value"])
    assert _width(text) <= WIDTH and " ".join(text.split()).count("word") == 60


# ----------------------------------------------------------------------------- --precision mp
def test_predict_mp_prints_tau_at_full_precision(capsys):
    doc = validate(run(capsys, "predict", "type1", "--precision", "mp", "--dps", "60", "--json"), "predict")
    p = doc["results"]["predictions"][0]
    assert doc["parameters"]["dps"] == 60 and isinstance(p["tau"], str) and isinstance(p["risk"], float)
    # oracle: the same root at 90 digits; the 60-digit string agrees to 1e-57 relative
    ref = fc.tau(n_c=3, n_w=1200, L=15, K=1000, lam=1e-3, precision="mp", dps=90)
    with mpmath.workdps(90):
        assert abs(mpmath.mpf(p["tau"]) / ref - 1) < mpmath.mpf(10) ** -57
        assert abs(mpmath.mpf(p["c"]) / mpmath.sqrt(ref / 1200) - 1) < mpmath.mpf(10) ** -57
    assert len(p["tau"].replace(".", "").lstrip("0")) >= 59
    assert float(p["tau"]) == pytest.approx(fc.tau(n_c=3, n_w=1200, L=15, K=1000, lam=1e-3), rel=1e-12)


def test_predict_mp_type2_and_type3(capsys):
    head, rows = _csv(run(capsys, "predict", "type2", "--precision", "mp", "--csv"))
    ts = rows[0][head.index("tau_star")]
    assert len(ts.replace(".", "")) >= 49 and float(ts) == pytest.approx(11.947028516864, rel=1e-12)
    doc = validate(
        run(
            capsys,
            "predict",
            "type3",
            "--mu",
            "0.5,0.3,0.2",
            "--L",
            "2",
            "--lam",
            "0.02",
            "--precision",
            "mp",
            "--json",
        ),
        "predict",
    )
    p = doc["results"]["predictions"][0]
    assert isinstance(p["c"], str) and all(isinstance(r, str) for r in p["r"]) and len(p["r"]) == 3


def test_dps_without_mp_is_refused(capsys):
    rc = main(["predict", "type1", "--dps", "60"])
    assert rc == 2 and "--dps" in capsys.readouterr().err


# ----------------------------------------------------------------------------- item 7: small things
def test_type3_K_is_refused_not_ignored(capsys):
    rc = main(["predict", "type3", "--K", "5"])
    assert rc == 2 and "--K=5" in capsys.readouterr().err


def test_type2_d_below_n_c_is_refused(capsys):
    rc = main(["predict", "type2", "--d", "1"])
    assert rc == 2 and "--d=1" in capsys.readouterr().err


def test_docs_json_example_follows_the_schema():
    """The example object in docs/cli.md ("Output formats") is a valid fctheory/1 object."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text()
    block = text.split("<!-- example: fctheory/1 -->", 1)[1].split("```json", 1)[1].split("```", 1)[0]
    doc = json.loads(textwrap.dedent(block))
    doc["fctheory_version"] = fc.__version__  # the example was printed by some version
    validate(json.dumps(doc), "risk")
