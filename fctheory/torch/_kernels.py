"""The monitor's per-batch work on the CPU as numba kernels (the host arrays are views of its tensors).

On a GPU the per-batch moments are a handful of large tensor operations; on the CPU the same dozen small
operations cost more in call overhead than in arithmetic (~15 torch calls per batch, each several µs while a
network trains beside them). Two compiled passes over the rows do what those calls do: shift each row by its
class's reference point and add it to the class's sum, squared norm and (small d) the scatter's upper
triangle; then take NC4's two decisions. The quantities are those of the tensor path
(:class:`fctheory.torch.monitor._Moments`), in float64; only the order of the float64 additions differs.

The products' inner sums (the scatter's entries, the scores' dot products) may be reassociated
(``fastmath={"reassoc", "contract"}``: vectorised sums, the accuracy of any float64 summation order);
nothing here assumes finite values, so non-finite features still make the squared norms non-finite, which is
how the monitor refuses them.
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
def add_rows(H, y, shift, have, counts, sums, sq, Dt):
    """Add the rows of ``H`` (B × d, any real dtype and layout) with labels ``y`` in [0, K−1] (checked).

    ``have`` (K,) marks the classes whose shift is set; a class seen for the first time is shifted by its
    first row (the tensor path's first-epoch rule) and marked. ``Dt`` (d × B, float64) receives the shifted
    rows as columns, the layout of the scatter's inner sums.
    """
    B, d = H.shape
    for i in range(B):
        c = y[i]
        if not have[c]:
            for j in range(d):
                shift[c, j] = H[i, j]
            have[c] = True
        q = 0.0
        for j in range(d):
            v = np.float64(H[i, j]) - shift[c, j]
            Dt[j, i] = v
            sums[c, j] += v
            q += v * v
        sq[c] += q
        counts[c] += 1


@njit(**_SUMS)
def add_scatter(Dt, scatter):
    """scatter[j, m] += Σ_i Dt[j, i]·Dt[m, i] for j ≤ m (the upper triangle of Dt·Dtᵀ)."""
    d, B = Dt.shape
    for j in range(d):
        a = Dt[j]
        for m in range(j, d):
            b = Dt[m]
            s = 0.0
            for i in range(B):
                s += a[i] * b[i]
            scatter[j, m] += s


@njit(**_SUMS)
def nc4_disagreements(H, W, b, mu2, offset):
    """How many rows of ``H`` the classifier (W, b) and the nearest reference mean μ_k label differently.

    Both decisions are argmaxes over one row of scores: the logits ⟨h, w_k⟩ + b_k and 2⟨h, μ_k⟩ − ‖μ_k‖² (minus
    the squared distance to μ_k, up to ‖h‖²); ``mu2`` holds 2μ (K × d) and ``offset`` −‖μ‖² (K,). W and b are
    the classifier's current weights (any real dtype; ``b`` of length 0 without a bias), read in float64.
    Ties go to the first class and NaN counts as the largest score, as with torch's argmax.
    """
    B, d = H.shape
    K = W.shape[0]
    out = 0
    for i in range(B):
        h = H[i]
        best_w, at_w = 0.0, -1
        best_m, at_m = 0.0, -1
        for k in range(K):
            w = W[k]
            m = mu2[k]
            s = 0.0
            t = 0.0
            for j in range(d):
                x = np.float64(h[j])
                s += x * np.float64(w[j])
                t += x * m[j]
            s += np.float64(b[k]) if b.shape[0] else 0.0
            t += offset[k]
            if at_w < 0 or s > best_w or (s != s and best_w == best_w):
                best_w, at_w = s, k
            if at_m < 0 or t > best_m or (t != t and best_m == best_m):
                best_m, at_m = t, k
        if at_w != at_m:
            out += 1
    return out
