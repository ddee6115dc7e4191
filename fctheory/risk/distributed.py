"""The exact true risk on a Dask cluster: the class enumeration split into blocks over workers.

R₀ of (45) is a sum over target classes, R₀ = (1/K) Σ_k CE_k with CE_k = E_{x∼D_{z_k}} CE(h(x), k).
Each CE_k needs all K scores (the softmax normalizer), but only class k's sentences; so the classes
are split into blocks, every worker builds the score table G = ÛᵀV (K·L×n_w, cheap) and runs the
engine of :mod:`.enumeration` on the sentences of its block only (the hook ``classes=`` of
:func:`~.enumeration.enumerate_risk`), returning its per-class CE_k. The driver sums all K values with ``math.fsum``
(exactly rounded), so the result equals the single-process one — which also sums the same
per-class values with ``fsum`` — to rounding of the individual CE_k (tested to 1e-12). The gradient
∂R₀/∂G is additive over classes: the blocks' shares are summed and mapped to W and U as in
:func:`~fctheory.risk.evaluate_risk` (Lemma S).

Blocks follow the prefix groups of the engine (classes sorted by the concepts of their first half),
so a block recomputes only its own prefix bases; the suffix bases are recomputed by every block,
a small cost next to the 2K(K−1)s_c^L flops of the products. :func:`plan_distributed` says when
splitting pays.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

import numpy as np

from .._validate import Anything, Array, Bool, Choice, Instance, Int, Real, fail, public, result_type
from ..network import U_from_hat, U_hat, check_weights, phi, phi_jacobian_vjp
from ..task import Task
from ._layout import _groups, _split
from .enumeration import enumerate_risk
from .evaluation import RiskResult
from .plan import RATES, check_budget, estimate, resolve_budget

__all__ = ["true_risk_distributed", "plan_distributed", "DistributedPlan", "class_blocks"]

#: scheduling cost of one block on a dask cluster (task round trip, result transfer), seconds
_BLOCK_OVERHEAD_S = 0.02
#: assumed network throughput for sending (W, U) to each worker, bytes per second
_NET_BYTES_S = 1e8


@result_type
@dataclass(frozen=True)
class DistributedPlan:
    """When does splitting the exact risk over workers pay? (:func:`plan_distributed`)

    Attributes
    ----------
    blocks : int
        Class blocks the enumeration is split into.
    workers : int
    seconds_single : float
        Estimated time of one single-process evaluation (:func:`~fctheory.risk.estimate_cost`).
    seconds_block : float
        Estimated time of one block on one worker (one engine thread).
    seconds_distributed : float
        Estimated wall time on the cluster: ⌈blocks/workers⌉ blocks per worker, the per-block
        overhead and sending (W, U) to every worker.
    speedup : float
        ``seconds_single / seconds_distributed``.
    pays : bool
        ``speedup >= 1.5`` — or the single-process run does not fit the memory budget while a block does.
    bytes_single, bytes_block : int
        Working memory of one process / of one block.
    reason : str
        One line saying why.
    """

    blocks: int
    workers: int
    seconds_single: float
    seconds_block: float
    seconds_distributed: float
    speedup: float
    pays: bool
    bytes_single: int
    bytes_block: int
    reason: str


def _prefix_order(task: Task) -> np.ndarray:

    m = _split(task.L)
    gid = _groups(task.Z, 0, m)[1]
    return np.lexsort((np.arange(task.K), gid))


@public(task=Instance(Task), blocks=Int(min=1, max=10**7))
def class_blocks(task, blocks):
    """Split the K target classes into ``blocks`` blocks that follow the engine's prefix groups.

    Parameters
    ----------
    task : Task
    blocks : int
        Number of blocks (at most K are non-empty).

    Returns
    -------
    list of ndarray of int64
        The class indices of every block (sorted), together a partition of 0..K−1.
    """
    order = _prefix_order(task)
    parts = np.array_split(order, min(blocks, task.K))
    return [np.sort(p).astype(np.int64) for p in parts if p.size]


@public(
    task=Instance(Task),
    d=Int(min=1, max=2**40),
    workers=Int(min=1, max=10**6),
    grad=Bool(),
    blocks=Int(min=1, max=10**7).or_none(),
    backend=Choice("numpy", "numba", "cupy"),
    max_bytes=Real(lo=0, lo_open=True, inf_ok=True).or_none(),
    legacy_positional=("d", "workers"),
)
def plan_distributed(task, *, d, workers, grad=False, blocks=None, backend="numpy", max_bytes=None):
    """Estimate whether splitting one exact evaluation over ``workers`` Dask workers pays.

    Uses the cost model of :func:`~fctheory.risk.estimate_cost` (nothing is allocated): a block of
    k classes costs its share k/K of the products and per-entry work, plus the score table and the
    suffix bases every block recomputes; the cluster adds a round trip per block and sends (W, U)
    to every worker.

    Parameters
    ----------
    task : Task
    d : int
        Embedding dimension.
    workers : int
        Dask workers (one engine thread each).
    grad : bool
        Whether the gradient is wanted.
    blocks : int or None
        Class blocks (default: 4 per worker, at most K).
    backend : {"numpy", "numba", "cupy"}
    max_bytes : float or None
        Memory budget (None: the budget in force; inf: none).

    Returns
    -------
    DistributedPlan
    """

    nb = min(blocks if blocks is not None else 4 * workers, task.K)
    byt = resolve_budget(None, max_bytes)[1]
    single = estimate(task, d, grad, backend, byt, None)
    one = estimate(task, d, grad, backend, byt, 1)
    fixed = _fl(8 * task.K * task.L * task.n_w * d) * 1e-10  # the score table, built by every block

    m = _split(task.L)
    suffix = _fl(task.K * task.s_c ** (task.L - m) * max(task.L - m, 1)) * RATES["host"]["base"]
    per_block = max(one.seconds - fixed, 0.0) / nb + fixed + suffix
    rounds = -(-nb // workers)
    transfer = 8.0 * d * (task.n_w + task.K * task.L) * workers / _NET_BYTES_S
    dist = rounds * (per_block + _BLOCK_OVERHEAD_S) + transfer
    speedup = single.seconds / dist if dist > 0 else math.inf
    fits_single = byt is None or (single.tiles[0] >= 1 and single.tiles[1] >= 1 and single.bytes <= byt)
    fits_block = byt is None or (one.tiles[0] >= 1 and one.tiles[1] >= 1 and one.bytes <= byt)
    if not fits_single and fits_block:
        pays, why = True, "one process exceeds the memory budget; a block (one thread) fits"
    elif speedup >= 1.5:
        pays, why = True, f"{speedup:.3g}x faster than one process ({single.seconds:.3g} s → {dist:.3g} s)"
    else:
        pays, why = (
            False,
            (
                f"only {speedup:.3g}x ({single.seconds:.3g} s in one process vs {dist:.3g} s on "
                f"{workers} workers): the evaluation is too small for the cluster's overhead"
            ),
        )
    return DistributedPlan(
        blocks=nb,
        workers=workers,
        seconds_single=single.seconds,
        seconds_block=per_block,
        seconds_distributed=dist,
        speedup=speedup,
        pays=pays,
        bytes_single=int(single.bytes),
        bytes_block=int(one.bytes),
        reason=why,
    )


def _fl(x) -> float:
    try:
        return float(x)
    except OverflowError:
        return math.inf


def _tables(task, W, U, layernorm, eps):
    V = phi(W, eps=eps) if layernorm else W
    Uh = U_hat(U, L=task.L)
    G3 = (Uh.T @ V).reshape(task.K, task.L, task.n_w)  # G3[j, ℓ, w] = ⟨u_{j,ℓ}, v_w⟩
    return V, Uh, G3


def _run_block(task, W, U, layernorm, eps, classes, grad, jit, workers, max_bytes):
    """One block on one worker: per-class CE of ``classes`` and the block's ∂R₀/∂G3 share."""

    t0 = time.perf_counter()
    _, _, G3 = _tables(task, W, U, layernorm, eps)
    est = estimate(task, W.shape[0], grad, "numpy", max_bytes, workers)
    with np.errstate(under="ignore", over="ignore", divide="ignore", invalid="ignore"):
        ce, gG3, nfb = enumerate_risk(
            np, jit is not False, task, G3, grad, est, False, workers, classes=np.asarray(classes, np.int64)
        )
    return np.asarray(classes), np.asarray(ce, dtype=np.float64), gG3, int(nfb), time.perf_counter() - t0


