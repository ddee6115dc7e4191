"""Sums over the K(K−1)/2 pairs of classes without a K×K matrix: tiles of class pairs (vocabulary-scale K).

CDNV (review eq. (51)), NC2 (distance of M̃M̃ᵀ to a scaled simplex ETF, Súkeník et al.'s NC2A), the
equiangularity of the class means (review eq. (6)) and NC3's "etf" variant (review eq. (8)) are sums over
pairs of classes. Up to :data:`LARGE_K` classes :mod:`fctheory.metrics.variability`,
:mod:`~fctheory.metrics.simplex` and :mod:`~fctheory.metrics.duality` form their K×K matrices; from
there on they are computed here, in tiles: the Gram block G = A_I·A_Jᵀ of T×T class pairs is one BLAS product
(GEMM), and one compiled pass (:func:`fctheory._nc_kernels.pair_tile`) adds the tile's terms to a handful of
sums. Memory O(K·m + T²) (T = :data:`TILE`), work K²·m multiply-adds (half of them for the symmetric sums).

Accuracy. A squared distance formed as ‖a‖² + ‖b‖² − 2⟨a, b⟩ loses to cancellation when a and b are close:
its rounding error is at most (m + 3)·eps·(‖a‖² + ‖b‖²) (m the row length, the product's error bound γ_m).
Every pair whose bound exceeds :data:`PAIR_RTOL` relative to the distance is recomputed from the exact
differences, so each squared distance the CDNV uses has relative error ≤ PAIR_RTOL = 1e-11 (a rigorous
bound; typically ~1e-15). Cosines and Gram entries are used as formed (absolute error ≤ (m + 2)·eps, which is
also the accuracy of the K×K path's product). Sums are accumulated per row, per tile and over tiles, so their
rounding grows with T + (K/T)², not with K². The rows are centred and rescaled exactly by a power of two
first (translation and scale invariance), so no product overflows.

Sampling. With ``pairs=n`` (an int) :func:`cdnv_sample` and :func:`cos_abs_sample` estimate the means from
n pairs drawn uniformly with replacement (a seeded Generator): O(n·m) work, and the returned half-width
gives a stated error (Hoeffding's bound for the bounded cosines, the normal approximation for the CDNV).

Arrays of other libraries (CuPy, PyTorch) are brought to the host first: the K×m class means and classifier
rows only, never features.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._backend import to_numpy
from .._budget import COST, check_work
from .._numerics import pow2_exponent, pow2_scale
from .._validate import fail

__all__ = [
    "LARGE_K",
    "TILE",
    "PAIR_RTOL",
    "pair_sums",
    "tiled_budget",
    "cdnv_tiled",
    "cdnv_rows",
    "frame_distance_tiled",
    "equiangularity_tiled",
    "cdnv_sample",
    "cos_abs_sample",
    "FrameFit",
    "frame_fit",
]

#: from this many classes on, the pair metrics are computed in tiles (below it the K×K matrices are formed)
LARGE_K = 1024
#: classes per side of a tile (a 2048×2048 float64 tile is 32 MB)
TILE = 2048
#: the largest relative error of a squared distance between two classes (see the module's notes)
PAIR_RTOL = 1e-11
_EPS = float(np.finfo(np.float64).eps)
_WANT = {"cdnv": 1, "cos": 2, "frame": 4}


def tiled_budget(name, value, K: int, m: int, *, what: str, passes: int = 1, symmetric: bool = True) -> None:
    """Size a tiled computation against the budget: O(K·m + m² + T²) bytes and its multiply-adds' seconds."""
    t = min(TILE, int(K))
    madds = passes * int(K) * int(K) * int(m) // (2 if symmetric else 1)
    check_work(
        name,
        value,
        bytes=8 * (4 * int(K) * int(m) + int(m) ** 2 + 2 * t * t),
        seconds=madds * COST["pair_madd"],
        what=what,
    )


def _host(A):
    return np.ascontiguousarray(to_numpy(A), dtype=np.float64)


