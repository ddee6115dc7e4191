"""Every statistics-based NC metric at once (:func:`nc_summary`), from class statistics or from one-pass
moments (:func:`nc_summary_from_moments`, the end of a training monitor's epoch).

One centring of the class means, one exact rescaling, one set of row norms and one cosine matrix (or one
tiled pass over the class pairs from ``pairs.LARGE_K`` classes on) serve every metric; each entry is computed
by the kernel of its own public function (:mod:`fctheory.metrics.variability`,
:mod:`fctheory.metrics.simplex`, :mod:`fctheory.metrics.duality`). Host moments of at most
``fctheory._nc_kernels.JACOBI_MAX_K`` classes take one compiled call (:mod:`fctheory._nc_kernels`).
"""

from __future__ import annotations

import math

import numpy as np

from .._backend import array_namespace_of, asarray_like, to_numpy
from .._numerics import pow2_scale
from .._validate import Bool, fail, public
from . import pairs as _tiles
from ._input import (
    _M,
    _MOMENTS,
    _scale_back,
    _unit,
)
from .moments import (
    ClassStatistics,
    _global_mean,
    class_statistics_from_moments,
)
from .simplex import (
    _offdiag,
    _check_gram_size,
    _centred_unit,
    _nc2_from,
    _row_norms,
    _equinorm_of_norms,
    _row_normalised,
    _equiangularity_of_cosines,
)
from .variability import (
    _nc1_from_stats,
    _ST,
    _statistics_means,
    _centred_means,
    _cdnv_from,
)
from .duality import (
    _check_W,
    _nc3_from,
)

__all__ = ["nc_summary", "nc_summary_and_frames", "nc_summary_from_moments"]


def _or_nan(fn, *args):
    """fn(*args) as a float, or NaN where the metric is undefined (refused with FCTheoryError)."""
    try:
        return float(fn(*args))
    except ValueError:
        return math.nan


def _cosines(xp, Mc, nr):
    """The K×K cosine matrix (NumPy) of the rows of Mc whose norms are nr; None when a row is zero."""
    try:
        U = _row_normalised(xp, Mc, "M", nr)
    except ValueError:
        return None
    return to_numpy(U @ U.T)


def _mean_cosine(C):
    """The mean pairwise cosine (the off-diagonal mean of C); NaN when the cosines are undefined."""
    if C is None:
        return math.nan
    off = C[_offdiag(C.shape[0])]
    return float(off.sum()) / off.shape[0]


def _classifier_entries(xp, W, Mc, frames=False):
    """The classifier's entries of :func:`nc_summary` (W checked, in the namespace of the unit means Mc); with
    ``frames`` (K ≥ pairs.LARGE_K) also the FrameFit of W's Gram, from the one tiled pass that gives nc2_W."""
    show = f"array of shape {tuple(W.shape)}"
    Wu, eu = _unit(xp, W)
    Wc, ec = _centred_unit(xp, Wu, True, with_exponent=True)  # W·2^-eu is exact: its centred rows, rescaled
    fit = None
    if frames:
        fit = _tiles.frame_fit(Wc, eu + ec, _global_mean(xp, to_numpy(W), None, "class_means"))[0]
    out = {
        "nc2_W": _or_nan(_nc2_from, xp, Wc, "etf") if fit is None else fit.nc2,
        "equinorm_W": _or_nan(_equinorm_of_norms, to_numpy(_row_norms(xp, Wu)), eu, False, False, "cv", show),
        "mean_cos_W": _tiles.mean_cosine(to_numpy(Wc))
        if Wc.shape[0] >= _tiles.LARGE_K
        else _mean_cosine(_cosines(xp, Wc, _row_norms(xp, Wc))),
        "W_norm_sq": _scale_back("W", show, float((Wu * Wu).sum()), 2 * eu, "‖W‖²"),  # at unit scale: no overflow
        "nc3": _or_nan(_nc3_from, xp, Wu, Mc, 0.0, None, None, "duality"),
    }
    return (out, fit) if frames else out


