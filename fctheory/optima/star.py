"""Network h*: what can be said of the global minimum of the true risk (10), or of the trainer's objective of h*
on a training sample, on any small task.

**Network h* (risk (10)).** R* is not convex in any known variables. What is certified: a local minimiser
(the best of several L-BFGS runs, its gradient norm), and a global *lower bound* from a convex relaxation:
the columns of φ(W) have norm ≤ √d, so ‖Ûᵀφ(W)‖_* ≤ ‖U‖_F·√(d n_w) and, for every λ' ≥ 0,

    R*(W, U) ≥ f(X) + λ‖X‖_*²/(2 d n_w) ≥ min_X [f(X) + λ'‖X‖_*] − λ'² d n_w/(2λ) ≥ LB_h(λ') − λ'² d n_w/(2λ),

maximised over λ' (a concave function of λ'). The gap "best local R* − that bound" is a certified bound on how
far the local minimiser can be from the global one; it is not zero in general.

**Network h* on a training sample (the trainer's objective).** For sentences S (N × L) with labels y, SGD with
weight decays λ_W on W and λ on U and the LayerNorm φ_ε of :func:`fctheory.network.phi` minimises

    R̂*(W, U) = f̂(Ûᵀφ_ε(W)) + (λ_W/2)‖W‖² + (λ/2)‖U‖²,   φ_ε(w) = (w − w̄1)/√(σ²(w) + ε),

f̂ the sample average of the cross entropies (:mod:`fctheory.optima.empirical`). *Theorem (relaxation bound).*
Let n_S be the number of distinct words of S and LB_ĥ(λ') ≤ min_X f̂(X) + λ'‖X‖_* (the empirical h-problem's
certified Fenchel bound at λ'). Then for every width d ≥ 2, every (W, U) of width d and every λ' ≥ 0,

    R̂*(W, U) ≥ LB_ĥ(λ') − ψ*(λ'),   ψ*(λ') = (n_S d/2)·(λ'/√λ − √(λ_W ε))₊².

*Proof.* Write x_w = ‖φ_ε(w)‖² = d σ²/(σ² + ε) ∈ [0, d) for the column w of word w (x_w ≤ d also at ε = 0).
f̂ reads only the columns of the n_S words of S, and dropping the others does not raise a nuclear norm, so with
X_S = Ûᵀφ_ε(W_S): ‖X_S‖_* ≤ ‖Û‖_F‖φ_ε(W_S)‖_F = ‖U‖_F (Σ_S x_w)^{1/2} (Cauchy–Schwarz on the singular values of a
product). By AM–GM, (λ/2)‖U‖² ≥ λ'‖X_S‖_* − λ'² Σ_S x_w/(2λ). The W penalty is at least (λ_W/2) d σ² per word
(‖w‖² = d(σ² + w̄²)), and σ² = ε x_w/(d − x_w), so it is ≥ c·x_w/(d − x_w) with c = λ_W ε d/2 (the unseen
words' penalties are ≥ 0). Hence R̂* ≥ f̂(X_S) + λ'‖X_S‖_* − Σ_S q(x_w), q(x) = λ'²x/(2λ) − c·x/(d − x), and
sup_{[0,d)} q = (√(λ'²d/(2λ)) − √c)₊² (q is concave; its stationary point is d − √(2λcd)/λ'), which is
ψ*(λ')/n_S. Finally f̂(X_S) + λ'‖X_S‖_* ≥ min_X f̂ + λ'‖X‖_* ≥ LB_ĥ(λ'). ∎

The bound holds over every width d' ≤ d too, and for ε = 0 or λ_W = 0 (then ψ* = n_S d λ'²/(2λ), the
population formula with n_S for n_w). Its right side is concave in λ' up to the solver's tolerance: the search
runs over [√(λλ_Wε), √λ(√(2 log K/(n_S d)) + √(λ_W ε))] (below, ψ* = 0 and LB_ĥ increases; above, the bound is
negative since LB_ĥ ≤ f̂(0) = log K), each evaluation a certified training-set solve warm-started from the last.
The gap closes only where the relaxation is tight (every seen word's φ_ε(w) of the same norm and balanced with Û,
ε·λ_W = 0): it is a certified bound on the local minimiser's distance to the global minimum, not a proof of
optimality.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize_scalar

from .._nuclear import fenchel_bound, relative_gap, solve_lowrank
from .._validate import fail
from ..configurations import type2_configuration
from ..network import U_hat, phi
from ..risk.empirical import empirical_risk, minimize_empirical_risk
from ..risk.minimize import minimize_true_risk
from ..risk.plan import resolve_budget
from ..task import as_rng
from .empirical import sample_problem
from .population import EnumeratedF, reference_risks, solve_h
from .result import OptimumResult
from .sample import factors_to_network

__all__ = [
    "StarSample",
    "optimum_star",
    "optimum_star_sample",
    "relaxation_penalty",
    "star_lower_bound",
    "star_sample_lower_bound",
]


def optimum_star(task, lam, d, tol, n_starts, seed, workers, max_seconds, max_bytes) -> OptimumResult:
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
    lb, lam_p, rho, n_h = star_lower_bound(task, lam, d, workers, (max_seconds, max_bytes, deadline))
    R = float(res.R)
    gap = R - lb
    ok = gap <= tol * abs(R) or gap <= 0.0
    R2, _ = reference_risks(task, lam, True, d, max_seconds, max_bytes)
    X = U_hat(U, L=task.L).T @ phi(W)
    return OptimumResult(
        X=X, W=W, U=U, width=d, R=R, lower_bound=lb, gap=gap, rel_gap=relative_gap(gap, R), rho=rho, align=float("nan"),
        grad_norm=float(res.grad_norm), R_type1=R2, R_type3=float("nan"), network="h*", certified=bool(ok),
        status="certified" if ok else "local",
        message=(f"best local minimiser of (10) of {n_starts} starts (|grad| = {res.grad_norm:.1e}); "
                 f"global lower bound from the convex relaxation at lambda' = {lam_p:.6g}: gap {gap:.2e}"),
        nit=0, nfev=nfev + n_h, seconds=time.perf_counter() - t0,
    )  # fmt: skip


def relaxation_penalty(lp, n, d, lam, lam_W=0.0, eps=0.0) -> float:
    """ψ*(λ′) = (n d/2)(λ′/√λ − √(λ_W ε))₊² (module docstring), rounded up: what the relaxation at λ′ costs."""
    t = max(lp / math.sqrt(lam) - math.sqrt(lam_W * eps), 0.0)
    return 0.5 * n * d * t * t * (1.0 + 8 * 2.0**-52)


def _maximise(value, lo, hi, xrel=1e-8):
    """The best evaluated λ′ of a bounded scalar search for the maximum of ``value(λ′) → (bound, …)`` on
    [lo, hi] (to ``xrel``·hi in λ′), and its value."""
    memo = {}

    def neg(lp):
        memo[lp] = value(lp)
        return -memo[lp][0]

    minimize_scalar(neg, bounds=(lo, hi), method="bounded", options=dict(xatol=xrel * hi))
    lp = max(memo, key=lambda k: memo[k][0])
    return lp, memo[lp]


def star_lower_bound(task, lam, d, workers, budget):
    """max_λ' LB_h(λ') − λ'² d n_w/(2λ) (module docstring), and R* ≥ 0; returns (bound, λ', ρ at λ', evaluations)."""
    max_seconds, max_bytes, deadline = budget
    n = [0]

    def value(lp):
        fx = EnumeratedF(task, workers, max_seconds, max_bytes)
        X, f, G, nuc, _ = solve_h(task, lp, fx, 1e-10, 20000, deadline, workers)
        n[0] += fx.nfev
        lb, rho, _, _ = fenchel_bound(f, G, X, lp, nuc)
        return lb - relaxation_penalty(lp, task.n_w, d, lam), rho

    # beyond λ' = √(2λ log K/(d n_w)) the bound is < 0 (LB_h(λ') ≤ g(0) = f(0) = log K): no better than R* ≥ 0
    hi = math.sqrt(2.0 * lam * math.log(task.K) / (d * task.n_w)) if task.K > 1 else 1.0
    lp, (lb, rho) = _maximise(value, 0.0, hi)
    return max(lb, 0.0), lp, rho, n[0]


