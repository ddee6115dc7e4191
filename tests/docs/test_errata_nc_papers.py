"""Errata of the neural-collapse papers (docs/errata.md, "Neural collapse papers"): each test shows the
printed formula fails and the corrected one holds."""

import numpy as np
import pytest

from fctheory import ufm
from fctheory.metrics import cdnv, nc2
from fctheory.ufm import perturbation as P


def _etf_rows(K):
    E = np.eye(K) - 1.0 / K
    return E / np.linalg.norm(E, axis=1, keepdims=True)


# ----------------------------------------------------------------------------- Súkeník et al.
def test_sukenik_def34_E_K_printed_is_not_an_etf_gram():
    # printed E_K = I − 11ᵀ (zero diagonal): the CE optimum's Gram is not at distance 0 from c·E_K
    K = 4
    G = ufm.layernorm_ce(K=K, d=6, lam=0.1).W_gram
    printed = np.eye(K) - np.ones((K, K))
    c = max(0.0, np.sum(G * printed) / np.sum(printed * printed))
    assert np.linalg.norm(G - c * printed) / np.linalg.norm(G) > 0.5
    assert nc2(G, variant="etf", center=False) <= 1e-12  # corrected E_K = I − 11ᵀ/K


@pytest.mark.parametrize("K,d,lam", [(3, 6, 0.05), (4, 9, 0.3), (2, 4, 1.0)])
def test_sukenik_appA_mse_minimiser_printed_z_is_not_stationary(K, d, lam):
    # total objective along the optimal family: T(z) = (1 − z√d)²/2 + λK z²/2
    def T(z):
        return (1 - z * np.sqrt(d)) ** 2 / 2 + lam * K * z**2 / 2

    def dT(z):
        return -np.sqrt(d) * (1 - z * np.sqrt(d)) + lam * K * z

    res = ufm.layernorm_mse(K=K, d=d, lam=lam)
    printed = res.extras["printed_z"]  # 1/(√d(1+λK))
    z = res.extras["z"]  # √d/(d+λK)
    assert abs(dT(printed)) > 1e-3 and T(printed) > res.value + 1e-6
    assert abs(dT(z)) <= 1e-15 and T(z) == pytest.approx(res.value, rel=1e-14)


def test_sukenik_lemma42_mse_needs_d_at_least_K_plus_1():
    # printed hypothesis "d ≥ K": at d = K the value λK/(2(d+λK)) is not attained
    res = ufm.layernorm_mse(K=3, d=3, lam=0.05)
    assert not res.closed_form and res.value > 5 * res.extras["formula_value"]


@pytest.mark.parametrize("i", range(6))
def test_sukenik_positional_embedding_a_b_cannot_both_be_positive(i):
    # a + b = −1, a² + b² = 2^{2(i+1)} − 1  ⇒  ab = 1 − 2^{2i+1} < 0
    r = np.sqrt(2.0 ** (2 * i + 3) - 3)
    a, b = (-1 + r) / 2, (-1 - r) / 2
    assert a + b == pytest.approx(-1.0) and a**2 + b**2 == pytest.approx(2.0 ** (2 * (i + 1)) - 1)
    assert a * b == pytest.approx(1 - 2.0 ** (2 * i + 1)) and a * b < 0


@pytest.mark.parametrize("d,N", [(2, 3), (5, 4), (16, 7)])
def test_sukenik_appC_two_layer_bound_needs_sqrt_Nd(d, N):
    # aligned rank-one weights on LN features: ‖W₂σ(W₁X)‖ = t²√(Nd) = ½(‖W₁‖²+‖W₂‖²)√(Nd)
    t = 1.3
    x = np.zeros(d)
    x[0], x[1] = np.sqrt(d / 2), -np.sqrt(d / 2)  # zero mean, norm √d
    X = np.tile(x[:, None], (1, N))
    u = np.zeros(d)
    u[0] = 1.0
    W1 = t * np.outer(u, x / np.sqrt(d))
    W2 = t * np.outer(u, u)
    lhs = np.linalg.norm(W2 @ np.maximum(W1 @ X, 0))
    s = np.sum(W1**2) + np.sum(W2**2)
    assert lhs == pytest.approx(0.5 * s * np.sqrt(N * d), rel=1e-13)  # corrected bound, attained
    assert lhs > np.sqrt(N / 4) * s  # printed bound violated for d > 1


# ----------------------------------------------------------------------------- Kothapalli's review
def test_review_eq27_printed_negative_curvature_direction_is_not_descent():
    # review notes §2.4: at the origin σ_max(∇_Z g) = 1/(K√n); K=4, n=5, (λ_W, λ_H) = (1e−4, 0.5)
    K, n, m = 4, 5, 6
    lw, lh = 1e-4, 0.5
    N = K * n
    y = np.repeat(np.arange(K), n)
    G = (np.full((K, N), 1.0 / K) - np.eye(K)[:, y]) / N  # ∇_Z g(0)
    U, s, Vt = np.linalg.svd(G)
    u, v, sig = U[:, 0], Vt[0], s[0]
    assert sig == pytest.approx(1 / (K * np.sqrt(n)), rel=1e-12)
    w = np.zeros(m)
    w[0] = 1.0

    def curvature(sA, sF):
        dW, dH = sA * np.outer(u, w), -sF * np.outer(w, v)
        f = lambda t: ufm.ce_objective(t * dW, t * dH, None, n_spl=n, lam_W=lw, lam_H=lh)[0]  # noqa: E731
        h = 1e-3
        return (f(h) + f(-h) - 2 * f(0.0)) / h**2

    q = (lw / lh) ** 0.25
    printed = curvature(q, q)
    corrected = curvature(1 / q, q)
    assert printed > 0  # not a descent direction
    assert corrected == pytest.approx(2 * (np.sqrt(lw * lh) - sig), rel=1e-4)
    assert corrected < 0


