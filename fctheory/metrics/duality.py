"""NC3 and NC4: the classifier W against the class means (Kothapalli's review eqs. (8), (9); Papyan et al.'s
self-duality, Zhu et al.'s WM̃ᵀ ETF form, Súkeník et al.'s per-sample cosine, Wu & Papyan 2024's uniform
duality, the classifier/nearest-class-centre disagreement).

Conventions in :mod:`fctheory.metrics.nc`. W and the means are each rescaled exactly first, so any magnitude
gives the same value.
"""

from __future__ import annotations

import math

import numpy as np

from .._backend import asarray_like, to_numpy
from .._numerics import ldexp, pow2_scale
from .._validate import Array, Bool, Choice, fail, public
from . import pairs as _tiles
from ._input import (
    _DDOF,
    _GMEAN,
    _H,
    _KOPT,
    _M,
    _Y,
    _features,
    _scale_back,
    _unit,
)
from .moments import (
    ClassStatistics,
    _first_pass,
    _global_mean,
)
from .simplex import (
    _etf_gram,
    _reduce,
    _REDUCE3,
    _row_normalised,
)
from .variability import (
    _minus,
    _ST,
    _statistics_means,
    _centred_means,
)

__all__ = ["nc3", "nc3_from_statistics", "uniform_duality", "nc4"]


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
        The rows of the classes present in y are compared with their means (an absent class's row is not read).
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
    xp, Hf, yy, K, counts, _, means, _, _, present = _first_pass(H, y, K, shift=variant != "cosine")
    W = present.rows(_check_W(W, present.num_classes, means.shape[1], means))
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
    W = st.present.rows(_check_W(W, st.num_classes, st.d, means))
    return _nc3_from(xp, W, _centred_means(xp, means, st.counts, global_mean)[0], 0.0, None, None, variant)


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
    xp, Hs, _, K, counts, _, means, _, e, present = _first_pass(H, y, K, shift=True)
    W = present.rows(_check_W(W, present.num_classes, means.shape[1], means))
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


def _ncc_disagreements(xp, W, b, H, means, labels=None):
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
    parts = [_ncc_block(xp, Hs[i : i + step], Ws, bs, Ms, msq, eh, labels) for i in range(0, Hs.shape[0], step)]
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _ncc_block(xp, Hs, Ws, bs, Ms, msq, eh, labels=None):
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
    if labels is not None:  # the means of the present classes only: their labels
        ncc = labels[ncc]
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
    and (H, means) → t(H, means) for s, t > 0, whatever the magnitudes. A class absent from y has no mean
    (the nearest centre is one of the present classes) but keeps its row of W: the classifier decides
    among all K classes, so NC4, unlike the other metrics, depends on the absent classes' rows.
    """
    xp, Hf = _features(H)
    labels = None  # the label of each row of the means, when some class is absent
    if means is None:
        _, Hs, _, _, _, _, ms, _, e, present = _first_pass(Hf, y, K)
        means = ldexp(ms, e, xp) if e else ms
        Kc = present.num_classes
        labels = None if present.all else asarray_like(present.classes, means)
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
        Kc = means.shape[0]
    W = _check_W(W, Kc, means.shape[1], Hf)
    if b is not None:
        _, b2 = _features(asarray_like(b, Hf).reshape(1, -1), "b")
        if b2.shape[1] != Kc:
            fail("b", to_numpy(b), f"must have K = {Kc} entries")
        b = b2[0]
    dis = _ncc_disagreements(xp, W, b, Hf, means, labels)
    if average == "samples":
        return int(dis.sum()) / Hf.shape[0]
    yh = np.asarray(to_numpy(y)).astype(np.int64)
    cnt = np.bincount(yh, minlength=Kc)
    per = np.bincount(yh, weights=dis.astype(np.float64), minlength=Kc)
    present = cnt > 0
    return float(np.mean(per[present] / cnt[present]))
