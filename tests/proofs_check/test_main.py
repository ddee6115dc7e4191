"""The proofs_check runner: table, --only, --json, --list, exit status, self-test, `fctheory check`."""

import json

import pytest

import proofs_check
from proofs_check import REGISTRY, CheckFailed, get_checks, run_checks
from proofs_check.__main__ import main
from proofs_check.registry import Check


def test_registry_entries_are_complete_and_unique():
    checks = get_checks()
    assert len(checks) == len(REGISTRY) >= 25
    assert len({c.id for c in checks}) == len(checks)
    methods = {
        "symbolic",
        "symbolic + numeric",
        "exact enumeration",
        "numeric enumeration",
        "Hypothesis",
        "SDP/convex",
        "numeric (mpmath)",
        "numeric (sample)",
        "numeric (balls)",
    }
    for c in checks:
        assert c.statement and c.mutant and c.method in methods
    assert {c.method for c in checks} >= methods - {"symbolic + numeric", "numeric (mpmath)", "numeric (balls)"}


def test_only_selects_by_glob_and_substring():
    ids = [c.id for c in get_checks("lemmaB-i*,convexity")]
    assert ids == ["lemmaB-i-pascal", "lemmaB-ii-sums", "lemmaB-iii-theta", "H-strict-convexity", "lemmaB-iii-forced"]


def test_quick_is_a_subset():
    assert {c.id for c in get_checks(quick=True)} < {c.id for c in get_checks()}


@pytest.fixture
def fake_checks(monkeypatch):
    """Two throw-away checks: one true, one false (so exit codes can be tested in milliseconds)."""

    def good(mutant=False, quick=False):
        proofs_check.expect(not mutant, "mutant")
        return "ok"

    def bad(mutant=False, quick=False):
        raise CheckFailed("statement is false")

    def crash(mutant=False, quick=False):
        raise ZeroDivisionError("boom")

    reg = {
        "zz-good": Check("zz-good", "s", "symbolic", good, "m"),
        "zz-bad": Check("zz-bad", "s", "symbolic", bad, "m"),
        "zz-crash": Check("zz-crash", "s", "symbolic", crash, "m"),
    }
    monkeypatch.setattr(proofs_check.registry, "REGISTRY", reg)
    monkeypatch.setattr(proofs_check, "_load_all", lambda: None)
    return reg


def test_exit_status_zero_only_when_all_pass(fake_checks, capsys):
    assert main(["--only", "zz-good"]) == 0
    assert main(["--only", "zz-good,zz-bad"]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "statement is false" in out


def test_crash_is_an_error_not_a_caught_mutant(fake_checks):
    res = run_checks("zz-crash", self_test=True)
    assert [r.status for r in res] == ["ERROR"]
    assert [r.status for r in run_checks("zz-good", self_test=True)] == ["CAUGHT"]
    assert [r.status for r in run_checks("zz-bad")] == ["FAIL"]


def test_self_test_exit_status(fake_checks):
    assert main(["--self-test", "--only", "zz-good"]) == 0
    assert main(["--self-test", "--only", "zz-crash"]) == 1


def test_json_output(fake_checks, capsys):
    assert main(["--json", "--only", "zz-*"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is False
    assert {r["id"]: r["status"] for r in data["results"]} == {"zz-good": "PASS", "zz-bad": "FAIL", "zz-crash": "ERROR"}
    assert set(data["results"][0]) == {"id", "statement", "method", "status", "seconds", "detail", "assertions"}


def test_unknown_pattern_is_a_usage_error(fake_checks, capsys):
    assert main(["--only", "no-such-check"]) == 2
    assert "only" in capsys.readouterr().err


def test_fctheory_check_subcommand_runs_the_same_table(capsys):
    from fctheory.cli import main as fc_main

    assert fc_main(["check", "--only", "lemmaF-claimA-value"]) == 0
    out = capsys.readouterr().out
    assert "lemmaF-claimA-value" in out and "PASS" in out
    assert fc_main(["check", "--list", "--json", "--only", "thmG-nuclear*"]) == 0
    listed = json.loads(capsys.readouterr().out)["results"]["checks"]
    assert listed[0]["id"] == "thmG-nuclear-inequality" and listed[0]["method"] == "Hypothesis"


def test_a_check_that_asserts_nothing_is_an_error(monkeypatch):
    def empty(mutant=False, quick=False):
        return "looked at nothing"

    monkeypatch.setattr(proofs_check.registry, "REGISTRY", {"zz-empty": Check("zz-empty", "s", "symbolic", empty, "m")})
    monkeypatch.setattr(proofs_check, "_load_all", lambda: None)
    res = run_checks("zz-empty")
    assert [r.status for r in res] == ["ERROR"] and "no assertion" in res[0].detail


def test_self_test_fails_when_a_library_mutant_is_missed(fake_checks, monkeypatch, capsys):
    """An equivalent edit of the library (n_c - 1 -> n_c - 1.0) cannot be caught: the self-test reports it MISSED
    and exits 1."""
    import proofs_check.library_mutants as lm

    noop = lm.LibraryMutant(
        "zz-noop",
        "fctheory.tau",
        "_log_eta",
        "np.log(n_c / (n_c - 1))",
        "np.log(n_c / (n_c - 1.0))",
        "an equivalent edit",
        ("zz-good",),
    )
    monkeypatch.setattr(lm, "MUTANTS", [noop])
    assert main(["--self-test", "--only", "zz-good"]) == 1
    out = capsys.readouterr().out
    assert "zz-noop" in out and "MISSED" in out and "0/1 library mutants caught" in out


def test_self_test_plants_library_bugs_and_reports_them(capsys):
    assert main(["--self-test", "--quick", "--only", "risk-engine", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    statuses = {r["id"]: r["status"] for r in data["library_mutants"]}
    assert len(statuses) >= 8 and set(statuses.values()) == {"CAUGHT"}
    assert "risk-grad-no-lamU" in statuses and "brute-ce-clipped" in statuses
