"""fctheory._nuclear: singular-value thresholding, the Fenchel bound, FISTA, the ray step, balanced factors.

Oracles: the subgradient optimality condition of the proximal map, Claim G's identities, scipy's scalar
minimiser on the ray, and the collapsed problem of a full task, whose minimum is H(τ) (Theorem 1).
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from scipy.optimize import minimize_scalar

import fctheory as fc
from fctheory import _nuclear as nu
from fctheory.optima.collapsed import _Fc


def test_svt_is_the_proximal_map_of_the_nuclear_norm():
    """X = svt(M, τ) satisfies M − X ∈ τ∂‖X‖_*: ‖M − X‖₂ ≤ τ and ⟨M − X, X⟩ = τ‖X‖_*."""
    rng = np.random.default_rng(0)
    M = rng.normal(size=(7, 5))
    s = np.linalg.svd(M, compute_uv=False)
    tau = 0.5 * (s[1] + s[2])  # keeps two singular values
    X, kept = nu.svt(M, tau)
    assert kept.size == 2
    np.testing.assert_allclose(kept, s[:2] - tau, rtol=1e-13)
    assert np.linalg.norm(M - X, 2) <= tau * (1 + 1e-13)
    assert float(np.sum((M - X) * X)) == pytest.approx(tau * nu.nuclear_norm(X), rel=1e-12)
    Z, none = nu.svt(M, s[0] * 1.01)
    assert none.size == 0 and not Z.any()


def test_balanced_svd_satisfies_claim_g():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(6, 2)) @ rng.normal(size=(2, 4))  # rank 2
    Wt, Uh, r = nu.balanced_svd(X)
    assert r == 2 and Wt.shape == (2, 4) and Uh.shape == (2, 6)
    np.testing.assert_allclose(Uh.T @ Wt, X, atol=1e-13)
    nuc = nu.nuclear_norm(X)
    assert np.sum(Wt**2) == pytest.approx(nuc, rel=1e-13) and np.sum(Uh**2) == pytest.approx(nuc, rel=1e-13)
    Wp, Up, rp = nu.balanced_svd(X, width=5)
    assert rp == 2 and Wp.shape == (5, 4) and not Wp[2:].any() and not Up[2:].any()
    W0, U0, r0 = nu.balanced_svd(np.zeros((3, 2)))
    assert r0 == 0 and W0.shape == (1, 2) and not W0.any() and not U0.any()


def test_relative_gap_edges():
    assert nu.relative_gap(1e-3, -2.0) == 5e-4
    assert nu.relative_gap(0.0, 0.0) == 0.0 and nu.relative_gap(-1e-300, 0.0) == 0.0
    assert nu.relative_gap(1e-3, 0.0) == math.inf
    # reached: gap ≤ tol·|g| (a closed test, not one 10× looser), or gap ≤ the floor where one is given
    assert nu.reached(1e-10, -1.0, 1e-10) and not nu.reached(2e-10, 1.0, 1e-10) and not nu.reached(1e-9, 1.0, 2e-10)
    assert nu.reached(1e-3, 1.0, 1e-10, lambda: 1e-3) and not nu.reached(1e-3, 1.0, 1e-10, lambda: 5e-4)


def _full_task_problem():
    task, lam = fc.Task.full(3, 2, 2), 0.02
    p = fc.predict_type1(n_c=3, n_w=task.n_w, L=2, K=task.K, lam=lam)
    return task, lam, _Fc(task), p.risk


def test_fenchel_bound_is_below_the_minimum_and_tight_at_it():
    task, lam, fx, Rmin = _full_task_problem()
    rng = np.random.default_rng(2)
    V, f, G, nuc, _ = nu.solve(fx, lam, np.zeros((task.K * task.L, 3)), lipschitz=0.25, tol=1e-12,
                               maxiter=5000, deadline=math.inf)  # fmt: skip
    lb, rho, align, g = nu.fenchel_bound(f, G, V, lam, nuc)
    assert g == pytest.approx(Rmin, rel=1e-12) and lb <= Rmin * (1 + 1e-14) and g - lb <= 1e-11 * g
    assert rho <= 1 + 1e-9 and abs(align) <= 1e-9
    for _ in range(5):
        W = V + rng.normal(size=V.shape)
        fW, GW = fx(W)
        lbW, _, _, gW = nu.fenchel_bound(fW, GW, W, lam, nu.nuclear_norm(W))
        assert lbW <= Rmin * (1 + 1e-14) < gW


def test_fista_alone_reaches_a_coarse_certified_gap():
    task, lam, fx, Rmin = _full_task_problem()
    V, f, G, nuc, it = nu.fista(fx, lam, np.zeros((task.K * task.L, 3)), lipschitz=0.25, rel_tol=1e-4,
                                maxiter=10_000, deadline=math.inf)  # fmt: skip
    lb, _, _, g = nu.fenchel_bound(f, G, V, lam, nuc)
    assert g - lb <= 1e-4 * g and lb <= Rmin * (1 + 1e-14) and it > 1
    assert g >= Rmin * (1 - 1e-14)


@pytest.mark.parametrize("start", ["half the optimum", "random direction"])
def test_ray_step_finds_the_best_scale_on_the_ray(start):
    task, lam, fx, _ = _full_task_problem()
    rng = np.random.default_rng(3)
    if start == "random direction":  # the best point of this ray is near the origin
        V0 = rng.normal(size=(task.K * task.L, 3))
    else:
        Vs = nu.solve(fx, lam, np.zeros((task.K * task.L, 3)), lipschitz=0.25, tol=1e-10, maxiter=5000,
                      deadline=math.inf)[0]  # fmt: skip
        V0 = 0.5 * Vs + 1e-3 * rng.normal(size=Vs.shape)
    f, G = fx(V0)
    V, fv, Gv, nuc = nu.ray_step(fx, lam, V0, f, G)
    nuc0 = nu.nuclear_norm(V0)

    def g(t):
        return fx(t * V0)[0] + lam * t * nuc0

    t = nuc / nuc0
    assert t >= 0 and nuc == pytest.approx(nu.nuclear_norm(V), rel=1e-12)  # a point of the ray, honestly valued
    assert fv + lam * nuc == pytest.approx(g(t), rel=1e-14) and fv + lam * nuc <= f + lam * nuc0
    if start == "half the optimum":
        best = minimize_scalar(g, bounds=(0.0, 10.0), method="bounded", options=dict(xatol=1e-12))
        # four secant-Newton steps from t = 1 to t ≈ 2: the value to ~1e-9 (it is a finishing step after a polish)
        assert fv + lam * nuc <= best.fun * (1 + 1e-9)
        assert t == pytest.approx(best.x, rel=1e-4)


def test_polish_at_fixed_rank_is_certified_from_a_near_point():
    task, lam, fx, Rmin = _full_task_problem()
    V, f, G, nuc, _ = nu.fista(fx, lam, np.zeros((task.K * task.L, 3)), lipschitz=0.25, rel_tol=0.1,
                               maxiter=10_000, deadline=math.inf)  # fmt: skip
    Vp, fp, Gp, nucp = nu.polish(fx, lam, V, deadline=math.inf, tol=1e-10, maxiter=2000)
    lb, _, _, g = nu.fenchel_bound(fp, Gp, Vp, lam, nucp)
    assert g - lb <= 1e-10 * g and g == pytest.approx(Rmin, rel=1e-12)


# ----------------------------------------------------------------------------- the low-rank machinery
def _clustered(rng, m=40, n=25, top=1.0, k=6, spread=1e-9):
    """A matrix whose k top singular values lie within ``spread`` (relative) of ``top``: Lanczos' hard case."""
    A = np.linalg.qr(rng.normal(size=(m, n)))[0]
    B = np.linalg.qr(rng.normal(size=(n, n)))[0]
    s = np.concatenate([top * (1 - spread * rng.random(k)), np.sort(rng.random(n - k))[::-1] * 0.5 * top])
    return (A * s) @ B.T, np.max(s)


