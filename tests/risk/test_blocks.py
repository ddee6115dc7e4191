"""fctheory.risk._blocks: the half-split building blocks against sums written out sentence by sentence, and the
array-API versions against the compiled kernels (the two paths of every evaluation: CuPy runs the first).

Tolerance 1e-13 relative: each entry is a sum of at most L scores or s^h terms of one sign, computed in another
order.
"""

import itertools

import numpy as np
import pytest

from fctheory.risk import _blocks as B
from fctheory.risk import _kernels

RTOL = 1e-13


def _setup(seed=0, K=4, L=3, n_c=3, s=2, n_groups=3, h=2):
    rng = np.random.default_rng(seed)
    G3 = rng.standard_normal((K, L, n_c * s))
    conc = rng.integers(0, n_c, size=(n_groups, h))
    return G3, conc, s, n_c


def _partial_by_hand(G3, conc, lo, s):
    """Y[g, j, a] = Σ_i G3[j, lo + i, conc[g, i]·s + β_i], a = Σ_i β_i s^(h−1−i) (the first position most
    significant)."""
    nG, h = conc.shape
    K = G3.shape[0]
    Y = np.zeros((nG, K, s**h))
    for g in range(nG):
        for a, betas in enumerate(itertools.product(range(s), repeat=h)):
            for i, beta in enumerate(betas):
                Y[g, :, a] += G3[:, lo + i, conc[g, i] * s + beta]
    return Y


@pytest.mark.parametrize("lo", [0, 1])
def test_partial_scores_are_the_sums_over_the_positions(lo):
    G3, conc, s, _ = _setup()
    np.testing.assert_allclose(B._partial_scores(np, G3, conc, lo, s), _partial_by_hand(G3, conc, lo, s), rtol=RTOL)


@pytest.mark.parametrize("use_numba", [False, True])
@pytest.mark.parametrize("class_major", [False, True])
def test_bases_are_the_row_shifted_exponentials(use_numba, class_major):
    G3, conc, s, _ = _setup(seed=1)
    Y = _partial_by_hand(G3, conc, 1, s)
    Bs, M = B._bases(np, G3, conc, 1, s, use_numba=use_numba, class_major=class_major)
    np.testing.assert_allclose(M, Y.max(axis=1), rtol=RTOL)
    want = np.exp(Y - Y.max(axis=1, keepdims=True))  # nG × K × s^h, the largest of each column 1
    if class_major:
        want = want.transpose(1, 0, 2).reshape(G3.shape[0], -1)
    np.testing.assert_allclose(Bs, want, rtol=RTOL)


def test_own_scores_are_each_class_s_own_partial_scores():
    G3, _, s, n_c = _setup(seed=2)
    Z = np.random.default_rng(3).integers(0, n_c, size=(G3.shape[0], 3))
    own = B._own_scores(np, G3, Z, 1, 3, s)
    for k in range(G3.shape[0]):
        np.testing.assert_allclose(own[k], _partial_by_hand(G3, Z[k : k + 1, 1:3], 1, s)[0, k], rtol=RTOL)


@pytest.mark.parametrize("use_numba", [False, True])
def test_scatter_adds_the_marginals_of_each_position(use_numba):
    G3, conc, s, n_c = _setup(seed=4)
    nG, h = conc.shape
    K = G3.shape[0]
    Q = np.random.default_rng(5).standard_normal((nG, K, s**h))
    got = np.zeros_like(G3)
    B._scatter(np, got, Q, conc, 1, s, n_c, use_numba=use_numba)
    want = np.zeros_like(G3)
    for g in range(nG):
        for a, betas in enumerate(itertools.product(range(s), repeat=h)):
            for i, beta in enumerate(betas):
                want[:, 1 + i, conc[g, i] * s + beta] += Q[g, :, a]
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=1e-15)


@pytest.mark.parametrize("grad", [False, True])
def test_the_array_api_group_work_equals_the_compiled_kernel(grad):
    """CE, the gradient's row sums and the flags of the entries below the threshold (recomputed in log space)."""
    rng = np.random.default_rng(6)
    n, sA, sB = 3, 4, 5
    S = rng.uniform(0.1, 3.0, size=(sA, n * sB))
    S[0, :3] = 1e-300  # below _THRESH: flagged, left to the log-space recomputation
    aA, aB = rng.uniform(0, 2, size=(n, sA)), rng.uniform(0, 2, size=(n, sB))
    pA, pB = rng.dirichlet(np.ones(sA)), rng.dirichlet(np.ones(sB))
    ce, rA, rB, mask, nflag = B._post_group_xp(np, S.copy(), aA, aB, pA, pB, grad)
    S2 = S.copy()
    ce2, rA2, rB2 = np.empty(n), np.empty((n, sA)), np.empty((n, sB))
    mask2, nflag2 = np.empty(S.shape, dtype=np.uint8), np.empty(n, dtype=np.int64)
    _kernels.post_group(S2, aA, aB, pA, pB, grad, B._THRESH, ce2, rA2, rB2, mask2, nflag2)
    np.testing.assert_allclose(ce, ce2, rtol=RTOL)
    assert np.array_equal(mask.astype(np.uint8), mask2) and np.array_equal(nflag, nflag2) and nflag[0] == 3
    # by hand: CE = Σ_(a,b) pA[a] pB[b] softplus(α_A[a] + α_B[b] + log S'[a, b]) over the unflagged entries
    for i in range(n):
        S3 = S[:, i * sB : (i + 1) * sB]
        t = aA[i][:, None] + aB[i][None, :] + np.log(np.where(S3 >= B._THRESH, S3, 1.0))
        sp = np.where(S3 >= B._THRESH, np.logaddexp(0.0, t), 0.0)
        assert ce[i] == pytest.approx(float(pA @ sp @ pB), rel=RTOL)
    if grad:
        np.testing.assert_allclose(rA, rA2, rtol=RTOL)
        np.testing.assert_allclose(rB, rB2, rtol=RTOL)
