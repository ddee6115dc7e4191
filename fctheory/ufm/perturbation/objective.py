"""The anchored objective f(W, H; H0) of (2), its gradients and Hessian (App. C), the optimal classifier W*(H)
(footnote 3) and the central-path loss L(H) = f(W*(H), H) with its gradient (App. A, Eq. 7)."""

from __future__ import annotations

import math

import numpy as np

from ..._validate import Choice, fail, public
from ._common import (
    _K,
    _KN,
    _L0,
    _LW,
    _MAT,
    _Y,
    _check_W,
    _class_means,
    _dense_budget,
    _exponent,
    _finite,
    _show,
    _solve,
)

__all__ = ["anchored_objective", "optimal_W", "central_path_loss", "central_path_gradient", "hessian_blocks"]


def _anchored_objective(W, H, H0, K, n, lam_W, lam_H, beta):
    N = K * n
    R = W @ H - _Y(K, n)
    val = 0.5 * np.sum(R * R) / N + lam_W / (2 * K) * np.sum(W * W) + lam_H / (2 * N) * np.sum(H * H)
    gW = R @ H.T / N + lam_W / K * W
    gH = (W.T @ R + lam_H * H) / N
    if beta:
        D = H - H0
        val += beta / (2 * N) * np.sum(D * D)
        gH = gH + beta * D / N
    return float(val), gW, gH


@public(
    W=_MAT,
    H=_MAT,
    H0=_MAT.or_none(),
    K=_K,
    lam_W=_L0,
    lam_H=_L0,
    beta=_L0,
    legacy_positional=("K", "lam_W", "lam_H", "beta"),
)
def anchored_objective(W, H, H0, *, K, lam_W, lam_H, beta):
    """f(W, H; H0) of (2) and its gradients (∇_W f, ∇_H f). ``H0=None`` with β = 0 gives (1).

    W is K×d, H and H0 are d×N with N a multiple of K; λ_W, λ_H, β ≥ 0. A point whose objective
    overflows float64 is refused.
    """
    H, K, n = _KN(H, K)
    W = _check_W(W, K, H.shape[0])
    if H0 is not None and H0.shape != H.shape:
        fail("H0", H0, f"must have the shape of H {H.shape}, got {H0.shape}")
    if beta and H0 is None:
        fail("H0", None, f"is needed when beta = {beta} > 0")
    with np.errstate(over="ignore", invalid="ignore"):
        val, gW, gH = _anchored_objective(W, H, H0, K, n, lam_W, lam_H, beta)
    _finite("W", _show(W), val, gW, gH, what="the objective at (W, H) of this magnitude")
    return val, gW, gH


def _optimal_W(H, K, n, lw):
    """W*(H) = Y Hᵀ(HHᵀ + nλ_W I)⁻¹ through the SVD H = U S Vᵀ: W* = (Y V)·diag(σ/(σ² + nλ_W))·Uᵀ.

    σ/(σ² + μ) = 1/(σ + μ/σ) is evaluated in logs from the SVD of the exactly rescaled H, so no
    magnitude of H or λ_W overflows, and no singular system is ever solved.
    """
    e = _exponent(H)
    with np.errstate(under="ignore"):
        Hs = np.ldexp(H, -e)
    try:
        U, s, Vt = np.linalg.svd(Hs, full_matrices=False)
    except np.linalg.LinAlgError as exc:  # pragma: no cover - LAPACK non-convergence
        fail("H", _show(H), f"the SVD of H did not converge ({exc})")
    g = np.zeros_like(s)
    pos = s > 0
    ls = np.log(s[pos]) + e * math.log(2.0)  # log σ
    lmu = math.log(n) + math.log(lw)
    g[pos] = np.exp(-np.logaddexp(ls, lmu - ls))
    YV = Vt.T.reshape(K, n, -1).sum(axis=1)  # Y V: class sums of the rows of V
    return (YV * g[None, :]) @ U.T


