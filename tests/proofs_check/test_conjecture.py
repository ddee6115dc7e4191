"""proofs_check.conjecture: the report of certified global minima (type-III conjecture) is built from rows whose
type-III point is critical and matches the rigorous lower bound."""

import pytest

from proofs_check import conjecture, convex


def test_conjecture_rows_certify_the_type3_point_on_the_smallest_task(monkeypatch):
    monkeypatch.setattr(convex, "CONJECTURE_GRID", [(2, 2, 2, "zipf", (0.5,))])
    (row,) = conjecture.conjecture_rows(quick=True)
    assert row.task == "(2,2,2,4)" and row.mu == "zipf"
    assert row.lam == pytest.approx(0.5 * row.lam_max, rel=1e-15)
    assert row.grad_norm <= 1e-11  # a critical point of the exact risk
    assert row.lower_bound <= row.R_type3 + 1e-12 and row.gap <= 1e-9  # certified global minimum


@pytest.mark.slow
def test_quick_report_is_written(tmp_path):
    assert conjecture.main(["--convex", "--quick", "--out", str(tmp_path)]) == 0
    text = (tmp_path / "convex-small-tasks.md").read_text()
    assert text.startswith("# The type-III conjecture") and "(2,2,2,4)" in text
