"""The exact true risk against the paper's closed forms (Lemma K, Lemma R,
Theorem 2, Theorem D).

Tolerances: 1e-12 relative for identities between two exact float64 computations.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fctheory as fc
from fctheory import Task
from fctheory.configurations import type1_configuration, type2_configuration, type3_configuration
from fctheory.risk import evaluate_risk, expected_margins, true_risk_grad

FULL = [(2, 2, 2), (2, 3, 3), (3, 2, 2), (3, 3, 2), (2, 2, 4), (4, 2, 2), (3, 2, 3)]


def _mu(draw, s_c):
    kind = draw(st.sampled_from(["uniform", "zipf", "random"]))
    if kind != "random" or s_c == 1:
        return kind if s_c > 1 else "uniform"
    w = np.random.default_rng(draw(st.integers(0, 10**6))).dirichlet(np.ones(s_c))
    return w / w.sum()


@given(st.data())
def test_lemma_K_type1_risk_equals_H_of_nw_c2_for_any_mu(data):
    n_c, s_c, L = data.draw(st.sampled_from(FULL))
    task = Task.full(n_c, s_c, L, mu=_mu(data.draw, s_c))
    c = data.draw(st.floats(0.0, 3.0))
    lam = data.draw(st.floats(0.0, 0.1))
    d = data.draw(st.integers(n_c - 1, n_c + 2))
    W, U = type1_configuration(task, d=d, c=c, seed=data.draw(st.integers(0, 100)))
    R = evaluate_risk(task, W, U, lam).R
    H = fc.H(task.n_w * c * c, n_c=n_c, n_w=task.n_w, L=L, K=task.K, lam=lam)
    assert R == pytest.approx(H, rel=1e-12)


@given(st.data())
def test_lemma_R_type2_risk_equals_H_star_of_sqrtKL_c(data):
    n_c, s_c, L = data.draw(st.sampled_from(FULL))
    task = Task.full(n_c, s_c, L, mu=_mu(data.draw, s_c))
    c = data.draw(st.floats(0.0, 3.0))
    lam = data.draw(st.floats(0.0, 0.1))
    d = data.draw(st.integers(n_c, n_c + 3))
    rng = np.random.default_rng(data.draw(st.integers(0, 100)))
    # φ is invariant to positive column scalings and shifts: R* must not see them
    W, U = type2_configuration(
        task, d=d, c=c, seed=1, scale=rng.uniform(0.5, 2.0, task.n_w), shift=rng.normal(size=task.n_w)
    )
    R = evaluate_risk(task, W, U, lam, layernorm=True).R
    Hs = fc.H_star(np.sqrt(task.K * L) * c, n_c=n_c, L=L, K=task.K, d=d, lam=lam)
    assert R == pytest.approx(Hs, rel=1e-12)


def _rel_grad(task, W, U, lam):
    _, gW, gU = true_risk_grad(task, W, U, lam)
    gn = np.sqrt(np.sum(gW**2) + np.sum(gU**2))
    # scale of each of the two cancelling terms ∇R₀ and λ(W, U)
    return gn / (lam * np.sqrt(np.sum(W**2) + np.sum(U**2)))


@pytest.mark.parametrize(
    "n_c,s_c,L,lam", [(3, 3, 2, 0.02), (3, 3, 2, 0.1), (2, 4, 3, 0.02), (4, 3, 2, 0.01), (3, 4, 3, 0.005)]
)
def test_theorem_2_type3_point_from_solve_type3_is_critical(n_c, s_c, L, lam):
    task = Task.full(n_c, s_c, L, mu="zipf")
    sol = fc.solve_type3(mu=task.mu, n_c=n_c, L=L, lam=lam)
    W, U = type3_configuration(task, d=n_c + 1, c=sol.c, r=sol.r, seed=0)
    assert _rel_grad(task, W, U, lam) <= 1e-12
    # contrast: equal norms (a type-I-like point with the same ‖W‖) are not critical for Zipf μ
    r_eq = np.full(s_c, np.sqrt(np.mean(np.asarray(sol.r) ** 2)))
    W2, U2 = type3_configuration(task, d=n_c + 1, c=sol.c, r=r_eq, seed=0)
    assert _rel_grad(task, W2, U2, lam) > 1e-3


@settings(max_examples=10)
@given(st.data())
def test_theorem_2_critical_for_random_mu(data):
    n_c, s_c, L = data.draw(st.sampled_from([(2, 3, 2), (3, 2, 2), (2, 2, 3), (3, 3, 2)]))
    mu = np.sort(np.random.default_rng(data.draw(st.integers(0, 10**6))).dirichlet(np.ones(s_c)))[::-1]
    mu = mu / mu.sum()
    lam = fc.lambda_max_type3(mu=mu, n_c=n_c, L=L) * data.draw(st.floats(0.05, 0.9))
    task = Task.full(n_c, s_c, L, mu=mu)
    W, U = type3_configuration(task, d=n_c, lam=lam)
    assert _rel_grad(task, W, U, lam) <= 1e-12


def _g(task, x):
    """g(x) = log(1 + Σ_r |S_r| e^{θ_r x/K}) of (49), θ_r = κ r/L (Lemma B(iii))."""
    kappa = task.n_c / (task.n_c - 1)
    Sr = task.S_r_counts()
    r = np.arange(task.L + 1)
    return np.log1p(np.sum(Sr[1:] * np.exp(kappa * r[1:] / task.L * x / task.K)))


@given(st.data())
def test_theorem_D_R0_bounded_below_by_g_on_N(data):
    n_c, s_c, L = data.draw(st.sampled_from(FULL))
    task = Task.full(n_c, s_c, L, mu=_mu(data.draw, s_c))
    d = data.draw(st.integers(1, 4))
    rng = np.random.default_rng(data.draw(st.integers(0, 10**6)))
    scale = data.draw(st.sampled_from([0.1, 1.0]))
    W = scale * rng.standard_normal((d, task.n_w))
    U = scale * rng.standard_normal((task.K, L * d))
    U -= U.mean(axis=0)  # project onto N = {Σ_k Û_k = 0}
    R0 = evaluate_risk(task, W, U).R0
    bound = _g(task, -expected_margins(task, W, U).alignment)
    assert R0 > bound * (1 + 1e-12)  # random points are not equimargin: strict (51)


@given(st.data())
def test_theorem_D_equality_at_type1(data):
    n_c, s_c, L = data.draw(st.sampled_from(FULL))
    task = Task.full(n_c, s_c, L, mu=_mu(data.draw, s_c))
    c = data.draw(st.floats(0.01, 2.0))
    W, U = type1_configuration(task, d=n_c, c=c, seed=data.draw(st.integers(0, 100)))
    assert np.abs(U.reshape(task.K, -1).sum(axis=0)).max() < 1e-12 * max(1.0, c) * task.K  # in N
    R0 = evaluate_risk(task, W, U).R0
    assert R0 == pytest.approx(_g(task, -expected_margins(task, W, U).alignment), rel=1e-12)


@settings(max_examples=10)
@given(st.data())
def test_lemma_E_averaged_margin_is_theta_r_alignment_over_K(data):
    """(59): on N, 𝔐(r) = θ_r ⟨Û, WQᵀZ⟩/K; computed from the exact expected margins."""
    n_c, s_c, L = data.draw(st.sampled_from(FULL))
    task = Task.full(n_c, s_c, L, mu=_mu(data.draw, s_c))
    rng = np.random.default_rng(data.draw(st.integers(0, 10**6)))
    W = rng.standard_normal((3, task.n_w))
    U = rng.standard_normal((task.K, 3 * L))
    U -= U.mean(axis=0)
    em = expected_margins(task, W, U)
    theta = task.n_c / (task.n_c - 1) * np.arange(L + 1) / L
    np.testing.assert_allclose(
        em.by_distance[1:], theta[1:] * em.alignment / task.K, rtol=1e-10, atol=1e-12 * np.abs(em.scores).max()
    )
