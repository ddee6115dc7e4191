"""fctheory.network: Û's layout (eq. (6)), the LayerNorm φ and its vector-Jacobian product."""

import numpy as np

import fctheory as fc


def test_U_hat_layout():
    K, L, d = 4, 3, 2
    U = np.arange(K * L * d, dtype=float).reshape(K, L * d)
    Uh = fc.U_hat(U, L=L)
    for k in range(K):
        for ell in range(L):
            np.testing.assert_array_equal(Uh[:, k * L + ell], U[k, ell * d : (ell + 1) * d])
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
