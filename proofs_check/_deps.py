"""Functions of other fctheory modules the checks use, looked up lazily in their home modules
(so a check reports a clear ERROR, not an import failure of the whole table, if one is missing)."""

from __future__ import annotations

import importlib

_HOME = {
    "H": "tau",
    "H_prime": "tau",
    "lambda_trivial": "tau",
    "tau": "tau",
    "H_star": "tau_star",
    "tau_star": "tau_star",
    "solve_type3": "type3",
    "lambda_max_type3": "type3",
    "type1_configuration": "configurations",
    "type2_configuration": "configurations",
    "type3_configuration": "configurations",
    "true_risk": "risk",
    "evaluate_risk": "risk",
    "minimize_true_risk": "risk",
}


def lead(name: str):
    """``fctheory.<home>.<name>`` (e.g. ``lead("tau")`` is the function, not the module)."""
    return getattr(importlib.import_module(f"fctheory.{_HOME[name]}"), name)
