"""The perturbation paper's UFM with features anchored to a given matrix H0 (its Eqs. 1–7, Thms 2.1,
3.1, 4.1, 4.2; see perturbation-analysis notes).

Scaling (the paper's own, footnote 2), W ∈ R^{K×d}, H, H0 ∈ R^{d×N} (columns class-major, N = K·n):

    f(W, H; H0) = 1/(2N)‖WH − Y‖² + λ_W/(2K)‖W‖² + λ_H/(2N)‖H‖² + β/(2N)‖H − H0‖²      (2)

(β = 0 gives the plain UFM (1)). vec(·) stacks columns, so vec(H) is the concatenation of the
samples h_{k,i} and the class-k block of vec(H) is the slice [k·n·d, (k+1)·n·d).

Every entry point checks its arguments (kinds declared with ``@public``), sizes its dense matrices
(d×d, dN×dN Hessian blocks, …) against the budget before forming them, converts linear-algebra
failures into :class:`~fctheory.FCTheoryError`, and refuses a result that overflows float64 rather
than returning inf/NaN. The closed forms (Theorems 2.1 and 4.2) are evaluated through logs of λ.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import minimize

from .._budget import check_work, get_budget
from .._numerics import pow2_exponent
from .._validate import Array, Bool, Choice, Int, Real, Seed, fail, public, result_type
from ..metrics.nc import nc1 as _nc1
from ._common import rng_of, seconds_of, single_thread_blas

__all__ = [
    "CollapsedMinimizer",
    "collapsed_minimizer",
    "anchored_objective",
    "optimal_W",
    "central_path_loss",
    "central_path_gradient",
    "AnchoredSolution",
    "solve_anchored",
    "FlowResult",
    "gradient_flow",
    "hessian_blocks",
    "FirstOrderResponse",
    "first_order_response",
    "class_blocks",
    "BlockSpectra",
    "block_spectra",
    "nc1_tilde",
]

# parameter kinds
_MAT = Array(ndim=2)
_K = Int(min=2)
_N = Int(min=1)
_LW = Real(lo=0.0, lo_open=True)
_L0 = Real(lo=0.0)
_LOG_MAX = math.log(np.finfo(np.float64).max)


# ----------------------------------------------------------------------------- helpers
def _KN(H, K, name="H"):
    H = np.asarray(H, dtype=np.float64)
    if H.ndim != 2 or H.shape[1] % K:
        fail(name, H, f"must be d x N with N a multiple of K = {K}, got shape {H.shape}")
    if not np.all(np.isfinite(H)):
        fail(name, H, "must be finite")
    return H, K, H.shape[1] // K


def _check_W(W, K, d):
    W = np.asarray(W, dtype=np.float64)
    if W.shape != (K, d):
        fail("W", W, f"must have shape (K, d) = ({K}, {d}) to match H, got {W.shape}")
    return W


def _Y(K, n):
    return np.repeat(np.eye(K), n, axis=1)


def _exponent(A) -> int:
    return pow2_exponent(A)


def _finite(name, value, *arrays, what="the result"):
    for A in arrays:
        if A is not None and not np.all(np.isfinite(A)):
            fail(name, value, f"{what} overflows float64 for this input")


def _show(A):
    return f"array of shape {np.shape(A)}"


def _solve(A, B, name, value, what):
    """A⁻¹B, with a singular A reported as the project error (never numpy's LinAlgError)."""
    try:
        X = np.linalg.solve(A, B)
    except np.linalg.LinAlgError as exc:
        fail(name, value, f"{what} is singular to working precision ({exc})")
    _finite(name, value, X, what=f"the solve with {what}")
    return X


def _dense_budget(name, value, *, floats, flops=0, what):
    # exact integer sizes (d, n may be 10**400): nanoseconds at ~1 GFLOP/s, never a float overflow
    check_work(name, value, bytes=8 * floats, seconds=seconds_of(flops), what=what)


def _class_means(H, K, n):
    return H.reshape(H.shape[0], K, n).mean(axis=2)


def _sqrt_prod(x, y):
    """√(x·y) for positive x, y of any magnitude (through logs when the product leaves the normal range)."""
    p = x * y
    if 1e-300 < p < 1e300:
        return math.sqrt(p)
    return math.exp(0.5 * (math.log(x) + math.log(y)))


def _exp_or_fail(name, value, lg, what):
    if lg > _LOG_MAX:
        fail(name, value, f"{what} = e^{lg:.6g} is beyond the float64 range")
    return math.exp(lg)


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


# ----------------------------------------------------------------------------- Theorem 2.1
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


# ----------------------------------------------------------------------------- objective, central path
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


# ----------------------------------------------------------------------------- solver for (2)
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


# ----------------------------------------------------------------------------- Theorem 4.1
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
