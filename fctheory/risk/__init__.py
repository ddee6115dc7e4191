"""Exact true risk (5)/(10) of h and h*, its gradient, expected margins and exact minimization.

Public API (also exported from :mod:`fctheory`):

* :func:`true_risk`, :func:`true_risk_grad`, :func:`unregularized_risk` — exact R, ∇R, R₀;
* :func:`evaluate_risk` — everything at once as a :class:`RiskResult`;
* :func:`expected_margins` — Definition A averaged over D_{z_k}, in closed form;
* :func:`minimize_true_risk` — L-BFGS on the exact risk down to ‖∇R‖ ≤ 1e-10;
* :func:`optimum` — the certified global minimiser of (5) (convex in X = ÛᵀW), a bounded local one of (10)
  (home: :mod:`fctheory.optima`, re-exported here);
* :func:`certify_optimality` — rigorous ball-arithmetic bounds on R(W, U) and on min R at given weights;
* :func:`estimate_cost` — time/memory estimate used to refuse runs over budget;
* :func:`true_risk_bruteforce` — straightforward enumeration (reference and baseline);
* :func:`load_weights` — (W, U) from ``.npz`` or a PyTorch state_dict (home: :mod:`fctheory.io`).
"""

from typing import TYPE_CHECKING

from ._brute import class_sentences, true_risk_bruteforce
from .evaluation import RiskResult, evaluate_risk
from .plan import DEFAULT_MAX_BYTES, DEFAULT_MAX_SECONDS, CostEstimate, estimate_cost
from .api import true_risk, true_risk_grad, unregularized_risk
from ..io.weights import load_weights
from .margins import ExpectedMargins, expected_margins
from .minimize import MinimizeResult, minimize_true_risk

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
    "estimate_cost",
    "CostEstimate",
    "true_risk_bruteforce",
    "class_sentences",
    "load_weights",
    "DEFAULT_MAX_SECONDS",
    "DEFAULT_MAX_BYTES",
]


if TYPE_CHECKING:  # for type checkers and the API reference; at run time __getattr__ below
    from ..optima import OptimumResult, certify_optimality, optimum

#: names re-exported from fctheory.optima (their home) on first access: the optima import the engine's modules,
#: so importing them here at the top would make `import fctheory.optima` and `import fctheory.risk` each wait on
#: the other half-initialised
_FROM_OPTIMA = ("optimum", "OptimumResult", "certify_optimality")


def __getattr__(name: str):
    if name in _FROM_OPTIMA:
        from .. import optima  # noqa: PLC0415 - a sibling that imports this package's modules (see _FROM_OPTIMA)

        value = getattr(optima, name)
        globals()[name] = value
        return value
    # fctheory.risk.predict_exact (1.1) became the dispatcher's own answer: fctheory.predict now gives the certified
    # optimum wherever the engine enumerates; the dispatcher sits above this package, so the name cannot be kept here
    if name == "predict_exact":
        raise AttributeError(
            "fctheory.risk.predict_exact moved: fctheory.predict (and fctheory.predictions.predict_exact) now answer "
            "with the certified optimum wherever the exact engine enumerates the task"
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
