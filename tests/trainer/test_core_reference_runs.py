"""``train`` reproduces the runs recorded from the trainer before its loop and engines were merged, to rounding.

The tolerance is derived from each run (:func:`reference_runs.rounding_tolerance`: step count, longest sum, the
run's measured amplification), so the comparison holds on any CPU, BLAS build and thread count, while a change
of the algorithm (a wrong step, a missing term: relative effects ≥ 1e-9) exceeds it by orders of magnitude.
Bit-for-bit checks stay where determinism holds by construction (resume vs an uninterrupted run in one process:
tests/trainer/test_core_resume.py).
"""

from __future__ import annotations

import numpy as np
import pytest

import fctheory as fc
from fctheory._budget import estimate_seconds

from .reference_runs import (
    BASE,
    DATA,
    TASK,
    arrays,
    lr_perturbed,
    max_rel_diff,
    resumed_kw,
    resumed_run,
    rounding_tolerance,
    train_cases,
)

BASE_KW = dict(BASE, backend="numpy", seed=0)


class _Stop(Exception):
    pass


def _stop(epoch, info):
    raise _Stop


RECORDED = np.load(DATA)


def assert_recorded(prefix, got, tol):
    """The recorded arrays of ``prefix``: same keys, dtypes, shapes and NaN pattern (the epochs not evaluated),
    and values within ``tol`` relative (normwise per array)."""
    keys = [k for k in RECORDED.files if k.startswith(prefix + "/")]
    assert keys and sorted(keys) == sorted(got)
    for k in keys:
        g, r = got[k], RECORDED[k]
        assert g.dtype == r.dtype and g.shape == r.shape, k
        assert np.array_equal(np.isnan(g), np.isnan(r)), k
    diff = max_rel_diff(got, {k: RECORDED[k] for k in keys})
    assert diff <= tol, f"{prefix}: relative difference {diff:.2e} > rounding tolerance {tol:.2e}"


def test_rounding_tolerance_is_far_below_a_real_change_of_the_run():
    # a learning rate off by 1e-9 (relative), a change no rounding makes, must exceed the derived tolerance
    name, kw = next(iter(train_cases()))
    run = arrays(name, fc.train(TASK, **kw))
    tol = rounding_tolerance(kw, run, arrays(name, fc.train(TASK, **lr_perturbed(kw))))
    assert 1e-15 < tol < 1e-10
    off = arrays(name, fc.train(TASK, **dict(kw, lr=kw["lr"] * (1 + 1e-9))))
    assert max_rel_diff(off, run) > 10 * tol


@pytest.mark.parametrize(("name", "kw"), list(train_cases()), ids=[n for n, _ in train_cases()])
def test_train_is_the_recorded_run_to_rounding(name, kw):
    run = arrays(name, fc.train(TASK, **kw))
    tol = rounding_tolerance(kw, run, arrays(name, fc.train(TASK, **lr_perturbed(kw))))
    assert_recorded(name, run, tol)


def test_resumed_train_is_the_recorded_run_to_rounding(host_backend, tmp_path):
    name, kw = f"resume-{host_backend}", resumed_kw(host_backend)
    run = arrays(name, resumed_run(host_backend, str(tmp_path)))
    perturbed = arrays(name, resumed_run(host_backend, str(tmp_path), lr_perturbed(kw)))
    assert_recorded(name, run, rounding_tolerance(kw, run, perturbed))


def test_train_is_refused_exactly_when_the_shared_cost_model_exceeds_the_time_budget():
    kw = dict(BASE_KW, epochs=10**6)
    K, L = TASK.K, TASK.L
    est = estimate_seconds(backend="numpy", runs=1, epochs=10**6, n_train=K * 7, n_test=K * 3, batch=8, L=L, d=6, K=K)
    with fc.budget(max_seconds=est * 0.99), pytest.raises(fc.FCTheoryError, match="epochs=1000000"):
        fc.train(TASK, **kw)
    with fc.budget(max_seconds=est * 1.01, max_bytes=2**40):  # within the budget: refused for nothing else
        with pytest.raises(_Stop):
            fc.train(TASK, **kw, callback=_stop)
