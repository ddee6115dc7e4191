"""The NC metrics' input checks and exact power-of-two rescalings (features, labels, moments), shared by
:mod:`fctheory.metrics.moments`, :mod:`fctheory.metrics.nc` and :mod:`fctheory.metrics.accumulator`."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._backend import array_namespace_of, as_native, asarray_like, dtype_kind, to_numpy
from .._numerics import ldexp, pow2_exponent, pow2_scale, pow2_unscale
from .._validate import Array, Choice, Int, fail

_H = Array(ndim=2, native=True)


_M = Array(ndim=2, native=True)


_Y = Array(ndim=1, integer=True, min=0, native=True)


_KOPT = Int(min=2).or_none()


_GMEAN = Choice("class_means", "samples")


_COUNTS = Array(ndim=1, min=0, native=True).or_none()


_DDOF = Int(min=0, max=1)


_MOMENTS = dict(
    counts=Array(ndim=1, integer=True, min=0, native=True),
    sums=_M,
    scatter=_M,
    sq=Array(ndim=1, native=True),
    shift=_M,
)


def _features(H, name="H", like=None):
    """(xp, H as float64 in its namespace); with ``like``, H is first brought to like's namespace and device."""
    if type(H) is np.ndarray and H.dtype == np.float64 and H.ndim == 2 and H.size and type(like) in _HOST:
        # the common case (host float64 data, e.g. statistics): only the finiteness check is left to do
        if not np.isfinite(H).all():
            fail(name, "array with non-finite entries", "must be finite")
        return np, H
    if like is not None:
        H = asarray_like(H, like)
    xp, H = as_native(H)
    if H.ndim != 2:
        fail(name, to_numpy(H), "must be a 2-D array (samples x features)")
    if dtype_kind(H) not in "iuf":
        fail(name, to_numpy(H), f"must be real numbers, got dtype {H.dtype}")
    if math.prod(H.shape) == 0:
        fail(name, to_numpy(H), f"must not be empty, got shape {tuple(H.shape)}")
    H = xp.asarray(H, dtype=xp.float64)  # float32 inputs accumulate in float64
    if not bool(xp.all(xp.isfinite(H))):
        fail(name, "array with non-finite entries", "must be finite")
    return xp, H


_HOST = (type(None), np.ndarray)


class Present(NamedTuple):
    """Which of the K classes have a sample: ``classes`` (their labels, increasing; K_p ≥ 2 of them) and
    ``num_classes`` (K). The metrics are computed over the present classes only (an absent class has no mean)."""

    classes: np.ndarray
    num_classes: int

    @property
    def all(self) -> bool:
        """Whether every class 0..K−1 is present."""
        return self.classes.shape[0] == self.num_classes

    def rows(self, A, name="W"):
        """The rows of a K-row array A (e.g. the classifier W) that belong to the present classes."""
        if self.all:
            return A
        return A[asarray_like(self.classes, A)] if type(A) is not np.ndarray else A[self.classes]


def present_classes(counts, name="counts") -> Present:
    """The :class:`Present` classes of per-class counts (K,): those with a positive count; refused when fewer
    than 2 have one (no metric compares fewer than two classes)."""
    counts = np.asarray(counts)
    classes = np.flatnonzero(counts > 0)
    if classes.size < 2:
        fail(name, counts, f"needs at least 2 classes present (with a sample), got {classes.size}")
    return Present(classes, int(counts.shape[0]))


def _labels(y, N, K=None, like=None):
    """(labels on like's device, K_p, host counts, :class:`Present`): the labels of the K_p classes present,
    renumbered 0..K_p−1 in increasing order of the original labels (unchanged when every class is present),
    and their counts; the checks run on a host copy of y. Absent classes are allowed (K given or max(y) + 1)."""
    yh = np.asarray(to_numpy(y))
    if yh.ndim != 1 or yh.shape[0] != N:
        fail("y", yh, f"must be a 1-D label array of length N = {N} (one label per row of H), got shape {yh.shape}")
    if yh.dtype.kind not in "iu":
        if yh.dtype.kind == "f" and np.all(np.isfinite(yh)) and np.all(yh == np.round(yh)):
            yh = yh.astype(np.int64)
        else:
            fail("y", yh, "must be integer class labels")
    if yh.size and yh.min() < 0:
        fail("y", yh, "labels must be >= 0 (negative labels are refused, never wrapped)")
    Kd = int(yh.max()) + 1 if yh.size else 0
    if K is None:
        K = Kd
    elif Kd > K:
        fail("K", K, f"is smaller than the number of classes in y (labels up to {Kd - 1})")
    if K <= 4 * N + 64:  # counters for every class: O(N + K)
        every = np.bincount(yh, minlength=K)
        classes = np.flatnonzero(every)
        counts = every[classes]
    else:  # labels up to billions with few samples: sort them instead of allocating K counters
        classes, counts = np.unique(yh, return_counts=True)
    if classes.size < 2:
        fail("y", yh, f"needs at least 2 classes present (labels of {classes.size} class)")
    yh = yh.astype(np.int64)
    if classes.size < K:  # renumber the present classes 0..K_p−1
        yh = np.searchsorted(classes, yh)
    return asarray_like(yh, like), int(classes.size), counts.astype(np.int64), Present(classes, int(K))


def _onehot(xp, y, K):
    # built on y's device from a comparison (no scatter into a host-created array)
    classes = asarray_like(np.arange(K, dtype=np.int64), y)
    return xp.asarray(y[:, None] == classes[None, :], dtype=xp.float64)


def _exponent(xp, A) -> int:
    """e with max|A|·2^-e in [0.5, 1) (0 for A = 0): scaling by 2^-e is exact and cannot overflow.

    Scale-invariant metrics work on A·2^-e, so A·1e300 (whose squares overflow) and A·1e-300 (whose
    squares underflow) give the same answer as A.
    """
    return pow2_exponent(A, xp)


def _unit(xp, A):
    """(A·2^-e, e) with max|A·2^-e| < 1 (exact rescaling)."""
    e = _exponent(xp, A)
    return pow2_scale(A, e, xp), e


def _scale_back(name, value, A, e, what):
    """A·2^e (second moments: the caller passes 2e); refuse if the result overflows float64."""
    if e == 0:
        return A
    if isinstance(A, float):  # a scalar metric: math.ldexp rounds as np.ldexp does and raises on overflow
        try:
            return math.ldexp(A, e)
        except OverflowError:
            fail(name, value, f"{what} overflows float64 at this scale (entries up to 2^{e}); rescale the features")
    xp = array_namespace_of(A)
    with np.errstate(over="ignore", under="ignore"):
        out = ldexp(xp.asarray(A, dtype=xp.float64), e, xp)
    if not bool(xp.all(xp.isfinite(out))):
        fail(name, value, f"{what} overflows float64 at this scale (entries up to 2^{e}); rescale the features")
    return float(out) if out.ndim == 0 else out


def _scale_back_unchecked(name, value, A, e, what):
    """A·2^e, as :func:`_scale_back`, where the caller has shown that the result cannot overflow."""
    if e > 0:  # scaling up cannot underflow either: no floating-point state to guard
        return ldexp(A, e, array_namespace_of(A))
    return pow2_unscale(A, e, array_namespace_of(A))
