"""The global minimiser of the true risk (5) for uniform word frequencies, on any latent set, in the
feature-collapsed coordinates: exact, certified, and with K²L work instead of an enumeration of s_c^L sentences.

**Why it is exact.** For network h, min R = min_X g(X), g(X) = f(X) + λ‖X‖_*, X = ÛᵀW ∈ R^(KL×n_w) (Claim G,
(159)–(167); :mod:`fctheory.risk.convex`). With uniform μ, permuting the s_c words of one concept (the same
permutation at every position) maps the law of the sentences of every class onto itself, so f and ‖·‖_*, hence
g, are invariant under the column permutations of X within each concept. g is convex, so the average of a
minimiser over that group is a minimiser: **some minimiser has equal columns within each concept** (feature
collapse of the words onto their concept), X = Y ⊗ 1ᵀ (Y ∈ R^(KL×n_c), column α repeated s_c times). At such
an X every sentence of class k has the same scores, s_k(j) = Σ_ℓ Y[(j, ℓ), z_k(ℓ)], and

    f(X) = f_c(Y) = (1/K) Σ_k [log Σ_j e^(s_k(j)) − s_k(k)].

In V = √s_c·Y the map V ↦ X = V ⊗ 1ᵀ/√s_c is an isometry onto the invariant subspace, ‖X‖_* = ‖V‖_*, and
∇f(X) = ∇f_c(V) ⊗ 1ᵀ/√s_c lies in that subspace (f is invariant), so ⟨∇f(X), X⟩ = ⟨∇f_c(V), V⟩ and
‖∇f(X)‖₂ = ‖∇f_c(V)‖₂. The collapsed problem min_V f_c(V) + λ‖V‖_* therefore has the same minimum as (5),
and the Fenchel certificate of :mod:`fctheory._nuclear` at V (s = min(1, λ/‖∇f_c‖₂), E = f_c − ⟨∇f_c, V⟩) is a
certificate for (5) itself: over all weights of every width, not only collapsed ones.

**What it gives.** The balanced factors of V, Wt = Σ^(1/2)Bᵀ (r × n_c) and Û = Σ^(1/2)Aᵀ, are the concept
vectors and the classifier; word (α, β) gets w_(α,β) = Wt[:, α]/√s_c, so ‖W‖_F² = ‖V‖_*. On a full task
(K = n_c^L) this is Theorem 1's type-I configuration at τ; on a partial task (K < n_c^L) the concepts keep
one vector each but their norms and angles depend on the latent set (docs/type1-partial.md: Theorem 1's
constants are not stationary there). λ₀ = ‖∇f_c(0)‖₂ is the λ at and above which the origin is the minimiser
(Claim H at X = 0), Theorem 1's λ₀ on a full task and Lemma B's λ₀,Z on a Lemma-B set.

Cost: one evaluation is two K × Ln_c × K products and a K × K softmax, so the paper's K = 1000 of 3^15 takes
milliseconds where the exact engine would enumerate 400^15 sentences per class.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from .._budget import check_work, get_budget
from .._lbfgs import lbfgs_iterate
from .._nuclear import balanced_svd, fenchel_bound, nuclear_norm, reached, relative_gap, solve
from .._validate import Array, Instance, Int, Real, fail, public, result_type
from ..network import U_from_hat
from ..task import Task
from ..tau import tau
from ..tau_star import tau_star

__all__ = ["CollapsedOptimum", "CollapsedOptimumStar", "collapsed_optimum", "collapsed_optimum_star", "collapsed_risk"]


@result_type
@dataclass
class CollapsedOptimum:
    """Outcome of :func:`collapsed_optimum`: the certified minimiser of (5) for uniform μ.

    Attributes
    ----------
    V : ndarray, shape (K·L, n_c)
        The collapsed point: X = V ⊗ 1ᵀ/√s_c (row (j, ℓ) = j·L + ℓ, as X = ÛᵀW).
    W : ndarray, shape (width, n_w)
        Balanced word embeddings: w_(α,β) = concept_vectors[:, α]/√s_c (index α·s_c + β).
    U : ndarray, shape (K, L·width)
        Balanced classifier, ÛᵀW = X.
    width : int
        rank V: the smallest width attaining min R (0 at the origin; W and U then have one zero row).
    concept_vectors : ndarray, shape (width, n_c)
        Wt = Σ^(1/2)Bᵀ of V's SVD.
    w_norms : ndarray, shape (n_w,)
        ‖w_(α,β)‖ (equal within a concept).
    concept_norms : ndarray, shape (n_c,)
        ‖w_(α,β)‖ per concept α.
    cosines : ndarray, shape (n_c, n_c)
        Cosines between the concept directions (nan for a zero concept).
    u_norms : ndarray, shape (K, L)
        ‖u_(k,ℓ)‖.
    R, ce : float
        min R = f_c(V) + λ‖V‖_* (R at (W, U), which is balanced) and its cross-entropy part f_c(V).
    tau : float
        ‖W‖_F² = ‖U‖_F² = ‖V‖_*.
    lower_bound, gap, rel_gap : float
        The certified lower bound on min R (over every width and all weights, not only collapsed ones), R − it,
        and gap/|R|.
    rho, align : float
        ‖∇f_c(V)‖₂/λ (≤ 1 at the optimum) and (⟨∇f_c, V⟩ + λ‖V‖_*)/(λ‖V‖_*) (0 at the optimum), Claim H.
    grad : ndarray, shape (K·L, n_c)
        ∇f_c(V), the gradient the certificate was computed from (∇f(X) = grad ⊗ 1ᵀ/√s_c at the word level).
    lambda0 : float
        ‖∇f_c(0)‖₂: the origin is the minimiser iff λ ≥ lambda0.
    R_type1 : float
        R of Theorem 1's type-I configuration (its K-only τ) on this latent set (the solver's start; log K, the
        origin's, where Theorem 1 gives τ = 0): R_type1 − R is what the set's own optimum gains.
    certified : bool
        rel_gap ≤ the requested ``tol``, or (tiny λ, where R is small against the scores) the gap is within
        FLOOR_ULPS ulps of the largest score, the float64 resolution of f (the message says so), or gap ≤ 0.
    message : str
    nit, nfev : int
        Proximal-gradient iterations and evaluations of f_c and ∇f_c.
    seconds : float
    """

    V: np.ndarray
    W: np.ndarray
    U: np.ndarray
    width: int
    concept_vectors: np.ndarray
    w_norms: np.ndarray
    concept_norms: np.ndarray
    cosines: np.ndarray
    u_norms: np.ndarray
    R: float
    ce: float
    tau: float
    lower_bound: float
    gap: float
    rel_gap: float
    rho: float
    align: float
    grad: np.ndarray
    lambda0: float
    R_type1: float
    certified: bool
    message: str
    nit: int
    nfev: int
    seconds: float


class _Fc:
    """f_c(V) and ∇f_c(V) (module docstring): S = (Y₂·OH)ᵀ with Y₂ = V/√s_c as K × (L·n_c) and
    OH[(ℓ, a), k] = 1{z_k(ℓ) = a}; ∇_(Y₂) = (P − I)ᵀOHᵀ/K with P the row softmax of S."""

    def __init__(self, task: Task, root: float | None = None):
        K, L, n_c = task.K, task.L, task.n_c
        self.task, self.nfev = task, 0
        self.OH = np.zeros((L * n_c, K))
        self.OH[(np.arange(L) * n_c)[None, :] + task.Z, np.arange(K)[:, None]] = 1.0
        # h: V = √s_c·Y (the isometry of the module docstring); h*: V holds the scores' terms themselves (root 1)
        self.root = math.sqrt(task.s_c) if root is None else root
        self.shape2 = (K, L * n_c)
        self.smax = 0.0  # max |score| of the last evaluation: f's float64 resolution is a few ulps of it

    def __call__(self, V):
        self.nfev += 1
        K = self.task.K
        if K == 1:  # a single class: CE = 0
            return 0.0, np.zeros_like(V)
        S = (V.reshape(self.shape2) @ self.OH).T / self.root  # S[k, j]: class j's score on class k's sentences
        self.smax = float(np.max(np.abs(S)))
        m = S.max(axis=1, keepdims=True)
        E = np.exp(S - m)
        Z = E.sum(axis=1, keepdims=True)
        lse = m[:, 0] + np.log(Z[:, 0])
        f = float(np.mean(lse - np.diagonal(S)))
        P = E / Z
        P[np.diag_indices(K)] -= 1.0
        G = (P.T @ self.OH.T) / (K * self.root)
        return f, G.reshape(V.shape)


def _type1_start(task, lam, lambda0):
    """Theorem 1's type-I point in V and its τ (the optimum on full tasks, within a few % on large partial ones):
    the start of the solver. u_(j,ℓ) = c′f_(z_j(ℓ)), w_α = c f_α with c = √(τ/n_w), c′ = √(τ/(KL)), so
    V[(j, ℓ), α] = √s_c·c·c′·⟨f_(z_j(ℓ)), f_α⟩ with ⟨f_α, f_β⟩ = 1 or −1/(n_c − 1); the origin (τ = 0) where
    λ ≥ λ₀ or n_c = 1."""
    V0 = np.zeros((task.K * task.L, task.n_c))
    if task.n_c < 2 or lam >= lambda0:
        return V0, 0.0
    t = float(tau(n_c=task.n_c, n_w=task.n_w, L=task.L, K=task.K, lam=lam))
    if not t > 0:
        return V0, 0.0
    scale = math.sqrt(task.s_c) * math.sqrt(t / task.n_w) * math.sqrt(t / (task.K * task.L))
    V0[:] = -scale / (task.n_c - 1)
    V0[np.arange(task.K * task.L), task.Z.ravel()] = scale
    return V0, t


#: the collapsed f's float64 resolution in ulps of the largest score: f sums K terms log Σ e^s − s_kk, each with
#: an absolute rounding error of a few ulps of max|s| (measured: the gap stalls at 8–60 ulps of max|s|)
FLOOR_ULPS = 64


def _floor(fx) -> float:
    """The gap below which the collapsed f's rounding hides progress: FLOOR_ULPS ulps of the largest score."""
    return FLOOR_ULPS * np.finfo(float).eps * fx.smax


