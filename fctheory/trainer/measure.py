"""Measurements of a trained network, each next to the theory's prediction.

Observed: train/test accuracy and unregularised cross-entropy; word-embedding norms (mean ± std,
overall and by frequency rank β); ‖u_{k,ℓ}‖ mean ± std; PCA singular values (centred data, as
``sklearn.decomposition.PCA.singular_values_`` in the notebooks) of the word embeddings — of φ(W)
for h* — and of all u_{k,ℓ}; mean cosines within and across concepts; relative distance to the
nearest type-I / II / III configuration (:mod:`fctheory.metrics.collapse`).

Predicted (where a theorem applies to the run's setting):

* h with uniform words and λ_W = λ_U = λ — Theorem 1 (type I): τ = argmin H, ‖w‖ = c = √(τ/n_w),
  ‖u_{k,ℓ}‖ = c′ = √(τ/(KL)), PCA σ_1 = … = σ_{n_c−1} = √(τ/(n_c−1)) for W and for Û (‖W‖_F² =
  ‖Û‖_F² = τ), unregularised CE = H(τ) − λτ, within-concept cosine 1, across −1/(n_c−1).
* h* with λ_W = 0 — Theorem 3 (type II): τ* = argmin H*, ‖u_{k,ℓ}‖ = τ*/√(KL), ‖φ(w)‖ = √d,
  PCA σ of φ(W) = √(n_w d/(n_c−1)), of Û = τ*/√(n_c−1), CE = H*(τ*) − λ_U τ*²/2.
* h with non-uniform words on the full task (K = n_c^L) and λ below (9) — Theorem 2 (type III):
  ‖w_(α,β)‖ = r_β (the norm-against-rank curve), ‖u‖ = c.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np

from .._validate import Array, Bool, Instance, Int, Real, fail, public, result_type
from ..network import check_weights, phi
from ..task import Task

__all__ = ["Measurements", "measure", "theory_prediction", "pca_singular_values", "concept_cosines"]


@public(M=Array(ndim=2), k=Int(min=1), legacy_positional=("k",))
def pca_singular_values(M: np.ndarray, *, k: int = 5) -> np.ndarray:
    """Top-k singular values of the row-centred data matrix M (samples × features), float64.

    Computed on M / max|M| and scaled back (singular values are homogeneous of degree 1), so
    entries near the float64 limits neither overflow nor underflow.
    """
    return _pca(M, k)


def _pca(M, k=5):
    M = np.asarray(M, dtype=np.float64)
    scale = float(np.max(np.abs(M))) if M.size else 0.0
    if scale == 0.0:
        return np.zeros(min(k, min(M.shape)))
    C = M / scale
    s = np.linalg.svd(C - C.mean(axis=0, keepdims=True), compute_uv=False)
    with np.errstate(over="ignore"):
        out = s[:k] * scale
    if not np.all(np.isfinite(out)):
        fail("M", M, "its singular values overflow float64")
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
    return _cosines(V, concept, n_c)


def _cosines(V, concept, n_c):
    V = np.asarray(V, dtype=np.float64)
    scale = float(np.max(np.abs(V))) if V.size else 0.0
    if scale > 0:
        V = V / scale  # cosines are scale-invariant: keep the norms in range
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


@result_type
@dataclass
class Measurements:
    """Observed quantities of a trained (W, U) and the theory's predictions (``predicted``)."""

    train_acc: float
    test_acc: float
    train_ce: float
    test_ce: float
    W_norm_mean: float
    W_norm_std: float
    W_norm_by_rank: np.ndarray
    W_norm_by_rank_std: np.ndarray
    U_norm_mean: float
    U_norm_std: float
    pca_W: np.ndarray
    pca_U: np.ndarray
    cos_W_within: float
    cos_W_across: float
    cos_U_within: float
    cos_U_across: float
    phiW_norm_mean: float | None = None
    distances: dict = field(default_factory=dict)
    predicted: dict = field(default_factory=dict)

    @public()
    def to_dict(self) -> dict:
        from .core import _jsonable  # noqa: PLC0415

        return _jsonable(asdict(self))

    @public()
    def comparison(self) -> list:
        """Rows (quantity, observed, predicted or None) for the quantities the theory predicts."""
        p = self.predicted
        rows = [("test accuracy", self.test_acc, None), ("train accuracy", self.train_acc, None),
                ("unregularised train CE", self.train_ce, p.get("ce"))]
        if self.phiW_norm_mean is None:
            rows.append(("mean ‖w‖", self.W_norm_mean, p.get("w_norm")))
            rows.append(("std ‖w‖", self.W_norm_std, 0.0 if "w_norm" in p else None))
        else:
            rows.append(("mean ‖φ(w)‖", self.phiW_norm_mean, p.get("w_norm")))
            rows.append(("mean ‖w‖ (before φ)", self.W_norm_mean, None))
        rows.append(("mean ‖u_kℓ‖", self.U_norm_mean, p.get("u_norm")))
        for i in range(min(3, len(self.pca_W))):
            pw = p.get("pca_W")
            rows.append((f"PCA σ{i + 1} of {'φ(W)' if self.phiW_norm_mean is not None else 'W'}", self.pca_W[i],
                         None if pw is None else pw[i]))
        for i in range(min(3, len(self.pca_U))):
            pu = p.get("pca_U")
            rows.append((f"PCA σ{i + 1} of Û", self.pca_U[i], None if pu is None else pu[i]))
        rows.append(("cos within concept (W)", self.cos_W_within, p.get("cos_within")))
        rows.append(("cos across concepts (W)", self.cos_W_across, p.get("cos_across")))
        rows.append(("cos within concept (U)", self.cos_U_within, p.get("cos_within")))
        rows.append(("cos across concepts (U)", self.cos_U_across, p.get("cos_across")))
        for k, v in self.distances.items():
            rows.append((f"distance to type {k}", v, 0.0))
        return rows


