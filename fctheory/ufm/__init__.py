"""Unconstrained-features-model (UFM) optima: closed forms and the numerical solvers that check them.

Conventions: W ∈ R^{K×d} (row k = classifier of class k), H ∈ R^{d×N} with columns h_{k,i}
class-major (N = K·n_spl, n_spl samples per class), Y = I_K ⊗ 1ᵀ; losses are averaged over the N samples.
See docs/ufm.md and docs/conventions.md (the UFM's classifier W is the paper's U; its features H are the
features U acts on).
(The metrics in :mod:`fctheory.metrics` take features as samples × features, i.e. Hᵀ.)
"""

from ._common import NumericalOptimum, UFMOptimum
from .imbalanced import CertifiedUFMOptimum
from . import groups as groups  # the module: fctheory.ufm.groups.<name>
from . import minority as minority  # the module: fctheory.ufm.minority.<name>
from .minority import (
    MinorityThreshold,
    PhaseDiagram,
    SELIGeometry,
    collapsed_classes,
    minority_collapse_threshold,
    minority_phase_diagram,
    seli_geometry,
    within_group_spread,
)
from .regularized import ce, ce_objective, convex_ce, convex_mse, mse, mse_objective, solve_ce, solve_mse
from .constrained import (
    max_margin,
    norm_constrained_ce,
    output_ball,
    solve_max_margin,
    solve_norm_constrained_ce,
    solve_output_ball,
)
from .layernorm import layernorm_ce, layernorm_features, layernorm_mse, solve_layernorm_ce, solve_layernorm_mse
from . import perturbation as perturbation  # the module: fctheory.ufm.perturbation.<name>
from .perturbation import (
    AnchoredSolution,
    BlockSpectra,
    CollapsedMinimizer,
    FirstOrderResponse,
    FlowResult,
    anchored_objective,
    block_spectra,
    central_path_gradient,
    central_path_loss,
    class_blocks,
    collapsed_minimizer,
    first_order_response,
    gradient_flow,
    hessian_blocks,
    nc1_tilde,
    optimal_W,
    solve_anchored,
)

# every public name (the module ``perturbation`` stays importable as an attribute)
__all__ = [
    "UFMOptimum",
    "CertifiedUFMOptimum",
    "NumericalOptimum",
    "ce",
    "mse",
    "ce_objective",
    "mse_objective",
    "solve_ce",
    "solve_mse",
    "convex_ce",
    "convex_mse",
    "max_margin",
    "norm_constrained_ce",
    "output_ball",
    "solve_max_margin",
    "solve_norm_constrained_ce",
    "solve_output_ball",
    "layernorm_ce",
    "layernorm_mse",
    "layernorm_features",
    "solve_layernorm_ce",
    "solve_layernorm_mse",
    "collapsed_minimizer",
    "CollapsedMinimizer",
    "anchored_objective",
    "optimal_W",
    "central_path_loss",
    "central_path_gradient",
    "solve_anchored",
    "AnchoredSolution",
    "gradient_flow",
    "FlowResult",
    "hessian_blocks",
    "first_order_response",
    "FirstOrderResponse",
    "class_blocks",
    "block_spectra",
    "BlockSpectra",
    "nc1_tilde",
    "minority_collapse_threshold",
    "MinorityThreshold",
    "collapsed_classes",
    "seli_geometry",
    "SELIGeometry",
    "within_group_spread",
    "minority_phase_diagram",
    "PhaseDiagram",
]
