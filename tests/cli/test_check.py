"""``fctheory check``: the proofs_check runner behind the main command line (listing, one quick check, CSV,
and the refusal of conflicting options)."""

import csv
import io

from fctheory.cli import main


def test_list_names_every_registered_check(capsys):
    from proofs_check import get_checks

    assert main(["check", "--list"]) == 0
    out = capsys.readouterr().out
    assert all(c.id in out for c in get_checks())


def test_one_quick_check_passes_and_exits_0(capsys):
    assert main(["check", "--quick", "--only", "lemmaB-i-pascal"]) == 0
    out = capsys.readouterr().out
    assert "lemmaB-i-pascal" in out and "PASS" in out


def test_csv_has_one_row_per_check(capsys):
    assert main(["check", "--quick", "--only", "lemmaB-i-pascal,propD-monotonicity", "--csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 3


def test_csv_with_json_exits_2_naming_the_option(capsys):
    assert main(["check", "--csv", "--json"]) == 2
    err = capsys.readouterr().err
    assert "--csv" in err and len(err.strip().splitlines()) == 1
