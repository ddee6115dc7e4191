"""Count groups, the lift of the reduced coordinates and the group Grams (fctheory.ufm.groups)."""

import numpy as np
import pytest

from fctheory._nuclear import nuclear_norm
from fctheory.metrics import pairs
from fctheory.ufm.groups import GroupGram, count_groups, group_gram, lift, psd_sqrt

COUNTS = np.array([3, 7, 3, 0, 1, 7, 3, 0, 2])


def test_count_groups_sorts_the_counts_decreasing_with_the_absent_last():
    g = count_groups(COUNTS)
    np.testing.assert_array_equal(g.values, [7, 3, 2, 1, 0])
    np.testing.assert_array_equal(g.sizes, [2, 3, 1, 1, 2])
    np.testing.assert_array_equal(g.values[g.label], COUNTS)
    assert (g.K, g.N, g.G, g.Gp) == (9, 26, 5, 4)
    np.testing.assert_array_equal(g.present, COUNTS > 0)


def _random_reduced(g, rng):
    M = rng.standard_normal((g.G, g.Gp))
    beta = np.where(g.sizes[: g.Gp] > 1, rng.standard_normal(g.Gp), 0.0)
    return M, beta


def test_the_lift_is_invariant_and_its_nuclear_norm_splits_over_the_groups():
    g = count_groups(COUNTS)
    rng = np.random.default_rng(0)
    M, beta = _random_reduced(g, rng)
    X = lift(g, M, beta)  # K × K_p
    pres = np.flatnonzero(g.present)
    # ‖X‖_* = ‖M‖_* + Σ (m_b − 1)|β_b|
    m = g.sizes[: g.Gp]
    assert nuclear_norm(X) == pytest.approx(nuclear_norm(M) + float(np.sum((m - 1) * np.abs(beta))), rel=1e-12)
    # M is recovered from the group indicators; permuting the classes inside a group leaves X unchanged
    R = np.zeros((g.K, g.G))
    R[np.arange(g.K), g.label] = 1.0 / np.sqrt(g.sizes[g.label])
    np.testing.assert_allclose(R.T @ X @ R[pres][:, : g.Gp], M, atol=1e-12)
    perm = np.arange(g.K)
    perm[[0, 2]] = perm[[2, 0]]  # two classes of count 3
    cols = {k: i for i, k in enumerate(pres)}
    pc = np.array([cols[k] for k in perm[pres]])
    np.testing.assert_allclose(X[perm][:, pc], X, atol=1e-15)


def test_psd_sqrt_gives_the_square_roots_of_both_grams():
    A = np.random.default_rng(1).standard_normal((5, 3))
    L, R = psd_sqrt(A)
    np.testing.assert_allclose(L @ L, A @ A.T, atol=1e-12)
    np.testing.assert_allclose(R @ R, A.T @ A, atol=1e-12)


def test_group_gram_behaves_as_its_dense_matrix():
    g = count_groups(COUNTS)
    rng = np.random.default_rng(2)
    C = rng.standard_normal((g.G, g.G))
    C = C + C.T
    d = rng.standard_normal(g.G)
    G = GroupGram(g.label, C, d)
    D = C[np.ix_(g.label, g.label)] + np.diag(d[g.label])
    np.testing.assert_array_equal(np.asarray(G), D)
    assert G.norm() == pytest.approx(float(np.linalg.norm(D)), rel=1e-13)
    assert G.trace() == pytest.approx(float(np.trace(D)), rel=1e-13)
    assert G[3, 5] == D[3, 5] and G[4, 4] == D[4, 4]
    A = rng.standard_normal((g.K, 4))
    assert G.distance(A) == pytest.approx(float(np.linalg.norm(A @ A.T - D)), rel=1e-12)
    assert G.tolist() == D.tolist()


def test_group_gram_is_dense_below_large_k_and_compact_from_it():
    small = group_gram(np.zeros(3, int), np.ones((1, 1)), np.ones(1))
    assert isinstance(small, np.ndarray) and small.shape == (3, 3)
    big = group_gram(np.zeros(pairs.LARGE_K, int), np.ones((1, 1)), np.ones(1))
    assert isinstance(big, GroupGram) and big.shape == (pairs.LARGE_K, pairs.LARGE_K)
    # ‖11ᵀ + I‖_F² = K² + 2K + K... per entry: off-diagonal 1, diagonal 2
    K = pairs.LARGE_K
    assert big.norm() == pytest.approx(np.sqrt(K * (K - 1) + 4 * K), rel=1e-13)
