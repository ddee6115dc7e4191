"""How ``fctheory.sweep`` cuts its points into work units, and how the call's options override the spec.

``_units`` is checked directly on lists of placeholder points (it only slices them, except for ``train``
where it groups by :func:`fctheory.sweep.targets.train_batch_key`): each case fixes the expected unit sizes
from the documented rule (closed-form predictors in chunks of at least 256 points; other targets about
four units per worker, at most 64 points each; ``chunk`` overrides; ``train`` points in batches of at
most ``max_batch``, at least one per worker).
"""

from dataclasses import replace

import pytest

from fctheory.sweep.core import _overridden, _units, plan_points
from fctheory.sweep.spec import load_spec

TAU = {"target": "tau", "fixed": {"n_c": 3, "n_w": 6, "L": 2, "K": 9}, "grid": {"lam": [0.1]}}
TRAIN = dict(n_c=3, s_c=3, L=3, K=8, n_spl=4, epochs=2, batch=6, dtype="float64", backend="numpy", lam=1e-2)


def _todo(n):
    return [(f"p{i}", {"i": i}) for i in range(n)]


def _sizes(units, kind="points"):
    assert all(label == kind for label, _ in units)
    return [len(items) for _, items in units]


def _covers(units, todo):
    """The units hold every point once, in order."""
    assert [item for _, items in units for item in items] == todo


@pytest.fixture
def cheap():
    return load_spec(TAU)


@pytest.fixture
def costly():
    # train without batching: a target outside the closed-form predictors
    return load_spec({"target": "train", "batch": False, "fixed": dict(TRAIN), "grid": {"d": [3]}})


def test_closed_form_points_come_in_chunks_of_256(cheap):
    todo = _todo(1000)
    units = _units(cheap, todo, 1)
    assert _sizes(units) == [256, 256, 256, 232]
    _covers(units, todo)


def test_other_targets_come_in_chunks_of_at_most_64(costly):
    todo = _todo(1000)
    units = _units(costly, todo, 1)
    assert _sizes(units) == [64] * 15 + [40]
    _covers(units, todo)


def test_other_targets_make_about_four_units_per_worker(costly):
    todo = _todo(40)
    assert _sizes(_units(costly, todo, 2)) == [5] * 8  # ceil(40 / (4·2))
    assert _sizes(_units(costly, todo, 5)) == [2] * 20  # ceil(40 / (4·5))


def test_a_few_costly_points_run_one_per_unit(costly):
    todo = _todo(3)
    units = _units(costly, todo, 1)
    assert _sizes(units) == [1, 1, 1]
    _covers(units, todo)


def test_chunk_sets_the_unit_size(cheap, costly):
    todo = _todo(10)
    for spec in (cheap, costly):
        units = _units(replace(spec, chunk=3), todo, 4)
        assert _sizes(units) == [3, 3, 3, 1]
        _covers(units, todo)


def test_no_points_make_no_units(cheap):
    assert _units(cheap, [], 2) == []


def _train_todo(seeds, max_batch, d=(3,)):
    spec = load_spec(
        {"target": "train", "fixed": dict(TRAIN), "grid": {"d": list(d)}, "seeds": list(seeds), "max_batch": max_batch}
    )
    return spec, plan_points(spec)


def test_train_points_are_batched_by_at_most_max_batch_without_overlap():
    spec, todo = _train_todo(range(10), 4)
    units = _units(spec, todo, 1)
    assert _sizes(units, "batch") == [4, 4, 2]  # ceil(10/4) = 3 batches of ceil(10/3) = 4
    _covers(units, todo)


def test_train_points_make_at_least_one_batch_per_worker():
    spec, todo = _train_todo(range(6), 64)
    assert _sizes(_units(spec, todo, 3), "batch") == [2, 2, 2]
    assert _sizes(_units(spec, todo, 10), "batch") == [1] * 6


def test_train_batches_never_mix_groups():
    spec, todo = _train_todo(range(3), 64, d=(3, 4))
    units = _units(spec, todo, 1)
    assert _sizes(units, "batch") == [3, 3]
    assert [{p["d"] for _, p in items} for _, items in units] == [{3}, {4}]


# ----------------------------------------------------------------------------- call options over the spec
def test_an_address_selects_dask_at_that_address(cheap):
    s = _overridden(cheap, None, None, "tcp://127.0.0.1:8786")
    assert (s.executor, s.address, s.workers) == ("dask", "tcp://127.0.0.1:8786", None)
    assert replace(s, executor=cheap.executor, address=None) == cheap


def test_executor_and_workers_override_the_spec(cheap):
    s = _overridden(cheap, "dask", 3, None)
    assert (s.executor, s.address, s.workers) == ("dask", None, 3)
    assert _overridden(cheap, None, None, None) == cheap
