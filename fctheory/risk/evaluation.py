"""The exact true risk (5)/(10) of given weights and its gradient: :func:`evaluate_risk` (the public entry point,
documented in docs/risk.md) and :func:`evaluate` (the same on checked arguments, for repeated callers), their
result :class:`RiskResult`, and the refusal of weights whose scores or penalty overflow float64.

It plans the evaluation (:mod:`fctheory.risk.plan`), refuses it over the budget, forms the word scores
G[j, ℓ, w] = ⟨u_(j,ℓ), v_w⟩ and hands them to the enumeration (:func:`fctheory.risk.enumeration.enumerate_risk`),
then maps ∂R₀/∂G to W and U.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from .._backend import get_namespace, to_numpy
from .._validate import Array, Bool, Instance, Real, fail, public, result_type
from ..network import U_from_hat, U_hat, check_weights, phi, phi_jacobian_vjp
from ..task import Task
from .enumeration import enumerate_risk
from .plan import BACKEND, LIMIT, SCORE_MAX, WORKERS, check_budget, estimate, resolve_budget

__all__ = ["RiskResult", "RISK_KINDS", "evaluate_risk", "evaluate"]


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


#: the kinds of the risk entry points' parameters (shared by true_risk & co.)
RISK_KINDS = dict(
    task=Instance(Task),
    W=Array(ndim=2),
    U=Array(ndim=2),
    lam=Real(lo=0.0),
    layernorm=Bool(),
    grad=Bool(),
    eps=Real(lo=0.0),
    backend=BACKEND,
    jit=Bool().or_none(),
    progress=Bool().or_none(),
    max_seconds=LIMIT,
    max_bytes=LIMIT,
    workers=WORKERS,
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
    return evaluate(
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


def evaluate(
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
    est = estimate(task, d, grad, backend, max_bytes, workers, jit)
    check_budget(est, max_seconds, max_bytes, task)

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
        R0, gG3, n_fallback = enumerate_risk(xp, use_numba, task, G3, grad, est, progress, workers)

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
    if not (math.isfinite(gmax) and 2.0 * L * gmax <= SCORE_MAX):
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