@pytest.mark.parametrize("spread", [0.0, 1e-9, 1e-4])
def test_spectral_norm_bound_is_an_upper_bound_whatever_the_estimate(spread):
    """γ ≥ ‖G‖₂ (SVD of the exact matrix as the oracle) for a cluster of top singular values, from a correct
    Lanczos estimate, from one 30% too small and from none; and γ exceeds ‖G‖₂ by at most ~n²u."""
    rng = np.random.default_rng(4)
    G, smax = _clustered(rng, spread=spread)
    true = np.linalg.norm(G, 2)
    M, m, fro2 = nu.gram(G)
    for est in (true, 0.7 * true, 1e-3 * true, None):
        b = nu.spectral_norm_bound(M, m, fro2, est)
        assert b >= true and b <= true * (1 + 1e-11)
    assert nu.spectral_norm_bound(np.zeros((3, 3)), 5, 0.0) == 0.0


def test_spectral_norm_bound_includes_the_rounding_of_the_gram_matrix():
    """At a huge inner length m the a-priori term γ_m‖G‖_F² dominates: the bound grows with m."""
    rng = np.random.default_rng(5)
    G = rng.normal(size=(6, 30))
    M, m, fro2 = nu.gram(G)
    assert nu.spectral_norm_bound(M, 10**9, fro2) > nu.spectral_norm_bound(M, m, fro2) >= np.linalg.norm(G, 2)


