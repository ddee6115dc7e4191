"""The perturbation paper's UFM with features anchored to a given matrix H0 (its Eqs. 1–7, Thms 2.1,
3.1, 4.1, 4.2; see perturbation-analysis notes).

Scaling (the paper's own, footnote 2), W ∈ R^{K×d}, H, H0 ∈ R^{d×N} (columns class-major, N = K·n):

    f(W, H; H0) = 1/(2N)‖WH − Y‖² + λ_W/(2K)‖W‖² + λ_H/(2N)‖H‖² + β/(2N)‖H − H0‖²      (2)

(β = 0 gives the plain UFM (1)). vec(·) stacks columns, so vec(H) is the concatenation of the
samples h_{k,i} and the class-k block of vec(H) is the slice [k·n·d, (k+1)·n·d).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import minimize

from .._validate import check_int, fail
from ._common import check_pos, rng_of, single_thread_blas

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


# ----------------------------------------------------------------------------- helpers
def _KN(H, K):
    K = check_int("K", K, min=2)
    H = np.asarray(H, dtype=np.float64)
    if H.ndim != 2 or H.shape[1] % K:
        fail("H", H, f"must be d x N with N a multiple of K = {K}")
    if not np.all(np.isfinite(H)):
        fail("H", H, "must be finite")
    return H, K, H.shape[1] // K


def _Y(K, n):
    return np.repeat(np.eye(K), n, axis=1)


def _lams(lam_W, lam_H, beta=None):
    lw = check_pos("lam_W", lam_W)
    lh = check_pos("lam_H", lam_H, allow_zero=True)
    if beta is None:
        return lw, lh
    return lw, lh, check_pos("beta", beta, allow_zero=True)


def _class_means(H, K, n):
    return H.reshape(H.shape[0], K, n).mean(axis=2)


def nc1_tilde(H, K):
    """ÑC1(H) = tr Σ_W / tr Σ_B (the paper's Eq. 3), H d×N class-major."""
    H, K, n = _KN(H, K)
    Hb = _class_means(H, K, n)
    D = H - np.repeat(Hb, n, axis=1)
    Mc = Hb - Hb.mean(axis=1, keepdims=True)
    trB = np.sum(Mc * Mc) / K
    if trB == 0:
        fail("H", "features with coinciding class means", "ÑC1 is undefined when tr Σ_B = 0")
    return float(np.sum(D * D) / (K * n) / trB)


# ----------------------------------------------------------------------------- Theorem 2.1
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


def collapsed_minimizer(K: int, n: int, d: int, lam_W: float, lam_H: float, *, R=None, seed=None) -> CollapsedMinimizer:
    """Theorem 2.1: the collapsed global minimiser of the UFM (1) and its value (needs d ≥ K)."""
    K = check_int("K", K, min=2)
    n = check_int("n", n, min=1)
    d = check_int("d", d, min=1)
    if d < K:
        fail("d", d, f"Theorem 2.1 needs d >= K = {K}")
    lw, lh = _lams(lam_W, lam_H)
    if lh == 0:
        fail("lam_H", lam_H, "must be > 0 for Theorem 2.1")
    c = np.sqrt(lw * lh)
    if R is None:
        if seed is None:
            R = np.eye(d, K)
        else:
            Q, Rr = np.linalg.qr(rng_of(seed).standard_normal((d, K)))
            R = Q * np.sign(np.diag(Rr))
    else:
        R = np.asarray(R, dtype=float)
        if R.shape != (d, K) or not np.allclose(R.T @ R, np.eye(K), atol=1e-12):
            fail("R", R, f"must be a {d}x{K} matrix with orthonormal columns")
    trivial = c > 1
    rho = 0.0 if trivial else (1 - c) * np.sqrt(lw / lh)
    sW2 = 0.0 if trivial else (1 - c) * np.sqrt(lh / lw)
    H = np.sqrt(rho) * np.repeat(R, n, axis=1)
    W = np.sqrt(sW2) * R.T
    value = 0.5 if trivial else c - c**2 / 2
    return CollapsedMinimizer(float(value), float(c), float(rho), float(sW2), W, H, R, bool(trivial))


# ----------------------------------------------------------------------------- objective, central path
def anchored_objective(W, H, H0, K, lam_W, lam_H, beta):
    """f(W, H; H0) of (2) and its gradients (∇_W f, ∇_H f). ``H0=None`` with β = 0 gives (1)."""
    H, K, n = _KN(H, K)
    N = K * n
    W = np.asarray(W, dtype=np.float64)
    R = W @ H - _Y(K, n)
    val = 0.5 * np.sum(R * R) / N + lam_W / (2 * K) * np.sum(W * W) + lam_H / (2 * N) * np.sum(H * H)
    gW = R @ H.T / N + lam_W / K * W
    gH = (W.T @ R + lam_H * H) / N
    if beta:
        D = H - H0
        val += beta / (2 * N) * np.sum(D * D)
        gH = gH + beta * D / N
    return float(val), gW, gH


def optimal_W(H, K: int, lam_W: float):
    """W*(H) = Y Hᵀ(HHᵀ + nλ_W I)⁻¹ (footnote 3), the minimiser of (1)/(2) over W for fixed H."""
    H, K, n = _KN(H, K)
    lw = check_pos("lam_W", lam_W)
    d = H.shape[0]
    A = H @ H.T + n * lw * np.eye(d)
    return np.linalg.solve(A, H @ _Y(K, n).T).T  # A symmetric


def central_path_loss(H, K: int, lam_W: float, lam_H: float, *, method: str = "closed"):
    """L(H) = f(W*(H), H; ·) without the anchor (App. A).

    ``method="closed"``: (1/(2K))·tr(A B⁻¹) + (λ_H/2)·tr Σ̃_T − (d−K)/(2K) with Σ̃_T = HHᵀ/N,
    B = Σ̃_T + (λ_W/K)I, A = Σ_W + (λ_W/K)I; ``"direct"``: evaluate (1) at W*(H).
    """
    H, K, n = _KN(H, K)
    lw, lh = _lams(lam_W, lam_H)
    if method == "direct":
        return anchored_objective(optimal_W(H, K, lw), H, None, K, lw, lh, 0.0)[0]
    if method != "closed":
        fail("method", method, "must be 'closed' or 'direct'")
    d, N = H.shape
    Hb = _class_means(H, K, n)
    D = H - np.repeat(Hb, n, axis=1)
    SW = D @ D.T / N
    ST = H @ H.T / N
    B = ST + lw / K * np.eye(d)
    A = SW + lw / K * np.eye(d)
    return float(np.trace(np.linalg.solve(B, A)) / (2 * K) + lh / 2 * np.trace(ST) - (d - K) / (2 * K))


def central_path_gradient(H, K: int, lam_W: float, lam_H: float):
    """∇L(H) = 1/(K²n)·( C(H − H̄⊗1ᵀ) − C A C H + λ_H K H ), C = B⁻¹ (Eq. 7)."""
    H, K, n = _KN(H, K)
    lw, lh = _lams(lam_W, lam_H)
    d, N = H.shape
    Hb = _class_means(H, K, n)
    D = H - np.repeat(Hb, n, axis=1)
    SW = D @ D.T / N
    B = H @ H.T / N + lw / K * np.eye(d)
    A = SW + lw / K * np.eye(d)
    C = np.linalg.inv(B)
    C = 0.5 * (C + C.T)
    return (C @ D - C @ A @ C @ H + lh * K * H) / (K * K * n)


# ----------------------------------------------------------------------------- Hessian (App. C)
def hessian_blocks(W, H, K: int, lam_W: float, lam_H: float, beta: float):
    """Second derivatives of (2) in the coordinates w = vec(W), h = vec(H) (column stacking).

    Returns ``(Hww, Hwh, Hhh)`` with shapes (Kd×Kd), (Kd×dN), (dN×dN):
    Hww = (1/N)(HHᵀ⊗I_K) + (λ_W/K)I, Hhh = (1/N)[I_N⊗WᵀW + (λ_H+β)I] and the cross block
    ∂²f/∂W_{kl}∂H_{ij} = (W_{ki}H_{lj} + R_{kj}δ_{li})/N with R = WH − Y (App. C's E(W,H) + Hᵀ⊗Wᵀ).
    """
    H, K, n = _KN(H, K)
    W = np.asarray(W, dtype=np.float64)
    lw, lh, beta = _lams(lam_W, lam_H, beta)
    d, N = H.shape
    R = W @ H - _Y(K, n)
    Hww = np.kron(H @ H.T, np.eye(K)) / N + lw / K * np.eye(K * d)
    Hhh = (np.kron(np.eye(N), W.T @ W) + (lh + beta) * np.eye(d * N)) / N
    # index of W_{kl} in vec(W) is l·K + k; of H_{ij} in vec(H) is j·d + i
    X = np.einsum("ki,lj->lkji", W, H) + np.einsum("kj,li->lkji", R, np.eye(d))
    Hwh = X.reshape(d * K, N * d) / N
    return Hww, Hwh, Hhh


# ----------------------------------------------------------------------------- solver for (2)
@dataclass(frozen=True)
class AnchoredSolution:
    """Minimiser (W, H) of (2) for a given H0, its value and the final gradient norm."""

    W: np.ndarray
    H: np.ndarray
    value: float
    grad_norm: float
    newton_steps: int


def solve_anchored(H0, K: int, lam_W: float, lam_H: float, beta: float, *, H_init=None, newton: bool = True,
                   max_newton: int = 30) -> AnchoredSolution:
    """Minimise (2) for a general H0.

    L-BFGS on the reduced objective L(H) + β/(2N)‖H − H0‖² (gradient ∇L + β(H−H0)/N, W eliminated
    by W*(H)), started at ``H_init`` (default H0), then Newton steps on the joint (W, H)
    stationarity system with the exact Hessian of :func:`hessian_blocks` (quadratic convergence
    to machine precision; skipped if they do not decrease the gradient).
    """
    H0, K, n = _KN(H0, K)
    lw, lh, beta = _lams(lam_W, lam_H, beta)
    d, N = H0.shape
    x0 = (H0 if H_init is None else np.asarray(H_init, dtype=np.float64)).ravel()

    def fun(x):
        H = x.reshape(d, N)
        Dv = H - H0
        v = central_path_loss(H, K, lw, lh) + beta / (2 * N) * np.sum(Dv * Dv)
        g = central_path_gradient(H, K, lw, lh) + beta * Dv / N
        return v, g.ravel()

    with single_thread_blas():
        res = minimize(fun, x0, jac=True, method="L-BFGS-B",
                       options={"maxiter": 20000, "maxcor": 10, "gtol": 1e-14, "ftol": 0.0})
        H = res.x.reshape(d, N)
        W = optimal_W(H, K, lw)
        steps = 0
        if newton:
            W, H, steps = _newton(W, H, H0, K, lw, lh, beta, max_newton)
    v, gW, gH = anchored_objective(W, H, H0, K, lw, lh, beta)
    return AnchoredSolution(W, H, v, float(np.sqrt(np.sum(gW**2) + np.sum(gH**2))), steps)


def _newton(W, H, H0, K, lw, lh, beta, max_steps):
    d, N = H.shape
    _, gW, gH = anchored_objective(W, H, H0, K, lw, lh, beta)
    gnorm = np.sqrt(np.sum(gW**2) + np.sum(gH**2))
    steps = 0
    for _ in range(max_steps):
        Hww, Hwh, Hhh = hessian_blocks(W, H, K, lw, lh, beta)
        Hess = np.block([[Hww, Hwh], [Hwh.T, Hhh]])
        g = np.concatenate([gW.T.ravel(), gH.T.ravel()])  # column-stacking vec
        try:
            step = np.linalg.solve(Hess, g)
        except np.linalg.LinAlgError:
            break
        Wn = W - step[: K * d].reshape(d, K).T
        Hn = H - step[K * d :].reshape(N, d).T
        _, gWn, gHn = anchored_objective(Wn, Hn, H0, K, lw, lh, beta)
        gn = np.sqrt(np.sum(gWn**2) + np.sum(gHn**2))
        if not gn < gnorm:
            break
        W, H, gW, gH, gnorm = Wn, Hn, gWn, gHn, gn
        steps += 1
        if gnorm < 1e-15:
            break
    return W, H, steps


# ----------------------------------------------------------------------------- gradient flow (Eq. 4)
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


def gradient_flow(H0, K: int, lam_W: float, lam_H: float, t_max: float, *, n_eval: int = 50,
                  rtol: float = 1e-10, atol: float = 1e-12) -> FlowResult:
    """Integrate the central-path flow (Eq. 4) from H0 with DOP853 and record ÑC1, NC1 (Papyan),
    L(H_t), T_W and T_B of Theorem 3.1 at ``n_eval`` equally spaced times in [0, t_max]."""
    from ..metrics.nc import nc1 as _nc1

    H0, K, n = _KN(H0, K)
    lw, lh = _lams(lam_W, lam_H)
    t_max = check_pos("t_max", t_max)
    d, N = H0.shape

    def rhs(_t, x):
        return -N * central_path_gradient(x.reshape(d, N), K, lw, lh).ravel()

    ts = np.linspace(0.0, t_max, check_int("n_eval", n_eval, min=2))
    sol = solve_ivp(rhs, (0.0, t_max), H0.ravel(), method="DOP853", t_eval=ts, rtol=rtol, atol=atol)
    if not sol.success:
        fail("t_max", t_max, f"the ODE integration failed: {sol.message}")
    Hs = sol.y.T.reshape(-1, d, N)
    y = np.repeat(np.arange(K), n)
    nt, n1, loss, TW, TB = [], [], [], [], []
    for t, H in zip(sol.t, Hs):
        Hb = _class_means(H, K, n)
        D = H - np.repeat(Hb, n, axis=1)
        Mc = Hb - Hb.mean(axis=1, keepdims=True)
        trW, trB = np.sum(D * D) / N, np.sum(Mc * Mc) / K
        nt.append(trW / trB)
        n1.append(_nc1(H.T, y))
        loss.append(central_path_loss(H, K, lw, lh))
        TW.append(np.exp(2 * lh * t) * trW)
        TB.append(np.exp(2 * lh * t) * trB)
    return FlowResult(sol.t, Hs, np.array(nt), np.array(n1), np.array(loss), np.array(TW), np.array(TB))


# ----------------------------------------------------------------------------- Theorem 4.1
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

    def apply(self, dH0):
        """(δW, δH) predicted for a perturbation δH0 (d×N)."""
        d, N = dH0.shape
        v = dH0.T.ravel()
        K = self.F_W.shape[0] // d
        dh = (self.F_H @ v).reshape(N, d).T
        dw = (self.F_W @ v).reshape(d, K).T
        return dw, dh


def first_order_response(W, H, K: int, lam_W: float, lam_H: float, beta: float, *, kind: str = "exact") -> FirstOrderResponse:
    """Theorem 4.1 at a minimiser (W, H) of (2): vec(δH) = (β/N)S⁻¹vec(δH0) with the Schur
    complement S = ∇_H∇_H f − ∇_H∇_W f (∇_W∇_W f)⁻¹ ∇_W∇_H f, and vec(δW) = −(∇_W∇_W f)⁻¹∇_W∇_H f·vec(δH).

    ``kind="exact"`` returns F = (I + G/β)⁻¹, ``kind="neumann"`` the paper's Eq. 5, F = I − G/β,
    where G = λ_H I + I⊗WᵀW − Z and Z = N·∇_H∇_W f (∇_W∇_W f)⁻¹ ∇_W∇_H f.
    """
    if kind not in ("exact", "neumann"):
        fail("kind", kind, "must be 'exact' or 'neumann'")
    H, K, n = _KN(H, K)
    lw, lh, beta = _lams(lam_W, lam_H, beta)
    if beta == 0:
        fail("beta", beta, "must be > 0 (the response is (β/N)S⁻¹)")
    W = np.asarray(W, dtype=np.float64)
    d, N = H.shape
    Hww, Hwh, Hhh = hessian_blocks(W, H, K, lw, lh, beta)
    X = np.linalg.solve(Hww, Hwh)  # (∇_W∇_W f)⁻¹ ∇_W∇_H f
    Z = N * (Hwh.T @ X)
    G = lh * np.eye(d * N) + np.kron(np.eye(N), W.T @ W) - Z
    G = 0.5 * (G + G.T)
    if kind == "exact":
        F = np.linalg.solve(np.eye(d * N) + G / beta, np.eye(d * N))
    else:
        F = np.eye(d * N) - G / beta
    return FirstOrderResponse(F, -X @ F, G, kind)


def class_blocks(F, K: int, n: int, d: int):
    """F split into the K×K blocks F_{k,k̃} of size dn×dn (Eq. 6; block k = columns n·k … n·k+n−1)."""
    F = np.asarray(F)
    s = d * n
    if F.shape != (K * s, K * s):
        fail("F", F, f"must be {K * s}x{K * s}")
    return F.reshape(K, s, K, s).transpose(0, 2, 1, 3)


# ----------------------------------------------------------------------------- Theorem 4.2
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


def block_spectra(K: int, n: int, d: int, lam_W: float, lam_H: float, beta: float) -> BlockSpectra:
    """Theorem 4.2: spectra of the blocks of F (Eq. 5) at H0 = H*, needs d > K and c = √(λ_Hλ_W) < 1."""
    K = check_int("K", K, min=2)
    n = check_int("n", n, min=1)
    d = check_int("d", d, min=K + 1)
    lw, lh, beta = _lams(lam_W, lam_H, beta)
    if beta == 0:
        fail("beta", beta, "must be > 0")
    c = np.sqrt(lw * lh)
    if not 0 < c < 1:
        fail("lam_H", lam_H, "Theorem 4.2 needs 0 < sqrt(lam_H*lam_W) < 1")
    r = np.sqrt(lh / lw)
    intra = np.concatenate([
        np.full((n - 1) * K, 1 - r / beta),
        np.full((n - 1) * (d - K), 1 - lh / beta),
        [1 - 4 * lh * (1 - c) / beta],
        np.full(K - 1, 1 - 2 * lh * (1 - c) / beta),
        np.ones(d - K),
    ])
    inter = np.zeros(d * n)
    inter[0] = 2 * lh * (1 - c) / beta
    g = np.concatenate([
        np.full(K * K * (n - 1), r),
        np.full(K * (n - 1) * (d - K), lh),
        np.zeros(K * (K - 1) // 2 + K * (d - K)),
        np.full(K * (K + 1) // 2, 4 * lh * (1 - c)),
    ])
    g = np.sort(g)[::-1]
    intra = np.sort(np.abs(intra))[::-1]
    return BlockSpectra(intra, inter, 1.0, float(1 - r / beta), float(2 * lh * (1 - c) / beta), g, beta / (beta + g))
