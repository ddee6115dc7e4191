"""numba kernels of the neural-collapse statistics: the metrics of one-pass moments and the UFM distances' norms.

:func:`fctheory.metrics.class_statistics_from_moments` followed by :func:`fctheory.metrics.nc_summary` is the
reference: written once against the array namespace (NumPy, CuPy, PyTorch), a hundred small array calls for
K×d and d×d inputs. A training monitor on the CPU ends every epoch with exactly that computation on host
moments, where the calls' overhead is most of the cost; :func:`statistics_and_summary` runs the same steps, in
the same order and with the same exact power-of-two rescalings, in one call (NC1's singular vectors by
one-sided Jacobi for small K, as accurate as LAPACK's SVD). It covers the ordinary range of scales (every
rescaling exponent within ±``MAX_EXPONENT``, finite W) and reports anything else to the caller, which then
takes the reference path (:func:`fctheory.metrics.nc_summary_from_moments`); the two agree to the rounding of
their float64 sums (tested to 1e-12 relative). :func:`ufm_norms` does the same for the norms behind
:func:`fctheory.nc_diagnosis.ufm_distances`.

Imported on first use (importing numba costs about a second, which ``import fctheory`` never pays).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

_NB = dict(cache=True, nogil=True, fastmath=False, error_model="numpy")
_SUMS = dict(_NB, fastmath={"reassoc", "contract"})  # dot products summed in any order (vectorised)

#: the kernel's range: rescaling exponents e with |e| ≤ this (scales 2^±200: no product can overflow or
#: underflow into subnormals at unit scale); other inputs are left to the reference path
MAX_EXPONENT = 200
_EPS = float(np.finfo(np.float64).eps)

#: the order of the values in ``out`` (nc_summary's keys; the last five need W)
KEYS = (
    "nc1",
    "nc1_trace_ratio",
    "cdnv",
    "nc2",
    "equinorm_means",
    "equiangularity_means",
    "mean_cos_means",
    "mean_norm_means",
    "nc2_W",
    "equinorm_W",
    "mean_cos_W",
    "W_norm_sq",
    "nc3",
)


@njit(**_NB)
def _exponent(a):
    """e with a·2^-e in [0.5, 1) for a = max|A| (0 for a = 0 or non-finite a), as pow2_exponent."""
    if a > 0.0 and a < np.inf:
        return math.frexp(a)[1]
    return 0


@njit(**_NB)
def _maxabs(A):
    m = 0.0
    for x in A.ravel():
        if abs(x) > m or x != x:
            m = abs(x)
    return m


@njit(**_NB)
def _unit_rows(M, out):
    """out = M·2^-e with e the exponent of max|M|; returns e."""
    e = _exponent(_maxabs(M))
    f = 2.0**-e
    for i in range(M.shape[0]):
        for j in range(M.shape[1]):
            out[i, j] = M[i, j] * f
    return e


@njit(**_NB)
def _centred_unit(M, out):
    """The rows of M (at unit scale) minus their mean, the first row subtracted first, rescaled: e (as
    fctheory.metrics.simplex._centred_unit with M already at unit scale)."""
    K, d = M.shape
    M0 = np.empty((K, d))
    for i in range(K):
        for j in range(d):
            M0[i, j] = M[i, j] - M[0, j]
    mean = np.zeros(d)
    for i in range(K):
        for j in range(d):
            mean[j] += M0[i, j]
    for j in range(d):
        mean[j] /= K
    for i in range(K):
        for j in range(d):
            M0[i, j] -= mean[j]
    return _unit_rows(M0, out)


@njit(**_NB)
def _row_norms(M):
    K, d = M.shape
    nr = np.empty(K)
    for i in range(K):
        s = 0.0
        for j in range(d):
            s += M[i, j] * M[i, j]
        nr[i] = math.sqrt(s)
    return nr


@njit(**_NB)
def _gram(M):
    """M Mᵀ from the rows' dot products (loops, not BLAS: K × K for small K, and a much smaller compiled kernel)."""
    K = M.shape[0]
    G = np.empty((K, K))
    for i in range(K):
        for j in range(i, K):
            G[i, j] = G[j, i] = _dot(M[i], M[j])
    return G


