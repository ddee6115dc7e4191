"""Shared pieces of the UFM solvers: result objects, softmax cross-entropy, multi-start L-BFGS."""

from __future__ import annotations

import math as _math
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import minimize

from .._budget import check_work as _check_work
from .._threads import blas_threads
from .._validate import Int as _Int
from .._validate import Real as _Real
from .._validate import check_int, fail, float_array, result_type

__all__ = [
    "UFMOptimum",
    "NumericalOptimum",
    "softmax_ce",
    "lbfgs_multistart",
    "check_pos",
    "labels",
    "single_thread_blas",
]


def single_thread_blas():
    """Context limiting BLAS to one thread (see :func:`fctheory._threads.blas_threads`).

    The UFM problems are tiny; a threaded OpenBLAS spends more time waking threads than computing
    (25x slower L-BFGS-B iterations were measured on a loaded 2-core machine).
    """
    return blas_threads(1)


@result_type
@dataclass(frozen=True)
class UFMOptimum:
    """Closed-form optimum of an unconstrained-features model.

    Attributes
    ----------
    model : str
        Which problem (e.g. ``"ce"``, ``"mse+bias"``, ``"layernorm_ce"``).
    value : float
        The optimal objective (loss averaged over the N = K·n samples, plus penalties).
    W_norm_sq, H_norm_sq : float
        ‖W‖_F² and ‖H‖_F² at the optimum (H over all N samples); NaN where the quantity is not
        defined by the arguments (LayerNorm models: ‖H‖² = N·d; norm-constrained CE: N·Ω_H).
    W_gram : ndarray (K, K)
        W Wᵀ at the optimum.
    means_gram : ndarray (K, K)
        H̄ᵀH̄ of the class means at the optimum (features collapse to their class means).
    bias : ndarray (K,) or None
        The optimal bias (None for bias-free models).
    threshold : float or None
        The value of the control parameter at which the trivial solution becomes optimal, where
        there is one (K·√(nλ_Wλ_H) = 1 for the regularised CE/MSE UFM).
    trivial : bool
        True when (W, H) = 0 is the global minimiser.
    closed_form : bool
        True when the closed form's conditions hold; otherwise ``value`` is a numerical optimum.
    conditions : str
        The conditions under which the closed form holds.
    source : str
        Where the result comes from (paper, equation, notes section).
    extras : dict
        Model-specific quantities (ρ*, logit gap, z*, …).
    """

    model: str
    value: float
    W_norm_sq: float
    H_norm_sq: float
    W_gram: np.ndarray
    means_gram: np.ndarray
    bias: np.ndarray | None
    threshold: float | None
    trivial: bool
    closed_form: bool
    conditions: str
    source: str
    extras: dict = field(default_factory=dict)


@result_type
@dataclass(frozen=True)
class NumericalOptimum:
    """Best point found by a numerical UFM solver (multi-start L-BFGS, SLSQP or cvxpy).

    ``W`` is K×d, ``H`` is d×N (columns = samples, class-major as in the papers), ``b`` the bias or
    None; ``grad_norm`` is the final gradient norm (for unconstrained parametrisations),
    ``values`` the final objective of every start.
    """

    value: float
    W: np.ndarray
    H: np.ndarray
    b: np.ndarray | None
    grad_norm: float
    values: np.ndarray
    method: str


def check_pos(name, value, *, allow_zero=False):
    arr = float_array(name, value, lo=0.0, lo_open=not allow_zero)
    if arr.ndim != 0:
        fail(name, value, "must be a scalar")
    return float(arr)


def labels(K: int, n: int) -> np.ndarray:
    """Class-major labels k of the N = K·n samples."""
    return np.repeat(np.arange(K), n)


def softmax_ce(Z, y):
    """Mean cross-entropy of logits Z (K × N) with labels y, and its gradient (K × N).

    Uses a max-shifted log-sum-exp so large logits do not overflow.
    """
    N = Z.shape[1]
    cols = np.arange(N)
    # ℓ = log Σ_j exp(a_j) with a = z − z_y (a_y = 0); when y is the argmax, log1p keeps full
    # relative accuracy for tiny losses (no lse − z_y cancellation)
    A = Z - Z[y, cols][None, :]
    M = A.max(axis=0)
    E = np.exp(A - M[None, :])
    E_y = E[y, cols].copy()
    E[y, cols] = 0.0
    s = E.sum(axis=0)
    with np.errstate(divide="ignore"):
        per = np.where(M == 0.0, np.log1p(s), M + np.log(E_y + s))
    loss = float(np.mean(per))
    P = E / (E_y + s)[None, :]  # softmax off the label
    P[y, cols] = -P.sum(axis=0)  # p_y − 1 = −Σ_{j≠y} p_j, again without cancellation
    return loss, P / N