@public(task=Instance(Task), d=Int(min=1), layernorm=Bool(), lam_W=Real(lo=0.0), lam_U=Real(lo=0.0),
        legacy_positional=("d",))
def theory_prediction(task, *, d: int, layernorm: bool, lam_W: float, lam_U: float) -> dict:
    """The prediction of Theorem 1, 2 or 3 for this setting ({} when none applies).

    Keys: ``theorem``, ``tau``, ``w_norm``, ``u_norm``, ``pca_W``, ``pca_U`` (length-3 arrays,
    the n_c−1 predicted nonzero ones then zeros), ``ce``, ``cos_within``, ``cos_across`` and for
    type III ``r`` (‖w_(α,β)‖ against β).
    """
    n_c, n_w, L, K = task.n_c, task.n_w, task.L, task.K
    kappa_across = -1.0 / (n_c - 1)

    def sig(val):
        out = np.zeros(3)
        out[: min(3, n_c - 1)] = val
        return out

    try:
        if not layernorm and task.is_uniform and lam_W == lam_U and lam_W > 0:
            from ..tau import H, tau  # noqa: PLC0415

            t = float(tau(n_c=n_c, n_w=n_w, L=L, K=K, lam=lam_W))
            return {"theorem": "Theorem 1 (type I)", "tau": t, "w_norm": math.sqrt(t / n_w),
                    "u_norm": math.sqrt(t / (K * L)), "pca_W": sig(math.sqrt(t / (n_c - 1))),
                    "pca_U": sig(math.sqrt(t / (n_c - 1))), "ce": float(H(t, n_c=n_c, n_w=n_w, L=L, K=K, lam=lam_W)) - lam_W * t,
                    "cos_within": 1.0 if t > 0 else None, "cos_across": kappa_across if t > 0 else None}
        if layernorm and lam_W == 0 and lam_U > 0:
            from ..tau_star import H_star, tau_star  # noqa: PLC0415

            t = float(tau_star(n_c=n_c, L=L, K=K, d=d, lam=lam_U))
            return {"theorem": "Theorem 3 (type II)", "tau": t, "w_norm": math.sqrt(d), "u_norm": t / math.sqrt(K * L),
                    "pca_W": sig(math.sqrt(n_w * d / (n_c - 1))), "pca_U": sig(t / math.sqrt(n_c - 1)),
                    "ce": float(H_star(t, n_c=n_c, L=L, K=K, d=d, lam=lam_U)) - lam_U * t * t / 2,
                    "cos_within": 1.0, "cos_across": kappa_across}
        if not layernorm and not task.is_uniform and task.is_full and lam_W == lam_U and lam_W > 0:
            from ..type3 import lambda_max_type3, solve_type3  # noqa: PLC0415

            if lam_W >= float(lambda_max_type3(mu=task.mu, n_c=n_c, L=L)):
                return {"theorem": "Theorem 2 (type III): λ violates condition (9); no prediction"}
            sol = solve_type3(mu=task.mu, n_c=n_c, L=L, lam=lam_W)
            r = np.asarray(sol.r, dtype=np.float64)
            return {"theorem": "Theorem 2 (type III)", "r": r, "u_norm": float(sol.c),
                    "cos_within": 1.0, "cos_across": kappa_across}
    except ImportError:  # the analytic core is not available in this checkout
        return {}
    return {}


def _norms(M, axis):
    """Euclidean norms along ``axis`` of a rescaled copy (no overflow/underflow of the squares)."""
    scale = float(np.max(np.abs(M))) if M.size else 0.0
    if scale == 0.0:
        return np.zeros(M.shape[1 - axis])
    with np.errstate(over="ignore"):
        out = np.linalg.norm(M / scale, axis=axis) * scale
    if not np.all(np.isfinite(out)):
        fail("W", M, "the embedding norms overflow float64")
    return out


def _std(x, axis=None):
    """Standard deviation of a rescaled copy (the squares of 1e200 would overflow)."""
    scale = float(np.max(np.abs(x))) if np.size(x) else 0.0
    return np.std(x / scale, axis=axis) * scale if scale > 0 else np.std(x, axis=axis)


def _rank_norms(task, norms):
    by = norms.reshape(task.n_c, task.s_c)  # word (α, β) has index α·s_c + β
    return by.mean(axis=0), _std(by, axis=0)


