"""The array-level building blocks of the half-split enumeration (:mod:`fctheory.risk.enumeration`): partial
scores of the half-sentences, their shifted exponentials (the bases), each class's own scores, the scatter of the
gradient's marginals back to the word scores, and the array-API versions of the per-group work and of its
log-space recomputation (what CuPy runs; the compiled ones are :mod:`fctheory.risk._kernels`).
"""

from __future__ import annotations

import numpy as np


# (flagged entry, class) pairs the log-space recomputation of the array-API path takes at least at once
# (_fallback_xp): smaller chunks cost more in calls than they save in memory
_FALLBACK_CHUNK = 4096
# the larger floor the plan takes when its reserve (≤ 4 MiB per worker) fits the budget beside the same tiles:
# 16× fewer calls on small tasks whose every entry needs the recomputation
_FALLBACK_CHUNK_BIG = 1 << 16

# S' below this is recomputed in log space: each of the ≤ K terms lost to underflow is
# < 2.3e-308, so S' ≥ 1e-280 keeps the relative error of S' below K·1e-28.
_THRESH = 1e-280


def _partial_scores(xp, G3, conc, lo, s):
    """Partial scores Y[g, j, a] (nG×K×s^h) of the groups with concepts ``conc`` (nG×h)."""
    nG, h = conc.shape
    K = G3.shape[0]
    Y = xp.zeros((nG, K, 1))
    ar = np.arange(s)
    for i in range(h):
        cols = xp.asarray(conc[:, i][:, None] * s + ar[None, :])  # nG × s word indices
        T = xp.transpose(G3[:, lo + i, :][:, cols], (1, 0, 2))  # nG × K × s
        # into a C-ordered buffer: broadcasting alone keeps the transposed layout of T, and the reshape
        # would then copy (a transient of twice the result, which the tile plan does not count)
        out = xp.empty((nG, K, Y.shape[2], s))
        xp.add(Y[:, :, :, None], T[:, :, None, :], out=out)
        Y = out.reshape(nG, K, -1)
    return Y


def _bases(xp, G3, conc, lo, s, use_numba=False, class_major=False):
    """Row maxima M (nG×s^h) and shifted exponentials B = exp(Y − M) (nG×K×s^h) of the groups.

    ``class_major``: B as the K × (nG·s^h) matrix Bᵀ[j, g·s^h + a] = B[g, j, a] instead (the right operand of the
    normaliser products), which the compiled kernel writes directly.
    """
    nG, h = conc.shape
    K = G3.shape[0]
    if use_numba:
        from ._kernels import bases, bases_serial  # noqa: PLC0415 - numba kernels: importing numba costs about a second, paid on first use

        if nG * K * s**h < 1 << 16:  # tiny: the parallel launch would cost more than the work
            bases = bases_serial
        B = np.empty((K, nG, s**h)) if class_major else np.empty((nG, K, s**h))
        M = np.empty((nG, s**h))
        view = B.transpose(1, 0, 2) if class_major else B
        bases(np.ascontiguousarray(G3), np.ascontiguousarray(conc, dtype=np.int64), lo, s, view, M)
        return (B.reshape(K, nG * s**h) if class_major else B), M
    Y = _partial_scores(xp, G3, conc, lo, s)
    M = Y.max(axis=1)
    Y -= M[:, None, :]
    B = xp.exp(Y, out=Y)
    if class_major:
        B = xp.ascontiguousarray(xp.transpose(B, (1, 0, 2)).reshape(K, nG * s**h))
    return B, M


def _own_scores(xp, G3, Z, lo, hi, s):
    """Y_own[k, a]: class k's own partial scores on its half-sentences (K×s^h)."""
    K = G3.shape[0]
    Y = xp.zeros((K, 1))
    ar = np.arange(s)
    rows = xp.arange(K)[:, None]
    for ell in range(lo, hi):
        cols = xp.asarray(Z[:, ell][:, None] * s + ar[None, :])  # K × s
        T = G3[:, ell, :][rows, cols]
        Y = (Y[:, :, None] + T[:, None, :]).reshape(K, -1)
    return Y


