"""L-BFGS on the exact true risk (5)/(10), polished to a gradient norm of 1e-10."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from .._backend import to_numpy
from .._budget import check_work
from .._errors import FCTheoryError
from .._validate import Anything, Array, Bool, Instance, Int, Real, Seed, fail, public, result_type
from ..task import Task, as_rng
from ._engine import _BACKEND, _LIMIT, _check_budget, _estimate, _evaluate, resolve_budget

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


def _two_loop(g, S, Yv, rho):
    q = g.copy()
    alphas = []
    for s, y, r in zip(reversed(S), reversed(Yv), reversed(rho)):
        a = r * (s @ q)
        alphas.append(a)
        q -= a * y
    if S:
        q *= (S[-1] @ Yv[-1]) / (Yv[-1] @ Yv[-1])
    for (s, y, r), a in zip(zip(S, Yv, rho), reversed(alphas)):
        b = r * (y @ q)
        q += (a - b) * s
    return q


def _line_search(phi, f0, d0, a1, c1=1e-4, c2=0.9, max_eval=40):
    """Strong-Wolfe step; the sufficient-decrease test tolerates rounding noise in f.

    Near a minimum the decrease of f falls below its rounding error long before the gradient is
    1e-10; the curvature condition |φ'(a)| ≤ c2|φ'(0)| uses the exact directional derivative and
    keeps the step meaningful there.
    """
    noise = 1e-13 * max(1.0, abs(f0))
    evals = []

    def ev(a):
        f, d, g = phi(a)
        evals.append((a, f, d, g))
        return f, d, g

    def armijo(a, f):
        return f <= f0 + c1 * a * d0 + noise

    def zoom(lo, f_lo, d_lo, g_lo, hi, f_hi, d_hi):
        for _ in range(max_eval):
            span = hi - lo
            a = lo - d_lo * span / (d_hi - d_lo) if d_hi != d_lo else lo + 0.5 * span
            if not (min(lo, hi) + 0.1 * abs(span) <= a <= max(lo, hi) - 0.1 * abs(span)):
                a = lo + 0.5 * span
            f, d, g = ev(a)
            if not armijo(a, f) or f > f_lo + noise:
                hi, d_hi = a, d
            else:
                if abs(d) <= c2 * abs(d0):
                    return a, f, g
                if d * span >= 0:
                    hi, d_hi = lo, d_lo
                lo, f_lo, d_lo, g_lo = a, f, d, g
            if abs(hi - lo) < 1e-16 * max(1.0, abs(lo)):
                break
        return (lo, f_lo, g_lo) if lo > 0 else None

    a_prev, f_prev, d_prev, g_prev = 0.0, f0, d0, None
    a = a1
    for i in range(max_eval):
        f, d, g = ev(a)
        if not np.isfinite(f) or not armijo(a, f) or (i > 0 and f > f_prev + noise):
            if not np.isfinite(f):
                f, d = np.inf, np.inf
            return zoom(a_prev, f_prev, d_prev, g_prev, a, f, d)
        if abs(d) <= c2 * abs(d0):
            return a, f, g
        if d >= 0:
            return zoom(a, f, d, g, a_prev, f_prev, d_prev)
        a_prev, f_prev, d_prev, g_prev = a, f, d, g
        a *= 2.0
    return None


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
    backend=_BACKEND,
    max_seconds=_LIMIT,
    max_bytes=_LIMIT,
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
    _check_budget(_estimate(task, d, True, backend, byt, None), sec, byt, task)
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
        r = _evaluate(
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


def lbfgs_iterate(fg, x, f, g, history, message, gtol, maxiter, memory, sec, t0, callback):
    """L-BFGS iterations (strong-Wolfe line search) from ``x`` with value ``f`` and gradient ``g``.

    ``fg(x)`` returns ``(f, g, overflow)``. Stops when ``‖g‖ ≤ gtol``, after ``maxiter`` iterations, when
    ``sec`` seconds have passed since ``t0`` (``sec=None``: no limit) or when the line search fails twice in
    a row; ``message`` is the reason reported if the iteration limit is reached. Each accepted value is
    appended to ``history`` and passed to ``callback(it, f, ‖g‖)``. Shared by the true-risk and the
    empirical-risk minimisers. Returns ``(iterations, x, f, g, history, message)``.
    """
    S, Yv, rho = [], [], []
    it = 0
    for it in range(1, maxiter + 1):
        gn = safe_norm(g)
        if gn <= gtol:
            message = "gradient norm below gtol"
            it -= 1
            break
        if sec is not None and time.perf_counter() - t0 > sec:
            message = f"time budget max_seconds={sec} reached"
            it -= 1
            break
        p = -_two_loop(g, S, Yv, rho)
        dd = float(g @ p)
        if not dd < 0:
            S, Yv, rho = [], [], []
            p = -g
            dd = -gn * gn
        a1 = 1.0 if S else min(1.0, 1.0 / gn)

        def phi(a, x=x, p=p):
            fa, ga, _ = fg(x + a * p)
            return fa, float(ga @ p), ga

        out = _line_search(phi, f, dd, a1)
        if out is None:
            if S:  # restart from steepest descent once before giving up
                S, Yv, rho = [], [], []
                continue
            message = "line search failed"
            break
        a, f_new, g_new = out
        s = a * p
        y = g_new - g
        sy = float(s @ y)
        if sy > 1e-300:
            S.append(s)
            Yv.append(y)
            rho.append(1.0 / sy)
            if len(S) > memory:
                S.pop(0), Yv.pop(0), rho.pop(0)
        x = x + s
        f, g = f_new, g_new
        history.append(f)
        if callback is not None:
            callback(it, f, safe_norm(g))
    return it, x, f, g, history, message