def pair_sums(
    A,
    *,
    B=None,
    var=None,
    want=("cdnv", "cos", "frame"),
    alpha=1.0,
    beta=0.0,
    identity=False,
    cos_shift=0.0,
    var_shift=0.0,
    dist_exp=1.0,
    tile=None,
    progress=None,
) -> dict:
    """The sums of :data:`fctheory._nc_kernels.PAIR_SLOTS` over the class pairs of the rows of A (K × m).

    ``B`` None: the pairs (i, j) of rows of A (the symmetric sums: V_ij and c_ij over i < j, the frame
    residual Σ(α·G_ij − β·E_ij)² and Σ G_ij² over all ordered pairs, G = AAᵀ); else the cross product G = ABᵀ
    (frame sums only). ``var`` (K,) the class variances of the CDNV, ``dist_exp`` its p. The rows should be at
    unit scale (no product overflows) and, for distances, centred (less cancellation to recompute).
    """
    from .._nc_kernels import PAIR_SLOTS, pair_tile  # noqa: PLC0415 - numba: about a second, on first use

    A = _host(A)
    symmetric = B is None
    B = A if symmetric else _host(B)
    K, m = A.shape
    sqA = np.einsum("ij,ij->i", A, A)
    sqB = sqA if symmetric else np.einsum("ij,ij->i", B, B)
    var = np.zeros(0) if var is None else _host(var).reshape(-1)
    with np.errstate(divide="ignore"):
        inv = 1.0 / np.sqrt(sqA)  # the cosines' factors (a zero row's cosines are not asked for)
    flags = sum(_WANT[w] for w in want)
    close = PAIR_RTOL / ((m + 3) * _EPS)
    par = np.array([alpha, beta, 1.0 if identity else 0.0, cos_shift, var_shift, dist_exp, close, float(K)])
    acc = np.zeros(len(PAIR_SLOTS))
    T = int(tile or TILE)
    starts = range(0, K, T)
    blocks = [(i, j) for i in starts for j in starts if not symmetric or j >= i]
    buf = np.empty((min(T, K), min(T, B.shape[0])))
    for i0, j0 in _progress(blocks, progress):
        a, b = A[i0 : i0 + T], B[j0 : j0 + T]
        G = buf[: a.shape[0], : b.shape[0]]
        if G.flags.c_contiguous:
            np.dot(a, b.T, out=G)
        else:  # an edge tile: its own array
            G = a @ b.T
        pair_tile(G, i0, j0, symmetric, A, B, sqA, sqB, inv, var, flags, par, acc)
    return dict(zip(PAIR_SLOTS, acc.tolist()))


def _progress(blocks, show):
    """The tiles, with a tqdm bar when there are many (``show`` None: from 64 tiles on)."""
    if show is False or (show is None and len(blocks) < 64):
        return blocks
    from tqdm.auto import tqdm  # noqa: PLC0415 - the progress display is optional

    return tqdm(blocks, desc="class-pair tiles", unit="tile", leave=False)


def _centred(A):
    """(rows of A minus their mean row, rescaled exactly so that the largest entry is < 1; the exponent e)."""
    A = _host(A)
    A0 = A - A[:1]  # exact for rows sharing a large offset (Sterbenz)
    A0 -= A0.sum(axis=0) / A0.shape[0]
    e = pow2_exponent(A0, np)
    return pow2_scale(A0, e, np), e


def cdnv_tiled(means, class_var, *, dist_exp=1.0, reduction="mean", name="H"):
    """(mean or coefficient of variation of V_ij over the pairs i < j, x) with V·2^x the CDNV of the inputs.

    ``means`` (K × m) and ``class_var`` (K,) at any one scale; x = 2e(1 − p) carries the scale of p ≠ 1
    (see :func:`fctheory.metrics.cdnv`). Refused (naming ``name``) when two class means coincide.
    """
    Mc, e = _centred(means)
    var = pow2_scale(_host(class_var).reshape(-1), 2 * e, np)
    K = Mc.shape[0]
    P = K * (K - 1) / 2
    s = pair_sums(Mc, var=var, want=("cdnv",), dist_exp=dist_exp)
    if s["coincide"]:
        fail(name, "two classes with the same mean", "CDNV is undefined when class means coincide")
    mean = s["cdnv_sum"] / P
    if not math.isfinite(mean):
        fail("dist_exp", dist_exp, "‖μ_i − μ_j‖^(2·dist_exp) is out of the float64 range for these means")
    x = 2.0 * e * (1.0 - dist_exp)
    if reduction == "mean":
        return mean, x
    # population std / mean over the pairs: a second pass, shifted by the mean (no E[V²] − E[V]² cancellation)
    dev = pair_sums(Mc, var=var, want=("cdnv",), dist_exp=dist_exp, var_shift=mean)["cdnv_dev"] / P
    return math.sqrt(max(dev, 0.0)) / mean, 0.0


