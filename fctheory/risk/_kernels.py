"""Numba kernels of the exact-risk engine (host backend).

They fuse the per-entry work that NumPy would do in many passes: turning a block of
normalizer matrices S' into cross-entropies, gradient weights ω and row/column sums in
one sweep (releasing the GIL, so the engine's worker threads run them in parallel), and the log-space
recomputation of flagged entries.
"""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = ["post_group", "fallback_class", "bases", "bases_serial", "scatter_marginals", "scatter_marginals_serial"]

# exp(x) for x < _EXP_SAFE cannot overflow even after multiplying by S' <= K
_EXP_SAFE = 300.0


@numba.njit(inline="always")
def _softplus(t):
    # log(1 + e^t) without overflow or loss of relative precision for t << 0
    if t > 0.0:
        return t + math.log1p(math.exp(-t))
    return math.log1p(math.exp(t))


@numba.njit(inline="always")
def _log1p(u, w):
    # log(1 + u) for u ≥ 0 with w = fl(1 + u): log(w) where u ≥ 1 (the rounding of w moves the result by at most
    # 2^-53/log 2 relative there, and log costs half of log1p), log1p(u) below, where it keeps the precision
    if u >= 1.0:
        return math.log(w)
    return math.log1p(u)


@numba.njit(cache=True, nogil=True)
def post_group(S, alphaA, alphaB, pA, pB, grad, thresh, ce, rA, rB, mask, nflag):
    """Cross-entropies and gradient weights of the n classes of one prefix group.

    S is sA × (n·sB): columns i·sB … (i+1)·sB − 1 hold S' of class i. For partial sentences
    (a, b), t = αA[i, a] + αB[i, b] + log S'[a, b] is log Σ_{j≠k} e^{y_j − y_k}; the CE is
    softplus(t) and the gradient weight ω = D σ(t)/S' is written over S' when ``grad``. Entries
    with S' < ``thresh`` (underflowed products) are flagged in ``mask`` for :func:`fallback_class`.
    """
    sA, N = S.shape
    n = alphaA.shape[0]
    sB = N // n
    eA = np.empty(sA)
    eB = np.empty(sB)
    for i in range(n):
        for a in range(sA):
            eA[a] = math.exp(alphaA[i, a]) if alphaA[i, a] < _EXP_SAFE else math.inf
        for b in range(sB):
            eB[b] = math.exp(alphaB[i, b]) if alphaB[i, b] < _EXP_SAFE else math.inf
            rB[i, b] = 0.0
        total = 0.0
        nf = 0
        off = i * sB
        for a in range(sA):
            row = 0.0
            ra = 0.0
            for b in range(sB):
                s = S[a, off + b]
                if not (s >= thresh):
                    mask[a, off + b] = 1
                    nf += 1
                    if grad:
                        S[a, off + b] = 0.0
                    continue
                mask[a, off + b] = 0
                e = eA[a] * eB[b]
                if not grad:  # risk only: the CE and nothing else
                    if e < 1e300:
                        u = s * e
                        row += pB[b] * _log1p(u, 1.0 + u)
                    else:
                        row += pB[b] * _softplus(alphaA[i, a] + alphaB[i, b] + math.log(s))
                    continue
                D = pA[a] * pB[b]
                if e < 1e300:
                    u = s * e  # = Σ_{j≠k} e^{y_j − y_k}
                    w1 = 1.0 + u
                    c = _log1p(u, w1)
                    inv = D / w1
                    ds = u * inv  # D σ(t)
                    w = e * inv  # D σ(t)/S'
                else:
                    t = alphaA[i, a] + alphaB[i, b] + math.log(s)
                    c = _softplus(t)
                    ds = D * math.exp(t - c)
                    w = ds / s
                row += pB[b] * c
                if grad:
                    S[a, off + b] = w
                    ra += ds
                    rB[i, b] += ds
            total += pA[a] * row
            rA[i, a] = ra
        ce[i] = total
        nflag[i] = nf


