"""``fctheory.nc_diagnosis.report``: the figures (PNG files of the documented size) and the markdown report
(links to the figures, the verdict, the tables) of a feature diagnosis, and its JSON record."""

import dataclasses
import json
import os
import re
import struct

import numpy as np
import pytest

from fctheory import ufm
from fctheory.nc_diagnosis import diagnose_features
from fctheory.nc_diagnosis.report import _fmt, plot_feature_diagnosis, write_feature_report

pytest.importorskip("matplotlib")

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _png_size(path):
    """(width, height) from the IHDR chunk, read independently of matplotlib."""
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == PNG_SIGNATURE and head[12:16] == b"IHDR", path
    return struct.unpack(">II", head[16:24])


@pytest.fixture(scope="module")
def diagnosis():
    K, n = 4, 5
    sol = ufm.solve_ce(K=K, n_spl=n, d=4, lam_W=5e-3, lam_H=1e-2, n_starts=1, seed=1)
    return diagnose_features(sol.H.T, np.repeat(np.arange(K), n), sol.W, lam_W=5e-3, lam_H=1e-2, rtol=1e-3)


@pytest.fixture(scope="module")
def unbalanced():
    # counts 3, 4, 4 in d = 1 < the rank 2 of the optimum for these counts: the result does not apply
    counts = np.array([3, 4, 4])
    sol = ufm.solve_ce(counts=counts, d=1, lam_W=5e-3, lam_H=1e-2, n_starts=1, seed=2)
    return diagnose_features(sol.H.T, np.repeat(np.arange(3), counts), sol.W, lam_W=5e-3, lam_H=1e-2)


def test_figures_are_pngs_of_the_documented_size(diagnosis, tmp_path):
    out = str(tmp_path / "a" / "b")  # created on demand
    paths = plot_feature_diagnosis(diagnosis, out)
    assert paths == {"grams": os.path.join(out, "grams.png"), "metrics": os.path.join(out, "metrics.png")}
    # figsize in inches times dpi = 110 (no tight bounding box: the size is exact)
    assert _png_size(paths["grams"]) == (770, 715)
    n = len(diagnosis.checks)
    width, height = _png_size(paths["metrics"])
    assert width == 770 and abs(height - (0.45 * n + 1.2) * 110) <= 1  # matplotlib truncates to pixels
    assert sorted(os.listdir(out)) == ["grams.png", "metrics.png"]  # no temporary file left


@pytest.fixture(scope="module")
def report(diagnosis, tmp_path_factory):
    """(folder, report text) of the diagnosis, written once for the tests that only read it."""
    out = tmp_path_factory.mktemp("report")
    path = write_feature_report(diagnosis, str(out))
    assert path == os.path.join(str(out), "report.md")
    with open(path, encoding="utf-8") as f:
        return out, f.read()


def test_metrics_figure_survives_non_finite_deviations(diagnosis, tmp_path):
    checks = dict(diagnosis.checks)
    first = next(iter(checks))
    checks[first] = float("nan")
    paths = plot_feature_diagnosis(dataclasses.replace(diagnosis, checks=checks), str(tmp_path))
    assert _png_size(paths["metrics"])[0] == 770


def test_report_writes_exactly_its_files(report):
    assert sorted(os.listdir(report[0])) == ["diagnosis.json", "grams.png", "metrics.png", "report.md"]


def test_report_links_every_figure_to_an_existing_png(report):
    out, text = report
    links = dict(re.findall(r"!\[(\w+)\]\(([^)]+)\)", text))
    assert links == {"grams": "grams.png", "metrics": "metrics.png"}
    for target in links.values():
        assert open(out / target, "rb").read(8) == PNG_SIGNATURE


def test_report_states_the_verdict_and_the_result(diagnosis, report):
    text = report[1]
    assert diagnosis.matches is True
    assert f"**Verdict:** {diagnosis.verdict}\n" in text
    assert text.startswith(f"# Features against the {diagnosis.applicability.model} UFM optimum\n")
    assert f"Result: {diagnosis.applicability.source}; its conditions hold." in text
    assert "K = 4 classes, N = 20 samples (n_k 5–5), d = 4, loss ce, bias no" in text


def test_report_tables_hold_every_metric_and_distance(diagnosis, report):
    text = report[1]
    for k, v in list(diagnosis.metrics.items()) + list(diagnosis.distances.items()):
        assert f"| {k} | {_fmt(v)} |" in text, k


def test_report_of_an_inapplicable_result_lists_the_reasons(unbalanced, tmp_path):
    text = open(write_feature_report(unbalanced, str(tmp_path)), encoding="utf-8").read()
    assert unbalanced.matches is None and unbalanced.applicability.reasons
    assert "it does not apply exactly:" in text
    for reason in unbalanced.applicability.reasons:
        assert f"- {reason}\n" in text
    assert "n_k 3–4" in text


def test_json_record_round_trips(diagnosis, report):
    with open(report[0] / "diagnosis.json", encoding="utf-8") as f:
        record = json.load(f)
    assert record == json.loads(json.dumps(diagnosis.to_dict(), allow_nan=False))
    assert record["verdict"] == diagnosis.verdict and record["matches"] is True
    np.testing.assert_array_equal(np.array(record["optimum"]["W_gram"]), diagnosis.applicability.optimum.W_gram)


@pytest.mark.parametrize(
    ("value", "text"),
    [(None, "—"), (True, "True"), (np.bool_(False), "False"), (np.int64(7), "7"), (3, "3"), (1 / 3, "0.333333")],
)
def test_table_number_format(value, text):
    assert _fmt(value) == text
