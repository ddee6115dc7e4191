"""The population optimum: the certified global minimiser of the true risk (5) of network h, any word frequencies.

**Network h (risk (5)).** For every width d, R(W, U) ≥ g(ÛᵀW) with

    g(X) = f(X) + λ‖X‖_*,   X = ÛᵀW ∈ R^(KL×n_w),   f(X) = R₀ as a function of X (45),

with equality at a balanced factorisation (Claim G), so min_(W,U) R = min_X g once d ≥ rank X* (Theorem G's
argument, (159)–(167)); f is convex in X (a sum of log-sum-exp of linear maps), so this is a convex problem.
:func:`fctheory.optimum` solves it by accelerated proximal gradient (FISTA with backtracking and adaptive restart,
singular-value soft-thresholding as the proximal map of λ‖·‖_*) on the exact engine's f and ∇f, read at the
lifted point W = I, Û = Xᵀ; it then factors X into balanced (W, U) of the smallest width r = rank X, polishes
them by L-BFGS at width r (:func:`fctheory._nuclear.polish`), and certifies the result by Fenchel duality:

    min g ≥ LB(X) = s·E(X),   E = f(X) − ⟨∇f(X), X⟩ = Σ_x c_x H(p_x) ≥ 0,   s = min(1, λ/‖∇f(X)‖₂),

where c_x = D_(z_k)(x)/K and H(p_x) is the entropy of the softmax of sentence x. Proof: the dual of
min f + λ‖·‖_* is max_(‖Y‖₂ ≤ λ) −f*(Y); for Y = s∇f(X) = Σ_x A_xᵀ s c_x (p_x − e_k) (A_x: X ↦ the scores of
x), f*(Y) ≤ Σ_x c_x CE_k*(s(p_x − e_k)) = −Σ_x c_x H(s p_x + (1 − s)e_k) ≤ −s Σ_x c_x H(p_x) (the conjugate of
the cross entropy is the negative entropy of q = v + e_k on the simplex; the last step is the concavity of
H). The certified gap is g(X) − LB(X) ≥ g(X) − min g; it is zero iff ‖∇f(X)‖₂ ≤ λ and ⟨∇f, X⟩ = −λ‖X‖_*
(Claim H). ``precision="interval"`` re-does f, ∇f, ⟨∇f, X⟩ and R(W, U) in ball arithmetic (python-flint) at
the returned float weights, and bounds ‖∇f‖₂ from above by a certified Cholesky factorisation of
t·I − ∇fᵀ∇f, so the bounds lo ≤ min R ≤ R(W, U) ≤ hi are rigorous.
"""

from __future__ import annotations

import math
import time

import numpy as np

from .._errors import FCTheoryError
from .._nuclear import fenchel_bound, relative_gap, solve
from .._validate import fail
from ..configurations import type2_configuration, type3_configuration
from ..network import U_from_hat, U_hat
from ..risk.enumeration import enumerate_risk
from ..risk.evaluation import evaluate
from ..risk.plan import SCORE_MAX, check_budget, estimate, resolve_budget
from ..tau import tau
from .certificates import certify_optimality
from .collapsed import collapsed_optimum
from .result import OptimumResult, balanced_factors

__all__ = ["EnumeratedF", "optimum_enumerated", "optimum_collapsed", "solve_h", "reference_risks"]


# ----------------------------------------------------------------------------------------- f and ∇f in X
class EnumeratedF:
    """f(X) and ∇f(X) ∈ R^(KL×n_w) from the exact engine's enumeration (:mod:`fctheory.risk.enumeration`).

    The engine's scores are G3 = ÛᵀV reshaped to K×L×n_w, i.e. X itself, and its ∂R₀/∂G3 is K·∇f(X): the
    same enumeration as :func:`~fctheory.risk.evaluate_risk` at the lifted point W = I, Û = Xᵀ, without the
    per-call planning (the cost estimate and the budget check are done once, as
    :mod:`fctheory.risk.distributed` does). ``nfev`` counts the evaluations.
    """

    def __init__(self, task, workers, max_seconds, max_bytes):
        sec, byt = resolve_budget(max_seconds, max_bytes)
        self.est = estimate(task, task.n_w, True, "numpy", byt, workers)
        check_budget(self.est, sec, byt, task)
        self.task, self.workers, self.nfev = task, workers, 0
        self.shape = (task.K, task.L, task.n_w)

    def __call__(self, X):
        self.nfev += 1
        task = self.task
        if task.K == 1:  # a single class: CE = 0
            return 0.0, np.zeros_like(X)
        if not float(np.max(np.abs(X))) * 2 * task.L <= SCORE_MAX:
            fail("lam", None, "the scores overflow float64 during the optimisation; the problem is badly scaled")
        G3 = np.ascontiguousarray(X).reshape(self.shape)
        with np.errstate(under="ignore", over="ignore", divide="ignore", invalid="ignore"):
            R0, gG3, _ = enumerate_risk(np, True, task, G3, True, self.est, False, self.workers)
        return R0, gG3.reshape(X.shape) / task.K


