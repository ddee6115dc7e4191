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
from fctheory.optima import collapsed as col

from . import _oracle as orc
from . import _risk
from .registry import expect, register, tolerances

__all__ = [
    "exact_dual",
    "lemma_b_scale",
    "check_optimum_certificate",
    "check_optimum_interval",
    "check_lemma_b_optimal_scale",
    "check_collapsed_optimum",
]

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


# ----------------------------------------------------------------------------------------- Lemma-B sets
def lemma_b_scale(task, lam: float, *, K_only: bool = False):
    """(t*, min_t H_Z(t), λ₀,Z) on a Lemma-B latent set, uniform μ: :func:`fctheory.lemma_b_scale`.

    ``K_only`` (the self-test's wrong closed form) uses instead Theorem 1's K-only sphere sizes
    (K/n_c^L)C(L, r)(n_c − 1)^r, i.e. its τ and H(τ) at this K, which no partial set attains.
    """
    if K_only:
        p = fctheory.predict_type1(n_c=task.n_c, n_w=task.n_w, L=task.L, K=task.K, lam=lam)
        return float(p.tau), float(p.risk), float(p.lambda_trivial)
    b = fctheory.lemma_b_scale(task, lam=lam)
    return float(b.t_star), float(b.risk), b.lambda0


def _lemma_b_tasks(quick: bool):
    sets = [(2, 3, [[0, 0, 0], [0, 1, 1], [1, 0, 1], [1, 1, 0]])]
    if not quick:
        sets += [(2, 2, [[0, 0], [1, 1]]), (2, 3, [[0, 0, 0], [1, 1, 1]]), (3, 2, [[0, 0], [1, 1], [2, 2]]),
                 (4, 2, [[0, 0], [1, 1], [2, 2], [3, 3]]), (2, 2, [[0, 0], [0, 1], [1, 0], [1, 1]])]  # fmt: skip
    s_cs = (2,) if quick else (1, 2, 3)
    return [Task(n_c, s_c, L, np.array(Z), "uniform") for n_c, L, Z in sets for s_c in s_cs]


@register(
    "lemmaB-optimal-scale",
    "Closed form of the optimum on Lemma-B latent sets (uniform mu, K < n_c^L allowed): min R = min_t H_Z(t), "
    "H_Z(t) = log(1 + sum_r |S_r| e^(-eta r t)) + lambda t, attained at t* = -log(q*)/eta with q* the root in (0, 1) "
    "of sum_r (eta r - lambda)|S_r| q^r = lambda (t* = 0 iff lambda >= lambda0_Z = eta sum_r r|S_r|/K), and the "
    "certified optimum of fctheory.risk.optimum has R = H_Z(t*) (rel. 1e-12) and ||X||_* = ||W||^2 = t* (rel. 1e-8)",
    "numeric enumeration",
    "t* and H_Z from Theorem 1's K-only sphere sizes K/n_c^L C(L,r)(n_c-1)^r (its tau) instead of the set's own",
    tol=dict(rel=1e-12, scale=1e-8),
    library=("lemma_b_scale", "risk.optimum", "lemma_B_properties"),
    oracle="the certified optimum of fctheory.risk.optimum (its exact dual recomputed in optimum-certificate); "
    "lemma_b_scale's own mpmath path (the polynomial in q as printed) is checked in tests/test_partial.py",
)
def check_lemma_b_optimal_scale(mutant: bool = False, quick: bool = False) -> str:
    T = tolerances("lemmaB-optimal-scale")
    n = 0
    worst = 0.0
    for task in _lemma_b_tasks(quick):
        expect(fctheory.lemma_B_properties(task).holds, f"{task.Z.tolist()} does not satisfy Lemma B")
        lam0 = lemma_b_scale(task, 1.0)[2]
        for frac in (0.3, 0.9) if quick else (0.1, 0.3, 0.6, 0.9, 1.2):
            lam = frac * lam0
            t, HZ, _ = lemma_b_scale(task, lam, K_only=mutant)
            res = fctheory.risk.optimum(task, lam=lam)
            nuc = float(np.linalg.svd(res.X, compute_uv=False).sum())
            expect(res.certified, f"optimum not certified on {task.Z.tolist()} at lambda = {lam}: {res.message}")
            expect(abs(res.R - HZ) <= T["rel"] * res.R, f"R = {res.R!r} != min H_Z = {HZ!r} on {task.Z.tolist()}")
            expect(abs(nuc - t) <= T["scale"] * max(t, 1.0), f"||X||_* = {nuc!r} != t* = {t!r} on {task.Z.tolist()}")
            worst = max(worst, abs(res.R - HZ) / res.R)
            n += 1
    return f"{n} (Lemma-B set, lambda) pairs: max |R - min H_Z|/R = {worst:.1e}"


