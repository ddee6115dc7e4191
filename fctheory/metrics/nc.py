"""Neural-collapse metrics NC1–NC4 and CDNV (Kothapalli's review §2.3, eqs. (4)–(9), (51);
Súkeník et al. Def. 3.4; the perturbation paper §1.5).

Conventions
-----------
* ``H`` is samples × features (N × d), ``y`` integer labels in {0, …, K−1}; every class must occur
  (samples as rows, like the peer libraries rhubarbwu/neural-collapse and felixsh/nc-toolbox).
  Classes may be unbalanced; by default the global mean is the mean of the class means,
  μ_G = (1/K)Σ_k μ_k (the review's definition); ``global_mean="samples"`` uses the sample mean
  (1/N)Σ_i h_i instead (they agree for balanced classes). docs/metrics-peers.md maps every peer
  function to the fctheory call that reproduces it.
* ``W`` is the classifier, K × d (row k = a_k), ``M`` a K × d matrix of class means (or classifier rows).
* Translation-invariant statistics subtract one sample (row) first: for features with a large
  common offset the subtraction is exact (Sterbenz), so the class means of the offset-free data
  are not lost to cancellation.
* Statistics are computed in float64 with two passes (means first, then deviations), never as
  E[x²] − E[x]², so collapsed data give exact zeros.
* Inputs may be NumPy or CuPy arrays or PyTorch tensors (CPU or CUDA; dispatched with
  array-api-compat, :func:`fctheory._backend.array_namespace_of`): the computation stays on the
  features' device, float32 inputs are accumulated in float64, scalars are returned as Python floats
  and array results (class means, covariances) are arrays of the input's library on its device.
  Other arguments (a classifier W, a bias, class means) are brought to the features' namespace and
  device; labels are checked on the host (they are small) and gathered on the features' device.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .._backend import array_namespace_of, asarray_like, to_numpy
from .._budget import check_work
from .._numerics import ldexp, pow2_scale
from .._validate import Array, Bool, Choice, Instance, Int, Real, fail, public
from . import pairs as _tiles
from ._input import (
    _COUNTS,
    _DDOF,
    _GMEAN,
    _H,
    _KOPT,
    _M,
    _MOMENTS,
    _Y,
    _features,
    _scale_back,
    _unit,
)
from .moments import (
    ClassStatistics,
    _class_var,
    _first_pass,
    _global_mean,
    class_statistics,
    class_statistics_from_moments,
)

__all__ = [
    "ClassStatistics",
    "class_statistics",
    "class_statistics_from_moments",
    "nc1_from_statistics",
    "cdnv_from_statistics",
    "nc3_from_statistics",
    "nc_summary",
    "nc_summary_from_moments",
    "nc_summary_and_frames",
    "nc1",
    "nc2",
    "nc3",
    "nc4",
    "cdnv",
    "equinorm",
    "equiangularity",
    "etf_gram",
    "uniformity",
    "uniform_duality",
    "nc5",
]


_EPS = float(np.finfo(np.float64).eps)


def _pinv_rank_tol(s, shape):
    return 10.0 * float(s.max()) * max(shape) * _EPS if s.size else 0.0


_NC1_VARIANTS = Choice("papyan", "trace_ratio", "within_fraction", "between_fraction")


_RANK = Choice("auto", "K-1")


_RTOL = Real(lo=0.0, lo_open=True, hi=1.0, hi_open=True).or_none()


def _trace_variant(trW, trB, variant, name="H"):
    """tr Σ_W / tr Σ_B and Rangamani et al.'s normalised fractions of tr Σ_W + tr Σ_B."""
    if variant == "trace_ratio":
        if trB == 0.0:
            fail(name, "features whose class means coincide", "NC1 is undefined when tr(Σ_B) = 0")
        return trW / trB
    tot = trW + trB
    if tot == 0.0:
        fail(name, "features that all coincide", "the normalised class variances are undefined when Σ_W = Σ_B = 0")
    return (trW if variant == "within_fraction" else trB) / tot


def _minus(means, mu_G):
    """means − μ_G, or the means themselves when μ_G is the scalar 0 (the statistics' callers pass centred means)."""
    return means if isinstance(mu_G, float) and mu_G == 0.0 else means - mu_G


def _nc1_from_stats(xp, means, mu_G, sigma_W, K, variant, pinv_rtol=None, rank="auto", name="H"):
    Mc = _minus(means, mu_G)
    if variant != "papyan":
        return _trace_variant(float(sigma_W.trace()), float((Mc * Mc).sum()) / K, variant, name)
    # tr(Σ_W Σ_B⁺)/K with Σ_B = M̃ᵀM̃/K = V S² Vᵀ/K  ⇒  Σ_B⁺ = K V S⁻² Vᵀ, so the value is
    # tr(Vᵀ Σ_W V S⁻²) = Σ_i v_iᵀ Σ_W v_i / s_i²: the diagonal of VᵀΣ_W V alone (r ≤ K−1 directions)
    V, s_k = _between_directions(xp, Mc, K, pinv_rtol, rank, name)
    q = ((sigma_W @ V) * V).sum(axis=0)
    return float((q / (s_k * s_k)).sum())


def _svd(xp, A, name):
    try:
        return xp.linalg.svd(A, full_matrices=False)
    except np.linalg.LinAlgError as exc:  # pragma: no cover - LAPACK non-convergence on finite input
        fail(name, f"array of shape {tuple(A.shape)}", f"the SVD did not converge ({exc})")


def _between_directions(xp, Mc, K, pinv_rtol=None, rank="auto", name="H"):
    """Right singular vectors V (d×r) and singular values of the centred means M̃ kept for Σ_B⁺.

    The eigenvalues of Σ_B = M̃ᵀM̃/K are λ_i = s_i²/K, taken from the SVD of M̃ (never from Σ_B
    formed in floating point, whose rounding eigenvalues ~eps·λ_max could pass a relative cut-off).
    ``pinv_rtol=None``: the ≤ K−1 directions with s_i > 10·max(K, d)·eps·s_max; ``pinv_rtol=r``:
    every direction with λ_i > r·λ_max (numpy/scipy/torch ``pinv`` on Σ_B); ``rank="K-1"``: exactly
    the top K−1 directions (scipy ``svds(Σ_B, k=K−1)``), refused when one of them is (numerically) 0.
    """
    if xp is np and Mc.shape[0] >= max(_tiles.LARGE_K, 2 * Mc.shape[1]):
        # many more classes than dimensions: the SVD of R (d × d) of Mc = QR has the singular values and right
        # vectors of Mc (Householder QR is backward stable), without the K × d left factor (2Kd² flops, not 4Kd²+)
        _, s, Vt = _svd(xp, np.linalg.qr(Mc, mode="r"), name)
    else:
        _, s, Vt = _svd(xp, Mc, name)
    s_h = to_numpy(s)
    smax = float(s_h.max()) if s_h.size else 0.0
    if pinv_rtol is None:
        tol = _pinv_rank_tol(s_h, Mc.shape)
        above = s_h > tol
    else:
        # λ_i > r·λ_max  ⇔  (s_i/s_max)² > r, compared without squaring tiny numbers to zero
        above = (s_h / smax) ** 2 > pinv_rtol if smax > 0 else np.zeros(s_h.shape, dtype=bool)
    if rank == "K-1":
        if s_h.size < K - 1 or not above[: K - 1].all():
            fail(
                "rank",
                rank,
                f"Σ_B has fewer than K−1 = {K - 1} non-zero eigenvalues (rank-deficient between-class "
                "covariance): its top-(K−1) inverse divides by zero; use rank='auto'",
            )
        keep = np.arange(s_h.size) < K - 1
    elif pinv_rtol is None:
        # centred means have rank ≤ K−1; a K-th singular value is rounding noise of the centring
        keep = above & (np.arange(s_h.size) < K - 1)
    else:
        keep = above
    if not keep.any():
        fail(name, "features whose class means coincide", "NC1 is undefined when Σ_B = 0")
    # the singular values come sorted in decreasing order, so every rule above keeps a leading run: a slice
    r = int(keep.sum())
    return Vt[:r].T, s[:r]