# ----------------------------------------------------------------------------- the trainer's h* on a sample
@dataclass
class StarSample:
    """The trainer's objective of h* on a training sample (module docstring): sentences ``S`` (N × L), labels
    ``y``, width ``d``, weight decays ``lam`` (U) and ``lam_W`` (W), LayerNorm's ``eps``."""

    task: object
    S: np.ndarray
    y: np.ndarray
    d: int
    lam: float
    lam_W: float
    eps: float

    @property
    def n_seen(self) -> int:
        """n_S: the distinct words of the sample (f̂ reads only their columns)."""
        return int(np.unique(self.S).size)

    def value(self, W, U) -> float:
        """R̂*(W, U)."""
        with np.errstate(over="ignore", invalid="ignore"):
            return float(empirical_risk(self.task, W, U, self.S, self.y, self.lam, grad=False, **self._star)[0])

    @property
    def _star(self):
        return dict(layernorm=True, eps=self.eps, lam_W=self.lam_W)


def check_star_sample(task, lam, data, d, lam_W, eps) -> StarSample:
    """The :class:`StarSample` of :func:`fctheory.optimum`'s arguments (defaults: d = n_c + 1, λ_W = λ,
    ε = 1e-5, the trainer's), after the checks that need more than one argument."""
    d = task.n_c + 1 if d is None else d
    lam_W = lam if lam_W is None else lam_W
    eps = 1e-5 if eps is None else eps
    if d < 2:
        fail("d", d, "network h* needs d >= 2 (LayerNorm of a scalar is undefined)")
    if eps == 0.0 and lam_W > 0.0:
        fail("lam_W", lam_W, "must be 0 when eps = 0: φ(cW) = φ(W), so the W penalty has no minimiser (W → 0)")
    return StarSample(task, data[0], data[1], d, lam, lam_W, eps)


