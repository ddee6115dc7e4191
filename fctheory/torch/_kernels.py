"""The monitor's per-batch work on the CPU as numba kernels (the host arrays are views of its tensors).

On a GPU the per-batch moments are a handful of large tensor operations; on the CPU the same dozen small
operations cost more in call overhead than in arithmetic (~15 torch calls per batch, each several µs while a
network trains beside them). A few compiled passes over the rows do what those calls do: shift each row by
its class's reference point and add it to the class's sum and squared norm, add the outer products to the
scatter's upper triangle (small d), and take NC4's two decisions. The quantities are those of the tensor path
(:class:`fctheory.torch.monitor._Moments`), in float64; only the order of the float64 additions differs.

The scatter's inner sums may be reassociated (``fastmath={"reassoc", "contract"}``: vectorised sums, the
accuracy of any float64 summation order); nothing here assumes finite values, so non-finite features still
make the squared norms non-finite, which is how the monitor refuses them.
"""

from __future__ import annotations

import numpy as np
from numba import njit


_NB = dict(cache=True, nogil=True, error_model="numpy")
_SUMS = dict(_NB, fastmath={"reassoc", "contract"})  # reassociated sums only: no finite-math assumption


@njit(**_NB)
def first_bad_label(y, K):
    """-1 when every label lies in [0, K−1], else the index of the first that does not."""
    for i in range(y.shape[0]):
        if y[i] < 0 or y[i] >= K:
            return i
    return -1


@njit(**_NB)
def add_rows(H, y, shift, have, counts, sums, sq, Dt, Hf):
    """Add the rows of ``H`` (B × d, any real dtype and layout) with labels ``y`` in [0, K−1] (checked).

    ``have`` (K,) marks the classes whose shift is set; a class seen for the first time is shifted by its
    first row (the tensor path's first-epoch rule) and marked. ``Dt`` (d × B, float64) receives the shifted
    rows as columns, the layout of the scatter's inner sums; ``Hf`` (B × d, float64, or empty) the rows
    themselves, for NC4's product.
    """
    B, d = H.shape
    copy = Hf.shape[0] > 0
    for i in range(B):
        c = y[i]
        if not have[c]:
            for j in range(d):
                shift[c, j] = H[i, j]
            have[c] = True
        q = 0.0
        for j in range(d):
            h = np.float64(H[i, j])
            if copy:
                Hf[i, j] = h
            v = h - shift[c, j]
            Dt[j, i] = v
            sums[c, j] += v
            q += v * v
        sq[c] += q
        counts[c] += 1


@njit(**_SUMS)
def add_scatter(Dt, scatter):
    """scatter[j, m] += Σ_i Dt[j, i]·Dt[m, i] for j ≤ m: the upper triangle of Dt·Dtᵀ (the entries just below
    the diagonal, (j + 1, j) for even j, get their sums too; the rest of the lower triangle is left alone).

    Two rows of Dt against four at a time: eight sums per pass over the columns, each a vectorised loop.
    """
    d, B = Dt.shape
    for j in range(0, d - 1, 2):
        a0, a1 = Dt[j], Dt[j + 1]
        m = j
        while m + 4 <= d:
            b0, b1, b2, b3 = Dt[m], Dt[m + 1], Dt[m + 2], Dt[m + 3]
            s0 = s1 = s2 = s3 = t0 = t1 = t2 = t3 = 0.0
            for i in range(B):
                x, z = a0[i], a1[i]
                u0, u1, u2, u3 = b0[i], b1[i], b2[i], b3[i]
                s0 += x * u0
                s1 += x * u1
                s2 += x * u2
                s3 += x * u3
                t0 += z * u0
                t1 += z * u1
                t2 += z * u2
                t3 += z * u3
            scatter[j, m] += s0
            scatter[j, m + 1] += s1
            scatter[j, m + 2] += s2
            scatter[j, m + 3] += s3
            scatter[j + 1, m] += t0
            scatter[j + 1, m + 1] += t1
            scatter[j + 1, m + 2] += t2
            scatter[j + 1, m + 3] += t3
            m += 4
        while m < d:
            b = Dt[m]
            s = t = 0.0
            for i in range(B):
                s += a0[i] * b[i]
                t += a1[i] * b[i]
            scatter[j, m] += s
            scatter[j + 1, m] += t
            m += 1
    if d % 2:  # the last row's one entry on the diagonal
        a = Dt[d - 1]
        s = 0.0
        for i in range(B):
            s += a[i] * a[i]
        scatter[d - 1, d - 1] += s


