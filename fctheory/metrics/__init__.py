"""Collapse metrics: neural-collapse NC1–NC4 and CDNV, and the feature-collapse metrics of (W, U)."""
from .collapse import (
    CollapseDistance,
    FrameAlignment,
    WithinConceptSpread,
    distance_to_type1,
    distance_to_type2,
    distance_to_type3,
    frame_alignment,
    within_concept_spread,
)
from .nc import (
    ClassStatistics,
    NCAccumulator,
    cdnv,
    class_statistics,
    equiangularity,
    equinorm,
    etf_gram,
    nc1,
    nc2,
    nc3,
    nc4,
    nc5,
    uniform_duality,
    uniformity,
)

__all__ = [
    "nc1", "nc2", "nc3", "nc4", "nc5", "cdnv", "equinorm", "equiangularity", "etf_gram", "uniformity",
    "uniform_duality",
    "class_statistics", "ClassStatistics", "NCAccumulator",
    "within_concept_spread", "frame_alignment", "distance_to_type1", "distance_to_type2", "distance_to_type3",
    "CollapseDistance", "FrameAlignment", "WithinConceptSpread",
]
