"""The response of the minimiser of (2) to its anchor: the first-order map of Theorem 4.1 (Eq. 5), its class
blocks (Eq. 6), and their closed-form spectra near collapse (Theorem 4.2, App. D)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..._validate import Choice, Int, Real, fail, public, result_type
from ._common import (
    _K,
    _KN,
    _L0,
    _LW,
    _MAT,
    _N,
    _check_W,
    _dense_budget,
    _exp_or_fail,
    _finite,
    _show,
    _solve,
    _sqrt_prod,
)
from .objective import _hessian_blocks

__all__ = ["FirstOrderResponse", "first_order_response", "class_blocks", "BlockSpectra", "block_spectra"]


@result_type
@dataclass(frozen=True)
class FirstOrderResponse:
    """Linear response of the minimiser of (2) to H0 → H0 + δH0 (Theorem 4.1).

    vec(δH) ≈ F_H vec(δH0), vec(δW) ≈ F_W vec(δH0); ``G`` is the matrix with
    F_exact = (I + G/β)⁻¹, ``kind`` says whether F_H is the exact Schur-complement map or the
    first-order Neumann truncation (Eq. 5), F = I − G/β.
    """

    F_H: np.ndarray
    F_W: np.ndarray
    G: np.ndarray
    kind: str

    @public(dH0=_MAT)
    def apply(self, dH0):
        """(δW, δH) predicted for a perturbation δH0 (d×N, the shape of H)."""
        dN = self.F_H.shape[1]
        d, N = dH0.shape
        if d * N != dN or self.F_W.shape[0] % d:
            fail("dH0", dH0, f"must be d x N with d*N = {dN} (the shape of H), got {dH0.shape}")
        # the map is linear: apply it to δH0·2^-e (|entries| <= 1) and scale back exactly, so a huge δH0
        # cannot overflow inside the products while the true response is still a float
        e = int(np.frexp(np.max(np.abs(dH0)))[1]) if np.any(dH0) else 0
        v = np.ldexp(dH0, -e).T.ravel()
        K = self.F_W.shape[0] // d
        with np.errstate(over="ignore", invalid="ignore"):
            dh = np.ldexp((self.F_H @ v).reshape(N, d).T, e)
            dw = np.ldexp((self.F_W @ v).reshape(d, K).T, e)
        if not (np.all(np.isfinite(dh)) and np.all(np.isfinite(dw))):
            fail("dH0", dH0, "gives a response (δW, δH) beyond the float64 range")
        return dw, dh


@public(
    W=_MAT,
    H=_MAT,
    K=_K,
    lam_W=_LW,
    lam_H=_L0,
    beta=_L0,
    kind=Choice("exact", "neumann"),
    legacy_positional=("K", "lam_W", "lam_H", "beta"),
)
def first_order_response(
    W, H, *, K: int, lam_W: float, lam_H: float, beta: float, kind: str = "exact"
) -> FirstOrderResponse:
    """Theorem 4.1 at a minimiser (W, H) of (2): vec(δH) = (β/N)S⁻¹vec(δH0) with the Schur
    complement S = ∇_H∇_H f − ∇_H∇_W f (∇_W∇_W f)⁻¹ ∇_W∇_H f, and vec(δW) = −(∇_W∇_W f)⁻¹∇_W∇_H f·vec(δH).

    ``kind="exact"`` returns F = (I + G/β)⁻¹, ``kind="neumann"`` the paper's Eq. 5, F = I − G/β,
    where G = λ_H I + I⊗WᵀW − Z and Z = N·∇_H∇_W f (∇_W∇_W f)⁻¹ ∇_W∇_H f. β must be > 0. The dense
    dN×dN matrices are sized against the budget; a singular system is reported, never raised.
    """
    H, K, n = _KN(H, K)
    lw, lh = lam_W, lam_H
    if beta == 0:
        fail("beta", beta, "must be > 0 (the response is (β/N)S⁻¹)")
    d, N = H.shape
    W = _check_W(W, K, d)
    dN = d * N
    _dense_budget(
        "H",
        _show(H),
        floats=8 * dN * dN + 3 * K * d * dN,
        flops=4 * dN**3 + 4 * (K * d) ** 2 * dN,
        what="first_order_response (dN x dN matrices)",
    )
    with np.errstate(over="ignore", invalid="ignore"):
        Hww, Hwh, Hhh = _hessian_blocks(W, H, K, n, lw, lh, beta)
        X = _solve(Hww, Hwh, "lam_W", lam_W, "∇_W∇_W f")  # (∇_W∇_W f)⁻¹ ∇_W∇_H f
        Z = N * (Hwh.T @ X)
        G = lh * np.eye(dN) + np.kron(np.eye(N), W.T @ W) - Z
        G = 0.5 * (G + G.T)
        if kind == "exact":
            F = _solve(np.eye(dN) + G / beta, np.eye(dN), "beta", beta, "I + G/β")
        else:
            F = np.eye(dN) - G / beta
        FW = -X @ F
    _finite("W", _show(W), F, FW, G, what="the response maps")
    return FirstOrderResponse(F, FW, G, kind)


@public(F=_MAT, K=Int(min=1), n_spl=_N, d=Int(min=1), renamed={"n": "n_spl"}, legacy_positional=("K", "n_spl", "d"))
def class_blocks(F, *, K: int, n_spl: int, d: int):
    """F split into the K×K blocks F_{k,k̃} of size dn×dn (Eq. 6; block k = columns n·k … n·k+n−1).

    F must be (K·d·n) × (K·d·n); returns a (K, K, dn, dn) view.
    """
    n = n_spl  # the papers' n (samples per class)
    s = d * n
    if F.shape != (K * s, K * s):
        fail("F", F, f"must be {K * s}x{K * s} (K*d*n square), got {F.shape}")
    return F.reshape(K, s, K, s).transpose(0, 2, 1, 3)


# ----------------------------------------------------------------------------- Theorem 4.2
@result_type
@dataclass(frozen=True)
class BlockSpectra:
    """Closed-form spectra near collapse (Theorem 4.2 and App. D; Neumann map of Eq. 5).

    Attributes
    ----------
    intra : ndarray (d·n,)
        Singular values of a diagonal block F_{k,k}, descending.
    inter : ndarray (d·n,)
        Singular values of an off-diagonal block F_{k,k̃} (rank one), descending.
    sigma_max_intra, sigma_min_intra, sigma_max_inter : float
        1, 1 − √(λ_H/λ_W)/β and 2λ_H(1−c)/β (Theorem 4.2).
    G_eigenvalues : ndarray (d·N,)
        Eigenvalues of G (F_exact = (I + G/β)⁻¹), descending (notes' full first-order map).
    F_exact_eigenvalues : ndarray (d·N,)
        β/(β + g) for each eigenvalue g of G.
    """

    intra: np.ndarray
    inter: np.ndarray
    sigma_max_intra: float
    sigma_min_intra: float
    sigma_max_inter: float
    G_eigenvalues: np.ndarray
    F_exact_eigenvalues: np.ndarray


@public(
    K=_K,
    n_spl=_N,
    d=Int(min=3),
    lam_W=_LW,
    lam_H=_LW,
    beta=Real(lo=0.0),
    renamed={"n": "n_spl"},
    legacy_positional=("K", "n_spl", "d", "lam_W", "lam_H", "beta"),
)
def block_spectra(*, K: int, n_spl: int, d: int, lam_W: float, lam_H: float, beta: float) -> BlockSpectra:
    """Theorem 4.2: spectra of the blocks of F (Eq. 5) at H0 = H*, needs d > K and c = √(λ_Hλ_W) < 1.

    The d·N eigenvalues and d·n singular values are sized against the budget first; the ratios
    √(λ_H/λ_W)/β and λ_H/β are taken through logs (a spectrum beyond float64 is refused).
    """
    n = n_spl  # the papers' n (samples per class)
    if d < K + 1:
        fail("d", d, f"Theorem 4.2 needs d > K = {K}")
    if beta == 0:
        fail("beta", beta, "must be > 0")
    _dense_budget(
        "n_spl", n, floats=4 * (d * K * n + d * n), flops=40 * d * K * n, what="block_spectra (the d*N eigenvalues)"
    )
    lw, lh = lam_W, lam_H
    c = _sqrt_prod(lw, lh)
    if not 0 < c < 1:
        fail("lam_H", lam_H, "Theorem 4.2 needs 0 < sqrt(lam_H*lam_W) < 1")
    lb = math.log(beta)
    r = _exp_or_fail("lam_H", lam_H, 0.5 * (math.log(lh) - math.log(lw)), "sqrt(lam_H/lam_W)")
    r_b = _exp_or_fail("beta", beta, 0.5 * (math.log(lh) - math.log(lw)) - lb, "sqrt(lam_H/lam_W)/beta")
    l_b = _exp_or_fail("beta", beta, math.log(lh) - lb, "lam_H/beta")
    e_b = _exp_or_fail("beta", beta, math.log(lh) + math.log1p(-c) - lb, "lam_H*(1-c)/beta")
    g4 = 4 * lh * (1 - c)
    intra = np.concatenate(
        [
            np.full((n - 1) * K, 1 - r_b),
            np.full((n - 1) * (d - K), 1 - l_b),
            [1 - 4 * e_b],
            np.full(K - 1, 1 - 2 * e_b),
            np.ones(d - K),
        ]
    )
    inter = np.zeros(d * n)
    inter[0] = 2 * e_b
    g = np.concatenate(
        [
            np.full(K * K * (n - 1), r),
            np.full(K * (n - 1) * (d - K), lh),
            np.zeros(K * (K - 1) // 2 + K * (d - K)),
            np.full(K * (K + 1) // 2, g4),
        ]
    )
    g = np.sort(g)[::-1]
    intra = np.sort(np.abs(intra))[::-1]
    with np.errstate(over="ignore"):
        fe = 1.0 / (1.0 + g / beta)  # β/(β + g) without forming β + g (both may be ~1e308)
    _finite("beta", beta, intra, inter, g, fe, 2 * e_b, what="the block spectra")
    return BlockSpectra(intra, inter, 1.0, float(1 - r_b), float(2 * e_b), g, fe)
