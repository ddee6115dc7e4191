"""Resuming a sweep (``fctheory.sweep``): finished points are never recomputed, failed points only when
``retry_errors=True``, and the final table is the one an uninterrupted run writes.

The target is a plain function in a module written to ``tmp_path`` that records every call it gets
(``workers = 1`` runs the points in this process, one point per unit with ``chunk = 1``), so the tests
count exactly which points ran.
"""

import importlib
import itertools

import numpy as np
import pytest

import fctheory as fc

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

XS = list(range(8))
_names = itertools.count()

TARGET_SOURCE = """
CALLS = []
BAD = set()


def f(x, scale=1.0):
    CALLS.append(x)
    if x in BAD:
        raise RuntimeError(f"planted failure at x={x}")
    return {"y": scale * x * x, "z": x + 0.5}
"""


@pytest.fixture
def target(tmp_path, monkeypatch):
    """A fresh counting target module (its own name: nothing cached between tests)."""
    name = f"sweep_resume_target_{next(_names)}_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(TARGET_SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    return importlib.import_module(name)


def _spec(target, out):
    return {
        "target": f"{target.__name__}:f",
        "output": str(out),
        "workers": 1,
        "chunk": 1,
        "fixed": {"scale": 2.0},
        "grid": {"x": XS},
    }


def _run(target, out, **kw):
    target.CALLS.clear()
    t = fc.sweep(_spec(target, out), progress=False, **kw)
    return t, list(target.CALLS)


def _same_table(a, b):
    pd.testing.assert_frame_equal(a.drop(columns=["wall_time"]), b.drop(columns=["wall_time"]))


def test_uninterrupted_run_computes_every_point_once_in_spec_order(target, tmp_path):
    t, calls = _run(target, tmp_path / "ref")
    assert calls == XS
    assert list(t["x"]) == XS and list(t["y"]) == [2.0 * x * x for x in XS]
    assert t.attrs["complete"] and t.attrs["ran"] == len(XS) and t.attrs["points"] == len(XS)


@pytest.mark.parametrize("retry_errors", [False, True])
@pytest.mark.parametrize("first", [0, 1, 3, 7])
def test_resume_runs_only_the_missing_points_and_gives_the_uninterrupted_table(target, tmp_path, first, retry_errors):
    ref, _ = _run(target, tmp_path / "ref")
    part, calls = _run(target, tmp_path / "r", max_points=first)
    assert calls == XS[:first] and len(part) == first
    assert part.attrs["ran"] == first and part.attrs["complete"] is False
    full, calls = _run(target, tmp_path / "r", retry_errors=retry_errors)
    assert calls == XS[first:]  # none of the finished points again
    assert full.attrs["ran"] == len(XS) - first and full.attrs["complete"]
    _same_table(full, ref)
    again, calls = _run(target, tmp_path / "r", retry_errors=retry_errors)
    assert calls == [] and again.attrs["ran"] == 0
    _same_table(again, ref)


def test_failed_points_count_as_finished_unless_retry_is_asked(target, tmp_path):
    ref, _ = _run(target, tmp_path / "ref")
    target.BAD.update({2, 5})
    t, calls = _run(target, tmp_path / "r")
    assert calls == XS
    assert list(t["status"]) == ["error" if x in (2, 5) else "ok" for x in XS]
    assert "planted failure at x=5" in t["error"].iloc[5]
    assert t.attrs["complete"]  # an error row is a finished point
    # without retry_errors: nothing runs, the error rows stay
    again, calls = _run(target, tmp_path / "r")
    assert calls == [] and list(again["status"]) == list(t["status"])
    # with retry_errors while the points still fail: only the failed points run, and stay errors
    still, calls = _run(target, tmp_path / "r", retry_errors=True)
    assert calls == [2, 5] and still.attrs["ran"] == 2
    assert list(still["status"]) == list(t["status"])
    # fixed: a retry recomputes exactly the failed points and gives the uninterrupted table
    target.BAD.clear()
    fixed, calls = _run(target, tmp_path / "r", retry_errors=True)
    assert calls == [2, 5] and fixed.attrs["ran"] == 2
    _same_table(fixed, ref)
    done, calls = _run(target, tmp_path / "r", retry_errors=True)
    assert calls == []
    _same_table(done, ref)


