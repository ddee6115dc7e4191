"""The exact engine's enumeration: every sentence of every class by half-split normalizers (docs/risk.md).

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

:func:`enumerate_risk` is the driver (R₀ and ∂R₀/∂(scores) at given scores, on a plan made once by
:func:`fctheory.risk.plan.estimate`); it runs the per-group work of :mod:`fctheory.risk._blocks` (or of the compiled
:mod:`fctheory.risk._kernels`) on a pool of host threads, each taking whole prefix groups. The engine's public
entry point is :func:`fctheory.risk.evaluate_risk` (:mod:`fctheory.risk.evaluation`); this module also gives the
plan's functions to the repeated callers that import them from here.
"""

from __future__ import annotations

import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext

import numpy as np
from scipy.linalg.blas import dgemm

from .._backend import to_numpy
from .._threads import blas_threads
from . import plan
from ._blocks import (
    _FALLBACK_CHUNK,
    _THRESH,
    _bases,
    _fallback_xp,
    _own_scores,
    _partial_scores,
    _post_group_xp,
    _scatter,
)
from ._layout import _layout, _schedule
from .plan import LIMIT, SCORE_MAX, check_budget, estimate, resolve_budget

__all__ = ["enumerate_risk", "LIMIT", "SCORE_MAX", "check_budget", "estimate", "resolve_budget"]

# evaluations estimated shorter than this run on one host worker unless ``workers`` asks for more
_PARALLEL_AFTER_S = 0.02
# runs estimated longer than this show a progress bar (progress=None)
_PROGRESS_AFTER_S = 3.0


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


def _maybe_blas(on_host):
    return blas_threads(1) if on_host else nullcontext()


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


def enumerate_risk(xp, use_numba, task, G3, grad, est, progress, workers=None, classes=None):
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
    nw = (workers or (plan.default_workers() if est.seconds >= _PARALLEL_AFTER_S else 1)) if on_host else 1
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
