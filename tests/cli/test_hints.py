"""Commands and paths that the CLI prints for a user to copy are never wrapped; tables keep their labels whole.

Tables and prose fit 100 columns (tests/test_cli_output.py); a line holding a command or a path is exempt,
since a line break inside it breaks the copy.
"""

from __future__ import annotations

import shlex

from fctheory.cli import main
from fctheory.cli._table import hint, table
from fctheory.cli.predict import paper_rows

TINY = ["--nc", "3", "--sc", "2", "--L", "2", "--d", "4", "--n-spl", "2", "--epochs", "1", "--batch", "10",
        "--backend", "numpy", "--dtype", "float64", "--no-progress"]  # fmt: skip


def _run(capsys, *argv) -> list:
    assert main([str(a) for a in argv]) == 0
    return capsys.readouterr().out.splitlines()


def test_train_prints_the_diagnose_command_on_one_line_however_long_the_path(tmp_path, capsys):
    out = tmp_path / ("a-folder-name-long-enough-to-push-the-hint-past-one-hundred-columns-" * 2) / "run"
    lines = _run(capsys, "train", *TINY, "--out", out)
    assert f"diagnose it with: fctheory diagnose {shlex.quote(str(out))}" in lines
    assert f"run directory: {shlex.quote(str(out))}" in lines  # quoted only where the temp folder has spaces


def test_a_path_with_a_space_is_quoted_in_the_command(tmp_path, capsys):
    out = tmp_path / "my runs" / "run"
    lines = _run(capsys, "train", *TINY, "--out", out)
    assert f"diagnose it with: fctheory diagnose '{out}'" in lines
    assert f"run directory: '{out}'" in lines  # one token to copy, as the command's argument


def test_hint_quotes_a_path_with_spaces_and_nothing_else():
    assert hint("run directory", "/tmp/my runs/run") == "run directory: '/tmp/my runs/run'"
    assert hint("run directory", "/tmp/runs/run") == "run directory: /tmp/runs/run"


def test_hint_never_wraps():
    command = "fctheory diagnose /" + "x" * 150
    assert hint("diagnose it with", command) == f"diagnose it with: {command}"


def test_predict_paper_prints_every_label_whole_on_one_line(capsys):
    lines = _run(capsys, "predict", "--paper")
    for row in paper_rows():
        assert any(line.startswith(row["quantity"] + " ") or line == row["quantity"] for line in lines), row["quantity"]
    assert max(len(line) for line in lines) <= 100


def test_table_keeps_the_label_column_whole_when_values_are_narrowed():
    label = "unregularised cross-entropy at the optimum H(tau) - lambda tau"
    text = table([[label, "v" * 30, "w " * 40]], ["quantity", "value", "source"])
    assert max(len(line) for line in text.splitlines()) <= 100
    assert text.splitlines()[2].startswith(label)


def test_table_puts_labels_on_their_own_line_when_they_leave_no_room():
    label = "a label of eighty characters " + "x" * 51
    text = table([[label, "1.5", "paper (section 3)", "authors' notebook run"]], ["quantity", "a", "b", "source"])
    lines = text.splitlines()
    assert label in lines and max(len(line) for line in lines) <= 100
    assert lines[lines.index(label) + 1].split() == ["1.5", "paper", "(section", "3)", "authors'", "notebook", "run"]