# ----------------------------------------------------------------------------------------- comparisons
def reference_risks(task, lam, layernorm, d, max_seconds, max_bytes):
    """(R of Theorem 3's type II (h*) or nan (h: Theorem 1's type I comes from :func:`_type1_X`), R of Theorem 2's
    type III (h, full tasks with non-uniform μ) or nan)."""
    kw = dict(max_seconds=max_seconds, max_bytes=max_bytes, progress=False)
    R1 = R3 = float("nan")
    try:
        if layernorm:
            if d >= task.n_c:
                W, U = type2_configuration(task, d=d, lam=lam)
                R1 = evaluate(task, W, U, lam, True, **kw).R
            return R1, R3
        if task.is_full and task.n_c >= 2 and not np.allclose(task.mu, task.mu[0], rtol=0, atol=1e-15):
            W, U = type3_configuration(task, d=task.n_c, lam=lam)
            R3 = evaluate(task, W, U, lam, False, **kw).R
    except FCTheoryError:  # outside the theorem's range (e.g. λ ≥ λ_max of (9)): no configuration to compare
        pass
    return R1, R3


def optimum_enumerated(task, lam, d, tol, maxiter, precision, workers, budget) -> OptimumResult:
    """:func:`fctheory.optimum` for network h on the exact engine's enumeration (any μ)."""
    max_seconds, max_bytes, sec, t0 = budget
    deadline = t0 + (sec if sec is not None else math.inf)
    fx = EnumeratedF(task, workers, max_seconds, max_bytes)
    X1, t1 = _type1_X(task, lam)
    # Theorem 1's configuration: its R (‖W‖² = ‖U‖² = τ) and the solver's start
    R1 = fx(X1)[0] + lam * t1 if task.n_c >= 2 else float("nan")
    # Claim H at the origin: 0 is the minimiser iff λ ≥ ‖∇f(0)‖₂; start there, so the answer is the origin itself
    # (from type I the solver would stop at a point within the tolerance of it, with norms of order 1e-6)
    origin = np.zeros_like(X1)
    if task.K > 1 and lam >= float(np.linalg.norm(fx(origin)[1], 2)):
        X1 = origin
    X, f, G, nuc, nit = solve_h(task, lam, fx, tol, maxiter, deadline, workers, X0=X1)
    run = (nit, fx.nfev, t0, max_seconds, max_bytes)
    return _result_h(task, lam, d, X, (f, G, nuc), tol, precision, run, R1)


