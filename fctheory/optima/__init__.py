"""The certified optima of feature collapse, laid out as the theory.

For network h every global minimiser of a cross-entropy risk with weight decay on W and U is the balanced
factorisation of the minimiser of a convex problem min_X f(X) + λ‖X‖_* in X = ÛᵀW (Claim G, (159)–(167)),
which the proximal solver of :mod:`fctheory._nuclear` solves and its Fenchel bound certifies:

* :mod:`~fctheory.optima.population` — the true risk (5), f by the exact engine's enumeration (any μ);
* :mod:`~fctheory.optima.collapsed` — the true risk (5) for uniform μ on any latent set, in the
  feature-collapsed coordinates (K²L work), and the best feature-collapsed h* of (10);
* :mod:`~fctheory.optima.star` — network h* (10): a local minimiser and a relaxation's lower bound;
* :mod:`~fctheory.optima.empirical` — the training objective R̂ of a finite sample (any μ, any K), in factored
  form (:mod:`~fctheory.optima.sample`: f̂ and ∇f̂ on the engine's backends);
* :mod:`~fctheory.optima.certify` — how far given weights are from the global minimum of their objective;
* :mod:`~fctheory.optima.certificates` — the same certificates in ball arithmetic.

:func:`optimum` is the one entry point; :class:`OptimumResult` its result; :func:`certify` the certificate of a
trained network.
"""

from .api import optimum
from .certificates import certify_optimality, certify_optimality_empirical
from .certify import Certificate, certify
from .collapsed import (
    CollapsedOptimum,
    CollapsedOptimumStar,
    collapsed_optimum,
    collapsed_optimum_star,
    collapsed_risk,
)
from .result import OptimumResult
from .sampled import SampleAverageOptimum, sample_average_optimum

__all__ = [
    "optimum",
    "OptimumResult",
    "certify",
    "Certificate",
    "certify_optimality",
    "certify_optimality_empirical",
    "collapsed_optimum",
    "collapsed_optimum_star",
    "collapsed_risk",
    "CollapsedOptimum",
    "CollapsedOptimumStar",
    "sample_average_optimum",
    "SampleAverageOptimum",
]
