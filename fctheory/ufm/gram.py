"""The Gram matrices of the closed-form UFM optima without their K×K entries: a·(I − 11ᵀ/K) or a·I.

The regularised CE and MSE optima (Zhu et al.; the review's eqs. (23), (28)) have W*W*ᵀ and the class means'
Gram equal to a scaled simplex-ETF projector a·(I_K − 11ᵀ/K) (CE, MSE with a bias) or a scaled identity a·I_K
(MSE without a bias). From :data:`fctheory.metrics.pairs.LARGE_K` classes on, :func:`fctheory.ufm.ce` and
:func:`fctheory.ufm.mse` return them as :class:`FrameGram` (three numbers), which behaves as the K×K array
where one is asked for (``np.asarray``, ``tolist``, ``G[i, j]``; the array is sized against the budget
first) and gives the distances ‖AAᵀ − G‖_F of K rows A in O(K·m) memory (:func:`gram_distance`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._budget import check_work
from .._validate import fail
from ..metrics import pairs as _pairs
from ..metrics.pairs import FrameFit, frame_fit, pair_sums

__all__ = ["FrameGram", "frame_gram", "gram_distance", "gram_distance_from_fit"]

#: a cancellation factor of the identity distance's expansion beyond which the distance is recomputed in tiles
_MAX_CANCELLATION = 1e3


@dataclass(frozen=True, eq=True)
class FrameGram:
    """a·E_K (``kind="etf"``, E_K = I − 11ᵀ/K) or a·I_K (``kind="identity"``), never formed unless asked.

    Attributes
    ----------
    K : int
    scale : float
        a.
    kind : {"etf", "identity"}
    """

    K: int
    scale: float
    kind: str

    shape = property(lambda self: (self.K, self.K))
    ndim = 2
    dtype = np.dtype(np.float64)

    @property
    def size(self) -> int:
        return self.K * self.K

    def __array__(self, dtype=None, copy=None):
        check_work(
            "K", self.K, bytes=8 * self.K * self.K, what=f"the K x K Gram matrix of the UFM optimum ({self.kind})"
        )
        if self.kind == "etf":
            E = np.full((self.K, self.K), -1.0 / self.K)
            E[np.diag_indices(self.K)] += 1.0
        else:
            E = np.eye(self.K)
        G = self.scale * E  # as the closed forms always formed it (scale times the frame)
        return G if dtype is None else G.astype(dtype)

    def tolist(self) -> list:
        return np.asarray(self).tolist()

    def __getitem__(self, idx):
        if isinstance(idx, tuple) and len(idx) == 2 and all(isinstance(i, (int, np.integer)) for i in idx):
            i, j = (int(x) % self.K for x in idx)
            return float(self.scale * ((1.0 if i == j else 0.0) - (1.0 / self.K if self.kind == "etf" else 0.0)))
        return np.asarray(self)[idx]

    def __mul__(self, c):
        return FrameGram(self.K, self.scale * float(c), self.kind)

    __rmul__ = __mul__

    def trace(self) -> float:
        return self.scale * (self.K - 1 if self.kind == "etf" else self.K)

    def norm(self) -> float:
        """‖a·E‖_F = |a|·√rank."""
        return abs(self.scale) * math.sqrt(self.K - 1 if self.kind == "etf" else self.K)


def frame_gram(K: int, scale: float, kind: str):
    """The optimum's Gram a·E_K or a·I_K: a dense (K, K) array below pairs.LARGE_K classes, a FrameGram from
    there on (the closed forms' one constructor of it)."""
    if kind not in ("etf", "identity"):
        fail("kind", kind, "must be 'etf' or 'identity'")
    G = FrameGram(int(K), float(scale), kind)
    return np.asarray(G) if K < _pairs.LARGE_K else G


def gram_distance_from_fit(fit: FrameFit, G: FrameGram, A=None) -> float:
    """‖AAᵀ − G‖_F from the :class:`~fctheory.metrics.pairs.FrameFit` of the rows A (no further pass for the
    ETF kind; for the identity kind the expansion is used unless it cancels by more than 10³, when the rows
    ``A`` are needed for one tiled pass)."""
    if G.kind == "etf":
        return fit.etf_distance(G.scale)
    dist, factor = fit.identity_distance(G.scale)
    if factor <= _MAX_CANCELLATION:
        return dist
    if A is None:
        fail("A", None, "the rows are needed: the identity distance's expansion cancels for these rows")
    return _identity_tiled(A, G.scale)


def _identity_tiled(A, a):
    """‖AAᵀ − a·I‖_F in one tiled pass over the rows (rescaled exactly first)."""
    A = np.asarray(A, dtype=np.float64)
    e = int(np.frexp(np.max(np.abs(A)))[1]) if A.size and np.any(A) else 0
    Au = np.ldexp(A, -e)
    s = pair_sums(Au, want=("frame",), beta=math.ldexp(a, -2 * e), identity=True)
    return math.ldexp(math.sqrt(s["frame"]), 2 * e)


def gram_distance(A, G) -> float:
    """‖AAᵀ − G‖_F of K rows A (K × m) and the optimum's Gram G (a FrameGram, or a K×K array)."""
    A = np.asarray(A, dtype=np.float64)
    if not isinstance(G, FrameGram):
        D = A @ A.T - np.asarray(G, dtype=np.float64)
        return float(np.linalg.norm(D))
    if G.kind == "identity":
        return _identity_tiled(A, G.scale)
    mu = A.sum(axis=0) / A.shape[0]
    Ac = A - A[:1]
    Ac -= Ac.sum(axis=0) / A.shape[0]
    e = int(np.frexp(np.max(np.abs(Ac)))[1]) if np.any(Ac) else 0
    fit = frame_fit(np.ldexp(Ac, -e), e, mu)[0]
    return fit.etf_distance(G.scale)