def _type1_X(task, lam):
    """(X = ÛᵀW, τ) of Theorem 1's type-I configuration: X[(j, ℓ), (α, β)] = c·c′·⟨f_(z_j(ℓ)), f_α⟩ with
    c = √(τ/n_w), c′ = √(τ/(KL)) and ⟨f_α, f_γ⟩ = 1 or −1/(n_c − 1); the origin (τ = 0) where Theorem 1 gives
    none (λ ≥ λ₀, n_c = 1)."""
    X = np.zeros((task.K * task.L, task.n_w))
    if task.n_c < 2:
        return X, 0.0
    t = float(tau(n_c=task.n_c, n_w=task.n_w, L=task.L, K=task.K, lam=lam))
    if t > 0:
        scale = math.sqrt(t / task.n_w) * math.sqrt(t / (task.K * task.L))
        same = task.Z.reshape(-1)[:, None] == (np.arange(task.n_w) // task.s_c)[None, :]
        X = np.where(same, scale, -scale / (task.n_c - 1))
    return X, t


def solve_h(task, lam, fx, tol, maxiter, deadline, workers, X0=None):
    """:func:`fctheory._nuclear.solve` on the engine's f from X0 (default the origin): FISTA to a coarse gap,
    L-BFGS polish at width rank X, back to FISTA with a smaller target while not certified."""
    # ‖∇²f‖₂ ≤ L/2: each score sums L entries of X, the CE's Hessian is ≤ 1/2; L/8 starts the backtracking lower
    X0 = np.zeros((task.K * task.L, task.n_w)) if X0 is None else X0
    return solve(fx, lam, X0, lipschitz=task.L / 8.0, tol=tol, maxiter=maxiter, deadline=deadline)


def optimum_collapsed(task, lam, d, tol, maxiter, precision, sec, t0) -> OptimumResult:
    """:func:`fctheory.optimum` for uniform μ through :func:`fctheory.collapsed_optimum`, expanded to the words."""
    c = collapsed_optimum(task, lam=lam, tol=tol, maxiter=maxiter, max_seconds=sec)
    r, root = c.width, math.sqrt(task.s_c)
    if d is not None and d < r:
        fail(
            "d", d, f"must be >= {r}, the rank of the optimum X = U_hat^T W (min R over a width < rank X may exceed it)"
        )
    X = np.repeat(c.V, task.s_c, axis=1) / root
    W, U = c.W, c.U
    if d is not None and d > W.shape[0]:
        W = np.vstack([W, np.zeros((d - W.shape[0], task.n_w))])
        U = U_from_hat(np.vstack([U_hat(U, L=task.L), np.zeros((d - U.shape[1] // task.L, task.K * task.L))]), L=task.L)
    # ∇f(X) = ∇f_c(V) ⊗ 1ᵀ/√s_c, so ∂R/∂W = Û∇f(X) + λW and ∂R/∂Û = W∇f(X)ᵀ + λÛ
    GX = np.repeat(c.grad, task.s_c, axis=1) / root
    Uh = U_hat(U, L=task.L)
    grad_norm = float(np.sqrt(np.sum((Uh @ GX + lam * W) ** 2) + np.sum((W @ GX.T + lam * Uh) ** 2)))
    R1 = c.R_type1 if task.n_c >= 2 else float("nan")
    out = OptimumResult(
        X=X, W=W, U=U, width=r, R=c.R, lower_bound=c.lower_bound, gap=c.gap, rel_gap=c.rel_gap, rho=c.rho,
        align=c.align, grad_norm=grad_norm, R_type1=R1, R_type3=float("nan"), network="h", certified=c.certified,
        status="certified" if c.certified else "not certified", message=c.message, nit=c.nit, nfev=c.nfev,
        seconds=0.0,
    )  # fmt: skip
    if precision == "interval":
        out.interval = certify_optimality(task, W, U, lam, max_pairs=None)
    out.seconds = time.perf_counter() - t0
    return out


def _result_h(task, lam, d, X, fgn, tol, precision, run, R1) -> OptimumResult:
    nit, nfev, t0, max_seconds, max_bytes = run
    f, G, nuc = fgn
    W, U, r = balanced_factors(X, task.L)
    if d is not None and d < r:
        fail(
            "d", d, f"must be >= {r}, the rank of the optimum X = U_hat^T W (min R over a width < rank X may exceed it)"
        )
    if d is not None and d > W.shape[0]:
        W, U, _ = balanced_factors(X, task.L, width=d)
    res = evaluate(task, W, U, lam, False, grad=True, progress=False, max_seconds=max_seconds, max_bytes=max_bytes)
    lb, rho, align, _ = fenchel_bound(f, G, X, lam, nuc)
    R = float(res.R)
    gap = R - lb
    ok = gap <= tol * abs(R) or gap <= 0.0
    _, R3 = reference_risks(task, lam, False, None, max_seconds, max_bytes)
    out = OptimumResult(
        X=X, W=W, U=U, width=r, R=R, lower_bound=lb, gap=gap, rel_gap=relative_gap(gap, R), rho=rho, align=align,
        grad_norm=res.grad_norm, R_type1=R1, R_type3=R3, network="h", certified=bool(ok),
        status="certified" if ok else "not certified",
        message=(f"global minimiser of (5): certified gap {gap:.2e} (relative {relative_gap(gap, R):.1e}) at width {r}"
                 if ok else f"certified gap {gap:.2e} above tol·|R| (stopped early: raise maxiter or max_seconds)"),
        nit=nit, nfev=nfev + 1, seconds=0.0,
    )  # fmt: skip
    if precision == "interval":
        out.interval = certify_optimality(task, W, U, lam, max_pairs=None)
    out.seconds = time.perf_counter() - t0
    return out
