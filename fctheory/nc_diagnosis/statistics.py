"""Class statistics of a feature set and everything computed from them alone: the NC metrics (through
:mod:`fctheory.metrics`, never a second copy of a formula) and the distances to a regularised UFM optimum.

The statistics are O(K·d + d²): class counts n_k, class means μ_k, the pooled within-class covariance
Σ_W = (1/N)Σ_i (h_i − μ_{y_i})(h_i − μ_{y_i})ᵀ and the class variances Var_k = Σ_{i∈k}‖h_i − μ_k‖²/n_k.
They come from :func:`fctheory.metrics.class_statistics` (two passes over an in-memory array) or from a
streaming accumulator such as :class:`fctheory.torch.NCMonitor` (one pass on the features' device).

The metrics of :mod:`fctheory.metrics` take features. The ones that depend on the features only through
these statistics (NC1, CDNV, NC2, NC3) are evaluated on small *surrogate* feature sets with exactly the
statistics each metric depends on (at most 3K rows), so the conventions of :mod:`fctheory.metrics` apply unchanged and
the real features are never needed again. NC4 needs the samples and is computed by the caller.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import metrics as _m
from .. import ufm as _ufm
from .._numerics import pow2_exponent, pow2_scale, safe_norm
from .._validate import Array, Bool, Choice, Instance, Int, Real, fail, public, result_type

__all__ = [
    "FeatureStatistics",
    "feature_statistics",
    "statistics_from_moments",
    "nc_metrics",
    "ufm_optimum",
    "ufm_distances",
]

# the largest Frobenius norm whose square (‖W‖², ‖H‖², the Gram matrices) is a finite float64
_MAX_NORM = math.sqrt(float(np.finfo(np.float64).max))


def _refuse_overflow(name, A):
    """Refuse an array whose squared norm overflows float64 (the norms and Grams compared with the UFM)."""
    if A is not None and safe_norm(A) > _MAX_NORM:
        fail(name, f"array with entries up to {float(np.max(np.abs(A))):.3g}", "its squared norm overflows float64")


@result_type
@dataclass(frozen=True)
class FeatureStatistics:
    """Class statistics of features H (N × d) with labels y (every class present).

    Attributes
    ----------
    counts : (K,) int64, samples per class n_k.
    means : (K, d) float64, class means μ_k.
    sigma_W : (d, d) float64, pooled within-class covariance (divides by N).
    class_var : (K,) float64, Var_k = Σ_{i∈k}‖h_i − μ_k‖²/n_k (ddof 0, Galanti et al.'s CDNV terms).
    """

    counts: np.ndarray
    means: np.ndarray
    sigma_W: np.ndarray
    class_var: np.ndarray

    @property
    def K(self) -> int:
        return int(self.means.shape[0])

    @property
    def d(self) -> int:
        return int(self.means.shape[1])

    @property
    def N(self) -> int:
        return int(self.counts.sum())

    @property
    def balanced(self) -> bool:
        return bool(np.all(self.counts == self.counts[0]))

    @property
    def H_norm_sq(self) -> float:
        """‖H‖_F² = Σ_k n_k‖μ_k‖² + N·tr Σ_W (the UFM's feature penalty term, over all N samples)."""
        return float(self.counts @ np.sum(self.means**2, axis=1) + self.N * np.trace(self.sigma_W))


@public(H=Array(ndim=2), y=Array(ndim=1, integer=True, min=0), K=Int(min=2).or_none())
def feature_statistics(H, y, *, K: int | None = None) -> FeatureStatistics:
    """The :class:`FeatureStatistics` of in-memory features (two passes, :func:`fctheory.metrics.class_statistics`).

    Parameters
    ----------
    H : array_like, (N, d)
        Features, one sample per row.
    y : array_like of int, (N,)
        Labels in {0, …, K−1}; every class must occur.
    K : int, optional
        Number of classes (default max(y) + 1).
    """
    st = _m.class_statistics(H, y, K=K)
    return FeatureStatistics(
        np.asarray(st.counts, dtype=np.int64), np.asarray(st.means), np.asarray(st.sigma_W), np.asarray(st.class_var)
    )


@public(
    counts=Array(ndim=1, integer=True, min=0),
    sums=Array(ndim=2),
    scatter=Array(ndim=2),
    sq=Array(ndim=1),
    shift=Array(ndim=2),
)
def statistics_from_moments(counts, sums, scatter, sq, shift) -> FeatureStatistics:
    """:class:`FeatureStatistics` from one-pass moments of the shifted features h − c_{y}.

    With a per-class shift c_k (any vector; the first sample of the class keeps the cancellation small)
    the moments are s_k = Σ_{i∈k}(h_i − c_k), S = Σ_i (h_i − c_{y_i})(h_i − c_{y_i})ᵀ and
    q_k = Σ_{i∈k}‖h_i − c_k‖². Then μ_k = c_k + s_k/n_k, N·Σ_W = S − Σ_k s_k s_kᵀ/n_k and
    n_k·Var_k = q_k − ‖s_k‖²/n_k (the within-class scatter is invariant under a per-class shift).

    Parameters
    ----------
    counts : (K,) int
    sums : (K, d)
    scatter : (d, d)
    sq : (K,)
    shift : (K, d)
    """
    K, d = sums.shape
    if counts.shape != (K,) or sq.shape != (K,) or shift.shape != (K, d) or scatter.shape != (d, d):
        fail(
            "sums",
            f"array of shape {sums.shape}",
            f"needs counts, sq of shape ({K},), shift of shape ({K}, {d}) "
            f"and scatter of shape ({d}, {d}); got {counts.shape}, {sq.shape}, {shift.shape}, {scatter.shape}",
        )
    if np.any(counts == 0):
        fail("counts", counts, f"every class must have been seen (class {int(np.argmin(counts))} is empty)")
    n = counts.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):  # refused below, naming the moments
        m = sums / n[:, None]
        W = scatter - m.T @ sums
        W = (0.5 * W + 0.5 * W.T) / n.sum()  # halves first: a scatter near 1.8e308 must not overflow the sum
        var = np.maximum(sq - np.sum(sums * m, axis=1), 0.0) / n
        means = shift + m
    if not (np.isfinite(W).all() and np.isfinite(var).all() and np.isfinite(means).all()):
        fail("sums", f"array of shape {sums.shape}", "with scatter, sq and shift: the statistics overflow float64")
    return FeatureStatistics(counts.astype(np.int64), means, W, var)


# ----------------------------------------------------------------------------- metrics
def _surrogate_within(st: FeatureStatistics):
    """Rows (H̃, ỹ) with the class means μ_k of ``st``, its Σ_W on the span of the centred means, and tr Σ_W.

    NC1 depends on Σ_W only through tr(Σ_W Σ_B⁺) (Σ_B⁺ lives on the span V of the centred means) and
    tr Σ_W, so the surrogate reproduces exactly those: every class gets its mean as one row; class 0
    also gets the pairs μ_0 ± a_j u_j, where (λ_j, u_j) are the eigenpairs of Σ_W compressed to V
    (an r×r problem, r ≤ K−1, instead of d×d), and one pair along a direction orthogonal to V carrying
    the rest of the trace. A pair's scatter 2a²·uuᵀ divided by Ñ (the surrogate's rows) gives λ when
    a² = Ñλ/2.
    """
    Mc = st.means - st.means.mean(axis=0)
    _, sv, Vt = np.linalg.svd(Mc, full_matrices=False)
    # the directions fctheory.metrics keeps for Σ_B⁺ (its default rank rule)
    smax = float(sv.max()) if sv.size else 0.0
    V = Vt[(sv > 10.0 * max(Mc.shape) * np.finfo(np.float64).eps * smax) & (np.arange(sv.size) < st.K - 1)].T
    lam, Q = np.linalg.eigh(V.T @ st.sigma_W @ V)
    keep = lam > 0.0
    lam, U = lam[keep], (V @ Q)[:, keep]
    rest = float(np.trace(st.sigma_W)) - float(lam.sum())
    if V.shape[1] < st.d and rest > 0.0:
        # the basis vector farthest from V, projected off V: a unit vector orthogonal to the span
        j = int(np.argmin(np.sum(V * V, axis=1)))
        u = -V @ V[j]
        u[j] += 1.0
        lam, U = np.append(lam, rest), np.column_stack([U, u / np.linalg.norm(u)])
    Nt = st.K + 2 * lam.size
    A = U * np.sqrt(Nt * lam / 2.0)[None, :]
    rows = [st.means, st.means[0] + A.T, st.means[0] - A.T]
    y = np.concatenate([np.arange(st.K), np.zeros(2 * lam.size, dtype=np.int64)])
    return np.concatenate(rows, axis=0), y


def _surrogate_class_var(st: FeatureStatistics):
    """Rows μ_k ± √Var_k·e_1 (two per class): the class means and class variances of ``st``."""
    e = np.zeros(st.d)
    e[0] = 1.0
    s = np.sqrt(st.class_var)[:, None] * e[None, :]
    return np.concatenate([st.means + s, st.means - s]), np.tile(np.arange(st.K), 2)


def _safe(fn, *args, **kw):
    """The metric, or NaN where it is undefined for these features (e.g. NC1 when all means coincide)."""
    try:
        return float(fn(*args, **kw))
    except ValueError:
        return math.nan


def _centred_cosines(M):
    M = pow2_scale(M, pow2_exponent(M))  # cosines are scale free: exact rescaling, no under/overflow
    Mc = M - M.mean(axis=0)
    nr = np.linalg.norm(Mc, axis=1)
    if np.any(nr == 0):
        return math.nan
    C = (Mc / nr[:, None]) @ (Mc / nr[:, None]).T
    return float(C[~np.eye(M.shape[0], dtype=bool)].mean())


def _check_layer(st, W, b=None):
    if W is not None and W.shape != (st.K, st.d):
        fail("W", f"array of shape {W.shape}", f"must have shape (K, d) = ({st.K}, {st.d}) like the statistics")
    if b is not None and b.shape != (st.K,):
        fail("b", f"array of shape {b.shape}", f"must have K = {st.K} entries")
    _refuse_overflow("W", W)
    _refuse_overflow("b", b)


@public(st=Instance(FeatureStatistics), W=Array(ndim=2).or_none())
def nc_metrics(st: FeatureStatistics, W=None) -> dict:
    """NC1–NC3, CDNV, equinorm/equiangularity and norms from the statistics (see the module docstring).

    Parameters
    ----------
    st : FeatureStatistics
    W : (K, d) ndarray, optional
        The last-layer classifier (rows w_k); adds NC3 and the classifier's NC2, equinorm and norms.

    Returns
    -------
    dict
        ``nc1`` (Papyan's tr(Σ_W Σ_B⁺)/K), ``nc1_trace_ratio`` (tr Σ_W / tr Σ_B), ``cdnv``, ``nc2``
        (distance of the centred means' Gram to a scaled simplex ETF), ``equinorm_means``,
        ``equiangularity_means``, ``mean_cos_means`` (the mean pairwise cosine of the centred means; −1/(K−1)
        for a simplex), ``mean_norm_means``; with W also ``nc2_W``, ``equinorm_W``, ``mean_cos_W``,
        ``W_norm_sq``, ``nc3``. Undefined values are NaN.
    """
    _check_layer(st, W)
    Hw, yw = _surrogate_within(st)
    Hv, yv = _surrogate_class_var(st)
    M = st.means
    out = {
        "nc1": _safe(_m.nc1, Hw, yw, K=st.K),
        "nc1_trace_ratio": _safe(_m.nc1, Hw, yw, K=st.K, variant="trace_ratio"),
        "cdnv": _safe(_m.cdnv, Hv, yv, K=st.K),
        "nc2": _safe(_m.nc2, M),
        "equinorm_means": _safe(_m.equinorm, M),
        "equiangularity_means": _safe(_m.equiangularity, M),
        "mean_cos_means": _centred_cosines(M),
        "mean_norm_means": float(np.linalg.norm(M - M.mean(axis=0), axis=1).mean()),
    }
    if W is not None:
        out.update(
            {
                "nc2_W": _safe(_m.nc2, W),
                "equinorm_W": _safe(_m.equinorm, W, center=False),
                "mean_cos_W": _centred_cosines(W),
                "W_norm_sq": float(np.sum(W * W)),
                "nc3": _safe(_m.nc3, W, M, np.arange(st.K), K=st.K),
            }
        )
    return out


# ----------------------------------------------------------------------------- the UFM optimum
@public(
    loss=Choice("ce", "mse"),
    K=Int(min=2),
    n_spl=Int(min=1),
    lam_W=Real(lo=0.0, lo_open=True),
    lam_H=Real(lo=0.0, lo_open=True),
    bias=Bool(),
)
def ufm_optimum(*, loss: str, K: int, n_spl: int, lam_W: float, lam_H: float, bias: bool):
    """The regularised UFM optimum (:func:`fctheory.ufm.ce` or :func:`fctheory.ufm.mse`) of these sizes."""
    fn = _ufm.ce if loss == "ce" else _ufm.mse
    return fn(K=K, n_spl=n_spl, lam_W=lam_W, lam_H=lam_H, bias=bias)


def _gram_distance(G, G_star):
    """‖G − G*‖_F/‖G*‖_F (absolute ‖G‖_F when G* = 0, the trivial optimum)."""
    ns = safe_norm(G_star)  # rescaled: a huge optimum (tiny lam_W) must not overflow the squares
    return safe_norm(G - G_star) / ns if ns > 0 else safe_norm(G)


def _ratio(obs, pred):
    return obs / pred if pred > 0 else (math.inf if obs > 0 else 1.0)


@public(
    st=Instance(FeatureStatistics),
    W=Array(ndim=2).or_none(),
    b=Array(ndim=1).or_none(),
    opt=Instance(_ufm.UFMOptimum),
    n_spl=Int(min=1, max=10**12),
)
def ufm_distances(st: FeatureStatistics, W, b, opt, *, n_spl: int) -> dict:
    """How far (W, b, class means, norms) are from the UFM optimum ``opt`` (a :class:`fctheory.ufm.UFMOptimum`
    for ``n_spl`` samples per class).

    Returns ``dist_W_gram`` = ‖WWᵀ − W*W*ᵀ‖_F/‖W*W*ᵀ‖_F, ``dist_means_gram`` (the same for the Gram of
    the class means MMᵀ, the features' collapsed limit), ``W_norm_sq_ratio`` = ‖W‖²/‖W*‖²,
    ``H_norm_sq_ratio`` = (‖H‖²/N)/(‖H*‖²/(K·n)) (per sample; the UFM's ‖H*‖² is over its K·n samples),
    ``H_norm_sq_per_sample`` = ‖H‖²/N, ``dist_bias`` = ‖b − b*‖ (when both have a bias), the
    predictions ``ufm_W_norm_sq`` and ``ufm_H_norm_sq``, and ``h_over_w`` (the observed
    √(‖H‖²/N) / √(‖W‖²/K), the UFM's √(λ_W/(nλ_H)) at the optimum). Against the trivial
    optimum (0, 0) the Gram distances are absolute.
    """
    _check_layer(st, W, b)
    n_total = st.K * n_spl
    out = {
        "ufm_W_norm_sq": float(opt.W_norm_sq),
        "ufm_H_norm_sq": float(opt.H_norm_sq),
        "H_norm_sq_per_sample": st.H_norm_sq / st.N,
        "dist_means_gram": _gram_distance(st.means @ st.means.T, opt.means_gram),
        "H_norm_sq_ratio": _ratio(st.H_norm_sq / st.N, float(opt.H_norm_sq) / n_total),
    }
    if W is not None:
        wn, w = float(np.sum(W * W)), safe_norm(W)
        out["dist_W_gram"] = _gram_distance(W @ W.T, opt.W_gram)
        out["W_norm_sq_ratio"] = _ratio(wn, float(opt.W_norm_sq))
        out["h_over_w"] = math.sqrt(st.H_norm_sq / st.N) / (w / math.sqrt(st.K)) if w > 0 else math.nan
    if b is not None and opt.bias is not None:
        out["dist_bias"] = safe_norm(np.asarray(b) - opt.bias)
    return out
