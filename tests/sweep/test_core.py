"""fctheory.sweep: specs, resumable Parquet tables, local vs Dask executors, batching, plots, CLI."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import fctheory as fc
from fctheory.sweep import read_table

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")
distributed = pytest.importorskip("distributed")

TRAIN_FIXED = dict(
    n_c=3, s_c=3, L=3, K=8, n_spl=4, d=4, epochs=3, batch=6, dtype="float64", backend="numpy", init_scale=0.5, n_test=2
)
VOLATILE = ["wall_time", "batch_size"]


@pytest.fixture(scope="module")
def client():
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as c,
        distributed.Client(c) as cl,
    ):
        yield cl


def _train_spec(out, **kw):
    return {
        "target": "train",
        "output": str(out),
        "workers": 1,
        "fixed": dict(TRAIN_FIXED),
        "grid": {"lam": [1e-3, 1e-2]},
        "seeds": [0, 1, 2],
        **kw,
    }


def test_predictor_sweep_values_equal_direct_calls(tmp_path):
    lam = [1e-3, 1e-2, 1e-1]
    t = fc.sweep(
        {
            "target": "tau",
            "workers": 1,
            "output": str(tmp_path / "t"),
            "fixed": {"n_c": 3, "s_c": 5, "L": 3},
            "grid": {"lam": lam, "K": [4, 27]},
        }
    )
    assert t.attrs["complete"] and len(t) == 6 and (t["status"] == "ok").all()
    for _, row in t.iterrows():  # n_w defaults to n_c·s_c
        assert row["value"] == fc.tau(n_c=3, n_w=15, L=3, K=int(row["K"]), lam=row["lam"])
    assert list(t["lam"]) == [1e-3, 1e-3, 1e-2, 1e-2, 1e-1, 1e-1]  # spec order, last axis fastest


def test_failing_points_are_recorded_not_raised(tmp_path):
    t = fc.sweep(
        {
            "target": "predict_type3",
            "workers": 1,
            "output": str(tmp_path / "t3"),
            "fixed": {"n_c": 3, "s_c": 4, "L": 2, "zipf": 1.0},
            "grid": {"lam": [0.01, 5.0]},
        }
    )
    assert list(t["status"]) == ["ok", "error"]
    assert "lambda_max" in t["error"].iloc[1]


def test_train_sweep_rows_equal_sequential_train(tmp_path):
    t = fc.sweep(_train_spec(tmp_path / "s", grid={"lam": [1e-2]}, seeds=[1]))
    task = fc.Task.random(3, 3, 3, 8, seed=np.random.default_rng([0, 0]))
    kw = {k: v for k, v in TRAIN_FIXED.items() if k not in ("n_c", "s_c", "L", "K", "n_spl")}
    run = fc.train(task, n_spl=4, lam_W=1e-2, lam_U=1e-2, seed=1, **kw)
    assert abs(t["train_ce"].iloc[0] - run.measurements.train_ce) <= 1e-12 * run.measurements.train_ce
    assert t["final_test_acc"].iloc[0] == run.final_test_acc


def test_lambda_seed_training_sweep_same_table_local_and_dask(tmp_path, client):
    local = fc.sweep(_train_spec(tmp_path / "local"))
    dask = fc.sweep(_train_spec(tmp_path / "dask", executor="dask"), client=client)
    assert len(local) == 6 and local.attrs["complete"]
    assert (local["batch_size"] > 1).any()  # compatible points were trained as batches
    pd.testing.assert_frame_equal(local.drop(columns=VOLATILE), dask.drop(columns=VOLATILE))


def test_batched_and_one_by_one_give_the_same_rows(tmp_path):
    a = fc.sweep(_train_spec(tmp_path / "a"))
    b = fc.sweep(_train_spec(tmp_path / "b", batch=False))
    assert (b["batch_size"] == 1).all()
    for col in ("final_loss", "train_ce", "W_norm_mean", "U_norm_mean"):
        np.testing.assert_allclose(a[col], b[col], rtol=1e-12, atol=0)


def test_interrupted_sweep_resumes_with_only_the_missing_points(tmp_path):
    spec = _train_spec(tmp_path / "r", batch=False)
    part = fc.sweep(spec, max_points=2)
    assert len(part) == 2 and not part.attrs["complete"]
    done = set(part["point_id"])
    full = fc.sweep(spec)
    assert full.attrs["complete"] and len(full) == 6 and full.attrs["ran"] == 4
    again = fc.sweep(spec)
    assert again.attrs["ran"] == 0
    ref = fc.sweep(_train_spec(tmp_path / "ref", batch=False))
    pd.testing.assert_frame_equal(full.drop(columns=VOLATILE), ref.drop(columns=VOLATILE))
    assert done < set(full["point_id"])
    assert len(read_table(str(tmp_path / "r"))) == 6


@pytest.mark.slow  # two fresh interpreters (~12 s); the in-process interruption test above is the fast one
def test_killed_sweep_reruns_only_unfinished_points(tmp_path):
    """A real SIGKILL midway: points already flushed to part files are not run again."""
    (tmp_path / "slowmod.py").write_text(
        textwrap.dedent("""
        import os, time
        def slow(x, log):
            with open(log, "a") as f:
                f.write(f"{x}\\n")
            time.sleep(0.15)
            return {"y": 2 * x}
    """)
    )
    log = tmp_path / "calls.txt"
    (tmp_path / "spec.toml").write_text(
        textwrap.dedent(f"""
        target = "slowmod:slow"
        output = "out"
        workers = 1
        chunk = 1
        [fixed]
        log = "{log}"
        [grid]
        x = {list(range(16))}
    """)
    )
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    cmd = [sys.executable, "-m", "fctheory", "sweep", str(tmp_path / "spec.toml"), "--no-progress"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    parts = tmp_path / "out" / "parts"
    t0 = time.time()
    while time.time() - t0 < 60 and not (parts.exists() and any(parts.glob("part-*.parquet"))):
        time.sleep(0.05)
    time.sleep(0.3)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    flushed = set(read_table(str(tmp_path / "out"))["x"])
    assert 0 < len(flushed) < 16
    log.write_text("")
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rerun = {int(v) for v in log.read_text().split()}
    assert rerun == set(range(16)) - flushed
    t = read_table(str(tmp_path / "out"))
    assert sorted(t["x"]) == list(range(16)) and (t["y"] == 2 * t["x"]).all()