@public(H=_MAT, K=_K, lam_W=_LW, legacy_positional=("K", "lam_W"))
def optimal_W(H, *, K: int, lam_W: float):
    """W*(H) = Y Hᵀ(HHᵀ + nλ_W I)⁻¹ (footnote 3), the minimiser of (1)/(2) over W for fixed H.

    Computed from the SVD of H (never a d×d solve), so it is exact to rounding for any magnitude
    of H and λ_W > 0.
    """
    H, K, n = _KN(H, K)
    d, N = H.shape
    _dense_budget(
        "H",
        _show(H),
        floats=3 * d * N + 2 * min(d, N) ** 2,
        flops=10 * d * N * min(d, N),
        what="optimal_W (an SVD of H)",
    )
    W = _optimal_W(H, K, n, lam_W)
    _finite("H", _show(H), W, what="W*(H)")
    return W


def _scaled_stats(H, K, n, lw):
    """(Hs, D_s, SW_s, ST_s, μ_s, e): the central-path matrices of H·2^-e, μ_s = (λ_W/K)·4^-e (capped)."""
    e = _exponent(H)
    with np.errstate(under="ignore"):
        Hs = np.ldexp(H, -e)
    N = H.shape[1]
    Hb = _class_means(Hs, K, n)
    D = Hs - np.repeat(Hb, n, axis=1)
    SW = D @ D.T / N
    ST = Hs @ Hs.T / N
    with np.errstate(over="ignore", under="ignore"):
        mu = float(np.ldexp(lw / K, -2 * e))
    # beyond 1e300 the ridge dwarfs ST, SW (entries ≤ 1): B = μI to working precision, and capping
    # μ keeps the products finite
    return Hs, D, SW, ST, min(mu, 1e300), e


@public(
    H=_MAT, K=_K, lam_W=_LW, lam_H=_L0, method=Choice("closed", "direct"), legacy_positional=("K", "lam_W", "lam_H")
)
def central_path_loss(H, *, K: int, lam_W: float, lam_H: float, method: str = "closed"):
    """L(H) = f(W*(H), H; ·) without the anchor (App. A).

    ``method="closed"``: (1/(2K))·tr(A B⁻¹) + (λ_H/2)·tr Σ̃_T − (d−K)/(2K) with Σ̃_T = HHᵀ/N,
    B = Σ̃_T + (λ_W/K)I, A = Σ_W + (λ_W/K)I; ``"direct"``: evaluate (1) at W*(H).

    tr(A B⁻¹) is invariant under a common rescaling of H and of the ridge, so it is computed from H
    rescaled exactly by a power of two; a loss beyond the float64 range (‖H‖² λ_H ≳ 1e308) is refused.
    """
    H, K, n = _KN(H, K)
    d, N = H.shape
    _dense_budget(
        "H",
        _show(H),
        floats=4 * d * d + 3 * d * N,
        flops=2 * d * d * N + 2 * d**3,
        what="central_path_loss (d x d matrices)",
    )
    if method == "direct":
        W = _optimal_W(H, K, n, lam_W)
        with np.errstate(over="ignore", invalid="ignore"):
            val = _anchored_objective(W, H, None, K, n, lam_W, lam_H, 0.0)[0]
        _finite("H", _show(H), val, what="the loss L(H)")
        return val
    return _central_path_loss(H, K, n, lam_W, lam_H)


def _central_path_loss(H, K, n, lw, lh):
    d = H.shape[0]
    Hs, D, SW, ST, mu, e = _scaled_stats(H, K, n, lw)
    B = ST + mu * np.eye(d)
    A = SW + mu * np.eye(d)
    tr = float(np.trace(_solve(B, A, "lam_W", lw, "B = HHᵀ/N + (λ_W/K)I")))
    with np.errstate(over="ignore"):
        trT = float(np.ldexp(np.trace(ST), 2 * e))
        val = tr / (2 * K) + lh / 2 * trT - (d - K) / (2 * K) if lh else tr / (2 * K) - (d - K) / (2 * K)
    _finite("H", _show(H), val, what="the loss L(H) (λ_H·‖H‖²)")
    return float(val)


