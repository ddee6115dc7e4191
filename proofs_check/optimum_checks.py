"""The certified optimum of ``fctheory.risk.optimum`` against oracles that share none of its code.

For network h, ``optimum`` returns balanced (W, U) and a lower bound on min R from the Fenchel dual of
min_X f(X) + λ‖X‖_* (docs/optimum.md). Here the certificate is recomputed from scratch with the independent
enumeration of :mod:`proofs_check._risk`: R(W, U) of every sentence, ∇f(X) in X = ÛᵀW, and the *exact* dual
value Σ_x c_x H(s p_x + (1 − s) e_k) at Y = s∇f(X), s = min(1, λ/‖∇f(X)‖₂) (the library uses the weaker
concavity bound s·Σ_x c_x H(p_x)). Weak duality makes that dual value a lower bound on min R that owes nothing
to the solver; the gap R − dual must be ≤ 1e-10·R. On full tasks with uniform μ min R is also known in closed
form, H(τ) of Theorem 1 (50-digit mpmath), and ``certify_optimality``'s ball-arithmetic bounds must bracket
it; at perturbed weights its lower bound must stay below H(τ) (weak duality).
"""

from __future__ import annotations

import numpy as np

import fctheory
from fctheory import Task

from . import _oracle as orc
from . import _risk
from .registry import expect, register, tolerances

__all__ = ["exact_dual", "check_optimum_certificate", "check_optimum_interval"]

#: the self-test's perturbed optimum: W multiplied by this
MUTANT_W_SCALE = 1.0001


