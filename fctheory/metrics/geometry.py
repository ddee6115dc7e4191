"""The geometry of trained weights (W, U): norms, PCA spectra, concept cosines, collapse distances.

One home for what :func:`fctheory.trainer.measure`, :func:`fctheory.diagnose` and every figure
compute about a network's weights:

* :func:`vector_norms` — ‖w_(α,β)‖ (columns of W) or ‖u_{k,ℓ}‖, and :func:`norms_by_rank`, their
  mean and spread against the word-frequency rank β (word (α, β) is column α·s_c + β of W);
* :func:`pca_singular_values` — PCA singular values of the centred data (what
  ``sklearn.decomposition.PCA.singular_values_`` reports), as the paper's figures 3–4;
* :func:`concept_cosines` — mean cosine within a concept and across concepts (1 and −1/(n_c − 1) at
  collapse, the equiangular frame (4));
* :func:`weight_geometry` — all of the above for (W, U) of h or h* (φ(W) for h*);
* :func:`collapse_distances` — relative distances to the nearest type-I/III (h) or type-II (h*)
  configuration (Definitions 1–3, :mod:`fctheory.metrics.collapse`);
* :func:`pca2` — the first two PCA coordinates, for scatter plots.

Norms, spectra and cosines are computed on an exact power-of-two rescaling of the input
(:mod:`fctheory._numerics`), so weights near the float64 limits (1e300, 1e-300) give the same
answers as moderate ones, bit for bit where nothing overflows.
"""

from __future__ import annotations

import numpy as np

from .._errors import FCTheoryError
from .._numerics import norms as _exact_norms
from .._numerics import pow2_exponent, pow2_scale, pow2_unscale
from .._validate import Array, Int, fail, public
from ..network import U_hat, phi
from .collapse import distance_to_type1, distance_to_type2, distance_to_type3

__all__ = [
    "pca_singular_values",
    "concept_cosines",
    "vector_norms",
    "rescaled_std",
    "norms_by_rank",
    "weight_geometry",
    "collapse_distances",
    "pca2",
    "COLLAPSE_KINDS",
]

#: configuration kinds in report order, and the distance that fits each (Definitions 1–3)
COLLAPSE_KINDS = ("I", "II", "III")
_DISTANCE = {"I": distance_to_type1, "II": distance_to_type2, "III": distance_to_type3}


# ----------------------------------------------------------------------------- spectra and cosines
@public(M=Array(ndim=2), k=Int(min=1), legacy_positional=("k",))
def pca_singular_values(M: np.ndarray, *, k: int = 5) -> np.ndarray:
    """Top-k singular values of the row-centred data matrix M (samples × features), float64.

    Computed on M·2^-e (an exact power-of-two rescaling) and scaled back (singular values are
    homogeneous of degree 1), so entries near the float64 limits neither overflow nor underflow.
    """
    return pca_spectrum(M, k)


def pca_spectrum(M, k=5, name="M"):
    """:func:`pca_singular_values` without the argument checks (``name`` is named on overflow)."""
    M = np.asarray(M, dtype=np.float64)
    e = pow2_exponent(M)
    if M.size == 0 or not np.any(M):
        return np.zeros(min(k, min(M.shape)))
    C = pow2_scale(M, e)
    s = np.linalg.svd(C - C.mean(axis=0, keepdims=True), compute_uv=False)
    out = pow2_unscale(s[:k], e)
    if not np.all(np.isfinite(out)):
        fail(name, M, "its singular values overflow float64")
    return out


@public(V=Array(ndim=2), concept=Array(ndim=1, integer=True, min=0), n_c=Int(min=1), legacy_positional=("n_c",))
def concept_cosines(V: np.ndarray, concept: np.ndarray, *, n_c: int):
    """Mean cosine between distinct vectors (rows of V) of the same concept, and across concepts.

    Uses sums of unit vectors per concept: Σ_{i≠j∈α} cos = ‖Σ_{i∈α} v̂_i‖² − n_α, exactly,
    in O(n·d) rather than O(n²·d). ``concept[i]`` ∈ [0, n_c) is the concept of row i. A mean over
    no pair (a single vector per concept, or a single concept) is NaN.
    """
    if concept.shape[0] != V.shape[0]:
        fail("concept", concept, f"must give one concept per row of V ({V.shape[0]}), got {concept.shape[0]}")
    if int(concept.max()) >= n_c:
        fail("concept", concept, f"entries must be < n_c = {n_c}")
    return cosines(V, concept, n_c)


def cosines(V, concept, n_c):
    """:func:`concept_cosines` without the argument checks: (within, across) as floats."""
    V = np.asarray(V, dtype=np.float64)
    V = pow2_scale(V, pow2_exponent(V))  # cosines are scale-invariant: keep the norms in range
    nrm = np.linalg.norm(V, axis=1, keepdims=True)
    Vh = np.divide(V, nrm, out=np.zeros_like(V), where=nrm > 0)
    sums = np.zeros((n_c, V.shape[1]))
    np.add.at(sums, concept, Vh)
    counts = np.bincount(concept, minlength=n_c).astype(np.float64)
    G = sums @ sums.T
    within_pairs = (counts * (counts - 1)).sum()
    within = (np.trace(G) - (nrm[:, 0] > 0).sum()) / within_pairs if within_pairs > 0 else float("nan")
    across_pairs = counts.sum() ** 2 - (counts**2).sum()
    across = (G.sum() - np.trace(G)) / across_pairs if across_pairs > 0 else float("nan")
    return float(within), float(across)