@public(
    H=_H,
    y=_Y,
    variant=_NC1_VARIANTS,
    K=_KOPT,
    global_mean=_GMEAN,
    pinv_rtol=_RTOL,
    rank=_RANK,
    legacy_positional=("variant",),
)
def nc1(
    H,
    y,
    *,
    variant: str = "papyan",
    K: int | None = None,
    global_mean: str = "class_means",
    pinv_rtol: float | None = None,
    rank: str = "auto",
) -> float:
    """NC1 within-class variability collapse.

    Parameters
    ----------
    H : array_like, (N, d)
    y : array_like of int, (N,)
    variant : {"papyan", "trace_ratio", "within_fraction", "between_fraction"}
        ``"papyan"`` (default): (1/K)·tr(Σ_W Σ_B⁺), review eq. (4) (Papyan et al. 2020, Fig. 6;
        rhubarbwu ``covariance_ratio(metric="pinv"|"svd")``, nc-toolbox ``nc1_strong``);
        ``"trace_ratio"``: tr(Σ_W)/tr(Σ_B) (Súkeník et al. Def. 3.4; the perturbation paper's ÑC1, eq. 3;
        rhubarbwu ``covariance_ratio(metric="quotient")``, Tirer et al. 2023);
        ``"within_fraction"`` / ``"between_fraction"``: tr Σ_W / (tr Σ_W + tr Σ_B) and
        tr Σ_B / (tr Σ_W + tr Σ_B) (Rangamani et al. 2023 §4; nc-toolbox ``nc1_weak``, which returns
        the pair (between, within)).
    K : int, optional
        Number of classes (default max(y) + 1); every class must occur.
    global_mean : {"class_means", "samples"}
        μ_G in Σ_B: the mean of the class means (default, review §2.3) or the sample mean
        (nc-toolbox, which passes ``global_embedding_mean(H)``).
    pinv_rtol : float in (0, 1), optional
        Eigenvalue cut-off of Σ_B⁺ relative to the largest eigenvalue: λ_i > pinv_rtol·λ_max kept,
        no rank cap (as ``numpy.linalg.pinv(Σ_B)``: 1e-15, nc-toolbox; ``torch.linalg.pinv``: d·eps,
        rhubarbwu "pinv"; ``scipy.linalg.pinv``: d·eps). Default: fctheory's rule, the ≤ K−1
        directions with singular value of M̃ above 10·max(K, d)·eps relative.
    rank : {"auto", "K-1"}
        ``"K-1"``: invert exactly the top K−1 eigen-directions of Σ_B (Han et al. 2022's script,
        rhubarbwu "svd": ``scipy.sparse.linalg.svds(Σ_B, k=K−1)``); refused when Σ_B has rank < K−1.

    Notes
    -----
    Every variant is 0 iff every feature equals its class mean (except ``"between_fraction"``,
    which is then 1), and invariant under H → sQH + t (s ≠ 0, Q orthogonal) and relabelling;
    H is rescaled exactly by a power of two first, so H·1e300 and H·1e-300 give the value of H.
    The eigenvalues of Σ_B are taken from the SVD of the centred means, never from Σ_B rounded.
    Undefined (FCTheoryError) when all class means coincide (Σ_B = 0).
    """
    xp, H, y, K, counts, Y, means, D, _ = _first_pass(H, y, K, shift=True)
    N = H.shape[0]
    Mc = means - _global_mean(xp, means, counts, global_mean)
    if variant != "papyan":
        return _trace_variant(float(xp.sum(D * D)) / N, float(xp.sum(Mc * Mc)) / K, variant)
    # tr(Σ_W Σ_B⁺)/K = ‖D V S⁻¹‖²/N with M̃ = U S Vᵀ: only the between-class directions are
    # needed, O(N·d·K) instead of forming the d×d Σ_W and its pseudo-inverse
    V, s_k = _between_directions(xp, Mc, K, pinv_rtol, rank)
    T = (D @ V) / s_k[None, :]
    return float(xp.sum(T * T)) / N


_ST = Instance(ClassStatistics)


def _unit_statistics(st, global_mean):
    """(xp, centred means M̃·2^-e, Σ_W·2^-2e, class variances·2^-2e, e) of statistics at any scale.

    NC1 and CDNV are computed from the statistics rescaled exactly by the power of two that brings the
    centred means into [0.5, 1), as the feature-based functions rescale H (their squares cannot overflow).
    """
    xp, means = _statistics_means(st)
    Mc, e = _centred_means(xp, means, st.counts, global_mean)
    sigma_W = asarray_like(st.sigma_W, means, dtype=xp.float64)
    class_var = asarray_like(st.class_var, means, dtype=xp.float64)
    return xp, Mc, pow2_scale(sigma_W, 2 * e, xp), pow2_scale(class_var, 2 * e, xp), e


def _statistics_means(st):
    """(xp, the class means of ``st`` as float64 in their own namespace and on their device)."""
    xp = array_namespace_of(st.means)
    return xp, xp.asarray(st.means, dtype=xp.float64)


def _centred_means(xp, means, counts, global_mean):
    """(M̃·2^-e, e): the class means centred at μ_G (``global_mean``) and rescaled exactly.

    The one centring of every statistics-based metric (NC1, CDNV, NC3 and, through :func:`_centred_unit`,
    NC2, equinorm and equiangularity), so that :func:`nc_summary` shares it and equals each metric.
    """
    return _centred_unit(xp, means, True, counts if global_mean == "samples" else None, with_exponent=True)


@public(st=_ST, variant=_NC1_VARIANTS, global_mean=_GMEAN, pinv_rtol=_RTOL, rank=_RANK)
def nc1_from_statistics(
    st: ClassStatistics,
    *,
    variant: str = "papyan",
    global_mean: str = "class_means",
    pinv_rtol: float | None = None,
    rank: str = "auto",
) -> float:
    """NC1 from class statistics alone (review eq. (4) and the variants of :func:`nc1`).

    ``nc1_from_statistics(class_statistics(H, y), ...) == nc1(H, y, ...)`` up to rounding: NC1 depends
    on the features only through the class means, the counts and Σ_W, so streamed or monitored
    statistics (:class:`NCAccumulator`, :func:`class_statistics_from_moments`) give it too.

    Parameters
    ----------
    st : ClassStatistics
        Uses ``means``, ``counts`` and ``sigma_W`` (the statistics' own ``global_mean`` is not used).
    variant, global_mean, pinv_rtol, rank :
        As in :func:`nc1`.

    Notes
    -----
    tr(Σ_W Σ_B⁺)/K = tr(VᵀΣ_W V S⁻²) is evaluated on the r ≤ K−1 between-class directions V of the
    SVD M̃ = U S Vᵀ of the centred means (never from Σ_B rounded), after an exact power-of-two rescaling.
    """
    xp, Mc, sigma_W, _, _ = _unit_statistics(st, global_mean)
    return _nc1_from_stats(xp, Mc, 0.0, sigma_W, st.K, variant, pinv_rtol, rank, name="st")