def test_top_singular_matches_the_svd_and_is_a_lower_bound():
    rng = np.random.default_rng(6)
    G = rng.normal(size=(30, 12))
    s_ref = np.linalg.svd(G, compute_uv=False)
    for Gx in (G, G.T):
        A, s, Bt = nu.top_singular(lambda v: Gx @ v, lambda u: Gx.T @ u, Gx.shape, 3, tol=1e-12)
        np.testing.assert_allclose(s, s_ref[:3], rtol=1e-10)
        np.testing.assert_allclose(A.T @ Gx @ Bt.T, np.diag(s), atol=1e-9)
    # a tight cluster and two restarts: no convergence, the Ritz values reached (≤ σ₁) come back
    C, smax = _clustered(rng, m=200, n=150, k=40, spread=1e-12)
    A, s, Bt = nu.top_singular(lambda v: C @ v, lambda u: C.T @ u, C.shape, 1, tol=1e-15, maxiter=2)
    assert s[0] <= np.linalg.norm(C, 2) * (1 + 1e-12) and s[0] >= 0.5 * smax


def test_rebalance_is_claim_g_and_drops_vanished_directions():
    rng = np.random.default_rng(7)
    W, U = rng.normal(size=(5, 9)), rng.normal(size=(5, 14))
    W[4] *= 1e-14  # a direction of X = WᵀU ~1e-14 of the others: dropped
    X = W.T @ U
    W2, U2, s = nu.rebalance(W, U)
    assert W2.shape[0] == 4
    np.testing.assert_allclose(W2.T @ U2, X, atol=1e-12 * np.abs(X).max())
    nuc = np.linalg.svd(W2.T @ U2, compute_uv=False).sum()
    assert np.sum(W2**2) == pytest.approx(nuc, rel=1e-12) and np.sum(U2**2) == pytest.approx(nuc, rel=1e-12)
    np.testing.assert_allclose(s, np.linalg.svd(X, compute_uv=False)[:5], rtol=1e-9, atol=1e-12)


