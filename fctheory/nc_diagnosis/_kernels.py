"""The norms behind :func:`fctheory.nc_diagnosis.ufm_distances` as one numba kernel (host float64 arrays).

The reference body is a few dozen small NumPy calls (Gram matrices, their differences, rescaled norms) on
K×d and K×K arrays; a training monitor on the CPU pays it every epoch, mostly in call overhead. The kernel
computes the same sums of squares in one call where every entry lies within 2^±200 (no square can overflow
or fall into the subnormals, so the reference's exact power-of-two rescaling changes no bit of the norms);
anything else is left to the reference body.
"""

from __future__ import annotations

import math

from numba import njit

_NB = dict(cache=True, nogil=True, fastmath=False, error_model="numpy")
_LO, _HI = 2.0**-200, 2.0**200


@njit(**_NB)
def _in_range(A):
    """Every entry finite with |a| ≤ 2^200, and the largest (when non-zero) ≥ 2^-200."""
    m = 0.0
    for x in A.ravel():
        a = abs(x)
        if not a <= _HI:  # also NaN
            return False
        m = max(m, a)
    return m == 0.0 or m >= _LO


@njit(**_NB)
def _gram_minus_norms(A, G):
    """(‖AAᵀ − G‖_F, ‖G‖_F) for A (K × m) and G (K × K)."""
    K, m = A.shape
    r = 0.0
    g = 0.0
    for i in range(K):
        for j in range(K):
            s = 0.0
            for c in range(m):
                s += A[i, c] * A[j, c]
            x = s - G[i, j]
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