@public(st=_ST, W=_M.or_none())
def nc_summary(st: ClassStatistics, W=None) -> dict:
    """Every statistics-based NC metric at once: NC1, CDNV, NC2, equinorm, equiangularity (and NC3 with W).

    One centring M̃ = M − 1μ_Gᵀ of the class means (μ_G the mean of the class means), one exact power-of-two
    rescaling, one set of row norms and one cosine matrix serve every metric; each entry is computed by
    the kernel of its own public function and equals it (bitwise, on the same statistics):

    ==========================  ======================================================================
    ``nc1``                     ``nc1_from_statistics(st)`` (review eq. (4), Papyan's tr(Σ_W Σ_B⁺)/K)
    ``nc1_trace_ratio``         ``nc1_from_statistics(st, variant="trace_ratio")``
    ``cdnv``                    ``cdnv_from_statistics(st)`` (review eq. (51))
    ``nc2``                     ``nc2(st.means)`` (distance of M̃M̃ᵀ to a scaled simplex ETF)
    ``equinorm_means``          ``equinorm(st.means)``
    ``equiangularity_means``    ``equiangularity(st.means)`` (review eq. (6), "max_angle")
    ``mean_cos_means``          mean pairwise cosine of the rows of M̃ (−1/(K−1) for a simplex)
    ``mean_norm_means``         ``equinorm(st.means, reduction="mean")``, the mean of ‖m̃_k‖
    ``nc2_W``                   ``nc2(W)``
    ``equinorm_W``              ``equinorm(W, center=False)``
    ``mean_cos_W``              mean pairwise cosine of the centred rows of W
    ``W_norm_sq``               ‖W‖_F²
    ``nc3``                     ``nc3_from_statistics(W, st)`` (Papyan's self-duality)
    ==========================  ======================================================================

    Parameters
    ----------
    st : ClassStatistics
        Uses ``means``, ``counts``, ``sigma_W`` and ``class_var`` (of the classes present, ``st.classes``).
    W : array_like, (K, d), optional
        The classifier (rows w_k, K = ``st.num_classes``): adds the entries from ``nc2_W`` on, computed over
        its rows of the classes present; brought to the statistics' namespace and device.

    Returns
    -------
    dict
        The entries above, in that order; an entry whose metric is undefined for these statistics (the
        function would raise FCTheoryError, e.g. NC1 when all class means coincide) is NaN.
    """
    xp, means = _statistics_means(st)
    K = st.K
    _summary_budget(K, st.d, W is not None)
    Mc, e = _centred_means(xp, means, st.counts, "class_means")
    sigma_W = pow2_scale(asarray_like(st.sigma_W, means, dtype=xp.float64), 2 * e, xp)
    class_var = pow2_scale(asarray_like(st.class_var, means, dtype=xp.float64), 2 * e, xp)
    if K >= _tiles.LARGE_K:
        return _summary_tiled(xp, Mc, e, sigma_W, class_var, _present_rows(st, W, means), means)[0]
    nr = _row_norms(xp, Mc)
    nr_h, C = to_numpy(nr), _cosines(xp, Mc, nr)
    show = f"array of shape {tuple(means.shape)}"
    out = {
        "nc1": _or_nan(_nc1_from_stats, xp, Mc, 0.0, sigma_W, K, "papyan", None, "auto", "st"),
        "nc1_trace_ratio": _or_nan(_nc1_from_stats, xp, Mc, 0.0, sigma_W, K, "trace_ratio", None, "auto", "st"),
        "cdnv": _or_nan(_cdnv_from, Mc, class_var, False, 1.0, "mean", e, "st"),
        "nc2": _or_nan(_nc2_from, xp, Mc, "etf"),
        "equinorm_means": _or_nan(_equinorm_of_norms, nr_h, e, False, False, "cv", show),
        "equiangularity_means": math.nan if C is None else _or_nan(_equiangularity_of_cosines, C, "max_angle"),
        "mean_cos_means": _mean_cosine(C),
        "mean_norm_means": _or_nan(_equinorm_of_norms, nr_h, e, False, False, "mean", show),
    }
    if W is not None:
        out.update(_classifier_entries(xp, _present_rows(st, W, means), Mc))
    return out