# ----------------------------------------------------------------------------------------- uniform μ, collapsed
def _collapsed_tasks(quick: bool):
    tasks = [(Task.random(3, 2, 3, 9, seed=0), 0.01), (Task.random(2, 3, 3, 5, seed=1), 0.05)]
    if not quick:
        tasks += [(Task.random(4, 2, 2, 9, seed=2), 0.02), (Task.random(2, 2, 4, 6, seed=3), 0.03),
                  (Task.random(3, 3, 2, 4, seed=4), 0.02), (Task.random(3, 1, 3, 20, seed=5), 0.004)]  # fmt: skip
    return tasks


@register(
    "collapsed-optimum",
    "Uniform mu, any latent set: the optimum of (5) over all weights is feature-collapsed (the words of a concept "
    "share one embedding), so fctheory.collapsed_optimum's solution of min_V f_c(V) + lambda||V||_* (K^2 L work) is "
    "the global minimiser: at its expanded weights R equals an enumeration of every sentence (rel. 1e-12) and the "
    "exact Fenchel dual over ALL X in R^(KL x n_w), every sentence enumerated, is within 1e-10 R of R; lambda0 = "
    "||grad f_c(0)||_2 is where the enumerated gradient at the origin has spectral norm lambda (rel. 1e-12)",
    "numeric enumeration",
    "the words' embeddings taken as the concept vectors themselves (without the 1/sqrt(s_c) of X = V (x) 1^T/sqrt s_c)",
    tol=dict(rel=1e-12, gap=1e-10),
    library=("collapsed_optimum",),
    oracle="proofs_check._risk enumeration of R, grad f and the exact entropy form of the dual (exact_dual)",
)
def check_collapsed_optimum(mutant: bool = False, quick: bool = False) -> str:
    T = tolerances("collapsed-optimum")
    worst = 0.0
    for task, lam in _collapsed_tasks(quick):
        res = fctheory.collapsed_optimum(task, lam=lam)
        name = f"(n_c, s_c, L, K) = ({task.n_c}, {task.s_c}, {task.L}, {task.K})"
        expect(res.certified, f"{name}: not certified ({res.message})")
        W = np.repeat(res.concept_vectors, task.s_c, axis=1) * (1.0 if mutant else 1.0 / np.sqrt(task.s_c))
        S = _risk.enumerate_sentences(task)
        R = _risk.risk(task, W, res.U, lam, S=S)
        expect(abs(R - res.R) <= T["rel"] * R, f"{name}: R = {res.R!r}, enumeration {R!r}")
        dual = exact_dual(task, _risk.X_of(W, res.U, task.L), lam, S)
        expect(R - dual <= T["gap"] * R, f"{name}: enumerated dual gap {R - dual:.2e} > {T['gap']:.0e} R")
        _, G0 = _risk.f_grad(S, np.zeros((task.K * task.L, task.n_w)))
        g0 = float(np.linalg.norm(G0, 2))
        expect(abs(g0 - res.lambda0) <= T["rel"] * g0, f"{name}: lambda0 = {res.lambda0!r}, enumerated {g0!r}")
        worst = max(worst, (R - dual) / R)
    return f"{len(_collapsed_tasks(quick))} uniform partial tasks: max (R - enumerated dual)/R = {worst:.1e}"


# ----------------------------------------------------------------------------------------- network h*, collapsed
def _star_tasks(quick: bool):
    tasks = [(Task.random(3, 2, 3, 9, seed=0), 0.01, 8), (Task.random(2, 2, 3, 5, mu="zipf", seed=1), 0.05, 4),
             (Task.full(3, 1, 2), 0.02, 5)]  # fmt: skip
    if not quick:
        tasks += [(Task.random(4, 1, 2, 9, seed=2), 0.02, 6), (Task.full(2, 2, 3), 0.05, 3),
                  (Task.random(3, 2, 2, 6, mu="zipf", seed=3), 0.004, 5)]  # fmt: skip
    return tasks


