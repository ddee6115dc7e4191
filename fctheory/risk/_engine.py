"""The exact true risk (5)/(10) by half-split normalizers (the algorithm of docs/risk.md).

For class k every sentence x ∈ 𝒳_k is a pair (a, b) of a partial sentence a over the first
m = ⌈L/2⌉ positions and b over the other L − m. Scores are additive over positions, so with the
partial scores Y_A[a, j] = Σ_{ℓ<m} ⟨u_{j,ℓ}, v_{x_ℓ}⟩ and Y_B[b, j] (same for ℓ ≥ m)

    Σ_{j≠k} e^{y_j(x) − y_k(x)} = e^{α_A[a] + α_B[b]} · S'[a, b],
    S' = B_A[:, j≠k] · B_B[:, j≠k]ᵀ,   B_A = exp(Y_A − M_A) (row shift M_A = max_j Y_A),

with α_A = M_A − Y_A[:, k] ≥ 0. The cross-entropy of x is softplus(t), t = α_A + α_B + log S'.
Excluding column k from the product (instead of subtracting the target score afterwards) keeps
every term positive, so the CE is exact to a few ulps even when it is 1e-30. B_A only depends on
the concepts of the first half, so it is shared by all classes with the same prefix (and B_B
by the same suffix): the exponentials cost (#prefixes·s^m + #suffixes·s^{L−m})·K, the
matrix products 2(K−1)s^L per class. The gradient is two more products per class with
ω = D σ(t)/S' (D = D_{z_k}(x), an outer product of word probabilities), accumulated per prefix
and per suffix, then scattered into ∂R₀/∂(ÛᵀV) and mapped to W and U by two products.
Entries whose S' underflows (huge margins, long L) are recomputed in log space.
"""

from __future__ import annotations

import math
import os
import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np
from scipy.linalg.blas import dgemm

from .._backend import get_namespace, to_numpy
from .._budget import get_budget
from .._threads import blas_threads
from .._validate import Array, Bool, Choice, Instance, Int, Real, fail, public, result_type
from ..network import U_from_hat, U_hat, check_weights, phi, phi_jacobian_vjp
from ..task import Task

__all__ = [
    "RiskResult",
    "CostEstimate",
    "estimate_cost",
    "evaluate_risk",
    "DEFAULT_MAX_SECONDS",
    "DEFAULT_MAX_BYTES",
]

#: the default budget (fctheory.get_budget(): 10 minutes, 2 GiB) — kept for reference; the functions
#: take ``max_seconds=None``/``max_bytes=None`` to mean "the budget in force" (fctheory.set_budget)
DEFAULT_MAX_SECONDS = 600.0
DEFAULT_MAX_BYTES = 2 * 1024**3

# kinds shared by every entry point of the engine
_BACKEND = Choice("numpy", "numba", "cupy")
#: a positive limit; inf means "no limit"; None means "the budget in force"
_LIMIT = Real(lo=0.0, lo_open=True, inf_ok=True).or_none()
_WORKERS = Int(min=1, max=1024).or_none()
# largest |score| (L·max|⟨u, v⟩|) the engine accepts: differences of scores and their softplus stay finite
_SCORE_MAX = 1e300

# bytes of Python objects and array headers an evaluation holds besides its arrays (tuples of the work
# units, index arrays of each class block), measured with tracemalloc: ~16 KiB
_PY_OVERHEAD = 24 * 1024
# and the thread pool of several workers (threads, futures, frames): ~17 KiB measured
_POOL_OVERHEAD = 24 * 1024

# (flagged entry, class) pairs the log-space recomputation of the array-API path takes at least at once
# (_fallback_xp): smaller chunks cost more in calls than they save in memory
_FALLBACK_CHUNK = 4096
# the larger floor the plan takes when its reserve (≤ 4 MiB per worker) fits the budget beside the same tiles:
# 16× fewer calls on small tasks whose every entry needs the recomputation
_FALLBACK_CHUNK_BIG = 1 << 16

# S' below this is recomputed in log space: each of the ≤ K terms lost to underflow is
# < 2.3e-308, so S' ≥ 1e-280 keeps the relative error of S' below K·1e-28.
_THRESH = 1e-280
# evaluations estimated shorter than this run on one host worker unless ``workers`` asks for more
_PARALLEL_AFTER_S = 0.02
# runs estimated longer than this show a progress bar (progress=None)
_PROGRESS_AFTER_S = 3.0

