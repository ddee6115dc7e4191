"""The certified optimum of the true risk (home: :mod:`fctheory.optima`); this path stays importable."""

from ..optima import OptimumResult, certify_optimality, optimum
from ..optima.result import balanced_factors as balanced_factors

__all__ = ["OptimumResult", "certify_optimality", "optimum"]