def _cosines(Wt):
    """Cosines between the columns of Wt (nan for a zero column)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        D = Wt / np.linalg.norm(Wt, axis=0)
        return np.clip(D.T @ D, -1.0, 1.0)


def _check_size(task):
    # S, E, P and the products: about 4 K×K float64 arrays; the work is 4·K²·L·n_c flops per evaluation
    check_work("task", task, bytes=8 * (4 * task.K**2 + 3 * task.K * task.L * task.n_c), what="collapsed_optimum")


@public(task=Instance(Task), V=Array(ndim=2), lam=Real(lo=0.0, hi=1e12))
def collapsed_risk(task: Task, V, lam) -> tuple:
    """g(V) = f_c(V) + λ‖V‖_* and ∇f_c(V) of the collapsed problem (module docstring; uniform μ).

    Parameters
    ----------
    task : Task
        Uniform word frequencies.
    V : array_like, shape (K·L, n_c)
    lam : float
        0 ≤ λ ≤ 1e12.

    Returns
    -------
    (float, float, ndarray)
        g(V), f_c(V) (the cross-entropy of (5) at the collapsed point) and ∇f_c(V).
    """
    _need_uniform(task)
    V = np.asarray(V, dtype=np.float64)
    if V.shape != (task.K * task.L, task.n_c) or not np.all(np.isfinite(V)):
        fail("V", V, f"must be a finite array of shape (K*L, n_c) = ({task.K * task.L}, {task.n_c})")
    # every score sums L entries of V/√s_c: keep them (and the softmax's differences) inside float64
    if not float(np.max(np.abs(V), initial=0.0)) * task.L / math.sqrt(task.s_c) <= 1e300:
        fail("V", V, f"its scores (sums of L = {task.L} entries / sqrt(s_c)) must stay below 1e300 in magnitude")
    _check_size(task)
    f, G = _Fc(task)(V)
    g = f + lam * nuclear_norm(V)
    if not math.isfinite(g):
        fail("lam", lam, f"lam * ||V||_* overflows float64 at this V (f_c(V) = {f:.6g})")
    return g, f, G


def _need_uniform(task):
    if not task.is_uniform:
        fail(
            "task",
            task,
            "the collapsed problem needs uniform word frequencies mu (for non-uniform mu the words of a concept "
            "are not exchangeable); use fctheory.risk.optimum, which enumerates the sentences",
        )


@public(
    task=Instance(Task),
    lam=Real(lo=1e-12, hi=1e12),
    tol=Real(lo=0.0, lo_open=True, hi=1.0),
    maxiter=Int(min=1, max=10**7),
    max_seconds=Real(lo=0.0, lo_open=True).or_none(),
)
def collapsed_optimum(
    task: Task, *, lam, tol: float = 1e-10, maxiter: int = 20000, max_seconds: float | None = None
) -> CollapsedOptimum:
    """The certified global minimiser of the true risk (5) of network h for uniform word frequencies.

    Solves min_V f_c(V) + λ‖V‖_* (module docstring: exact by the within-concept symmetry, K²L work per
    evaluation) by FISTA with singular-value soft-thresholding, an L-BFGS polish at width rank V and a ray
    step (:func:`fctheory._nuclear.solve`), and certifies the result by the Fenchel bound, which bounds min R
    over all weights of every width.

    Parameters
    ----------
    task : Task
        Any latent set (K ≤ n_c^L) with uniform μ.
    lam : float
        λ of (5) (both decays), 1e-12 ≤ λ ≤ 1e12.
    tol : float
        Relative certified gap at which the result counts as certified (default 1e-10).
    maxiter : int
        Proximal-gradient iterations at most (each polish: at most 2000 L-BFGS iterations).
    max_seconds : float, optional
        Wall-clock limit of the solve (default: the budget in force, :func:`fctheory.get_budget`); the result
        then says it stopped early.

    Returns
    -------
    CollapsedOptimum

    Raises
    ------
    FCTheoryError
        Non-uniform μ, bad input, or a task whose K × K work arrays exceed the memory budget.

    Examples
    --------
    >>> import fctheory as fc
    >>> res = collapsed_optimum(fc.Task.random(3, 2, 3, 9, seed=0), lam=0.01)
    >>> res.certified, res.width
    (True, 2)
    """
    _need_uniform(task)
    _check_size(task)
    t0 = time.perf_counter()
    sec = max_seconds if max_seconds is not None else get_budget().max_seconds
    deadline = t0 + (sec if sec is not None and math.isfinite(sec) else math.inf)
    fx = _Fc(task)
    _, G0 = fx(np.zeros((task.K * task.L, task.n_c)))
    lambda0 = float(np.linalg.norm(G0, 2)) if task.K > 1 else 0.0
    V0, t1 = _type1_start(task, lam, lambda0)
    # the type-I configuration's own R: ‖W‖² = ‖U‖² = τ (off the full set it is not balanced: R > g(V0))
    R1 = fx(V0)[0] + lam * t1
    # ‖∇²f_c‖₂ ≤ L/2 (V ↦ X is an isometry and f's Hessian is ≤ L/2); L/8 starts the backtracking lower
    V, f, G, nuc, nit = solve(
        fx, lam, V0, lipschitz=task.L / 8.0, tol=tol, maxiter=maxiter, deadline=deadline, floor=lambda: _floor(fx)
    )
    lb, rho, align, g = fenchel_bound(f, G, V, lam, nuc)
    Wt, Uh, r = balanced_svd(V)
    s_c = task.s_c
    W = np.repeat(Wt, s_c, axis=1) / math.sqrt(s_c)
    U = U_from_hat(Uh, L=task.L)
    cn = np.linalg.norm(Wt, axis=0) / math.sqrt(s_c)
    cos = _cosines(Wt)
    tau = float(np.sum(Wt * Wt))
    R = f + 0.5 * lam * (tau + float(np.sum(Uh * Uh)))
    gap = R - lb
    ok = reached(gap, R, tol, lambda: _floor(fx)) or gap <= 0.0
    at_floor = ok and gap > tol * abs(R)
    msg = (
        f"global minimiser of (5) (uniform mu, collapsed coordinates): certified gap {gap:.2e} "
        f"(relative {relative_gap(gap, R):.1e}{', at the float64 resolution of f' if at_floor else ''}) at width {r}"
        if ok
        else f"certified gap {gap:.2e} above tol*|R| (stopped early: raise maxiter or max_seconds)"
    )
    return CollapsedOptimum(
        V=V, W=W, U=U, width=r, concept_vectors=Wt, w_norms=np.repeat(cn, s_c), concept_norms=cn, cosines=cos,
        u_norms=np.linalg.norm(Uh.T.reshape(task.K, task.L, -1), axis=2), R=float(R), ce=float(f), tau=tau,
        lower_bound=float(lb), gap=float(gap), rel_gap=relative_gap(gap, R), rho=float(rho), align=float(align),
        grad=G, lambda0=lambda0, R_type1=float(R1), certified=bool(ok), message=msg, nit=nit, nfev=fx.nfev,
        seconds=time.perf_counter() - t0,
    )  # fmt: skip


# ============================================================================= network h* (LayerNorm)
@result_type
@dataclass
class CollapsedOptimumStar:
    """Outcome of :func:`collapsed_optimum_star`: the best feature-collapsed network h* for risk (10).

    Attributes
    ----------
    U : ndarray, shape (K, L, m)
        u_(k,ℓ) in an orthonormal basis of span φ (m = min(n_c, d − 1) coordinates; the part of u_(k,ℓ)
        orthogonal to the features only costs λ and is 0).
    phi : ndarray, shape (n_c, m)
        The concepts' LayerNorm features φ_α (‖φ_α‖ = √d, mean zero in R^d), same basis.
    cosines : ndarray, shape (n_c, n_c)
        ⟨φ_α, φ_β⟩/d.
    u_norms : ndarray, shape (K, L)
        ‖u_(k,ℓ)‖.
    c : float
        Mean of ``u_norms`` (Theorem 3's c = τ*/√(KL) on a full task).
    tau : float
        ‖U‖_F (τ* on a full task).
    pca_sigma_U, pca_sigma_phiW : ndarray
        Singular values of the K·L × m matrix of the u_(k,ℓ) and of the n_w × m matrix of the φ(w).
    R, ce : float
        R* of (10) at the point and its cross-entropy part.
    lower_bound, gap, rel_gap : float
        A lower bound on R* over all feature-collapsed networks of any width (the convex problem's dual bound,
        see :func:`collapsed_optimum_star`), R − it, and gap/R.
    certified : bool
        rel_gap ≤ ``tol``.
    grad_norm : float
        ‖∇R*‖ in (U, φ) at the returned point.
    message : str
    nit, nfev : int
    seconds : float
    """

    U: np.ndarray
    phi: np.ndarray
    cosines: np.ndarray
    u_norms: np.ndarray
    c: float
    tau: float
    pca_sigma_U: np.ndarray
    pca_sigma_phiW: np.ndarray
    R: float
    ce: float
    lower_bound: float
    gap: float
    rel_gap: float
    certified: bool
    grad_norm: float
    message: str
    nit: int
    nfev: int
    seconds: float


def _star_start(task, m, d, lam):
    """Theorem 3's type-II point as the start: φ an equiangular mean-zero frame of norm √d (coordinates in
    R^m), u_(j,ℓ) = c·φ_(z_j(ℓ))/√d, c = τ*/√(KL) at this K; a seeded 1e-3 tilt lets the frame leave its
    (n_c − 1)-dimensional span, which a partial latent set's optimum can use."""
    n_c = task.n_c
    F = np.eye(n_c) - 1.0 / n_c
    _, _, Vt = np.linalg.svd(F)
    Q = np.zeros((n_c, m))
    Q[:, : min(m, n_c - 1)] = (F @ Vt.T)[:, : min(m, n_c - 1)]
    Q /= np.linalg.norm(Q, axis=1, keepdims=True)
    Q += 1e-3 * np.random.default_rng(0).standard_normal(Q.shape)
    c = float(tau_star(n_c=n_c, L=task.L, K=task.K, d=d, lam=lam)) / math.sqrt(task.K * task.L)
    return c * Q[task.Z.ravel()] / np.linalg.norm(Q[task.Z.ravel()], axis=1, keepdims=True), Q


