"""L-BFGS on the exact true risk (5)/(10), polished to a gradient norm of 1e-10."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from .._backend import to_numpy
from .._budget import check_work
from .._errors import FCTheoryError
from .._lbfgs import lbfgs_iterate
from .._validate import Anything, Array, Bool, Instance, Int, Real, Seed, fail, public, result_type
from ..task import Task, as_rng
from .evaluation import evaluate
from .plan import BACKEND, LIMIT, check_budget, estimate, resolve_budget

__all__ = ["MinimizeResult", "minimize_true_risk"]


@result_type
@dataclass
class MinimizeResult:
    """Outcome of :func:`minimize_true_risk` (fields in the spirit of scipy.optimize).

    Attributes
    ----------
    W, U : ndarray
        Final weights (also returned separately).
    R, R0 : float
        Exact true risk and its unregularized part at (W, U).
    grad_norm : float
        ‖(∂R/∂W, ∂R/∂U)‖_F at (W, U).
    success : bool
        ``grad_norm <= gtol``.
    message : str
    nit, nfev : int
        Iterations and risk-and-gradient evaluations.
    seconds : float
    history : list of float
        Risk after each iteration.
    """

    W: np.ndarray
    U: np.ndarray
    R: float
    R0: float
    grad_norm: float
    success: bool
    message: str
    nit: int
    nfev: int
    seconds: float
    history: list = field(default_factory=list, repr=False)


@public(
    task=Instance(Task),
    d=Int(min=1, max=2**40),
    lam=Real(lo=0.0, lo_open=True),
    layernorm=Bool(),
    seed=Seed(),
    W0=Array(ndim=2).or_none(),
    U0=Array(ndim=2).or_none(),
    init_scale=Real(lo=0.0, lo_open=True, hi=1e6),
    gtol=Real(lo=0.0, lo_open=True),
    maxiter=Int(min=1, max=10**9),
    memory=Int(min=1, max=1000),
    eps=Real(lo=0.0),
    backend=BACKEND,
    max_seconds=LIMIT,
    max_bytes=LIMIT,
    callback=Anything("callable(it, R, grad_norm) or None"),
    legacy_positional=("d", "lam", "layernorm"),
)
def minimize_true_risk(
    task: Task,
    *,
    d: int,
    lam,
    layernorm: bool = False,
    seed=None,
    W0=None,
    U0=None,
    init_scale: float = 0.1,
    gtol: float = 1e-10,
    maxiter: int = 5000,
    memory: int = 20,
    eps: float = 0.0,
    backend: str = "numpy",
    max_seconds=None,
    max_bytes=None,
    callback=None,
):
    """Minimize the exact true risk (5) — or (10) with ``layernorm`` — by L-BFGS.

    Each iteration uses the exact risk and gradient of :func:`fctheory.true_risk_grad`; the line
    search checks the curvature condition with exact directional derivatives, so the iteration
    keeps converging after the decrease of R drops below rounding, down to ``gtol``.

    Parameters
    ----------
    task : Task
    d : int
        Embedding dimension.
    lam : float
        Weight decay λ > 0 (λ = 0 has no minimizer: the risk decreases along rays).
    layernorm : bool
        Minimize R* (10) of h*.
    seed : int, Generator or None
        Random start: entries i.i.d. N(0, init_scale²) (ignored for arrays given in W0/U0).
    W0, U0 : array_like, optional
        Starting weights.
    init_scale : float
    gtol : float
        Stop when ‖∇R‖_F ≤ gtol (default 1e-10).
    maxiter : int
    memory : int
        Number of L-BFGS correction pairs.
    eps, backend
        Passed to the risk evaluation.
    max_seconds, max_bytes : float or None
        Budget (None: the budget in force, :func:`fctheory.get_budget`; inf: no limit). Each
        evaluation is refused before it starts when its estimate exceeds it; the whole
        minimization stops (``success=False``, message says so) once ``max_seconds`` have passed.
    callback : callable, optional
        ``callback(it, R, grad_norm)`` after each iteration.

    Returns
    -------
    W : ndarray, shape (d, n_w)
    U : ndarray, shape (K, L·d)
    result : MinimizeResult
    """
    _check_arguments(task, d, layernorm, W0, U0, callback)
    sec = _check_memory(task, d, memory, backend, max_seconds, max_bytes)
    rng = as_rng(seed)
    W = W0 if W0 is not None else init_scale * rng.standard_normal((d, task.n_w))
    U = U0 if U0 is not None else init_scale * rng.standard_normal((task.K, task.L * d))
    fg = _objective(task, d, lam, layernorm, eps, backend, max_seconds, max_bytes)
    t0 = time.perf_counter()
    x = np.concatenate([W.ravel(), U.ravel()])
    f, g = _start_value(fg, x, W0, U0, init_scale)
    message = "maximum number of iterations reached"
    with np.errstate(over="ignore", invalid="ignore"):  # trial steps may overflow: rejected explicitly
        it, x, f, g, history, message = lbfgs_iterate(
            fg, x, f, g, [f], message, gtol, maxiter, memory, sec, t0, callback
        )
    return _result(fg, x, task, d, lam, gtol, (it, history, message, t0))


def _check_arguments(task, d, layernorm, W0, U0, callback) -> None:
    if callback is not None and not callable(callback):
        fail("callback", callback, "must be callable (it, R, grad_norm) or None")
    if layernorm and d < 2:
        fail("d", d, "LayerNorm needs d >= 2 (φ of a scalar is undefined)")
    K, L, n_w = task.K, task.L, task.n_w
    if W0 is not None and W0.shape != (d, n_w):
        fail("W0", W0, f"must have shape (d, n_w) = ({d}, {n_w}), got {W0.shape}")
    if U0 is not None and U0.shape != (K, L * d):
        fail("U0", U0, f"must have shape (K, L*d) = ({K}, {L * d}), got {U0.shape}")


def _check_memory(task, d, memory, backend, max_seconds, max_bytes):
    """Refuse, before anything is allocated, one evaluation or an L-BFGS history (2·memory vectors) beyond
    the budget; returns the time budget in seconds (None: no limit)."""
    sec, byt = resolve_budget(max_seconds, max_bytes)
    check_budget(estimate(task, d, True, backend, byt, None), sec, byt, task)
    n_x = d * task.n_w + task.K * task.L * d
    if byt is not None:
        check_work("memory", memory, bytes=8 * n_x * (2 * memory + 8), what="the L-BFGS history")
    return sec


def _objective(task, d, lam, layernorm, eps, backend, max_seconds, max_bytes):
    """``fg(x, overflow)``: (R, ∇R, R₀) at the flattened (W, U) ``x``; ``fg.nfev`` counts its calls."""
    K, L, n_w = task.K, task.L, task.n_w
    nW = d * n_w

    def fg(x, overflow="inf"):
        fg.nfev += 1
        r = evaluate(
            task,
            x[:nW].reshape(d, n_w),
            x[nW:].reshape(K, L * d),
            lam,
            layernorm,
            grad=True,
            eps=eps,
            backend=backend,
            progress=False,
            max_seconds=max_seconds,
            max_bytes=max_bytes,
            overflow=overflow,
        )
        g = np.concatenate([to_numpy(r.grad_W).ravel(), to_numpy(r.grad_U).ravel()])
        return r.R, g, r.R0

    fg.nfev = 0
    return fg


def _start_value(fg, x, W0, U0, init_scale):
    """(R, ∇R) at the starting point, which must be finite (an overflow names the argument that set it)."""
    try:
        f, g, _ = fg(x, overflow="raise")
    except FCTheoryError as exc:
        if "overflow" not in str(exc):
            raise
        name = "W0" if W0 is not None else "U0" if U0 is not None else "init_scale"
        fail(name, {"W0": W0, "U0": U0, "init_scale": init_scale}[name], f"the starting point is too large: {exc}")
    return f, g


def _result(fg, x, task, d, lam, gtol, run):
    """The final (W, U, MinimizeResult), re-evaluated exactly at the last iterate."""
    it, history, message, t0 = run
    f, g, f0 = fg(x, overflow="raise")
    gn = safe_norm(g)
    if not (np.isfinite(f) and np.isfinite(gn)):
        fail("lam", lam, f"the minimization left float64 (R = {f!r}, |grad| = {gn!r}); the problem is badly scaled")
    nW = d * task.n_w
    Wf, Uf = x[:nW].reshape(d, task.n_w).copy(), x[nW:].reshape(task.K, task.L * d).copy()
    res = MinimizeResult(
        W=Wf,
        U=Uf,
        R=f,
        R0=f0,
        grad_norm=gn,
        success=gn <= gtol,
        message=message,
        nit=it,
        nfev=fg.nfev,
        seconds=time.perf_counter() - t0,
        history=history,
    )
    return Wf, Uf, res


def safe_norm(g) -> float:
    """‖g‖₂ without overflow of the squares (entries up to 1e308)."""
    m = float(np.max(np.abs(g))) if g.size else 0.0
    if m == 0.0 or not np.isfinite(m):
        return m
    with np.errstate(over="ignore"):
        return float(m * np.linalg.norm(g / m))