@njit(**_NB)
def _tn(A, B):
    """Aᵀ B (A: n × p, B: n × q) as n rank-one updates of contiguous rows (vectorised without reassociation)."""
    n, p = A.shape
    q = B.shape[1]
    P = np.zeros((p, q))
    for k in range(n):
        b = B[k]
        for j in range(p):
            a = A[k, j]
            row = P[j]
            for l in range(q):
                row[l] += a * b[l]
    return P


@njit(**_NB)
def _nearest_etf(G):
    """min_{c ≥ 0} ‖G − c·E_K‖_F/‖G‖_F, E_K = I − 11ᵀ/K (NaN for G = 0)."""
    K = G.shape[0]
    nG2 = 0.0
    GE = 0.0
    EE = 0.0
    for i in range(K):
        for j in range(K):
            e = (1.0 if i == j else 0.0) - 1.0 / K
            nG2 += G[i, j] * G[i, j]
            GE += G[i, j] * e
            EE += e * e
    nG = math.sqrt(nG2)
    if nG == 0.0:
        return np.nan
    c = max(0.0, GE / EE)
    r = 0.0
    for i in range(K):
        for j in range(K):
            x = G[i, j] - c * ((1.0 if i == j else 0.0) - 1.0 / K)
            r += x * x
    return math.sqrt(r) / nG


@njit(**_NB)
def _cosines(M, nr):
    """The cosine matrix of the rows of M with norms nr; an empty matrix when a row is zero."""
    K = M.shape[0]
    for i in range(K):
        if nr[i] == 0.0:
            return np.empty((0, 0))
    U = np.empty_like(M)
    for i in range(K):
        for j in range(M.shape[1]):
            U[i, j] = M[i, j] / nr[i]
    return _gram(U)


@njit(**_NB)
def _off_mean(C, shift, absolute):
    """The mean over i ≠ j of C_ij + shift (of its absolute value with ``absolute``); NaN for an empty C."""
    K = C.shape[0]
    if K == 0:
        return np.nan
    s = 0.0
    for i in range(K):
        for j in range(K):
            if i != j:
                s += abs(C[i, j] + shift) if absolute else C[i, j]
    return s / (K * (K - 1))


@njit(**_NB)
def _norms_cv(nr):
    """(coefficient of variation, mean) of the norms; NaN, 0 when every norm is 0."""
    K = nr.shape[0]
    mean = nr.sum() / K
    if mean == 0.0:
        return np.nan, 0.0
    s = 0.0
    for i in range(K):
        s += (nr[i] - mean) * (nr[i] - mean)
    return math.sqrt(s / K) / mean, mean


