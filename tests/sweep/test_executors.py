"""fctheory.sweep.executors: a unit of points becomes one row per point, values equal to direct calls,
failures recorded in the row (not raised), and the executor chosen from the spec."""

import platform

import numpy as np
import pytest

import fctheory as fc
from fctheory.sweep import load_spec
from fctheory.sweep.executors import LocalExecutor, make_executor, run_unit, versions


def test_run_unit_rows_equal_direct_calls():
    pts = [("a", dict(n_c=3, n_w=12, L=2, K=4)), ("b", dict(n_c=3, n_w=12, L=2, K=9))]
    rows = run_unit("lambda_trivial", "points", pts)
    assert [r["point_id"] for r in rows] == ["a", "b"] and all(r["status"] == "ok" for r in rows)
    for (_, p), r in zip(pts, rows):
        assert r["value"] == fc.lambda_trivial(**p) and r["batch_size"] == 1 and r["K"] == p["K"]


def test_a_failing_point_is_recorded_in_its_row():
    rows = run_unit("lambda_trivial", "points", [("bad", dict(n_c=3, n_w=12, L=2, K=10))])
    assert rows[0]["status"] == "error" and "K=10" in rows[0]["error"] and "FCTheoryError" in rows[0]["error"]


def test_versions_names_the_library_numpy_and_python():
    v = versions()
    assert v == f"fctheory {fc.__version__}; numpy {np.__version__}; python {platform.python_version()}"


def test_make_executor_is_local_unless_dask_is_asked_for():
    spec = load_spec(
        {"target": "tau", "workers": 1, "fixed": {"n_c": 3, "n_w": 6, "L": 2, "K": 4}, "grid": {"lam": [0.1]}}
    )
    assert isinstance(make_executor(spec), LocalExecutor)


@pytest.mark.parametrize("K", [4, 9])
def test_batch_unit_of_train_points_gives_one_row_per_point(K):
    p = dict(
        n_c=3,
        s_c=2,
        L=2,
        K=K,
        n_spl=2,
        d=3,
        epochs=2,
        batch=4,
        dtype="float64",
        backend="numpy",
        init_scale=0.5,
        n_test=1,
        lam=1e-3,
        seed=0,
    )
    rows = run_unit("train", "batch", [("x", p), ("y", {**p, "seed": 1})])
    assert [r["point_id"] for r in rows] == ["x", "y"] and all(r["batch_size"] == 2 for r in rows)
    assert all(r["status"] == "ok" for r in rows), [r["error"] for r in rows]