def _train_data_kind():
    from .core import TrainData  # noqa: PLC0415 - core imports this module

    return Instance(TrainData).or_none()


@public(task=Instance(Task), W=Array(ndim=2), U=Array(ndim=2), layernorm=Bool(), eps=Real(lo=0.0),
        data=_train_data_kind(), lam_W=Real(lo=0.0), lam_U=Real(lo=0.0), d=Int(min=1).or_none(),
        n_spl=Int(min=1).or_none(), distances=Bool(), predict=Bool())
def measure(task, W, U, *, layernorm: bool = False, eps: float = 1e-5, data=None, lam_W: float = 0.0,
            lam_U: float = 0.0, d: int | None = None, n_spl: int | None = None, distances: bool = True,
            predict: bool = True) -> Measurements:
    """Measure a trained (W, U) (host arrays, W d×n_w, U K×Ld); see the module docstring.

    ``data`` (a :class:`~fctheory.trainer.core.TrainData` of this task) gives the accuracies and
    cross-entropies (NaN without it). The PCA of the embeddings uses φ(W) for h* (``layernorm``), as
    the notebooks do. ``d`` (if given) must equal W's row count; ``n_spl`` is informative only.
    Norms, PCA and cosines are computed on rescaled copies, so weights near the float64 limits give
    finite values; scores that overflow float64 are refused (FCTheoryError naming W).
    """
    from ..network import scores  # noqa: PLC0415
    from .core import check_data  # noqa: PLC0415

    if d is not None and d != W.shape[0]:
        fail("d", d, f"must equal the rows of W ({W.shape[0]})")
    d = check_weights(task, W, U)
    if layernorm and eps == 0.0 and d == 1:
        fail("W", W, "LayerNorm with eps=0 needs d >= 2 rows (φ of a scalar is undefined)")
    if data is not None:
        check_data(task, data)

    def acc_ce(X, y):
        if X is None or X.shape[0] == 0:
            return float("nan"), float("nan")
        tot_c = 0
        tot_l = 0.0
        for b0 in range(0, X.shape[0], 2000):
            with np.errstate(over="ignore", invalid="ignore"):
                S = scores(W, U, X[b0 : b0 + 2000], layernorm=layernorm, eps=eps)
            if not np.all(np.isfinite(S)):
                fail("W", W, "the scores overflow float64 at these weights")
            yb = y[b0 : b0 + 2000]
            m = S.max(axis=1)
            lse = m + np.log(np.exp(S - m[:, None]).sum(axis=1))
            tot_l += float((lse - S[np.arange(len(yb)), yb]).sum())
            tot_c += int((S.argmax(axis=1) == yb).sum())
        return tot_c / X.shape[0], tot_l / X.shape[0]

    tr_acc, tr_ce = acc_ce(data.X_train, data.y_train) if data is not None else (float("nan"),) * 2
    te_acc, te_ce = acc_ce(data.X_test, data.y_test) if data is not None else (float("nan"),) * 2

    wn = _norms(W, axis=0)
    r_mean, r_std = _rank_norms(task, wn)
    Uh = U.reshape(task.K * task.L, d)  # row k·L+ℓ is u_{k,ℓ}
    un = _norms(Uh, axis=1)
    V = phi(W, eps=eps).T if layernorm else W.T
    cw = _cosines(V, task.word_concept, task.n_c)
    cu = _cosines(Uh, task.Z.ravel(), task.n_c)
    m = Measurements(
        train_acc=tr_acc, test_acc=te_acc, train_ce=tr_ce, test_ce=te_ce,
        W_norm_mean=float(wn.mean()), W_norm_std=float(_std(wn)), W_norm_by_rank=r_mean, W_norm_by_rank_std=r_std,
        U_norm_mean=float(un.mean()), U_norm_std=float(_std(un)),
        pca_W=_pca(V), pca_U=_pca(Uh),
        cos_W_within=cw[0], cos_W_across=cw[1], cos_U_within=cu[0], cos_U_across=cu[1],
        phiW_norm_mean=float(_norms(V, axis=1).mean()) if layernorm else None,
    )
    if distances:
        m.distances = collapse_distances(task, W, U, layernorm)
    if predict:
        m.predicted = theory_prediction(task, d=d, layernorm=layernorm, lam_W=lam_W, lam_U=lam_U)
    return m


def collapse_distances(task, W, U, layernorm: bool) -> dict:
    """Relative distances to the nearest type-I/III (h) or type-II (h*) configuration, if available."""
    try:
        from ..metrics import collapse  # noqa: PLC0415
    except ImportError:
        return {}
    out = {}
    kinds = ("II",) if layernorm else ("I", "III")
    fn = {"I": "distance_to_type1", "II": "distance_to_type2", "III": "distance_to_type3"}
    for k in kinds:
        f = getattr(collapse, fn[k], None)
        if f is None:
            continue
        try:
            out[k] = float(f(task, W, U).distance)
        except Exception as exc:  # noqa: BLE001 - a metric that cannot be fitted is reported, not fatal
            out[k] = f"unavailable ({type(exc).__name__}: {exc})"
    return out