@numba.njit(cache=True, nogil=True)
def fallback_class(k, YA, YB, pA, pB, mask, grad, fbA, fbB, rA, rB):
    """Log-space recomputation of the flagged entries of one class k.

    YA (K×sA) and YB (K×sB) are the partial scores of the class's two halves. Adds the
    exact CE of the flagged sentences (returned), and for the gradient D·p_j (j ≠ k) to
    fbA[:, a], fbB[:, b] and D·σ(t) to rA[a], rB[b].
    """
    K, sA = YA.shape
    sB = YB.shape[1]
    z = np.empty(K)
    total = 0.0
    for a in range(sA):
        for b in range(sB):
            if mask[a, b] == 0:
                continue
            D = pA[a] * pB[b]
            yk = YA[k, a] + YB[k, b]
            mx = -math.inf
            for j in range(K):
                if j != k:
                    z[j] = (YA[j, a] + YB[j, b]) - yk
                    if z[j] > mx:
                        mx = z[j]
            ssum = 0.0
            for j in range(K):
                if j != k:
                    ssum += math.exp(z[j] - mx)
            t = mx + math.log(ssum)
            sp = _softplus(t)
            total += D * sp
            if grad:
                for j in range(K):
                    if j != k:
                        pj = D * math.exp(z[j] - sp)
                        fbA[j, a] += pj
                        fbB[j, b] += pj
                ds = D * math.exp(t - sp)
                rA[a] += ds
                rB[b] += ds
    return total


# the product form of the bases (_bases_group) is used where every column's shift between the half maxima and the
# joint maximum is at most this (e^20 < 2^29): then a subnormal intermediate moves an entry by at most 2^-1046
_SPLIT_SHIFT_MAX = 20.0


@numba.njit(inline="always")
def _prefix_sums(Gj, conc_g, lo, i0, nh, s, y):
    """y[a] = Σ_{i<nh} Gj[lo+i0+i, conc_g[i0+i]·s + β_i(a)] (a = Σ_i β_i s^{nh−1−i}), summed in position order."""
    y[0] = 0.0
    cur = 1
    for i in range(i0, i0 + nh):
        base = conc_g[i] * s
        # grow the prefix table in place, from the end (index c·s+β ≥ c)
        for c in range(cur - 1, -1, -1):
            v = y[c]
            for beta in range(s):
                y[c * s + beta] = v + Gj[lo + i, base + beta]
        cur *= s


@numba.njit(cache=True, nogil=True)
def _bases_group(G3, conc, lo, s, B, M, g):
    """Shifted exponentials B[g] = exp(Y[g] − M[g]) of group g's partial scores and their class maxima M[g].

    Y[g, j, a] = Σ_i G3[j, lo+i, conc[g, i]·s + β_i(a)] (a = Σ_i β_i s^{h−1−i}) is built in B[g] as a prefix table
    and M[g, a] = max_j Y[g, j, a] taken while each row is in cache. Then, with the h positions split into halves
    a = (a₁, a₂) of maxima m₁, m₂: exp(Y − M) = exp(Y₁ − m₁)·exp(Y₂ − m₂)·exp(m₁ + m₂ − M), K·(s^{h₁} + s^{h₂}) + s^h
    exponentials and two products per entry instead of an exponential per entry. Where some column's shift
    m₁ + m₂ − M exceeds ``_SPLIT_SHIFT_MAX`` (extreme weights), every entry is exponentiated instead.
    """
    h = conc.shape[1]
    K = G3.shape[0]
    sh = B.shape[2]
    m = M[g]
    cg = conc[g]
    for a in range(sh):
        m[a] = -math.inf
    for j in range(K):
        y = B[g, j]
        _prefix_sums(G3[j], cg, lo, 0, h, s, y)
        for a in range(sh):  # running max over classes while the row is in cache
            if y[a] > m[a]:
                m[a] = y[a]
    h1 = h // 2
    if h1 >= 1 and _bases_split(G3, cg, lo, s, h1, B[g], m):
        return
    for j in range(K):
        y = B[g, j]
        for a in range(sh):
            y[a] = math.exp(y[a] - m[a])


