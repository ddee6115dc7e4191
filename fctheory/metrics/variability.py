"""NC1 and CDNV, the within-class variability collapse (Kothapalli's review eqs. (4), (51); Papyan et al. 2020;
Galanti et al. 2022; Súkeník et al. Def. 3.4; Rangamani et al. 2023), from features or from class statistics.

Conventions in :mod:`fctheory.metrics.nc`. NC1's Σ_B⁺ is taken from the SVD of the centred class means, never
from Σ_B rounded; CDNV's squared distances come from exact differences (K×K path) or from tiles whose
cancelling pairs are recomputed (:mod:`fctheory.metrics.pairs`).
"""

from __future__ import annotations


import numpy as np

from .._backend import array_namespace_of, asarray_like, to_numpy
from .._budget import check_work
from .._numerics import pow2_scale
from .._validate import Bool, Choice, Instance, Real, fail, public
from . import pairs as _tiles
from ._input import (
    _DDOF,
    _GMEAN,
    _H,
    _KOPT,
    _Y,
)
from .moments import (
    ClassStatistics,
    _class_var,
    _first_pass,
    _global_mean,
)
from .simplex import (
    _offdiag,
    _check_gram_size,
    _centred_unit,
    _reduce,
)

__all__ = ["nc1", "nc1_from_statistics", "cdnv", "cdnv_from_statistics"]

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
        Number of classes (default max(y) + 1). A class without a sample is absent: the metric is computed
        over the classes present (at least 2), as if the absent ones were removed from K.
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
    xp, H, y, K, counts, Y, means, D, _, _ = _first_pass(H, y, K, shift=True)
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
    xp, H, y, K, counts, Y, means, D, e, _ = _first_pass(H, y, K, shift=True)
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