def optimum_star_sample(prob: StarSample, search, where, deadline, t0) -> OptimumResult:
    """:func:`fctheory.optimum` with ``network="h*"`` and ``data=``: the best of ``n_starts`` L-BFGS runs on R̂*
    and the relaxation's certified lower bound (module docstring); ``search`` = (tol, maxiter, n_starts, seed)."""
    tol, maxiter, n_starts, seed = search
    task = prob.task
    _, oracle = sample_problem(task, prob.S, prob.y, *where)  # the data's and the budget's checks first
    lb, lp, rho, nit, relaxed = star_sample_lower_bound(prob, oracle, tol, maxiter, deadline)
    W, U, info, nfev = _local_star(prob, maxiter, n_starts, seed, deadline, relaxed)
    R = float(info["R"])
    gap = R - lb
    ok = bool(gap <= tol * abs(R) or gap <= 0.0)
    return OptimumResult(
        X=U_hat(U, L=task.L).T @ phi(W, eps=prob.eps), W=W, U=U, width=prob.d, R=R, lower_bound=lb, gap=gap,
        rel_gap=relative_gap(gap, R), rho=rho, align=float("nan"), grad_norm=float(info["grad_norm"]),
        R_type1=_type2_value(prob), R_type3=float("nan"), network="h*", certified=ok,
        status="certified" if ok else "local",
        message=(f"best local minimiser of the training objective of h* of {n_starts} random starts and one from "
                 f"the relaxation's solution (|grad| = "
                 f"{info['grad_norm']:.1e}); global lower bound from the convex relaxation (the training-set "
                 f"h-problem at lambda' = {lp:.6g}, {prob.n_seen} words seen, d = {prob.d}): gap {gap:.2e}"
                 + ("" if ok else " (a relaxation bound, not a proof of global optimality)")),
        nit=nit, nfev=nfev + oracle.nfev, seconds=time.perf_counter() - t0,
    )  # fmt: skip


