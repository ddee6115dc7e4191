"""Regularised unconstrained-features models (review §2.4–2.5; Zhu et al. 2021, Tirer & Bruna 2022).

Objective, with W ∈ R^{K×m}, H ∈ R^{m×N} (columns class-major, n per class, N = K·n), b ∈ R^K:

    CE  (review eq. (21)):  (1/N) Σ_{k,i} ℓ_CE(W h_{k,i} + b, e_k) + (λ_W/2)‖W‖² + (λ_H/2)‖H‖²
    MSE (review eq. (28)):  (1/(2N)) ‖W H + b 1ᵀ − Y‖² + (λ_W/2)‖W‖² + (λ_H/2)‖H‖²

``bias=False``: b = 0; ``bias=True``: b is a free, unregularised variable. The control parameter
is q = √(n λ_W λ_H); the trivial solution (0, 0) is optimal iff K·q ≥ 1.
"""
from __future__ import annotations

import numpy as np

from .._validate import fail
from ._common import (
    NumericalOptimum,
    UFMOptimum,
    check_pos,
    check_sizes,
    labels,
    lbfgs_multistart,
    rng_of,
    softmax_ce,
)

__all__ = ["ce", "mse", "ce_objective", "mse_objective", "solve_ce", "solve_mse", "convex_ce", "convex_mse"]

_SRC_CE = "Zhu et al. 2021 Thm 3.1 (review §2.4, eq. (21)); closed-form ρ*, value: review notes §2.4"
_SRC_MSE = "Tirer & Bruna 2022 (review §2.5, eq. (28)); exact minimisers: review notes §2.5"


def _params(K, n, lam_W, lam_H):
    K, n, _ = check_sizes(K, n)
    lam_W = check_pos("lam_W", lam_W)
    lam_H = check_pos("lam_H", lam_H)
    return K, n, lam_W, lam_H


def ce(K: int, n: int, lam_W: float, lam_H: float, bias: bool = False) -> UFMOptimum:
    """Global optimum of the weight-decay cross-entropy UFM (review eq. (21)).

    With q = √(nλ_Wλ_H): if K·q < 1,

        ρ* = ‖W*‖² = (K−1)√(nλ_H/λ_W)·log(1/q − (K−1)),
        value = −log(1 − (K−1)q) + (K−1)·q·log(1/q − (K−1)),

    W*W*ᵀ = ρ*/(K−1)·(I − 11ᵀ/K) (a simplex ETF), h_{k,i} = √(λ_W/(nλ_H))·w_k, b* = 0; otherwise
    (K·q ≥ 1) the minimiser is (0, 0) with value log K.

    Parameters
    ----------
    K, n : int
        Classes (≥ 2) and samples per class (≥ 1).
    lam_W, lam_H : float
        Weight decay on W and H (> 0).
    bias : bool
        Include an unregularised bias. The optimum is unchanged (b* = 0): the convex
        reformulation (23) is invariant under class permutations, and a symmetric bias b ∝ 1
        does not change the loss.

    Notes
    -----
    Holds for feature dimension m ≥ K−1 (Zhu et al.). The reduced problem in ρ is convex.
    """
    K, n, lam_W, lam_H = _params(K, n, lam_W, lam_H)
    q = np.sqrt(n * lam_W * lam_H)
    trivial = K * q >= 1.0
    P = np.eye(K) - np.ones((K, K)) / K
    if trivial:
        value, rho, gap = np.log(K), 0.0, 0.0
    else:
        gap = np.log(1.0 / q - (K - 1))  # logit gap x* at the optimum
        rho = (K - 1) * np.sqrt(n * lam_H / lam_W) * gap
        value = -np.log1p(-(K - 1) * q) + (K - 1) * q * gap
    scale = np.sqrt(lam_W / (n * lam_H))  # h = scale · w
    return UFMOptimum(
        model="ce+bias" if bias else "ce",
        value=float(value),
        W_norm_sq=float(rho),
        H_norm_sq=float(lam_W / lam_H * rho),
        W_gram=rho / (K - 1) * P,
        means_gram=scale**2 * rho / (K - 1) * P,
        bias=np.zeros(K) if bias else None,
        threshold=1.0,
        trivial=bool(trivial),
        closed_form=True,
        conditions="m >= K-1; threshold K*sqrt(n*lam_W*lam_H) = 1 (trivial solution at and above it)",
        source=_SRC_CE,
        extras={"q": float(q), "Kq": float(K * q), "logit_gap": float(gap), "rho": float(rho), "h_over_w": float(scale)},
    )