def exact_dual(task, X, lam: float, S=None) -> float:
    """Σ_x c_x H(s p_x + (1 − s)e_k), s = min(1, λ/‖∇f(X)‖₂): −f*(Y) at Y = s∇f(X) for the decomposition of Y
    by sentences, a lower bound on min_X f + λ‖X‖_* by weak duality (every sentence enumerated here)."""
    S = S or _risk.enumerate_sentences(task)
    _, G = _risk.f_grad(S, X)
    s = min(1.0, lam / float(np.linalg.norm(G, 2)))
    Y = _risk._scores(S, X)
    P = np.exp(Y - Y.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    Q = s * P
    Q[np.arange(len(Q)), S.label] += 1.0 - s
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = -np.where(Q > 0, Q * np.log(Q), 0.0).sum(axis=1)
    return float(np.dot(S.weight, ent) / S.K)


def _cases(quick: bool):
    cases = [("full (3,2,2)", Task.full(3, 2, 2), 0.01), ("partial (3,2,2) K=5 mu=(.7,.3)",
             Task.random(3, 2, 2, 5, seed=0, mu=np.array([0.7, 0.3])), 0.02)]  # fmt: skip
    if not quick:
        cases += [
            ("full (2,2,3)", Task.full(2, 2, 3), 0.02),
            ("full zipf (3,3,2)", Task.full(3, 3, 2, mu="zipf"), 0.02),
            ("partial (2,2,3) K=3", Task.random(2, 2, 3, 3, seed=0), 0.05),
            ("partial (3,3,3) K=20", Task.random(3, 3, 3, 20, seed=0), 0.01),
            ("Lemma-B (2,2,2) K=2", Task(2, 2, 2, np.array([[0, 0], [1, 1]]), "uniform"), 0.1),
            ("partial (4,2,2) K=10 zipf", Task.random(4, 2, 2, 10, seed=2, mu="zipf"), 0.05),
        ]
    return cases


@register(
    "optimum-certificate",
    "The certified optimum of (5) (fctheory.risk.optimum, convex in X = U_hat^T W, (159)-(167)): at the returned "
    "balanced (W, U), R equals an independent enumeration (rel. 1e-12), W and U_hat are balanced (||W||^2 = "
    "||U_hat||^2 = ||X||_*) and the exact Fenchel dual at Y = s grad f(X) is within 1e-10 R of R (so (W, U) is a "
    "global minimiser to that gap); on full tasks with uniform mu R = H(tau) (50-digit mpmath, rel. 1e-12)",
    "numeric enumeration",
    "the optimum's W scaled by 1 + 1e-4 claimed certified (the gap must show it)",
    tol=dict(rel=1e-12, gap=1e-10, balance=1e-10),
    library=("risk.optimum",),
    oracle="proofs_check._risk enumeration of R and grad f; the exact entropy form of the dual; 50-digit H(tau)",
)
def check_optimum_certificate(mutant: bool = False, quick: bool = False) -> str:
    T = tolerances("optimum-certificate")
    worst = 0.0
    for name, task, lam in _cases(quick):
        res = fctheory.risk.optimum(task, lam=lam)
        W = res.W * MUTANT_W_SCALE if mutant else res.W
        S = _risk.enumerate_sentences(task)
        R = _risk.risk(task, W, res.U, lam, S=S)
        X = _risk.X_of(W, res.U, task.L)
        dual = exact_dual(task, X, lam, S)
        expect(dual <= R + T["rel"] * R, f"{name}: dual {dual!r} above the primal {R!r} (weak duality broken)")
        expect(R - dual <= T["gap"] * R, f"{name}: gap R - dual = {R - dual:.2e} > {T['gap']:.0e} R")
        expect(res.lower_bound <= dual + T["rel"] * R, f"{name}: library bound {res.lower_bound!r} > dual {dual!r}")
        expect(abs(R - res.R) <= T["rel"] * R, f"{name}: R = {res.R!r}, enumeration {R!r}")
        nuc = float(np.linalg.svd(X, compute_uv=False).sum())
        Uh = _risk.U_hat(res.U, task.L)
        expect(
            abs(np.sum(W * W) - nuc) <= T["balance"] * nuc and abs(np.sum(Uh * Uh) - nuc) <= T["balance"] * nuc,
            f"{name}: not balanced (||W||^2 = {np.sum(W * W)}, ||U_hat||^2 = {np.sum(Uh * Uh)}, ||X||_* = {nuc})",
        )
        worst = max(worst, (R - dual) / R)
        if task.is_full and np.ptp(task.mu) == 0:
            Ht = float(orc.H(orc.tau(task.n_c, task.n_w, task.L, task.K, lam), task.n_c, task.n_w, task.L, task.K, lam))
            expect(abs(res.R - Ht) <= T["rel"] * Ht, f"{name}: R = {res.R!r} != H(tau) = {Ht!r}")
    return f"{len(_cases(quick))} tasks: max (R - exact dual)/R = {worst:.1e}"


@register(
    "optimum-interval",
    "fctheory.risk.certify_optimality (ball arithmetic): at the certified optimum of a full task the rigorous "
    "bounds bracket min R = H(tau) (50-digit mpmath) with a gap <= 1e-10 R, and at perturbed and random weights "
    "the rigorous lower bound stays below H(tau) (weak duality) while the gap is visible (> 1e-6)",
    "numeric (mpmath)",
    "the dual scaling s = min(1, lambda/||grad f||_2) taken as 1 (the bound claimed above the minimum)",
    tol=dict(gap=1e-10, visible=1e-6),
    library=("risk.certify_optimality", "risk.optimum"),
    oracle="min R = H(tau) from 50-digit mpmath (Theorem 1 + Theorem G)",
)
def check_optimum_interval(mutant: bool = False, quick: bool = False) -> str:
    T = tolerances("optimum-interval")
    task, lam = Task.full(3, 2, 2), 0.01
    Ht = float(orc.H(orc.tau(task.n_c, task.n_w, task.L, task.K, lam), task.n_c, task.n_w, task.L, task.K, lam))
    res = fctheory.risk.optimum(task, lam=lam)
    iv = fctheory.risk.certify_optimality(task, res.W, res.U, lam)
    expect(iv["lower_bound"] <= Ht <= iv["R"][1], f"bounds {iv} do not bracket H(tau) = {Ht!r}")
    expect(iv["gap"] <= T["gap"] * Ht, f"rigorous gap {iv['gap']:.2e} at the optimum")
    rng = np.random.default_rng(5)
    points = [("W x 1.3", res.W * 1.3, res.U), ("U x 0.5", res.W, res.U * 0.5)]
    points += [(f"random {s}", s * rng.normal(size=res.W.shape), s * rng.normal(size=res.U.shape)) for s in (0.5, 2.0)]
    for name, W, U in points:
        b = fctheory.risk.certify_optimality(task, W, U, lam)
        lb = _mutant_bound(task, W, U, lam) if mutant else b["lower_bound"]
        expect(lb <= Ht, f"{name}: lower bound {lb!r} above min R = H(tau) = {Ht!r}")
        expect(b["gap"] > T["visible"], f"{name}: gap {b['gap']:.1e} does not show a non-optimal point")
    return f"gap at the optimum {iv['gap']:.1e}; {len(points)} perturbed points below H(tau)"


def _mutant_bound(task, W, U, lam):
    """The wrong bound E = f − ⟨∇f, X⟩ without the dual scaling s (valid only when ‖∇f‖₂ ≤ λ)."""
    S = _risk.enumerate_sentences(task)
    X = _risk.X_of(W, U, task.L)
    f, G = _risk.f_grad(S, X)
    return f - float(np.sum(G * X))