def _local_star(prob, maxiter, n_starts, seed, deadline, relaxed):
    """The best of :func:`minimize_empirical_risk` runs on R̂*: from the relaxation's solution ``relaxed`` (balanced
    factors of X*(λ'), r × n_w and r × L·K) rounded to width d, then from ``n_starts`` random starts of ``seed``."""
    rng = as_rng(seed)
    task, d = prob.task, prob.d
    starts = [None] * n_starts
    if relaxed[0].shape[0]:
        W, U = factors_to_network(*relaxed, task.K, task.L)
        r = W.shape[0]
        keep = min(r, d)  # the top directions (the factors are sorted by singular value), zero rows below
        W0, U0 = np.zeros((d, task.n_w)), np.zeros((task.K, task.L, d))
        W0[:keep], U0[:, :, :keep] = W[:keep], U.reshape(task.K, task.L, r)[:, :, :keep]
        # a little noise: no constant column of W (unseen words are 0 there; φ with ε = 0 refuses them)
        starts.insert(0, (W0 + 1e-3 * rng.standard_normal(W0.shape), U0.reshape(task.K, task.L * d)))
    best, nfev = None, 0
    for i, start in enumerate(starts):
        if i and time.perf_counter() > deadline:
            break
        W0, U0 = start if start is not None else (None, None)
        W, U, info = minimize_empirical_risk(task, prob.S, prob.y, d=d, lam=prob.lam, seed=rng, W0=W0, U0=U0,
                                             gtol=1e-10, maxiter=maxiter, **prob._star)  # fmt: skip
        nfev += info["nit"]
        if best is None or info["R"] < best[2]["R"]:
            best = (W, U, info)
    return (*best, nfev)


def star_sample_lower_bound(prob: StarSample, oracle, tol, maxiter, deadline):
    """max_λ' LB_ĥ(λ') − ψ*(λ') (module docstring) and R̂* ≥ 0; returns (bound, λ', ρ at λ', L-BFGS iterations
    of the h-solves, the factors of the h-solution at λ'). ``oracle``: the sample's
    :class:`fctheory.optima.empirical.SampleOracle`."""
    task, n, d = prob.task, prob.n_seen, prob.d
    if task.K == 1:  # one class: f̂ ≡ 0 and R̂* ≥ 0 is the bound
        return 0.0, 0.0, 0.0, 0, (np.zeros((0, task.n_w)), np.zeros((0, task.L * task.K)))
    warm = [np.zeros((0, task.n_w)), np.zeros((0, task.L * task.K))]
    its = [0]

    def value(lp):
        st, cert, _, n_it = solve_lowrank(oracle, lp, *warm, tol=tol, maxiter=maxiter, deadline=deadline,
                                          lipschitz=task.L / 2.0)  # fmt: skip
        warm[:] = st.W, st.U
        its[0] += n_it
        # cert[0]: the Fenchel bound with the guarded ‖∇f̂‖₂, a lower bound of min f̂ + λ'‖·‖_* wherever it stopped
        return cert[0] - relaxation_penalty(lp, n, d, prob.lam, prob.lam_W, prob.eps), cert[1], (st.W, st.U)

    shift = math.sqrt(prob.lam_W * prob.eps)
    lo = math.sqrt(prob.lam) * shift
    hi = math.sqrt(prob.lam) * (math.sqrt(2.0 * math.log(task.K) / (n * d)) + shift)
    # the bound is flat at its maximum: an error δ in λ' costs O(δ²) of it, and each evaluation is a solve
    lp, (lb, rho, relaxed) = _maximise(value, lo, hi, xrel=1e-5)
    return max(lb, 0.0), lp, rho, its[0], relaxed


def _type2_value(prob):
    """R̂* at Theorem 3's type-II configuration (its population constants); nan where it has none."""
    try:
        W, U = type2_configuration(prob.task, d=prob.d, lam=prob.lam)
    except Exception:  # noqa: BLE001 - outside Theorem 3's range: nothing to compare
        return float("nan")
    return prob.value(W, U)