@public(K=Int(min=1))
def etf_gram(K: int) -> np.ndarray:
    """E_K = I_K − 11ᵀ/K: the Gram matrix of K centred simplex vertices up to scale (K/(K−1)).

    Parameters
    ----------
    K : int
        Size (≥ 1); the K×K result is sized against the memory budget before it is formed.
    """
    check_work("K", K, bytes=2 * 8 * K * K, what="etf_gram (a K x K matrix)")
    return _etf_gram(K).copy()


_CACHED_K = 256


def _read_only_per_K(make):
    """``make(K)`` as a read-only array, made once for the small K (every NC2 and NC3 of a monitor's epochs uses
    the same ones) and on each call beyond ``_CACHED_K``."""

    def frozen(K):
        A = make(K)
        A.flags.writeable = False
        return A

    cached = functools.lru_cache(maxsize=16)(frozen)
    return functools.wraps(make)(lambda K: cached(K) if K <= _CACHED_K else frozen(K))


@_read_only_per_K
def _etf_gram(K):
    """E_K (read-only)."""
    E = np.full((K, K), -1.0 / K)
    E[np.diag_indices(K)] += 1.0
    return E


@_read_only_per_K
def _offdiag(K):
    """The K×K boolean mask of the off-diagonal entries (read-only)."""
    return ~np.eye(K, dtype=bool)


def _as_K_by_m(name, M):
    xp, M = _features(M, name)
    if M.shape[0] < 2:
        fail(name, to_numpy(M), "needs at least 2 rows (classes)")
    return xp, M


def _nearest_scaled(G, T):
    # min_{c ≥ 0} ‖G − cT‖_F / ‖G‖_F, closed form c* = max(0, ⟨G,T⟩/‖T‖²)
    nG = float((G * G).sum()) ** 0.5
    if nG == 0.0:
        fail("M", "a zero matrix", "the distance to a scaled frame is undefined for M = 0")
    c = max(0.0, float((G * T).sum()) / float((T * T).sum()))
    R = G - c * T
    return float((R * R).sum()) ** 0.5 / nG


def _check_gram_size(name, value, K, what, m=1, passes=1):
    """Size a pair computation: its K×K matrices below :data:`_tiles.LARGE_K` classes, its tiles from there on."""
    if int(K) < _tiles.LARGE_K:
        check_work(name, value, bytes=4 * 8 * int(K) ** 2, what=what)
    else:
        _tiles.tiled_budget(name, value, K, m, what=what.split(" (")[0] + " (tiles of class pairs)", passes=passes)


def _centred_unit(xp, M, center, counts=None, with_exponent=False):
    """The (optionally centred) rows of M, rescaled exactly so that the largest entry is < 1.

    Centring subtracts the mean row, or the count-weighted mean row Σ n_k m_k / Σ n_k when
    ``counts`` are given (the sample mean when M holds class means). The first row is subtracted
    first (exact for rows sharing a large offset), so the centred rows keep their accuracy. With
    ``with_exponent`` returns (M̃·2^-e, e).
    """
    if counts is not None:
        c = np.asarray(to_numpy(counts), dtype=np.float64)
        if not center:
            fail("counts", c, "weights the centring; it needs center=True")
        if c.shape[0] != M.shape[0]:
            fail("counts", c, f"must have one entry per row of M (K = {M.shape[0]}), got {c.shape[0]}")
        if not np.all(c > 0):
            fail("counts", c, "class counts must be > 0")
    M, e1 = _unit(xp, M)  # first: the mean of 1e308 entries would overflow
    if center:
        M0 = M - M[:1]
        Mc = M0 - _global_mean(xp, M0, counts, "samples" if counts is not None else "class_means")
    else:
        Mc = M
    Mc, e2 = _unit(xp, Mc)
    return (Mc, e1 + e2) if with_exponent else Mc


@public(
    M=_M,
    variant=Choice("etf", "identity", "zhu", "cosine"),
    center=Bool(),
    counts=_COUNTS,
    legacy_positional=("variant",),
)
def nc2(M, *, variant: str = "etf", center: bool = True, counts=None) -> float:
    """NC2: distance of the rows of M (class means or classifier rows, K × m) to a simplex ETF.

    Parameters
    ----------
    M : array_like, (K, m)
    variant : {"etf", "identity", "zhu", "cosine"}
        ``"etf"`` (default): min_{c≥0} ‖GG − c·E_K‖_F/‖GG‖_F with GG = M̃M̃ᵀ, E_K = I − 11ᵀ/K
        (Súkeník et al.'s NC2A with the corrected E_K): 0 iff the rows are a scaled simplex ETF
        (equinorm *and* equiangular); in [0, 1].
        ``"identity"``: the same distance to c·I_K (NC2B, bias-free MSE optima); use ``center=False``.
        ``"zhu"``: ‖GG/‖GG‖_F − E_K/√(K−1)‖_F (Zhu et al., unnormalised centred rows; rhubarbwu
        ``simplex_etf_error``, Kothapalli 2023).
        ``"cosine"``: the review's eq. (7), the same with row-normalised M̃ (equiangularity only,
        blind to unequal norms).
    center : bool
        Subtract the mean row first (M̃ = M − 1μ_Gᵀ). Default True.
    counts : array_like, (K,), optional
        Class sizes n_k: centre at the weighted mean Σ n_k m_k / N, the sample mean when M holds the
        class means (rhubarbwu's ``m_G`` from ``MeanAccumulator.compute(weighted=True)``).

    Notes
    -----
    All variants are invariant under M → sMQ (s ≠ 0, Q orthogonal); M̃ is rescaled exactly by a
    power of two first, so M·1e300 and M·1e-300 give the value of M. Undefined (FCTheoryError) for
    M̃ = 0, and for ``"cosine"`` when a row of M̃ is zero. From ``fctheory.metrics.pairs.LARGE_K`` classes on
    the Gram is never formed: its sums come from tiles of class pairs (:mod:`fctheory.metrics.pairs`).
    """
    xp, M = _as_K_by_m("M", M)
    K = M.shape[0]
    _check_gram_size("M", f"array of shape {tuple(M.shape)}", K, "nc2 (K x K Gram matrices)", M.shape[1])
    return _nc2_from(xp, _centred_unit(xp, M, center, counts), variant)


def _nc2_from(xp, Mc, variant):
    """NC2 of the already centred (or not) rows Mc, rescaled exactly (see :func:`nc2`)."""
    K = Mc.shape[0]
    if variant == "cosine":
        Mc = _row_normalised(xp, Mc, "M")
    if K >= _tiles.LARGE_K:  # in tiles of class pairs: no K×K matrix
        return _tiles.frame_distance_tiled(Mc, "zhu" if variant == "cosine" else variant)
    G = to_numpy(Mc @ Mc.T)
    E = _etf_gram(K)
    if variant == "etf":
        return _nearest_scaled(G, E)
    if variant == "identity":
        return _nearest_scaled(G, np.eye(K))
    nG = np.linalg.norm(G)
    if nG == 0.0:
        fail("M", "a zero matrix", "NC2 is undefined for M = 0")
    return float(np.linalg.norm(G / nG - E / np.sqrt(K - 1)))