def _get_client(client):
    if client is None:
        return None
    if isinstance(client, str):
        try:
            from distributed import Client  # noqa: PLC0415
        except ImportError as exc:  # pragma: no cover - optional dependency
            fail("client", client, f"needs dask.distributed (pip install 'fctheory[sweep]'): {exc}")
        try:
            return Client(client, timeout=30)
        except (OSError, TimeoutError, ValueError) as exc:
            fail("client", client, f"cannot connect to the dask scheduler ({type(exc).__name__}: {exc})")
    if not hasattr(client, "submit") or not hasattr(client, "scatter"):
        fail("client", client, "must be None, a dask.distributed Client or a scheduler address")
    return client


def _run_blocks(cl, task, W, U, layernorm, eps, parts, grad, jit, engine_workers, byt):
    """Run every class block (here, or on the cluster ``cl``): per-class CEs, ∂R₀/∂G3 (unscaled), fallbacks."""
    K = task.K
    ce_all = np.zeros(K)
    gG3 = np.zeros((K, task.L, task.n_w)) if grad else None
    n_fallback = 0
    if K == 1:
        return ce_all, gG3, n_fallback
    if cl is None:
        results = [_run_block(task, W, U, layernorm, eps, p, grad, jit, engine_workers, byt) for p in parts]
    else:
        t_f, W_f, U_f = cl.scatter([task, W, U], broadcast=True)
        futs = [
            cl.submit(_run_block, t_f, W_f, U_f, layernorm, eps, p, grad, jit, engine_workers, byt, pure=False)
            for p in parts
        ]
        results = cl.gather(futs)
    for classes, ce, g, nfb, _ in results:  # in block order: a fixed summation order for ∂G3
        ce_all[classes] = ce
        n_fallback += nfb
        if grad:
            gG3 += g
    return ce_all, gG3, n_fallback


