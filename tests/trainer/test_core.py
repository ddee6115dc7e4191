"""``train`` reproduces, bit for bit, the runs recorded from the trainer before its loop and engines were merged."""

from __future__ import annotations

import numpy as np
import pytest

import fctheory as fc

from .reference_runs import DATA, TASK, arrays, resumed_run, train_cases

RECORDED = np.load(DATA)


def assert_recorded(prefix, got):
    keys = [k for k in RECORDED.files if k.startswith(prefix + "/")]
    assert keys and sorted(keys) == sorted(got)
    for k in keys:  # exact equality (NaN where not evaluated)
        assert got[k].dtype == RECORDED[k].dtype and np.array_equal(got[k], RECORDED[k], equal_nan=True), k


@pytest.mark.parametrize(("name", "kw"), list(train_cases()), ids=[n for n, _ in train_cases()])
def test_train_is_bitwise_the_recorded_run(name, kw):
    assert_recorded(name, arrays(name, fc.train(TASK, **kw)))


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_resumed_train_is_bitwise_the_recorded_run(backend, tmp_path):
    assert_recorded(f"resume-{backend}", arrays(f"resume-{backend}", resumed_run(backend, str(tmp_path))))
