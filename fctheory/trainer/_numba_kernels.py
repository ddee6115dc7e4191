"""numba kernels: one whole SGD epoch (or one evaluation pass) per call, no Python per-step work.

The dense products (forward scores, back-propagated features, the U update) are BLAS gemm calls
(:mod:`._blas`); the gather of word embeddings, the softmax/cross-entropy, the scatter-add into
the embedding gradient and the LayerNorm are compiled loops. The arithmetic is the one of the
readable reference in :mod:`._reference` (same order in the scatter-add), so float64 runs agree
with it to rounding.

``params`` holds (lr, λ_W, λ_U, eps) in the working dtype so float32 runs stay in float32.
The embedding table is stored word-major, E = Wᵀ (n_w×d), so a word's embedding is a contiguous row.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .._blas import gemm


@nb.njit(cache=True)
def _layernorm_rows(E, eps, V, sig):
    """V[w] = φ(E[w]) = (E[w] − mean)/√(var + eps) (biased var); sig[w] = √(var + eps)."""
    n_w, d = E.shape
    for w in range(n_w):
        m = E[w, 0] * 0
        for j in range(d):
            m += E[w, j]
        m = m / d
        v = E[w, 0] * 0
        for j in range(d):
            c = E[w, j] - m
            V[w, j] = c
            v += c * c
        s = np.sqrt(v / d + eps)
        sig[w] = s
        for j in range(d):
            V[w, j] = V[w, j] / s


@nb.njit(cache=True)
def _gather(V, X, rows, b0, b, F):
    """F[i, ℓd:(ℓ+1)d] = V[X[rows[b0+i], ℓ]]: the concatenated (position-major) embeddings."""
    L = X.shape[1]
    d = V.shape[1]
    for i in range(b):
        r = rows[b0 + i]
        for ell in range(L):
            w = X[r, ell]
            off = ell * d
            for j in range(d):
                F[i, off + j] = V[w, j]


@nb.njit(cache=True)
def _scatter_add(dF, X, rows, b0, b, dV):
    """dV[X[rows[b0+i], ℓ]] += dF[i, ℓd:(ℓ+1)d]: the adjoint of :func:`_gather`."""
    L = X.shape[1]
    d = dV.shape[1]
    for i in range(b):
        r = rows[b0 + i]
        for ell in range(L):
            w = X[r, ell]
            off = ell * d
            for j in range(d):
                dV[w, j] += dF[i, off + j]


@nb.njit(cache=True)
def _softmax_xent(S, y, rows, b0, b, grad):
    """Summed cross-entropy and correct count of the scores S[:b].

    With ``grad`` the rows are overwritten by ∂(mean CE)/∂s = (softmax(s) − e_y)/b.
    Ties in the argmax go to the first class, like ``numpy.argmax``.
    """
    K = S.shape[1]
    loss = 0.0
    correct = 0
    for i in range(b):
        yi = y[rows[b0 + i]]
        m = S[i, 0]
        am = 0
        for k in range(1, K):
            if S[i, k] > m:
                m = S[i, k]
                am = k
        if am == yi:
            correct += 1
        z = S[i, 0] * 0
        for k in range(K):
            z += np.exp(S[i, k] - m)
        loss += np.log(z) - (S[i, yi] - m)
        if grad:
            for k in range(K):
                S[i, k] = np.exp(S[i, k] - m) / z
            S[i, yi] -= 1
            for k in range(K):
                S[i, k] = S[i, k] / b
    return loss, correct


@nb.njit(cache=True)
def train_epoch(E, U, X, y, perm, bsz, params, layernorm):
    """One epoch of minibatch SGD over the rows ``perm`` of (X, y), updating E and U in place.

    Per minibatch (b sentences): s = F Uᵀ; G = (softmax(s) − onehot(y))/b;
    ∂F = G U; U ← (1 − lr λ_U) U − lr GᵀF; ∂V = scatter-add of ∂F rows onto the words used;
    ∂E = ∂V (h) or the LayerNorm VJP of ∂V (h*); E ← E − lr (∂E + λ_W E).

    Returns (sum of the minibatch cross-entropies over samples, number of correct argmax).
    """
    n = perm.shape[0]
    n_w, d = E.shape
    L = X.shape[1]
    K = U.shape[0]
    lr = params[0]
    lam_W = params[1]
    lam_U = params[2]
    eps = params[3]
    one = params[0] * 0 + 1
    beta_U = one - lr * lam_U
    F = np.empty((bsz, L * d), E.dtype)
    S = np.empty((bsz, K), E.dtype)
    dF = np.empty((bsz, L * d), E.dtype)
    dV = np.zeros((n_w, d), E.dtype)
    if layernorm:
        V = np.empty((n_w, d), E.dtype)
        sig = np.empty(n_w, E.dtype)
    else:
        V = E
        sig = np.empty(1, E.dtype)
    loss_sum = 0.0
    correct = 0
    for b0 in range(0, n, bsz):
        b = min(bsz, n - b0)
        Fb = F[:b]
        Sb = S[:b]
        dFb = dF[:b]
        if layernorm:
            _layernorm_rows(E, eps, V, sig)
        _gather(V, X, perm, b0, b, Fb)
        gemm(False, True, one, Fb, U, 0 * one, Sb)
        ls, c = _softmax_xent(Sb, y, perm, b0, b, True)
        loss_sum += ls
        correct += c
        gemm(False, False, one, Sb, U, 0 * one, dFb)  # ∂F = G U, before U moves
        gemm(True, False, -lr, Sb, Fb, beta_U, U)  # U ← (1 − lr λ_U) U − lr GᵀF
        dV[:, :] = 0
        _scatter_add(dFb, X, perm, b0, b, dV)
        if layernorm:
            # VJP of φ (Lemma S): (g − mean(g) − φ·(φ·g)/d)/σ, row by row
            for w in range(n_w):
                gm = dV[w, 0] * 0
                yg = dV[w, 0] * 0
                for j in range(d):
                    gm += dV[w, j]
                    yg += V[w, j] * dV[w, j]
                gm = gm / d
                yg = yg / d
                for j in range(d):
                    dV[w, j] = (dV[w, j] - gm - V[w, j] * yg) / sig[w]
        for w in range(n_w):
            for j in range(d):
                E[w, j] = E[w, j] - lr * (dV[w, j] + lam_W * E[w, j])
    return loss_sum, correct


@nb.njit(cache=True)
def evaluate(E, U, X, y, bsz, params, layernorm):
    """Summed cross-entropy and number of correct argmax predictions on (X, y), in batches."""
    n = X.shape[0]
    n_w, d = E.shape
    L = X.shape[1]
    K = U.shape[0]
    eps = params[3]
    one = params[0] * 0 + 1
    rows = np.arange(n)
    F = np.empty((bsz, L * d), E.dtype)
    S = np.empty((bsz, K), E.dtype)
    if layernorm:
        V = np.empty((n_w, d), E.dtype)
        sig = np.empty(n_w, E.dtype)
        _layernorm_rows(E, eps, V, sig)
    else:
        V = E
    loss_sum = 0.0
    correct = 0
    for b0 in range(0, n, bsz):
        b = min(bsz, n - b0)
        Fb = F[:b]
        Sb = S[:b]
        _gather(V, X, rows, b0, b, Fb)
        gemm(False, True, one, Fb, U, 0 * one, Sb)
        ls, c = _softmax_xent(Sb, y, rows, b0, b, False)
        loss_sum += ls
        correct += c
    return loss_sum, correct


@nb.njit(parallel=True, cache=True)
def train_epochs(E, U, X, y, perms, bsz, params, layernorm, loss, correct):
    """:func:`train_epoch` of every run r (E[r], U[r], X[r], y[r], perms[r], params[r]) in parallel threads.

    Each run is the sequential kernel unchanged, so its result does not depend on the others; its summed
    cross-entropy and correct count go to ``loss[r]`` and ``correct[r]``.
    """
    for r in nb.prange(E.shape[0]):
        ls, c = train_epoch(E[r], U[r], X[r], y[r], perms[r], bsz, params[r], layernorm)
        loss[r] = ls
        correct[r] = c