def _star_bound(f, A, V, Phi, lam, d):
    """Dual bound of the convex problem min f(V) + (λ/2)tr(V G⁺ Vᵀ) over G ⪰ 0, diag G = d (G = ΦΦᵀ):
    f(V) − ⟨A, V⟩ − (d/2λ)·Σy with A = ∇f(V) and any y with diag(y) ⪰ AᵀA (weak SDP duality). y comes from
    complementary slackness at the point, y_α = ⟨(AᵀAΦ)_α, φ_α⟩/d, raised by the deficit of diag(y) − AᵀA."""
    M = A.T @ A
    y = np.sum((M @ Phi) * Phi, axis=1) / d
    deficit = float(np.linalg.eigvalsh(np.diag(y) - M)[0])
    if deficit < 0:
        # the computed eigenvalue is within a few ulps of ‖M‖ of the true one: over-raise by that much
        y = y - deficit + 64 * np.finfo(float).eps * max(float(np.abs(M).max()), 1e-300)
    return f - float(np.sum(A * V)) - d * float(np.sum(y)) / (2.0 * lam)


@public(
    task=Instance(Task),
    lam=Real(lo=1e-12, hi=1e12),
    d=Int(min=2, max=2**31),
    tol=Real(lo=0.0, lo_open=True, hi=1.0),
    maxiter=Int(min=1, max=10**7),
)
def collapsed_optimum_star(task: Task, *, lam, d, tol: float = 1e-10, maxiter: int = 20000) -> CollapsedOptimumStar:
    """The best feature-collapsed network h* (parameter-free LayerNorm, risk (10), λ_W = 0), any latent set.

    When every word of concept α has the feature φ_α = φ(w_α) (‖φ_α‖ = √d, mean zero: LayerNorm with ε = 0),
    every sentence of class k has the same feature, so the word frequencies μ and s_c drop out and (10) is
    R*(U, φ) = (1/K)Σ_k CE(s_k, k) + (λ/2)‖U‖_F² with s_k(j) = Σ_ℓ ⟨u_(j,ℓ), φ_(z_k(ℓ))⟩. In V[(j, ℓ), α] =
    ⟨u_(j,ℓ), φ_α⟩ and the Gram G = ΦΦᵀ (diag G = d), min over U of ‖U‖² is tr(V G⁺ Vᵀ), and
    min f(V) + (λ/2)tr(V G⁺ Vᵀ) over G ⪰ 0, diag G = d is a **convex** problem (the matrix-fractional function
    is jointly convex): solved by L-BFGS in (U, φ) from Theorem 3's type-II point, certified by its dual bound
    (weak SDP duality), which bounds R* over every feature-collapsed network of any width. On a full task
    (K = n_c^L) the result is Theorem 3's type II (c = τ*/√(KL), R = H*(τ*)); on a partial task the features
    stay near-equiangular and the ‖u_(k,ℓ)‖ spread with the latent set. What is **not** certified: that some
    non-collapsed h* does no better (Theorem 3 proves it on full tasks only; R* is not convex in W).

    Parameters
    ----------
    task : Task
        Any latent set; μ and s_c do not enter.
    lam : float
        λ_U of (10), 1e-12 ≤ λ ≤ 1e12.
    d : int
        Embedding dimension, d ≥ n_c. The features live in the (d − 1)-dimensional mean-zero subspace: for
        d > n_c their Gram matrix is free and the dual bound closes; for d = n_c their span is restricted to
        n_c − 1 dimensions and the bound (of the unrestricted problem) may stay open (``certified`` False).
    tol : float
        Relative gap at which the result counts as certified.
    maxiter : int
        L-BFGS iterations at most.

    Returns
    -------
    CollapsedOptimumStar

    Examples
    --------
    >>> import fctheory as fc
    >>> res = collapsed_optimum_star(fc.Task.random(3, 2, 3, 9, seed=0), lam=0.01, d=8)
    >>> bool(res.certified), res.U.shape
    (True, (9, 3, 3))
    """
    if d < task.n_c:
        fail("d", d, f"the features of n_c = {task.n_c} concepts need d >= n_c (as Theorem 3's type II)")
    _check_size(task)
    t0 = time.perf_counter()
    K, L, n_c = task.K, task.L, task.n_c
    m, sd = min(n_c, d - 1), math.sqrt(d)
    fx = _Fc(task, root=1.0)
    U0, Q0 = _star_start(task, m, d, lam)  # Theorem 3's type II
    nU = K * L * m

    def parts(x):
        U, P = x[:nU].reshape(K * L, m), x[nU:].reshape(n_c, m)
        nr = np.linalg.norm(P, axis=1, keepdims=True)
        return U, P, nr, sd * P / nr

    at, nit, msg = _star_solve(fx, parts, np.concatenate([U0.ravel(), Q0.ravel()]), lam, d, tol, maxiter, t0)
    U, Phi, V, f, A, R, g = (at[k] for k in ("U", "Phi", "V", "f", "A", "R", "g"))
    lb = _star_bound(f, A, V, Phi, lam, d) if K > 1 else R
    gap = R - lb
    ok = gap <= tol * abs(R) or gap <= 0.0
    msg = (f"best feature-collapsed h* (risk (10)): certified gap {gap:.2e} (relative {relative_gap(gap, R):.1e})"
           if ok else f"gap {gap:.2e} above tol*|R| ({msg}): raise maxiter")  # fmt: skip
    return _star_result(task, U, Phi, d, R, f, lb, gap, ok, float(np.linalg.norm(g)), msg, nit, fx.nfev, t0)