@njit(**_NB)
def add_batch(H, y, shift, have, counts, sums, sq, scatter, with_scatter, W, b, mu2, offset):
    """The whole per-batch update of the CPU moments, in chunks of rows that stay in the L1 cache.

    Per chunk: :func:`add_rows` (the shifted rows), :func:`add_scatter` (``with_scatter``: the scatter's
    upper triangle) and, when ``W`` has rows (K × d; an empty W skips it), NC4's disagreements
    (:func:`nc4_disagreements`). Returns ``(Dt, disagreements)``: Dt (d × B) the shifted rows as columns
    when ``with_scatter`` is False (the caller then forms the scatter itself), else an empty array;
    disagreements −1 (and nothing added) when a label lies outside [0, K−1].
    """
    B, d = H.shape
    if first_bad_label(y, counts.shape[0]) >= 0:
        return np.empty((0, 0)), -1
    nc4 = W.shape[0] > 0
    if not with_scatter:
        Dt = np.empty((d, B))
        Hf = np.empty((B, d)) if nc4 else np.empty((0, 0))
        add_rows(H, y, shift, have, counts, sums, sq, Dt, Hf)
        return Dt, nc4_disagreements(Hf, W, b, mu2, offset) if nc4 else 0
    step = min(B, max(64, 2048 // max(d, 1)))  # rows per chunk: 16 KB of shifted rows (64 rows from d = 32 on)
    Hf = np.empty((B, d)) if nc4 else np.empty((0, 0))  # the rows in float64, for NC4's one product
    for lo in range(0, B, step):
        hi = min(B, lo + step)
        Dc = np.empty((d, hi - lo))
        add_rows(H[lo:hi], y[lo:hi], shift, have, counts, sums, sq, Dc, Hf[lo:hi] if nc4 else Hf)
        add_scatter(Dc, scatter)
    out = nc4_disagreements(Hf, W, b, mu2, offset) if nc4 else 0
    return np.empty((0, 0)), out


@njit(**_NB)
def nc4_disagreements(Hf, W, b, mu2, offset):
    """How many rows of ``Hf`` (B × d, float64) the classifier (W, b) and the nearest reference mean μ_k label
    differently.

    Both decisions are argmaxes over one row of scores: the logits ⟨h, w_k⟩ + b_k and 2⟨h, μ_k⟩ − ‖μ_k‖² (minus
    the squared distance to μ_k, up to ‖h‖²); ``mu2`` holds 2μ (K × d) and ``offset`` −‖μ‖² (K,). W and b are
    the classifier's current weights (any real dtype; ``b`` of length 0 without a bias), read in float64.
    The scores are one BLAS product (``np.dot``) of the rows with [Wᵀ | 2μᵀ]. Ties go to the first class and
    NaN counts as the largest score, as with torch's argmax.
    """
    B, d = Hf.shape
    K = W.shape[0]
    R = np.empty((d, 2 * K))
    off = np.zeros(2 * K)
    for k in range(K):
        for j in range(d):
            R[j, k] = W[k, j]
            R[j, K + k] = mu2[k, j]
        if b.shape[0]:
            off[k] = b[k]
        off[K + k] = offset[k]
    out = 0
    step = max(1, 2**21 // (2 * K))  # rows per product: at most 2^21 scores (16 MB) at a time, whatever K
    for lo in range(0, B, step):
        scores = np.dot(Hf[lo : lo + step], R)
        for i in range(scores.shape[0]):
            if _argmax(scores[i], off, 0, K) != _argmax(scores[i], off, K, 2 * K):
                out += 1
    return out


@njit(**_NB)
def _argmax(row, off, lo, hi):
    best, at = row[lo] + off[lo], 0
    for k in range(lo + 1, hi):
        s = row[k] + off[k]
        if s > best or (s != s and best == best):
            best, at = s, k - lo
    return at
