"""Classes of equal sample count and the matrices that are invariant under permuting them.

A count vector n ∈ Z^K_{≥0} splits the classes into G groups of equal count (values v_1 > … > v_G, sizes
m_a). The regularised UFM is invariant under a permutation of the classes inside one group (their samples are
exchangeable), so by convexity it has an optimum X that is invariant too (docs/ufm.md, "Any class counts").
Such an X (rows: the K classes, columns: the present ones) is determined by

* M ∈ R^{G×G_p}: M[a, b] = (1_a/√m_a)ᵀ X (1_b/√m_b), X on the span of the group indicators, and
* β_b (present b, m_b ≥ 2): X maps every zero-sum vector supported on group b to β_b times itself,

and ‖X‖_* = ‖M‖_* + Σ_b (m_b − 1)|β_b|. Its Gram matrices are *group Grams*: G[j, j'] = C[a(j), a(j')] +
δ_{jj'}·d[a(j)], stored as :class:`GroupGram` (O(G²) numbers) and formed only when asked for.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._budget import check_work
from .._validate import fail
from ..metrics import pairs as _pairs

__all__ = ["CountGroups", "count_groups", "GroupGram", "group_gram", "lift", "psd_sqrt"]


@dataclass(frozen=True)
class CountGroups:
    """The classes grouped by their sample count (groups in decreasing count, the absent ones last).

    Attributes
    ----------
    counts : ndarray of int64, (K,)
    values : ndarray of int64, (G,)
        The distinct counts, decreasing (a 0 last when some class is absent).
    sizes : ndarray of int64, (G,)
        m_a, the number of classes with count values[a].
    label : ndarray of int64, (K,)
        The group of each class.
    """

    counts: np.ndarray
    values: np.ndarray
    sizes: np.ndarray
    label: np.ndarray

    K = property(lambda self: int(self.counts.size))
    N = property(lambda self: int(self.counts.sum()))
    G = property(lambda self: int(self.values.size))
    #: G_p, the number of groups with samples (the first G_p groups)
    Gp = property(lambda self: int(np.count_nonzero(self.values)))
    present = property(lambda self: self.counts > 0)


def count_groups(counts, *, exchangeable: bool = True) -> CountGroups:
    """Group K classes by their counts (a 1-D array of non-negative integers, not all zero).

    ``exchangeable=False`` gives every class its own group (no symmetry used: the reduced problem is then the
    K-class problem itself, the independent check of the symmetry reduction)."""
    counts = np.asarray(counts, dtype=np.int64)
    if not exchangeable:
        order = np.argsort(-counts, kind="stable")
        label = np.empty(counts.size, dtype=np.int64)
        label[order] = np.arange(counts.size)
        return CountGroups(counts, counts[order], np.ones(counts.size, dtype=np.int64), label)
    values, inverse, sizes = np.unique(-counts, return_inverse=True, return_counts=True)
    return CountGroups(counts, -values, sizes.astype(np.int64), inverse.astype(np.int64).ravel())


def psd_sqrt(A):
    """(AAᵀ)^{1/2} and (AᵀA)^{1/2} from one SVD of A (the Grams of a balanced factorisation of A)."""
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    return (U * s) @ U.T, (Vt.T * s) @ Vt


@dataclass(frozen=True, eq=False)
class GroupGram:
    """A K×K Gram that is invariant under permutations inside count groups: G[j, j'] = C[a, a'] + δ_{jj'}·d[a]
    (a = label[j], a' = label[j']), never formed unless asked for (``np.asarray``, ``tolist``, ``G[i, j]``).

    Attributes
    ----------
    label : ndarray of int64, (K,)
    C : ndarray, (G, G)
    d : ndarray, (G,)
    """

    label: np.ndarray
    C: np.ndarray
    d: np.ndarray

    K = property(lambda self: int(self.label.size))
    shape = property(lambda self: (self.K, self.K))
    ndim = 2
    dtype = np.dtype(np.float64)
    size = property(lambda self: self.K * self.K)

    def __array__(self, dtype=None, copy=None):
        check_work("K", self.K, bytes=8 * self.K * self.K, what="the K x K Gram matrix of the UFM optimum (groups)")
        G = self.C[np.ix_(self.label, self.label)]
        G[np.diag_indices(self.K)] += self.d[self.label]
        return G if dtype is None else G.astype(dtype)

    def tolist(self) -> list:
        return np.asarray(self).tolist()

    def __getitem__(self, idx):
        if isinstance(idx, tuple) and len(idx) == 2 and all(isinstance(i, (int, np.integer)) for i in idx):
            i, j = (int(x) % self.K for x in idx)
            a, b = self.label[i], self.label[j]
            return float(self.C[a, b] + (self.d[a] if i == j else 0.0))
        return np.asarray(self)[idx]

    def _sizes(self):
        return np.bincount(self.label, minlength=self.C.shape[0]).astype(np.float64)

    def trace(self) -> float:
        m = self._sizes()
        return float(np.sum(m * (np.diagonal(self.C) + self.d)))

    def norm(self) -> float:
        """‖G‖_F: Σ_{a,a'} m_a m_a' C²_{aa'} + Σ_a m_a (2C_aa d_a + d_a²), as a sum of the group blocks."""
        m = self._sizes()
        diag = np.diagonal(self.C)
        off = float(m @ (self.C * self.C) @ m) - float(np.sum(m * diag * diag))  # the off-diagonal entries
        return math.sqrt(max(off, 0.0) + float(np.sum(m * (diag + self.d) ** 2)))

    def distance(self, A) -> float:
        """‖AAᵀ − G‖_F of K rows A (K × d), formed in row tiles (O(tile·K) memory, no cancellation)."""
        A = np.asarray(A, dtype=np.float64)
        if A.shape[0] != self.K:
            fail("A", f"array of shape {A.shape}", f"must have K = {self.K} rows")
        tile = max(1, min(self.K, 2**22 // max(self.K, 1)))
        total = 0.0
        for i in range(0, self.K, tile):
            rows = slice(i, min(i + tile, self.K))
            D = A[rows] @ A.T - self.C[np.ix_(self.label[rows], self.label)]
            D[np.arange(D.shape[0]), np.arange(rows.start, rows.stop)] -= self.d[self.label[rows]]
            total += float(np.sum(D * D))
        return math.sqrt(total)


def group_gram(label, C, d):
    """The Gram C[a, a'] + δ d[a]: a dense (K, K) array below pairs.LARGE_K classes, a GroupGram from there on."""
    G = GroupGram(np.asarray(label, dtype=np.int64), np.asarray(C, dtype=np.float64), np.asarray(d, dtype=np.float64))
    return np.asarray(G) if G.K < _pairs.LARGE_K else G


def lift(groups: CountGroups, M, beta):
    """The K × K_p matrix X of the reduced (M, β) (module docstring); columns: the present classes in order."""
    lab = groups.label
    m = groups.sizes.astype(np.float64)
    pres = np.flatnonzero(groups.present)
    lc = lab[pres]
    alpha = M / np.sqrt(np.outer(m, m[: M.shape[1]]))
    b_full = np.zeros(groups.G)
    b_full[: beta.size] = beta
    alpha = alpha.copy()
    idx = np.arange(M.shape[1])
    alpha[idx, idx] -= b_full[idx] / m[idx]  # M_bb = m_b α_bb + β_b
    X = alpha[np.ix_(lab, lc)]
    X[pres, np.arange(pres.size)] += b_full[lc]
    return X
