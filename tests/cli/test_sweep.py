"""``fctheory sweep``: a TOML spec runs and plots; a missing spec exits 2."""

import textwrap

import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")


def test_cli_sweep_runs_and_plots(tmp_path, capsys):
    from fctheory.cli import main

    (tmp_path / "s.toml").write_text(
        textwrap.dedent("""
        target = "lambda_trivial"
        output = "o"
        workers = 1
        [fixed]
        n_c = 3
        s_c = 4
        L = 2
        [grid]
        K = [2, 4, 9]
    """)
    )
    assert main(["sweep", str(tmp_path / "s.toml"), "--plot", "line", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "3/3 points" in out
    assert (tmp_path / "o" / "results.parquet").exists() and (tmp_path / "o" / "plot-line.png").exists()
    assert main(["sweep", str(tmp_path / "missing.toml")]) == 2
