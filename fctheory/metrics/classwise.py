"""Per-class values of neural collapse against the class frequencies: what studies of collapse in language models
plot, one point per class (token) over its frequency (Wu & Papyan 2024, "Linguistic Collapse"; Fang et al.
2021's minority collapse for the classifier rows).

A class's within-class variability relative to the spread of the class means, its distance to the others, the
norms of its mean and of its classifier row, and the alignment of the two: quantities whose averages over the
classes are the summary metrics (:func:`fctheory.metrics.nc_summary`), so the per-class picture and the summary
agree by construction:

* Σ_k (n_k/N)·``var_rel``_k = tr Σ_W / tr Σ_B (``nc1_trace_ratio``);
* the mean of ``cdnv`` over the classes is the CDNV;
* the mean and coefficient of variation of ``centred_norm`` are ``mean_norm_means`` and ``equinorm_means``.

Over the classes present only (an absent class has no mean), as every metric of :mod:`fctheory.metrics.nc`.
Computed from the statistics after an exact power-of-two rescaling (any magnitude), in O(K·d) plus the CDNV's
one tiled pass over the class pairs (K²·d/2 multiply-adds, :func:`fctheory.metrics.pairs.cdnv_rows`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._backend import to_numpy
from .._numerics import pow2_scale
from .._validate import fail, public, result_type
from ._input import _M, _scale_back, _unit
from .duality import _check_W
from .moments import ClassStatistics
from .pairs import cdnv_rows
from .simplex import _row_norms
from .variability import _ST, _centred_means, _statistics_means

__all__ = ["PerClass", "per_class"]

#: the columns of :meth:`PerClass.to_frame`, in order (the last two need W)
COLUMNS = ("class", "count", "frequency", "var", "var_rel", "cdnv", "mean_norm", "centred_norm", "w_norm", "w_cos")


@result_type
@dataclass(frozen=True)
class PerClass:
    """One value per class present (NumPy arrays of length K_p, in the order of ``classes``).

    Attributes
    ----------
    classes : int64, the class labels.
    counts : int64, n_k. ``frequency`` : n_k / N.
    var : Var_k = Σ_{i∈k} ‖h_i − μ_k‖² / n_k (the statistics' ``class_var``).
    var_rel : Var_k / tr Σ_B, tr Σ_B = (1/K_p)Σ_j ‖μ_j − μ_G‖²: the class's within-class variability relative to
        the spread of the class means (NC1-like; its frequency-weighted mean is tr Σ_W / tr Σ_B).
    cdnv : mean over j ≠ k of (Var_k + Var_j)/(2‖μ_k − μ_j‖²) (NaN when μ_k coincides with another mean).
    mean_norm : ‖μ_k‖ (the UFM's collapsed feature norm of the class). ``centred_norm`` : ‖μ_k − μ_G‖.
    w_norm : ‖w_k‖ (None without a classifier). ``w_cos`` : cos(w_k, μ_k − μ_G) (NaN for a zero vector).
    """

    classes: np.ndarray
    counts: np.ndarray
    frequency: np.ndarray
    var: np.ndarray
    var_rel: np.ndarray
    cdnv: np.ndarray
    mean_norm: np.ndarray
    centred_norm: np.ndarray
    w_norm: np.ndarray | None = None
    w_cos: np.ndarray | None = None

    def to_frame(self):
        """pandas DataFrame, one row per class (columns :data:`COLUMNS`; the classifier's two without W)."""
        try:
            import pandas as pd  # noqa: PLC0415 - optional dependency
        except ImportError:  # pragma: no cover - depends on the install
            fail("to_frame", "pandas", "needs pandas (pip install pandas)")
        cols = {"class": self.classes, "count": self.counts}
        cols.update({c: getattr(self, c) for c in COLUMNS[2:] if getattr(self, c) is not None})
        return pd.DataFrame(cols)


@public(st=_ST, W=_M.or_none())
def per_class(st: ClassStatistics, W=None) -> PerClass:
    """Per-class values of the statistics ``st`` (and the classifier ``W``) against the class frequencies.

    Parameters
    ----------
    st : ClassStatistics
        Uses ``means``, ``counts``, ``class_var`` and ``classes`` (the classes present).
    W : array_like, (K, d), optional
        The classifier, K = ``st.num_classes`` rows (those of the classes present are read).

    Returns
    -------
    PerClass
        See :class:`PerClass`. Scale: ``var_rel``, ``cdnv`` and ``w_cos`` are scale free; the norms and ``var``
        scale with the features (refused naming ``st`` where they overflow float64).

    Notes
    -----
    ``var_rel`` and ``cdnv`` need two distinct class means (tr Σ_B > 0), else they are NaN.
    """
    xp, means = _statistics_means(st)
    K = st.K
    Mc, e = _centred_means(xp, means, st.counts, "class_means")  # M̃·2^-e
    Mu, e1 = _unit(xp, means)
    show = f"statistics of K = {K} classes"
    var_u = to_numpy(pow2_scale(xp.asarray(st.class_var, dtype=xp.float64), 2 * e, xp))  # Var·2^-2e
    cn_u = to_numpy(_row_norms(xp, Mc))
    trB = float((cn_u * cn_u).sum()) / K
    n = np.asarray(st.counts, dtype=np.int64)
    out = dict(
        classes=np.asarray(st.classes, dtype=np.int64),
        counts=n.copy(),
        frequency=n / float(n.sum()),
        var=np.asarray(_scale_back("st", show, var_u, 2 * e, "the class variances"), dtype=np.float64),
        var_rel=var_u / trB if trB > 0 else np.full(K, math.nan),
        cdnv=cdnv_rows(to_numpy(Mc), var_u) if trB > 0 else np.full(K, math.nan),
        mean_norm=np.asarray(_scale_back("st", show, to_numpy(_row_norms(xp, Mu)), e1, "the mean norms")),
        centred_norm=np.asarray(_scale_back("st", show, cn_u, e, "the centred mean norms")),
    )
    if W is not None:
        Wp = st.present.rows(_check_W(W, st.num_classes, st.d, means))
        Wu, ew = _unit(xp, Wp)
        wn_u = to_numpy(_row_norms(xp, Wu))
        dot = to_numpy((Wu * Mc).sum(axis=1))
        with np.errstate(invalid="ignore", divide="ignore"):
            cos = np.where((wn_u > 0) & (cn_u > 0), dot / (wn_u * cn_u), math.nan)
        out["w_norm"] = np.asarray(_scale_back("W", f"array of shape {tuple(Wp.shape)}", wn_u, ew, "the row norms"))
        out["w_cos"] = np.clip(cos, -1.0, 1.0)
    return PerClass(
        **{k: np.asarray(v, dtype=np.float64) if k not in ("classes", "counts") else v for k, v in out.items()}
    )