def _gradients(task, W, U, V, Uh, gG3, lam, layernorm, eps):
    """(∂R/∂W, ∂R/∂U) from the summed ∂R₀/∂G3 of the blocks; refuses an overflow."""
    K, L = task.K, task.L
    with np.errstate(over="ignore", invalid="ignore"):
        gG = gG3.reshape(K * L, task.n_w) / K
        dV = Uh @ gG
        dUh = V @ gG.T
        gW = phi_jacobian_vjp(W, dV, eps) if layernorm else dV + lam * W
        gU = U_from_hat(dUh, L=L) + lam * U
    if not (np.isfinite(gW).all() and np.isfinite(gU).all()):
        fail("lam", lam, "the gradient overflows float64 at these weights; use smaller weights or λ")
    return gW, gU


@public(
    task=Instance(Task),
    W=Array(ndim=2),
    U=Array(ndim=2),
    lam=Real(lo=0),
    layernorm=Bool(),
    grad=Bool(),
    eps=Real(lo=0),
    blocks=Int(min=1, max=10**7).or_none(),
    client=Anything("None (blocks run here, one after the other), a dask Client or a scheduler address"),
    jit=Bool().or_none(),
    engine_workers=Int(min=1, max=1024),
    max_seconds=Real(lo=0, lo_open=True, inf_ok=True).or_none(),
    max_bytes=Real(lo=0, lo_open=True, inf_ok=True).or_none(),
    legacy_positional=("layernorm",),
)
def true_risk_distributed(
    task,
    W,
    U,
    lam=0.0,
    *,
    layernorm=False,
    grad=False,
    eps=0.0,
    blocks=None,
    client=None,
    jit=None,
    engine_workers=1,
    max_seconds=None,
    max_bytes=None,
):
    """Exact true risk (5) — or R* (10) — with the class enumeration split into blocks over workers.

    Parameters
    ----------
    task : Task
    W : array_like, shape (d, n_w)
    U : array_like, shape (K, L·d)
    lam : float
        Weight decay λ of (5) (W and U) or (10) (U only).
    layernorm : bool
        Network h* and the risk (10).
    grad : bool
        Also ∂R/∂W and ∂R/∂U (the blocks' shares of ∂R₀/∂(ÛᵀV) are summed).
    eps : float
        LayerNorm ε.
    blocks : int or None
        Number of class blocks (default: 4 per dask worker, 1 without a client).
    client : None, dask.distributed.Client or str
        Where the blocks run: None runs them here one after the other (each within the memory
        budget of one block); a Client or a scheduler address ("tcp://host:8786") runs them on the
        cluster. (W, U) are sent once to every worker.
    jit : bool or None
        ``False`` uses the engine's array-API path instead of the numba kernels.
    engine_workers : int
        Engine threads per block (1: a dask worker thread per block).
    max_seconds, max_bytes : float or None
        Budget of **one block** (None: the budget in force, inf: none), checked before anything
        is sent.

    Returns
    -------
    RiskResult
        ``R``, ``R0``, ``penalty``, gradients (host arrays), ``n_fallback``, ``pairs``, ``seconds``.
        R₀ is the exactly rounded sum (``math.fsum``) of the K per-class values, like the single-process
        engine.
    """
    t0 = time.perf_counter()
    d = check_weights(task, W, U)
    if layernorm and eps == 0.0 and d == 1:
        fail("W", W, "LayerNorm with eps=0 needs d >= 2 rows (φ of a scalar is undefined)")
    cl = _get_client(client)
    nworkers = len(cl.scheduler_info().get("workers", {})) if cl is not None else 1
    nb = blocks if blocks is not None else (4 * max(nworkers, 1) if cl is not None else 1)
    parts = class_blocks(task, nb)
    sec, byt = resolve_budget(max_seconds, max_bytes)
    est = estimate(task, d, grad, "numpy", byt, engine_workers)
    # the budget applies to one block: its share of the per-class work plus what every block repeats
    share = max(len(p) for p in parts) / task.K
    check_budget(replace(est, seconds=est.seconds * share), sec, byt, task)
    with np.errstate(over="ignore", invalid="ignore"):
        V, Uh, G3 = _tables(task, W, U, layernorm, eps)
        penalty = 0.5 * lam * (float(np.sum(U * U)) + (0.0 if layernorm else float(np.sum(W * W))))
    gmax = float(np.max(np.abs(G3)))
    if not (math.isfinite(gmax) and 2.0 * task.L * gmax <= 1e300):
        fail("U", U, f"the scores overflow float64 (max |<u_(k,l), w>| = {gmax:.3g}); use smaller weights")
    if not math.isfinite(penalty):
        fail("lam", lam, "the penalty (λ/2)(‖W‖² + ‖U‖²) overflows float64; use smaller weights or λ")
    ce_all, gG3, n_fallback = _run_blocks(cl, task, W, U, layernorm, eps, parts, grad, jit, engine_workers, byt)
    R0 = math.fsum(ce_all.tolist()) / task.K
    res = RiskResult(R=R0 + penalty, R0=R0, penalty=penalty, n_fallback=n_fallback, pairs=est.pairs)
    if grad:
        res.grad_W, res.grad_U = _gradients(task, W, U, V, Uh, gG3, lam, layernorm, eps)
    res.seconds = time.perf_counter() - t0
    return res