def _summary_budget(K, d, with_W):
    """Size :func:`nc_summary`: K×K matrices below _tiles.LARGE_K classes, else one tiled pass (two with W)."""
    _check_gram_size(
        "st", f"statistics of K = {K} classes", K, "nc_summary (K x K Gram and pair matrices)", d, 2 if with_W else 1
    )


def _present_rows(st, W, means):
    """The classifier's rows of the classes present in ``st`` (W checked: K = ``st.num_classes`` rows; float64,
    in the namespace and on the device of the means), or None without a classifier."""
    return None if W is None else st.present.rows(_check_W(W, st.num_classes, st.d, means))


def _summary_tiled(xp, Mc, e, sigma_W, class_var, W, means):
    """(nc_summary, {"means": FrameFit, "W": FrameFit or None}) from the centred unit means Mc (K ≥
    pairs.LARGE_K): one tiled pass over the class pairs gives the CDNV, NC2 and the cosines' sums (and the
    means' Gram against any scaled frame); NC1 and the norms are O(K·d + d²) as below pairs.LARGE_K."""
    K = Mc.shape[0]
    show = f"array of shape {tuple(means.shape)}"
    nr = _row_norms(xp, Mc)
    nr_h = to_numpy(nr)
    cos_ok = bool(np.all(nr_h > 0))
    mu = _global_mean(xp, to_numpy(means), None, "class_means")
    want = ("cdnv",) + (("cos",) if cos_ok else ())
    fit, s = _tiles.frame_fit(Mc, e, mu, var=to_numpy(class_var), want=want)
    P = K * (K - 1) / 2
    out = {
        "nc1": _or_nan(_nc1_from_stats, xp, Mc, 0.0, sigma_W, K, "papyan", None, "auto", "st"),
        "nc1_trace_ratio": _or_nan(_nc1_from_stats, xp, Mc, 0.0, sigma_W, K, "trace_ratio", None, "auto", "st"),
        "cdnv": math.nan if s["coincide"] else s["cdnv_sum"] / P,
        "nc2": fit.nc2,
        "equinorm_means": _or_nan(_equinorm_of_norms, nr_h, e, False, False, "cv", show),
        "equiangularity_means": s["cos_abs"] / P if cos_ok else math.nan,
        "mean_cos_means": s["cos_sum"] / P if cos_ok else math.nan,
        "mean_norm_means": _or_nan(_equinorm_of_norms, nr_h, e, False, False, "mean", show),
    }
    fits = {"means": fit, "W": None}
    if W is not None:
        entries, fits["W"] = _classifier_entries(xp, W, Mc, frames=True)
        out.update(entries)
    return out, fits


@public(st=_ST, W=_M.or_none())
def nc_summary_and_frames(st: ClassStatistics, W=None) -> tuple:
    """:func:`nc_summary` and the Grams of the class means and of W against scaled frames.

    Returns ``(summary, frames)``: the dict of :func:`nc_summary` and, from ``pairs.LARGE_K`` classes on,
    ``{"means": FrameFit, "W": FrameFit or None}`` (:class:`fctheory.metrics.pairs.FrameFit`: ‖MMᵀ − aE‖ and
    ‖MMᵀ − aI‖ for any a, e.g. the UFM optimum's Grams, without a K×K matrix and without another pass over the
    class pairs); below it ``frames`` is None (the K×K Grams are small).
    """
    xp, means = _statistics_means(st)
    K = st.K
    if K < _tiles.LARGE_K:
        return nc_summary.__wrapped__(st, W), None
    _summary_budget(K, st.d, W is not None)
    Mc, e = _centred_means(xp, means, st.counts, "class_means")
    sigma_W = pow2_scale(asarray_like(st.sigma_W, means, dtype=xp.float64), 2 * e, xp)
    class_var = pow2_scale(asarray_like(st.class_var, means, dtype=xp.float64), 2 * e, xp)
    return _summary_tiled(xp, Mc, e, sigma_W, class_var, _present_rows(st, W, means), means)


