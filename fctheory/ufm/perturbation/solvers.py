"""Solving the anchored UFM (2): its minimiser for a given H0 (L-BFGS on the central path, then Newton steps on the
exact Hessian) and the central-path gradient flow of Theorem 3.1 (Eq. 4) with its NC monitors."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import minimize

from ..._budget import check_work, get_budget
from ..._validate import Bool, Int, Real, fail, public, result_type
from ...metrics.nc import nc1 as _nc1
from .._common import seconds_of, single_thread_blas
from ._common import _K, _KN, _L0, _LOG_MAX, _LW, _MAT, _class_means, _dense_budget, _exponent, _finite, _show
from .objective import _anchored_objective, _central_path_gradient, _central_path_loss, _hessian_blocks, _optimal_W

__all__ = ["AnchoredSolution", "solve_anchored", "FlowResult", "gradient_flow"]


@result_type
@dataclass(frozen=True)
class AnchoredSolution:
    """Minimiser (W, H) of (2) for a given H0, its value and the final gradient norm."""

    W: np.ndarray
    H: np.ndarray
    value: float
    grad_norm: float
    newton_steps: int


@public(
    H0=_MAT,
    K=_K,
    lam_W=_LW,
    lam_H=_L0,
    beta=_L0,
    H_init=_MAT.or_none(),
    newton=Bool(),
    max_newton=Int(min=0, max=1000),
    legacy_positional=("K", "lam_W", "lam_H", "beta"),
)
def solve_anchored(
    H0, *, K: int, lam_W: float, lam_H: float, beta: float, H_init=None, newton: bool = True, max_newton: int = 30
) -> AnchoredSolution:
    """Minimise (2) for a general H0.

    L-BFGS on the reduced objective L(H) + β/(2N)‖H − H0‖² (gradient ∇L + β(H−H0)/N, W eliminated
    by W*(H)), started at ``H_init`` (default H0, same shape), then up to ``max_newton`` Newton steps
    on the joint (W, H) stationarity system with the exact Hessian of :func:`hessian_blocks`
    (quadratic convergence to machine precision; skipped if they do not decrease the gradient).
    The L-BFGS run and the dense (Kd + dN)² Newton system are sized against the budget first.
    """
    H0, K, n = _KN(H0, K, "H0")
    lw, lh = lam_W, lam_H
    d, N = H0.shape
    if H_init is not None and H_init.shape != H0.shape:
        fail("H_init", H_init, f"must have the shape of H0 {H0.shape}, got {H_init.shape}")
    # L-BFGS: ~2000 evaluations of O(d²N + d³); Newton: (Kd + dN)² dense solves
    check_work(
        "H0",
        _show(H0),
        bytes=8 * (40 * d * N + 6 * d * d),
        seconds=seconds_of(2000 * (200_000 + 8 * d * d * N + 4 * d**3)),
        what="solve_anchored (L-BFGS)",
    )
    if newton and max_newton:
        m = K * d + d * N
        _dense_budget(
            "H0",
            _show(H0),
            floats=4 * m * m,
            flops=max_newton * (m**3 // 3 + 4 * m * m),
            what="solve_anchored (Newton steps on the (Kd+dN)^2 Hessian; newton=False skips them)",
        )
    x0 = (H0 if H_init is None else H_init).ravel()

    def fun(x):
        H = x.reshape(d, N)
        Dv = H - H0
        v = _central_path_loss(H, K, n, lw, lh) + beta / (2 * N) * np.sum(Dv * Dv)
        g = _central_path_gradient(H, K, n, lw, lh) + beta * Dv / N
        return v, g.ravel()

    with single_thread_blas(), np.errstate(over="ignore", invalid="ignore"):
        res = minimize(
            fun, x0, jac=True, method="L-BFGS-B", options={"maxiter": 20000, "maxcor": 10, "gtol": 1e-14, "ftol": 0.0}
        )
        H = res.x.reshape(d, N)
        W = _optimal_W(H, K, n, lw)
        steps = 0
        if newton:
            W, H, steps = _newton(W, H, H0, K, n, lw, lh, beta, max_newton)
        v, gW, gH = _anchored_objective(W, H, H0, K, n, lw, lh, beta)
    _finite("H0", _show(H0), v, W, H, what="the minimiser of (2)")
    return AnchoredSolution(W, H, v, float(np.sqrt(np.sum(gW**2) + np.sum(gH**2))), steps)


def _newton(W, H, H0, K, n, lw, lh, beta, max_steps):
    d, N = H.shape
    _, gW, gH = _anchored_objective(W, H, H0, K, n, lw, lh, beta)
    gnorm = np.sqrt(np.sum(gW**2) + np.sum(gH**2))
    steps = 0
    for _ in range(max_steps):
        Hww, Hwh, Hhh = _hessian_blocks(W, H, K, n, lw, lh, beta)
        Hess = np.block([[Hww, Hwh], [Hwh.T, Hhh]])
        g = np.concatenate([gW.T.ravel(), gH.T.ravel()])  # column-stacking vec
        try:
            step = np.linalg.solve(Hess, g)
        except np.linalg.LinAlgError:
            break
        Wn = W - step[: K * d].reshape(d, K).T
        Hn = H - step[K * d :].reshape(N, d).T
        _, gWn, gHn = _anchored_objective(Wn, Hn, H0, K, n, lw, lh, beta)
        gn = np.sqrt(np.sum(gWn**2) + np.sum(gHn**2))
        if not gn < gnorm:
            break
        W, H, gW, gH, gnorm = Wn, Hn, gWn, gHn, gn
        steps += 1
        if gnorm < 1e-15:
            break
    return W, H, steps


# ----------------------------------------------------------------------------- gradient flow (Eq. 4)
@result_type
@dataclass(frozen=True)
class FlowResult:
    """Samples of the central-path gradient flow dH/dt = −N∇L(H) (Eq. 4) and its NC monitors."""

    t: np.ndarray
    H: np.ndarray  # (len(t), d, N)
    nc1_tilde: np.ndarray
    nc1: np.ndarray
    loss: np.ndarray
    T_W: np.ndarray  # e^{2λ_H t} tr Σ_W
    T_B: np.ndarray  # e^{2λ_H t} tr Σ_B


class _OutOfTime(Exception):
    pass


@public(
    H0=_MAT,
    K=_K,
    lam_W=_LW,
    lam_H=_L0,
    t_max=Real(lo=0.0, lo_open=True),
    n_eval=Int(min=2, max=10**6),
    rtol=Real(lo=0.0, lo_open=True, hi=1.0),
    atol=Real(lo=0.0, lo_open=True),
    legacy_positional=("K", "lam_W", "lam_H", "t_max"),
)
def gradient_flow(
    H0, *, K: int, lam_W: float, lam_H: float, t_max: float, n_eval: int = 50, rtol: float = 1e-10, atol: float = 1e-12
) -> FlowResult:
    """Integrate the central-path flow (Eq. 4) from H0 with DOP853 and record ÑC1, NC1 (Papyan),
    L(H_t), T_W and T_B of Theorem 3.1 at ``n_eval`` equally spaced times in [0, t_max].

    The stored samples (n_eval·d·N floats) are sized against the memory budget, and the integration
    is stopped with :class:`~fctheory.FCTheoryError` when it runs past the time budget
    (``max_seconds``): a stiff flow or a huge ``t_max`` never hangs. H0's class means must not all
    coincide (ÑC1 undefined).
    """

    H0, K, n = _KN(H0, K, "H0")
    lw, lh = lam_W, lam_H
    d, N = H0.shape
    # stored samples and the per-sample monitors (ÑC1, NC1, L: a few d×d solves each)
    _dense_budget(
        "n_eval",
        n_eval,
        floats=2 * n_eval * d * N + 6 * d * d + 20 * d * N,
        flops=n_eval * (500_000 + 20 * d * d * N + 4 * d**3),
        what="gradient_flow (the stored samples H_t and their monitors)",
    )
    ts = np.linspace(0.0, t_max, n_eval)
    if not np.all(np.diff(ts) > 0):
        fail("t_max", t_max, f"is too small to hold n_eval = {n_eval} distinct sample times")
    with np.errstate(under="ignore"):
        Mc0 = _class_means(np.ldexp(H0, -_exponent(H0)), K, n)
    if not np.any(Mc0 - Mc0.mean(axis=1, keepdims=True)):
        fail("H0", _show(H0), "the class means coincide: ÑC1 and NC1 are undefined along the flow")
    deadline = time.monotonic() + get_budget().max_seconds

    def rhs(_t, x):
        if time.monotonic() > deadline:
            raise _OutOfTime
        return -N * _central_path_gradient(x.reshape(d, N), K, n, lw, lh).ravel()

    try:
        with single_thread_blas(), np.errstate(over="ignore", invalid="ignore"):
            sol = solve_ivp(rhs, (0.0, t_max), H0.ravel(), method="DOP853", t_eval=ts, rtol=rtol, atol=atol)
    except _OutOfTime:
        fail(
            "t_max",
            t_max,
            f"the integration ran past the time budget max_seconds={get_budget().max_seconds:g} "
            "(lower t_max or raise it with fctheory.set_budget(max_seconds=...))",
        )
    if not sol.success or not np.all(np.isfinite(sol.y)):
        fail("t_max", t_max, f"the ODE integration failed: {sol.message}")
    Hs = sol.y.T.reshape(-1, d, N)
    y = np.repeat(np.arange(K), n)
    nt, n1, loss, TW, TB = [], [], [], [], []
    for t, H in zip(sol.t, Hs):
        # traces of the exactly rescaled H (no overflow of the squares), scaled back for T_W, T_B
        e = _exponent(H)
        with np.errstate(under="ignore"):
            Hsc = np.ldexp(H, -e)
        Hb = _class_means(Hsc, K, n)
        D = Hsc - np.repeat(Hb, n, axis=1)
        Mc = Hb - Hb.mean(axis=1, keepdims=True)
        trW, trB = np.sum(D * D) / N, np.sum(Mc * Mc) / K
        if trB == 0:
            fail("t_max", t_max, f"the class means coincide at t = {t:g}: ÑC1 is undefined from there on")
        nt.append(trW / trB)
        n1.append(_nc1(H.T, y))
        loss.append(_central_path_loss(H, K, n, lw, lh))
        with np.errstate(over="ignore", under="ignore"):
            grow = math.exp(2 * lh * t) if 2 * lh * t < _LOG_MAX else math.inf
            TW.append(grow * float(np.ldexp(trW, 2 * e)))
            TB.append(grow * float(np.ldexp(trB, 2 * e)))
    out = FlowResult(sol.t, Hs, np.array(nt), np.array(n1), np.array(loss), np.array(TW), np.array(TB))
    _finite("t_max", t_max, out.T_W, out.T_B, what="e^{2λ_H t}·tr Σ (T_W, T_B)")
    return out
