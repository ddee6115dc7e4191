"""fctheory: numerical theory and verification toolkit for feature collapse and neural collapse.

Predictors of Theorems 1–3 of *Feature Collapse* (Laurent, von Brecht, Bresson), the exact true
risk (5)/(10), property-based theorem checks, and the neural-collapse UFM optima and metrics.
See ``docs/`` for the theory as implemented and the conventions.
"""
from ._errors import FCTheoryError
from ._budget import Budget, budget, get_budget, set_budget
from .frames import equiangular_frame, equiangular_gram, is_equiangular
from .network import U_from_hat, U_hat, phi, scores
from .task import Task

# --- analytic core (issue 2) ---
from .tau import H, H_prime, lambda_trivial, tau
from .tau_star import H_star, H_star_prime, tau_star
from .type3 import Type3Solution, lambda_max_type3, solve_type3
from .predictions import TypeIPrediction, TypeIIPrediction, TypeIIIPrediction, predict, predict_type1, predict_type2, predict_type3
from .configurations import type1_configuration, type2_configuration, type3_configuration

# --- exact true risk (issue 3) ---
from .risk import (
    ExpectedMargins,
    MinimizeResult,
    RiskResult,
    evaluate_risk,
    expected_margins,
    minimize_true_risk,
    true_risk,
    true_risk_bruteforce,
    true_risk_grad,
    unregularized_risk,
)

# --- assumption checkers (issue 4) ---
from .assumptions import (
    AssumptionAResult,
    AssumptionBResult,
    ExistenceResult,
    LemmaBResult,
    check_assumption_A,
    check_assumption_B,
    lemma_B_properties,
    search_assumption_A,
    search_lemma_B,
)

# --- trainer (issue 5) ---
from .trainer import TrainRun, train  # fctheory.train is the function; the package is fctheory.trainer

# --- ufm and metrics (issue 6) ---
from . import metrics, ufm  # noqa: E402  (sub-packages: fctheory.ufm.ce, fctheory.metrics.nc1, ...)

__version__ = "0.1.0"
