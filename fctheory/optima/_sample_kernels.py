"""numba kernels of the empirical objective f̂ (:mod:`fctheory.optima.empirical`): the gather of the scores with
the softmax, and the scatter of the gradient, each one pass over the N·L (sentence, position) slots.

The score table is Xt2 (n_w·L × K), row w·L + ℓ holding X[(j, ℓ), w] for every class j (a permutation of
X = ÛᵀW ∈ R^(KL×n_w)), so sentence i's K scores are the sum of the L contiguous rows S[i, ℓ]·L + ℓ.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

__all__ = ["scores_softmax", "scatter_rows"]


@nb.njit(cache=True, parallel=True)
def scores_softmax(Xt2, S, y, L):  # pragma: no cover - compiled; tested through the numpy path's equality
    """Per sentence i: its scores s_i(j) = Σ_ℓ Xt2[S[i, ℓ]·L + ℓ, j], CE_i = log Σ_j e^(s_i(j)) − s_i(y_i), the
    entropy H_i of the softmax p_i and P[i] = p_i − e_(y_i). Returns (CE, H, P)."""
    N = S.shape[0]
    K = Xt2.shape[1]
    P = np.empty((N, K))
    ce = np.empty(N)
    ent = np.empty(N)
    for i in nb.prange(N):
        row = P[i]
        r0 = S[i, 0] * L
        for j in range(K):
            row[j] = Xt2[r0, j]
        for ell in range(1, L):
            rr = S[i, ell] * L + ell
            for j in range(K):
                row[j] += Xt2[rr, j]
        m = row[0]
        for j in range(1, K):
            if row[j] > m:
                m = row[j]
        dy = row[y[i]] - m
        z = 0.0
        zs = 0.0
        for j in range(K):
            d = row[j] - m
            e = math.exp(d)
            z += e
            zs += e * d
            row[j] = e
        lz = math.log(z)
        # H = log z − Σ_j p_j (s_j − m): no logarithm of a tiny p_j
        ce[i] = lz - dy
        ent[i] = lz - zs / z
        for j in range(K):
            row[j] = row[j] / z
        row[y[i]] -= 1.0
    return ce, ent, P


@nb.njit(cache=True, parallel=True)
def scatter_rows(P, ptr, idx, scale):  # pragma: no cover - compiled; tested through the numpy path's equality
    """G[r] = scale·Σ_(q ∈ ptr[r]..ptr[r+1]) P[idx[q]]: the rows of P summed into the rows of the score table
    they were gathered from (the CSR form of the transposed gather); one writer per output row."""
    R = ptr.shape[0] - 1
    K = P.shape[1]
    G = np.zeros((R, K))
    for r in nb.prange(R):
        g = G[r]
        for q in range(ptr[r], ptr[r + 1]):
            p = P[idx[q]]
            for j in range(K):
                g[j] += p[j]
        for j in range(K):
            g[j] *= scale
    return G
