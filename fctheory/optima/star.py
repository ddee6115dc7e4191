"""Network h*: what can be said of the global minimum of the true risk (10) on any small task.

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

from scipy.optimize import minimize_scalar

from .._nuclear import fenchel_bound, relative_gap
from .._validate import fail
from ..network import U_hat, phi
from ..risk.plan import resolve_budget
from ..risk.minimize import minimize_true_risk
from ..task import as_rng
from .population import EnumeratedF, reference_risks, solve_h
from .result import OptimumResult

__all__ = ["optimum_star", "star_lower_bound"]


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


def star_lower_bound(task, lam, d, workers, budget):
    """max_λ' LB_h(λ') − λ'² d n_w/(2λ) (module docstring), and R* ≥ 0; returns (bound, λ', ρ at λ', evaluations)."""
    max_seconds, max_bytes, deadline = budget
    c = d * task.n_w / (2.0 * lam)
    n = [0]
    memo = {}

    def value(lp):
        fx = EnumeratedF(task, workers, max_seconds, max_bytes)
        X, f, G, nuc, _ = solve_h(task, lp, fx, 1e-10, 20000, deadline, workers)
        n[0] += fx.nfev
        lb, rho, _, _ = fenchel_bound(f, G, X, lp, nuc)
        memo[lp] = (lb - c * lp * lp, rho)
        return -(lb - c * lp * lp)

    # beyond λ' = √(log K/c) the bound is < 0 (LB_h(λ') ≤ g(0) = f(0) = log K): no better than R* ≥ 0
    hi = math.sqrt(math.log(task.K) / c) if task.K > 1 else 1.0
    minimize_scalar(value, bounds=(0.0, hi), method="bounded", options=dict(xatol=1e-8 * hi))
    lp = max(memo, key=lambda k: memo[k][0])
    return max(memo[lp][0], 0.0), lp, memo[lp][1], n[0]