@njit(**_NB)
def _moments_exponent(counts, sums, scatter, sq, shift):
    """The rescaling exponent e of class_statistics_from_moments (first moments by 2^-e, second by 2^-2e), or
    a value beyond MAX_EXPONENT where the reference path must decide (non-finite moments, an empty class)."""
    a, b, c, q = _maxabs(sums), _maxabs(shift), _maxabs(scatter), _maxabs(sq)
    if not (a < np.inf and b < np.inf and c < np.inf and q < np.inf) or counts.min() <= 0:
        return 2 * MAX_EXPONENT  # refused by the reference path, with the reason
    return max(_exponent(a), _exponent(b), -(-_exponent(c) // 2), -(-_exponent(q) // 2))


@njit(**_NB)
def _within(scatter, upper, s, m, f2, N, sigma_W):
    """Σ_W·2^-2e = 0.5·(A + Aᵀ)/N with A = S·2^-2e − mᵀs (the scatter's upper triangle alone with ``upper``)."""
    d = s.shape[1]
    P = _tn(m, s)
    for j in range(d):
        for l in range(j, d):
            sjl = scatter[j, l] * f2
            slj = sjl if upper else scatter[l, j] * f2
            # the sum of A_jl and A_lj is the same in either order: Σ_W comes out exactly symmetric
            w = 0.5 * ((sjl - P[j, l]) + (slj - P[l, j])) / N
            sigma_W[j, l] = w
            sigma_W[l, j] = w


@njit(**_NB)
def _scale1(v, f):
    for i in range(v.shape[0]):
        v[i] *= f


@njit(**_NB)
def _scale2(A, f):
    for i in range(A.shape[0]):
        _scale1(A[i], f)


@njit(**_NB)
def statistics(counts, sums, scatter, sq, shift, upper, means, mu_G, sigma_W, sigma_B, class_var):
    """The class statistics of the moments (as class_statistics_from_moments, global_mean "class_means"),
    written into the output arrays; False (nothing usable written) outside the kernel's range."""
    K, d = sums.shape
    e = _moments_exponent(counts, sums, scatter, sq, shift)
    if abs(e) > MAX_EXPONENT:
        return False
    f, f2 = 2.0**-e, 2.0 ** (-2 * e)
    s = sums * f  # the moments of the features·2^-e (exact)
    m = np.empty((K, d))
    for k in range(K):
        for j in range(d):
            m[k, j] = s[k, j] / counts[k]
    _within(scatter, upper, s, m, f2, counts.sum(), sigma_W)
    for k in range(K):
        t = 0.0
        for j in range(d):
            t += s[k, j] * m[k, j]
        # a class of one sample has no spread: exactly 0 (q_k − ‖s_k‖² rounds to ~eps·q_k otherwise)
        class_var[k] = 0.0 if counts[k] == 1 else max(sq[k] * f2 - t, 0.0) / counts[k]
        for j in range(d):
            means[k, j] = shift[k, j] * f + m[k, j]
    mu_G[:] = 0.0
    for k in range(K):  # the mean of the class means: their sum (in class order) over K
        for j in range(d):
            mu_G[j] += means[k, j]
    for j in range(d):
        mu_G[j] /= K
    Mc = means - mu_G
    B = _tn(Mc, Mc)
    for j in range(d):
        for l in range(d):
            sigma_B[j, l] = B[j, l] / K
    up, up2 = 2.0**e, 2.0 ** (2 * e)  # back to the features' scale (exact: no overflow at |e| ≤ 200)
    _scale1(mu_G, up)
    _scale2(means, up)
    _scale2(sigma_W, up2)
    _scale2(sigma_B, up2)
    _scale1(class_var, up2)
    return True


#: the kernel's classes: up to this many, NC1's singular vectors come from one-sided Jacobi on the K rows of M̃
#: (a few µs for K = 10; its cost grows as K²·d per sweep); more classes are left to the reference path, whose
#: LAPACK SVD is faster there (and would double the kernel's compilation time)
JACOBI_MAX_K = 32
_JACOBI_SWEEPS = 60


@njit(**_SUMS)
def _dot(a, b):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * b[i]
    return s


@njit(**_NB)
def _jacobi_rows(R):
    """Orthogonalise the rows of R in place by plane rotations (one-sided Jacobi, Hestenes): afterwards
    R = Σ Vᵀ up to the order of the rows, i.e. row i is σ_i v_iᵀ with v_i a right singular vector of the
    original R. Rotates a pair while |⟨r_p, r_q⟩| > eps·‖r_p‖‖r_q‖ (high relative accuracy of every σ_i).
    False when the sweeps do not converge (never seen; the caller then declines)."""
    K, d = R.shape
    # a row whose squared norm is below (eps·max(K, d))²·‖R‖_F² is rounding noise (the K − d rows beyond the rank
    # when d < K, the K-th row of centred means): its σ lies under NC1's cut-off, and rotating noise against
    # noise never converges, so such pairs are left alone
    F2 = 0.0
    for i in range(K):
        F2 += _dot(R[i], R[i])
    tiny = (_EPS * max(K, d)) ** 2 * F2
    for _ in range(_JACOBI_SWEEPS):
        rotated = False
        for p in range(K - 1):
            for q in range(p + 1, K):
                rp, rq = R[p], R[q]
                g = _dot(rp, rq)
                a, b = _dot(rp, rp), _dot(rq, rq)
                if g == 0.0 or min(a, b) <= tiny or abs(g) <= _EPS * math.sqrt(a) * math.sqrt(b):
                    continue
                rotated = True
                z = (b - a) / (2.0 * g)
                t = (1.0 if z >= 0 else -1.0) / (abs(z) + math.sqrt(1.0 + z * z))
                c = 1.0 / math.sqrt(1.0 + t * t)
                sn = c * t
                for i in range(R.shape[1]):
                    x, y = rp[i], rq[i]
                    rp[i] = c * x - sn * y
                    rq[i] = sn * x + c * y
        if not rotated:
            return True
    return False


@njit(**_NB)
def _singular_rows(Mc):
    """(ok, σ, V) of M̃ (K × d) by one-sided Jacobi: the min(K, d) largest singular values in decreasing order
    and the right singular vectors as the columns of V (d × min(K, d)); ok False if the sweeps did not converge."""
    K, d = Mc.shape
    R = Mc.copy()
    ok = _jacobi_rows(R)
    s = np.empty(K)
    for i in range(K):
        s[i] = math.sqrt(_dot(R[i], R[i]))
    order = np.arange(K)  # by decreasing σ, ties in row order (insertion sort: K ≤ JACOBI_MAX_K)
    for i in range(1, K):
        o = order[i]
        j = i
        while j > 0 and s[order[j - 1]] < s[o]:
            order[j] = order[j - 1]
            j -= 1
        order[j] = o
    r = min(K, d)
    V = np.empty((d, r))
    for c in range(r):
        i = order[c]
        for j in range(d):
            V[j, c] = R[i, j] / s[i] if s[i] > 0.0 else 0.0
    return ok, s[order[:r]], V


@njit(**_NB)
def _nc1(Mc, sigma_W, f2):
    """(ok, Papyan's NC1 Σ_i v_iᵀ (Σ_W·f2) v_i / s_i²) over the ≤ K−1 kept right singular vectors of M̃ (NaN
    when none is kept: coinciding means), as fctheory.metrics.variability._between_directions keeps them; ok False when
    the Jacobi sweeps did not converge."""
    K, d = Mc.shape
    ok, s, V = _singular_rows(Mc)
    if not ok:
        return False, np.nan  # the caller declines
    tol = 10.0 * s.max() * max(K, d) * _EPS
    r = 0
    while r < s.size and r < K - 1 and s[r] > tol:
        r += 1
    if r == 0:
        return True, np.nan
    Vr = np.ascontiguousarray(V[:, :r])
    SV = _tn(sigma_W, Vr)  # Σ_W V (Σ_W is symmetric): d²·r multiply-adds
    acc = 0.0
    for i in range(r):
        q = 0.0  # v_iᵀ (Σ_W·f2) v_i; ·f2 is exact (a power of two)
        for a in range(d):
            q += (SV[a, i] * f2) * Vr[a, i]
        acc += q / (s[i] * s[i])
    return True, acc


@njit(**_SUMS)
def _sqdist(a, b):
    """‖a − b‖² from the exact differences (no ‖a‖² + ‖b‖² − 2⟨a, b⟩ cancellation), summed in any order."""
    s = 0.0
    for j in range(a.shape[0]):
        x = a[j] - b[j]
        s += x * x
    return s


@njit(**_NB)
def _cdnv(Mc, class_var, f2):
    """Mean over k ≠ k' of (Var_k + Var_k')·f2/(2‖μ̃_k − μ̃_k'‖²); NaN when two means coincide."""
    K, d = Mc.shape
    acc = 0.0
    for i in range(K):
        for k in range(K):
            if i == k:
                continue
            d2 = _sqdist(Mc[i], Mc[k])
            if d2 == 0.0:
                return np.nan
            acc += (class_var[i] * f2 + class_var[k] * f2) / (2.0 * d2)
    return acc / (K * (K - 1))


@njit(**_NB)
def _classifier(W, Mc, out):
    """The classifier's entries of nc_summary (nc2_W … nc3) into out[8:13]; False outside the kernel's range."""
    K, d = W.shape
    if not _maxabs(W) < np.inf:
        return False  # refused by the reference path
    Wu = np.empty((K, d))
    eu = _unit_rows(W, Wu)
    if abs(eu) > MAX_EXPONENT:
        return False
    Wc = np.empty((K, d))
    _centred_unit(Wu, Wc)
    out[8] = _nearest_etf(_gram(Wc))
    out[9] = _norms_cv(_row_norms(Wu))[0]
    out[10] = _off_mean(_cosines(Wc, _row_norms(Wc)), 0.0, False)
    nW2 = nM2 = 0.0
    for k in range(K):
        nW2 += _dot(Wu[k], Wu[k])
        nM2 += _dot(Mc[k], Mc[k])
    out[11] = nW2 * 2.0 ** (2 * eu)
    nW, nM = math.sqrt(nW2), math.sqrt(nM2)
    if nW == 0.0 or nM == 0.0:
        out[12] = np.nan
    else:
        acc = 0.0
        for k in range(K):
            for j in range(d):
                x = Wu[k, j] / nW - Mc[k, j] / nM
                acc += x * x
        out[12] = math.sqrt(acc)
    return True


@njit(**_NB)
def summary(means, sigma_W, class_var, W, out):
    """nc_summary(st, W) into ``out`` (in the order of KEYS; W of shape (0, d): the first eight only).
    False (``out`` unusable) outside the kernel's range."""
    K, d = means.shape
    if K > JACOBI_MAX_K:
        return False  # NC1's singular vectors for many classes: LAPACK's SVD, on the reference path
    M = np.empty((K, d))
    e1 = _unit_rows(means, M)
    Mc = np.empty((K, d))
    e = e1 + _centred_unit(M, Mc)  # M̃·2^-e, the one centring of every metric
    if abs(e1) > MAX_EXPONENT or abs(e) > MAX_EXPONENT:
        return False
    f2 = 2.0 ** (-2 * e)
    ok, nc1 = _nc1(Mc, sigma_W, f2)
    out[0] = nc1
    if not ok:
        return False  # Jacobi did not converge (never seen)
    trB = 0.0
    for k in range(K):
        trB += _dot(Mc[k], Mc[k])
    trB /= K
    trW = 0.0
    for j in range(d):
        trW += sigma_W[j, j]
    out[1] = trW * f2 / trB if trB != 0.0 else np.nan
    out[2] = _cdnv(Mc, class_var, f2)
    out[3] = _nearest_etf(_gram(Mc))
    nr = _row_norms(Mc)
    out[4], mean = _norms_cv(nr)
    C = _cosines(Mc, nr)
    out[5] = _off_mean(C, 1.0 / (K - 1), True)
    out[6] = _off_mean(C, 0.0, False)
    out[7] = mean * 2.0**e if mean > 0.0 else np.nan
    return True if W.shape[0] == 0 else _classifier(W, Mc, out)


@njit(**_NB)
def statistics_and_summary(counts, sums, scatter, sq, shift, upper, W):
    """:func:`statistics` and :func:`summary` in one call (the outputs allocated here): ``(ok, means, mu_G,
    sigma_W, sigma_B, class_var, out)``; ``ok`` False where the reference path must decide."""
    K, d = sums.shape
    means, class_var = np.empty((K, d)), np.empty(K)
    mu_G, sigma_W, sigma_B = np.empty(d), np.empty((d, d)), np.empty((d, d))
    out = np.full(len(KEYS), np.nan)
    # more classes than the kernel takes: declined before any work (the reference path computes everything)
    ok = K <= JACOBI_MAX_K and statistics(
        counts, sums, scatter, sq, shift, upper, means, mu_G, sigma_W, sigma_B, class_var
    )
    ok = ok and summary(means, sigma_W, class_var, W, out)
    return ok, means, mu_G, sigma_W, sigma_B, class_var, out


# ----------------------------------------------------------------------------- the UFM distances' norms
_LO, _HI = 2.0**-200, 2.0**200


@njit(**_NB)
def _in_range(A):
    """Every entry finite with |a| ≤ 2^200, and the largest (when non-zero) ≥ 2^-200."""
    m = _maxabs(A)  # NaN or inf when an entry is not finite: then not ≤ 2^200
    return m <= _HI and (m == 0.0 or m >= _LO)


@njit(**_NB)
def _gram_minus_norms(A, G):
    """(‖AAᵀ − G‖_F, ‖G‖_F) for A (K × m) and G (K × K)."""
    K = A.shape[0]
    r = 0.0
    g = 0.0
    for i in range(K):
        for j in range(K):
            x = _dot(A[i], A[j]) - G[i, j]
            r += x * x
            g += G[i, j] * G[i, j]
    return math.sqrt(r), math.sqrt(g)


@njit(**_NB)
def ufm_norms(M, W, b, GM, GW, bstar, out):
    """Fill ``out`` with ‖MMᵀ − GM‖, ‖GM‖, ‖WWᵀ − GW‖, ‖GW‖, ‖W‖², ‖b − b*‖ (W or b of length 0: their
    entries are left alone); False (``out`` unusable) when an input is outside the kernel's range."""
    if not (_in_range(M) and _in_range(GM)):
        return False
    out[0], out[1] = _gram_minus_norms(M, GM)
    if W.shape[0]:
        if not (_in_range(W) and _in_range(GW)):
            return False
        out[2], out[3] = _gram_minus_norms(W, GW)
        s = 0.0
        for x in W.ravel():
            s += x * x
        out[4] = s
    if b.shape[0]:
        if not (_in_range(b) and _in_range(bstar)):
            return False
        s = 0.0
        for k in range(b.shape[0]):
            x = b[k] - bstar[k]
            s += x * x
        out[5] = math.sqrt(s)
    return True


# ----------------------------------------------------------------------------- the PyTorch monitor's epoch
# in this file, with the kernels it calls: numba's on-disk cache is invalidated per source file, so a kernel
# compiled into a caller of another file would outlive a change of its source there
@njit(**_NB)
def epoch_numbers(counts, sums, scatter, sq, shift, upper, W, b, GM, GW, bstar):
    """Every number of an epoch's row on the CPU in one call: ``(ok, means, mu_G, sigma_W, sigma_B, class_var,
    summary, norms, H_norm_sq)``.

    The statistics and NC metrics of the moments (:func:`statistics_and_summary`, the kernel of
    :func:`fctheory.metrics.nc_summary_from_moments`), the norms of the distances to the UFM optimum (GM, GW,
    b*: :func:`ufm_norms`, the kernel of
    :func:`fctheory.nc_diagnosis.ufm_distances`) and ‖H‖² = Σ_k n_k‖μ_k‖² + N·tr Σ_W
    (:attr:`fctheory.metrics.ClassStatistics.H_norm_sq`). ``ok`` False: outside the kernels' range, where the
    monitor takes the public functions. W, b empty: no classifier, no bias.
    """
    ok, means, mu_G, sigma_W, sigma_B, class_var, summary = statistics_and_summary(
        counts, sums, scatter, sq, shift, upper, W
    )
    norms = np.full(6, np.nan)
    ok = ok and ufm_norms(means, W, b, GM, GW, bstar, norms)
    return ok, means, mu_G, sigma_W, sigma_B, class_var, summary, norms, _h_norm_sq(counts, means, sigma_W)


@njit(**_NB)
def _h_norm_sq(counts, means, sigma_W):
    """Σ_k n_k‖μ_k‖² + N·tr Σ_W. A function of its own: written inline in epoch_numbers, these few loops made LLVM
    compile the whole call 2.6× slower (K = 100, d = 512: 37 ms instead of 14)."""
    K, d = means.shape
    h = 0.0
    for k in range(K):
        s = 0.0
        for j in range(d):
            s += means[k, j] * means[k, j]
        h += counts[k] * s
    t = 0.0
    for j in range(d):
        t += sigma_W[j, j]
    return h + counts.sum() * t


# ----------------------------------------------------------------------------- tiles of class pairs (large K)
#: the slots of :func:`pair_tile`'s accumulator ``acc``
PAIR_SLOTS = (
    "cdnv_sum",  # Σ_{i<j} V_ij
    "cdnv_dev",  # Σ_{i<j} (V_ij − v_shift)²
    "coincide",  # pairs at distance 0
    "recomputed",  # pairs whose distance was recomputed from the exact differences
    "cos_abs",  # Σ_{i<j} |c_ij + 1/(K−1)|
    "cos_sum",  # Σ_{i<j} c_ij
    "cos_dev",  # Σ_{i<j} (c_ij − c_shift)²
    "frame",  # Σ_{i,j} (α·G_ij − β·E_ij)² over the ordered pairs, diagonal included
    "gram_sq",  # Σ_{i,j} G_ij²
)


@njit(parallel=True, **_NB)
def pair_tile(G, i0, j0, symmetric, A, B, sqA, sqB, inv, var, want, par, acc):
    """Add one tile G = A[i0:i0+ti]·B[j0:j0+tj]ᵀ (from a BLAS product) of class pairs to ``acc`` (PAIR_SLOTS).

    ``symmetric`` (A is B): only the pairs j ≥ i of the tile are read, an off-diagonal one counting twice in
    the ordered sums; else (a cross product such as W·M̃ᵀ) every pair, once. ``want`` is a bit set: 1 the
    CDNV terms V_ij = (Var_i + Var_j)/(2‖a_i − a_j‖^(2p)), 2 the cosines c_ij = G_ij/(‖a_i‖‖a_j‖), 4 the frame
    residual (α·G − β·E)² with E = I − 11ᵀ/K (``par[2]`` = 1: E = I). ``par`` = (α, β, identity, c_shift,
    v_shift, p, close, K): ``close`` is the ratio (‖a_i‖² + ‖a_j‖²)/d² beyond which the squared distance
    d² = ‖a_i‖² + ‖a_j‖² − 2G_ij, whose rounding is at most (m + 3)·eps·(‖a_i‖² + ‖a_j‖²) for m columns, is
    recomputed from the exact differences (so every d² used has a relative error below (m + 3)·eps·close).
    Sums are formed per row, then per tile, then added to ``acc`` (rounding O((t + K/t)·eps), not O(K²·eps)).
    The rows of the tile are shared among numba's threads (each row's sums are its own; the tile's sum of them
    is sequential, so the result does not depend on the number of threads). ``inv`` (K,): 1/‖a_k‖ of the rows
    (symmetric sums only; read by the cosines).
    """
    ti = G.shape[0]
    rows = np.zeros((ti, 9))
    for a in prange(ti):
        _pair_row(G, a, i0, j0, symmetric, A, B, sqA, sqB, inv, var, want, par, rows[a])
    for k in range(9):
        t = 0.0
        for a in range(ti):
            t += rows[a, k]
        acc[k] += t


@njit(**_NB)
def _pair_row(G, a, i0, j0, symmetric, A, B, sqA, sqB, inv, var, want, par, r):
    """The terms of row a of a tile (see :func:`pair_tile`) into r."""
    tj = G.shape[1]
    alpha, beta, ident, cshift, vshift, p, close, K = par[0], par[1], par[2], par[3], par[4], par[5], par[6], par[7]
    invK = 0.0 if ident != 0.0 else 1.0 / K
    do_cdnv, do_cos, do_frame = (want & 1) != 0, (want & 2) != 0, (want & 4) != 0
    i = i0 + a
    lo = i - j0 if symmetric and i > j0 else 0
    if do_frame:
        f, g2 = _frame_row(G, a, lo, i - j0, 2.0 if symmetric else 1.0, alpha, beta * invK, beta)
        r[7] += f
        r[8] += g2
    if not symmetric:
        return
    if lo <= i - j0:  # the diagonal pair (i, i) is in this tile: skip it
        lo = i - j0 + 1
    si = sqA[i]
    inv_i = inv[i]
    if do_cdnv:
        vi = var[i]
        if p == 1.0 and _far_row(G, a, lo, j0, si, sqB, close):  # the common case: a vectorised loop
            s0, s1 = _cdnv_row(G, a, lo, j0, si, sqB, var, vi, vshift)
            s2 = s3 = 0.0
        else:
            s0 = s1 = s2 = s3 = 0.0
            for b in range(lo, tj):
                j = j0 + b
                ss = si + sqB[j]
                d2 = ss - 2.0 * G[a, b]
                if d2 * close <= ss:
                    d2 = _sqdist(A[i], B[j])
                    s3 += 1.0
                if d2 == 0.0:
                    s2 += 1.0
                else:
                    den = 2.0 * d2 if p == 1.0 else 2.0 * d2**p
                    v = (vi + var[j]) / den
                    s0 += v
                    s1 += (v - vshift) * (v - vshift)
        r[0] += s0
        r[1] += s1
        r[2] += s2
        r[3] += s3
    if do_cos:
        c0, c1, c2 = _cos_row(G, a, lo, j0, inv_i, inv, 1.0 / (K - 1.0), cshift)
        r[4] += c0
        r[5] += c1
        r[6] += c2


@njit(**_SUMS)
def _frame_row(G, a, lo, diag, w, alpha, off_shift, beta):
    """(Σ w·(αG_ab + β/K)² over the off-diagonal pairs + (αG − β(1 − 1/K))² on the diagonal b = ``diag``, Σ w·G²)
    of a row (``off_shift`` = β/K, or 0 for E = I); w = 2 for the symmetric sums (each pair twice), else 1."""
    f = g2 = 0.0
    for b in range(lo, G.shape[1]):
        g = G[a, b]
        x = alpha * g + off_shift
        f += x * x
        g2 += g * g
    f *= w
    g2 *= w
    if 0 <= diag < G.shape[1] and diag >= lo:  # the diagonal pair: counted once, with E's diagonal
        g = G[a, diag]
        x = alpha * g + off_shift
        f += (alpha * g - beta + off_shift) ** 2 - w * x * x
        g2 += g * g - w * g * g
    return f, g2


@njit(**_SUMS)
def _far_row(G, a, lo, j0, si, sqB, close):
    """Whether no pair (i, j0 + b), b ≥ lo, of the row needs its distance recomputed (or is at distance 0)."""
    bad = 0
    for b in range(lo, G.shape[1]):
        ss = si + sqB[j0 + b]
        bad += (ss - 2.0 * G[a, b]) * close <= ss
    return bad == 0


@njit(**_SUMS)
def _cdnv_row(G, a, lo, j0, si, sqB, var, vi, vshift):
    """(Σ V, Σ (V − v_shift)²) of a row whose pairs are all far (p = 1), summed in any order."""
    s0 = s1 = 0.0
    for b in range(lo, G.shape[1]):
        j = j0 + b
        v = (vi + var[j]) / (2.0 * (si + sqB[j] - 2.0 * G[a, b]))
        s0 += v
        s1 += (v - vshift) * (v - vshift)
    return s0, s1


@njit(**_SUMS)
def _cos_row(G, a, lo, j0, inv_i, inv, shiftK, cshift):
    """(Σ |c + 1/(K−1)|, Σ c, Σ (c − c_shift)²) of the cosines of a row, summed in any order."""
    c0 = c1 = c2 = 0.0
    for b in range(lo, G.shape[1]):
        c = G[a, b] * inv_i * inv[j0 + b]
        c0 += abs(c + shiftK)
        c1 += c
        c2 += (c - cshift) * (c - cshift)
    return c0, c1, c2
