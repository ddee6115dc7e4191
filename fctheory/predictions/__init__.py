"""Everything the theory predicts for a setting, and which theorem (or certified optimum) it comes from.

* the prediction objects of Theorems 1–3 (:func:`predict_type1`, :func:`predict_type2`, :func:`predict_type3`;
  home :mod:`fctheory.theorems`);
* partial tasks (K < n_c^L): :class:`PartialPrediction`, :class:`PartialStarPrediction` and their provenance
  (:mod:`fctheory.predictions.partial`);
* the one dispatcher: :func:`applicable_theorem`, :class:`TheoryVerdict`, :func:`predict`, :func:`predict_exact`
  (:mod:`fctheory.predictions.verdict`).
"""

from ..theorems import (
    TypeIIIPrediction,
    TypeIIPrediction,
    TypeIPrediction,
    predict_type1,
    predict_type2,
    predict_type3,
)
from .partial import (
    APPROXIMATION,
    COLLAPSED_STAR,
    EXACT,
    LEMMA_B,
    SAMPLE_AVERAGE,
    PartialPrediction,
    PartialStarPrediction,
)
from .verdict import (
    TheoryVerdict,
    applicable_theorem,
    predict,
    predict_exact,
)

__all__ = [
    "TypeIPrediction",
    "TypeIIPrediction",
    "TypeIIIPrediction",
    "predict_type1",
    "predict_type2",
    "predict_type3",
    "predict",
    "predict_exact",
    "applicable_theorem",
    "TheoryVerdict",
    "PartialPrediction",
    "PartialStarPrediction",
    "COLLAPSED_STAR",
    "EXACT",
    "LEMMA_B",
    "APPROXIMATION",
    "SAMPLE_AVERAGE",
]
