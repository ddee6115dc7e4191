"""fctheory.sweep.table: the results table on disk is what the sweep returned; missing folders are refused."""

import pytest

import fctheory as fc
from fctheory.sweep import read_table

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")


def test_read_table_returns_the_rows_the_sweep_returned(tmp_path):
    spec = {
        "target": "lambda_trivial",
        "output": str(tmp_path / "o"),
        "workers": 1,
        "fixed": {"n_c": 3, "s_c": 4, "L": 2},
        "grid": {"K": [2, 4, 9]},
    }
    t = fc.sweep(spec)
    back = read_table(str(tmp_path / "o"))
    cols = ["point_id", "K", "value", "status"]
    a = t.sort_values("K")[cols].reset_index(drop=True)
    b = back.sort_values("K")[cols].reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b)
    assert len(back) == 3


def test_values_in_the_table_equal_direct_calls(tmp_path):
    spec = {
        "target": "lambda_trivial",
        "output": str(tmp_path / "o"),
        "workers": 1,
        "fixed": {"n_c": 3, "s_c": 4, "L": 2},
        "grid": {"K": [2, 9]},
    }
    fc.sweep(spec)
    back = read_table(str(tmp_path / "o")).sort_values("K")
    direct = [fc.lambda_trivial(n_c=3, n_w=12, L=2, K=K) for K in (2, 9)]
    assert back["value"].tolist() == pytest.approx(direct, rel=1e-15)


def test_missing_folder_is_refused(tmp_path):
    with pytest.raises(fc.FCTheoryError, match="path="):
        read_table(str(tmp_path / "nope"))
