"""Theorem 2.1: the collapsed global minimiser of the UFM (1) and its value; the paper's ÑC1 (Eq. 3)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..._validate import Int, Seed, fail, public, result_type
from .._common import rng_of
from ._common import _K, _KN, _LW, _MAT, _N, _class_means, _dense_budget, _exp_or_fail, _exponent, _sqrt_prod

__all__ = ["CollapsedMinimizer", "collapsed_minimizer", "nc1_tilde"]


@public(H=_MAT, K=_K, legacy_positional=("K",))
def nc1_tilde(H, *, K):
    """ÑC1(H) = tr Σ_W / tr Σ_B (the paper's Eq. 3), H d×N class-major.

    Scale invariant: H is rescaled exactly by a power of two first, so H·1e300 and H·1e-300 give the
    value of H. Undefined (FCTheoryError) when all class means coincide.
    """
    H, K, n = _KN(H, K)
    with np.errstate(under="ignore"):
        H = np.ldexp(H, -_exponent(H))
    Hb = _class_means(H, K, n)
    D = H - np.repeat(Hb, n, axis=1)
    Mc = Hb - Hb.mean(axis=1, keepdims=True)
    trB = np.sum(Mc * Mc) / K
    if trB == 0:
        fail("H", "features with coinciding class means", "ÑC1 is undefined when tr Σ_B = 0")
    return float(np.sum(D * D) / (K * n) / trB)


@result_type
@dataclass(frozen=True)
class CollapsedMinimizer:
    """A global minimiser of (1) (Theorem 2.1, = Tirer & Bruna Thm 3.1 in this scaling).

    value = c − c²/2 with c = √(λ_Hλ_W) ≤ 1 (1/2 and (0, 0) when c > 1); ‖h̄_k‖² = ρ =
    (1−c)√(λ_W/λ_H), H̄ᵀH̄ = ρI, w_k = √(λ_H/λ_W)·h̄_k. ``W``, ``H`` use the frame ``R`` (d×K,
    orthonormal columns): H = √ρ·R⊗1ᵀ, W = √(λ_H/λ_W)√ρ·Rᵀ.
    """

    value: float
    c: float
    rho: float
    sigma_W_sq: float
    W: np.ndarray
    H: np.ndarray
    R: np.ndarray
    trivial: bool


@public(
    K=_K,
    n_spl=_N,
    d=Int(min=1),
    lam_W=_LW,
    lam_H=_LW,
    R=_MAT.or_none(),
    seed=Seed(),
    renamed={"n": "n_spl"},
    legacy_positional=("K", "n_spl", "d", "lam_W", "lam_H"),
)
def collapsed_minimizer(
    *, K: int, n_spl: int, d: int, lam_W: float, lam_H: float, R=None, seed=None
) -> CollapsedMinimizer:
    """Theorem 2.1: the collapsed global minimiser of the UFM (1) and its value (needs d ≥ K).

    Parameters
    ----------
    K, n_spl, d : int
        Classes (≥ 2), samples per class, feature dimension (d ≥ K); the d×K·n_spl matrix H is sized
        against the memory budget first.
    lam_W, lam_H : float
        Regularisation (> 0, any magnitude: c, ρ and σ_W² are evaluated through logs; a ρ or σ_W²
        beyond the float64 range is refused).
    R : array_like (d, K), optional
        Orthonormal frame; default the first K columns of I_d (or a random one with ``seed``).
    """
    n = n_spl  # the papers' n (samples per class)
    if d < K:
        fail("d", d, f"Theorem 2.1 needs d >= K = {K}")
    _dense_budget("n_spl", n, floats=d * K * n + 3 * d * K, what="collapsed_minimizer (the d x K*n matrix H)")
    lw, lh = lam_W, lam_H
    c = _sqrt_prod(lw, lh)
    if R is None:
        if seed is None:
            R = np.eye(d, K)
        else:
            Q, Rr = np.linalg.qr(rng_of(seed).standard_normal((d, K)))
            R = Q * np.sign(np.diag(Rr))
    else:
        if R.shape != (d, K) or not np.allclose(R.T @ R, np.eye(K), atol=1e-12):
            fail("R", R, f"must be a {d}x{K} matrix with orthonormal columns")
    trivial = c > 1
    if trivial:
        rho = sW2 = 0.0
    else:
        l1c = math.log1p(-c) if c < 1 else -math.inf
        rho = 0.0 if c == 1 else _exp_or_fail("lam_H", lam_H, l1c + 0.5 * (math.log(lw) - math.log(lh)), "ρ")
        sW2 = 0.0 if c == 1 else _exp_or_fail("lam_W", lam_W, l1c + 0.5 * (math.log(lh) - math.log(lw)), "σ_W²")
    H = math.sqrt(rho) * np.repeat(R, n, axis=1)
    W = math.sqrt(sW2) * R.T
    value = 0.5 if trivial else c - c * c / 2
    return CollapsedMinimizer(float(value), float(c), float(rho), float(sW2), W, H, R, bool(trivial))