class _DenseOracle:
    """The factored oracle protocol of solve_lowrank for a dense f (here the collapsed problem of a full task,
    X = V in its K·L × n_c coordinates, factored as X = WᵀU with W r × K·L, U r × n_c)."""

    def __init__(self, fx):
        self.fx, self.G = fx, None

    def factored(self, W, U):
        X = W.T @ U
        f, G = self.fx(X)
        self.G = G
        E = f - float(np.sum(G * X))
        return f, E, U @ G.T, W @ G, float(np.sum(G * X))

    def matvec(self, v):
        return self.G @ v

    def rmatvec(self, u):
        return self.G.T @ u

    def rmatmat(self, Q):
        return self.G.T @ Q

    def top(self, k, **kw):
        kw.pop("maxiter", None)
        return nu.top_singular(self.matvec, self.rmatvec, self.G.shape, k, **kw)

    def norm_bound(self, estimate=None):
        return nu.spectral_norm_bound(*nu.gram(self.G), estimate)


def test_lowrank_solver_reaches_theorem_1_from_the_origin():
    """solve_lowrank (rank growth + factored L-BFGS + guarded certificate) on the collapsed problem of a full
    task: min = H(τ) (Theorem 1), rank n_c − 1, certified to 1e-10."""
    task, lam, fx, Rmin = _full_task_problem()
    oracle = _DenseOracle(fx)
    n, m = task.K * task.L, task.n_c
    st, cert, rounds, its = nu.solve_lowrank(oracle, lam, np.zeros((0, n)), np.zeros((0, m)), tol=1e-10,
                                             maxiter=5000, deadline=math.inf, lipschitz=task.L / 2)  # fmt: skip
    lb, rho, align, g = cert
    assert g == pytest.approx(Rmin, rel=1e-12) and lb <= Rmin * (1 + 1e-15) and g - lb <= 1e-10 * g
    assert st.rank == 2 and rho <= 1 + 1e-9


def test_spectral_norm_bound_carries_the_a_priori_rounding_terms():
    """The float Cholesky test proves t·I − M ⪰ −γ_(n+1)/(1 − γ_(n+1))·tr(t·I − M)·I only (Higham Thm 10.5): on
    M = I_n the factorisation already passes just above t = 1, and the bound must still add that term (n·γ_(n+1)
    relative, 4.4e-10 at n = 2000), and γ_m‖G‖_F² for the Gram matrix's own rounding."""
    n = 2000
    b = nu.spectral_norm_bound(np.eye(n), 1, float(n), 1.0)
    u = 2.0**-53
    g = (n + 1) * u / (1 - (n + 1) * u)
    assert b**2 >= 1 + g / (1 - g) * n * (1 - 1e-3)
    assert b**2 <= 1 + 2 * g * n
    m = 10**6
    b2 = nu.spectral_norm_bound(np.eye(3), m, 3.0, 1.0)
    assert b2**2 >= 1 + m * u * 3.0 * (1 - 1e-3)


def test_spectral_norm_bound_is_above_the_exact_norm_at_small_n():
    """γ ≥ ‖G‖₂ against the exact norm (mpmath, 60 digits, of the float entries) where the bisection's bracket is
    wider than the a-priori rounding terms (n = 2, 3: 16(n+1)u against n²u): a bound taken from the refused end
    of the bracket (the last t whose Cholesky factorisation failed) falls below ‖G‖₂ there. Near rank-one G,
    estimates just below σ₁, half of it, and none."""
    rng = np.random.default_rng(0)
    with mp.workdps(60):
        for trial in range(60):
            n, m = int(rng.integers(2, 4)), int(rng.integers(2, 6))
            G = rng.normal(size=(n, m)) * 10.0 ** rng.uniform(-3, 3)
            if trial % 3 == 0:
                G[1] = G[0] * (1 + 1e-9 * rng.normal())
            A = mp.matrix(G.tolist())
            ev = mp.eigsy(A * A.T)[0]
            exact = mp.sqrt(max(ev[i] for i in range(n)))
            M, mm, fro2 = nu.gram(G)
            for est in (float(exact) * (1 - 1e-3), float(exact) * (1 - 1e-12), 0.5 * float(exact), None):
                b = nu.spectral_norm_bound(M, mm, fro2, est)
                assert mp.mpf(b) >= exact and mp.mpf(b) <= exact * (1 + 1e-13)
