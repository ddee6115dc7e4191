"""Former home of the Monte-Carlo risk estimator, now :mod:`fctheory.risk.montecarlo` (a risk estimator)."""

from ..risk.montecarlo import MonteCarloRisk, check_magnitude, monte_carlo_risk, penalty_terms, safe_norm

__all__ = ["MonteCarloRisk", "monte_carlo_risk", "check_magnitude", "penalty_terms", "safe_norm"]
