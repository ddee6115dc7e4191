"""The exact engine's plan, made before anything is allocated: the cost model (time and peak memory of one
evaluation), the tiles of prefix and suffix groups and the class blocks that fit the memory budget, and the
refusal of a request over the budget. Sizes are exact integers throughout (s_c^L may be far beyond the float
range: such a request gets ``seconds = inf`` and no tiles, and is refused).

:func:`estimate_cost` is the public entry point; :func:`estimate`, :func:`check_budget` and
:func:`resolve_budget` are what repeated callers of the engine (the certified optima, the minimiser, the
distributed evaluation) use to plan once. :data:`LIMIT`, :data:`WORKERS` and :data:`BACKEND` are the kinds of the
engine's options, :data:`SCORE_MAX` the largest score its exponentials take in float64.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from .._budget import get_budget
from .._validate import Bool, Choice, Instance, Int, Real, fail, public, result_type
from ..task import Task
from ._blocks import _FALLBACK_CHUNK
from ._layout import _layout, _split

__all__ = [
    "CostEstimate",
    "estimate_cost",
    "estimate",
    "check_budget",
    "resolve_budget",
    "default_workers",
    "DEFAULT_MAX_SECONDS",
    "DEFAULT_MAX_BYTES",
    "BACKEND",
    "LIMIT",
    "WORKERS",
    "SCORE_MAX",
    "RATES",
]

#: the default budget (fctheory.get_budget(): 10 minutes, 2 GiB) — kept for reference; the functions
#: take ``max_seconds=None``/``max_bytes=None`` to mean "the budget in force" (fctheory.set_budget)
DEFAULT_MAX_SECONDS = 600.0
DEFAULT_MAX_BYTES = 2 * 1024**3

# kinds shared by every entry point of the engine
BACKEND = Choice("numpy", "numba", "cupy")
#: a positive limit; inf means "no limit"; None means "the budget in force"
LIMIT = Real(lo=0.0, lo_open=True, inf_ok=True).or_none()
WORKERS = Int(min=1, max=1024).or_none()
# largest |score| (L·max|⟨u, v⟩|) the engine accepts: differences of scores and their softplus stay finite
SCORE_MAX = 1e300

# bytes of Python objects and array headers an evaluation holds besides its arrays (tuples of the work
# units, index arrays of each class block), measured with tracemalloc: ~16 KiB
_PY_OVERHEAD = 24 * 1024
# and the thread pool of several workers (threads, futures, frames): ~17 KiB measured
_POOL_OVERHEAD = 24 * 1024

# the larger floor the plan takes when its reserve (≤ 4 MiB per worker) fits the budget beside the same tiles:
# 16× fewer calls on small tasks whose every entry needs the recomputation
_FALLBACK_CHUNK_BIG = 1 << 16

# cost model of estimate_cost (seconds per unit), fitted to benchmarks/exact_risk.py on the
# reference machine (2 cores shared with other jobs: ~16 GFLOP/s reached in the products); the
# CuPy figures are rough guesses for a data-centre GPU
RATES = {
    "host": dict(flop=6e-11, entry=3e-8, base=1e-8, per_class=4e-5, per_class_grad=8e-5),
    "cupy": dict(flop=2e-13, entry=5e-10, base=1e-10, per_class=1.5e-4, per_class_grad=3e-4),
}


@result_type
@dataclass(frozen=True)
class CostEstimate:
    """Predicted cost of one exact risk evaluation (before anything is allocated).

    Attributes
    ----------
    seconds : float
        Estimated wall time (cost model in :data:`RATES`; excludes log-space fallbacks, which only
        occur for extreme weights).
    bytes : int
        Peak working memory of the evaluation, in bytes: tiles and blocks, plus the host's transients
        (NumPy's iterator buffers, Python objects). An upper bound of the peak tracemalloc measures on
        every path (the compiled one, the array-API one, log-space recomputations included).
    pairs : int
        (sentence, class) pairs K·s_c^L·K the risk accounts for.
    flops : float
        Floating-point operations of the matrix products.
    split : int
        m, the number of positions in the first half.
    tiles : tuple of int
        Number of prefix groups and suffix groups held at once.
    block : int
        Classes per block of normalizer matrices.
    fallback_chunk : int
        (entry, class) pairs the array-API path's log-space recomputation takes at least at once: 65,536 when
        its reserve fits the memory budget beside the same tiles, else 4,096 (counted in ``bytes`` either way).
    """

    seconds: float
    bytes: int
    pairs: int
    flops: float
    split: int
    tiles: tuple
    block: int
    fallback_chunk: int = _FALLBACK_CHUNK


def _fl(x) -> float:
    """A size (exact int of any size, or float) as a float, inf when beyond the float range."""
    try:
        return float(x)
    except OverflowError:
        return math.inf


def _g(x) -> str:
    """``{x:.3g}`` for sizes that may exceed the float range (shown as 10^n then)."""
    if isinstance(x, int) and x.bit_length() > 1000:
        return f"~10^{int(x.bit_length() * math.log10(2))}"
    return f"{_fl(x):.3g}"


def resolve_budget(max_seconds, max_bytes):
    """(seconds, bytes) limits in force: None → the global budget, inf → no limit (None)."""
    b = get_budget()
    sec = b.max_seconds if max_seconds is None else max_seconds
    byt = b.max_bytes if max_bytes is None else max_bytes
    sec = None if not math.isfinite(sec) else float(sec)
    byt = None if not math.isfinite(byt) else int(byt)
    return sec, byt


def _tile_plan(K, sA, sB, nA, nB, grad, budget, nw, per_entry=9):
    """Tiles of prefix/suffix groups and the class block size that fit in ``budget`` bytes.

    ``per_entry`` is the working memory per entry of a class's sA×sB normaliser block: 9 bytes for the
    compiled kernel (S' and its fallback mask); the array-API path (CuPy, ``jit=False``) keeps
    temporaries of the same size alive (see :func:`_post_group_xp`).

    Returns (tA, tB, block, bytes); tA or tB = 0 when even one group per side does not fit.
    """
    perA = 8 * (K + 1) * sA * (3 if grad else 1)  # B, row maxima M (+ accumulator, fallback accumulator)
    perB = 8 * (K + 1) * sB * (2 + nw * (3 if grad else 1))  # B, Bᵀ, M + per worker: copy (+ acc, fallback)
    per_class = per_entry * sA * sB + 8 * K * sB * (2 if grad else 1) + 8 * (sA + sB) * 3
    # own scores and the gradient's per-class terms; per worker, one prefix group's partial scores for the
    # log-space recomputation (_LazyY) and, on the array-API path, what its smallest chunk needs beyond the
    # ≥ 32 bytes per entry of a one-class block that _post_group_xp's temporaries freed (_fallback_xp)
    fixed = _fixed_bytes(K, sA, sB, grad, nw, per_entry, _FALLBACK_CHUNK)
    # integer arithmetic throughout: s^m may be far beyond the float range (the plan is then refused)
    budget = int(budget)
    block = int(max(1, min(K, (budget // 4) // max(nw * per_class, 1))))
    sizes = (perA, perB, per_class, fixed)
    while True:
        # the transients grow with the plan (up to a cap): solve with those of the smallest, then shrink
        room = budget - _transient(K, sA, sB, (1, 1, block), nw) - fixed - nw * block * per_class
        if nA * perA + nB * perB <= room:
            tA, tB = nA, nB
        elif 2 * nA * perA <= room:
            tA, tB = nA, int((room - nA * perA) // perB)
        else:
            tA, tB = int((room // 2) // perA), int((room // 2) // perB)
        tA, tB = max(min(tA, nA), 0), max(min(tB, nB), 0)
        while (tA > 1 or tB > 1) and _plan_bytes(K, sA, sB, (tA, tB, block), sizes, nw) > budget:
            if tA > 1 and (tA * perA >= tB * perB or tB <= 1):
                tA -= max(1, tA // 8)
            else:
                tB -= max(1, tB // 8)
        fits = _plan_bytes(K, sA, sB, (tA, tB, block), sizes, nw) <= budget
        if (tA >= 1 and tB >= 1 and fits) or block == 1:
            break
        block = max(1, block // 2)
    need, floor = _plan_bytes(K, sA, sB, (tA, tB, block), sizes, nw), _FALLBACK_CHUNK
    if per_entry != 9 and tA >= 1 and tB >= 1:
        big = (perA, perB, per_class, _fixed_bytes(K, sA, sB, grad, nw, per_entry, _FALLBACK_CHUNK_BIG))
        need_big = _plan_bytes(K, sA, sB, (tA, tB, block), big, nw)
        if need_big <= budget:
            need, floor = need_big, _FALLBACK_CHUNK_BIG
    return tA, tB, block, need, floor


def _fixed_bytes(K, sA, sB, grad, nw, per_entry, floor) -> int:
    """Bytes of a plan that do not grow with the tiles: the accumulated bases' gradients, and per worker one
    prefix group's partial scores and (array-API path) what a recomputation chunk of ``floor`` (entry, class)
    pairs needs beyond the ≥ 32 bytes per entry of a one-class block that _post_group_xp's temporaries freed."""
    chunk = 0 if per_entry == 9 else max(0, 8 * max(K, floor) * (8 if grad else 4) - 32 * sA * sB)
    return 8 * K * (sA + sB) * 2 + nw * (8 * K * sA + chunk)


def _plan_bytes(K, sA, sB, plan, sizes, nw) -> int:
    """Peak bytes of a tile plan: the larger of the per-class phase and the build of the prefix bases.

    ``plan`` = (tA, tB, block), ``sizes`` = (perA, perB, per_class, fixed) of :func:`_tile_plan`. The bases
    of h positions are built in place from those of h − 1 (a transient of 1/s of the result, at most half
    of it), which perB covers for the suffix bases but perA (without the gradient) does not for the prefix
    ones. The host's transients come on top: NumPy's buffered iterator (broadcast operations) allocates up
    to 3 operands × 8192 entries × 8 bytes (fewer for smaller arrays), and Python objects, array headers and
    the thread pool a few tens of KiB; both measured with tracemalloc. Slack: the traced peak is 0.6–0.92 of
    the estimate on random tiled tasks (tests/risk/test_plan.py); on tiny tasks the constants (with the
    array-API path's log-space reserve, ≤ 256 KiB per worker) dominate and the estimate is up to ~0.5 MiB over.
    """
    tA, tB, block = max(plan[0], 1), max(plan[1], 1), plan[2]
    perA, perB, per_class, fixed = sizes
    work = fixed + nw * block * per_class + tA * perA + tB * perB
    build_A = fixed + tA * 8 * (K * sA + max(K * sA // 2, sA))
    return max(work, build_A) + _transient(K, sA, sB, (tA, tB, block), nw)


def _transient(K, sA, sB, plan, nw) -> int:
    """Host transients besides the arrays (:func:`_plan_bytes`) for ``plan`` = (tA, tB, block), ``nw`` workers."""
    tA, tB, block = plan
    largest = max(tA * K * sA, tB * K * sB, block * sA * sB, K * (sA + sB))
    return 3 * 8 * min(largest, 8192) + _PY_OVERHEAD + (_POOL_OVERHEAD if nw > 1 else 0)


@public(
    task=Instance(Task),
    d=Int(min=1, max=2**40),
    grad=Bool(),
    backend=BACKEND,
    max_bytes=LIMIT,
    workers=WORKERS,
    jit=Bool().or_none(),
    legacy_positional=("d",),
)
def estimate_cost(
    task: Task,
    *,
    d: int,
    grad: bool = False,
    backend: str = "numpy",
    max_bytes: float | None = None,
    workers: int | None = None,
    jit: bool | None = None,
) -> CostEstimate:
    """Time and memory one exact evaluation will need, computed without allocating.

    Sizes are exact integers (s_c^L may be far beyond the float range: such a request gets
    ``seconds = inf`` and no tiles, and is refused by the budget).

    Parameters
    ----------
    task : Task
    d : int
        Embedding dimension (1 ≤ d ≤ 2^40).
    grad : bool
        Whether the gradient is wanted (three matrix products per class instead of one).
    backend : {"numpy", "numba", "cupy"}
    max_bytes : float or None
        Memory budget the tiles are sized for: None uses the budget in force
        (:func:`fctheory.get_budget`), ``inf`` means unlimited.
    workers : int or None
        Host worker threads (see :func:`evaluate_risk`).
    jit : bool or None
        As in :func:`evaluate_risk`: ``False`` sizes the plan for the array-API path (what CuPy runs),
        which keeps more temporaries per normaliser entry than the compiled kernel.

    Returns
    -------
    CostEstimate
    """
    return estimate(task, d, grad, backend, resolve_budget(None, max_bytes)[1], workers, jit)


# bytes per normaliser entry on the array-API path: S', the mask (1), and what _post_group_xp keeps alive at
# its peak: Ssafe, log Ssafe, α_A + α_B, t, softplus(t), sp and sp·D (6 × 8), plus t − sp, its exp, ds and
# ds/Ssafe with the gradient (2 more at once); checked against tracemalloc in
# tests/oracle/test_oracle_diagnose_distributed_batched.py
_XP_PER_ENTRY = {False: 8 + 1 + 6 * 8, True: 8 + 1 + 8 * 8}


def estimate(task, d, grad, backend, max_bytes, workers, jit=None) -> CostEstimate:
    """:func:`estimate_cost` on checked arguments, ``max_bytes`` resolved (None: no limit)."""
    K, L, s = task.K, task.L, task.s_c
    m = _split(L)
    sA, sB = s**m, s ** (L - m)
    lay = _layout(task)
    nA, nB = lay.concA.shape[0], lay.concB.shape[0]
    nw = 1 if backend == "cupy" else (workers or default_workers())
    extras = 8 * (2 * K * L * task.n_w + 4 * d * (task.n_w + K * L))  # G, its gradient, W, U, …
    mb = max_bytes if max_bytes is not None else 1 << 62
    compiled = backend != "cupy" and jit is not False  # else the array-API path (_post_group_xp)
    per_entry = 9 if compiled else _XP_PER_ENTRY[bool(grad)]
    tA, tB, block, need, floor = _tile_plan(K, sA, sB, nA, nB, grad, mb - extras, nw, per_entry)
    pairs = K * s**L * K
    flops = 2.0 * _fl(K * max(K - 1, 0) * s**L * (3 if grad else 1))
    rate = RATES["cupy" if backend == "cupy" else "host"]
    n_tA = -(-nA // max(tA, 1))
    base = (nA * sA * max(m, 1) + n_tA * nB * sB * max(L - m, 1)) * K * (2 if grad else 1)
    seconds = (
        flops * rate["flop"]
        + _fl(K * s**L) * rate["entry"] * (1.6 if grad else 1.0)
        + _fl(base) * rate["base"]
        + K * (rate["per_class_grad"] if grad else rate["per_class"])
        + _fl(8 * K * L * task.n_w * d) * 1e-10
    )
    mem = need + extras
    return CostEstimate(
        seconds=float(seconds),
        bytes=int(mem),
        pairs=int(pairs),
        flops=float(flops),
        split=m,
        tiles=(tA, tB),
        block=block,
        fallback_chunk=floor,
    )


def check_budget(est: CostEstimate, max_seconds, max_bytes, task=None):
    """Refuse (naming ``task``, with the estimate) a request over the resolved limits (None: no limit)."""
    mib = _fl(est.bytes) / 2**20
    mem = f"{mib:.4g} MiB" if math.isfinite(mib) else f"{_g(est.bytes)} bytes"
    if max_bytes is not None and (est.tiles[0] < 1 or est.tiles[1] < 1 or est.bytes > max_bytes):
        fail(
            "task",
            task,
            f"estimated working memory {mem} (estimated time {est.seconds:.3g} s, "
            f"{_g(est.pairs)} sentence-class pairs) exceeds the memory budget max_bytes={max_bytes} "
            f"({max_bytes / 2**20:.1f} MiB); pass a larger max_bytes (inf: no limit) or raise "
            "it with fctheory.set_budget(max_bytes=...)",
        )
    if max_seconds is not None and est.seconds > max_seconds:
        fail(
            "task",
            task,
            f"estimated time {est.seconds:.3g} s ({_g(est.pairs)} sentence-class pairs, "
            f"{est.flops:.3g} flops, {mem}) exceeds the time budget max_seconds={max_seconds}; "
            "pass a larger max_seconds (inf: no limit) or raise it with fctheory.set_budget(max_seconds=...)",
        )


def default_workers() -> int:
    """Host worker threads by default: the number of cores, at most 8."""
    return max(1, min(os.cpu_count() or 1, 8))