def mse(K: int, n: int, lam_W: float, lam_H: float, bias: bool = False) -> UFMOptimum:
    """Global optimum of the weight-decay MSE UFM (review eq. (28)).

    With q = √(nλ_Wλ_H) and s = (1 − K·q)₊ (singular-value thresholding of the target):

    * ``bias=False``: A F̄ = s·I_K, W Wᵀ = s√(nλ_H/λ_W)·I_K (orthogonal frame),
      value = Kq − (Kq)²/2 if Kq < 1 else 1/2; needs m ≥ K.
    * ``bias=True`` (unregularised b): b* = 1/K, W Wᵀ = s√(nλ_H/λ_W)·(I − 11ᵀ/K) (simplex ETF),
      value = ((K−1)/K)(Kq − (Kq)²/2) if Kq < 1 else (K−1)/(2K); needs m ≥ K−1.

    In both cases h_{k,i} = √(λ_W/(nλ_H))·w_k and (0, 0) (with b = 1/K) is optimal iff K·q ≥ 1.
    """
    K, n, lam_W, lam_H = _params(K, n, lam_W, lam_H)
    q = np.sqrt(n * lam_W * lam_H)
    s = max(0.0, 1.0 - K * q)
    T = np.eye(K) - np.ones((K, K)) / K if bias else np.eye(K)
    r = K - 1 if bias else K  # rank of the target
    half = K * q - (K * q) ** 2 / 2 if K * q < 1 else 0.5
    value = (K - 1) / K * half if bias else half
    a2 = s * np.sqrt(n * lam_H / lam_W)
    return UFMOptimum(
        model="mse+bias" if bias else "mse",
        value=float(value),
        W_norm_sq=float(r * a2),
        H_norm_sq=float(r * s * np.sqrt(n * lam_W / lam_H)),
        W_gram=a2 * T,
        means_gram=s * np.sqrt(lam_W / (n * lam_H)) * T,
        bias=np.full(K, 1.0 / K) if bias else None,
        threshold=1.0,
        trivial=bool(K * q >= 1.0),
        closed_form=True,
        conditions=("m >= K-1" if bias else "m >= K") + "; threshold K*sqrt(n*lam_W*lam_H) = 1",
        source=_SRC_MSE,
        extras={"q": float(q), "Kq": float(K * q), "s": float(s)},
    )


# ----------------------------------------------------------------------------- objectives
def _unpack(x, K, m, N, bias):
    W = x[: K * m].reshape(K, m)
    H = x[K * m : K * m + m * N].reshape(m, N)
    b = x[K * m + m * N :] if bias else None
    return W, H, b


def ce_objective(W, H, b, n, lam_W, lam_H):
    """Value and gradients (dW, dH, db) of the CE UFM objective (21) at (W, H, b); b may be None."""
    K = W.shape[0]
    y = labels(K, n)
    Z = W @ H + (b[:, None] if b is not None else 0.0)
    loss, G = softmax_ce(Z, y)
    val = loss + 0.5 * lam_W * np.sum(W * W) + 0.5 * lam_H * np.sum(H * H)
    return val, G @ H.T + lam_W * W, W.T @ G + lam_H * H, (G.sum(axis=1) if b is not None else None)


def mse_objective(W, H, b, n, lam_W, lam_H):
    """Value and gradients (dW, dH, db) of the MSE UFM objective (28); b may be None."""
    K = W.shape[0]
    N = H.shape[1]
    Y = np.repeat(np.eye(K), n, axis=1)
    R = W @ H + (b[:, None] if b is not None else 0.0) - Y
    val = 0.5 * np.sum(R * R) / N + 0.5 * lam_W * np.sum(W * W) + 0.5 * lam_H * np.sum(H * H)
    G = R / N
    return val, G @ H.T + lam_W * W, W.T @ G + lam_H * H, (G.sum(axis=1) if b is not None else None)


