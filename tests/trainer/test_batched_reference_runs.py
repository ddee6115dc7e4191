"""``train_batched`` reproduces, bit for bit, the batches recorded before the trainer's loop and engines were merged."""

from __future__ import annotations

import re

import pytest

import fctheory as fc
from fctheory.trainer.batched import train_batched

from .reference_runs import TASK, arrays, batched_cases
from .test_core_reference_runs import RECORDED, assert_recorded

CASES = list(batched_cases())


@pytest.mark.parametrize(("name", "kw"), CASES, ids=[n for n, _ in CASES])
def test_every_run_of_the_batch_is_bitwise_the_recorded_run(name, kw):
    for r, run in enumerate(train_batched(TASK, **kw)):
        if f"{name}/{r}/error" in RECORDED.files:  # the recorded run diverged: so must this one, at the same epoch
            assert isinstance(run, fc.FCTheoryError)
            epoch = re.search(r"at epoch (\d+)", str(RECORDED[f"{name}/{r}/error"])).group(1)
            assert f"at epoch {epoch})" in str(run) and str(run).startswith("lr=")
        else:
            assert_recorded(f"{name}/{r}", arrays(f"{name}/{r}", run))