# cost model of estimate_cost (seconds per unit), fitted to benchmarks/exact_risk.py on the
# reference machine (2 cores shared with other jobs: ~16 GFLOP/s reached in the products); the
# CuPy figures are rough guesses for a data-centre GPU
_RATES = {
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
        Estimated wall time (cost model in ``_RATES``; excludes log-space fallbacks, which only
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


@result_type
@dataclass
class RiskResult:
    """Exact true risk and (optionally) its gradient.

    Attributes
    ----------
    R : float
        The true risk (5), or R* (10) when ``layernorm``.
    R0 : float
        Unregularized part (45): (1/K) Σ_k E_{x∼D_{z_k}} CE(h(x), k).
    penalty : float
        (λ/2)(‖W‖² + ‖U‖²), or (λ/2)‖U‖² for (10).
    grad_W, grad_U : ndarray or None
        ∂R/∂W (d×n_w) and ∂R/∂U (K×L·d), on the backend's device; None without ``grad``.
    n_fallback : int
        Number of (sentence, class) normalizers recomputed in log space.
    pairs : int
        K·s_c^L·K (sentence, class) pairs enumerated.
    seconds : float
        Wall time of the evaluation.
    """

    R: float
    R0: float
    penalty: float
    grad_W: object = None
    grad_U: object = None
    n_fallback: int = 0
    pairs: int = 0
    seconds: float = 0.0

    @property
    def grad_norm(self) -> float:
        """Frobenius norm of (∂R/∂W, ∂R/∂U)."""
        if self.grad_W is None:
            return float("nan")
        g = np.concatenate([np.ravel(to_numpy(self.grad_W)), np.ravel(to_numpy(self.grad_U))])
        m = float(np.max(np.abs(g))) if g.size else 0.0
        if m == 0.0 or not math.isfinite(m):
            return m
        with np.errstate(over="ignore"):  # scaled: entries up to 1e308 do not overflow the squares
            return float(m * np.linalg.norm(g / m))


# --------------------------------------------------------------------------------- helpers
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


def _split(L: int) -> int:
    # the first half is the larger one: it is grouped (gemm rows), the second is batched
    return (L + 1) // 2


def _groups(Z: np.ndarray, lo: int, hi: int):
    """Distinct concept sequences of positions lo..hi−1 and each class's group id."""
    part = Z[:, lo:hi]
    if part.shape[1] == 0:
        return np.zeros((1, 0), dtype=np.int64), np.zeros(Z.shape[0], dtype=np.int64)
    conc, inv = np.unique(part, axis=0, return_inverse=True)
    return conc, inv.reshape(-1).astype(np.int64)


def _word_probs(mu: np.ndarray, h: int) -> np.ndarray:
    """D over partial sentences of h positions: ⊗^h μ (index Σ β_i s^{h−1−i})."""
    p = np.ones(1)
    for _ in range(h):
        p = np.kron(p, mu)
    return p


class _Layout:
    """What the enumeration needs of a task alone: the prefix/suffix groups (concepts and each class's group id),
    the word probabilities of the two halves, and the tile schedules of the plans met so far.

    Kept per :class:`~fctheory.task.Task` (a frozen object with read-only arrays) by :func:`_layout`, so that an
    optimiser evaluating one task thousands of times does not rebuild them: O(K·L) integers, s^m + s^(L−m)
    floats and O(K) per schedule.
    """

    def __init__(self, task: Task):
        Z, L = task.Z, task.L
        self.m = _split(L)
        self.concA, self.gidA = _groups(Z, 0, self.m)
        self.concB, self.gidB = _groups(Z, self.m, L)
        self.mu, self.L = task.mu, L
        self._probs = None
        self.schedules = {}
        self.lock = threading.Lock()

    def probs(self):
        """(D over the prefixes, D over the suffixes), made on first use (s^m may be too many for a cost estimate)."""
        with self.lock:
            if self._probs is None:
                self._probs = (_word_probs(self.mu, self.m), _word_probs(self.mu, self.L - self.m))
            return self._probs


_LAYOUTS = weakref.WeakKeyDictionary()  # Task -> _Layout, dropped with the task
_LAYOUTS_LOCK = threading.Lock()


def _layout(task: Task) -> _Layout:
    """The task's :class:`_Layout`, made on first use."""
    with _LAYOUTS_LOCK:
        lay = _LAYOUTS.get(task)
        if lay is None:
            lay = _LAYOUTS[task] = _Layout(task)
        return lay


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
    the estimate on random tiled tasks (tests/risk/test_engine.py); on tiny tasks the constants (with the
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
    backend=_BACKEND,
    max_bytes=_LIMIT,
    workers=_WORKERS,
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
    return _estimate(task, d, grad, backend, resolve_budget(None, max_bytes)[1], workers, jit)


# bytes per normaliser entry on the array-API path: S', the mask (1), and what _post_group_xp keeps alive at
# its peak: Ssafe, log Ssafe, α_A + α_B, t, softplus(t), sp and sp·D (6 × 8), plus t − sp, its exp, ds and
# ds/Ssafe with the gradient (2 more at once); checked against tracemalloc in
# tests/oracle/test_oracle_diagnose_distributed_batched.py
_XP_PER_ENTRY = {False: 8 + 1 + 6 * 8, True: 8 + 1 + 8 * 8}


def _estimate(task, d, grad, backend, max_bytes, workers, jit=None) -> CostEstimate:
    K, L, s = task.K, task.L, task.s_c
    m = _split(L)
    sA, sB = s**m, s ** (L - m)
    lay = _layout(task)
    nA, nB = lay.concA.shape[0], lay.concB.shape[0]
    nw = 1 if backend == "cupy" else (workers or _default_workers())
    extras = 8 * (2 * K * L * task.n_w + 4 * d * (task.n_w + K * L))  # G, its gradient, W, U, …
    mb = max_bytes if max_bytes is not None else 1 << 62
    compiled = backend != "cupy" and jit is not False  # else the array-API path (_post_group_xp)
    per_entry = 9 if compiled else _XP_PER_ENTRY[bool(grad)]
    tA, tB, block, need, floor = _tile_plan(K, sA, sB, nA, nB, grad, mb - extras, nw, per_entry)
    pairs = K * s**L * K
    flops = 2.0 * _fl(K * max(K - 1, 0) * s**L * (3 if grad else 1))
    rate = _RATES["cupy" if backend == "cupy" else "host"]
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


def _check_budget(est: CostEstimate, max_seconds, max_bytes, task=None):
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


# --------------------------------------------------------------------------------- building blocks
def _partial_scores(xp, G3, conc, lo, s):
    """Partial scores Y[g, j, a] (nG×K×s^h) of the groups with concepts ``conc`` (nG×h)."""
    nG, h = conc.shape
    K = G3.shape[0]
    Y = xp.zeros((nG, K, 1))
    ar = np.arange(s)
    for i in range(h):
        cols = xp.asarray(conc[:, i][:, None] * s + ar[None, :])  # nG × s word indices
        T = xp.transpose(G3[:, lo + i, :][:, cols], (1, 0, 2))  # nG × K × s
        # into a C-ordered buffer: broadcasting alone keeps the transposed layout of T, and the reshape
        # would then copy (a transient of twice the result, which the tile plan does not count)
        out = xp.empty((nG, K, Y.shape[2], s))
        xp.add(Y[:, :, :, None], T[:, :, None, :], out=out)
        Y = out.reshape(nG, K, -1)
    return Y


def _bases(xp, G3, conc, lo, s, use_numba=False, class_major=False):
    """Row maxima M (nG×s^h) and shifted exponentials B = exp(Y − M) (nG×K×s^h) of the groups.

    ``class_major``: B as the K × (nG·s^h) matrix Bᵀ[j, g·s^h + a] = B[g, j, a] instead (the right operand of the
    normaliser products), which the compiled kernel writes directly.
    """
    nG, h = conc.shape
    K = G3.shape[0]
    if use_numba:
        from ._kernels import bases, bases_serial  # noqa: PLC0415 - numba kernels: importing numba costs about a second, paid on first use

        if nG * K * s**h < 1 << 16:  # tiny: the parallel launch would cost more than the work
            bases = bases_serial
        B = np.empty((K, nG, s**h)) if class_major else np.empty((nG, K, s**h))
        M = np.empty((nG, s**h))
        view = B.transpose(1, 0, 2) if class_major else B
        bases(np.ascontiguousarray(G3), np.ascontiguousarray(conc, dtype=np.int64), lo, s, view, M)
        return (B.reshape(K, nG * s**h) if class_major else B), M
    Y = _partial_scores(xp, G3, conc, lo, s)
    M = Y.max(axis=1)
    Y -= M[:, None, :]
    B = xp.exp(Y, out=Y)
    if class_major:
        B = xp.ascontiguousarray(xp.transpose(B, (1, 0, 2)).reshape(K, nG * s**h))
    return B, M


def _own_scores(xp, G3, Z, lo, hi, s):
    """Y_own[k, a]: class k's own partial scores on its half-sentences (K×s^h)."""
    K = G3.shape[0]
    Y = xp.zeros((K, 1))
    ar = np.arange(s)
    rows = xp.arange(K)[:, None]
    for ell in range(lo, hi):
        cols = xp.asarray(Z[:, ell][:, None] * s + ar[None, :])  # K × s
        T = G3[:, ell, :][rows, cols]
        Y = (Y[:, :, None] + T[:, None, :]).reshape(K, -1)
    return Y


def _scatter(xp, gG3, Q, conc, lo, s, n_c, use_numba=False):
    """Add Σ_{a: β_i(a)=β} Q[g, j, a] to ∂R₀/∂G[j, lo+i, conc[g,i]·s+β] for every position i."""
    if use_numba:
        from ._kernels import scatter_marginals, scatter_marginals_serial  # noqa: PLC0415 - numba kernels: importing numba costs about a second, paid on first use

        kernel = scatter_marginals if Q.size >= 1 << 16 else scatter_marginals_serial  # as in _bases
        kernel(Q, np.ascontiguousarray(conc, dtype=np.int64), lo, s, gG3)
        return
    nG, K, _ = Q.shape
    h = conc.shape[1]
    Qr = Q.reshape((nG, K) + (s,) * h)
    for i in range(h):
        axes = tuple(2 + t for t in range(h) if t != i)
        Gam = Qr.sum(axis=axes) if axes else Qr  # nG × K × s
        onehot = xp.asarray((conc[:, i][None, :] == np.arange(n_c)[:, None]).astype(np.float64))
        add = (onehot @ Gam.reshape(nG, K * s)).reshape(n_c, K, s)
        gG3[:, lo + i, :] += xp.transpose(add, (1, 0, 2)).reshape(K, n_c * s)


def _tiles(n, t):
    return [np.arange(i, min(i + t, n)) for i in range(0, n, t)]


# --------------------------------------------------------------------------------- driver
#: the kinds of the risk entry points' parameters (shared by true_risk & co.)
RISK_KINDS = dict(
    task=Instance(Task),
    W=Array(ndim=2),
    U=Array(ndim=2),
    lam=Real(lo=0.0),
    layernorm=Bool(),
    grad=Bool(),
    eps=Real(lo=0.0),
    backend=_BACKEND,
    jit=Bool().or_none(),
    progress=Bool().or_none(),
    max_seconds=_LIMIT,
    max_bytes=_LIMIT,
    workers=_WORKERS,
)


@public(**RISK_KINDS, legacy_positional=("layernorm",))
def evaluate_risk(
    task: Task,
    W,
    U,
    lam=0.0,
    *,
    layernorm: bool = False,
    grad: bool = False,
    eps: float = 0.0,
    backend: str = "numpy",
    jit: bool | None = None,
    progress: bool | None = None,
    max_seconds: float | None = None,
    max_bytes: float | None = None,
    workers: int | None = None,
) -> RiskResult:
    """Exact true risk (5) — or R* (10) with ``layernorm`` — and optionally its gradient.

    Every sentence of every class is accounted for with its probability D_{z_k}(x); nothing is
    sampled. See the module docstring and docs/risk.md for the algorithm.

    Parameters
    ----------
    task : Task
    W : array_like, shape (d, n_w)
    U : array_like, shape (K, L·d)
    lam : float
        Weight decay λ ≥ 0 of (5) (both W and U) or (10) (U only).
    layernorm : bool
        Use h* (φ applied to the word embeddings) and the risk (10).
    grad : bool
        Also return ∂R/∂W and ∂R/∂U.
    eps : float
        LayerNorm ε (0 is the paper's φ; 1e-5 is PyTorch's default).
    backend : {"numpy", "numba", "cupy"}
        "numpy" (default) and "numba" run on the host with NumPy's BLAS and the numba kernels
        for the fused per-entry work; "cupy" runs the same code path on a GPU.
    jit : bool or None
        ``False`` replaces the numba kernels by the array-API code (what CuPy runs).
    progress : bool or None
        Show a tqdm bar; None shows it when the estimate exceeds 3 s.
    max_seconds, max_bytes : float or None
        Budget: raise :class:`~fctheory.FCTheoryError` with the estimate when it is exceeded,
        before anything is allocated. None (default) uses the budget in force
        (:func:`fctheory.get_budget`: 600 s and 2 GiB unless changed with
        :func:`fctheory.set_budget`); ``inf`` means no limit.
    workers : int or None
        Host threads (default: the number of cores, at most 8); each takes whole prefix groups
        and runs single-threaded BLAS on them.

    Returns
    -------
    RiskResult

    Raises
    ------
    FCTheoryError
        Invalid input (naming the parameter), W/U shapes not those of the task, an estimate over
        the budget, or weights so large that the scores (or the penalty) overflow float64.
    """
    return _evaluate(
        task,
        W,
        U,
        lam,
        layernorm,
        grad=grad,
        eps=eps,
        backend=backend,
        jit=jit,
        progress=progress,
        max_seconds=max_seconds,
        max_bytes=max_bytes,
        workers=workers,
    )


def _evaluate(
    task,
    W,
    U,
    lam,
    layernorm,
    *,
    grad=False,
    eps=0.0,
    backend="numpy",
    jit=None,
    progress=None,
    max_seconds=None,
    max_bytes=None,
    workers=None,
    overflow="raise",
) -> RiskResult:
    """The engine behind :func:`evaluate_risk` on checked arguments.

    ``overflow="inf"`` (the minimizer's line search) returns R = inf with NaN gradients instead
    of raising when the scores or the penalty overflow.
    """
    t_start = time.perf_counter()
    max_seconds, max_bytes = resolve_budget(max_seconds, max_bytes)
    xp = get_namespace(backend)
    on_host = xp is np
    use_numba = on_host and jit is not False
    W = _as_weights(xp, "W", W)
    U = _as_weights(xp, "U", U)
    d = check_weights(task, W, U)  # shapes tied to the task, before any work
    if layernorm and eps == 0.0 and d == 1:
        fail("W", W, "LayerNorm with eps=0 needs d >= 2 rows (φ of a scalar is undefined)")
    est = _estimate(task, d, grad, backend, max_bytes, workers, jit)
    _check_budget(est, max_seconds, max_bytes, task)

    K, L = task.K, task.L
    with np.errstate(over="ignore", invalid="ignore"):
        V = phi(W, eps=eps) if layernorm else W
        Uh = U_hat(U, L=L)
        G3 = (Uh.T @ V).reshape(K, L, task.n_w)  # G3[j, ℓ, w] = ⟨u_{j,ℓ}, v_w⟩
        penalty = 0.5 * lam * (float(xp.sum(U * U)) + (0.0 if layernorm else float(xp.sum(W * W))))
    bad = _overflow(xp, W, U, V, G3, L, penalty)
    if bad is not None:
        if overflow == "inf":
            nan = xp.full(W.shape, xp.nan), xp.full(U.shape, xp.nan)
            gW, gU = nan if grad else (None, None)
            return RiskResult(R=math.inf, R0=math.inf, penalty=penalty, grad_W=gW, grad_U=gU, pairs=est.pairs)
        fail(bad[0], lam if bad[0] == "lam" else (W if bad[0] == "W" else U), bad[1])

    n_fallback = 0
    if K == 1:  # a single class: the softmax is 1, CE = 0
        R0 = 0.0
        gG3 = xp.zeros_like(G3) if grad else None
    else:
        R0, gG3, n_fallback = _enumerate(xp, use_numba, task, G3, grad, est, progress, workers)

    res = RiskResult(R=R0 + penalty, R0=R0, penalty=penalty, n_fallback=n_fallback, pairs=est.pairs)
    if grad:
        with np.errstate(over="ignore", invalid="ignore"):
            gG = gG3.reshape(K * L, task.n_w) / K
            dV = Uh @ gG
            dUh = V @ gG.T
            if layernorm:
                dW = phi_jacobian_vjp(W, dV, eps)
            else:
                dW = dV + lam * W
            res.grad_W = dW
            res.grad_U = U_from_hat(dUh, L=L) + lam * U
        if not (bool(xp.all(xp.isfinite(res.grad_W))) and bool(xp.all(xp.isfinite(res.grad_U)))):
            if overflow == "inf":
                res.R = math.inf
                return res
            fail("lam", lam, "the gradient λW + ∂R₀/∂W overflows float64 at these weights; use smaller weights or λ")
    if not math.isfinite(res.R):  # pragma: no cover - guarded above; never hand back a NaN risk
        if overflow == "inf":
            res.R = math.inf
            return res
        fail("W", W, "the risk is not finite in float64 at these weights")
    res.seconds = time.perf_counter() - t_start
    return res


def _overflow(xp, W, U, V, G3, L: int, penalty: float):
    """``(parameter, reason)`` when the scores or the penalty overflow float64, else None."""
    gmax = float(xp.max(xp.abs(G3))) if G3.size else 0.0
    if not (math.isfinite(gmax) and 2.0 * L * gmax <= _SCORE_MAX):
        return (
            "U" if float(xp.max(xp.abs(U))) > float(xp.max(xp.abs(V))) else "W",
            f"the scores overflow float64 (max |<u_(k,l), w>| = {gmax:.3g}); use smaller weights",
        )
    if not math.isfinite(penalty):
        with np.errstate(over="ignore"):
            if not math.isfinite(float(xp.sum(W * W))):
                big = "W"
            elif not math.isfinite(float(xp.sum(U * U))):
                big = "U"
            else:
                big = "lam"
        return big, "the penalty (λ/2)(‖W‖² + ‖U‖²) overflows float64; use smaller weights or λ"
    return None


def _as_weights(xp, name, A):
    if isinstance(A, str):
        fail(name, A, "must be a real 2-D array")
    if type(A).__module__.startswith("cupy") and xp is np:
        A = to_numpy(A)  # a device array on a host backend: bring it over
    if xp is not np:
        A = xp.asarray(A)
        if A.dtype.kind not in "iuf":
            fail(name, A, f"must be real numbers, got dtype {A.dtype}")
        return A.astype(xp.float64)
    if isinstance(A, np.ndarray) and A.dtype == np.float64:
        return A  # already checked by @public (a private copy)
    return Array(ndim=2)(name, A)


def _post_group_xp(xp, S, alphaA, alphaB, pA, pB, grad):
    """Array-API version of :func:`._kernels.post_group` (what CuPy runs; jit=False on the host)."""
    n = alphaA.shape[0]
    sA, N = S.shape
    sB = N // n
    S3 = S.reshape(sA, n, sB)
    mask3 = ~(S3 >= _THRESH)
    Ssafe = xp.where(mask3, 1.0, S3)
    t = alphaA.T[:, :, None] + alphaB[None, :, :] + xp.log(Ssafe)
    sp = xp.where(mask3, 0.0, xp.logaddexp(0.0, t))
    D = pA[:, None, None] * pB[None, None, :]
    ce = (sp * D).sum(axis=(0, 2))
    rA = rB = None
    if grad:
        ds = xp.where(mask3, 0.0, D * xp.exp(t - sp))
        S3[...] = ds / Ssafe
        rA = ds.sum(axis=2).T.copy()
        rB = ds.sum(axis=0)
    return ce, rA, rB, mask3.reshape(sA, N), mask3.sum(axis=(0, 2))


def _fallback_xp(xp, mask, k_of, lb, YAg, YB, pA, pB, grad, ce, rA, rB, fbAg, fbB, sB, floor=_FALLBACK_CHUNK):
    """Array-API log-space recomputation of the flagged entries of one group chunk."""
    aa, cc = xp.nonzero(mask)
    K, sA = YAg.shape
    n = ce.shape[0]
    width = fbB.shape[1] if fbB is not None else 0
    # flagged entries per chunk: ≤ 64·K bytes of temporaries each (z, its exp, P and the bincount indices of
    # the gradient), in the room of the 48 bytes (32 without the gradient) per entry of S' that the temporaries
    # of _post_group_xp held; at least floor / K (the plan's CostEstimate.fallback_chunk), counted per worker
    chunk = max(1, floor // K, min((1 << 22) // K, 3 * int(mask.size) // (4 * K)))
    for c0 in range(0, int(aa.shape[0]), chunk):
        a = aa[c0 : c0 + chunk]
        c = cc[c0 : c0 + chunk]
        i = c // sB
        b = c % sB
        m = int(a.shape[0])
        rows = xp.arange(m)
        kk = k_of[i]
        z = YAg[:, a].T + YB[lb[i], :, b]  # m × K
        z = z - z[rows, kk][:, None]
        z[rows, kk] = -xp.inf
        mx = z.max(axis=1)
        t = mx + xp.log(xp.exp(z - mx[:, None]).sum(axis=1))
        sp = xp.logaddexp(0.0, t)
        D = pA[a] * pB[b]
        ce += xp.bincount(i, weights=D * sp, minlength=n)
        if grad:
            P = (D[:, None] * xp.exp(z - sp[:, None])).reshape(-1)
            j = xp.tile(xp.arange(K), m)
            fbAg += xp.bincount(j * sA + xp.repeat(a, K), weights=P, minlength=K * sA).reshape(K, sA)
            colB = xp.repeat(lb[i] * sB + b, K)
            fbB += xp.bincount(j * width + colB, weights=P, minlength=K * width).reshape(K, width)
            ds = D * xp.exp(t - sp)
            rA += xp.bincount(i * sA + a, weights=ds, minlength=n * sA).reshape(n, sA)
            rB += xp.bincount(i * sB + b, weights=ds, minlength=n * sB).reshape(n, sB)


class _LazyY:
    """Partial scores of a tile's groups, computed on first use (only the log-space path needs them)."""

    def __init__(self, xp, G3, concA, concB, m, s):
        self.args = (xp, G3, concA, concB, m, s)
        self.gA, self.A = None, None  # one prefix group's only: the tile plan counts one per worker
        self.B = None
        self.lock = threading.Lock()

    def __call__(self, side, g=None):
        xp, G3, concA, concB, m, s = self.args
        with self.lock:
            if side == "A":
                if self.gA != g:
                    self.gA, self.A = g, _partial_scores(xp, G3, concA[g : g + 1], 0, s)[0]
                return self.A
            if self.B is None:
                self.B = _partial_scores(xp, G3, concB, m, s)
            return self.B


class _SharedA:
    """The prefix side's fallback accumulator (nTA×K×sA) of a prefix tile, made on first use.

    A prefix group is one worker's at a time (:func:`_units`), so the workers write disjoint rows of one
    array: the tile plan counts it once per prefix group (one per worker, and their sum, would not fit).
    """

    def __init__(self, xp, shape):
        self.xp, self.shape = xp, shape
        self.arr = None
        self.lock = threading.Lock()

    def get(self):
        with self.lock:
            if self.arr is None:
                self.arr = self.xp.zeros(self.shape)
            return self.arr


class _Worker:
    """Per-thread state: everything several workers would otherwise write concurrently."""

    def __init__(self, xp, grad, K, widthB, fbA, fallback_chunk=_FALLBACK_CHUNK):
        self.xp, self.grad = xp, grad
        self.fallback_chunk = fallback_chunk  # the plan's floor for _fallback_xp (CostEstimate.fallback_chunk)
        self.K, self.widthB = K, widthB
        self.accB = xp.zeros((K, widthB)) if grad else None
        self.fbA = fbA  # a _SharedA
        self.fbB = None
        self.BBt_priv = None
        self.rA, self.rB = [], []
        self.n_fallback = 0

    def fallback_arrays(self):
        if self.fbB is None:
            self.fbB = self.xp.zeros((self.K, self.widthB))
        return self.fbA.get(), self.fbB


def _run_group(xp, use_numba, ctx, wk, g, ks_h, lb_h, full):
    """Normalizers, CE and gradient accumulation for the classes ks_h of prefix group g."""
    # np.errstate is per thread: set it here, where the work runs
    with np.errstate(under="ignore", over="ignore", divide="ignore", invalid="ignore"):
        return _run_group_inner(xp, use_numba, ctx, wk, g, ks_h, lb_h, full)


def _fallbacks(xp, use_numba, wk, lazyY, g, ks_h, lb_h, nflag, mask, probs, grad, out, sB) -> None:
    """Recompute in log space the classes whose normalizers ``post_group`` flagged (``nflag``), in place.

    ``out`` = (ce, rA, rB) of the group; the fallback gradient terms go to the worker's arrays.
    """
    pA, pB = probs
    ce, rA, rB = out
    ks, lb = xp.asarray(ks_h), xp.asarray(lb_h)
    fbA, fbB = wk.fallback_arrays() if grad else (None, None)
    YAg, YB = lazyY("A", g), lazyY("B")  # partial scores, recomputed only when needed
    if use_numba:
        from ._kernels import fallback_class  # noqa: PLC0415 - numba kernels: importing numba costs about a second, paid on first use

        dummy = np.zeros((1, 1))
        for i in np.nonzero(nflag)[0]:
            q = int(lb_h[i])
            ce[i] += fallback_class(
                int(ks_h[i]),
                YAg,
                YB[q],
                pA,
                pB,
                mask[:, i * sB : (i + 1) * sB],
                grad,
                fbA[g] if grad else dummy,
                fbB[:, q * sB : (q + 1) * sB] if grad else dummy,
                rA[i],
                rB[i],
            )
    else:
        _fallback_xp(
            xp, mask, ks, lb, YAg, YB, pA, pB, grad, ce, rA, rB, fbA[g] if grad else None, fbB, sB, wk.fallback_chunk
        )


def _run_group_inner(xp, use_numba, ctx, wk, g, ks_h, lb_h, full):
    ownA, ownB, BA, MA, MB, BBt, pA, pB, K, grad, accA, lazyY = ctx
    sA, sB = BA.shape[2], MB.shape[1]
    n = ks_h.size
    ks, lb = xp.asarray(ks_h), xp.asarray(lb_h)
    BAg = BA[g]
    alphaA = MA[g][None, :] - ownA[ks]  # α_A = M_A − Y_A[k, ·] ≥ 0
    alphaB = MB[lb] - ownB[ks]
    colsB = (lb_h[:, None] * sB + np.arange(sB)[None, :]).reshape(-1)  # columns of BBt used
    rows_k = xp.asarray(np.repeat(ks_h, sB))
    cols_loc = xp.arange(n * sB)
    if full:  # all suffixes of the tile: zero the class entries of a private copy in place
        if wk.BBt_priv is None:
            wk.BBt_priv = BBt.copy()
        buf = wk.BBt_priv
        saved = buf[rows_k, cols_loc].copy()
        buf[rows_k, cols_loc] = 0.0
    else:
        buf = BBt[:, xp.asarray(colsB)]
        buf[rows_k, cols_loc] = 0.0
    # S'[a, (i, b)] = Σ_{j ≠ k_i} B_A[j, a] B_B^{(q_i)}[j, b]: the normalizers of all s^L sentences
    # of every class of the group in one product, each class's own column excluded
    S = BAg.T @ buf
    if use_numba:
        from ._kernels import post_group  # noqa: PLC0415 - numba kernels: importing numba costs about a second, paid on first use

        ce = np.empty(n)
        rA = np.empty((n, sA))
        rB = np.empty((n, sB))
        mask = np.empty(S.shape, dtype=np.uint8)
        nflag = np.empty(n, dtype=np.int64)
        post_group(S, alphaA, alphaB, pA, pB, grad, _THRESH, ce, rA, rB, mask, nflag)
    else:
        ce, rA, rB, mask, nflag = _post_group_xp(xp, S, alphaA, alphaB, pA, pB, grad)
    nfl = int(nflag.sum())
    if nfl:
        wk.n_fallback += nfl
        _fallbacks(xp, use_numba, wk, lazyY, g, ks_h, lb_h, nflag, mask, (pA, pB), grad, (ce, rA, rB), sB)
    if grad:
        _accumulate(xp, use_numba, (BAg, buf, S), (accA[g], wk), ks_h, (rows_k, cols_loc, colsB, sB, full))
        wk.rA.append((g, ks, rA))
        wk.rB.append((lb, ks, rB))
    if full:
        buf[rows_k, cols_loc] = saved
    return ks_h, to_numpy(ce)


def _accumulate(xp, use_numba, mats, acc, ks_h, where) -> None:
    """The gradient products of one class chunk of prefix group g: accA[g] += B̃_B Ωᵀ and accB += B_A Ω (j ≠ k).

    ``mats`` = (B_A of the group, the chunk's suffix bases B̃_B with row k_i of block i zeroed, Ω = D σ(t)/S'
    written over S'), ``acc`` = (accA[g], the worker), ``where`` = (rows k_i, local columns, columns of BBt,
    sB, full?). On the host, for classes that are a contiguous row range (full tasks), BLAS accumulates in
    place; on the compiled path through :func:`fctheory._blas.gemm`, which releases the GIL, so that the
    workers' products run in parallel (SciPy's ``dgemm`` wrapper holds it for the whole product).
    """
    BAg, buf, Om = mats
    accAg, wk = acc
    rows_k, cols_loc, colsB, sB, full = where
    K, n = BAg.shape[0], ks_h.size
    r0, r1 = int(ks_h.min()), int(ks_h.max()) + 1
    if xp is np and full and r1 - r0 == n and accAg.flags.c_contiguous and wk.accB.flags.c_contiguous:
        if use_numba:
            from .._blas import gemm  # noqa: PLC0415 - numba kernels: importing numba costs about a second, paid on first use

            def acc_ab(a, b, c, trans_b=False):  # c += a·op(b), the GIL released
                gemm(False, trans_b, 1.0, a, b, 1.0, c)
        else:

            def acc_ab(a, b, c, trans_b=False):  # c += a·op(b) by SciPy's BLAS (C-ordered c as its transpose)
                dgemm(1.0, b.T, a.T, beta=1.0, c=c.T, trans_a=int(trans_b), overwrite_c=True)

        # accA[g] += B̃_B Ωᵀ (Σ_i B̃_B^{(q_i)} ω_iᵀ; row k_i of block i is zero, so j ≠ k)
        acc_ab(buf, Om, accAg, trans_b=True)
        # accB += B_A Ω, except the group's own rows, where block i of row k_i is class k_i's own (excluded)
        # column and must be dropped, not subtracted
        if r0 > 0:
            acc_ab(BAg[:r0], Om, wk.accB[:r0])
        if r1 < K:
            acc_ab(BAg[r1:], Om, wk.accB[r1:])
        T = BAg[r0:r1] @ Om
        T[np.repeat(ks_h - r0, sB), np.arange(n * sB)] = 0.0
        wk.accB[r0:r1] += T
        return
    accAg += buf @ Om.T  # Σ_i B̃_B^{(q_i)} ω_iᵀ: row k_i of block i is zero (j ≠ k)
    T = BAg @ Om  # K × n·sB; block i of row k_i is class k_i's own (excluded) column
    T[rows_k, cols_loc] = 0.0
    if full:
        wk.accB += T
    else:
        wk.accB[:, xp.asarray(colsB)] += T


def _default_workers():
    return max(1, min(os.cpu_count() or 1, 8))


def _maybe_blas(on_host):
    return blas_threads(1) if on_host else nullcontext()


def _units(sel, gidA, gidB, locA, locB, block: int, nTB: int) -> list:
    """The work of one (prefix tile, suffix tile) pair: per prefix group, its classes in chunks of ``block``.

    A unit is ``(group, [(classes, suffix ids, full?), ...])``; a group is one worker's (its prefix bases).
    """
    sel = sel[np.lexsort((gidB[sel], gidA[sel]))]
    la_sel = locA[gidA[sel]]
    cuts = np.nonzero(np.diff(la_sel))[0] + 1
    units = []
    for ks_g in np.split(sel, cuts):
        g = int(locA[gidA[ks_g[0]]])
        chunks = [ks_g[c0 : c0 + block] for c0 in range(0, ks_g.size, block)]
        units.append((g, [(c, locB[gidB[c]], c.size == nTB) for c in chunks]))
    return units


def _assign_units(units: list, workers: int) -> list:
    """Greedy load balancing: the biggest units first, each to the least-loaded of ``workers`` lists."""
    order = sorted(range(len(units)), key=lambda u: -sum(c[0].size for c in units[u][1]))
    load = [0] * workers
    assign = [[] for _ in range(workers)]
    for u in order:
        w = int(np.argmin(load))
        assign[w].append(units[u])
        load[w] += sum(c[0].size for c in units[u][1])
    return assign


def _schedule(lay, K: int, tiles: tuple, block: int, nw: int, classes=None) -> list:
    """The tile loop of :func:`_enumerate`: ``[(prefix tile, [(suffix tile, per-worker units), ...]), ...]``.

    It depends on the task and the plan only, so it is kept in the task's :class:`_Layout` (unless ``classes``
    restricts the targets, a block of :mod:`fctheory.risk.distributed`).
    """
    key = (tiles, block, nw)
    if classes is None:
        with lay.lock:
            hit = lay.schedules.get(key)
        if hit is not None:
            return hit
    nA, nB = lay.concA.shape[0], lay.concB.shape[0]
    gidA, gidB = lay.gidA, lay.gidB
    targets = np.isin(np.arange(K), classes) if classes is not None else True
    out = []
    for tileA in _tiles(nA, tiles[0]):
        if classes is not None and not np.isin(gidA[classes], tileA).any():
            continue  # no class of the block has its prefix group in this tile
        locA = np.full(nA, -1)
        locA[tileA] = np.arange(tileA.size)
        inA = (locA[gidA] >= 0) & targets
        steps = []
        for tileB in _tiles(nB, tiles[1]):
            locB = np.full(nB, -1)
            locB[tileB] = np.arange(tileB.size)
            sel = np.nonzero(inA & (locB[gidB] >= 0))[0]
            if sel.size:
                units = _units(sel, gidA, gidB, locA, locB, block, tileB.size)
                steps.append((tileB, _assign_units(units, min(nw, len(units)))))
        out.append((tileA, steps))
    if classes is None:
        with lay.lock:
            if len(lay.schedules) >= 8:  # a few plans per task (budgets, worker counts), not an unbounded set
                lay.schedules.clear()
            lay.schedules[key] = out
    return out


_POOL = None  # (executor, its number of threads): the host workers, started once per process
_POOL_LOCK = threading.Lock()


def _pool(n: int) -> ThreadPoolExecutor:
    """A thread pool of at least ``n`` workers, kept between evaluations (an optimiser makes thousands of them;
    starting threads cost each one ~0.1 ms per worker, and evaluations of tiny tasks take less than a millisecond).

    Concurrent evaluations share it: a worker's job never waits for another job, so they only queue. A larger
    request replaces it without shutting it down (an evaluation still holding it keeps submitting to it); its
    threads exit once the last holder drops it (ThreadPoolExecutor wakes them when it is collected).
    """
    global _POOL
    with _POOL_LOCK:
        if _POOL is None or _POOL[1] < n:
            _POOL = (ThreadPoolExecutor(n, thread_name_prefix="fctheory-risk"), n)
        return _POOL[0]


def _forget_pool():
    """In a forked child the pool's threads do not exist: start a new pool there on first use."""
    global _POOL
    _POOL = None


os.register_at_fork(after_in_child=_forget_pool)


def _run_assigned(xp, use_numba, ctx, wks, assign, pool, bar) -> list:
    """Run every worker's units (on the pool when there are several workers): ``[(classes, CEs), ...]``."""

    def job(w):
        out = []
        for g, chunks in assign[w]:
            for ks_h, lb_h, full in chunks:
                out.append(_run_group(xp, use_numba, ctx, wks[w], g, ks_h, lb_h, full))
                if bar is not None:
                    bar.update(ks_h.size)
        return out

    if pool is not None and len(wks) > 1:
        futs = [pool.submit(job, w) for w in range(len(wks))]
        return [r for f in futs for r in f.result()]
    return [r for w in range(len(wks)) for r in job(w)]


def _reduce_suffix(xp, wks, BBt, gG3, concB_tile, task, m: int, nTB: int, rA_all: list, use_numba=False) -> None:
    """Add the suffix side of the workers' gradient into ``gG3``; collect their prefix-side terms in ``rA_all``."""
    K, s, sB = task.K, task.s_c, task.s_c ** (task.L - m)
    QBt = wks[0].accB
    for wk in wks[1:]:
        QBt += wk.accB
    QBt *= BBt
    for wk in wks:
        if wk.fbB is not None:
            QBt += wk.fbB
        for lb, ks, rB in wk.rB:
            # δ_{jk} term: p_k − 1 = −Σ_{j≠k} p_j
            QBt[ks[:, None], lb[:, None] * sB + xp.arange(sB)[None, :]] -= rB
        rA_all.extend(wk.rA)
    QB = xp.transpose(QBt.reshape(K, nTB, sB), (1, 0, 2))
    _scatter(xp, gG3, QB, concB_tile, m, s, task.n_c, use_numba)


def _reduce_prefix(xp, gG3, QA, fbA, rA_all: list, concA_tile, s: int, n_c: int, use_numba=False) -> None:
    """Add the prefix side of the gradient (``QA`` = bases × accumulated weights) into ``gG3``.

    ``fbA``: the prefix-side fallback terms (None without log-space recomputations).
    """
    if fbA is not None:
        QA += fbA
    for g, ks, rA in rA_all:
        QA[g, ks, :] -= rA
    _scatter(xp, gG3, QA, concA_tile, 0, s, n_c, use_numba)


def _progress_bar(show: bool, K: int):
    """A tqdm bar over the K classes, or None."""
    if not show:
        return None
    from tqdm.auto import tqdm  # noqa: PLC0415 - optional progress bar, loaded when shown

    return tqdm(total=K, unit="class", desc="exact risk", leave=False)


def _enumerate(xp, use_numba, task, G3, grad, est, progress, workers=None, classes=None):
    """Σ_k E_{D_{z_k}}[CE] and ∂/∂G3 by half-split normalizer matrices (module docstring).

    ``classes`` (hook of :mod:`fctheory.risk.distributed`): only these target classes are enumerated
    (the normalizers still use all K scores); then the per-class CEs of ``classes`` are returned in
    place of R₀, and ∂/∂G3 is that block's share.
    """
    K, L, s, n_c = task.K, task.L, task.s_c, task.n_c
    lay = _layout(task)
    m = est.split
    concA, concB = lay.concA, lay.concB
    pA, pB = (xp.asarray(p) for p in lay.probs())
    on_host = xp is np
    # by default, evaluations estimated shorter than handing work to threads costs on a loaded machine run in
    # the calling thread
    nw = (workers or (_default_workers() if est.seconds >= _PARALLEL_AFTER_S else 1)) if on_host else 1
    sched = _schedule(lay, K, (max(est.tiles[0], 1), max(est.tiles[1], 1)), est.block, nw, classes)

    ownA = _own_scores(xp, G3, task.Z, 0, m, s)
    ownB = _own_scores(xp, G3, task.Z, m, L, s)
    ce_all = np.zeros(K)
    gG3 = xp.zeros_like(G3) if grad else None
    n_fallback = 0
    bar = _progress_bar(progress if progress is not None else est.seconds > _PROGRESS_AFTER_S, K)
    pool = _pool(nw) if nw > 1 and any(len(a) > 1 for _, steps in sched for _, a in steps) else None
    try:
        with np.errstate(under="ignore", over="ignore", divide="ignore", invalid="ignore"), _maybe_blas(on_host):
            for tileA, steps in sched:
                BA, MA = _bases(xp, G3, concA[tileA], 0, s, use_numba)
                accA = xp.zeros(BA.shape) if grad else None  # C order: BLAS accumulates into it
                fbA = _SharedA(xp, (tileA.size, K, s**m))
                rA_all = []
                for tileB, assign in steps:
                    BBt, MB = _bases(xp, G3, concB[tileB], m, s, use_numba, class_major=True)
                    nTB = tileB.size
                    lazy = _LazyY(xp, G3, concA[tileA], concB[tileB], m, s)
                    ctx = (ownA, ownB, BA, MA, MB, BBt, pA, pB, K, grad, accA, lazy)
                    wks = [_Worker(xp, grad, K, BBt.shape[1], fbA, est.fallback_chunk) for _ in assign]
                    for ks_h, ce in _run_assigned(xp, use_numba, ctx, wks, assign, pool, bar):
                        ce_all[ks_h] = ce
                    n_fallback += sum(wk.n_fallback for wk in wks)
                    if grad:
                        _reduce_suffix(xp, wks, BBt, gG3, concB[tileB], task, m, nTB, rA_all, use_numba)
                    del BBt, MB, ctx, wks
                if grad:
                    accA *= BA  # in place: BA × accA is what the prefix side needs
                    _reduce_prefix(xp, gG3, accA, fbA.arr, rA_all, concA[tileA], s, n_c, use_numba)
    finally:
        if bar is not None:
            bar.close()
    if classes is not None:
        return ce_all[classes], gG3, n_fallback
    R0 = math.fsum(ce_all.tolist()) / K
    return R0, gG3, n_fallback