def _scatter(xp, gG3, Q, conc, lo, s, n_c, use_numba=False):
    """Add Σ_{a: β_i(a)=β} Q[g, j, a] to ∂R₀/∂G[j, lo+i, conc[g,i]·s+β] for every position i."""
    if use_numba:
        from ._kernels import scatter_marginals, scatter_marginals_serial  # noqa: PLC0415 - numba kernels: importing numba costs about a second, paid on first use

        kernel = scatter_marginals if Q.size >= 1 << 16 else scatter_marginals_serial  # as in _bases
        kernel(Q, np.ascontiguousarray(conc, dtype=np.int64), lo, s, gG3)
        return
    nG, K, _ = Q.shape
    h = conc.shape[1]
    Qr = Q.reshape((nG, K) + (s,) * h)
    for i in range(h):
        axes = tuple(2 + t for t in range(h) if t != i)
        Gam = Qr.sum(axis=axes) if axes else Qr  # nG × K × s
        onehot = xp.asarray((conc[:, i][None, :] == np.arange(n_c)[:, None]).astype(np.float64))
        add = (onehot @ Gam.reshape(nG, K * s)).reshape(n_c, K, s)
        gG3[:, lo + i, :] += xp.transpose(add, (1, 0, 2)).reshape(K, n_c * s)


def _post_group_xp(xp, S, alphaA, alphaB, pA, pB, grad):
    """Array-API version of :func:`._kernels.post_group` (what CuPy runs; jit=False on the host)."""
    n = alphaA.shape[0]
    sA, N = S.shape
    sB = N // n
    S3 = S.reshape(sA, n, sB)
    mask3 = ~(S3 >= _THRESH)
    Ssafe = xp.where(mask3, 1.0, S3)
    t = alphaA.T[:, :, None] + alphaB[None, :, :] + xp.log(Ssafe)
    sp = xp.where(mask3, 0.0, xp.logaddexp(0.0, t))
    D = pA[:, None, None] * pB[None, None, :]
    ce = (sp * D).sum(axis=(0, 2))
    rA = rB = None
    if grad:
        ds = xp.where(mask3, 0.0, D * xp.exp(t - sp))
        S3[...] = ds / Ssafe
        rA = ds.sum(axis=2).T.copy()
        rB = ds.sum(axis=0)
    return ce, rA, rB, mask3.reshape(sA, N), mask3.sum(axis=(0, 2))


def _fallback_xp(xp, mask, k_of, lb, YAg, YB, pA, pB, grad, ce, rA, rB, fbAg, fbB, sB, floor=_FALLBACK_CHUNK):
    """Array-API log-space recomputation of the flagged entries of one group chunk."""
    aa, cc = xp.nonzero(mask)
    K, sA = YAg.shape
    n = ce.shape[0]
    width = fbB.shape[1] if fbB is not None else 0
    # flagged entries per chunk: ≤ 64·K bytes of temporaries each (z, its exp, P and the bincount indices of
    # the gradient), in the room of the 48 bytes (32 without the gradient) per entry of S' that the temporaries
    # of _post_group_xp held; at least floor / K (the plan's CostEstimate.fallback_chunk), counted per worker
    chunk = max(1, floor // K, min((1 << 22) // K, 3 * int(mask.size) // (4 * K)))
    for c0 in range(0, int(aa.shape[0]), chunk):
        a = aa[c0 : c0 + chunk]
        c = cc[c0 : c0 + chunk]
        i = c // sB
        b = c % sB
        m = int(a.shape[0])
        rows = xp.arange(m)
        kk = k_of[i]
        z = YAg[:, a].T + YB[lb[i], :, b]  # m × K
        z = z - z[rows, kk][:, None]
        z[rows, kk] = -xp.inf
        mx = z.max(axis=1)
        t = mx + xp.log(xp.exp(z - mx[:, None]).sum(axis=1))
        sp = xp.logaddexp(0.0, t)
        D = pA[a] * pB[b]
        ce += xp.bincount(i, weights=D * sp, minlength=n)
        if grad:
            P = (D[:, None] * xp.exp(z - sp[:, None])).reshape(-1)
            j = xp.tile(xp.arange(K), m)
            fbAg += xp.bincount(j * sA + xp.repeat(a, K), weights=P, minlength=K * sA).reshape(K, sA)
            colB = xp.repeat(lb[i] * sB + b, K)
            fbB += xp.bincount(j * width + colB, weights=P, minlength=K * width).reshape(K, width)
            ds = D * xp.exp(t - sp)
            rA += xp.bincount(i * sA + a, weights=ds, minlength=n * sA).reshape(n, sA)
            rB += xp.bincount(i * sB + b, weights=ds, minlength=n * sB).reshape(n, sB)
