"""The NC metrics' input checks and exact power-of-two rescalings (features, labels, moments), shared by
:mod:`fctheory.metrics.moments`, :mod:`fctheory.metrics.nc` and :mod:`fctheory.metrics.accumulator`."""

from __future__ import annotations

import math

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


def _labels(y, N, K=None, like=None):
    """(labels as int64 on like's device, K, host counts); the checks run on a host copy of y."""
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
        if Kd > N:
            # labels up to Kd-1 with only N samples: some class is empty; refuse before counting
            # (np.bincount would allocate Kd counters, possibly billions)
            fail("y", yh, f"every class 0..K-1 must occur, impossible with N = {N} samples and labels up to {Kd - 1}")
        K = Kd
        if K < 2:
            fail("y", yh, "needs at least 2 classes")
    else:
        if Kd > K:
            fail("K", K, f"is smaller than the number of classes in y (labels up to {Kd - 1})")
        if K > N:
            fail("K", K, f"every class 0..K-1 must occur in y, impossible with N = {N} samples")
    counts = np.bincount(yh, minlength=K)
    if np.any(counts == 0):
        fail("y", yh, f"every class 0..K-1 must occur (class {int(np.argmin(counts))} is empty)")
    return asarray_like(yh.astype(np.int64), like), K, counts


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