def lbfgs_multistart(fun, x0s, *, gtol=1e-10, maxiter=20000, polish=False):
    """Run L-BFGS-B (exact gradients) from each start; return (best x, best f, all f, grad norm)."""
    with single_thread_blas():
        return _lbfgs_multistart(fun, x0s, gtol, maxiter, polish)


def _lbfgs_multistart(fun, x0s, gtol, maxiter, polish):
    best = None
    vals = []
    for x0 in x0s:
        res = minimize(
            fun,
            x0,
            jac=True,
            method="L-BFGS-B",
            options={"maxiter": maxiter, "maxcor": 10, "gtol": gtol, "ftol": 0.0, "maxls": 100},
        )
        x = res.x
        if polish:
            # a second run restarts the curvature memory; cheap and often gains the last digits
            res2 = minimize(
                fun,
                x,
                jac=True,
                method="L-BFGS-B",
                options={"maxiter": maxiter, "maxcor": 10, "gtol": gtol, "ftol": 0.0, "maxls": 100},
            )
            if res2.fun <= res.fun:
                res = res2
        f, g = fun(res.x)
        vals.append(f)
        if best is None or f < best[1]:
            best = (res.x, f, float(np.linalg.norm(g)))
    return best[0], best[1], np.array(vals), best[2]


def rng_of(seed):
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def check_sizes(K, n, m=None, *, m_min=1):
    K = check_int("K", K, min=2)
    n = check_int("n", n, min=1)
    if m is not None:
        m = check_int("m", m, min=m_min)
    return K, n, m


# ----------------------------------------------------------------------------- validation helpers
#: parameter kinds shared by the UFM entry points
KIND_K = _Int(min=2)
KIND_N = _Int(min=1)
KIND_LAM = _Real(lo=0.0, lo_open=True)
KIND_LAM0 = _Real(lo=0.0)
KIND_STARTS = _Int(min=1, max=1000)

_LOG_MAX = _math.log(np.finfo(np.float64).max)


def log_of(x) -> float:
    """log of a positive int (any size) or float."""
    return _math.log(x)


def exp_or_fail(name, value, log_x: float, what: str) -> float:
    """exp(log_x), or the project error naming ``name`` when the result is beyond float64."""
    if log_x > _LOG_MAX:
        fail(name, value, f"{what} = e^{log_x:.6g} is beyond the float64 range (1.8e308)")
    return _math.exp(log_x)


def exp_or_none(log_x: float):
    """exp(log_x), or None when it is beyond the float64 range (the log is reported alongside)."""
    return None if log_x > _LOG_MAX else _math.exp(log_x)


def gram_budget(name, value, K: int, count: int, what: str) -> None:
    """Size ``count`` K×K float64 matrices against the memory budget before forming them."""
    _check_work(name, value, bytes=8 * count * K * K, what=f"{what} ({count} K x K matrices)")


def largest(**sizes):
    """(name, value) of the largest size parameter, the one to blame for an oversized request."""
    name = max(sizes, key=lambda k: sizes[k])
    return name, sizes[name]


def seconds_of(ns: int):
    """A time estimate given in (exact, possibly huge) integer nanoseconds, as check_work takes it:
    seconds as a float, or ``("log", log seconds)`` beyond the float range (never an OverflowError)."""
    ns = int(ns)
    if ns < 10**300:
        return ns / 1e9
    return ("log", _math.log(ns) - _math.log(1e9))


def solver_budget(
    sizes: dict, *, dim: int, flops: int, n_starts: int, what: str, iters: int = 2000, extra_bytes: int = 0
) -> None:
    """Size a multi-start L-BFGS run before it starts: ``dim`` unknowns, ``flops`` per evaluation.

    Memory: the L-BFGS history (2·10 vectors) and a few work vectors plus ``extra_bytes``; time:
    ``iters`` evaluations per start at ~1 GFLOP/s plus a fixed 50 µs per evaluation. Sizes are exact
    integers (any magnitude), so a request for K = 10**400 is refused, not overflowed.
    """
    name, value = largest(**sizes)
    _check_work(
        name,
        value,
        items=dim,
        bytes=8 * 30 * dim + extra_bytes,
        seconds=seconds_of(n_starts * iters * (flops + 50_000)),
        what=what,
    )


def check_finite_result(name, value, *numbers, what="the result"):
    """Refuse (naming the input) a result that overflowed; never return inf/NaN for finite input."""
    for x in numbers:
        if x is not None and not np.all(np.isfinite(x)):
            fail(name, value, f"{what} overflows float64 for this input")
