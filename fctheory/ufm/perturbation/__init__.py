"""The perturbation paper's UFM with features anchored to a given matrix H0 (its Eqs. 1–7, Thms 2.1,
3.1, 4.1, 4.2; see perturbation-analysis notes).

Scaling (the paper's own, footnote 2), W ∈ R^{K×d}, H, H0 ∈ R^{d×N} (columns class-major, N = K·n):

    f(W, H; H0) = 1/(2N)‖WH − Y‖² + λ_W/(2K)‖W‖² + λ_H/(2N)‖H‖² + β/(2N)‖H − H0‖²      (2)

(β = 0 gives the plain UFM (1)). vec(·) stacks columns, so vec(H) is the concatenation of the
samples h_{k,i} and the class-k block of vec(H) is the slice [k·n·d, (k+1)·n·d).

Every entry point checks its arguments (kinds declared with ``@public``), sizes its dense matrices
(d×d, dN×dN Hessian blocks, …) against the budget before forming them, converts linear-algebra
failures into :class:`~fctheory.FCTheoryError`, and refuses a result that overflows float64 rather
than returning inf/NaN. The closed forms (Theorems 2.1 and 4.2) are evaluated through logs of λ.

One module per part of the paper: :mod:`.minimizer` (Theorem 2.1, ÑC1), :mod:`.objective` ((2), its derivatives,
the central path), :mod:`.solvers` (the minimiser of (2), the flow of Theorem 3.1) and :mod:`.response`
(Theorems 4.1 and 4.2); their shared kinds and overflow-safe helpers in ``_common``.
"""

from .minimizer import CollapsedMinimizer, collapsed_minimizer, nc1_tilde
from .objective import anchored_objective, central_path_gradient, central_path_loss, hessian_blocks, optimal_W
from .response import BlockSpectra, FirstOrderResponse, block_spectra, class_blocks, first_order_response
from .solvers import AnchoredSolution, FlowResult, gradient_flow, solve_anchored

__all__ = [
    "CollapsedMinimizer",
    "collapsed_minimizer",
    "anchored_objective",
    "optimal_W",
    "central_path_loss",
    "central_path_gradient",
    "AnchoredSolution",
    "solve_anchored",
    "FlowResult",
    "gradient_flow",
    "hessian_blocks",
    "FirstOrderResponse",
    "first_order_response",
    "class_blocks",
    "BlockSpectra",
    "block_spectra",
    "nc1_tilde",
]