def _star_solve(fx, parts, x, lam, d, tol, maxiter, t0):
    """L-BFGS on R*(U, φ) from ``x``, stopped as soon as the dual bound certifies ``tol`` (checked every 10
    iterations at the last evaluated point; the bound is valid wherever it is taken). Returns (the evaluation at
    the returned point: x, U, Φ, V, f, A = ∇f(V), R, g = ∇R* in (U, P); iterations; message)."""
    sd = math.sqrt(d)
    last = {}

    def fg(x, overflow="inf"):
        U, P, nr, Phi = parts(x)
        V = U @ Phi.T
        f, A = fx(V)
        gPhi = A.T @ U  # ∂f/∂Φ; through Φ = √d·P/‖P‖ row-wise
        gP = sd * (gPhi - (Phi / sd) * np.sum(gPhi * Phi / sd, axis=1, keepdims=True)) / nr
        R = f + 0.5 * lam * float(np.sum(U * U))
        g = np.concatenate([(A @ Phi + lam * U).ravel(), gP.ravel()])
        last.update(x=x.copy(), U=U, Phi=Phi, V=V, f=f, A=A, R=R, g=g)
        return R, g, None

    R, g, _ = fg(x)
    it = {"n": 0}

    def certified(n, R, gn):
        # every 10 iterations: the dual bound at the last evaluated point (a lower bound wherever it is taken)
        it["n"] = n
        if n % 10 == 0 and last["R"] - _star_bound(last["f"], last["A"], last["V"], last["Phi"], lam, d) <= (
            0.5 * tol * abs(last["R"])
        ):
            raise _StarDone

    msg = "maximum number of iterations reached"
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            nit, x, R, g, _, msg = lbfgs_iterate(fg, x, R, g, [R], msg, 0.0, maxiter, 20, None, t0, certified)
    except _StarDone:
        x, nit = last["x"], it["n"]
    if not np.array_equal(last["x"], x):  # the line search's last trial was not the accepted point
        fg(x)
    return last, nit, msg


class _StarDone(Exception):
    pass


def _star_result(task, U, Phi, d, R, f, lb, gap, ok, gn, msg, nit, nfev, t0):
    K, L = task.K, task.L
    u = np.linalg.norm(U, axis=1).reshape(K, L)
    sU = np.linalg.svd(U, compute_uv=False)
    sW = np.linalg.svd(np.repeat(Phi, task.s_c, axis=0), compute_uv=False)
    return CollapsedOptimumStar(
        U=U.reshape(K, L, -1), phi=Phi, cosines=(Phi @ Phi.T) / d, u_norms=u, c=float(u.mean()),
        tau=float(np.linalg.norm(U)), pca_sigma_U=sU, pca_sigma_phiW=sW, R=float(R), ce=float(f),
        lower_bound=float(lb), gap=float(gap), rel_gap=relative_gap(gap, R), certified=bool(ok), grad_norm=gn,
        message=msg, nit=int(nit), nfev=int(nfev), seconds=time.perf_counter() - t0,
    )  # fmt: skip
