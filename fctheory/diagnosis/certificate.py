"""The certificate of a trained network's own training objective, as :func:`fctheory.diagnose` reports it.

For network h trained with weight decays (λ_W, λ_U) on sentences (S, y), the objective is
R̂(W, U) = f̂(ÛᵀW) + (λ_W/2)‖W‖² + (λ_U/2)‖U‖². With a = (λ_U/λ_W)^{1/4}, W = aW′ and U = U′/a leave X = ÛᵀW
unchanged and turn the penalty into (λ/2)(‖W′‖² + ‖U′‖²) at λ = √(λ_W λ_U): the objective is (5)'s form, whose
global minimum over every width :func:`fctheory.certify` bounds from below (Claim G). :func:`training_certificate`
is that certificate: by default at the network's own weights only (one evaluation of f̂ and ∇f̂ and a guarded
norm bound: seconds even at the paper's scale), or also at the solved optimum (``how="optimum"``).
"""

from __future__ import annotations

import math

import numpy as np

from .._validate import Kind, fail
from ..optima import certify
from ..risk.empirical import LABELS, SENTENCES

__all__ = ["TrainingData", "balanced_decays", "training_certificate", "AUTO_SOLVE_PAIRS"]

#: ``how="auto"`` also solves for the optimum when N·K (sentence, class pairs) is at most this (a second or so)
AUTO_SOLVE_PAIRS = 20_000


class TrainingData(Kind):
    """None, a pair (S, y) of sentences (N × L word indices) and labels, or the trainer's ``TrainData``
    (``run.data`` of :func:`fctheory.train` with ``keep_data=True``: its training sentences)."""

    optional = True

    def __call__(self, name, value):
        if value is None:
            return None
        if hasattr(value, "X_train") and hasattr(value, "y_train"):
            value = (value.X_train, value.y_train)
        if not isinstance(value, (tuple, list)) or len(value) != 2:
            fail(name, value, "must be None, a pair (S, y) of sentences (N x L word indices) and labels, or TrainData")
        return SENTENCES(name, value[0]), LABELS(name, value[1])


def balanced_decays(W, U, lam_W: float, lam_U: float):
    """(W′, U′, λ) with W = aW′, U = U′/a, a = (λ_U/λ_W)^{1/4}: the same network and objective at one decay
    λ = √(λ_W λ_U) (both decays must be positive)."""
    if lam_W == lam_U:
        return W, U, float(lam_W)
    a = (lam_U / lam_W) ** 0.25
    return W / a, U * a, math.sqrt(lam_W * lam_U)


def _bound_used(c) -> str:
    if math.isfinite(c.lower_bound_optimum) and c.lower_bound_optimum > c.lower_bound_network:
        return "optimum"
    return "network"


def certificate_fields(c, lam: float) -> dict:
    """A :class:`fctheory.optima.Certificate` as a flat dict (its numbers, ``bound``: where the lower bound was
    taken, ``lam``: the single decay of the objective)."""
    out = {k: getattr(c, k) for k in ("R", "lower_bound", "gap", "rel_gap", "lower_bound_network",
                                      "lower_bound_optimum", "R_optimum", "rho", "align", "width", "rank",
                                      "objective", "message", "seconds")}  # fmt: skip
    out["bound"] = _bound_used(c)
    solved = math.isfinite(c.lower_bound_optimum)
    if out["bound"] == "optimum":
        out["bound_description"] = "the Fenchel bound at the solved optimum"
    else:
        out["bound_description"] = "the Fenchel bound at the network's own weights" + (
            " (at least the bound at the solved optimum)" if solved else " (no solve for the optimum)"
        )
    out["lam"] = float(lam)
    if c.interval is not None:
        out["interval"] = c.interval
    return out


def training_certificate(task, W, U, *, lam_W, lam_U, layernorm, data, how="auto", max_seconds=None) -> dict:
    """The certificate of the network's own training objective on ``data`` = (S, y), as a flat dict.

    ``how``: ``"network"`` (the bound at the network's weights only), ``"optimum"`` (also at the solved optimum),
    ``"auto"`` (the optimum too when N·K ≤ :data:`AUTO_SOLVE_PAIRS`). Where no certificate applies (network h*,
    a zero weight decay) the dict says why: ``{"available": False, "reason": ...}``.
    """
    if layernorm:
        return {"available": False, "reason": "network h* (LayerNorm): the certificate covers network h"}
    if not (lam_W > 0 and lam_U > 0):
        return {"available": False, "reason": "a zero weight decay: the training objective's minimum need not be "
                                              "attained (the certificate needs lam_W, lam_U > 0)"}  # fmt: skip
    S, y = data
    Wb, Ub, lam = balanced_decays(np.asarray(W, np.float64), np.asarray(U, np.float64), lam_W, lam_U)
    solve = how == "optimum" or (how == "auto" and S.shape[0] * task.K <= AUTO_SOLVE_PAIRS)
    c = certify(task, Wb, Ub, lam=lam, data=(S, y), solve=solve, max_seconds=max_seconds)
    return {"available": True, "N": int(S.shape[0]), **certificate_fields(c, lam)}
