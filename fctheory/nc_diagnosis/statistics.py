"""Class statistics of a feature set and everything computed from them alone: the NC metrics (through
:mod:`fctheory.metrics`, never a second copy of a formula) and the distances to a regularised UFM optimum.

The statistics are :class:`fctheory.metrics.ClassStatistics` (``FeatureStatistics`` is its name here):
O(K·d + d²) numbers, the class counts n_k, the class means μ_k, the pooled within-class covariance
Σ_W = (1/N)Σ_i (h_i − μ_{y_i})(h_i − μ_{y_i})ᵀ and the class variances Var_k = Σ_{i∈k}‖h_i − μ_k‖²/n_k.
They come from :func:`fctheory.metrics.class_statistics` (two passes over an in-memory array, on the
array's device: NumPy, CuPy or PyTorch) or from one-pass moments
(:func:`fctheory.metrics.class_statistics_from_moments`, which the PyTorch training monitor
:class:`fctheory.torch.NCMonitor` accumulates on the features' device).

NC1, CDNV and NC3 come from the statistics alone (:func:`fctheory.metrics.nc1_from_statistics`,
:func:`~fctheory.metrics.cdnv_from_statistics`, :func:`~fctheory.metrics.nc3_from_statistics`), NC2 and
the norms from the class means; only the small K×d and d×d results are brought to the host. NC4 needs
the samples and is computed by the caller.
"""

from __future__ import annotations

import math

import numpy as np

from .. import metrics as _m
from .. import ufm as _ufm
from .._backend import as_native, dtype_kind, to_numpy
from .._numerics import safe_norm
from .._validate import Array, Bool, Choice, Instance, Int, Real, fail, public
from ..metrics import pairs as _pairs
from ..ufm.gram import FrameGram, gram_distance
from ..ufm.groups import GroupGram

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
    """Refuse an array whose squared norm overflows float64 (the norms and Grams compared with the UFM).

    The norm is taken on the array's device by exact power-of-two rescaling; only float64 arrays can
    overflow (the squares of float32 or int64 entries stay far below the float64 limit).
    """
    if A is None:
        return
    if type(A) is not np.ndarray:
        if dtype_kind(A) != "f" or str(A.dtype).rpartition(".")[2] != "float64":
            return
        A = as_native(A)[1]
    elif A.dtype != np.float64:
        return
    size = math.prod(A.shape)
    a = float(abs(A).max()) if size else 0.0
    if math.isfinite(a) and 2 * math.frexp(a)[1] + size.bit_length() <= 1023:
        return  # ‖A‖² ≤ size·max|A|² < 2^1023 cannot overflow: the usual case, decided without the norm
    if safe_norm(A) > _MAX_NORM:
        fail(name, f"array with entries up to {a:.3g}", "its squared norm overflows float64")


#: the class statistics of :mod:`fctheory.metrics` under this package's former name
FeatureStatistics = _m.ClassStatistics

#: :func:`fctheory.metrics.class_statistics_from_moments` under this package's former name
statistics_from_moments = _m.class_statistics_from_moments


@public(H=Array(ndim=2, native=True), y=Array(ndim=1, integer=True, min=0, native=True), K=Int(min=2).or_none())
def feature_statistics(H, y, *, K: int | None = None) -> FeatureStatistics:
    """The class statistics of in-memory features (two passes, :func:`fctheory.metrics.class_statistics`).

    Parameters
    ----------
    H : array_like, (N, d)
        Features, one sample per row (NumPy, CuPy or PyTorch; the statistics stay on its device).
    y : array_like of int, (N,)
        Labels in {0, …, K−1}; every class must occur.
    K : int, optional
        Number of classes (default max(y) + 1).
    """
    return _m.class_statistics(H, y, K=K)


