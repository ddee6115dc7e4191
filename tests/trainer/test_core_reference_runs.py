"""``train`` reproduces, bit for bit, the runs recorded from the trainer before its loop and engines were merged."""

from __future__ import annotations

import numpy as np
import pytest

import fctheory as fc
from fctheory._budget import estimate_seconds

from .reference_runs import BASE, DATA, TASK, arrays, resumed_run, train_cases

BASE_KW = dict(BASE, backend="numpy", seed=0)


class _Stop(Exception):
    pass


def _stop(epoch, info):
    raise _Stop


RECORDED = np.load(DATA)


def assert_recorded(prefix, got):
    keys = [k for k in RECORDED.files if k.startswith(prefix + "/")]
    assert keys and sorted(keys) == sorted(got)
    for k in keys:  # exact equality (NaN where not evaluated)
        assert got[k].dtype == RECORDED[k].dtype and np.array_equal(got[k], RECORDED[k], equal_nan=True), k


@pytest.mark.parametrize(("name", "kw"), list(train_cases()), ids=[n for n, _ in train_cases()])
def test_train_is_bitwise_the_recorded_run(name, kw):
    assert_recorded(name, arrays(name, fc.train(TASK, **kw)))


def test_resumed_train_is_bitwise_the_recorded_run(host_backend, tmp_path):
    name = f"resume-{host_backend}"
    assert_recorded(name, arrays(name, resumed_run(host_backend, str(tmp_path))))


def test_train_is_refused_exactly_when_the_shared_cost_model_exceeds_the_time_budget():
    kw = dict(BASE_KW, epochs=10**6)
    K, L = TASK.K, TASK.L
    est = estimate_seconds(backend="numpy", runs=1, epochs=10**6, n_train=K * 7, n_test=K * 3, batch=8, L=L, d=6, K=K)
    with fc.budget(max_seconds=est * 0.99), pytest.raises(fc.FCTheoryError, match="epochs=1000000"):
        fc.train(TASK, **kw)
    with fc.budget(max_seconds=est * 1.01, max_bytes=2**40):  # within the budget: refused for nothing else
        with pytest.raises(_Stop):
            fc.train(TASK, **kw, callback=_stop)
