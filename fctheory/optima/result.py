"""The result object shared by every certified optimum of :mod:`fctheory.optima`, and the balanced factors."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._nuclear import balanced_svd
from .._validate import result_type
from ..network import U_from_hat

__all__ = ["OptimumResult", "balanced_factors"]


@result_type
@dataclass
class OptimumResult:
    """Outcome of :func:`optimum` (fields in the spirit of scipy.optimize).

    Attributes
    ----------
    X : ndarray, shape (K·L, n_w)
        ÛᵀW (h) or Ûᵀφ(W) (h*) at the returned weights.
    W, U : ndarray
        Weights of width ``width`` (or the requested ``d``, padded with zero rows), balanced for h.
    width : int
        The smallest width that attains the optimum: rank X for h (Claim G; 0 when the origin is optimal, W and
        U then have one zero row), the width used for h*.
    R : float
        The true risk (5) (or (10)) at (W, U), by the exact engine.
    lower_bound : float
        A certified lower bound on min R (over every width for h; over width ``d`` for h*).
    gap, rel_gap : float
        R − lower_bound (≥ 0 up to rounding) and gap/|R|.
    rho : float
        ‖∇f(X)‖₂/λ (h: ≤ 1 at the optimum, Claim H); for h* the relaxation's at its best λ'.
    align : float
        (⟨∇f(X), X⟩ + λ‖X‖_*)/(λ‖X‖_*): 0 at the optimum of h (nan for h*).
    grad_norm : float
        ‖(∂R/∂W, ∂R/∂U)‖_F at (W, U).
    R_type1, R_type3 : float
        The risk of Theorem 1's type-I configuration (type1_configuration with ``lam``) and of Theorem 2's
        type-III configuration (full tasks with non-uniform μ; nan elsewhere); for h*, ``R_type1`` holds
        Theorem 3's type-II configuration's R*.
    network : str
        ``"h"`` or ``"h*"``.
    certified : bool
        rel_gap ≤ the requested ``tol`` (h* : the relaxation closed the gap).
    status : str
        ``"certified"``, ``"not certified"`` (h: gap above tol), ``"local"`` (h*: a local minimiser with a
        certified bound on its distance to the global minimum) or ``"width-limited"`` (``data=`` with d below
        the rank of the optimum: a width-d local minimiser, the certified bound below it).
    message : str
    nit, nfev : int
        Proximal-gradient iterations and risk-and-gradient evaluations (polish included).
    seconds : float
    interval : dict or None
        With ``precision="interval"``: {"R": (lo, hi), "lower_bound": lo, "gap": hi, "rho": hi} — rigorous
        float64 bounds (R of the returned weights, the lower bound on min R, the gap, ‖∇f‖₂/λ).
    R_convex : float
        The training-set optimum (``data=``): min g = min R̂ over every width, the certified convex optimum;
        it differs from ``R`` only when the requested ``d`` is below its rank (``R`` is then a width-d local
        minimum's, status ``"width-limited"``). nan for the population optima.
    """

    X: np.ndarray
    W: np.ndarray
    U: np.ndarray
    width: int
    R: float
    lower_bound: float
    gap: float
    rel_gap: float
    rho: float
    align: float
    grad_norm: float
    R_type1: float
    R_type3: float
    network: str
    certified: bool
    status: str
    message: str
    nit: int
    nfev: int
    seconds: float
    interval: dict | None = None
    R_convex: float = float("nan")


def balanced_factors(X, L: int, *, width: int | None = None):
    """Balanced (W, U) with ÛᵀW = X and ‖W‖_F² = ‖Û‖_F² = ‖X‖_* (Claim G), of width rank X (or ``width``,
    padded with zero rows). W = Σ^(1/2)Bᵀ, Û = Σ^(1/2)Aᵀ for the SVD X = AΣBᵀ."""
    W, Uh, r = balanced_svd(X, width=width)
    return W, U_from_hat(Uh, L=L), r