def _reduce(x, reduction, ddof=0, what="the values"):
    """mean, variance (divisor n − ddof) or coefficient of variation std/mean of a 1-D NumPy array."""
    x = np.asarray(x, dtype=np.float64)
    mean = float(x.mean())
    if reduction == "mean":
        return mean
    if x.size - ddof <= 0:
        fail("ddof", ddof, f"a variance of {x.size} value(s) with ddof={ddof} is undefined")
    var = float(np.sum((x - mean) ** 2)) / (x.size - ddof)
    if reduction == "var":
        return var
    if mean == 0.0:
        fail("reduction", reduction, f"the coefficient of variation is undefined: the mean of {what} is 0")
    return var**0.5 / mean


def _pairs(x):
    """x_i − x_j over the pairs i < j, in the row-major order of numpy.triu_indices(K, 1)."""
    i, j = np.triu_indices(x.shape[0], 1)
    return x[i] - x[j]


_REDUCE3 = Choice("mean", "var", "cv")


@public(M=_M, center=Bool(), counts=_COUNTS, log=Bool(), pairs=Bool(), reduction=Choice("cv", "mean"))
def equinorm(
    M, *, center: bool = True, counts=None, log: bool = False, pairs: bool = False, reduction: str = "cv"
) -> float:
    """Equinormness of the (centred) rows m̃_k of M (K × d).

    Parameters
    ----------
    M : array_like, (K, d)
        Class means (or classifier rows).
    center : bool
        Subtract the mean row first (default True).
    counts : array_like, (K,), optional
        Class sizes: centre at the count-weighted (sample) mean instead (see :func:`nc2`).
    log : bool
        Use log‖m̃_k‖ instead of ‖m̃_k‖: Wu & Papyan 2024 §3.5's log-norm equinormness (the CoV of the
        log norms; nc-toolbox ``nc2_equinormness``).
    pairs : bool
        Reduce the signed differences x_i − x_j over the pairs i < j (row-major
        ``numpy.triu_indices`` order) instead of the K values x_k: nc-toolbox ``nc2_equinormness``
        does this. Its mean is Σ_k (K − 1 − 2k)·x_k / (K(K−1)/2), which depends on the order of the
        classes: kept only to reproduce that library.
    reduction : {"cv", "mean"}
        ``"cv"`` (default): population std / mean (the coefficient of variation; Papyan et al. 2020's
        equinorm std_k ‖m̃_k‖ / mean_k ‖m̃_k‖); ``"mean"``: the mean.

    Notes
    -----
    With ``log=False`` the CoV is scale invariant (M̃ is rescaled exactly first) and the mean scales
    with M. The log-norm statistics are *not* scale invariant (log‖s·m‖ = log s + log‖m‖); they are
    computed as log‖m̃·2^-e‖ + e·log 2, so no magnitude overflows. Undefined (FCTheoryError) when every
    row of M̃ is zero, for ``log=True`` when a row is zero, and for ``"cv"`` when the mean is 0.
    """
    xp, M = _as_K_by_m("M", M)
    Mc, e = _centred_unit(xp, M, center, counts, with_exponent=True)
    return _equinorm_of_norms(
        to_numpy(_row_norms(xp, Mc)), e, log, pairs, reduction, f"array of shape {tuple(M.shape)}"
    )


def _row_norms(xp, Mc):
    return xp.sqrt((Mc * Mc).sum(axis=1))


def _equinorm_of_norms(nr, e, log, pairs, reduction, show):
    """Equinorm of the rows whose norms (NumPy) are ``nr``·2^e (see :func:`equinorm`); ``show`` names M."""
    if not log and not pairs:
        mean = float(nr.sum()) / nr.shape[0]
        if mean == 0.0:
            fail("M", "a zero matrix", "equinorm is undefined when every row is zero")
        if reduction == "mean":  # the mean norm, at the rows' scale (as _reduce and _scale_back below give it)
            return _scale_back("M", show, mean, e, "the mean norm")
        dev = nr - mean
        return math.sqrt(float((dev * dev).sum()) / nr.shape[0]) / mean
    if log:
        if np.any(nr == 0):
            fail("M", "a matrix with a zero (centred) row", "the log norm of a zero row is undefined")
        x = np.log(nr) + e * np.log(2.0)
    else:
        if not np.any(nr > 0):
            fail("M", "a zero matrix", "equinorm is undefined when every row is zero")
        x = nr
    if pairs:
        x = _pairs(x)
    val = _reduce(x, reduction, what="the norms")
    if log or reduction == "cv":
        return float(val)
    return _scale_back("M", show, val, e, "the mean norm")


def _row_normalised(xp, Mc, name, nr=None):
    """The rows of Mc divided by their norms ``nr`` (computed when not given); refused for a zero row."""
    nr = _row_norms(xp, Mc) if nr is None else nr
    if bool(xp.any(nr == 0)):
        fail(name, "a matrix with a zero (centred) row", "cosines are undefined for zero rows")
    return Mc / nr[:, None]


@public(
    M=_M,
    variant=Choice("max_angle", "std", "shifted_mean", "shifted_cv"),
    center=Bool(),
    counts=_COUNTS,
    legacy_positional=("variant",),
)
def equiangularity(M, *, variant: str = "max_angle", center: bool = True, counts=None) -> float:
    """Equiangularity of the (centred) rows of M.

    ``"max_angle"`` (default): mean_{k≠k'} |cos(m̃_k, m̃_k') + 1/(K−1)| (Papyan's "max-angle"; absolute
    values, so errors of opposite sign cannot cancel); ``"std"``: std_{k≠k'} cos(m̃_k, m̃_k')
    (Papyan's equiangularity, 0 for any equiangular set, not only the simplex);
    ``"shifted_mean"`` / ``"shifted_cv"``: the mean / the coefficient of variation (population std
    over mean) of cos(m̃_k, m̃_k') + 1/(K−1) over the pairs k < k' (Wu & Papyan 2024 §3.5's
    "interference"; nc-toolbox ``nc2_equiangularity`` with reduction "mean" / "cov"; the mean is ≥ 0
    for centred rows of equal norm, with equality for a simplex). ``counts`` centres at the
    count-weighted mean (see :func:`nc2`).

    Scale invariant (M̃ is rescaled exactly first); undefined (FCTheoryError) when a row of M̃ is zero
    (and for ``"shifted_cv"`` when the shifted mean is 0). From ``fctheory.metrics.pairs.LARGE_K`` classes on
    the cosines are summed in tiles of class pairs, never as a K×K matrix (:mod:`fctheory.metrics.pairs`).
    """
    xp, M = _as_K_by_m("M", M)
    K = M.shape[0]
    _check_gram_size("M", f"array of shape {tuple(M.shape)}", K, "equiangularity (a K x K cosine matrix)", M.shape[1])
    Mc = _centred_unit(xp, M, center, counts)
    if K >= _tiles.LARGE_K:  # in tiles of class pairs: no K×K matrix
        return _tiles.equiangularity_tiled(Mc, variant)
    U = _row_normalised(xp, Mc, "M")
    return _equiangularity_of_cosines(to_numpy(U @ U.T), variant)


