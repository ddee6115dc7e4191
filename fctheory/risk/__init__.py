"""Exact true risk (5)/(10) of h and h*, its gradient, expected margins and exact minimization.

Public API (also exported from :mod:`fctheory`):

* :func:`true_risk`, :func:`true_risk_grad`, :func:`unregularized_risk` — exact R, ∇R, R₀;
* :func:`evaluate_risk` — everything at once as a :class:`RiskResult`;
* :func:`expected_margins` — Definition A averaged over D_{z_k}, in closed form;
* :func:`minimize_true_risk` — L-BFGS on the exact risk down to ‖∇R‖ ≤ 1e-10;
* :func:`optimum` — the certified global minimiser of (5) (convex in X = ÛᵀW), a bounded local one of (10);
* :func:`predict_exact` — :func:`fctheory.predict` with the certified optimum on partial tasks (any μ);
* :func:`certify_optimality` — rigorous ball-arithmetic bounds on R(W, U) and on min R at given weights;
* :func:`estimate_cost` — time/memory estimate used to refuse runs over budget;
* :func:`true_risk_bruteforce` — straightforward enumeration (reference and baseline);
* :func:`load_weights` — (W, U) from ``.npz`` or a PyTorch state_dict (home: :mod:`fctheory.io`).
"""

from ._brute import class_sentences, true_risk_bruteforce
from ._engine import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_SECONDS,
    CostEstimate,
    RiskResult,
    estimate_cost,
    evaluate_risk,
)
from .api import true_risk, true_risk_grad, unregularized_risk
from ..io.weights import load_weights
from .margins import ExpectedMargins, expected_margins
from .minimize import MinimizeResult, minimize_true_risk
from .convex import OptimumResult, certify_optimality, optimum, predict_exact

__all__ = [
    "true_risk",
    "true_risk_grad",
    "unregularized_risk",
    "evaluate_risk",
    "RiskResult",
    "expected_margins",
    "ExpectedMargins",
    "minimize_true_risk",
    "MinimizeResult",
    "optimum",
    "OptimumResult",
    "certify_optimality",
    "predict_exact",
    "estimate_cost",
    "CostEstimate",
    "true_risk_bruteforce",
    "class_sentences",
    "load_weights",
    "DEFAULT_MAX_SECONDS",
    "DEFAULT_MAX_BYTES",
]
