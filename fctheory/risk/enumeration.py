"""The exact engine's enumeration, planned once and called many times: what the certified optima
(:mod:`fctheory.optima`) and other repeated callers of the engine need beyond :func:`fctheory.risk.evaluate_risk`.

* :func:`enumerate_risk` — R₀ and ∂R₀/∂(scores) of every class at given scores (no planning per call);
* :func:`estimate`, :func:`check_budget`, :func:`resolve_budget` — the cost estimate and the budget, done once;
* :func:`evaluate` — :func:`~fctheory.risk.evaluate_risk` without the argument checks;
* :data:`LIMIT` (the Kind of ``max_seconds``/``max_bytes``) and :data:`SCORE_MAX` (the largest score the
  engine's exponentials take in float64).
"""

from ._engine import _LIMIT as LIMIT
from ._engine import _SCORE_MAX as SCORE_MAX
from ._engine import _check_budget as check_budget
from ._engine import _enumerate as enumerate_risk
from ._engine import _estimate as estimate
from ._engine import _evaluate as evaluate
from ._engine import resolve_budget

__all__ = ["LIMIT", "SCORE_MAX", "check_budget", "enumerate_risk", "estimate", "evaluate", "resolve_budget"]
