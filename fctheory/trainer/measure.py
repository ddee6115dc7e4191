"""Measurements of a trained network, each next to the theory's prediction.

Observed: train/test accuracy and unregularised cross-entropy; word-embedding norms (mean ± std,
overall and by frequency rank β); ‖u_{k,ℓ}‖ mean ± std; PCA singular values (centred data, as
``sklearn.decomposition.PCA.singular_values_`` in the notebooks) of the word embeddings — of φ(W)
for h* — and of all u_{k,ℓ}; mean cosines within and across concepts; relative distance to the
nearest type-I / II / III configuration. The geometry is :mod:`fctheory.metrics.geometry`'s.

Predicted: the prediction of :func:`fctheory.predictions.applicable_theorem`, the library's one
dispatcher (the same theorem and numbers as :func:`fctheory.diagnose` and :func:`fctheory.predict`):

* h with uniform words — Theorem 1 (type I) at λ = √(λ_Wλ_U) (unequal decays reduced exactly):
  ‖w‖ = a√(τ/n_w), ‖u_{k,ℓ}‖ = √(τ/(KL))/a with a = (λ_U/λ_W)^{1/4}, PCA σ_1 = … = σ_{n_c−1},
  unregularised CE = H(τ) − λτ, within-concept cosine 1, across −1/(n_c−1).
* h* — Theorem 3 (type II) at λ_U: τ* = argmin H*, ‖u_{k,ℓ}‖ = τ*/√(KL), ‖φ(w)‖ = √d,
  PCA σ of φ(W) = √(n_w d/(n_c−1)), of Û = τ*/√(n_c−1), CE = H*(τ*) − λ_U τ*²/2.
* h with non-uniform words on the full task (K = n_c^L) and λ below (9) — Theorem 2 (type III):
  ‖w_(α,β)‖ = a·r_β (the norm-against-rank curve), ‖u‖ = c/a.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from .._validate import Array, Bool, Instance, Int, Real, fail, public, result_type
from ..metrics import geometry
from ..metrics.geometry import concept_cosines, pca_singular_values
from ..network import check_weights, scores
from ..predictions.verdict import verdict
from ..task import Task
from ..io import to_json
from .data import TrainData, check_data

__all__ = ["Measurements", "measure", "theory_prediction", "pca_singular_values", "concept_cosines"]


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
        return to_json(asdict(self))

    @public()
    def comparison(self) -> list:
        """Rows (quantity, observed, predicted or None) for the quantities the theory predicts."""
        p = self.predicted
        rows = [
            ("test accuracy", self.test_acc, None),
            ("train accuracy", self.train_acc, None),
            ("unregularised train CE", self.train_ce, p.get("ce")),
        ]
        if self.phiW_norm_mean is None:
            rows.append(("mean ‖w‖", self.W_norm_mean, p.get("w_norm")))
            # type III words have one norm per rank (r_β), types I and II one norm for all
            rows.append(("std ‖w‖", self.W_norm_std, 0.0 if "w_norm" in p and "r" not in p else None))
        else:
            rows.append(("mean ‖φ(w)‖", self.phiW_norm_mean, p.get("w_norm")))
            rows.append(("mean ‖w‖ (before φ)", self.W_norm_mean, None))
        rows.append(("mean ‖u_kℓ‖", self.U_norm_mean, p.get("u_norm")))
        for i in range(min(3, len(self.pca_W))):
            pw = p.get("pca_W")
            rows.append(
                (
                    f"PCA σ{i + 1} of {'φ(W)' if self.phiW_norm_mean is not None else 'W'}",
                    self.pca_W[i],
                    None if pw is None else pw[i],
                )
            )
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


@public(
    task=Instance(Task),
    d=Int(min=1),
    layernorm=Bool(),
    lam_W=Real(lo=0.0),
    lam_U=Real(lo=0.0),
    legacy_positional=("d",),
)
def theory_prediction(task, *, d: int, layernorm: bool, lam_W: float, lam_U: float) -> dict:
    """The prediction of Theorem 1, 2 or 3, or of the certified optimum, for this setting ({} when none exists).

    A view of :func:`fctheory.predictions.applicable_theorem` (unequal decays reduced as there).
    Keys: ``theorem`` ("Theorem 1", "Theorem 2" or "Theorem 3"; None where no theorem speaks and the certified
    optimum answers: network h, non-uniform μ, K < n_c^L), ``provenance`` (where partial tasks' numbers come
    from, "" for a theorem's own statement), ``tau`` (τ, τ*, ‖X*‖_*; not for type III),
    ``w_norm`` (mean ‖w‖; ‖φ(w)‖ for h*), ``u_norm``, ``pca_W``, ``pca_U`` (length-3 arrays, the
    n_c−1 predicted nonzero ones then zeros), ``ce`` (the unregularised cross-entropy),
    ``cos_within``, ``cos_across`` and for type III and non-uniform partial tasks ``r`` (‖w_(α,β)‖ against β,
    averaged over concepts). Only ``theorem`` when the theorem speaks but predicts nothing (λ violating (9)).
    """
    v = verdict(task, d, lam_W, lam_U, layernorm=layernorm, assumptions=False)
    if v.theorem is None and v.prediction is None:
        return {}
    p = v.predicted
    if "R" not in p:
        return {"theorem": v.theorem}

    def sig(vals):
        out = np.zeros(3)
        k = min(3, len(vals))
        out[:k] = vals[:k]
        return out

    out = {
        "theorem": v.theorem,
        "provenance": v.provenance,
        "tau": p["tau"],
        "w_norm": p["w_norm"],
        "u_norm": p["u_norm"],
        "pca_W": sig(p["pca_W"]),
        "pca_U": sig(p["pca_U"]),
        "ce": p["R0"],
        "cos_within": p["cos_within"],
        "cos_across": p["cos_across"],
    }
    if v.configuration == "III":  # type III has no τ; its word norms follow the curve r_β
        del out["tau"]
    if v.configuration == "III" or not task.is_uniform:
        out["r"] = np.asarray(p["w_norm_by_rank"], dtype=np.float64)
    return out


@public(
    task=Instance(Task),
    W=Array(ndim=2),
    U=Array(ndim=2),
    layernorm=Bool(),
    eps=Real(lo=0.0),
    data=Instance(TrainData).or_none(),
    lam_W=Real(lo=0.0),
    lam_U=Real(lo=0.0),
    d=Int(min=1).or_none(),
    n_spl=Int(min=1).or_none(),
    distances=Bool(),
    predict=Bool(),
)
def measure(
    task,
    W,
    U,
    *,
    layernorm: bool = False,
    eps: float = 1e-5,
    data=None,
    lam_W: float = 0.0,
    lam_U: float = 0.0,
    d: int | None = None,
    n_spl: int | None = None,
    distances: bool = True,
    predict: bool = True,
) -> Measurements:
    """Measure a trained (W, U) (host arrays, W d×n_w, U K×Ld); see the module docstring.

    ``data`` (a :class:`~fctheory.trainer.core.TrainData` of this task) gives the accuracies and
    cross-entropies (NaN without it). The PCA of the embeddings uses φ(W) for h* (``layernorm``), as
    the notebooks do. ``d`` (if given) must equal W's row count; ``n_spl`` is informative only.
    Norms, PCA and cosines are computed on rescaled copies, so weights near the float64 limits give
    finite values; scores that overflow float64 are refused (FCTheoryError naming W).
    """
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

    g = geometry.weight_geometry(task, W, U, layernorm=layernorm, eps=eps)
    wn, un = g["W_norms"], g["U_norms"].ravel()
    r_mean, r_std = geometry.norms_by_rank(task, wn)
    m = Measurements(
        train_acc=tr_acc,
        test_acc=te_acc,
        train_ce=tr_ce,
        test_ce=te_ce,
        W_norm_mean=float(wn.mean()),
        W_norm_std=float(geometry.rescaled_std(wn)),
        W_norm_by_rank=r_mean,
        W_norm_by_rank_std=r_std,
        U_norm_mean=float(un.mean()),
        U_norm_std=float(geometry.rescaled_std(un)),
        pca_W=g["pca_W"],
        pca_U=g["pca_U"],
        cos_W_within=g["cos_W_within"],
        cos_W_across=g["cos_W_across"],
        cos_U_within=g["cos_U_within"],
        cos_U_across=g["cos_U_across"],
        phiW_norm_mean=float(g["phiW_norms"].mean()) if layernorm else None,
    )
    if distances:
        m.distances = collapse_distances(task, W, U, layernorm)
    if predict:
        m.predicted = theory_prediction(task, d=d, layernorm=layernorm, lam_W=lam_W, lam_U=lam_U)
    return m


def collapse_distances(task, W, U, layernorm: bool) -> dict:
    """Relative distances to the nearest type-I/III (h) or type-II (h*) configuration.

    {kind: distance}, or ``"unavailable (reason)"`` where the fit is refused
    (:func:`fctheory.metrics.geometry.collapse_distances`).
    """
    dist, notes, _ = geometry.collapse_distances(task, W, U, layernorm=layernorm)
    kinds = ("II",) if layernorm else ("I", "III")
    return {k: dist[k] if dist[k] is not None else f"unavailable ({notes[k]})" for k in kinds}