def _star_weights(task, res, d):
    """Network weights of a collapsed h*: w = φ_α in R^d (mean zero, norm √d: φ(w) = w with ε = 0)."""
    m = res.phi.shape[1]
    B = np.linalg.svd(np.eye(d) - 1.0 / d)[0][:, :m].T  # orthonormal, in the mean-zero subspace (σ = 1 there)
    return np.repeat(res.phi @ B, task.s_c, axis=0).T, (res.U @ B).reshape(task.K, task.L * d)


def _sdp_max(M, d):
    """max <M, G> over G >= 0, diag G = d, solved by cvxpy (Clarabel): the independent side of weak duality."""
    import cvxpy as cp  # noqa: PLC0415 - cvxpy takes seconds to import: only this check needs it

    G = cp.Variable(M.shape, PSD=True)
    prob = cp.Problem(cp.Maximize(cp.trace(M @ G)), [cp.diag(G) == d])
    prob.solve(solver="CLARABEL")
    return float(prob.value)


@register(
    "collapsed-optimum-star",
    "Network h*, any latent set and mu: fctheory.collapsed_optimum_star, the best feature-collapsed h* (a convex "
    "problem in the features' Gram and the scores), is what it says: at its network weights R* of (10) equals an "
    "enumeration of every sentence (rel. 1e-12); its dual bound's SDP term d*sum(y) dominates max <A^T A, G> over "
    "G >= 0, diag G = d solved by cvxpy at the optimum and at random points (weak duality, rel. 1e-6); on full "
    "tasks it is Theorem 3's type II: ||U||_F = tau* of the mpmath oracle (rel. 1e-6)",
    "SDP/convex",
    "the classifier taken 1% longer than the solver's in the network weights (R* of other weights)",
    tol=dict(rel=1e-12, sdp=1e-6, tau=1e-6),
    library=("collapsed_optimum_star",),
    oracle="proofs_check._risk enumeration of (10); cvxpy (Clarabel) for the SDP; _oracle.tau_star (mpmath)",
)
def check_collapsed_optimum_star(mutant: bool = False, quick: bool = False) -> str:
    T = tolerances("collapsed-optimum-star")
    rng = np.random.default_rng(0)
    for task, lam, d in _star_tasks(quick):
        res = fctheory.collapsed_optimum_star(task, lam=lam, d=d)
        name = f"(n_c, s_c, L, K, d) = ({task.n_c}, {task.s_c}, {task.L}, {task.K}, {d})"
        expect(res.certified, f"{name}: not certified ({res.message})")
        W, U = _star_weights(task, res, d)
        R = _risk.risk(task, W, U * (1.01 if mutant else 1.0), lam, layernorm=True)
        expect(abs(R - res.R) <= T["rel"] * R, f"{name}: R* = {res.R!r}, enumeration {R!r}")
        fx = col._Fc(task, root=1.0)
        points = [(res.U.reshape(-1, res.phi.shape[1]), res.phi)]
        for _ in range(2):
            P = rng.normal(size=res.phi.shape)
            points.append((rng.normal(size=points[0][0].shape), np.sqrt(d) * P / np.linalg.norm(P, axis=1)[:, None]))
        for Uq, Phi in points:
            V = Uq @ Phi.T
            f, A = fx(V)
            d_sum_y = -(col._star_bound(0.0, A, V, Phi, lam, d) + float(np.sum(A * V))) * 2 * lam
            top = _sdp_max(A.T @ A, d)
            expect(d_sum_y >= top * (1 - T["sdp"]), f"{name}: dual term {d_sum_y!r} below the SDP maximum {top!r}")
        if task.is_full:
            ts = float(orc.tau_star(task.n_c, task.L, task.K, d, lam))
            expect(abs(res.tau - ts) <= T["tau"] * ts, f"{name}: ||U||_F = {res.tau!r}, tau* = {ts!r}")
    return f"{len(_star_tasks(quick))} tasks: certified, R* enumerated, SDP term dominates at 3 points each"
