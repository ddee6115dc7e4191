"""Neural-collapse metrics NC1–NC5 and CDNV (Kothapalli's review §2.3, eqs. (4)–(9), (51);
Súkeník et al. Def. 3.4; the perturbation paper §1.5): one import path for the modules that hold them.

* :mod:`fctheory.metrics.moments` — the class statistics (two-pass, or of one-pass moments);
* :mod:`fctheory.metrics.variability` — NC1 and CDNV;
* :mod:`fctheory.metrics.simplex` — NC2, equinorm, equiangularity, uniformity, NC5;
* :mod:`fctheory.metrics.duality` — NC3, uniform duality, NC4;
* :mod:`fctheory.metrics.summary` — every statistics-based metric at once;
* :mod:`fctheory.metrics.classwise` — the per-class values, against the class frequencies.

Conventions
-----------
* ``H`` is samples × features (N × d), ``y`` integer labels in {0, …, K−1} (samples as rows, like the
  peer libraries rhubarbwu/neural-collapse and felixsh/nc-toolbox). Classes may be unbalanced; by
  default the global mean is the mean of the class means, μ_G = (1/K)Σ_k μ_k (the review's
  definition); ``global_mean="samples"`` uses the sample mean (1/N)Σ_i h_i instead (they agree for
  balanced classes). docs/metrics-peers.md maps every peer function to the fctheory call that
  reproduces it.
* **Absent classes.** A class without a sample has no mean and no variance: every metric is computed
  over the K_p classes present (at least 2), exactly as if the absent classes were removed from K (K,
  given or max(y) + 1, only says which labels may occur). :class:`ClassStatistics` holds the present
  classes (``classes``: their labels; ``num_classes``: K). The classifier W keeps its K rows: the
  metrics that compare it with the class means (NC3, uniform duality, :func:`nc_summary`'s W entries)
  take its rows of the present classes; NC4's classifier decides among all K classes (a sample may be
  classified into an absent class), so NC4 is the one metric here that depends on the absent classes.
* ``W`` is the classifier, K × d (row k = a_k), ``M`` a K × d matrix of class means (or classifier rows).
* Translation-invariant statistics subtract one sample (row) first: for features with a large
  common offset the subtraction is exact (Sterbenz), so the class means of the offset-free data
  are not lost to cancellation.
* Statistics are computed in float64 with two passes (means first, then deviations), never as
  E[x²] − E[x]², so collapsed data give exact zeros.
* Inputs may be NumPy or CuPy arrays or PyTorch tensors (CPU or CUDA; dispatched with
  array-api-compat, :func:`fctheory._backend.array_namespace_of`): the computation stays on the
  features' device, float32 inputs are accumulated in float64, scalars are returned as Python floats
  and array results (class means, covariances) are arrays of the input's library on its device.
  Other arguments (a classifier W, a bias, class means) are brought to the features' namespace and
  device; labels are checked on the host (they are small) and gathered on the features' device.
"""

from __future__ import annotations

from .duality import nc3, nc3_from_statistics, nc4, uniform_duality
from .moments import ClassStatistics, class_statistics, class_statistics_from_moments
from .simplex import equiangularity, equinorm, etf_gram, nc2, nc5, uniformity
from .summary import nc_summary, nc_summary_and_frames, nc_summary_from_moments
from .variability import cdnv, cdnv_from_statistics, nc1, nc1_from_statistics

__all__ = [
    "ClassStatistics",
    "class_statistics",
    "class_statistics_from_moments",
    "nc1_from_statistics",
    "cdnv_from_statistics",
    "nc3_from_statistics",
    "nc_summary",
    "nc_summary_from_moments",
    "nc_summary_and_frames",
    "nc1",
    "nc2",
    "nc3",
    "nc4",
    "cdnv",
    "equinorm",
    "equiangularity",
    "etf_gram",
    "uniformity",
    "uniform_duality",
    "nc5",
]
