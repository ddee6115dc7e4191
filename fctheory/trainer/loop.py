"""The SGD loop shared by :func:`fctheory.train` (one run) and :func:`fctheory.train_batched` (R runs).

Per epoch e (1-based e1 = e + 1): every live run's shuffle ``default_rng([seed, 4, e])``, one engine epoch for
all runs, the divergence check (non-finite loss or weights), the test evaluation on the schedule (the first, every
``eval_every``-th and the last epoch), one history row per live run, the progress bar, then the caller's
``after_epoch`` hook (snapshots, callback, periodic checkpoints) and, after a Ctrl-C, its ``on_interrupt`` hook.
"""

from __future__ import annotations

import math
import signal
import threading
import time
from contextlib import nullcontext
from dataclasses import dataclass, field

import numpy as np

from .._errors import FCTheoryError
from .._validate import fail
from ..io.checkpoint import HISTORY_KEYS
from .data import permutation

__all__ = ["HISTORY_KEYS", "History", "eval_period", "scheduled", "diverged", "SigintFlag", "LoopState", "run_epochs"]


class History:
    """One run's per-epoch record: the lists of :data:`HISTORY_KEYS` (``epoch`` is 1-based)."""

    def __init__(self, rows: dict | None = None):
        self.rows = {k: list(rows[k]) if rows is not None else [] for k in HISTORY_KEYS}

    def append(self, *values) -> None:
        """One epoch's row, in the order of :data:`HISTORY_KEYS`."""
        for k, v in zip(HISTORY_KEYS, values):
            self.rows[k].append(v)

    def forget_last_evaluation(self) -> None:
        """Drop the test results of the last row (a run evaluates the epoch it stops at, off schedule)."""
        self.rows["test_acc"][-1] = self.rows["test_loss"][-1] = float("nan")

    def last(self) -> dict:
        return {k: v[-1] for k, v in self.rows.items()}

    def arrays(self) -> dict:
        """The history as float64 arrays (what :class:`fctheory.trainer.TrainRun` holds)."""
        return {k: np.asarray(v, dtype=np.float64) for k, v in self.rows.items()}


def eval_period(eval_every, epochs: int) -> int:
    """Evaluate every this many epochs: ``eval_every``, default epochs//20 (at least 1)."""
    return eval_every or max(1, epochs // 20)


def scheduled(e1: int, every: int, epochs: int) -> bool:
    """Whether (1-based) epoch e1 evaluates the test set: the first, every ``every``-th and the last."""
    return e1 % every == 0 or e1 == 1 or e1 == epochs


def diverged(lr: float, init_scale: float, e1: int) -> FCTheoryError:
    """The error of a run whose loss or weights stopped being finite at epoch e1."""
    try:
        fail(
            "lr",
            lr,
            f"training diverged (non-finite loss or weights at epoch {e1}); "
            f"use a smaller lr (or init_scale={init_scale:g})",
        )
    except FCTheoryError as exc:
        return exc


class SigintFlag:
    """Turn the first Ctrl-C into a flag checked between epochs (a second one interrupts at once)."""

    def __init__(self):
        self.hit = False
        self._old = None

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self._old = signal.getsignal(signal.SIGINT)

            def handler(signum, frame):
                self.hit = True
                signal.signal(signal.SIGINT, self._old)  # a second Ctrl-C acts normally

            signal.signal(signal.SIGINT, handler)
        return self

    def __exit__(self, *exc):
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)
        return False


@dataclass
class LoopState:
    """Everything the loop reads and writes besides the engine.

    ``cfgs`` are the runs' configurations (seed, lr, init_scale per run; epochs, n_test shared), ``histories``
    their records (resumed ones already hold their rows), ``failed`` the error of every diverged run (None
    while alive), ``errors`` "raise" (raise the first divergence) or "return" (record it and go on).
    """

    cfgs: list
    histories: list
    n_train: int
    n_test: int
    start: int = 0
    wall0: float = 0.0
    errors: str = "raise"
    failed: list = field(default_factory=list)

    def __post_init__(self):
        self.failed = self.failed or [None] * len(self.cfgs)
        self.epochs = self.cfgs[0].epochs
        self.every = eval_period(self.cfgs[0].eval_every, self.epochs)


def _record(engine, state, e1, loss_sum, correct, elapsed):
    """Divergence check, evaluation and history row of every live run after epoch e1."""
    fin = engine.finite()
    evaluate = state.n_test and scheduled(e1, state.every, state.epochs)
    for r, cfg in enumerate(state.cfgs):
        if state.failed[r] is not None:
            continue
        loss = float(loss_sum[r]) / state.n_train
        if not (math.isfinite(loss) and fin[r]):
            state.failed[r] = diverged(cfg.lr, cfg.init_scale, e1)
            if state.errors == "raise":
                raise state.failed[r]
            continue
        test_acc = test_loss = float("nan")
        if evaluate:
            tl, tc = engine.evaluate(r)
            test_acc, test_loss = tc / state.n_test, tl / state.n_test
        state.histories[r].append(e1, loss, int(correct[r]) / state.n_train, test_acc, test_loss, elapsed)


def _progress_bar(progress, state):
    if not progress:
        return None
    from tqdm.auto import tqdm  # noqa: PLC0415 - optional dependency

    R = len(state.cfgs)
    return tqdm(
        total=state.epochs,
        initial=state.start,
        unit="epoch",
        dynamic_ncols=True,
        leave=True,
        desc=f"{R} runs" if R > 1 else None,
    )


def _advance_bar(bar, state):
    """One step of the bar; one run shows its loss and accuracies."""
    if len(state.cfgs) == 1 and state.failed[0] is None:
        row = state.histories[0].last()
        post = {"loss": f"{row['loss']:.4g}", "train": f"{100 * row['train_acc']:.1f}%"}
        if not math.isnan(row["test_acc"]):
            bar.last_test = f"{100 * row['test_acc']:.1f}%"
        if getattr(bar, "last_test", None):
            post["test"] = bar.last_test
        bar.set_postfix(post, refresh=False)
    bar.update(1)


def run_epochs(engine, state: LoopState, *, progress=False, after_epoch=None, on_interrupt=None) -> float:
    """Train ``state``'s runs from epoch ``state.start`` to ``epochs``; returns the seconds spent (plus wall0).

    ``after_epoch(e1, elapsed)`` runs after every epoch; with ``on_interrupt`` given, the first Ctrl-C lets the
    epoch finish and then calls ``on_interrupt(e1, elapsed)`` (which is expected to raise).
    """
    bar = _progress_bar(progress, state)
    seeds = [c.seed for c in state.cfgs]
    t0 = time.perf_counter()
    try:
        with SigintFlag() if on_interrupt is not None else nullcontext() as flag, engine.threads():
            for epoch in range(state.start, state.epochs):
                perms = np.stack([permutation(s, epoch, state.n_train) for s in seeds])
                loss_sum, correct = engine.epoch(perms)
                e1 = epoch + 1
                _record(engine, state, e1, loss_sum, correct, state.wall0 + time.perf_counter() - t0)
                if bar is not None:
                    _advance_bar(bar, state)
                elapsed = state.wall0 + time.perf_counter() - t0
                if after_epoch is not None:
                    after_epoch(e1, elapsed)
                if flag is not None and flag.hit and e1 < state.epochs:
                    on_interrupt(e1, elapsed)
    finally:
        if bar is not None:
            bar.close()
    return state.wall0 + time.perf_counter() - t0