def cdnv_rows(A, var, *, tile=None, name="st"):
    """Per class k, the mean over j ≠ k of V_kj = (Var_k + Var_j)/(2‖a_k − a_j‖²): the CDNV's row means (their
    mean is the CDNV). NaN for a class whose mean coincides with another's.

    ``A`` (K × m) the centred class means at unit scale, ``var`` (K,) their variances at the same scale. In
    tiles of ``tile`` classes (default :data:`ROW_TILE`): memory O(K·m + T²), K²·m/2 multiply-adds (one BLAS
    product per tile pair i ≤ j, whose sums go to both rows). Every squared distance is within
    :data:`PAIR_RTOL`: the same guard as the pair sums (a distance whose expansion ‖a‖² + ‖b‖² − 2⟨a, b⟩ may be
    off by more is recomputed from the exact differences).
    """
    A = _host(A)
    var = _host(var).reshape(-1)
    K, m = A.shape
    tiled_budget(name, f"statistics of K = {K} classes", K, m, what="per-class CDNV (tiles of class pairs)")
    sq = np.einsum("ij,ij->i", A, A)
    close = PAIR_RTOL / ((m + 3) * _EPS)
    rows = np.zeros(K)
    bad = np.zeros(K, dtype=bool)
    T = int(tile or ROW_TILE)
    for i0 in range(0, K, T):
        a, sa, va = A[i0 : i0 + T], sq[i0 : i0 + T], var[i0 : i0 + T]
        for j0 in range(i0, K, T):
            b, sb, vb = A[j0 : j0 + T], sq[j0 : j0 + T], var[j0 : j0 + T]
            d2 = _tile_sq_distances(a, b, sa, sb, close, diagonal=i0 == j0)
            zero = d2 == 0.0
            if zero.any():
                bad[i0 + np.nonzero(zero.any(axis=1))[0]] = True
                bad[j0 + np.nonzero(zero.any(axis=0))[0]] = True
                d2[zero] = np.inf
            V = (va[:, None] + vb[None, :]) / (2.0 * d2)
            rows[i0 : i0 + a.shape[0]] += V.sum(axis=1)
            if j0 != i0:  # the pairs (j, i) of the tile below the diagonal: the same terms, for the rows j
                rows[j0 : j0 + b.shape[0]] += V.sum(axis=0)
    rows /= K - 1
    rows[bad] = math.nan
    return rows


#: classes per side of a tile of :func:`cdnv_rows` (a few 1024×1024 float64 arrays: 8 MB each)
ROW_TILE = 1024


def _tile_sq_distances(a, b, sa, sb, close, diagonal):
    """‖a_i − b_j‖² of a tile from one product, the cancelling ones recomputed from the exact differences; the
    diagonal of a diagonal tile (a is b) is +∞ (no term)."""
    ss = sa[:, None] + sb[None, :]
    d2 = ss - 2.0 * (a @ b.T)
    redo = d2 * close <= ss
    if diagonal:
        np.fill_diagonal(redo, False)
        np.fill_diagonal(d2, np.inf)
    if redo.any():
        i, j = np.nonzero(redo)
        D = a[i] - b[j]
        d2[i, j] = np.einsum("ij,ij->i", D, D)
    return d2


def frame_distance_tiled(A, variant, *, B=None, name="M"):
    """The distances of the Gram AAᵀ (or the cross Gram ABᵀ) to a frame, from one tiled pass.

    ``variant`` "etf": min_{c≥0} ‖G − cE_K‖_F/‖G‖_F; "identity": the same with I_K; "zhu":
    ‖G/‖G‖_F − E_K/√(K−1)‖_F. A (and B) at unit scale, already centred where the metric centres.
    """
    K = A.shape[0]
    if variant == "zhu":
        nG = math.sqrt(pair_sums(A, B=B, want=("frame",))["gram_sq"])
        if nG == 0.0:
            fail(name, "a zero matrix", "NC2 is undefined for M = 0" if B is None else "W M̃ᵀ = 0")
        s = pair_sums(A, B=B, want=("frame",), alpha=1.0 / nG, beta=1.0 / math.sqrt(K - 1))
        return math.sqrt(s["frame"])
    Ah = _host(A)
    # ⟨G, E⟩ and ‖E‖²: O(K·m) without G (E = I − 11ᵀ/K: tr G − 1ᵀG1/K; E = I: tr G)
    Bh = Ah if B is None else _host(B)
    tr = float(np.einsum("ij,ij->", Ah, Bh))
    if variant == "identity":
        ge, ee = tr, float(K)
    else:
        ge, ee = tr - float(Ah.sum(axis=0) @ Bh.sum(axis=0)) / K, float(K - 1)
    c = max(0.0, ge / ee)
    s = pair_sums(Ah, B=None if B is None else Bh, want=("frame",), beta=c, identity=variant == "identity")
    if s["gram_sq"] == 0.0:
        fail(name, "a zero matrix", "the distance to a scaled frame is undefined for M = 0")
    return math.sqrt(s["frame"] / s["gram_sq"])


