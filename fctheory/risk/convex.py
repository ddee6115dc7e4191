"""The certified global minimiser of the true risk (5) of any small task, and what can be said for (10).

**Network h (risk (5)).** For every width d, R(W, U) ≥ g(ÛᵀW) with

    g(X) = f(X) + λ‖X‖_*,   X = ÛᵀW ∈ R^(KL×n_w),   f(X) = R₀ as a function of X (45),

with equality at a balanced factorisation (Claim G), so min_(W,U) R = min_X g once d ≥ rank X* (Theorem G's
argument, (159)–(167)); f is convex in X (a sum of log-sum-exp of linear maps), so this is a convex problem.
:func:`optimum` solves it by accelerated proximal gradient (FISTA with backtracking and adaptive restart,
singular-value soft-thresholding as the proximal map of λ‖·‖_*) on the exact engine's f and ∇f, read at the
lifted point W = I, Û = Xᵀ; it then factors X into balanced (W, U) of the smallest width r = rank X, polishes
them with :func:`~fctheory.risk.minimize_true_risk` at width r, and certifies the result by Fenchel duality:

    min g ≥ LB(X) = s·E(X),   E = f(X) − ⟨∇f(X), X⟩ = Σ_x c_x H(p_x) ≥ 0,   s = min(1, λ/‖∇f(X)‖₂),

where c_x = D_(z_k)(x)/K and H(p_x) is the entropy of the softmax of sentence x. Proof: the dual of
min f + λ‖·‖_* is max_(‖Y‖₂ ≤ λ) −f*(Y); for Y = s∇f(X) = Σ_x A_xᵀ s c_x (p_x − e_k) (A_x: X ↦ the scores of
x), f*(Y) ≤ Σ_x c_x CE_k*(s(p_x − e_k)) = −Σ_x c_x H(s p_x + (1 − s)e_k) ≤ −s Σ_x c_x H(p_x) (the conjugate of
the cross entropy is the negative entropy of q = v + e_k on the simplex; the last step is the concavity of
H). The certified gap is g(X) − LB(X) ≥ g(X) − min g; it is zero iff ‖∇f(X)‖₂ ≤ λ and ⟨∇f, X⟩ = −λ‖X‖_*
(Claim H). ``precision="interval"`` re-does f, ∇f, ⟨∇f, X⟩ and R(W, U) in ball arithmetic (python-flint) at
the returned float weights, and bounds ‖∇f‖₂ from above by a certified Cholesky factorisation of
t·I − ∇fᵀ∇f, so the bounds lo ≤ min R ≤ R(W, U) ≤ hi are rigorous.

**Network h* (risk (10)).** R* is not convex in any known variables. What is certified: a local minimiser
(the best of several L-BFGS runs, its gradient norm), and a global *lower bound* from a convex relaxation:
the columns of φ(W) have norm ≤ √d, so ‖Ûᵀφ(W)‖_* ≤ ‖U‖_F·√(d n_w) and, for every λ' ≥ 0,

    R*(W, U) ≥ f(X) + λ‖X‖_*²/(2 d n_w) ≥ min_X [f(X) + λ'‖X‖_*] − λ'² d n_w/(2λ) ≥ LB_h(λ') − λ'² d n_w/(2λ),

maximised over λ' (a concave function of λ'). The gap "best local R* − that bound" is a certified bound on how
far the local minimiser can be from the global one; it is not zero in general.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize_scalar

from .._errors import FCTheoryError
from .._interval import enclosure, workprec
from .._nuclear import balanced_svd, fenchel_bound, relative_gap, solve
from .._validate import Array, Bool, Choice, Instance, Int, Real, Seed, fail, public, result_type
from ..collapsed import collapsed_optimum
from ..configurations import type2_configuration, type3_configuration
from ..network import U_from_hat, U_hat, phi
from ..predictions import EXACT, PartialPrediction, predict, predict_type1
from ..task import Task, as_rng
from ..tau import tau
from ._engine import _LIMIT, _SCORE_MAX, _check_budget, _enumerate, _estimate, _evaluate, resolve_budget
from .minimize import minimize_true_risk

__all__ = ["OptimumResult", "optimum", "certify_optimality"]


@result_type
@dataclass
class OptimumResult:
    """Outcome of :func:`optimum` (fields in the spirit of scipy.optimize).

    Attributes
    ----------
    X : ndarray, shape (K·L, n_w)
        ÛᵀW (h) or Ûᵀφ(W) (h*) at the returned weights.
    W, U : ndarray
        Weights of width ``width`` (or the requested ``d``, padded with zero rows), balanced for h.
    width : int
        The smallest width that attains the optimum: rank X for h (Claim G; 0 when the origin is optimal, W and
        U then have one zero row), the width used for h*.
    R : float
        The true risk (5) (or (10)) at (W, U), by the exact engine.
    lower_bound : float
        A certified lower bound on min R (over every width for h; over width ``d`` for h*).
    gap, rel_gap : float
        R − lower_bound (≥ 0 up to rounding) and gap/|R|.
    rho : float
        ‖∇f(X)‖₂/λ (h: ≤ 1 at the optimum, Claim H); for h* the relaxation's at its best λ'.
    align : float
        (⟨∇f(X), X⟩ + λ‖X‖_*)/(λ‖X‖_*): 0 at the optimum of h (nan for h*).
    grad_norm : float
        ‖(∂R/∂W, ∂R/∂U)‖_F at (W, U).
    R_type1, R_type3 : float
        The risk of Theorem 1's type-I configuration (type1_configuration with ``lam``) and of Theorem 2's
        type-III configuration (full tasks with non-uniform μ; nan elsewhere); for h*, ``R_type1`` holds
        Theorem 3's type-II configuration's R*.
    network : str
        ``"h"`` or ``"h*"``.
    certified : bool
        rel_gap ≤ the requested ``tol`` (h* : the relaxation closed the gap).
    status : str
        ``"certified"``, ``"not certified"`` (h: gap above tol) or ``"local"`` (h*: a local minimiser with a
        certified bound on its distance to the global minimum).
    message : str
    nit, nfev : int
        Proximal-gradient iterations and risk-and-gradient evaluations (polish included).
    seconds : float
    interval : dict or None
        With ``precision="interval"``: {"R": (lo, hi), "lower_bound": lo, "gap": hi, "rho": hi} — rigorous
        float64 bounds (R of the returned weights, the lower bound on min R, the gap, ‖∇f‖₂/λ).
    """

    X: np.ndarray
    W: np.ndarray
    U: np.ndarray
    width: int
    R: float
    lower_bound: float
    gap: float
    rel_gap: float
    rho: float
    align: float
    grad_norm: float
    R_type1: float
    R_type3: float
    network: str
    certified: bool
    status: str
    message: str
    nit: int
    nfev: int
    seconds: float
    interval: dict | None = None


# ----------------------------------------------------------------------------------------- f and ∇f in X
class _FX:
    """f(X) and ∇f(X) ∈ R^(KL×n_w) from the exact engine's enumeration (:mod:`fctheory.risk._engine`).

    The engine's scores are G3 = ÛᵀV reshaped to K×L×n_w, i.e. X itself, and its ∂R₀/∂G3 is K·∇f(X): the
    same enumeration as :func:`~fctheory.risk.evaluate_risk` at the lifted point W = I, Û = Xᵀ, without the
    per-call planning (the cost estimate and the budget check are done once, as
    :mod:`fctheory.risk.distributed` does). ``nfev`` counts the evaluations.
    """

    def __init__(self, task, workers, max_seconds, max_bytes):
        sec, byt = resolve_budget(max_seconds, max_bytes)
        self.est = _estimate(task, task.n_w, True, "numpy", byt, workers)
        _check_budget(self.est, sec, byt, task)
        self.task, self.workers, self.nfev = task, workers, 0
        self.shape = (task.K, task.L, task.n_w)

    def __call__(self, X):
        self.nfev += 1
        task = self.task
        if task.K == 1:  # a single class: CE = 0
            return 0.0, np.zeros_like(X)
        if not float(np.max(np.abs(X))) * 2 * task.L <= _SCORE_MAX:
            fail("lam", None, "the scores overflow float64 during the optimisation; the problem is badly scaled")
        G3 = np.ascontiguousarray(X).reshape(self.shape)
        with np.errstate(under="ignore", over="ignore", divide="ignore", invalid="ignore"):
            R0, gG3, _ = _enumerate(np, True, task, G3, True, self.est, False, self.workers)
        return R0, gG3.reshape(X.shape) / task.K


# ----------------------------------------------------------------------------------------- factors
def balanced_factors(X, L: int, *, width: int | None = None):
    """Balanced (W, U) with ÛᵀW = X and ‖W‖_F² = ‖Û‖_F² = ‖X‖_* (Claim G), of width rank X (or ``width``,
    padded with zero rows). W = Σ^(1/2)Bᵀ, Û = Σ^(1/2)Aᵀ for the SVD X = AΣBᵀ."""
    W, Uh, r = balanced_svd(X, width=width)
    return W, U_from_hat(Uh, L=L), r


# ----------------------------------------------------------------------------------------- comparisons
def _reference_risks(task, lam, layernorm, d, max_seconds, max_bytes):
    """(R of Theorem 3's type II (h*) or nan (h: Theorem 1's type I comes from :func:`_type1_X`), R of Theorem 2's
    type III (h, full tasks with non-uniform μ) or nan)."""
    kw = dict(max_seconds=max_seconds, max_bytes=max_bytes, progress=False)
    R1 = R3 = float("nan")
    try:
        if layernorm:
            if d >= task.n_c:
                W, U = type2_configuration(task, d=d, lam=lam)
                R1 = _evaluate(task, W, U, lam, True, **kw).R
            return R1, R3
        if task.is_full and task.n_c >= 2 and not np.allclose(task.mu, task.mu[0], rtol=0, atol=1e-15):
            W, U = type3_configuration(task, d=task.n_c, lam=lam)
            R3 = _evaluate(task, W, U, lam, False, **kw).R
    except FCTheoryError:  # outside the theorem's range (e.g. λ ≥ λ_max of (9)): no configuration to compare
        pass
    return R1, R3


# ----------------------------------------------------------------------------------------- entry point
@public(
    task=Instance(Task),
    lam=Real(lo=1e-12, hi=1e12),
    network=Choice("h", "h*"),
    d=Int(min=1, max=2**20).or_none(),
    precision=Choice("float", "interval"),
    tol=Real(lo=0.0, lo_open=True, hi=1.0),
    maxiter=Int(min=1, max=10**7),
    n_starts=Int(min=1, max=1000),
    seed=Seed(),
    workers=Int(min=1, max=1024).or_none(),
    max_seconds=_LIMIT,
    max_bytes=_LIMIT,
    symmetry=Bool(),
)
def optimum(
    task: Task,
    *,
    lam,
    network: str = "h",
    d: int | None = None,
    precision: str = "float",
    tol: float = 1e-10,
    maxiter: int = 20000,
    n_starts: int = 4,
    seed=0,
    workers: int | None = 1,
    max_seconds=None,
    max_bytes=None,
    symmetry: bool = True,
) -> OptimumResult:
    """The certified global minimiser of the true risk (5) of ``task``, or a bounded local one of (10).

    Network h: min_X f(X) + λ‖X‖_* (X = ÛᵀW, (159)–(167)) by FISTA with singular-value thresholding on the
    exact engine's ∇f, balanced (W, U) of the smallest width, an L-BFGS polish and the duality-gap
    certificate of :mod:`fctheory.risk.convex`; uniform μ: the same problem in the collapsed coordinates
    (:func:`fctheory.collapsed_optimum`, any K). Network h*: the best of ``n_starts`` L-BFGS runs on (10)
    with a certified lower bound on min R* from a convex relaxation (docs/optimum.md).

    Parameters
    ----------
    task : Task
        Any latent set and word frequencies the exact engine can enumerate.
    lam : float
        λ of (5)/(10), 1e-12 ≤ λ ≤ 1e12 (below, the minimiser's scale log K/λ leaves what the solver resolves).
    network : {"h", "h*"}
    d : int, optional
        Width of the returned weights. h: default the rank of the optimum (the smallest width attaining
        min R); a larger d pads with zero rows; a smaller d is refused (min R over that width may exceed
        the convex optimum). h*: the width to optimise over (default n_c + 1; d ≥ 2).
    precision : {"float", "interval"}
        ``"interval"`` adds rigorous bounds (python-flint, the ``certify`` extra) on R, on min R and on the
        gap, computed at the returned float weights (h only).
    tol : float
        Relative certified gap at which h's result counts as certified (default 1e-10).
    maxiter : int
        Proximal-gradient iterations at most, in all; also the L-BFGS iterations of each polish (at most 2000).
    n_starts : int
        h*: random starts of the local search.
    seed : int, Generator or None
        h*: seed of the random starts.
    workers : int or None
        Threads of each engine evaluation (default 1: the evaluations are small).
    max_seconds, max_bytes : float or None
        Budget of each engine evaluation (None: the budget in force) and, for max_seconds, of the whole
        solve (the result then says it stopped early).
    symmetry : bool
        h with uniform μ: solve the collapsed problem (default); ``False`` enumerates the sentences with the
        exact engine as for any μ (the same minimum: a cross-check).

    Returns
    -------
    OptimumResult

    Raises
    ------
    FCTheoryError
        Bad input, a task the engine refuses within the budget, ``precision="interval"`` without
        python-flint or for h*, or a ``d`` below the rank of h's optimum.

    Examples
    --------
    >>> import fctheory as fc
    >>> optimum(fc.Task.random(2, 2, 3, 3, seed=0), lam=0.05).certified
    True
    """
    if network == "h*":
        if precision == "interval":
            fail("precision", precision, "the interval option certifies network h only (R* is not convex)")
        return _optimum_star(task, lam, d, tol, n_starts, seed, workers, max_seconds, max_bytes)
    t0 = time.perf_counter()
    sec, _ = resolve_budget(max_seconds, max_bytes)
    if symmetry and task.is_uniform:
        return _optimum_collapsed(task, lam, d, tol, maxiter, precision, sec, t0)
    return _optimum_enumerated(task, lam, d, tol, maxiter, precision, workers, (max_seconds, max_bytes, sec, t0))


def _optimum_enumerated(task, lam, d, tol, maxiter, precision, workers, budget) -> OptimumResult:
    """:func:`optimum` for network h on the exact engine's enumeration (any μ)."""
    max_seconds, max_bytes, sec, t0 = budget
    deadline = t0 + (sec if sec is not None else math.inf)
    fx = _FX(task, workers, max_seconds, max_bytes)
    X1, t1 = _type1_X(task, lam)
    # Theorem 1's configuration: its R (‖W‖² = ‖U‖² = τ) and the solver's start
    R1 = fx(X1)[0] + lam * t1 if task.n_c >= 2 else float("nan")
    # Claim H at the origin: 0 is the minimiser iff λ ≥ ‖∇f(0)‖₂; start there, so the answer is the origin itself
    # (from type I the solver would stop at a point within the tolerance of it, with norms of order 1e-6)
    origin = np.zeros_like(X1)
    if task.K > 1 and lam >= float(np.linalg.norm(fx(origin)[1], 2)):
        X1 = origin
    X, f, G, nuc, nit = _solve_h(task, lam, fx, tol, maxiter, deadline, workers, X0=X1)
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


def _solve_h(task, lam, fx, tol, maxiter, deadline, workers, X0=None):
    """:func:`fctheory._nuclear.solve` on the engine's f from X0 (default the origin): FISTA to a coarse gap,
    L-BFGS polish at width rank X, back to FISTA with a smaller target while not certified."""
    # ‖∇²f‖₂ ≤ L/2: each score sums L entries of X, the CE's Hessian is ≤ 1/2; L/8 starts the backtracking lower
    X0 = np.zeros((task.K * task.L, task.n_w)) if X0 is None else X0
    return solve(fx, lam, X0, lipschitz=task.L / 8.0, tol=tol, maxiter=maxiter, deadline=deadline)


def _optimum_collapsed(task, lam, d, tol, maxiter, precision, sec, t0) -> OptimumResult:
    """:func:`optimum` for uniform μ through :func:`fctheory.collapsed_optimum`, expanded to the words."""
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
    res = _evaluate(task, W, U, lam, False, grad=True, progress=False, max_seconds=max_seconds, max_bytes=max_bytes)
    lb, rho, align, _ = fenchel_bound(f, G, X, lam, nuc)
    R = float(res.R)
    gap = R - lb
    ok = gap <= tol * abs(R) or gap <= 0.0
    _, R3 = _reference_risks(task, lam, False, None, max_seconds, max_bytes)
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


# ----------------------------------------------------------------------------------------- the dispatcher, exact
@public(
    task=Instance(Task),
    lam=Real(lo=1e-12, hi=1e12),
    network=Choice("h", "h*"),
    d=Int(min=1).or_none(),
    max_seconds=_LIMIT,
    max_bytes=_LIMIT,
)
def predict_exact(task: Task, *, lam, network: str = "h", d: int | None = None, max_seconds=None, max_bytes=None):
    """:func:`fctheory.predict` with the certified optimum wherever the exact engine can enumerate the task.

    Partial tasks (K < n_c^L) on network h, any word frequencies μ: the certified global minimiser of (5)
    (:func:`optimum`) as a :class:`~fctheory.PartialPrediction` with provenance
    ``"exact (certified optimum)"``: per-word norms ‖w_(α,β)‖ from the optimum's columns of W (they are the
    same for every balanced minimiser: WᵀW = (XᵀX)^(1/2)), ‖W‖² = ‖X‖_*, R and its certified gap. Where the
    engine refuses the task within the budget, or the gap is not certified in time, the answer is
    :func:`fctheory.predict`'s: Lemma B's closed form (:func:`fctheory.lemma_b_scale`) or Theorem 1's
    numbers labelled as an approximation (uniform μ), and the project error for non-uniform μ. Full tasks
    and network h* are :func:`fctheory.predict`'s answer unchanged. (The dispatcher of
    :mod:`fctheory.predictions` sits in the theory layer, below the exact engine; this is its exact face.)

    Parameters
    ----------
    task : Task
    lam : float
        λ of (5) (both decays), or λ_U of (10) for h*; 1e-12 ≤ λ ≤ 1e12 (:func:`optimum`'s range).
    network : {"h", "h*"}
    d : int, optional
        As :func:`fctheory.predict` (h: the predictions do not depend on it; d ≥ n_c − 1 when given).
    max_seconds, max_bytes : float or None
        Budget of each engine evaluation and, for max_seconds, of the whole solve (None: the budget in force).

    Returns
    -------
    PartialPrediction, TypeIPrediction, TypeIIPrediction or TypeIIIPrediction

    Raises
    ------
    FCTheoryError
        Bad input, or (non-uniform μ, K < n_c^L) a task the engine cannot enumerate within the budget.

    Examples
    --------
    >>> import fctheory as fc
    >>> p = predict_exact(fc.Task.random(3, 2, 2, 4, seed=0, mu="zipf"), lam=0.02)
    >>> p.provenance, p.w_norms.shape
    ('exact (certified optimum)', (6,))
    """
    if network == "h*" or task.is_full:
        return predict(task, lam=lam, network=network, d=d)
    if d is not None and d < task.n_c - 1:
        fail("d", d, f"type-I/III configurations need an equiangular frame, so d >= n_c - 1 = {task.n_c - 1}")
    try:
        res = optimum(task, lam=lam, max_seconds=max_seconds, max_bytes=max_bytes)
    except FCTheoryError:  # over the budget: the theory layer's closed form or approximation
        res = None
    if res is None or not res.certified:
        return predict(task, lam=lam, d=d)
    w = np.linalg.norm(res.W, axis=0)
    t = float(np.sum(w * w))
    c1 = None
    if task.is_uniform:
        c1 = float(predict_type1(n_c=task.n_c, n_w=task.n_w, L=task.L, K=task.K, lam=lam).c)
    return PartialPrediction(
        provenance=EXACT, n_c=task.n_c, n_w=task.n_w, L=task.L, K=task.K, lam=float(lam), tau=t, w_norms=w,
        c=float(w.mean()), norm_W=float(np.sqrt(t)), norm_U=float(np.linalg.norm(res.U)), risk=res.R,
        ce=res.R - lam * 0.5 * (t + float(np.sum(res.U * res.U))), lambda_bound=None, trivial=bool(t == 0),
        gap=float(res.gap), theorem1_c=c1,
    )  # fmt: skip


# ----------------------------------------------------------------------------------------- h*
def _optimum_star(task, lam, d, tol, n_starts, seed, workers, max_seconds, max_bytes) -> OptimumResult:
    """Best of ``n_starts`` L-BFGS runs on (10) and the convex relaxation's certified lower bound."""
    t0 = time.perf_counter()
    d = task.n_c + 1 if d is None else d
    if d < 2:
        fail("d", d, "network h* needs d >= 2 (LayerNorm of a scalar is undefined)")
    rng = as_rng(seed)
    sec, _ = resolve_budget(max_seconds, max_bytes)
    deadline = t0 + (sec if sec is not None else math.inf)
    best, nfev = None, 0
    for _ in range(n_starts):
        left = max(deadline - time.perf_counter(), 1e-3) if sec is not None else math.inf
        W, U, res = minimize_true_risk(
            task, d=d, lam=lam, layernorm=True, seed=rng, gtol=1e-11, max_seconds=left, max_bytes=max_bytes
        )
        nfev += res.nfev
        if best is None or res.R < best[2].R:
            best = (W, U, res)
    W, U, res = best
    lb, lam_p, rho, n_h = _star_lower_bound(task, lam, d, workers, (max_seconds, max_bytes, deadline))
    R = float(res.R)
    gap = R - lb
    ok = gap <= tol * abs(R) or gap <= 0.0
    R2, _ = _reference_risks(task, lam, True, d, max_seconds, max_bytes)
    X = U_hat(U, L=task.L).T @ phi(W)
    return OptimumResult(
        X=X, W=W, U=U, width=d, R=R, lower_bound=lb, gap=gap, rel_gap=relative_gap(gap, R), rho=rho, align=float("nan"),
        grad_norm=float(res.grad_norm), R_type1=R2, R_type3=float("nan"), network="h*", certified=bool(ok),
        status="certified" if ok else "local",
        message=(f"best local minimiser of (10) of {n_starts} starts (|grad| = {res.grad_norm:.1e}); "
                 f"global lower bound from the convex relaxation at lambda' = {lam_p:.6g}: gap {gap:.2e}"),
        nit=0, nfev=nfev + n_h, seconds=time.perf_counter() - t0,
    )  # fmt: skip


def _star_lower_bound(task, lam, d, workers, budget):
    """max_λ' LB_h(λ') − λ'² d n_w/(2λ) (module docstring), and R* ≥ 0; returns (bound, λ', ρ at λ', evaluations)."""
    max_seconds, max_bytes, deadline = budget
    c = d * task.n_w / (2.0 * lam)
    n = [0]
    memo = {}

    def value(lp):
        fx = _FX(task, workers, max_seconds, max_bytes)
        X, f, G, nuc, _ = _solve_h(task, lp, fx, 1e-10, 20000, deadline, workers)
        n[0] += fx.nfev
        lb, rho, _, _ = fenchel_bound(f, G, X, lp, nuc)
        memo[lp] = (lb - c * lp * lp, rho)
        return -(lb - c * lp * lp)

    # beyond λ' = √(log K/c) the bound is < 0 (LB_h(λ') ≤ g(0) = f(0) = log K): no better than R* ≥ 0
    hi = math.sqrt(math.log(task.K) / c) if task.K > 1 else 1.0
    minimize_scalar(value, bounds=(0.0, hi), method="bounded", options=dict(xatol=1e-8 * hi))
    lp = max(memo, key=lambda k: memo[k][0])
    return max(memo[lp][0], 0.0), lp, memo[lp][1], n[0]


# ----------------------------------------------------------------------------------------- interval
#: (sentence, class) pairs the ball-arithmetic certificate enumerates at most by default (about 10 s)
INTERVAL_MAX_PAIRS = 500_000


@public(
    task=Instance(Task),
    W=Array(ndim=2),
    U=Array(ndim=2),
    lam=Real(lo=0.0, lo_open=True),
    prec=Int(min=53, max=4096),
    max_pairs=Int(min=1).or_none(),
)
def certify_optimality(task: Task, W, U, lam, *, prec: int = 128, max_pairs: int | None = None) -> dict:
    """Rigorous bounds, in ball arithmetic, on R(W, U) of (5) and on min R, at the float weights (W, U).

    Every sentence of every class is enumerated with python-flint ``arb`` balls (outward rounding), at the
    exact float64 entries of W, U, λ and μ: f(X), ∇f(X) and E = f − ⟨∇f, X⟩ at X = ÛᵀW, and R(W, U). An
    upper bound t ≥ ‖∇f(X)‖₂² is certified by an LDLᵀ factorisation of t·I − ∇fᵀ∇f with positive pivots
    in ball arithmetic. Then min R ≥ s·E with s = min(1, λ/√t) (the Fenchel bound of
    :mod:`fctheory.risk.convex`), valid over every width.

    Parameters
    ----------
    task : Task
    W : array_like, shape (d, n_w)
    U : array_like, shape (K, L·d)
    lam : float
    prec : int
        Working precision in bits (default 128).
    max_pairs : int or None
        Refuse tasks with more (sentence, class) pairs than this (default :data:`INTERVAL_MAX_PAIRS`).

    Returns
    -------
    dict
        ``R``: (lo, hi) with lo ≤ R(W, U) ≤ hi; ``lower_bound``: lo ≤ min R; ``gap``: an upper bound of
        R(W, U) − min R; ``rho``: an upper bound of ‖∇f(X)‖₂/λ.
    """
    limit = INTERVAL_MAX_PAIRS if max_pairs is None else max_pairs
    pairs = task.K * task.s_c**task.L * task.K
    if pairs > limit:
        fail("task", task, f"has {pairs} (sentence, class) pairs, above max_pairs={limit} for ball arithmetic")
    if W.shape[1] != task.n_w or U.shape != (task.K, task.L * W.shape[0]):
        fail("U", U, f"shapes {W.shape}, {U.shape} do not fit the task (W: (d, {task.n_w}), U: ({task.K}, L*d))")
    with workprec(prec) as flint:
        Xb = _arb_matrix(flint, U_hat(U, L=task.L).T) * _arb_matrix(flint, W)
        X = [[Xb[i, j] for j in range(task.n_w)] for i in range(task.K * task.L)]
        f, G, E = _arb_f_grad(flint, task, X)
        lam_b = flint.arb(float(lam))
        pen = sum((flint.arb(float(v)) ** 2 for v in np.concatenate([W.ravel(), U.ravel()])), flint.arb(0))
        R = f + lam_b * pen / 2
        t = _certified_top_eig(flint, G)
        s = flint.arb(1) if math.sqrt(t) <= float(lam) else lam_b / flint.arb(t).sqrt()
        E_lo = enclosure(E, prec).lo
        LB = s * flint.arb(max(E_lo, 0.0))
        eR, eL = enclosure(R, prec), enclosure(LB, prec)
        gap = enclosure(flint.arb(eR.hi) - flint.arb(eL.lo), prec).hi
        rho = enclosure(flint.arb(t).sqrt() / lam_b, prec).hi
    out = {"R": (eR.lo, eR.hi), "lower_bound": eL.lo, "gap": gap, "rho": rho}
    if not all(math.isfinite(v) for v in (eR.lo, eR.hi, eL.lo, gap, rho)):
        fail("W", W, f"the bounds leave the float64 range at these weights: {out}")
    return out


def _arb_matrix(flint, A):
    return flint.arb_mat(A.shape[0], A.shape[1], [float(v) for v in np.asarray(A, dtype=float).ravel()])


def _arb_f_grad(flint, task, X):
    """Balls of f(X), ∇f(X) (nested lists KL×n_w) and E = Σ_x c_x H(p_x), every sentence enumerated."""
    K, L, s = task.K, task.L, task.s_c
    mu = [flint.arb(float(m)) for m in task.mu]
    zero = flint.arb(0)
    G = [[zero for _ in range(task.n_w)] for _ in range(K * L)]
    f = E = zero
    for k in range(K):
        for betas in np.ndindex(*(s,) * L):
            words = [int(task.Z[k, ell]) * s + b for ell, b in enumerate(betas)]
            c = flint.arb(1)
            for b in betas:
                c *= mu[b]
            c /= K
            y = [sum((X[j * L + ell][w] for ell, w in enumerate(words)), zero) for j in range(K)]
            m = flint.arb(max(float(v.mid()) for v in y))
            lse = m + sum(((v - m).exp() for v in y), zero).log()
            p = [(v - lse).exp() for v in y]
            f += c * (lse - y[k])
            E += c * (lse - sum((pj * yj for pj, yj in zip(p, y)), zero))
            for j in range(K):
                q = c * (p[j] - (1 if j == k else 0))
                for ell, w in enumerate(words):
                    G[j * L + ell][w] += q
    return f, G, E


def _certified_top_eig(flint, G) -> float:
    """A float t with ‖G‖₂² ≤ t, certified by positive pivots of LDLᵀ(t·I − GᵀG) in ball arithmetic."""
    rows, cols = len(G), len(G[0])
    Gm = flint.arb_mat(rows, cols, [v for row in G for v in row])
    M = Gm.transpose() * Gm if cols <= rows else Gm * Gm.transpose()
    n = M.nrows()
    mid = np.array([[float(M[i, j].mid()) for j in range(n)] for i in range(n)])
    t = float(np.linalg.eigvalsh(mid)[-1]) if n else 0.0
    t = max(t, 0.0) * (1 + 1e-13) + 1e-300
    for _ in range(60):
        if _positive_definite(flint, M, t):
            return t
        t *= 1 + 1e-11 * 10 ** (_ // 6)
    fail("precision", "interval", "could not certify an upper bound of the gradient's spectral norm")


def _positive_definite(flint, M, t) -> bool:
    """Whether every matrix of the ball t·I − M is positive definite (LDLᵀ pivots certainly > 0)."""
    n = M.nrows()
    A = [[(flint.arb(t) if i == j else flint.arb(0)) - M[i, j] for j in range(n)] for i in range(n)]
    D, Lw = [], [[None] * n for _ in range(n)]
    for j in range(n):
        dj = A[j][j] - sum((Lw[j][k] ** 2 * D[k] for k in range(j)), flint.arb(0))
        if not dj > 0:
            return False
        D.append(dj)
        for i in range(j + 1, n):
            Lw[i][j] = (A[i][j] - sum((Lw[i][k] * Lw[j][k] * D[k] for k in range(j)), flint.arb(0))) / dj
    return True
