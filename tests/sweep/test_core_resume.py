"""Resuming a sweep (``fctheory.sweep``): finished points are never recomputed, failed points only when
``retry_errors=True``, and the final table is the one an uninterrupted run writes.

The target is a plain function in a module written to ``tmp_path`` that records every call it gets
(``workers = 1`` runs the points in this process, one point per unit with ``chunk = 1``), so the tests
count exactly which points ran.
"""

import importlib
import itertools

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