def _solve(obj, K, n, m, lam_W, lam_H, bias, n_starts, seed, scale):
    N = K * n
    rng = rng_of(seed)

    def fun(x):
        W, H, b = _unpack(x, K, m, N, bias)
        v, gW, gH, gb = obj(W, H, b, n, lam_W, lam_H)
        g = np.concatenate([gW.ravel(), gH.ravel()] + ([gb] if bias else []))
        return v, g

    dim = K * m + m * N + (K if bias else 0)
    x0s = [scale * rng.standard_normal(dim) for _ in range(n_starts)]
    x, f, vals, gn = lbfgs_multistart(fun, x0s)
    W, H, b = _unpack(x, K, m, N, bias)
    return NumericalOptimum(float(f), W.copy(), H.copy(), None if b is None else b.copy(), gn, vals, "L-BFGS")


def solve_ce(K, n, m, lam_W, lam_H, bias=False, *, n_starts=3, seed=None) -> NumericalOptimum:
    """Numerical minimiser of the CE UFM (21) by multi-start L-BFGS in dimension m."""
    K, n, lam_W, lam_H = _params(K, n, lam_W, lam_H)
    _, _, m = check_sizes(K, n, m)
    return _solve(ce_objective, K, n, m, lam_W, lam_H, bias, n_starts, seed, 1.0)


def solve_mse(K, n, m, lam_W, lam_H, bias=False, *, n_starts=3, seed=None) -> NumericalOptimum:
    """Numerical minimiser of the MSE UFM (28) by multi-start L-BFGS in dimension m."""
    K, n, lam_W, lam_H = _params(K, n, lam_W, lam_H)
    _, _, m = check_sizes(K, n, m)
    return _solve(mse_objective, K, n, m, lam_W, lam_H, bias, n_starts, seed, 0.5)


# ----------------------------------------------------------------------------- convex reformulations
def _convex(K, n, lam_W, lam_H, bias, loss, solver):
    try:
        import cvxpy as cp  # noqa: PLC0415 - optional heavy import
    except ImportError as exc:  # pragma: no cover
        fail("solver", "cvxpy", f"cvxpy is not importable ({exc})")
    N = K * n
    Z = cp.Variable((K, N))
    b = cp.Variable(K) if bias else None
    logits = Z + (cp.reshape(b, (K, 1), order="F") @ np.ones((1, N)) if bias else 0)
    Y = np.repeat(np.eye(K), n, axis=1)
    if loss == "ce":
        data = (cp.sum(cp.log_sum_exp(logits, axis=0)) - cp.sum(cp.multiply(Y, logits))) / N
    else:
        data = cp.sum_squares(logits - Y) / (2 * N)
    # (24): min_{WH=Z} (λ_W/2)‖W‖² + (λ_H/2)‖H‖² = √(λ_Wλ_H)‖Z‖_* when m ≥ K
    prob = cp.Problem(cp.Minimize(data + np.sqrt(lam_W * lam_H) * cp.normNuc(Z)))
    prob.solve(solver=solver)
    if prob.status not in ("optimal", "optimal_inaccurate"):
        fail("solver", solver, f"the convex program ended with status {prob.status}")
    return float(prob.value), Z.value, (None if b is None else b.value)


def convex_ce(K, n, lam_W, lam_H, bias=False, *, solver="CLARABEL"):
    """Value of the convex reformulation (23)–(24) of the CE UFM, solved with cvxpy (m ≥ K).

    Returns (value, Z, b). Interior-point accuracy (~1e-7), an independent check of :func:`ce`.
    """
    K, n, lam_W, lam_H = _params(K, n, lam_W, lam_H)
    return _convex(K, n, lam_W, lam_H, bias, "ce", solver)


def convex_mse(K, n, lam_W, lam_H, bias=False, *, solver="CLARABEL"):
    """Value of the nuclear-norm reformulation of the MSE UFM, solved with cvxpy (m ≥ K)."""
    K, n, lam_W, lam_H = _params(K, n, lam_W, lam_H)
    return _convex(K, n, lam_W, lam_H, bias, "mse", solver)
