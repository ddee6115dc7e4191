"""Class statistics of features: two-pass (:func:`class_statistics`) and from one-pass moments
(:func:`class_statistics_from_moments`), the :class:`ClassStatistics` every statistics-based NC metric takes.

Conventions as in :mod:`fctheory.metrics.nc` (H is N × d, samples as rows; float64; two passes, never
E[x²] − E[x]²; an exact power-of-two rescaling first, so any magnitude gives finite statistics).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._backend import asarray_like, to_numpy
from .._budget import check_work
from .._numerics import pow2_scale
from .._validate import fail, public, result_type
from ._input import (
    _DDOF,
    _GMEAN,
    _H,
    _KOPT,
    _MOMENTS,
    _Y,
    _exponent,
    _features,
    Present,
    _labels,
    present_classes,
    _onehot,
    _scale_back,
    _scale_back_unchecked,
    _unit,
)


@result_type
@dataclass(frozen=True)
class ClassStatistics:
    """Class statistics of features H (N × d) with labels y: O(K·d + d²) numbers from which NC1, CDNV,
    NC2 and NC3 follow without the features (:func:`nc1_from_statistics`, :func:`cdnv_from_statistics`,
    :func:`nc3_from_statistics`).

    Built by :func:`class_statistics` (two passes over in-memory features),
    :meth:`NCAccumulator.statistics` (streaming) or :func:`class_statistics_from_moments` (one-pass
    moments, e.g. of a training monitor). The arrays are of the features' library, on their device.

    Attributes
    ----------
    means : (K, d) class means μ_k.
    global_mean : (d,) μ_G = (1/K)Σ_k μ_k (or the sample mean, ``global_mean="samples"``).
    counts : (K,) samples per class (NumPy int64).
    sigma_W : (d, d) within-class covariance (1/N)Σ (h − μ_{y})(h − μ_{y})ᵀ.
    sigma_B : (d, d) between-class covariance (1/K)Σ_k (μ_k − μ_G)(μ_k − μ_G)ᵀ.
    class_var : (K,) Var_k = Σ_{h in class k} ‖h − μ_k‖² / (n_k − ddof) (CDNV's numerator terms).
    classes : (K,) the label of each row (NumPy int64): 0..K−1 when every class is present. A class without
        a sample has no row: the statistics are those of the K_p classes present (``K`` is K_p), and every
        metric of them is computed over those classes, as if the absent ones were removed from K.
    num_classes : int, the number of classes K the labels were drawn from (≥ the rows; the classifier's rows).
    """

    means: object
    global_mean: object
    counts: np.ndarray
    sigma_W: object
    sigma_B: object
    class_var: object
    classes: np.ndarray | None = None
    num_classes: int | None = None

    def __post_init__(self):
        if self.classes is None:
            object.__setattr__(self, "classes", np.arange(self.means.shape[0], dtype=np.int64))
        if self.num_classes is None:
            object.__setattr__(self, "num_classes", int(self.classes[-1]) + 1 if self.classes.size else 0)

    @property
    def present(self) -> Present:
        """The present classes (:class:`fctheory.metrics._input.Present`: labels and K)."""
        return Present(self.classes, self.num_classes)

    @property
    def absent(self) -> int:
        """How many of the ``num_classes`` classes have no sample."""
        return self.num_classes - self.K

    @property
    def K(self) -> int:
        return int(self.means.shape[0])

    @property
    def N(self) -> int:
        return int(self.counts.sum())

    @property
    def d(self) -> int:
        return int(self.means.shape[1])

    @property
    def balanced(self) -> bool:
        """Whether every class has the same number of samples."""
        return bool(np.all(self.counts == self.counts[0]))

    @property
    def H_norm_sq(self) -> float:
        """‖H‖_F² = Σ_k n_k‖μ_k‖² + N·tr Σ_W (the UFM's feature penalty term, over all N samples)."""
        n = np.asarray(self.counts, dtype=np.float64)
        if type(self.means) is not np.ndarray:
            n = asarray_like(n, self.means)
        return float(n @ (self.means * self.means).sum(axis=1)) + self.N * float(self.sigma_W.trace())


def _first_pass(H, y, K, shift=False):
    """(xp, H, y, K, counts, Y one-hot, class means, deviations D = H − μ_y, e, present) without any d×d matrix.

    Over the classes present only (:class:`~fctheory.metrics._input.Present` ``present``): ``K`` is their
    number K_p, ``y`` their labels renumbered 0..K_p−1, ``counts`` and the means theirs. H is rescaled exactly
    by 2^-e first (every quantity below is then of H·2^-e). With ``shift`` the returned H and class means are
    those of H − h_0 (h_0 the first row; exact when the rows share a large offset, Sterbenz's lemma): only for
    translation-invariant callers.
    """
    xp, H = _features(H)
    y, K, counts, present = _labels(y, H.shape[0], K, H)
    H, e = _unit(xp, H)
    Y = _onehot(xp, y, K)
    cnt = asarray_like(counts.astype(np.float64), H)[:, None]
    # subtract each class's first sample before averaging: for nearly collapsed classes, and for
    # features sharing a large offset, h − rep is exact (Sterbenz) and the small remainders keep
    # full relative accuracy; a class whose samples all coincide gets that sample as exact mean
    yh = to_numpy(y)
    first = np.full(K, -1, dtype=np.int64)
    first[yh[::-1]] = np.arange(yh.size - 1, -1, -1)
    rep = H[asarray_like(first, H)]
    Hr = H - rep[y]
    mr = (Y.T @ Hr) / cnt
    D = Hr - mr[y]
    D = D - ((Y.T @ D) / cnt)[y]  # corrected two-pass: the rounding of mr, once more
    if shift:
        # means of H − h_0 (h_0 the first row): rep − h_0 is exact for a shared offset
        h0 = H[:1]
        means = (rep - h0) + mr
        H = H - h0
    else:
        means = rep + mr
    return xp, H, y, K, counts, Y, means, D, e, present


def _global_mean(xp, means, counts, how):
    """μ_G: the mean of the class means (``"class_means"``) or the sample mean Σ_k n_k μ_k / N."""
    if how == "class_means" or counts is None:
        # the sum's method over K: NumPy's mean is this sum and division, without its Python wrapper
        return means.sum(axis=0) / means.shape[0]
    c = np.asarray(to_numpy(counts), dtype=np.float64)
    c = c / c.max()  # weights are scale free: huge counts (1e308) must not overflow the sum
    return (asarray_like(c, means) @ means) / float(c.sum())


def _class_var(xp, Y, D, counts, ddof):
    """Var_k = Σ_{i in k} ‖h_i − μ_k‖² / (n_k − ddof); ddof = 1 needs two samples in every class."""
    n = np.asarray(counts, dtype=np.int64)
    if ddof and np.any(n <= ddof):
        fail(
            "ddof",
            ddof,
            f"the unbiased class variance needs >= 2 samples per class (class {int(np.argmin(n))} has {int(n.min())})",
        )
    return (Y.T @ xp.sum(D * D, axis=1)) / asarray_like((n - ddof).astype(np.float64), D)


def _check_scatter_size(name, value, m, what):
    # Σ_W and Σ_B are d×d: size them before they are formed
    check_work(name, value, bytes=3 * 8 * int(m) ** 2, what=what)


@public(H=_H, y=_Y, K=_KOPT, global_mean=_GMEAN, ddof=_DDOF, legacy_positional=("K",))
def class_statistics(H, y, *, K: int | None = None, global_mean: str = "class_means", ddof: int = 0) -> ClassStatistics:
    """Class means, global mean, Σ_W and Σ_B of the review's §2.3 (two-pass, float64).

    Parameters
    ----------
    H : array_like, (N, d)
        Features, one sample per row (NumPy or CuPy).
    y : array_like of int, (N,)
        Labels in {0, …, K−1}. A class without a sample has no row: the statistics are those of the classes
        present (at least 2; ``classes`` lists their labels, ``num_classes`` is K).
    K : int, optional
        Number of classes (default: max(y) + 1).
    global_mean : {"class_means", "samples"}
        μ_G used in Σ_B = (1/K)Σ_k (μ_k − μ_G)(μ_k − μ_G)ᵀ: the mean of the class means (default;
        the review's §2.3, rhubarbwu's ``MeanAccumulator.compute()``) or the sample mean
        (nc-toolbox's ``global_embedding_mean``; rhubarbwu's ``compute(weighted=True)``).
    ddof : {0, 1}
        ``class_var`` divides by n_k − ddof: 0 (default; Galanti et al., rhubarbwu's
        ``VarNormAccumulator``) or 1 (nc-toolbox's ``class_embedding_variances``).

    Notes
    -----
    The statistics are computed on H·2^-e (an exact rescaling) and scaled back, so features of any
    magnitude give finite statistics whenever these are representable in float64. Σ_W divides by N.
    """
    xp, Hf = _features(H)
    _check_scatter_size(
        "H",
        to_numpy(Hf) if math.prod(Hf.shape) <= 6 else f"array of shape {tuple(Hf.shape)}",
        Hf.shape[1],
        "class_statistics (d x d covariances)",
    )
    xp, Hs, y, K, counts, Y, means, D, e, present = _first_pass(Hf, y, K, shift=True)
    h0 = _unit(xp, Hf)[0][0]  # the row _first_pass subtracted (of the unit-scaled features)
    N = Hs.shape[0]
    sigma_W = (D.T @ D) / N
    class_var = _class_var(xp, Y, D, counts, ddof)
    mu_G = _global_mean(xp, means, counts, global_mean)
    Mc = means - mu_G
    sigma_B = (Mc.T @ Mc) / K
    show = f"array of shape {tuple(Hf.shape)}"
    return ClassStatistics(
        _scale_back("H", show, means + h0, e, "the class means"),
        _scale_back("H", show, mu_G + h0, e, "the global mean"),
        counts,
        _scale_back("H", show, sigma_W, 2 * e, "Σ_W"),
        _scale_back("H", show, sigma_B, 2 * e, "Σ_B"),
        _scale_back("H", show, class_var, 2 * e, "the class variances"),
        present.classes,
        present.num_classes,
    )


@public(**_MOMENTS, global_mean=_GMEAN)
def class_statistics_from_moments(counts, sums, scatter, sq, shift, *, global_mean: str = "class_means"):
    """:class:`ClassStatistics` from one-pass moments of the shifted features h − c_{y} (ddof 0).

    With a per-class shift c_k (any vector; the first sample of the class keeps the cancellation small)
    the moments are s_k = Σ_{i∈k}(h_i − c_k), S = Σ_i (h_i − c_{y_i})(h_i − c_{y_i})ᵀ and
    q_k = Σ_{i∈k}‖h_i − c_k‖². Then μ_k = c_k + s_k/n_k, N·Σ_W = S − Σ_k s_k s_kᵀ/n_k and
    n_k·Var_k = q_k − ‖s_k‖²/n_k (the within-class scatter is invariant under a per-class shift).

    Parameters
    ----------
    counts : array_like of int, (K,)
        Samples per class n_k. A class with n_k = 0 (absent) has no row: the statistics are those of the
        classes present (at least 2; ``classes`` lists their indices, ``num_classes`` is K); its sums,
        squared norms and shift (finite) do not enter the statistics.
    sums : array_like, (K, d)
        s_k.
    scatter : array_like, (d, d)
        S.
    sq : array_like, (K,)
        q_k.
    shift : array_like, (K, d)
        c_k.
    global_mean : {"class_means", "samples"}
        μ_G of Σ_B (see :func:`class_statistics`).

    Notes
    -----
    The arrays may be of any supported library (NumPy, CuPy, PyTorch): the statistics are computed in
    float64 in the namespace and on the device of ``sums``.
    """
    xp, sums, scatter, sq, shift, n_h, present = _moments(counts, sums, scatter, sq, shift)
    K = sums.shape[0]
    # the moments of the features h·2^-e (exact): sums and shifts scale with 2^-e, the second moments with
    # 2^-2e, so no product below can overflow; the statistics are scaled back (and refused if they overflow)
    e = max(_exponent(xp, sums), _exponent(xp, shift), -(-_exponent(xp, scatter) // 2), -(-_exponent(xp, sq) // 2))
    sums, shift = pow2_scale(sums, e, xp), pow2_scale(shift, e, xp)
    scatter, sq = pow2_scale(scatter, 2 * e, xp), pow2_scale(sq, 2 * e, xp)
    n = asarray_like(n_h.astype(np.float64), sums)
    m = sums / n[:, None]
    W = scatter - m.T @ sums
    W = 0.5 * (W + W.T) / float(n_h.sum())
    var = sq - (sums * m).sum(axis=1)
    var = xp.maximum(var, xp.zeros_like(var)) / n
    # a class of one sample has no spread: exactly 0 (q_k − ‖s_k‖²/n_k rounds to ~eps·q_k otherwise)
    var = xp.where(n == 1.0, xp.zeros_like(var), var)
    means = shift + m
    mu_G = _global_mean(xp, means, n_h, global_mean)
    Mc = means - mu_G
    show = f"array of shape {tuple(sums.shape)}"
    # at unit scale |μ_k|, |μ_G| < 2, |Σ_B| < 16, |Σ_W| < K + 1 and Var_k < d + 1 (every moment is < 1): scaled
    # back by 2^e and 2^2e they overflow only for e near 2^9, so the (per-array) overflow checks run only then
    bound = max(16, K + 1, sums.shape[1] + 1).bit_length()
    back = _scale_back if 2 * e + bound >= 1023 else _scale_back_unchecked
    return ClassStatistics(
        back("sums", show, means, e, "the class means"),
        back("sums", show, mu_G, e, "the global mean"),
        n_h.astype(np.int64),
        back("sums", show, W, 2 * e, "Σ_W"),
        back("sums", show, (Mc.T @ Mc) / K, 2 * e, "Σ_B"),
        back("sums", show, var, 2 * e, "the class variances"),
        present.classes,
        present.num_classes,
    )


def _moments(counts, sums, scatter, sq, shift):
    """The moments as float64 arrays of the namespace and device of ``sums`` (host counts), checked."""
    xp, sums = _features(sums, "sums")
    K, d = sums.shape
    _, scatter = _features(scatter, "scatter", sums)
    _, shift = _features(shift, "shift", sums)
    _, sq = _features(asarray_like(sq, sums).reshape(1, -1), "sq")
    n_h = np.asarray(to_numpy(counts))
    sq = sq[0]
    if n_h.shape != (K,) or sq.shape[0] != K or tuple(shift.shape) != (K, d) or tuple(scatter.shape) != (d, d):
        fail(
            "sums",
            f"array of shape {tuple(sums.shape)}",
            f"needs counts, sq of shape ({K},), shift of shape ({K}, {d}) and scatter of shape ({d}, {d}); "
            f"got {n_h.shape}, {tuple(sq.shape)}, {tuple(shift.shape)}, {tuple(scatter.shape)}",
        )
    if n_h.dtype.kind not in "iu" or np.any(n_h < 0):
        fail("counts", n_h, "must be non-negative integer class counts")
    present = present_classes(n_h)
    if not present.all:  # the rows of the present classes (an absent class's moments are not read)
        rows = present.classes
        sums, sq, shift, n_h = present.rows(sums), present.rows(sq), present.rows(shift), n_h[rows]
    return xp, sums, scatter, sq, shift, n_h, present