@numba.njit(cache=True, nogil=True)
def _bases_split(G3, cg, lo, s, h1, Bg, m):
    """The product form of :func:`_bases_group` into Bg (K × s^h); False (Bg untouched) where a shift is too large."""
    K, sh = Bg.shape
    h2 = cg.shape[0] - h1
    s2 = s**h2
    s1 = sh // s2
    E1 = np.empty((K, s1))
    E2 = np.empty((K, s2))
    for j in range(K):
        _prefix_sums(G3[j], cg, lo, 0, h1, s, E1[j])
        _prefix_sums(G3[j], cg, lo, h1, h2, s, E2[j])
    m1 = np.full(s1, -math.inf)
    m2 = np.full(s2, -math.inf)
    for j in range(K):
        for a in range(s1):
            m1[a] = max(m1[a], E1[j, a])
        for a in range(s2):
            m2[a] = max(m2[a], E2[j, a])
    c = np.empty(sh)
    for a1 in range(s1):
        for a2 in range(s2):
            d = (m1[a1] + m2[a2]) - m[a1 * s2 + a2]
            if not (d <= _SPLIT_SHIFT_MAX):
                return False
            c[a1 * s2 + a2] = math.exp(d)
    for j in range(K):
        for a in range(s1):
            E1[j, a] = math.exp(E1[j, a] - m1[a])
        for a in range(s2):
            E2[j, a] = math.exp(E2[j, a] - m2[a])
    for j in range(K):
        row = Bg[j]
        for a1 in range(s1):
            e1 = E1[j, a1]
            for a2 in range(s2):
                row[a1 * s2 + a2] = (e1 * E2[j, a2]) * c[a1 * s2 + a2]
    return True


@numba.njit(parallel=True, cache=True)
def bases(G3, conc, lo, s, B, M):
    """:func:`_bases_group` of every group (nG×K×s^h tables B, nG×s^h maxima M), parallel over groups."""
    for g in numba.prange(conc.shape[0]):
        _bases_group(G3, conc, lo, s, B, M, g)


# a serial twin for tiny calls, where waking numba's thread pool on a loaded machine costs more (~10 ms) than
# the work itself; a function of its own, so that numba's disk cache keeps the two compilations apart
@numba.njit(cache=True, nogil=True)
def bases_serial(G3, conc, lo, s, B, M):
    """:func:`_bases_group` of every group, in the calling thread."""
    for g in range(conc.shape[0]):
        _bases_group(G3, conc, lo, s, B, M, g)


@numba.njit(cache=True, nogil=True, fastmath={"reassoc"})
def _scatter_class(Q, conc, lo, s, gG3, j):
    """Add Σ_{a: β_i(a)=β} Q[g, j, a] to gG3[j, lo+i, conc[g, i]·s + β] for every group g and position i.

    Q is nG × K × s^h (a = Σ_i β_i s^{h−1−i}); the marginal of position i sums runs of s^{h−1−i} contiguous
    entries (``reassoc`` lets LLVM vectorize those sums: another order of the same additions). No temporary.
    """
    nG, _, sh = Q.shape
    h = conc.shape[1]
    for g in range(nG):
        q = Q[g, j]
        inner = sh
        for i in range(h):
            inner //= s  # run length s^{h−1−i}
            outer = sh // (inner * s)
            col0 = conc[g, i] * s
            for beta in range(s):
                acc = 0.0
                for o in range(outer):
                    base = (o * s + beta) * inner
                    for t in range(inner):
                        acc += q[base + t]
                gG3[j, lo + i, col0 + beta] += acc


@numba.njit(parallel=True, cache=True)
def scatter_marginals(Q, conc, lo, s, gG3):
    """:func:`_scatter_class` of every class j, parallel over the classes (each writes its own row of gG3)."""
    for j in numba.prange(Q.shape[1]):
        _scatter_class(Q, conc, lo, s, gG3, j)


@numba.njit(cache=True, nogil=True)
def scatter_marginals_serial(Q, conc, lo, s, gG3):
    """:func:`_scatter_class` of every class j, in the calling thread (tiny calls, as :func:`bases_serial`)."""
    for j in range(Q.shape[1]):
        _scatter_class(Q, conc, lo, s, gG3, j)