def test_interrupted_run_with_failures_resumes_to_the_uninterrupted_table(target, tmp_path):
    ref, _ = _run(target, tmp_path / "ref")
    target.BAD.add(1)
    part, calls = _run(target, tmp_path / "r", max_points=3)
    assert calls == [0, 1, 2] and list(part["status"]) == ["ok", "error", "ok"]
    rest, calls = _run(target, tmp_path / "r")  # no retry: the error row counts as finished
    assert calls == XS[3:] and rest.attrs["complete"] and rest["status"].iloc[1] == "error"
    target.BAD.clear()
    fixed, calls = _run(target, tmp_path / "r", retry_errors=True)
    assert calls == [1]
    _same_table(fixed, ref)


def test_without_an_output_folder_nothing_is_resumed(target, tmp_path):
    spec = {**_spec(target, tmp_path), "output": None}
    spec.pop("output")
    target.CALLS.clear()
    a = fc.sweep(spec, progress=False)
    b = fc.sweep(spec, progress=False)
    assert target.CALLS == XS + XS
    _same_table(a, b)
    assert list(a["x"]) == XS and a.attrs["complete"]


def test_a_run_that_finishes_no_point_leaves_a_resumable_folder(target, tmp_path):
    # max_points = 0 on a fresh folder plans the points and runs none; the folder must still resume
    t, calls = _run(target, tmp_path / "r", max_points=0)
    assert calls == [] and len(t) == 0 and t.attrs["complete"] is False and t.attrs["points"] == len(XS)
    full, calls = _run(target, tmp_path / "r")
    assert calls == XS and full.attrs["complete"]


SEEDED_SOURCE = """
def g(x, seed=None):
    return {"seed_seen": -1 if seed is None else seed}
"""


def test_points_are_planned_once_in_spec_order_with_a_seed_derived_from_their_id(tmp_path, monkeypatch):
    from fctheory.sweep.core import plan_points
    from fctheory.sweep.spec import load_spec, point_id
    from fctheory.sweep.targets import derived_seed

    name = f"sweep_seeded_target_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(SEEDED_SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = load_spec({"target": f"{name}:g", "workers": 1, "grid": {"x": [1, 2, 1, 3, 2]}})
    planned = plan_points(spec)
    assert [p["x"] for _, p in planned] == [1, 2, 3]  # duplicates removed, first occurrence kept
    for pid, p in planned:
        assert pid == point_id(f"{name}:g", {"x": p["x"]}) and p["seed"] == derived_seed(pid)
    assert len({p["seed"] for _, p in planned}) == 3
    t = fc.sweep({"target": f"{name}:g", "workers": 1, "grid": {"x": [1, 2, 1, 3, 2]}}, progress=False)
    assert list(t["seed_seen"]) == [p["seed"] for _, p in planned]
    given = fc.sweep({"target": f"{name}:g", "workers": 1, "fixed": {"seed": 7}, "grid": {"x": [1, 2]}}, progress=False)
    assert list(given["seed_seen"]) == [7, 7]


def test_a_target_without_a_seed_gets_none(target, tmp_path):
    t, _ = _run(target, tmp_path / "r")
    assert "seed" not in t.columns
    assert {"point_id", "x", "scale", "y", "z", "status", "error", "wall_time", "batch_size", "versions"} == set(
        t.columns
    )


TRAIN = dict(
    n_c=3,
    s_c=3,
    L=3,
    K=8,
    n_spl=4,
    epochs=2,
    batch=6,
    dtype="float64",
    backend="numpy",
    init_scale=0.5,
    n_test=2,
    lam=1e-2,
)


def test_compatible_train_points_run_in_batches_of_at_most_max_batch(tmp_path):
    # two batch groups (d = 3, 4), two seeds each: batches never mix groups and hold at most max_batch runs
    spec = {
        "target": "train",
        "workers": 1,
        "fixed": dict(TRAIN),
        "grid": {"d": [3, 4]},
        "seeds": [0, 1, 2],
        "max_batch": 2,
        "output": str(tmp_path / "t"),
    }
    t = fc.sweep(spec, progress=False)
    assert (t["status"] == "ok").all() and len(t) == 6
    assert set(t["batch_size"]) <= {1, 2} and (t["batch_size"] == 2).any()
    one = fc.sweep({**spec, "batch": False, "output": str(tmp_path / "one")}, progress=False)
    assert (one["batch_size"] == 1).all()
    np.testing.assert_allclose(t["train_ce"], one["train_ce"], rtol=1e-12)
