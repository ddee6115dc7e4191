"""The feature-collapsed optima (home: :mod:`fctheory.optima.collapsed`); this path stays importable."""

from .optima.collapsed import (
    CollapsedOptimum,
    CollapsedOptimumStar,
    collapsed_optimum,
    collapsed_optimum_star,
    collapsed_risk,
)

__all__ = ["CollapsedOptimum", "CollapsedOptimumStar", "collapsed_optimum", "collapsed_optimum_star", "collapsed_risk"]
