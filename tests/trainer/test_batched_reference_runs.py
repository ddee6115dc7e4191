"""``train_batched`` reproduces the batches recorded before the trainer's loop and engines were merged, to rounding
(the tolerance derived per run, as in test_core_reference_runs.py)."""

from __future__ import annotations

import re

import pytest

import fctheory as fc
from fctheory.trainer.batched import train_batched

from .reference_runs import TASK, arrays, batched_cases, lr_perturbed, rounding_tolerance
from .test_core_reference_runs import RECORDED, assert_recorded

CASES = list(batched_cases())


@pytest.mark.parametrize(("name", "kw"), CASES, ids=[n for n, _ in CASES])
def test_every_run_of_the_batch_is_the_recorded_run_to_rounding(name, kw):
    runs = train_batched(TASK, **kw)
    perturbed = train_batched(TASK, **lr_perturbed(kw))
    for r, (run, other) in enumerate(zip(runs, perturbed, strict=True)):
        if f"{name}/{r}/error" in RECORDED.files:  # the recorded run diverged: so must this one, at the same epoch
            assert isinstance(run, fc.FCTheoryError)
            epoch = re.search(r"at epoch (\d+)", str(RECORDED[f"{name}/{r}/error"])).group(1)
            assert f"at epoch {epoch})" in str(run) and str(run).startswith("lr=")
        else:
            got = arrays(f"{name}/{r}", run)
            tol = rounding_tolerance(kw, got, arrays(f"{name}/{r}", other))
            assert_recorded(f"{name}/{r}", got, tol)