def _equiangularity_of_cosines(C, variant):
    """Equiangularity (see :func:`equiangularity`) of the K×K cosine matrix C (NumPy) of the rows."""
    K = C.shape[0]
    if variant in ("shifted_mean", "shifted_cv"):
        i, j = np.triu_indices(K, 1)
        return float(
            _reduce(C[i, j] + 1.0 / (K - 1), "mean" if variant == "shifted_mean" else "cv", what="the shifted cosines")
        )
    off = C[_offdiag(K)]
    if variant == "max_angle":
        return float(abs(off + 1.0 / (K - 1)).sum()) / off.shape[0]
    dev = off - float(off.sum()) / off.shape[0]
    return math.sqrt(float((dev * dev).sum()) / off.shape[0])


@public(M=_M, kernel=Choice("log", "distance", "riesz"), reduction=_REDUCE3, center=Bool(), counts=_COUNTS)
def uniformity(M, *, kernel: str = "log", reduction: str = "var", center: bool = True, counts=None) -> float:
    """Hyperspherical uniformity of the class means (generalised NC2, Liu et al. 2023; Wu & Papyan 2024).

    The centred rows are normalised, u_k = m̃_k/‖m̃_k‖, and a kernel is evaluated on every pair k < k':

    * ``"log"`` (default): log(1/‖u_k − u_k'‖), the logarithmic energy (rhubarbwu ``log_kernel``;
      nc-toolbox ``gnc2_hypershperical_uniformity``);
    * ``"distance"``: ‖u_k − u_k'‖ (rhubarbwu ``dist_kernel``);
    * ``"riesz"``: sign(s)·‖u_k − u_k'‖^(−s) with s = d − 2 (the Riesz s-energy on S^(d−1);
      rhubarbwu ``riesz_kernel``, which takes sign(0) = +1, so s = 0 gives 1).

    Parameters
    ----------
    M : array_like, (K, d)
    kernel : {"log", "distance", "riesz"}
    reduction : {"var", "mean", "cv"}
        Over the K(K−1)/2 pairs: ``"var"`` (default; population variance, rhubarbwu
        ``kernel_stats(...)[1]``, the "nc2g" metrics), ``"mean"`` (the energy per pair;
        ``kernel_stats(...)[0]``, nc-toolbox reduction "mean"), ``"cv"`` (population std / mean,
        nc-toolbox reduction "cov").
    center, counts :
        As in :func:`nc2`.

    Notes
    -----
    Scale invariant (the rows are normalised; M̃ is rescaled exactly first). The peer libraries add
    the float epsilon to the norms (rhubarbwu ``normalize``); fctheory normalises exactly.
    Undefined (FCTheoryError) when a row of M̃ is zero, for the log and Riesz (s > 0) kernels when two
    rows have the same direction, and for ``"cv"`` when the mean is 0.
    """
    xp, M = _as_K_by_m("M", M)
    K, d = M.shape
    check_work("M", f"array of shape {tuple(M.shape)}", bytes=4 * 8 * K * K, what="uniformity (K x K pair distances)")
    U = to_numpy(_row_normalised(xp, _centred_unit(xp, M, center, counts), "M"))
    i, j = np.triu_indices(K, 1)
    dist = np.sqrt(np.sum((U[i] - U[j]) ** 2, axis=1))
    s = d - 2
    if kernel == "distance":
        x = dist
    else:
        if (kernel == "log" or s > 0) and np.any(dist == 0):
            fail("M", "two (centred) rows with the same direction", f"the {kernel} kernel is infinite at distance 0")
        x = -np.log(dist) if kernel == "log" else np.copysign(1.0, s) * dist ** float(-s)
    return float(_reduce(x, reduction, what="the kernel values"))


@public(M=_M, ood_mean=Array(ndim=1, native=True))
def nc5(M, ood_mean) -> float:
    """NC5 (Ammar et al. 2024, NECO): mean_k |cos(m_k, μ_G^OOD)|, the orthogonality of the
    (uncentred) class means M (K × d) to the global mean of out-of-distribution features.

    rhubarbwu ``orthogonality_deviation(M, m_G_ood)``. 0 when every class mean is orthogonal to the
    OOD mean. Scale invariant in M and in ``ood_mean`` (each is rescaled exactly first); undefined
    (FCTheoryError) for a zero row of M or a zero ``ood_mean``.
    """
    xp, M = _as_K_by_m("M", M)
    _, g = _features(asarray_like(ood_mean, M).reshape(1, -1), "ood_mean")
    if g.shape[1] != M.shape[1]:
        fail("ood_mean", to_numpy(g[0]), f"must have d = {M.shape[1]} entries like the rows of M")
    U = _row_normalised(xp, _unit(xp, M)[0], "M")
    gu = _unit(xp, g)[0][0]
    ng = float(xp.sqrt(xp.sum(gu * gu)))
    if ng == 0.0:
        fail("ood_mean", to_numpy(g[0]), "the cosine with a zero vector is undefined")
    return float(xp.mean(xp.abs(U @ (gu / ng))))


def _check_W(W, K, m, like):
    """W as float64 in the namespace and on the device of ``like`` (the features' class means)."""
    xp, W = _features(W, "W", like)
    if W.shape != (K, m):
        fail("W", to_numpy(W), f"must have shape (K, m) = ({K}, {m}), got {tuple(W.shape)}")
    return W


def _nc3_from(xp, W, means, mu_G, H, y, variant):
    """NC3 of (W, M̃); W and the means may be given at any scale (each is rescaled exactly)."""
    K = W.shape[0]
    W = _unit(xp, W)[0]
    Mc = _unit(xp, _minus(means, mu_G))[0]
    if variant == "duality" or variant == "duality_squared":
        nW = math.sqrt(float((W * W).sum()))
        nM = math.sqrt(float((Mc * Mc).sum()))
        if nW == 0.0 or nM == 0.0:
            fail("W", "zero classifier or coinciding class means", "self-duality is undefined")
        D = W / nW - Mc / nM
        val = float((D * D).sum())
        return val if variant == "duality_squared" else val**0.5
    if variant == "etf" and K >= _tiles.LARGE_K:  # in tiles of class pairs: no K×K matrix
        return _tiles.frame_distance_tiled(W, "zhu", B=Mc, name="W")
    if variant == "etf":
        G = to_numpy(W @ Mc.T)
        nG = np.linalg.norm(G)
        if nG == 0.0:
            fail("W", "W orthogonal to the centred means", "NC3 ('etf') is undefined when W M̃ᵀ = 0")
        return float(np.linalg.norm(G / nG - _etf_gram(K) / np.sqrt(K - 1)))
    # "cosine": 1 − (1/N)Σ_i cos(h_i, w_{y_i}) (Súkeník et al.); per-row norms of unit-scaled rows
    H = _unit(xp, H)[0]
    Wy = W[y]
    nh = xp.sqrt(xp.sum(H * H, axis=1))
    nw = xp.sqrt(xp.sum(Wy * Wy, axis=1))
    if bool(xp.any(nh == 0)) or bool(xp.any(nw == 0)):
        fail("H", "a zero feature or classifier row", "cosines are undefined for zero vectors")
    # normalise each row before the product: the cosine of two tiny rows cannot underflow
    num = xp.sum((H / nh[:, None]) * (Wy / nw[:, None]), axis=1)
    return float(1.0 - xp.mean(num))