# ----------------------------------------------------------------------------- metrics
def _check_shapes(st, W, b=None):
    if W is not None and tuple(W.shape) != (st.K, st.d):
        fail("W", f"array of shape {tuple(W.shape)}", f"must have shape (K, d) = ({st.K}, {st.d}) like the statistics")
    if b is not None and tuple(b.shape) != (st.K,):
        fail("b", f"array of shape {tuple(b.shape)}", f"must have K = {st.K} entries")


def _check_layer(st, W, b=None):
    _check_shapes(st, W, b)
    _refuse_overflow("W", W)
    _refuse_overflow("b", b)


@public(st=Instance(FeatureStatistics), W=Array(ndim=2, native=True).or_none())
def nc_metrics(st: FeatureStatistics, W=None) -> dict:
    """NC1–NC3, CDNV, equinorm/equiangularity and norms from the statistics: :func:`fctheory.metrics.nc_summary`.

    Parameters
    ----------
    st : FeatureStatistics
    W : (K, d) array, optional
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
    # one fused pass (shared centring, rescaling, norms and cosines): its body, st and W being checked here
    return _m.nc_summary.__wrapped__(st, W)


# ----------------------------------------------------------------------------- the UFM optimum
@public(
    loss=Choice("ce", "mse"),
    K=Int(min=2),
    n_spl=Int(min=1).or_none(),
    lam_W=Real(lo=0.0, lo_open=True),
    lam_H=Real(lo=0.0, lo_open=True),
    bias=Bool(),
    counts=Array(ndim=1, integer=True, min=0).or_none(),
)
def ufm_optimum(*, loss: str, K: int, n_spl: int | None = None, lam_W: float, lam_H: float, bias: bool, counts=None):
    """The regularised UFM optimum (:func:`fctheory.ufm.ce` or :func:`fctheory.ufm.mse`) for n_spl samples in
    every class (the closed form) or for class ``counts`` (K entries, zeros allowed: the certified optimum)."""
    fn = _ufm.ce if loss == "ce" else _ufm.mse
    if counts is not None:
        return fn(K=K, counts=counts, lam_W=lam_W, lam_H=lam_H, bias=bias)
    if n_spl is None:
        fail("n_spl", n_spl, "is required (or give counts=)")
    return fn(K=K, n_spl=n_spl, lam_W=lam_W, lam_H=lam_H, bias=bias)


def _gram_distance(diff, ns):
    """‖G − G*‖_F/‖G*‖_F from ``diff`` = ‖G − G*‖_F and ``ns`` = ‖G*‖_F (the absolute ‖G‖_F = diff when
    G* = 0, the trivial optimum)."""
    return diff / ns if ns > 0 else diff


def _ratio(obs, pred):
    return obs / pred if pred > 0 else (math.inf if obs > 0 else 1.0)


@public(
    st=Instance(FeatureStatistics),
    W=Array(ndim=2, native=True).or_none(),
    b=Array(ndim=1, native=True).or_none(),
    opt=Instance(_ufm.UFMOptimum),
    n_spl=Int(min=1, max=10**12),
)
def ufm_distances(st: FeatureStatistics, W, b, opt, *, n_spl: int) -> dict:
    """How far (W, b, class means, norms) are from the UFM optimum ``opt`` (a :class:`fctheory.ufm.UFMOptimum`
    for ``n_spl`` samples per class, or a :class:`fctheory.ufm.CertifiedUFMOptimum` for given class counts).

    Returns ``dist_W_gram`` = ‖WWᵀ − W*W*ᵀ‖_F/‖W*W*ᵀ‖_F, ``dist_means_gram`` (the same for the Gram of
    the class means MMᵀ, the features' collapsed limit, over the classes present: ``st.counts > 0``),
    ``W_norm_sq_ratio`` = ‖W‖²/‖W*‖², ``H_norm_sq_ratio`` = (‖H‖²/N)/(‖H*‖²/N*) (per sample; N* = K·n_spl, or
    the optimum's own N for counts), ``H_norm_sq_per_sample`` = ‖H‖²/N, ``dist_bias`` = ‖b − b*‖ (when both
    have a bias; over the classes where b* is finite: an absent class's b* is −∞ under cross-entropy with a
    bias; as the cross-entropy ignores a common shift of b, :func:`~fctheory.nc_diagnosis.diagnose_features`
    checks the centred biases instead), the predictions ``ufm_W_norm_sq`` and
    ``ufm_H_norm_sq``, and ``h_over_w`` (the observed √(‖H‖²/N)/√(‖W‖²/K); √((K/N*)·λ_W/λ_H) at the optimum).
    Against the trivial optimum (0, 0) the Gram distances are absolute. The statistics, W and b may be arrays of
    any supported library; only the K×d class means, W and b are brought to the host. An absent class (count 0)
    has no mean to compare: it is left out of the class-mean Gram, and keeps its row in W's.
    """
    _check_shapes(st, W, b)
    M, W, b = (None if a is None else _host64(a) for a in (st.means, W, b))
    use_b = b is not None and opt.bias is not None
    present = np.asarray(st.counts) > 0
    GM = opt.means_gram
    if not present.all():
        M, GM = M[present], _restrict(GM, present)
    bb, bs = _bias_pair(b, opt, present) if use_b else (None, None)
    norms = _kernel_norms(M, W, bb, GM, opt.W_gram, bs)
    if norms is None:  # outside the kernel's range: rescaled norms (any scale), overflowing squares refused
        _refuse_overflow("W", W)
        _refuse_overflow("b", b)
        norms = _reference_norms(M, W, bb, GM, opt.W_gram, bs)
    elif b is not None and not use_b:
        _refuse_overflow("b", b)  # refused even where the optimum has no bias to compare it with
    # ‖H‖²/N, a reduction of the statistics: formed once
    return _distances_from_norms(norms, st.H_norm_sq / st.N, opt, K=st.K, n_spl=n_spl, W=W is not None, b=use_b)


def _restrict(G, present):
    """The Gram G on the classes ``present`` (a boolean mask)."""
    if isinstance(G, GroupGram):
        return GroupGram(G.label[present], G.C, G.d)
    if isinstance(G, FrameGram) and int(np.count_nonzero(present)) >= _pairs.LARGE_K:
        fail("counts", present, "a frame optimum (balanced classes) against statistics with absent classes")
    return np.asarray(G, dtype=np.float64)[np.ix_(present, present)]


def _bias_pair(b, opt, present):
    """(b, b*) to compare, over the classes where b* is finite (an absent class's b* is −∞ under a bias:
    cross-entropy for given counts)."""
    bs = np.asarray(opt.bias, dtype=np.float64)
    keep = np.isfinite(bs)
    if keep.all():
        return b, bs
    return b[keep], bs[keep]


def distances_from_kernel_norms(out, h_sq, opt, *, K, n_spl, W, b) -> dict:
    """The dict of :func:`ufm_distances` from the six numbers of ``fctheory._nc_kernels.ufm_norms`` (``out``)
    and h_sq = ‖H‖²/N: the entry of the PyTorch monitor, which computes them with the statistics in one
    compiled call. ``W``/``b``: whether the classifier's and the bias's distances are included. For an optimum
    of given counts (:class:`fctheory.ufm.CertifiedUFMOptimum`) the per-sample ‖H*‖² is over its own N, and
    n_spl is not used."""
    return _distances_from_norms(_kernel_norms_list(out), h_sq, opt, K=K, n_spl=n_spl, W=W, b=b)


def _samples_of(opt, K, n_spl):
    """N* of the optimum: its own N (given counts), else K·n_spl."""
    N = getattr(opt, "N", 0)
    return N if N else K * n_spl


def _distances_from_norms(norms, h_sq, opt, *, K, n_spl, W, b) -> dict:
    """The dict of :func:`ufm_distances` from its norms (a list, as :func:`_kernel_norms` gives them) and
    h_sq = ‖H‖²/N; ``W``/``b``: whether the classifier's and the bias's distances are included."""
    out = {
        "ufm_W_norm_sq": float(opt.W_norm_sq),
        "ufm_H_norm_sq": float(opt.H_norm_sq),
        "H_norm_sq_per_sample": h_sq,
        "dist_means_gram": _gram_distance(norms[0], norms[1]),
        "H_norm_sq_ratio": _ratio(h_sq, float(opt.H_norm_sq) / _samples_of(opt, K, n_spl)),
    }
    if W:
        wn, w = norms[4], norms[5]  # ‖W‖² (finite: an overflowing one is refused) and ‖W‖
        out["dist_W_gram"] = _gram_distance(norms[2], norms[3])
        out["W_norm_sq_ratio"] = _ratio(wn, float(opt.W_norm_sq))
        out["h_over_w"] = math.sqrt(h_sq) / (w / math.sqrt(K)) if w > 0 else math.nan
    if b:
        out["dist_bias"] = norms[6]
    return out


def _reference_norms(M, W, b, GM, GW, bs):
    """The norms of :func:`_kernel_norms` at any scale (rescaled: ‖W‖² of a tiny W underflows, ‖W‖ does not)."""
    nan = math.nan
    norms = [_gram_dist(M, GM), _gram_norm(GM), nan, nan, nan, nan, nan]
    if W is not None:
        norms[2:6] = _gram_dist(W, GW), _gram_norm(GW), float(np.sum(W * W)), safe_norm(W)
    if b is not None:
        norms[6] = safe_norm(b - bs)
    return norms


def _gram_dist(A, G):
    """‖AAᵀ − G‖_F: a FrameGram or GroupGram (the optimum's Gram from pairs.LARGE_K classes on) in O(K·d)
    memory."""
    if isinstance(G, FrameGram):
        return gram_distance(A, G)
    if isinstance(G, GroupGram):
        return G.distance(A)
    return safe_norm(A @ A.T - G)


def _gram_norm(G):
    return G.norm() if isinstance(G, (FrameGram, GroupGram)) else safe_norm(G)


def _is64(a) -> bool:
    return type(a) is np.ndarray and a.dtype == np.float64


def _host64(a):
    """``a`` as a float64 NumPy array (itself when it is one)."""
    return a if _is64(a) else np.asarray(to_numpy(a), dtype=np.float64)


def _kernel_norms(M, W, b, GM, GW, bs):
    """[‖MMᵀ − G_M*‖, ‖G_M*‖, ‖WWᵀ − G_W*‖, ‖G_W*‖, ‖W‖², ‖W‖, ‖b − b*‖] by the compiled kernel (NaN for an
    absent W or b), or None where the entries leave its range (then :func:`_reference_norms`)."""
    # M, W and b are float64 NumPy arrays here
    if not (_is64(GM) and (W is None or _is64(GW)) and (b is None or _is64(bs))):
        return None  # an optimum made by hand, of other types, or a compact Gram: the reference body takes any
    from .._nc_kernels import ufm_norms  # noqa: PLC0415 - numba: about a second, on first use

    out = np.full(6, math.nan)
    empty1, empty2 = _EMPTY
    ok = ufm_norms(
        M,
        empty2 if W is None else W,
        empty1 if b is None else b,
        GM,
        empty2 if W is None else GW,
        empty1 if b is None else bs,
        out,
    )
    return _kernel_norms_list(out) if ok else None


def _kernel_norms_list(out):
    """The norms' list from the kernel's six numbers (its ``out``): ‖W‖ inserted (NaN without W), the root of
    ‖W‖², which in the kernel's range cannot underflow."""
    norms = out.tolist()
    norms.insert(5, math.sqrt(norms[4]))
    return norms


_EMPTY = (np.empty(0), np.empty((0, 0)))
