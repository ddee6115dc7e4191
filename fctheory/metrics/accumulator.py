"""Streaming class statistics (:class:`NCAccumulator`): Chan et al.'s pairwise merge of per-batch statistics,
for feature sets that do not fit in memory; its metrics are those of :mod:`fctheory.metrics.nc`."""

from __future__ import annotations

import numpy as np

from .._backend import array_namespace_of, asarray_like, copy_of, get_namespace, to_numpy
from .._budget import check_work
from .._numerics import ldexp
from .._validate import Bool, Choice, Int, Real, fail, public, public_class
from ._input import (
    _DDOF,
    _GMEAN,
    _H,
    _M,
    _Y,
    _exponent,
    Present,
    _features,
    _scale_back,
    present_classes,
)
from .moments import ClassStatistics, _global_mean
from .duality import _check_W, _nc3_from
from .simplex import nc2
from .variability import _NC1_VARIANTS, _RANK, _RTOL, _cdnv_from, _nc1_from_stats, _trace_variant


@public_class
class NCAccumulator:
    """Streaming class statistics for feature sets that do not fit in memory.

    Feed batches with :meth:`update`; per class it keeps the count, the mean and the scatter
    Σ (h − μ_k)(h − μ_k)ᵀ, merged with Chan et al.'s pairwise update (each batch's own statistics
    are two-pass), so the result equals :func:`class_statistics` on the concatenated data up to
    rounding. Each class is accumulated relative to its first sample (the mean is kept as the offset
    from it), so classes far narrower than their distance from the origin keep the scatter's relative
    accuracy whatever the batching. Memory: 2·K·d + K·d² floats (use ``full_scatter=False`` to keep only the per-class
    traces, enough for :meth:`cdnv` and ``nc1(variant="trace_ratio")``), sized against the budget
    when the accumulator is built.

    The statistics are stored for the features rescaled exactly by a power of two 2^-e (e the
    largest exponent seen so far, earlier statistics rescaled when a larger batch arrives), so
    features of any magnitude never overflow; the scale-invariant metrics are computed in that scale
    and :meth:`statistics` scales back.

    Batches may be PyTorch tensors (CPU or CUDA) or CuPy arrays: the statistics then live in that
    library on the first batch's device (the first batch fixes them; later batches are brought there),
    accumulated in float64 whatever the batches' dtype.

    Parameters
    ----------
    K : int
        Number of classes (≥ 2).
    d : int
        Feature dimension (≥ 1); ``m`` is its deprecated 1.0 name.
    full_scatter : bool
        Keep the d×d scatter of every class (needed by :meth:`statistics`, :meth:`nc1` "papyan").
    backend : {"numpy", "numba", "cupy"}
        Where the statistics live until the first batch; a PyTorch or CuPy first batch moves them to
        its own library and device.

    Example
    -------
    >>> acc = NCAccumulator(K=10, d=512)
    >>> for Hb, yb in batches: acc.update(Hb, yb)          # doctest: +SKIP
    >>> acc.nc1(), acc.cdnv(), acc.nc2(), acc.nc3(W)        # doctest: +SKIP
    """

    @public(
        K=Int(min=2), d=Int(min=1), full_scatter=Bool(), backend=Choice("numpy", "numba", "cupy"), renamed={"m": "d"}
    )
    def __init__(self, K: int, d: int, *, full_scatter: bool = True, backend: str = "numpy"):

        floats = 2 * K * d + 2 * K + (K * d * d if full_scatter else 0)  # means, their references, counts, traces
        check_work(
            "d" if full_scatter else "K",
            d if full_scatter else K,
            bytes=8 * floats,
            what="NCAccumulator (2*K*d means and references" + (" and K*d*d scatters)" if full_scatter else ")"),
        )
        self.K = K
        self.d = d
        self.xp = get_namespace(backend)
        xp = self.xp
        self.full = bool(full_scatter)
        self.n = np.zeros(self.K, dtype=np.int64)
        # each class is accumulated relative to its first sample c_k (translation invariance, as the two-pass
        # statistics subtract a sample first): the stored mean is μ_k − c_k, whose rows stay as small as the
        # class's spread, so nearly collapsed classes keep the relative accuracy of their scatter
        self._ref = xp.zeros((self.K, self.d))
        self._smean = xp.zeros((self.K, self.d))
        self.scatter = xp.zeros((self.K, self.d, self.d)) if self.full else None
        self.sq = xp.zeros(self.K)  # trace of the scatter per class
        self._e = None  # the stored statistics are those of H·2^-e

    @property
    def mean(self):
        """The class means μ_k seen so far (K × d, at the stored scale 2^-e; zero rows for unseen classes)."""
        return self._ref + self._smean

    def _rescale(self, k):
        # the stored statistics were of H·2^-e_old; make them of H·2^-(e_old + k)
        xp = self.xp
        with np.errstate(under="ignore"):
            self._ref = ldexp(self._ref, -k, xp)
            self._smean = ldexp(self._smean, -k, xp)
            self.sq = ldexp(self.sq, -2 * k, xp)
            if self.full:
                self.scatter = ldexp(self.scatter, -2 * k, xp)

    def _adopt(self, Hb):
        """Before any batch: keep the statistics in the namespace and on the device of a tensor/CuPy batch."""
        if self._e is None and array_namespace_of(Hb) is not np and array_namespace_of(self._smean) is np:
            self.xp = array_namespace_of(Hb)
            self._ref = asarray_like(self._ref, Hb)
            self._smean = asarray_like(self._smean, Hb)
            self.sq = asarray_like(self.sq, Hb)
            if self.full:
                self.scatter = asarray_like(self.scatter, Hb)
        return asarray_like(Hb, self._smean)

    def _merge(self, k, Xk):
        """Chan et al.'s pairwise update of class k with the batch rows Xk (at the stored scale)."""
        xp = self.xp
        nb = Xk.shape[0]
        na = int(self.n[k])
        if na == 0:
            self._ref[k] = Xk[0]
        Xk = Xk - self._ref[k]  # exact for rows within a factor 2 of the reference (Sterbenz)
        mb = xp.mean(Xk, axis=0)
        Dk = Xk - mb
        tot = na + nb
        delta = mb - self._smean[k]
        self._smean[k] = self._smean[k] + delta * (nb / tot)
        w = na * nb / tot
        self.sq[k] = self.sq[k] + xp.sum(Dk * Dk) + w * xp.sum(delta * delta)
        if self.full:
            self.scatter[k] = self.scatter[k] + Dk.T @ Dk + w * (delta[:, None] * delta[None, :])
        self.n[k] = tot

    @public(H=_H, y=_Y)
    def update(self, H, y) -> "NCAccumulator":
        """Add a batch: features H (N × d) with labels y (N,) in [0, K−1]; returns the accumulator.

        Everything is checked before anything is changed, so a refused batch leaves the
        accumulator as it was. Negative labels are refused (never wrapped).
        """
        _, Hb = _features(H)
        if Hb.shape[1] != self.d:
            fail("H", to_numpy(Hb), f"must have d = {self.d} columns, got shape {tuple(Hb.shape)}")
        yh = np.asarray(to_numpy(y))
        if yh.ndim != 1 or yh.shape[0] != Hb.shape[0] or yh.dtype.kind not in "iu":
            fail("y", yh, f"must be a 1-D integer label array of length N = {Hb.shape[0]} (one label per row of H)")
        if yh.size and (yh.min() < 0 or yh.max() >= self.K):
            fail("y", yh, f"labels must lie in [0, K-1] = [0, {self.K - 1}]")
        Hb = self._adopt(Hb)
        xp = self.xp
        e = _exponent(xp, Hb)
        if self._e is None:
            self._e = e
        elif e > self._e:
            self._rescale(e - self._e)
            self._e = e
        with np.errstate(under="ignore"):
            Hb = ldexp(Hb, -self._e, xp) if self._e else Hb
        for k in np.unique(yh):
            self._merge(int(k), Hb[asarray_like(np.nonzero(yh == k)[0], Hb)])
        return self

    def _present(self) -> Present:
        """The classes seen so far (at least 2): every metric is computed over them, as if the classes not yet
        seen were removed from K."""
        return present_classes(self.n, "y")

    def _mu_G(self, p, global_mean):
        return _global_mean(self.xp, p.rows(self.mean), self.n[p.classes], global_mean)

    def _scaled_statistics(self, global_mean="class_means", ddof=0) -> ClassStatistics:
        p = self._present()
        if not self.full:
            fail("full_scatter", False, "Σ_W needs full_scatter=True")
        N = int(self.n.sum())
        sigma_W = self.xp.sum(self.scatter, axis=0) / N  # an unseen class's scatter is 0
        mu_G = self._mu_G(p, global_mean)
        means = p.rows(self.mean)
        Mc = means - mu_G
        sigma_B = (Mc.T @ Mc) / Mc.shape[0]
        n = self.n[p.classes]
        var = self._class_var(p, ddof)
        return ClassStatistics(copy_of(means), mu_G, n.copy(), sigma_W, sigma_B, var, p.classes, p.num_classes)

    def _class_var(self, p, ddof):
        n = self.n[p.classes]
        if ddof and np.any(n <= ddof):
            fail("ddof", ddof, "the unbiased class variance needs >= 2 samples per class")
        return p.rows(self.sq) / asarray_like((n - ddof).astype(np.float64), self.sq)

    @public(global_mean=_GMEAN, ddof=_DDOF)
    def statistics(self, *, global_mean: str = "class_means", ddof: int = 0) -> ClassStatistics:
        """The :class:`ClassStatistics` of everything seen so far (needs ``full_scatter``); the options
        are those of :func:`class_statistics`."""
        st = self._scaled_statistics(global_mean, ddof)
        e, show = self._e, "the accumulated features"
        return ClassStatistics(
            _scale_back("H", show, st.means, e, "the class means"),
            _scale_back("H", show, st.global_mean, e, "the global mean"),
            st.counts,
            _scale_back("H", show, st.sigma_W, 2 * e, "Σ_W"),
            _scale_back("H", show, st.sigma_B, 2 * e, "Σ_B"),
            _scale_back("H", show, st.class_var, 2 * e, "the class variances"),
            st.classes,
            st.num_classes,
        )

    @public(variant=_NC1_VARIANTS, global_mean=_GMEAN, pinv_rtol=_RTOL, rank=_RANK, legacy_positional=("variant",))
    def nc1(
        self,
        *,
        variant: str = "papyan",
        global_mean: str = "class_means",
        pinv_rtol: float | None = None,
        rank: str = "auto",
    ) -> float:
        """NC1 of everything seen so far (see :func:`nc1` for the options)."""
        xp = self.xp
        if variant != "papyan" and not self.full:
            p = self._present()
            Mc = p.rows(self.mean) - self._mu_G(p, global_mean)
            trB = float(xp.sum(Mc * Mc)) / Mc.shape[0]
            return _trace_variant(float(xp.sum(self.sq)) / int(self.n.sum()), trB, variant)
        st = self._scaled_statistics(global_mean)
        return _nc1_from_stats(xp, st.means, st.global_mean, st.sigma_W, st.K, variant, pinv_rtol, rank)

    @public(matrix=Bool(), ddof=_DDOF, dist_exp=Real(lo=0.0, lo_open=True, hi=64.0), reduction=Choice("mean", "cv"))
    def cdnv(self, *, matrix: bool = False, ddof: int = 0, dist_exp: float = 1.0, reduction: str = "mean"):
        """CDNV of everything seen so far (see :func:`cdnv` for the options)."""
        p = self._present()
        return _cdnv_from(p.rows(self.mean), self._class_var(p, ddof), matrix, dist_exp, reduction, self._e)

    @public(variant=Choice("etf", "identity", "zhu", "cosine"), global_mean=_GMEAN, legacy_positional=("variant",))
    def nc2(self, *, variant: str = "etf", global_mean: str = "class_means") -> float:
        """NC2 of the class means seen so far (see :func:`nc2`); ``global_mean="samples"`` centres
        at the sample mean (``nc2(means, counts=n)``)."""
        p = self._present()
        return nc2(p.rows(self.mean), variant=variant, counts=self.n[p.classes] if global_mean == "samples" else None)

    @public(
        W=_M,
        variant=Choice("duality", "duality_squared", "etf", "cosine"),
        global_mean=_GMEAN,
        legacy_positional=("variant",),
    )
    def nc3(self, W, *, variant: str = "duality", global_mean: str = "class_means") -> float:
        """NC3 of the classifier W (K × d) against the class means seen so far (see :func:`nc3`)."""
        if variant == "cosine":
            fail("variant", variant, "the per-sample cosine NC3 needs the samples; use nc3(W, H, y)")
        p = self._present()
        W = p.rows(_check_W(W, self.K, self.d, self.mean))
        return _nc3_from(self.xp, W, p.rows(self.mean), self._mu_G(p, global_mean), None, None, variant)