@public(
    W=_M,
    H=_H,
    y=_Y,
    variant=Choice("duality", "duality_squared", "etf", "cosine"),
    K=_KOPT,
    global_mean=_GMEAN,
    legacy_positional=("variant",),
)
def nc3(W, H, y, *, variant: str = "duality", K: int | None = None, global_mean: str = "class_means") -> float:
    """NC3 self-duality of the classifier W (K × m) and the centred class means M̃ of H.

    Parameters
    ----------
    W : array_like, (K, m)
    H : array_like, (N, m)
    y : array_like of int, (N,)
    variant : {"duality", "duality_squared", "etf", "cosine"}
        ``"duality"`` (default): ‖W/‖W‖_F − M̃/‖M̃‖_F‖_F (Papyan et al.; nc-toolbox ``nc3_self_duality``;
        ``"duality_squared"`` is its square, as Papyan plots it); 0 iff W ∝ M̃ (positive factor).
        ``"etf"``: ‖WM̃ᵀ/‖WM̃ᵀ‖_F − E_K/√(K−1)‖_F (review eq. (8), Zhu et al.; rhubarbwu
        ``self_duality_error``); 0 does not imply W ∝ M̃.
        ``"cosine"``: 1 − (1/N)Σ_i cos(h_i, w_{y_i}) (Súkeník et al., per sample, uncentred).
    K : int, optional
    global_mean : {"class_means", "samples"}
        μ_G of M̃ = M − 1μ_Gᵀ (see :func:`nc1`); unused by ``"cosine"``.

    Notes
    -----
    Invariant under (W, H) → (sWQᵀ, tHQᵀ) for s, t > 0 and Q orthogonal; W and H are rescaled exactly
    first, so any magnitude gives the same value.
    """
    xp, Hf, yy, K, counts, _, means, _, _ = _first_pass(H, y, K, shift=variant != "cosine")
    W = _check_W(W, K, means.shape[1], means)
    return _nc3_from(xp, W, means, _global_mean(xp, means, counts, global_mean), Hf, yy, variant)


@public(
    W=_M,
    st=_ST,
    variant=Choice("duality", "duality_squared", "etf"),
    global_mean=_GMEAN,
)
def nc3_from_statistics(W, st: ClassStatistics, *, variant: str = "duality", global_mean: str = "class_means") -> float:
    """NC3 self-duality of the classifier W (K × d) and the centred class means of the statistics ``st``.

    ``nc3_from_statistics(W, class_statistics(H, y), ...) == nc3(W, H, y, ...)`` up to rounding, for the
    variants that depend on the features only through their class means (the per-sample ``"cosine"``
    NC3 needs the samples: use :func:`nc3`).

    Parameters
    ----------
    W : array_like, (K, d)
        Brought to the namespace and device of the statistics.
    st : ClassStatistics
        Uses ``means`` and ``counts``.
    variant : {"duality", "duality_squared", "etf"}
    global_mean : {"class_means", "samples"}
        As in :func:`nc3`.
    """
    xp, means = _statistics_means(st)
    W = _check_W(W, st.K, st.d, means)
    return _nc3_from(xp, W, _centred_means(xp, means, st.counts, global_mean)[0], 0.0, None, None, variant)


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
        Uses ``means``, ``counts``, ``sigma_W`` and ``class_var``.
    W : array_like, (K, d), optional
        The classifier (rows w_k): adds the entries from ``nc2_W`` on; brought to the statistics' namespace
        and device.

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
        return _summary_tiled(xp, Mc, e, sigma_W, class_var, W, st.d, means)[0]
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
        out.update(_classifier_entries(xp, _check_W(W, K, st.d, means), Mc))
    return out


def _summary_budget(K, d, with_W):
    """Size :func:`nc_summary`: K×K matrices below _tiles.LARGE_K classes, else one tiled pass (two with W)."""
    _check_gram_size(
        "st", f"statistics of K = {K} classes", K, "nc_summary (K x K Gram and pair matrices)", d, 2 if with_W else 1
    )


def _summary_tiled(xp, Mc, e, sigma_W, class_var, W, d, means):
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
        entries, fits["W"] = _classifier_entries(xp, _check_W(W, K, d, means), Mc, frames=True)
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
    return _summary_tiled(xp, Mc, e, sigma_W, class_var, W, st.d, means)


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
    if W is not None and tuple(W.shape) != (st.K, st.d):
        fail("W", f"array of shape {tuple(W.shape)}", f"must have shape (K, d) = ({st.K}, {st.d}) like the statistics")
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
    _summary_budget(K, d, W is not None)
    from .._nc_kernels import JACOBI_MAX_K, KEYS, statistics_and_summary  # noqa: PLC0415 - numba: on first use

    if K > JACOBI_MAX_K:
        return None  # the kernel's Jacobi SVD takes at most JACOBI_MAX_K classes: the reference path decides
    counts = counts.astype(np.int64)  # a copy: the statistics' own
    ok, means, mu_G, sigma_W, sigma_B, class_var, out = statistics_and_summary(
        counts, sums, scatter, sq, shift, upper, np.empty((0, d)) if W is None else W
    )
    if not ok:
        return None
    st = ClassStatistics(means, mu_G, counts, sigma_W, sigma_B, class_var)
    keys = KEYS if W is not None else KEYS[:8]
    return st, dict(zip(keys, out.tolist()))


@public(
    W=_M,
    H=_H,
    y=_Y,
    pairs=Choice("matching", "upper"),
    cos=Bool(),
    reduction=_REDUCE3,
    ddof=_DDOF,
    K=_KOPT,
    global_mean=_GMEAN,
)
def uniform_duality(
    W,
    H,
    y,
    *,
    pairs: str = "matching",
    cos: bool = True,
    reduction: str = "cv",
    ddof: int = 0,
    K: int | None = None,
    global_mean: str = "class_means",
) -> float:
    """Uniform duality (UNC3, Wu & Papyan 2024 §3.6): how uniform the alignment of the classifier rows
    w_c with the centred class means μ̃_c = μ_c − μ_G is across classes.

    Parameters
    ----------
    W : array_like, (K, d)
    H : array_like, (N, d)
    y : array_like of int, (N,)
    pairs : {"matching", "upper"}
        ``"matching"`` (default): one value per class, s_c = sim(w_c, μ̃_c) (rhubarbwu
        ``similarities(W, M, m_G)``); ``"upper"``: sim(w_i, μ̃_j) over the pairs i < j (nc-toolbox
        ``unc3_uniform_duality``, which reduces the strict upper triangle of the cosine matrix).
    cos : bool
        sim = cosine (default) or the dot product ⟨w, μ̃⟩ (rhubarbwu ``similarities(cos=False)``).
    reduction : {"cv", "mean", "var"}
        ``"cv"`` (default; the coefficient of variation std/mean as in the paper, nc-toolbox "cov"),
        ``"mean"``, or ``"var"`` (rhubarbwu README's ``similarities(...).var()``: torch's default
        unbiased variance, ``ddof=1``).
    ddof : {0, 1}
        Divisor n − ddof of the variance (in ``"var"`` and in the std of ``"cv"``).
    K : int, optional
    global_mean : {"class_means", "samples"}
        μ_G of μ̃_c (see :func:`nc1`).

    Notes
    -----
    With ``cos=True`` invariant under (W, H) → (sWQᵀ, tHQᵀ + b), s, t > 0 (W and H are rescaled
    exactly first). With ``cos=False`` the mean scales with s·t and the variance with (s·t)²; they
    are computed at unit scale and scaled back exactly. Undefined (FCTheoryError) for cosines of a zero
    vector and for ``"cv"`` with mean 0.
    """
    xp, Hs, _, K, counts, _, means, _, e = _first_pass(H, y, K, shift=True)
    W = _check_W(W, K, means.shape[1], means)
    Wu, ew = _unit(xp, W)
    Mc, em = _unit(xp, means - _global_mean(xp, means, counts, global_mean))
    if cos:
        Wu = _row_normalised(xp, Wu, "W")
        Mc = _row_normalised(xp, Mc, "H")
    if pairs == "matching":
        x = to_numpy(xp.sum(Wu * Mc, axis=1))
    else:
        i, j = np.triu_indices(K, 1)
        x = to_numpy(Wu @ Mc.T)[i, j]
    val = _reduce(x, reduction, ddof, what="the similarities")
    if cos or reduction == "cv":
        return float(val)
    scale = e + ew + em  # ⟨w, μ̃⟩ of the inputs = (value at unit scale)·2^scale
    return _scale_back(
        "H",
        f"array of shape {tuple(Hs.shape)}",
        val,
        scale * (2 if reduction == "var" else 1),
        "the similarity statistic",
    )


