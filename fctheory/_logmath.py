"""Former home of the predictors' overflow-free building blocks, now in :mod:`fctheory._numerics`."""

from ._numerics import expit, log1p_aexpm1, log1p_aexpm1_prime, solve_monotone

__all__ = ["expit", "log1p_aexpm1", "log1p_aexpm1_prime", "solve_monotone"]
