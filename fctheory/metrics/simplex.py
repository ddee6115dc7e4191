"""NC2 and the geometry of class means and classifier rows (K × m): the distance of their Gram to a scaled
simplex ETF, equinorm, equiangularity, hyperspherical uniformity and NC5 (Kothapalli's review eqs. (5)–(7);
Súkeník et al.'s NC2A/NC2B; Wu & Papyan 2024 §3.5; Liu et al. 2023; Ammar et al. 2024).

Conventions in :mod:`fctheory.metrics.nc`. Every function takes the rows (class means, or classifier rows),
centres them (optionally at the count-weighted mean) and rescales them exactly by a power of two first; from
``fctheory.metrics.pairs.LARGE_K`` classes on the sums over pairs of classes come from tiles of class pairs
(:mod:`fctheory.metrics.pairs`), never a K×K matrix.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .._backend import asarray_like, to_numpy
from .._budget import check_work
from .._validate import Array, Bool, Choice, Int, fail, public
from . import pairs as _tiles
from ._input import (
    _COUNTS,
    _M,
    _features,
    _scale_back,
    _unit,
)
from .moments import (
    _global_mean,
)

__all__ = ["etf_gram", "nc2", "equinorm", "equiangularity", "uniformity", "nc5"]


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
