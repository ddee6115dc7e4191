"""Equiangular frames (Definitions D and F), the task model and the conventions."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import fctheory as fc


@given(st.integers(2, 40), st.integers(0, 5), st.booleans(), st.one_of(st.none(), st.integers(0, 2**32 - 1)))
def test_definition_D_frame_has_exact_gram(n_c, extra, mean_zero, seed):
    d = n_c - 1 + int(mean_zero) + extra
    F = fc.equiangular_frame(n_c, d, mean_zero=mean_zero, seed=seed)
    assert F.shape == (d, n_c)
    np.testing.assert_allclose(F.T @ F, fc.equiangular_gram(n_c), rtol=0, atol=2e-15 * n_c)
    np.testing.assert_allclose(F.sum(axis=1), 0, atol=2e-15 * n_c)
    if mean_zero:
        np.testing.assert_allclose(F.sum(axis=0), 0, atol=4e-15 * n_c)


def test_frame_dimension_rules():
    with pytest.raises(fc.FCTheoryError, match="d >= n_c - 1"):
        fc.equiangular_frame(5, 3)
    with pytest.raises(fc.FCTheoryError, match="d >= n_c"):
        fc.equiangular_frame(5, 4, mean_zero=True)


def test_equiangular_gram_is_kappa_I_minus_ones():
    n = 4
    G = fc.equiangular_gram(n)
    assert np.allclose(np.diag(G), 1) and np.allclose(G[0, 1], -1 / 3)


def test_task_full_is_lexicographic_and_complete():
    t = fc.Task.full(3, 2, 3)
    assert t.K == 27 and t.is_full and t.n_w == 6
    assert t.Z[0].tolist() == [0, 0, 0] and t.Z[1].tolist() == [0, 0, 1] and t.Z[-1].tolist() == [2, 2, 2]


def test_task_random_distinct_and_seeded():
    a = fc.Task.random(3, 2, 6, 100, seed=5)
    b = fc.Task.random(3, 2, 6, 100, seed=5)
    assert np.array_equal(a.Z, b.Z) and len({tuple(r) for r in a.Z}) == 100
    big = fc.Task.random(10, 2, 40, 50, seed=1)  # n_c^L = 1e40 > 2^62
    assert big.K == 50 and len({tuple(r) for r in big.Z}) == 50


def test_task_mu_named_laws():
    t = fc.Task.full(2, 4, 1, mu="zipf")
    np.testing.assert_allclose(t.mu, np.array([1, 1 / 2, 1 / 3, 1 / 4]) / (25 / 12))


def test_word_index_convention_and_matrices():
    t = fc.Task.full(3, 4, 2, mu="zipf")
    assert t.word_index(2, 1) == 9
    assert t.word_concept[9] == 2 and t.word_rank[9] == 1
    np.testing.assert_allclose(t.P @ t.Q.T, np.eye(3), atol=1e-15)  # PQᵀ = I
    Z = t.Z_onehot
    np.testing.assert_allclose(Z @ Z.T, t.K * t.L / t.n_c * np.eye(3))  # Lemma B: ZZᵀ = (KL/n_c)I


def test_sample_is_class_major_and_respects_latents():
    t = fc.Task.full(2, 3, 4, mu=np.array([0.5, 0.3, 0.2]))
    X, y = t.sample(7, seed=np.random.default_rng(0))
    assert X.shape == (t.K * 7, 4) and np.array_equal(y, np.repeat(np.arange(t.K), 7))
    np.testing.assert_array_equal(X // t.s_c, t.Z[y])
    X2, _ = t.sample(7, seed=0)  # an int seed is deterministic too
    X3, _ = t.sample(7, seed=0)
    np.testing.assert_array_equal(X2, X3)


def test_sample_word_frequencies_follow_mu():
    t = fc.Task.full(2, 3, 1, mu=np.array([0.6, 0.3, 0.1]))
    X, _ = t.sample(20000, seed=1)
    freq = np.bincount(X.ravel() % 3, minlength=3) / X.size
    np.testing.assert_allclose(freq, t.mu, atol=0.01)


def test_U_hat_layout():
    K, L, d = 4, 3, 2
    U = np.arange(K * L * d, dtype=float).reshape(K, L * d)
    Uh = fc.U_hat(U, L=L)
    for k in range(K):
        for ell in range(L):
            np.testing.assert_array_equal(Uh[:, k * L + ell], U[k, ell * d:(ell + 1) * d])
    np.testing.assert_array_equal(fc.U_from_hat(Uh, L=L), U)


def test_phi_is_layernorm_with_biased_std():
    rng = np.random.default_rng(0)
    W = rng.normal(size=(6, 5))
    V = fc.phi(W)
    np.testing.assert_allclose(V.mean(0), 0, atol=1e-15)
    np.testing.assert_allclose(np.linalg.norm(V, axis=0), np.sqrt(6), rtol=1e-14)
    np.testing.assert_allclose(fc.phi(3 * W + 2), V, atol=1e-13)  # scale/shift invariance
    Ve = fc.phi(W, eps=1e-5)
    ref = (W - W.mean(0)) / np.sqrt(W.var(0) + 1e-5)
    np.testing.assert_allclose(Ve, ref, rtol=1e-14)


def test_phi_vjp_matches_finite_differences():
    from fctheory.network import phi_jacobian_vjp

    rng = np.random.default_rng(1)
    W = rng.normal(size=(5, 3))
    G = rng.normal(size=(5, 3))
    g = phi_jacobian_vjp(W, G)
    h = 1e-6
    num = np.zeros_like(W)
    for i in range(5):
        for j in range(3):
            E = np.zeros_like(W)
            E[i, j] = h
            num[i, j] = (np.sum(G * fc.phi(W + E)) - np.sum(G * fc.phi(W - E))) / (2 * h)
    np.testing.assert_allclose(g, num, rtol=1e-7, atol=1e-9)