def test_review_section312_diagonal_of_AAt_over_n():
    # SNC: AAᵀ = √n P_K, f_{k,i} = a_k/√n, b = 1/K gives zero SE loss; diag((1/n)AAᵀ) = (1/√n)(1 − 1/K)
    K, n = 4, 9
    A = n**0.25 * np.sqrt((K - 1) / K) * _etf_rows(K)
    np.testing.assert_allclose(A @ A.T, np.sqrt(n) * (np.eye(K) - 1.0 / K), atol=1e-12)
    F = np.repeat(A.T / np.sqrt(n), n, axis=1)
    Y = np.repeat(np.eye(K), n, axis=1)
    assert np.linalg.norm(A @ F + 1.0 / K - Y) <= 1e-12
    diag = np.diag(A @ A.T / n)
    np.testing.assert_allclose(diag, (1 - 1 / K) / np.sqrt(n), rtol=1e-12)
    assert not np.allclose(diag, (1 - 1 / K) / n)


def test_review_eq30_invariance_needs_the_1_over_N():
    rng = np.random.default_rng(0)
    K, n, m = 3, 5, 4
    N = K * n
    F = rng.standard_normal((m, N))
    Ft = F - F.mean(axis=1, keepdims=True)
    Mt = Ft.reshape(m, K, n).mean(axis=2)  # centred class means, m×K
    Sig = Ft @ Ft.T / N
    rhs = Mt.T @ np.linalg.solve(Sig, Ft) / K
    D = rng.standard_normal((m, m))
    DF, DM = D @ Ft, D @ Mt
    printed = DM.T @ np.linalg.solve(DF @ DF.T, DF) / K
    corrected = DM.T @ np.linalg.solve(DF @ DF.T / N, DF) / K
    np.testing.assert_allclose(corrected, rhs, rtol=1e-10)
    np.testing.assert_allclose(printed * N, rhs, rtol=1e-10)  # off by the factor N


def test_review_cdnv_average_prefactor_doubles():
    # the printed 2/(s(s−1))·Σ_{i≠i′} over ordered pairs is twice the pair average
    K, m = 4, 5
    mus = 3.0 * _etf_rows(K) @ np.eye(K, m)
    offs = np.concatenate([np.eye(m), -np.eye(m)]) * 0.2
    H = np.concatenate([mu + offs for mu in mus])
    y = np.repeat(np.arange(K), 2 * m)
    V = cdnv(H, y, matrix=True)
    off = V[~np.eye(K, dtype=bool)]
    np.testing.assert_allclose(off, off[0], rtol=1e-12)  # symmetric configuration: all pairs equal
    printed = 2.0 / (K * (K - 1)) * off.sum()
    assert printed == pytest.approx(2 * off[0]) and cdnv(H, y) == pytest.approx(off[0], rel=1e-12)


def test_review_eq64_printed_matrix_has_the_wrong_shape():
    K, n = 3, 4
    N = K * n
    printed = np.kron(np.eye(K), np.ones((n, 1))) - np.ones((N, 1)) @ np.ones((1, K)) / K
    corrected = np.kron(np.eye(K), np.ones((1, n))) - np.ones((K, 1)) @ np.ones((1, N)) / K
    Y = np.repeat(np.eye(K), n, axis=1)
    assert printed.shape == (N, K) != Y.shape
    assert corrected.shape == Y.shape
    np.testing.assert_allclose(corrected, Y - 1.0 / K)  # centred labels: class means ∝ e_k − 1/K


# ----------------------------------------------------------------------------- perturbation paper
def test_perturbation_appD_residual_at_collapse_is_minus_cY():
    K, n, d, lw, lh = 3, 2, 5, 0.6, 0.5
    cm = P.collapsed_minimizer(K=K, n_spl=n, d=d, lam_W=lw, lam_H=lh, seed=0)
    Y = np.repeat(np.eye(K), n, axis=1)
    R = cm.W @ cm.H - Y
    np.testing.assert_allclose(R, -cm.c * Y, atol=1e-12)
    # the printed "−c I_K ⊗ 1_nᵀ ⊗ I_d" is (K·d)×(n·K·d)... not K×N
    assert np.kron(np.kron(np.eye(K), np.ones((1, n))), np.eye(d)).shape != R.shape


def test_perturbation_eq5_condition_beta_much_larger_than_max_1_lamH_is_not_enough():
    # λ_W tiny: √(λ_H/λ_W) = 10 while β = 20 ≫ max(1, λ_H) = 1; the Neumann map (5) is off by O(1)
    K, n, d, lw, lh, beta = 3, 2, 4, 1e-4, 1e-2, 20.0
    cm = P.collapsed_minimizer(K=K, n_spl=n, d=d, lam_W=lw, lam_H=lh, seed=1)
    ex = P.first_order_response(cm.W, cm.H, K=K, lam_W=lw, lam_H=lh, beta=beta).F_H
    ne = P.first_order_response(cm.W, cm.H, K=K, lam_W=lw, lam_H=lh, beta=beta, kind="neumann").F_H
    x = np.sqrt(lh / lw) / beta
    assert np.linalg.norm(ex - ne, 2) == pytest.approx(x**2 / (1 + x), rel=1e-8)
    assert np.linalg.norm(ex - ne, 2) > 0.1
