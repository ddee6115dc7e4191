"""Neural-collapse diagnosis of a trained network's features: which regularised UFM result applies, the
predicted optimum, the NC metrics and the distances to it (NumPy, CuPy or PyTorch in: the statistics are
computed on the features' device; NumPy out).

:func:`diagnose_features` works on in-memory features; :mod:`fctheory.nc_diagnosis.statistics` holds the
O(K·d + d²) class statistics (:class:`fctheory.metrics.ClassStatistics`), the metrics and the UFM comparison
computed from them alone, which the PyTorch training monitor (:mod:`fctheory.torch`) reuses epoch by epoch.
"""

from .core import FeatureDiagnosis, UFMApplicability, applicable_result, diagnose_features
from .statistics import (
    FeatureStatistics,
    feature_statistics,
    nc_metrics,
    statistics_from_moments,
    ufm_distances,
    ufm_optimum,
)

__all__ = [
    "diagnose_features",
    "FeatureDiagnosis",
    "applicable_result",
    "UFMApplicability",
    "FeatureStatistics",
    "feature_statistics",
    "statistics_from_moments",
    "nc_metrics",
    "ufm_optimum",
    "ufm_distances",
]