def equiangularity_tiled(Mc, variant, *, name="M"):
    """Equiangularity of the (centred, unit-scale) rows Mc over the pairs (see
    :func:`fctheory.metrics.equiangularity`); refused for a zero row."""
    Mc = _host(Mc)
    K = Mc.shape[0]
    nr = np.sqrt(np.einsum("ij,ij->i", Mc, Mc))
    if np.any(nr == 0):
        fail(name, "a matrix with a zero (centred) row", "cosines are undefined for zero rows")
    P = K * (K - 1) / 2
    shift = mean_cosine(Mc, nr)
    s = pair_sums(Mc, want=("cos",), cos_shift=shift)
    mean = s["cos_sum"] / P
    if variant == "max_angle":
        return s["cos_abs"] / P
    var = max(s["cos_dev"] / P - (mean - shift) ** 2, 0.0)  # shifted by a close estimate: no cancellation
    if variant == "std":
        return math.sqrt(var)
    smean = mean + 1.0 / (K - 1)
    if variant == "shifted_mean":
        return smean
    if smean == 0.0:
        fail("reduction", "cv", "the coefficient of variation is undefined: the mean of the shifted cosines is 0")
    return math.sqrt(var) / smean


def mean_cosine(A, nr=None):
    """The mean cosine over the pairs i ≠ j of the rows of A, in O(K·m): (‖Σ u_k‖² − Σ‖u_k‖²)/(K(K−1)).

    Absolute error O(eps) (the sum of K unit vectors, each entry rounded within K·eps of its size, divided
    by K(K−1)). NaN when a row is zero.
    """
    A = _host(A)
    nr = np.sqrt(np.einsum("ij,ij->i", A, A)) if nr is None else nr
    if np.any(nr == 0):
        return math.nan
    U = A / nr[:, None]
    K = A.shape[0]
    u = U.sum(axis=0)
    return (float(u @ u) - float(np.einsum("ij,ij->", U, U))) / (K * (K - 1))


# ----------------------------------------------------------------------------- sampled estimates
def _sample_pairs(K, n, seed):
    rng = np.random.default_rng(seed)
    i = rng.integers(0, K, size=n)
    j = (i + rng.integers(1, K, size=n)) % K  # uniform over j ≠ i
    return i, j


def cdnv_sample(means, class_var, *, pairs: int, seed=0, name="H"):
    """(estimate, half-width) of the mean CDNV (p = 1) from ``pairs`` uniform pairs i ≠ j.

    The half-width is 1.96 × the sample standard error: a 95% interval by the normal approximation (the
    V_ij are not bounded a priori, so no distribution-free bound is claimed). O(pairs·m) work.
    """
    Mc, e = _centred(means)
    var = pow2_scale(_host(class_var).reshape(-1), 2 * e, np)
    i, j = _sample_pairs(Mc.shape[0], pairs, seed)
    D = Mc[i] - Mc[j]
    d2 = np.einsum("ij,ij->i", D, D)
    if np.any(d2 == 0):
        fail(name, "two classes with the same mean", "CDNV is undefined when class means coincide")
    V = (var[i] + var[j]) / (2.0 * d2)
    return float(V.mean()), 1.96 * float(V.std(ddof=1)) / math.sqrt(pairs) if pairs > 1 else math.inf


def cos_abs_sample(Mc, *, pairs: int, seed=0, delta=0.05, name="M"):
    """(estimate, half-width) of equiangularity "max_angle" = mean |cos + 1/(K−1)| from ``pairs`` uniform pairs.

    The terms lie in [0, 1 + 1/(K−1)], so by Hoeffding's inequality the estimate is within the half-width
    (1 + 1/(K−1))·√(log(2/δ)/(2·pairs)) of the exact value with probability ≥ 1 − δ.
    """
    Mc = _host(Mc)
    K = Mc.shape[0]
    nr = np.sqrt(np.einsum("ij,ij->i", Mc, Mc))
    if np.any(nr == 0):
        fail(name, "a matrix with a zero (centred) row", "cosines are undefined for zero rows")
    i, j = _sample_pairs(K, pairs, seed)
    c = np.einsum("ij,ij->i", Mc[i], Mc[j]) / (nr[i] * nr[j])
    width = (1.0 + 1.0 / (K - 1)) * math.sqrt(math.log(2.0 / delta) / (2.0 * pairs))
    return float(np.abs(c + 1.0 / (K - 1)).mean()), width