def _central_path_gradient(H, K, n, lw, lh):
    # ∇L = [2^-e (C'D' − C'A'C'H') + 2^e λ_H K H']/(K²n) with the primed matrices of H·2^-e
    d = H.shape[0]
    Hs, D, SW, ST, mu, e = _scaled_stats(H, K, n, lw)
    B = ST + mu * np.eye(d)
    A = SW + mu * np.eye(d)
    C = _solve(B, np.eye(d), "lam_W", lw, "B = HHᵀ/N + (λ_W/K)I")
    C = 0.5 * (C + C.T)
    with np.errstate(over="ignore", under="ignore"):
        G = np.ldexp(C @ D - C @ A @ C @ Hs, -e)
        if lh:
            G = G + np.ldexp(lh * K * Hs, e)
    return G / (K * K * n)


@public(H=_MAT, K=_K, lam_W=_LW, lam_H=_L0, legacy_positional=("K", "lam_W", "lam_H"))
def central_path_gradient(H, *, K: int, lam_W: float, lam_H: float):
    """∇L(H) = 1/(K²n)·( C(H − H̄⊗1ᵀ) − C A C H + λ_H K H ), C = B⁻¹ (Eq. 7).

    Computed from H rescaled exactly by a power of two; a gradient beyond float64 is refused.
    """
    H, K, n = _KN(H, K)
    d, N = H.shape
    _dense_budget(
        "H",
        _show(H),
        floats=5 * d * d + 4 * d * N,
        flops=6 * d * d * N + 4 * d**3,
        what="central_path_gradient (d x d matrices)",
    )
    G = _central_path_gradient(H, K, n, lam_W, lam_H)
    _finite("H", _show(H), G, what="∇L(H)")
    return G


# ----------------------------------------------------------------------------- Hessian (App. C)
def _hessian_budget(name, value, K, d, N, what):
    dN, Kd = d * N, K * d
    _dense_budget(
        name, value, floats=3 * dN * dN + 3 * Kd * Kd + 3 * Kd * dN, flops=4 * dN * dN + 2 * Kd * Kd, what=what
    )


def _hessian_blocks(W, H, K, n, lw, lh, beta):
    d, N = H.shape
    R = W @ H - _Y(K, n)
    Hww = np.kron(H @ H.T, np.eye(K)) / N + lw / K * np.eye(K * d)
    Hhh = (np.kron(np.eye(N), W.T @ W) + (lh + beta) * np.eye(d * N)) / N
    # index of W_{kl} in vec(W) is l·K + k; of H_{ij} in vec(H) is j·d + i
    X = np.einsum("ki,lj->lkji", W, H) + np.einsum("kj,li->lkji", R, np.eye(d))
    Hwh = X.reshape(d * K, N * d) / N
    return Hww, Hwh, Hhh


@public(W=_MAT, H=_MAT, K=_K, lam_W=_L0, lam_H=_L0, beta=_L0, legacy_positional=("K", "lam_W", "lam_H", "beta"))
def hessian_blocks(W, H, *, K: int, lam_W: float, lam_H: float, beta: float):
    """Second derivatives of (2) in the coordinates w = vec(W), h = vec(H) (column stacking).

    Returns ``(Hww, Hwh, Hhh)`` with shapes (Kd×Kd), (Kd×dN), (dN×dN):
    Hww = (1/N)(HHᵀ⊗I_K) + (λ_W/K)I, Hhh = (1/N)[I_N⊗WᵀW + (λ_H+β)I] and the cross block
    ∂²f/∂W_{kl}∂H_{ij} = (W_{ki}H_{lj} + R_{kj}δ_{li})/N with R = WH − Y (App. C's E(W,H) + Hᵀ⊗Wᵀ).
    The dense blocks are sized against the memory budget first.
    """
    H, K, n = _KN(H, K)
    d, N = H.shape
    W = _check_W(W, K, d)
    _hessian_budget("H", _show(H), K, d, N, "hessian_blocks (dN x dN blocks)")
    with np.errstate(over="ignore", invalid="ignore"):
        out = _hessian_blocks(W, H, K, n, lam_W, lam_H, beta)
    _finite("W", _show(W), *out, what="the Hessian at (W, H) of this magnitude")
    return out