# ----------------------------------------------------------------------------- norms
def vector_norms(M, axis: int, name: str = "W"):
    """Euclidean norms along ``axis`` (0: columns, 1: rows), exact rescaling; refuses overflow naming ``name``."""
    M = np.asarray(M, dtype=np.float64)
    if M.size == 0:
        return np.zeros(M.shape[1 - axis])
    out = _exact_norms(M, axis)
    if not np.all(np.isfinite(out)):
        fail(name, M, "its vector norms overflow float64")
    return out


def rescaled_std(x, axis=None):
    """Standard deviation computed on x·2^-e (the squares of 1e200 would overflow)."""
    x = np.asarray(x, dtype=np.float64)
    e = pow2_exponent(x)
    return pow2_unscale(np.std(pow2_scale(x, e), axis=axis), e)


def norms_by_rank(task, word_norms):
    """(mean, std) over the concepts α of the word norms, per frequency rank β (arrays of length s_c)."""
    by = np.asarray(word_norms, dtype=np.float64).reshape(task.n_c, task.s_c)  # word (α, β) at α·s_c + β
    return by.mean(axis=0), rescaled_std(by, axis=0)


# ----------------------------------------------------------------------------- everything at once
def weight_geometry(task, W, U, *, layernorm: bool, eps: float = 0.0, k: int = 5) -> dict:
    """Norms, spectra and cosines of (W, U) (host float64 arrays, W d×n_w, U K×Ld).

    Keys: ``W_norms`` (‖w‖ per word), ``phiW_norms`` (‖φ(w)‖ per word for h*, else None),
    ``U_norms`` (K×L), ``pca_W`` (of φ(W) for h*, top ``k``), ``pca_U`` (of the u_{k,ℓ}),
    ``cos_W_within``, ``cos_W_across``, ``cos_U_within``, ``cos_U_across``. The embeddings seen by the
    classifier (φ(W) for h*) are the ones whose spectrum and cosines the theorems predict.
    """
    V = phi(W, eps=eps) if layernorm else W
    Uh = U_hat(U, L=task.L)  # d × KL, column k·L+ℓ is u_{k,ℓ}
    g = {
        "W_norms": vector_norms(W, 0, "W"),
        "phiW_norms": vector_norms(V, 0, "W") if layernorm else None,
        "U_norms": vector_norms(Uh, 0, "U").reshape(task.K, task.L),
        "pca_W": pca_spectrum(V.T, k, "W"),
        "pca_U": pca_spectrum(Uh.T, k, "U"),
    }
    g["cos_W_within"], g["cos_W_across"] = cosines(V.T, task.word_concept, task.n_c)
    g["cos_U_within"], g["cos_U_across"] = cosines(Uh.T, task.Z.ravel(), task.n_c)
    return g


def collapse_distances(task, W, U, *, layernorm: bool, compute: bool = True):
    """Fit the nearest configuration of every kind the network allows: (distances, notes, fitted).

    ``distances[kind]`` is the relative distance (Definitions 1–3; type II concerns φ(W), so h*) or
    None with the reason in ``notes[kind]``; ``fitted[kind]`` holds the fitted constants ``c`` (and
    ``c_prime`` or ``r``). A fit the metric refuses (FCTheoryError) is reported, not raised.
    """
    dist, notes, fitted = {}, {}, {}
    for kind in COLLAPSE_KINDS:
        dist[kind] = None
        if not compute:
            notes[kind] = "not computed (distances=False)"
            continue
        if (kind == "II") != layernorm:
            notes[kind] = (
                "type II concerns φ(W), the network h*"
                if kind == "II"
                else f"type {kind} concerns the network h (without LayerNorm)"
            )
            continue
        try:
            res = _DISTANCE[kind](task, W, U)
        except FCTheoryError as exc:
            notes[kind] = str(exc)
            continue
        dist[kind] = float(res.distance)
        f = {"c": float(res.c)}
        if res.c_prime is not None:
            f["c_prime"] = float(res.c_prime)
        if res.r is not None:
            f["r"] = [float(x) for x in res.r]
        fitted[kind] = f
    return dist, notes, fitted


# ----------------------------------------------------------------------------- figures
def pca2(M):
    """(P, s): the rows of M projected on its first two principal axes (n×2; zero-padded) and all singular values."""
    M = np.asarray(M, dtype=np.float64)
    C = M - M.mean(axis=0, keepdims=True)
    _, s, Vt = np.linalg.svd(C, full_matrices=False)
    P = C @ Vt[:2].T
    if P.shape[1] < 2:
        P = np.column_stack([P, np.zeros((P.shape[0], 2 - P.shape[1]))])
    return P, s
