"""fctheory.optima.collapsed: the certified optimum of (5) for uniform μ in the feature-collapsed coordinates.

Oracles: the exact engine's and the brute-force enumeration of the s_c^L sentences (the collapsed risk and
gradient are those of (5) at collapsed weights), the enumeration-based convex solver (``symmetry=False``),
Theorem 1 (full tasks), Lemma B's closed form, central finite differences, and Claim H at the origin.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fctheory as fc
from fctheory.optima import collapsed as col
from fctheory.network import U_hat
from fctheory.risk import optimum, true_risk_bruteforce
from fctheory.optima.population import EnumeratedF as _FX

EPS = np.finfo(float).eps
LEMMA_B_TASK = fc.Task(2, 2, 3, np.array([[0, 0, 0], [0, 1, 1], [1, 0, 1], [1, 1, 0]]), "uniform")


def _expand(task, V):
    """The word-level X = V ⊗ 1ᵀ/√s_c and balanced (W, U) with ÛᵀW = X."""
    X = np.repeat(V, task.s_c, axis=1) / math.sqrt(task.s_c)
    Wt, Uh, _ = col.balanced_svd(V)
    W = np.repeat(Wt, task.s_c, axis=1) / math.sqrt(task.s_c)
    return X, W, col.U_from_hat(Uh, L=task.L)


@pytest.mark.parametrize("seed", range(3))
def test_collapsed_risk_is_the_enumerated_true_risk_at_collapsed_weights(seed):
    """f_c(V) + (λ/2)(‖W‖² + ‖U‖²) = R(W, U) of (5), every sentence enumerated, at balanced collapsed weights."""
    task = fc.Task.random(3, 3, 3, 7, seed=seed)
    V = np.random.default_rng(seed).normal(size=(task.K * task.L, task.n_c))
    lam = 0.03
    g, f, _ = fc.collapsed_risk(task, V, lam)
    _, W, U = _expand(task, V)
    R = true_risk_bruteforce(task, W, U, lam).R
    assert g == pytest.approx(R, rel=64 * EPS * task.L)  # balanced: (λ/2)(‖W‖² + ‖U‖²) = λ‖V‖_*
    assert f == pytest.approx(true_risk_bruteforce(task, W, U, 0.0).R, rel=64 * EPS * task.L)


def test_collapsed_gradient_is_the_enumerated_gradient_restricted():
    """∇f(X) at X = V ⊗ 1ᵀ/√s_c (the engine's, all sentences) is ∇f_c(V) ⊗ 1ᵀ/√s_c: equal columns per concept."""
    task = fc.Task.random(3, 2, 3, 8, seed=4)
    V = np.random.default_rng(0).normal(size=(task.K * task.L, task.n_c))
    X, _, _ = _expand(task, V)
    fX, GX = _FX(task, 1, None, None)(X)
    _, f, G = fc.collapsed_risk(task, V, 0.0)
    assert f == pytest.approx(fX, rel=1e-13)
    np.testing.assert_allclose(GX, np.repeat(G, task.s_c, axis=1) / math.sqrt(task.s_c), rtol=0, atol=1e-14)


def test_collapsed_gradient_matches_central_differences():
    task = fc.Task.random(4, 1, 3, 11, seed=1)
    rng = np.random.default_rng(2)
    V = rng.normal(size=(task.K * task.L, task.n_c))
    D = rng.normal(size=V.shape)
    _, _, G = fc.collapsed_risk(task, V, 0.0)
    h = 1e-5
    fp = fc.collapsed_risk(task, V + h * D, 0.0)[1]
    fm = fc.collapsed_risk(task, V - h * D, 0.0)[1]
    # truncation h²·f‴/6 ≲ 1e-10 (f‴ = O(L³|D|³) here), rounding ~ ε|f|/h ≈ 1e-11
    assert (fp - fm) / (2 * h) == pytest.approx(float(np.sum(G * D)), abs=1e-8)


def test_full_task_optimum_is_theorem_1():
    """K = n_c^L: min R = H(τ), ‖W‖² = τ, every word norm √(τ/n_w), concept cosines −1/(n_c − 1), λ₀ of Theorem 1."""
    task, lam = fc.Task.full(3, 2, 3), 0.01
    res = fc.collapsed_optimum(task, lam=lam)
    p = fc.predict_type1(n_c=3, n_w=task.n_w, L=3, K=task.K, lam=lam)
    assert res.certified and res.width == 2
    assert res.R == pytest.approx(p.risk, rel=1e-13) and res.tau == pytest.approx(p.tau, rel=1e-9)
    np.testing.assert_allclose(res.w_norms, p.c, rtol=1e-9)
    off = ~np.eye(3, dtype=bool)
    np.testing.assert_allclose(res.cosines[off], -0.5, atol=1e-9)
    assert res.lambda0 == pytest.approx(p.lambda_trivial, rel=1e-13)


def test_lemma_b_set_optimum_is_the_closed_form():
    lam = 0.02
    res = fc.collapsed_optimum(LEMMA_B_TASK, lam=lam)
    b = fc.lemma_b_scale(LEMMA_B_TASK, lam=lam)
    assert res.certified
    assert res.R == pytest.approx(b.risk, rel=1e-12) and res.tau == pytest.approx(b.t_star, rel=1e-8)
    np.testing.assert_allclose(res.w_norms, b.word_norm, rtol=1e-8)
    assert res.lambda0 == pytest.approx(b.lambda0, rel=1e-13)


@pytest.mark.parametrize(
    "task, lam",
    [
        (fc.Task.random(3, 2, 2, 5, seed=0), 0.02),
        (fc.Task.random(3, 2, 3, 9, seed=1), 0.01),
        (fc.Task.random(2, 3, 3, 5, seed=2), 0.05),
        (fc.Task.random(4, 2, 2, 7, seed=3), 0.02),
    ],
    ids=["3-2-2-K5", "3-2-3-K9", "2-3-3-K5", "4-2-2-K7"],
)
def test_partial_task_optimum_equals_the_enumerated_convex_optimum(task, lam):
    """The symmetry reduction loses nothing: same min R and word norms as the solver over all X ∈ R^(KL×n_w)."""
    res = fc.collapsed_optimum(task, lam=lam)
    full = optimum(task, lam=lam, symmetry=False)
    assert res.certified and full.certified
    assert res.R == pytest.approx(full.R, rel=1e-12)
    assert res.lower_bound <= full.R * (1 + 1e-13) and full.lower_bound <= res.R * (1 + 1e-13)
    np.testing.assert_allclose(res.w_norms, np.linalg.norm(full.W, axis=0), rtol=1e-6)
    assert res.width == full.width


def test_weights_are_balanced_factors_of_the_collapsed_point():
    task = fc.Task.random(3, 2, 3, 9, seed=5)
    res = fc.collapsed_optimum(task, lam=0.01)
    X = np.repeat(res.V, task.s_c, axis=1) / math.sqrt(task.s_c)
    np.testing.assert_allclose(U_hat(res.U, L=task.L).T @ res.W, X, atol=1e-12)
    nuc = float(np.sum(np.linalg.svd(res.V, compute_uv=False)))
    assert np.sum(res.W**2) == pytest.approx(nuc, rel=1e-12) and np.sum(res.U**2) == pytest.approx(nuc, rel=1e-12)
    assert res.tau == pytest.approx(nuc, rel=1e-12)
    # one norm per concept, shared by its s_c words; u norms from U's blocks
    np.testing.assert_array_equal(res.w_norms, np.repeat(res.concept_norms, task.s_c))
    np.testing.assert_allclose(res.u_norms, np.linalg.norm(res.U.reshape(task.K, task.L, -1), axis=2), rtol=1e-12)
    assert res.R == pytest.approx(res.ce + res.tau * 0.01, rel=1e-13)


def test_result_carries_the_gradient_of_its_certificate():
    """grad is ∇f_c at the returned V (what the certificate used, and what fctheory.risk.optimum expands to the
    word-level gradient norm without another evaluation)."""
    task, lam = fc.Task.random(3, 2, 3, 9, seed=3), 0.02
    res = fc.collapsed_optimum(task, lam=lam)
    _, _, G = fc.collapsed_risk(task, res.V, lam)
    np.testing.assert_allclose(res.grad, G, rtol=0, atol=1e-15)
    assert res.rho == pytest.approx(np.linalg.norm(G, 2) / lam, rel=1e-12)


def test_lambda0_is_where_the_origin_becomes_the_minimiser():
    """Claim H at X = 0: the origin is optimal iff ‖∇f(0)‖₂ ≤ λ."""
    task = fc.Task.random(3, 2, 3, 10, seed=6)
    lam0 = fc.collapsed_optimum(task, lam=0.01).lambda0
    above = fc.collapsed_optimum(task, lam=lam0 * (1 + 1e-9))
    below = fc.collapsed_optimum(task, lam=lam0 * (1 - 1e-3))
    assert above.width == 0 and above.R == pytest.approx(math.log(task.K), rel=1e-15) and above.certified
    assert below.width > 0 and below.R < math.log(task.K)


def test_bound_at_any_point_stays_below_the_minimum():
    """Weak duality: the Fenchel bound at a perturbed or random V never exceeds min R (certificate soundness)."""
    task, lam = fc.Task.random(3, 2, 3, 9, seed=7), 0.01
    best = optimum(task, lam=lam, symmetry=False).R
    res = fc.collapsed_optimum(task, lam=lam)
    rng = np.random.default_rng(0)
    for scale in (0.0, 0.1, 1.0, 5.0):
        V = res.V + scale * rng.normal(size=res.V.shape)
        g, f, G = fc.collapsed_risk(task, V, lam)
        lb, _, _, _ = col.fenchel_bound(f, G, V, lam, col.nuclear_norm(V))
        assert lb <= best * (1 + 1e-13)
        if scale > 0:
            assert g - lb > 1e-6


def test_planted_wrong_gradient_is_not_certified(monkeypatch):
    task, lam = fc.Task.random(3, 2, 3, 9, seed=1), 0.01
    real = col._Fc.__call__

    def wrong(self, V):
        f, G = real(self, V)
        return f, G * (1 + 1e-3)

    monkeypatch.setattr(col._Fc, "__call__", wrong)
    res = fc.collapsed_optimum(task, lam=lam, maxiter=200, max_seconds=30)
    assert not res.certified and res.rel_gap > 1e-7


def test_k_well_beyond_enumeration_is_certified_quickly():
    """K = 200 of 3^8 (3^8·2^8 sentences per class for the engine): certified from the collapsed problem alone."""
    task = fc.Task.random(3, 2, 8, 200, seed=0)
    res = fc.collapsed_optimum(task, lam=1e-3)
    assert res.certified and res.rel_gap <= 1e-10 and res.width == 2
    # Theorem 1's type-I point on this set (its true risk, not H(τ), which assumes all n_c^L latent variables)
    g1 = fc.collapsed_risk(task, col._type1_start(task, 1e-3, res.lambda0)[0], 1e-3)[0]
    assert res.R < g1 * (1 - 1e-3)


@pytest.mark.slow
def test_paper_scale_fig3_is_certified():
    """The paper's fig3 latent set (K = 1000 of 3^15): certified, concept norms within 0.2% of Theorem 1's."""
    from fctheory.trainer.presets import get_preset

    task = get_preset("fig3").task()
    res = fc.collapsed_optimum(task, lam=1e-3)
    p1 = fc.predict_type1(n_c=3, n_w=task.n_w, L=15, K=1000, lam=1e-3)
    assert res.certified
    np.testing.assert_allclose(res.concept_norms, p1.c, rtol=2e-3)


def test_non_uniform_mu_is_refused_naming_the_task():
    task = fc.Task.random(3, 2, 2, 5, mu="zipf", seed=0)
    with pytest.raises(fc.FCTheoryError, match="task.*uniform word frequencies"):
        fc.collapsed_optimum(task, lam=0.01)
    with pytest.raises(fc.FCTheoryError, match="task.*uniform word frequencies"):
        fc.collapsed_risk(task, np.zeros((10, 3)), 0.01)


def test_bad_v_is_refused_naming_it():
    task = fc.Task.random(3, 2, 2, 5, seed=0)
    with pytest.raises(fc.FCTheoryError, match="V"):
        fc.collapsed_risk(task, np.zeros((9, 3)), 0.01)
    with pytest.raises(fc.FCTheoryError, match="V"):
        fc.collapsed_risk(task, np.full((10, 3), 1e305), 0.01)


def test_memory_budget_refuses_a_huge_k():
    task = fc.Task.random(3, 2, 4, 60, seed=0)
    with fc.budget(max_bytes=10_000):
        with pytest.raises(fc.FCTheoryError, match="max_bytes"):
            fc.collapsed_optimum(task, lam=0.01)


@pytest.mark.parametrize("lam", [1e-12, 1e-9, 1e-6])
def test_tiny_lambda_is_certified_to_the_float_resolution_of_f(lam):
    """Where R is tiny against the scores (margins ~ log 1/λ), the gap reaches f's rounding floor, not 1e-10·R:
    certified there, and the message says so; the value still beats Theorem 1's type-I point on the set."""
    task = fc.Task.random(3, 2, 3, 9, seed=0)
    res = fc.collapsed_optimum(task, lam=lam)
    assert res.certified and res.width == 2 and np.isfinite(res.R) and 0 < res.R < 1e-3
    S = (res.V.reshape(task.K, -1) @ col._Fc(task).OH) / np.sqrt(task.s_c)  # the scores at the optimum
    assert res.gap <= col.FLOOR_ULPS * EPS * float(np.max(np.abs(S))) * (1 + 1e-9) or res.gap <= 1e-10 * res.R
    if res.rel_gap > 1e-10:
        assert "float64 resolution" in res.message
    g1 = fc.collapsed_risk(task, col._type1_start(task, lam, res.lambda0)[0], lam)[0]
    assert res.R <= g1


def test_the_dispatcher_answers_tiny_lambda_quickly_and_exactly():
    import time

    task = fc.Task.random(3, 2, 3, 9, seed=20)
    t0 = time.perf_counter()
    p = fc.predict(task, lam=1e-10)
    assert p.provenance == "exact (certified optimum)" and time.perf_counter() - t0 < 30


@settings(max_examples=25, deadline=None)
@given(
    n_c=st.integers(2, 4),
    s_c=st.integers(1, 3),
    L=st.integers(1, 3),
    k_frac=st.floats(0.0, 1.0),
    lam_exp=st.floats(-10.0, 0.5),
    seed=st.integers(0, 2**16),
)
def test_any_uniform_task_and_lambda_is_certified_and_consistent(n_c, s_c, L, k_frac, lam_exp, seed):
    """Over random latent sets (K from 2 to n_c^L) and λ from 1e-10 λ₀ to 3λ₀: certified, R between its lower
    bound and the origin's log K, the bound below g at random points (weak duality), width ≤ min(n_c, KL)."""
    K = 2 + int(k_frac * (n_c**L - 2))
    task = fc.Task.random(n_c, s_c, L, K, seed=seed)
    lam0 = fc.collapsed_optimum(task, lam=1.0).lambda0
    lam = float(np.clip(lam0 * 10.0**lam_exp, 1e-12, 1e12))
    res = fc.collapsed_optimum(task, lam=lam)
    assert res.certified and np.isfinite(res.R) and np.isfinite(res.lower_bound)
    assert res.lower_bound <= res.R <= math.log(K) * (1 + 1e-14)
    assert res.width <= min(n_c, K * L) and (res.width == 0) == (lam >= lam0 * (1 + 1e-12) or res.tau == 0)
    rng = np.random.default_rng(seed)
    V = rng.normal(size=res.V.shape)
    assert fc.collapsed_risk(task, V, lam)[0] >= res.lower_bound


# ----------------------------------------------------------------------------- network h*: collapsed_optimum_star
def _star_weights(task, res, d):
    """Network weights of a collapsed h*: word (α, β) gets w = φ_α in R^d (mean zero, norm √d, so the
    parameter-free LayerNorm with ε = 0 returns it unchanged), u_(k,ℓ) the same coordinates."""
    m = res.phi.shape[1]
    B = np.linalg.svd(np.eye(d) - 1.0 / d)[0][:, :m].T  # orthonormal rows in the mean-zero subspace (σ = 1 there)
    assert np.allclose(B @ np.ones(d), 0.0, atol=1e-13) and np.allclose(B @ B.T, np.eye(m), atol=1e-13)
    W = np.repeat(res.phi @ B, task.s_c, axis=0).T  # d × n_w
    U = (res.U @ B).reshape(task.K, task.L * d)
    return W, U


@pytest.mark.parametrize("mu", ["uniform", "zipf"])
def test_star_risk_is_the_enumerated_risk_10_of_its_weights(mu):
    """R and the cross-entropy of the result are (10) at its network weights, every sentence enumerated by the
    exact engine (which knows nothing of collapse); μ does not enter (collapsed features are deterministic)."""
    from fctheory.risk import true_risk

    task, lam, d = fc.Task.random(3, 2, 3, 10, mu=mu, seed=3), 0.02, 6
    res = fc.collapsed_optimum_star(task, lam=lam, d=d)
    W, U = _star_weights(task, res, d)
    assert true_risk(task, W, U, lam, layernorm=True) == pytest.approx(res.R, rel=1e-13)
    assert true_risk(task, W, U, 0.0, layernorm=True) == pytest.approx(res.ce, rel=1e-12)
    assert np.linalg.norm(res.phi, axis=1) == pytest.approx(math.sqrt(d), rel=1e-14)


@pytest.mark.parametrize(("n_c", "L", "d", "lam"), [(3, 3, 8, 0.01), (2, 4, 5, 0.1), (4, 2, 6, 1e-3), (3, 2, 3, 0.05)])
def test_star_full_task_is_theorem_3(n_c, L, d, lam):
    """K = n_c^L: Theorem 3's type II (c = τ*/√(KL), ‖U‖_F = τ*, R = H*(τ*), equiangular features). The solve
    stops at a relative gap of 1e-12 in R; R is quadratic at the optimum, so ‖U‖ agrees to about √(gap)."""
    task = fc.Task.full(n_c, 1, L)
    res = fc.collapsed_optimum_star(task, lam=lam, d=d, tol=1e-12)
    p = fc.predict_type2(n_c=n_c, L=L, K=task.K, d=d, lam=lam, n_w=task.n_w)
    assert res.certified
    assert res.R == pytest.approx(p.risk, rel=1e-12)
    assert res.tau == pytest.approx(p.tau_star, rel=1e-6)
    assert res.c == pytest.approx(p.c, rel=1e-6)
    assert np.std(res.u_norms) <= 1e-6 * res.c
    off = res.cosines[~np.eye(n_c, dtype=bool)]
    np.testing.assert_allclose(off, -1.0 / (n_c - 1), atol=1e-6)


def test_star_partial_task_beats_type_ii_and_its_bound_holds_everywhere():
    """On a partial set the best collapsed h* is below Theorem 3's type II (a feasible collapsed point), and
    the dual bound stays below R* of every collapsed network tried: random features and classifiers, and
    local minima of R* from random starts (weak duality, the certificate's soundness)."""
    from scipy.optimize import minimize

    task, lam, d = fc.Task.random(3, 1, 3, 9, seed=0), 0.01, 8
    res = fc.collapsed_optimum_star(task, lam=lam, d=d)
    p = fc.predict_type2(n_c=3, L=3, K=9, d=d, lam=lam, n_w=task.n_w)
    assert res.certified and res.R < p.risk - 1e-3
    assert res.lower_bound <= res.R
    fx = col._Fc(task, root=1.0)
    m, K, L = res.phi.shape[1], task.K, task.L
    rng = np.random.default_rng(1)

    def R_star(x):
        U, P = x[: K * L * m].reshape(K * L, m), x[K * L * m :].reshape(3, m)
        Phi = math.sqrt(d) * P / np.linalg.norm(P, axis=1, keepdims=True)
        return fx(U @ Phi.T)[0] + 0.5 * lam * float(np.sum(U * U))

    for _ in range(5):
        x = rng.normal(size=K * L * m + 3 * m)
        assert R_star(x) >= res.lower_bound
        loc = minimize(R_star, x, method="L-BFGS-B").fun
        assert loc >= res.lower_bound - 1e-12
        assert loc >= res.R - 1e-7  # convex in (V, G): no better local minimum


def _star_points(res, rng, scales=(1e-3, 1e-2, 1e-1, 1.0)):
    """(U, Φ) near the optimum (the dual bound is tight there, so an over-estimate shows) and far from it."""
    U0, P0 = res.U.reshape(-1, res.phi.shape[1]), res.phi
    d = float(np.sum(P0[0] ** 2))
    for sc in scales:
        for _ in range(10):
            P = P0 + sc * np.sqrt(d) * rng.normal(size=P0.shape)
            yield U0 + sc * rng.normal(size=U0.shape), np.sqrt(d) * P / np.linalg.norm(P, axis=1, keepdims=True)


def test_star_bound_is_sound_near_and_far_from_the_optimum():
    """Weak duality of the certificate: the bound taken at any collapsed point (U, Φ) is below the minimum, and
    it is tight at the optimum (a bound too high by a few % breaks the first near the optimum, one too low the
    second)."""
    task, lam, d = fc.Task.random(3, 1, 3, 9, seed=0), 0.01, 8
    res = fc.collapsed_optimum_star(task, lam=lam, d=d, tol=1e-12)
    fx = col._Fc(task, root=1.0)
    for U, Phi in _star_points(res, np.random.default_rng(2)):
        V = U @ Phi.T
        f, A = fx(V)
        assert col._star_bound(f, A, V, Phi, lam, d) <= res.R + 16 * EPS * res.R
    U, Phi = res.U.reshape(-1, res.phi.shape[1]), res.phi
    f, A = fx(U @ Phi.T)
    assert col._star_bound(f, A, U @ Phi.T, Phi, lam, d) >= res.R * (1 - 1e-12)


def test_star_dual_term_dominates_the_sdp_maximum_at_any_point():
    """The certificate's SDP step: d·Σy must be at least max ⟨AᵀA, G⟩ over G ⪰ 0, diag G = d (weak duality),
    here solved independently by cvxpy (Clarabel, relative accuracy ~1e-8) at random (A, V, Φ). The slackness
    guess y alone falls short by up to 60% at such points: the deficit correction is what makes it a bound."""
    cp = pytest.importorskip("cvxpy")
    rng = np.random.default_rng(0)
    d, lam = 8, 0.01
    for n in (2, 3, 4):
        for _ in range(4):
            A, V = rng.normal(size=(12, n)), rng.normal(size=(12, n))
            P = rng.normal(size=(n, n))
            Phi = math.sqrt(d) * P / np.linalg.norm(P, axis=1, keepdims=True)
            G = cp.Variable((n, n), PSD=True)
            sdp = cp.Problem(cp.Maximize(cp.trace(A.T @ A @ G)), [cp.diag(G) == d])
            sdp.solve(solver="CLARABEL")
            d_sum_y = -(col._star_bound(0.0, A, V, Phi, lam, d) + float(np.sum(A * V))) * 2 * lam
            assert d_sum_y >= sdp.value * (1 - 1e-6)


@pytest.mark.parametrize(("args", "lam", "d"), [((2, 2, 3, 3), 0.05, 3), ((3, 1, 3, 12), 0.01, 5)])
def test_star_equals_the_best_unconstrained_local_minimum_of_risk_10(args, lam, d):
    """Over ALL weights (no collapse imposed; the exact engine, every sentence enumerated, multi-start L-BFGS on
    (10)) nothing better than the best collapsed h* is found on these partial sets, and the best collapsed R*
    lies above the certified global lower bound of fctheory.risk.optimum(network="h*")."""
    task = fc.Task.random(*args, seed=0)
    o = optimum(task, lam=lam, network="h*", d=d)
    res = fc.collapsed_optimum_star(task, lam=lam, d=d)
    assert res.R == pytest.approx(o.R, rel=1e-10)
    assert o.lower_bound <= res.R


def test_star_stopped_early_reports_its_gap_honestly():
    """An early stop (maxiter) is certified exactly when its gap is within tol·R; after one iteration it is not,
    and its lower bound is the dual bound at the returned point, strictly below R."""
    task, lam, d = fc.Task.random(3, 1, 3, 12, seed=0), 0.01, 5
    fx = col._Fc(task, root=1.0)
    for maxiter in (1, 2, 3, 5, 8, 13, 21, 34):
        for tol in (1e-2, 1e-4, 1e-6, 1e-8):
            res = fc.collapsed_optimum_star(task, lam=lam, d=d, tol=tol, maxiter=maxiter)
            assert res.certified == (res.gap <= tol * res.R or res.gap <= 0.0), (maxiter, tol, res.rel_gap)
            U, Phi = res.U.reshape(-1, res.phi.shape[1]), res.phi
            f, A = fx(U @ Phi.T)
            assert res.lower_bound == col._star_bound(f, A, U @ Phi.T, Phi, lam, d)
    first = fc.collapsed_optimum_star(task, lam=lam, d=d, maxiter=1)
    assert not first.certified and first.lower_bound < first.R - 1e-6 and "raise maxiter" in first.message


def test_star_is_refused_for_bad_input_naming_the_parameter():
    task = fc.Task.random(3, 1, 2, 5, seed=0)
    with pytest.raises(fc.FCTheoryError, match="d=1"):
        fc.collapsed_optimum_star(task, lam=0.01, d=1)
    with pytest.raises(fc.FCTheoryError, match="d=2 .*n_c = 3"):
        fc.collapsed_optimum_star(task, lam=0.01, d=2)
    with pytest.raises(fc.FCTheoryError, match="lam="):
        fc.collapsed_optimum_star(task, lam=0.0, d=4)


def test_star_paper_fig4c_is_certified():
    """The paper's fig4c latent set (K = 1000 of 3^15, d = 100, λ_U = 1e-3): certified in seconds; its mean
    ‖u‖ lies below Theorem 3's K-only c (the trained network's 0.095945 too: docs/partial-tasks.md)."""
    from fctheory.trainer.presets import get_preset

    pre = get_preset("fig4c")
    task = pre.task()
    res = fc.collapsed_optimum_star(task, lam=pre.lam_U, d=pre.d)
    p3 = fc.predict_type2(n_c=3, L=15, K=1000, d=pre.d, lam=pre.lam_U, n_w=task.n_w)
    assert res.certified and res.rel_gap <= 1e-10
    assert 0.094 < res.c < 0.0959 < p3.c < 0.098 and res.R < p3.risk


@settings(max_examples=15, deadline=None)
@given(
    n_c=st.integers(2, 4),
    L=st.integers(1, 3),
    k_frac=st.floats(0.0, 1.0),
    lam_exp=st.floats(-5.0, 1.0),
    extra_d=st.integers(0, 5),
    seed=st.integers(0, 2**16),
)
def test_star_any_task_lambda_and_width_is_certified(n_c, L, k_frac, lam_exp, extra_d, seed):
    """Random latent sets, λ from 1e-5 to 10, d from n_c to n_c + 5: finite, R between its bound and log K
    (the origin's), not above Theorem 3's type II; certified wherever d > n_c (the features' Gram is free)."""
    K = 2 + int(k_frac * (n_c**L - 2))
    task = fc.Task.random(n_c, 1, L, K, seed=seed)
    lam, d = 10.0**lam_exp, n_c + extra_d
    res = fc.collapsed_optimum_star(task, lam=lam, d=d)
    assert np.isfinite(res.R) and np.isfinite(res.lower_bound)
    assert res.certified or d == n_c
    # at the optimum bound and R are float sums of the same terms: a few ulps apart either way
    assert res.lower_bound <= res.R + 16 * EPS * abs(res.R) and res.R <= math.log(K) * (1 + 1e-14)
    assert res.R <= fc.predict_type2(n_c=n_c, L=L, K=K, d=d, lam=lam, n_w=n_c).risk * (1 + 1e-12)
