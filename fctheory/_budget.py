"""The work and memory budget: every request is sized *before* anything is allocated or enumerated.

Defaults (documented in docs/api.md, "Domains and errors"): 2 GiB of working memory, 600 s of
estimated compute, 10**8 enumerated items. Change them for a process with :func:`set_budget`, for a
block with ``with budget(max_bytes=...)``, or from the environment (``FCTHEORY_MAX_BYTES``,
``FCTHEORY_MAX_SECONDS``, ``FCTHEORY_MAX_ITEMS``). Functions with their own ``max_bytes``/``max_seconds``
arguments use those when given and the budget otherwise.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
from dataclasses import dataclass, replace

from ._errors import FCTheoryError
from ._validate import Real, fail, public, result_type

_LIMIT = Real(lo=0, lo_open=True, inf_ok=True).or_none()

__all__ = ["Budget", "get_budget", "set_budget", "budget", "check_work", "log_size"]


@result_type
@dataclass(frozen=True)
class Budget:
    """Limits on one request: working memory (bytes), estimated time (s) and enumerated items."""

    max_bytes: float = 2 * 2**30
    max_seconds: float = 600.0
    max_items: float = 1e8


def _from_env() -> Budget:
    b = Budget()
    for field, env in (
        ("max_bytes", "FCTHEORY_MAX_BYTES"),
        ("max_seconds", "FCTHEORY_MAX_SECONDS"),
        ("max_items", "FCTHEORY_MAX_ITEMS"),
    ):
        raw = os.environ.get(env)
        if raw:
            try:
                v = float(raw)
            except ValueError:
                raise FCTheoryError(f"{env}={raw!r} is invalid: must be a positive number") from None
            if not (v > 0):
                raise FCTheoryError(f"{env}={raw!r} is invalid: must be a positive number")
            b = replace(b, **{field: v})
    return b


_state = threading.local()
_global: list[Budget] = []


@public()
def get_budget() -> Budget:
    """The budget in force (innermost ``with budget(...)`` block, else :func:`set_budget`, else env/defaults)."""
    stack = getattr(_state, "stack", None)
    if stack:
        return stack[-1]
    if not _global:
        _global.append(_from_env())
    return _global[0]


def _checked(**limits) -> dict:
    out = {}
    for k, v in limits.items():
        if v is None:
            continue
        if k not in ("max_bytes", "max_seconds", "max_items"):
            raise FCTheoryError(f"{k} is invalid: budget fields are max_bytes, max_seconds, max_items")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not (v > 0) or math.isnan(v):
            raise FCTheoryError(f"{k}={v!r} is invalid: must be a positive number (inf for no limit)")
        out[k] = float(v)
    return out


@public(max_bytes=_LIMIT, max_seconds=_LIMIT, max_items=_LIMIT)
def set_budget(*, max_bytes=None, max_seconds=None, max_items=None) -> Budget:
    """Set the process-wide budget (fields left None keep their value); returns the new budget."""
    new = replace(
        get_budget() if not _global else _global[0],
        **_checked(max_bytes=max_bytes, max_seconds=max_seconds, max_items=max_items),
    )
    _global[:] = [new]
    return new


@public(max_bytes=_LIMIT, max_seconds=_LIMIT, max_items=_LIMIT)
@contextlib.contextmanager
def budget(*, max_bytes=None, max_seconds=None, max_items=None):
    """``with budget(max_bytes=8 * 2**30): ...`` — a temporary budget for this thread."""
    new = replace(get_budget(), **_checked(max_bytes=max_bytes, max_seconds=max_seconds, max_items=max_items))
    stack = getattr(_state, "stack", None)
    if stack is None:
        stack = _state.stack = []
    stack.append(new)
    try:
        yield new
    finally:
        stack.pop()


def log_size(*factors) -> float:
    """log of a product of positive sizes (ints of any size, floats), without forming the product."""
    total = 0.0
    for f in factors:
        f = int(f) if isinstance(f, bool) is False and float(f).is_integer() else float(f)
        if f <= 0:
            return -math.inf
        total += math.log(f)
    return total


def check_work(name: str, value, *, items=None, bytes=None, seconds=None, what: str = "this request") -> None:
    """Refuse a request whose estimated items/bytes/seconds exceed the budget in force.

    Sizes may be given as exact ints (any size), floats, or ``("log", x)`` for a size known only by its
    log. The message names the parameter, the estimate, the limit and how to raise it.
    """
    b = get_budget()

    def over(est, limit):
        if est is None:
            return False
        if isinstance(est, tuple):
            return est[1] > math.log(limit) if math.isfinite(limit) else False
        return est > limit

    def show(est):
        if isinstance(est, tuple):
            return f"e^{est[1]:.4g}" if est[1] > 700 else f"{math.exp(est[1]):.3g}"
        return f"{float(est):.3g}" if est < 1e308 else "> 1e308"

    for est, limit, unit, field in (
        (items, b.max_items, "items", "max_items"),
        (bytes, b.max_bytes, "bytes", "max_bytes"),
        (seconds, b.max_seconds, "s", "max_seconds"),
    ):
        if over(est, limit):
            fail(
                name,
                value,
                f"{what} needs about {show(est)} {unit}, over the budget {field}={limit:.3g} "
                f"(raise it with fctheory.set_budget({field}=...) or FCTHEORY_{field.upper()})",
            )


# ----------------------------------------------------------------------------- cost model of the trainer
#: Seconds per unit of work of :func:`fctheory.train` and :func:`fctheory.train_batched` (one model for both,
#: :func:`estimate_seconds`). Lower bounds on purpose, so that the budget refuses only absurd requests; each
#: constant sits below what its benchmark measured (docs/performance.md):
#:
#: * ``flop`` — ``benchmarks/trainer.py`` (fig3 shape, 4.5e10 flops per epoch): numba float32 took 0.58 s per
#:   epoch on an idle 2-core machine (1.3e-11 s/flop), numpy about the same; ``benchmarks/sweep.py --backend
#:   cupy --shape fig3``: ≈ 10 TFLOP/s on an H100 (1e-13 s/flop);
#: * ``sgd_step`` — the per-step overhead beyond the products, ``benchmarks/sweep.py --shape small`` (0.2–0.7 ms
#:   per sequential step there, products included); on cupy it is per *batched* step (every run of the batch
#:   in the same ~25 kernel launches), elsewhere per run and step;
#: * ``epoch`` — the loop's bookkeeping per epoch;
#: * ``measure_sentence`` (the final measurements, per sentence) and ``sample_word`` (drawing the sentences, per
#:   word) — ``benchmarks/sweep.py --shape small`` on the 2-core reference machine;
#: * ``pair_madd`` — one multiply-add of the NC metrics' tiles of class pairs (``fctheory.metrics.pairs``: the
#:   tiles' float64 GEMMs and their compiled pass): K = 32,768, d = 768 took 41 s of CPU for 4.1e11 multiply-adds
#:   (1e-10 s each, the pass included) on the 2-core machine (``benchmarks/torch_monitor_peers.py``); the bound
#:   below is 4× lower.
COST = {
    "flop": {"numba": 1e-11, "numpy": 1e-11, "cupy": 1e-13},
    "sgd_step": {"numba": 3e-7, "numpy": 1e-5, "cupy": 2e-5},
    "epoch": 1e-6,
    "measure_sentence": 6e-6,
    "sample_word": 5e-8,
    "pair_madd": 2.5e-11,
}


def estimate_seconds(
    *,
    backend: str,
    runs: int,
    epochs: int,
    n_train: int,
    n_test: int,
    batch: int,
    L: int,
    d: int,
    K: int,
    measured: int = 0,
    sampled_words: int = 0,
) -> float:
    """Lower-bound seconds of training ``runs`` runs of one shape for ``epochs`` epochs (the :data:`COST` model).

    Per run and epoch: the three products of every SGD step (6·L·d·K flops per training sentence) and the test
    evaluation (2·L·d·K flops per test sentence), plus ``sgd_step`` per step; ``measured`` sentences per run
    measured at the end and ``sampled_words`` words drawn in all.
    """
    steps = -(-n_train // max(1, min(batch, n_train)))
    flops = 6 * n_train * L * d * K + 2 * n_test * L * d * K
    step_runs = 1 if backend == "cupy" else runs  # cupy: one batched step for all runs
    per_epoch = COST["epoch"] + steps * step_runs * COST["sgd_step"][backend] + runs * flops * COST["flop"][backend]
    return epochs * per_epoch + runs * measured * COST["measure_sentence"] + sampled_words * COST["sample_word"]
