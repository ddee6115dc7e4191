"""The shared loop's schedule and history (fctheory/trainer/loop.py)."""

from __future__ import annotations

import numpy as np

from fctheory.io.checkpoint import HISTORY_KEYS
from fctheory.trainer.loop import History, eval_period, scheduled


def test_schedule_evaluates_the_first_every_kth_and_the_last_epoch():
    every, epochs = 3, 10
    assert [e for e in range(1, epochs + 1) if scheduled(e, every, epochs)] == [1, 3, 6, 9, 10]


def test_default_evaluation_period_is_a_twentieth_of_the_epochs_and_at_least_one():
    assert [eval_period(None, n) for n in (0, 19, 20, 100)] == [1, 1, 1, 5]
    assert eval_period(7, 100) == 7


def test_history_rows_become_float64_arrays_in_the_checkpoint_key_order():
    h = History()
    h.append(1, 2.5, 0.5, float("nan"), float("nan"), 0.1)
    h.append(2, 2.0, 0.75, 1.0, 0.2, 0.2)
    h.forget_last_evaluation()
    out = h.arrays()
    assert tuple(out) == HISTORY_KEYS and all(v.dtype == np.float64 for v in out.values())
    assert np.isnan(out["test_acc"]).all() and out["train_acc"].tolist() == [0.5, 0.75]