def _ncc_disagreements(xp, W, b, H, means):
    """Per-sample disagreements (bool, NumPy) of argmax(Wh + b) and argmin ‖h − μ_c‖, free of overflow.

    argmax is invariant under a positive rescaling of (W, b) and argmin under a common one of
    (H, means); the cross term ⟨h, w⟩ is formed from unit-scaled factors and only then compared
    with b, so neither a huge nor a tiny scale changes the predictions.
    """
    Hs, eh = _unit(xp, H)
    Ms = pow2_scale(means, eh, xp)
    if b is not None:
        Wb, ew = _unit(xp, xp.concatenate([W, b[:, None]], axis=1))
        Ws, bs = Wb[:, :-1], Wb[:, -1]
    else:
        Ws, ew = _unit(xp, W)
        bs = None
    with np.errstate(over="ignore"):
        msq = xp.sum(Ms * Ms, axis=1)[None, :]
    # in blocks of samples: at most 2^22 scores (32 MB) at a time, whatever N·K (no N × K matrix)
    step = max(1, 2**22 // max(1, Ws.shape[0]))
    parts = [_ncc_block(xp, Hs[i : i + step], Ws, bs, Ms, msq, eh) for i in range(0, Hs.shape[0], step)]
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _ncc_block(xp, Hs, Ws, bs, Ms, msq, eh):
    """The disagreements of one block of unit-scaled rows (see :func:`_ncc_disagreements`)."""
    logits = Hs @ Ws.T  # true logits·2^-(eh+ew), minus the bias term
    if bs is not None and bool(xp.any(bs != 0)):
        # compare in the bias's scale when H is small, in the features' scale when H is large
        if eh >= 0:
            with np.errstate(under="ignore"):
                logits = logits + ldexp(bs, -eh, xp)[None, :]
        else:
            with np.errstate(under="ignore"):
                logits = ldexp(logits, eh, xp) + bs[None, :]
    pred = xp.argmax(logits, axis=1)
    # ‖h − μ_c‖² = ‖h‖² − 2⟨h, μ_c⟩ + ‖μ_c‖²; the ‖h‖² term does not change the argmin
    with np.errstate(over="ignore"):
        dist = -2.0 * (Hs @ Ms.T) + msq
    ncc = xp.argmin(dist, axis=1)
    return to_numpy(pred != ncc)


@public(
    W=_M,
    H=_H,
    y=_Y,
    b=Array(ndim=1, native=True).or_none(),
    means=_M.or_none(),
    K=_KOPT,
    average=Choice("samples", "classes"),
    legacy_positional=("b",),
)
def nc4(W, H, y, *, b=None, means=None, K: int | None = None, average: str = "samples") -> float:
    """NC4: disagreement rate between the classifier argmax_c(⟨w_c, h⟩ + b_c) and the nearest class
    centre argmin_c ‖h − μ_c‖ (review eq. (9); a disagreement rate, not an error rate).

    Parameters
    ----------
    W : array_like, (K, m)
    H : array_like, (N, m)
    y : array_like of int, (N,)
        Labels (used for the class means when ``means`` is None).
    b : array_like, (K,), optional
    means : array_like, (K, m), optional
        Class means (e.g. from :class:`NCAccumulator`), to evaluate batches of a feature set that does
        not fit in memory; the counts are then additive over batches.
    K : int, optional
    average : {"samples", "classes"}
        ``"samples"`` (default): the fraction of the N samples (nc-toolbox
        ``nc4_classifier_agreement`` = 1 − this; rhubarbwu ``clf_ncc_agreement(weighted=True)`` = 1 −
        this, with b = None); ``"classes"``: the mean over the classes present in y of the per-class
        disagreement rates (rhubarbwu ``clf_ncc_agreement(weighted=False)`` = 1 − this).

    Notes
    -----
    Ties are broken towards the lowest class index in both rules. Invariant under (W, b) → s(W, b)
    and (H, means) → t(H, means) for s, t > 0, whatever the magnitudes.
    """
    xp, Hf = _features(H)
    if means is None:
        _, Hs, _, _, _, _, ms, _, e = _first_pass(Hf, y, K)
        means = ldexp(ms, e, xp) if e else ms
    else:
        _, means = _features(means, "means", Hf)
        if means.shape[1] != Hf.shape[1]:
            fail(
                "means", to_numpy(means), f"must have m = {Hf.shape[1]} columns like H, got shape {tuple(means.shape)}"
            )
        if K is not None and means.shape[0] != K:
            fail("K", K, f"must equal the number of rows of means ({means.shape[0]})")
        if means.shape[0] < 2:
            fail("means", to_numpy(means), "needs at least 2 rows (classes)")
        yh = np.asarray(to_numpy(y))
        if yh.ndim != 1 or yh.shape[0] != Hf.shape[0]:
            fail("y", yh, f"must be a 1-D label array of length N = {Hf.shape[0]} (one label per row of H)")
        if yh.size and int(yh.max()) >= means.shape[0]:
            fail("y", yh, f"labels must be < K = {means.shape[0]} (the rows of means)")
    Kc, m = means.shape
    W = _check_W(W, Kc, m, Hf)
    if b is not None:
        _, b2 = _features(asarray_like(b, Hf).reshape(1, -1), "b")
        if b2.shape[1] != Kc:
            fail("b", to_numpy(b), f"must have K = {Kc} entries")
        b = b2[0]
    dis = _ncc_disagreements(xp, W, b, Hf, means)
    if average == "samples":
        return int(dis.sum()) / Hf.shape[0]
    yh = np.asarray(to_numpy(y)).astype(np.int64)
    cnt = np.bincount(yh, minlength=Kc)
    per = np.bincount(yh, weights=dis.astype(np.float64), minlength=Kc)
    present = cnt > 0
    return float(np.mean(per[present] / cnt[present]))


def _cdnv_budget(name, value, K, m, matrix, reduction):
    """Size the CDNV: its K×K matrices (asked for, or below _tiles.LARGE_K classes), else its tiles."""
    if matrix:
        check_work(name, value, bytes=4 * 8 * K * K, what="cdnv (K x K pair matrices)")
    else:
        _check_gram_size(name, value, K, "cdnv (K x K pair matrices)", m, 2 if reduction == "cv" else 1)


def _times_pow2(name, value, v, x):
    """v·2^x for a real exponent x (exact power-of-two part via ldexp); refuse an overflow."""
    n = int(np.floor(x))
    with np.errstate(over="ignore", under="ignore"):
        out = np.ldexp(np.asarray(v, dtype=np.float64) * 2.0 ** (x - n), n)
    if not np.all(np.isfinite(out)):
        fail(name, value, "the CDNV overflows float64 at this scale with this dist_exp; rescale the features")
    return out


def _cdnv_from(means, class_var, matrix, dist_exp=1.0, reduction="mean", e=0, name="H"):
    """CDNV from (unit-scaled by 2^-e) means and class variances.

    V(i, j) = ((Var_i + Var_j)/2) / ‖μ_i − μ_j‖^(2p) scales as 2^(2e(1−p)): for p = 1 (Galanti et
    al.) any common scale cancels; otherwise the factor is applied exactly at the end.
    """
    mu = to_numpy(means)
    v = to_numpy(class_var)
    K, m = mu.shape
    if not matrix and K >= _tiles.LARGE_K:  # in tiles of class pairs: no K×K matrix
        val, x = _tiles.cdnv_tiled(mu, v, dist_exp=dist_exp, reduction=reduction, name=name)
        if reduction == "cv":  # scale free
            return val
        x += 2.0 * e * (1.0 - dist_exp)
        return val if x == 0 else float(_times_pow2(name, "features of this magnitude", val, x))
    # exact differences (no ‖a‖² + ‖b‖² − 2⟨a, b⟩ cancellation for close means), in row chunks so
    # the K×K×m temporary never exceeds ~2 MB whatever K is (cache-sized blocks: 3× faster than 32 MB ones)
    step = max(1, 2**18 // max(1, K * m))
    if step >= K:  # one block (the usual case: K·K·m ≤ 2^18)
        diff = mu[:, None, :] - mu[None, :, :]
        d2 = (diff * diff).sum(-1)
    else:
        d2 = np.empty((K, K))
        for i in range(0, K, step):
            diff = mu[i : i + step, None, :] - mu[None, :, :]
            d2[i : i + step] = (diff * diff).sum(-1)
    off = _offdiag(K)
    if not matrix and dist_exp == 1.0 and reduction == "mean":
        # Galanti et al.'s mean CDNV (every scale cancels): the off-diagonal ratios alone, as below
        den = d2[off]
        if (den == 0).any():
            fail(name, "two classes with the same mean", "CDNV is undefined when class means coincide")
        return float(((v[:, None] + v[None, :])[off] / (2.0 * den)).sum()) / den.shape[0]
    if np.any(d2[off] == 0):
        fail(name, "two classes with the same mean", "CDNV is undefined when class means coincide")
    V = np.zeros((K, K))
    den = np.where(off, d2, 1.0)
    if dist_exp != 1.0:
        with np.errstate(over="ignore", under="ignore"):
            den = den**dist_exp
        if not np.all(np.isfinite(den)) or np.any(den[off] == 0):
            fail("dist_exp", dist_exp, "‖μ_i − μ_j‖^(2·dist_exp) is out of the float64 range for these means")
    V[off] = ((v[:, None] + v[None, :]) / (2.0 * den))[off]
    x = 2.0 * e * (1.0 - dist_exp)
    if matrix:
        # the K×K matrix is formed on the host (small); it is returned in the means' library and device
        return asarray_like(V if x == 0 else _times_pow2(name, "features of this magnitude", V, x), means)
    if reduction == "cv":
        return float(_reduce(V[np.triu_indices(K, 1)], "cv", what="the CDNVs"))
    val = float(V[off].mean())
    return val if x == 0 else float(_times_pow2(name, "features of this magnitude", val, x))


@public(
    H=_H,
    y=_Y,
    matrix=Bool(),
    K=_KOPT,
    ddof=_DDOF,
    dist_exp=Real(lo=0.0, lo_open=True, hi=64.0),
    reduction=Choice("mean", "cv"),
)
def cdnv(
    H, y, *, matrix: bool = False, K: int | None = None, ddof: int = 0, dist_exp: float = 1.0, reduction: str = "mean"
):
    """Class-distance normalised variance (Galanti et al. 2022; review eq. (51)).

    V(i, j) = (Var_i + Var_j) / (2‖μ_i − μ_j‖^(2p)) with Var_i = Σ_{h in class i} ‖h − μ_i‖² / (n_i − ddof)
    and p = ``dist_exp``.

    Parameters
    ----------
    H : array_like, (N, d)
    y : array_like of int, (N,)
    matrix : bool
        Return the K×K matrix (zero diagonal) instead of a reduction.
    K : int, optional
    ddof : {0, 1}
        0 (default): the biased class variance (Galanti et al.; rhubarbwu ``VarNormAccumulator`` +
        ``variability_cdnv``); 1: the unbiased one (nc-toolbox ``class_embedding_variances`` +
        ``nc1_cdnv``); needs two samples per class.
    dist_exp : float in (0, 64]
        p: the power of the squared distance (rhubarbwu ``variability_cdnv(dist_exp=p)``); 1 is
        Galanti et al.'s CDNV.
    reduction : {"mean", "cv"}
        ``"mean"`` (default): the average over the K(K−1) ordered pairs (= over the K(K−1)/2
        unordered ones; the intended reading of the review's 2/(s(s−1))·Σ_{i≠i′}, which doubles it;
        see docs/errata.md); ``"cv"``: population std / mean over the pairs (nc-toolbox
        ``nc1_cdnv(reduction="cov")``).

    Notes
    -----
    For p = 1, and for ``"cv"`` at any p, invariant under H → sQH + t (H is rescaled exactly first,
    so any magnitude gives the same value); for p ≠ 1 V scales as s^(2−2p), applied exactly after
    a unit-scale computation. 0 when every feature equals its class mean; undefined (FCTheoryError)
    when two class means coincide. From ``fctheory.metrics.pairs.LARGE_K`` classes on (unless ``matrix``) the
    pairs are summed in tiles (:mod:`fctheory.metrics.pairs`: every squared distance within 1e-11 relative,
    close pairs recomputed from their exact differences); ``pairs.cdnv_sample`` estimates the mean from
    sampled pairs with a stated error.
    """
    xp, H, y, K, counts, Y, means, D, e = _first_pass(H, y, K, shift=True)
    _cdnv_budget("K", K, K, means.shape[1], matrix, reduction)
    class_var = _class_var(xp, Y, D, counts, ddof)
    return _cdnv_from(means, class_var, matrix, dist_exp, reduction, e)


@public(st=_ST, matrix=Bool(), dist_exp=Real(lo=0.0, lo_open=True, hi=64.0), reduction=Choice("mean", "cv"))
def cdnv_from_statistics(st: ClassStatistics, *, matrix: bool = False, dist_exp: float = 1.0, reduction: str = "mean"):
    """CDNV from class statistics alone (Galanti et al. 2022; review eq. (51); see :func:`cdnv`).

    ``cdnv_from_statistics(class_statistics(H, y, ddof=q), ...) == cdnv(H, y, ddof=q, ...)`` up to
    rounding.

    Parameters
    ----------
    st : ClassStatistics
        Uses ``means``, ``counts`` and ``class_var`` (whose divisor n_k − ddof was chosen when the
        statistics were made).
    matrix, dist_exp, reduction :
        As in :func:`cdnv`.
    """
    _cdnv_budget("st", f"statistics of K = {st.K} classes", st.K, st.d, matrix, reduction)
    _, Mc, _, class_var, e = _unit_statistics(st, "class_means")
    return _cdnv_from(Mc, class_var, matrix, dist_exp, reduction, e, name="st")
