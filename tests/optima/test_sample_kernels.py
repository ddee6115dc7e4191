"""The numba kernels of the empirical objective against plain loops over sentences (the definitions)."""

from __future__ import annotations

import numpy as np
import pytest

from fctheory.optima._sample_kernels import scatter_rows, scores_softmax


def _table(seed=0, n_w=6, L=3, K=5, N=11):
    rng = np.random.default_rng(seed)
    Xt2 = rng.normal(size=(n_w * L, K))
    S = rng.integers(0, n_w, size=(N, L))
    y = rng.integers(0, K, size=N)
    return Xt2, S, y, L


def test_scores_softmax_is_the_cross_entropy_entropy_and_residual_of_each_sentence():
    """s_i = Σ_ℓ Xt2[S[i,ℓ]·L + ℓ], CE_i = logsumexp(s_i) − s_i(y_i), H_i = −Σ p log p, P_i = p_i − e_(y_i)."""
    Xt2, S, y, L = _table()
    ce, ent, P = scores_softmax(Xt2, S, y, L)
    for i in range(S.shape[0]):
        s = sum(Xt2[S[i, ell] * L + ell] for ell in range(L))
        p = np.exp(s - s.max()) / np.exp(s - s.max()).sum()
        assert ce[i] == pytest.approx(np.log(np.exp(s).sum()) - s[y[i]], rel=1e-13)
        assert ent[i] == pytest.approx(-np.sum(p * np.log(p)), rel=1e-13)
        e = np.zeros_like(p)
        e[y[i]] = 1.0
        np.testing.assert_allclose(P[i], p - e, rtol=1e-13, atol=1e-16)


def test_scores_softmax_far_in_the_tails_stays_finite():
    """Scores of ±800 (e^800 overflows): the shift by the maximum keeps CE exact, H ≥ 0 and no NaN."""
    Xt2, S, y, L = _table(seed=1)
    Xt2 = 800.0 * np.sign(Xt2)
    ce, ent, P = scores_softmax(Xt2, S, y, L)
    assert np.all(np.isfinite(ce)) and np.all(np.isfinite(ent)) and np.all(np.isfinite(P))
    assert np.all(ent >= -1e-12) and np.all(ce >= -1e-12)


def test_scatter_rows_sums_the_rows_gathered_from_each_table_row():
    """G[r] = scale · Σ_(q ∈ ptr[r]..ptr[r+1]) P[idx[q]], with empty rows zero."""
    rng = np.random.default_rng(2)
    P = rng.normal(size=(7, 4))
    ptr = np.array([0, 2, 2, 5, 9])
    idx = np.array([0, 3, 1, 1, 6, 2, 4, 5, 0])
    G = scatter_rows(P, ptr, idx, 0.25)
    for r in range(4):
        want = 0.25 * sum((P[idx[q]] for q in range(ptr[r], ptr[r + 1])), np.zeros(4))
        np.testing.assert_allclose(G[r], want, rtol=1e-14, atol=1e-16)
    assert np.all(G[1] == 0.0)