@public(**_MOMENTS, W=_M.or_none(), upper=Bool())
def nc_summary_from_moments(counts, sums, scatter, sq, shift, W=None, *, upper: bool = False):
    """:func:`class_statistics_from_moments` and :func:`nc_summary` of its result, in one call.

    The end of a training monitor's epoch: the class statistics of one-pass moments and every
    statistics-based NC metric. Host (NumPy float64) moments of at most 32 classes in the ordinary range of
    scales are computed by one compiled kernel (``fctheory._nc_kernels``: the same steps and exact
    power-of-two rescalings, NC1's singular vectors by one-sided Jacobi, a hundred array calls fewer), equal
    to the two functions to the rounding of their float64 sums (tested to 1e-12 relative, NC1 within its
    conditioning); moments of another library (CuPy, PyTorch: their device), more classes, extreme scales
    (a rescaling exponent beyond ±200) and input that the functions refuse take the two functions themselves.
    The kernel is compiled on first use (a few seconds, once: numba caches it on disk).

    Parameters
    ----------
    counts, sums, scatter, sq, shift : array_like
        The moments of :func:`class_statistics_from_moments` (``global_mean="class_means"``).
    W : array_like, (K, d), optional
        The classifier, as in :func:`nc_summary`.
    upper : bool
        Only the upper triangle of ``scatter`` (j ≤ l) is filled; the rest is ignored (a symmetric
        accumulation that skips half the products).

    Returns
    -------
    (ClassStatistics, dict)
        The statistics and the dict of :func:`nc_summary`.
    """
    got = _kernel_summary(counts, sums, scatter, sq, shift, W, upper)
    if got is not None:
        return got
    if upper:
        xp = array_namespace_of(scatter)
        scatter = xp.triu(scatter) + xp.triu(scatter, k=1).T
    st = class_statistics_from_moments.__wrapped__(counts, sums, scatter, sq, shift)
    if W is not None and tuple(W.shape) != (st.num_classes, st.d):
        K, d = st.num_classes, st.d
        fail("W", f"array of shape {tuple(W.shape)}", f"must have shape (K, d) = ({K}, {d}) like the statistics")
    return st, nc_summary.__wrapped__(st, W)


_F64 = np.dtype(np.float64)


def _kernel_summary(counts, sums, scatter, sq, shift, W, upper):
    """The kernel's (statistics, summary) of NumPy float64 moments, or None where the reference path must decide
    (other types and libraries included)."""
    for a in (sums, scatter, sq, shift, sums if W is None else W):
        if type(a) is not np.ndarray or a.dtype != _F64:
            return None
    counts = np.asarray(counts)
    if counts.dtype.kind not in "iu" or sums.ndim != 2:
        return None
    K, d = sums.shape
    shapes = (counts.shape, sq.shape, shift.shape, scatter.shape, (K, d) if W is None else W.shape)
    if shapes != ((K,), (K,), (K, d), (d, d), (K, d)):
        return None  # refused by the reference path, naming the shapes
    classes = np.flatnonzero(counts > 0)
    if classes.size < K:  # absent classes: the kernel takes the moments of the present ones
        if classes.size < 2 or np.any(counts < 0):
            return None  # refused by the reference path
        counts, sums, sq, shift = counts[classes], sums[classes], sq[classes], shift[classes]
        W = None if W is None else W[classes]
    _summary_budget(classes.size, d, W is not None)
    from .._nc_kernels import JACOBI_MAX_K, KEYS, statistics_and_summary  # noqa: PLC0415 - numba: on first use

    if classes.size > JACOBI_MAX_K:
        return None  # the kernel's Jacobi SVD takes at most JACOBI_MAX_K classes: the reference path decides
    counts = counts.astype(np.int64)  # a copy: the statistics' own
    ok, means, mu_G, sigma_W, sigma_B, class_var, out = statistics_and_summary(
        counts, sums, scatter, sq, shift, upper, np.empty((0, d)) if W is None else W
    )
    if not ok:
        return None
    st = ClassStatistics(means, mu_G, counts, sigma_W, sigma_B, class_var, classes, K)
    keys = KEYS if W is not None else KEYS[:8]
    return st, dict(zip(keys, out.tolist()))
