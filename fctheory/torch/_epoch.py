"""The numbers of one monitor epoch (:class:`fctheory.torch.NCMonitor`) from its moments: the class statistics, the
NC metrics, the distances to the regularised UFM optimum and the per-class values, over the classes present.

Three paths give the same numbers (tested against each other): one compiled call for host moments of at most
``fctheory._nc_kernels.JACOBI_MAX_K`` present classes (:func:`fctheory._nc_kernels.epoch_numbers`), one tiled
pass over the class pairs from ``pairs.LARGE_K`` present classes on (no K×K matrix), and the public functions
(:func:`fctheory.metrics.nc_summary_from_moments`, :func:`fctheory.nc_diagnosis.ufm_distances`) otherwise, which
also decide (and refuse) whatever the other two leave to them.

An absent class (no sample this epoch) has no mean: the moments of the present classes alone are used (their
rows; the pooled scatter has no term from an absent class). :class:`UFMReference` is the one place where the
epoch's class counts meet the UFM optimum.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._nc_kernels import KEYS as SUMMARY_KEYS
from .._nc_kernels import JACOBI_MAX_K, epoch_numbers
from ..metrics import ClassStatistics, class_statistics_from_moments, per_class
from ..metrics import pairs as _pairs
from ..metrics.summary import nc_summary_and_frames
from ..nc_diagnosis import applicable_result, ufm_distances
from ..nc_diagnosis.statistics import distances_from_kernel_norms
from ..ufm.gram import FrameGram, gram_distance_from_fit

_NO_BIAS = np.empty(0)


@dataclass(frozen=True)
class Comparison:
    """What an epoch is compared with: ``app`` (the :class:`fctheory.nc_diagnosis.UFMApplicability`, with the
    optimum) and ``rows`` (int64: the classes, i.e. the rows of W and b, that the optimum's Grams describe)."""

    app: object
    rows: np.ndarray


class UFMReference:
    """The regularised UFM optimum of a network's (loss, K, λ_W, λ_H, λ_b, bias), for an epoch's width and class
    counts; solved once per distinct (d, counts) (the counts of a training's epochs rarely change)."""

    def __init__(self, *, loss, K, lam_W, lam_H, lam_b, bias):
        self.loss, self.K, self.lam_W, self.lam_H, self.lam_b, self.bias = loss, K, lam_W, lam_H, lam_b, bias
        self._key, self._cmp = None, None

    def compare(self, d: int, counts) -> Comparison:
        """The optimum for width ``d`` and the epoch's class counts (K, zeros for the absent classes).

        The optimum of the classes present with their counts, compared with the classifier's rows of those
        classes: an absent class has no mean to compare, and the UFM optimum of a count vector with zeros is
        not available here (``applicable_result`` takes positive counts); this is the one function to change
        when it is (the optimum for the full counts, its W Gram against all K rows of W).
        """
        counts = np.asarray(counts, dtype=np.int64)
        rows = np.flatnonzero(counts)
        key = (int(d), tuple(counts.tolist()))
        if key != self._key:
            app = applicable_result(
                loss=self.loss,
                K=int(rows.size),
                d=int(d),
                counts=counts[rows],
                lam_W=self.lam_W,
                lam_H=self.lam_H,
                lam_b=self.lam_b,
                bias=self.bias,
            )
            self._key, self._cmp = key, Comparison(app, rows)
        return self._cmp


def _rows(A, rows, K):
    """The rows ``rows`` of a K-row array (itself when they are all of them)."""
    return A if A is None or rows.size == K else A[rows]


def numbers(m, W, b, ufm: UFMReference):
    """(counts, numbers) of the epoch's moments ``m`` (a :class:`fctheory.torch._moments._Moments`) and the
    classifier's (W, b) (NumPy float64 or None): the class counts (K, NumPy) and (statistics, summary, UFM
    distances, :class:`Comparison`), None when fewer than 2 classes are present (no metric is defined)."""
    counts = m.host_moments()[0] if m.host else m.on_host()[0]
    present = np.flatnonzero(counts)
    if present.size < 2:
        return counts, None
    got = _host_numbers(m, W, b, ufm) if m.host and present.size <= JACOBI_MAX_K else None
    if got is None and present.size >= _pairs.LARGE_K:
        got = _large_numbers(m, W, b, ufm)
    if got is not None:
        return counts, got
    st, summary = m.summary(W)
    cmp = ufm.compare(st.d, counts)
    K = counts.shape[0]
    # the body without its argument checks (see _Moments.summary()): st, W, b and the optimum are the monitor's
    distances = ufm_distances.__wrapped__(
        st, _rows(W, cmp.rows, K), _rows(b, cmp.rows, K), cmp.app.optimum, n_spl=cmp.app.n_spl
    )
    return counts, (st, summary, distances, cmp)


def _host_numbers(m, W, b, ufm):
    """The numbers of CPU moments from one compiled call (fctheory._nc_kernels.epoch_numbers: the kernels of
    nc_summary_from_moments and ufm_distances) on the present classes' rows, or None where the public functions
    must decide (inputs outside the kernels' range, a classifier of the wrong width, a bias the optimum does not
    have)."""
    counts, sums, scatter, sq, shift = m.host_moments()
    K, d = sums.shape
    cmp = ufm.compare(d, counts)
    opt = cmp.app.optimum  # the library's own optimum: its Grams and bias are float64 NumPy arrays
    if W is not None and W.shape != (K, d) or (b is not None and opt.bias is None):
        return None
    present = np.flatnonzero(counts)
    if not np.array_equal(cmp.rows, present):
        return None  # an optimum of other classes than the present ones: the public functions compare them
    if present.size < K:  # the present classes' moments (the scatter has no term of an absent class)
        counts, sums, sq, shift = counts[present], sums[present], sq[present], shift[present]
    Wp, bp = _rows(W, present, K), _rows(b, present, K)
    if not (isinstance(opt.means_gram, np.ndarray) and (W is None or isinstance(opt.W_gram, np.ndarray))):
        return None  # the optimum's Grams as frames: the public functions
    ok, means, mu_G, sigma_W, sigma_B, class_var, summary, norms, h_norm_sq = epoch_numbers(
        counts,
        sums,
        scatter,
        sq,
        shift,
        m.upper,
        np.empty((0, d)) if W is None else Wp,
        _NO_BIAS if b is None else bp,
        opt.means_gram,
        opt.means_gram if W is None else opt.W_gram,
        _NO_BIAS if b is None else opt.bias,
    )
    if not ok:
        return None
    st = ClassStatistics(means, mu_G, counts.astype(np.int64), sigma_W, sigma_B, class_var, present, K)
    summary = dict(zip(SUMMARY_KEYS if W is not None else SUMMARY_KEYS[:8], summary.tolist()))
    kw = dict(K=present.size, n_spl=cmp.app.n_spl, W=W is not None, b=b is not None)
    return st, summary, distances_from_kernel_norms(norms, h_norm_sq / int(counts.sum()), opt, **kw), cmp


def _large_numbers(m, W, b, ufm):
    """The numbers from pairs.LARGE_K present classes on: the statistics of the moments, nc_summary's one tiled
    pass over the class pairs (two with a classifier), and the distances to the optimum's Grams from that pass's
    frame fits (no K×K matrix, no further pass); None where the public functions must decide (a classifier of
    another width, an optimum whose Grams are not frames)."""
    counts, sums, scatter, sq, shift = m.on_host()
    K, d = sums.shape
    cmp = ufm.compare(d, counts)
    opt = cmp.app.optimum
    if (W is not None and W.shape != (K, d)) or not isinstance(opt.means_gram, FrameGram):
        return None
    if not np.array_equal(cmp.rows, np.flatnonzero(counts)):
        return None  # an optimum of other classes than the present ones: the public functions compare them
    if m.upper:
        scatter = np.triu(scatter) + np.triu(scatter, 1).T
    st = class_statistics_from_moments.__wrapped__(counts, sums, scatter, sq, shift)
    summary, frames = nc_summary_and_frames.__wrapped__(st, W)
    Wc, bc = _rows(W, cmp.rows, K), _rows(b, cmp.rows, K)
    use_b = b is not None and opt.bias is not None
    norms = np.full(6, math.nan)  # the layout of fctheory._nc_kernels.ufm_norms
    norms[0], norms[1] = gram_distance_from_fit(frames["means"], opt.means_gram, st.means), opt.means_gram.norm()
    if W is not None:
        norms[2], norms[3] = gram_distance_from_fit(frames["W"], opt.W_gram, Wc), opt.W_gram.norm()
        norms[4] = float(np.einsum("ij,ij->", Wc, Wc))
    if use_b:
        norms[5] = float(np.linalg.norm(bc - opt.bias))
    kw = dict(K=st.K, n_spl=cmp.app.n_spl, W=W is not None, b=use_b)
    return st, summary, distances_from_kernel_norms(norms, st.H_norm_sq / st.N, opt, **kw), cmp


def _gram_diagonal(G, n):
    """The diagonal of an optimum's Gram (an array, or a :class:`fctheory.ufm.gram.FrameGram`), n entries."""
    if isinstance(G, FrameGram):
        return np.full(n, G.scale * (1.0 - 1.0 / G.K) if G.kind == "etf" else G.scale)
    return np.diagonal(np.asarray(G, dtype=np.float64)).copy()


def class_values(st, W, cmp: Comparison | None) -> dict:
    """The per-class values of an epoch (:func:`fctheory.metrics.per_class` of its statistics and classifier) as
    columns, with the UFM optimum's per-class norms beside them: ``ufm_mean_norm`` (√ of its means Gram's diagonal)
    and ``ufm_w_norm`` (of its W Gram's), for the classes its Grams describe (NaN for the others)."""
    pc = per_class(st, W)
    cols = {"class": pc.classes, "count": pc.counts, "frequency": pc.frequency, "var": pc.var}
    cols.update(var_rel=pc.var_rel, cdnv=pc.cdnv, mean_norm=pc.mean_norm, centred_norm=pc.centred_norm)
    if W is not None:
        cols.update(w_norm=pc.w_norm, w_cos=pc.w_cos)
    if cmp is not None:
        opt = cmp.app.optimum
        at = np.searchsorted(cmp.rows, pc.classes)  # each present class's row of the optimum
        ok = (at < cmp.rows.size) & (cmp.rows[np.minimum(at, cmp.rows.size - 1)] == pc.classes)
        for name, G in (("ufm_mean_norm", opt.means_gram), ("ufm_w_norm", opt.W_gram if W is not None else None)):
            if G is not None:
                diag = np.sqrt(np.maximum(_gram_diagonal(G, cmp.rows.size), 0.0))
                cols[name] = np.where(ok, diag[np.minimum(at, cmp.rows.size - 1)], math.nan)
    return cols