# ----------------------------------------------------------------------------- Grams against scaled frames
@dataclass(frozen=True)
class FrameFit:
    """The Gram G = AAᵀ of K rows a_k = ã_k + μ (ã centred, μ the mean row) against scaled frames, from one
    tiled pass over the centred rows; the numbers are those of the rows rescaled exactly by 2^-e.

    With E = I − 11ᵀ/K, G_c = ÃÃᵀ, c = ⟨G_c, E⟩/(K−1) (the best scale, ≥ 0), and u = Ãμ (1ᵀu = 0):
    ‖G − aE‖² = ‖G_c − cE‖² + (a − c)²(K−1) + 2K‖u‖² + K²‖μ‖⁴ (the four parts are orthogonal), a sum of
    non-negative terms: no cancellation, whatever a. ‖G − aI‖² = ‖G‖² − 2a‖A‖² + a²K with
    ‖G‖² = ‖G_c‖² + 2K‖u‖² + K²‖μ‖⁴ and ‖A‖² = ‖Ã‖² + K‖μ‖² cancels when G ≈ aI (possible only for m ≥ K):
    :meth:`identity_distance` reports its cancellation factor.
    """

    K: int
    e: int  # the rows were rescaled by 2^-e
    c: float  # ⟨G_c, E⟩/(K−1)
    residual: float  # ‖G_c − cE‖²
    gram_sq: float  # ‖G_c‖²
    u_sq: float  # ‖Ãμ‖²
    mu_sq: float  # ‖μ‖²
    centred_sq: float  # ‖Ã‖²

    @property
    def nc2(self) -> float:
        """min_{c≥0} ‖G_c − cE‖_F/‖G_c‖_F (NaN for Ã = 0)."""
        return math.sqrt(self.residual / self.gram_sq) if self.gram_sq > 0 else math.nan

    def etf_distance(self, a: float) -> float:
        """‖AAᵀ − a·E‖_F of the rows at their own scale (a the frame's scale at that scale)."""
        au = math.ldexp(a, -2 * self.e)
        K = self.K
        r = self.residual + (au - self.c) ** 2 * (K - 1) + 2 * K * self.u_sq + (K * self.mu_sq) ** 2
        return math.ldexp(math.sqrt(r), 2 * self.e)

    def identity_distance(self, a: float) -> tuple[float, float]:
        """(‖AAᵀ − a·I‖_F, the cancellation factor: the terms' size over the result; ∞ for a zero result)."""
        au = math.ldexp(a, -2 * self.e)
        K = self.K
        g2 = self.gram_sq + 2 * K * self.u_sq + (K * self.mu_sq) ** 2
        a2 = self.centred_sq + K * self.mu_sq
        r = g2 - 2 * au * a2 + au * au * K
        size = g2 + 2 * abs(au) * a2 + au * au * K
        factor = size / r if r > 0 else math.inf
        return math.ldexp(math.sqrt(max(r, 0.0)), 2 * self.e), factor


def frame_fit(Ac, e: int, mu, sums=None, **more) -> tuple[FrameFit, dict]:
    """(FrameFit, the pass's sums) of the centred rows Ac (unit scale, 2^-e of the rows) and the mean row μ
    (at the rows' own scale). ``sums``: the sums of a pass already made with β = c (else one is made here,
    with ``more`` — e.g. ``var``, ``want`` — for the other sums of the same pass)."""
    Ah = _host(Ac)
    K = Ah.shape[0]
    tot = Ah.sum(axis=0)
    csq = float(np.einsum("ij,ij->", Ah, Ah))
    c = max(0.0, (csq - float(tot @ tot) / K) / (K - 1))
    if sums is None:
        want = tuple(more.pop("want", ())) + ("frame",)
        sums = pair_sums(Ah, want=want, beta=c, **more)
    mu_u = np.ldexp(_host(mu).reshape(-1), -e)
    u = Ah @ mu_u
    fit = FrameFit(K, int(e), c, sums["frame"], sums["gram_sq"], float(u @ u), float(mu_u @ mu_u), csq)
    return fit, sums
