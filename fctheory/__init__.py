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

# --- analytic core ---
from .tau import H, H_prime, lambda_trivial, tau
from .tau_star import H_star, H_star_prime, tau_star
from .type3 import Type3Solution, lambda_max_type3, solve_type3
from .predictions import TypeIPrediction, TypeIIPrediction, TypeIIIPrediction, predict, predict_type1, predict_type2, predict_type3
from .configurations import type1_configuration, type2_configuration, type3_configuration

# --- exact true risk ---
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

# --- assumption checkers ---
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

# --- trainer ---
from .trainer import TrainRun, train  # fctheory.train is the function; the package is fctheory.trainer

# --- ufm and metrics ---
from . import metrics, ufm  # noqa: E402  (sub-packages: fctheory.ufm.ce, fctheory.metrics.nc1, ...)
from .diagnosis import Diagnosis, diagnose, load_task, save_task  # package: fctheory.diagnosis

from .sweep import sweep  # fctheory.sweep(spec) is the function; `from fctheory.sweep import plot, ...`
from .trainer.batched import train_batched  # many runs of one shape as one computation
from . import finite_sample  # finite-sample predictors (fctheory.finite_sample.predict_plugin, ...)
from . import testing  # noqa: E402  strategies/assertions; lazy (Hypothesis loads on first use)

from ._version import __version__  # noqa: E402, F401 - re-exported: fctheory.__version__

# the public API (one name per line: helpers add theirs with one-line edits); the fuzz suite
# (tests/fuzz/test_fuzz.py) fuzzes every callable listed here and in the sub-packages' __all__
__all__ = [
    "FCTheoryError",
    "Budget",
    "budget",
    "get_budget",
    "set_budget",
    "Task",
    "equiangular_frame",
    "equiangular_gram",
    "is_equiangular",
    "phi",
    "scores",
    "U_hat",
    "U_from_hat",
    "H",
    "H_prime",
    "lambda_trivial",
    "tau",
    "H_star",
    "H_star_prime",
    "tau_star",
    "Type3Solution",
    "lambda_max_type3",
    "solve_type3",
    "TypeIPrediction",
    "TypeIIPrediction",
    "TypeIIIPrediction",
    "predict",
    "predict_type1",
    "predict_type2",
    "predict_type3",
    "type1_configuration",
    "type2_configuration",
    "type3_configuration",
    "ExpectedMargins",
    "MinimizeResult",
    "RiskResult",
    "evaluate_risk",
    "expected_margins",
    "minimize_true_risk",
    "true_risk",
    "true_risk_bruteforce",
    "true_risk_grad",
    "unregularized_risk",
    "AssumptionAResult",
    "AssumptionBResult",
    "ExistenceResult",
    "LemmaBResult",
    "check_assumption_A",
    "check_assumption_B",
    "lemma_B_properties",
    "search_assumption_A",
    "search_lemma_B",
    "TrainRun",
    "train",
    "train_batched",
    "sweep",
    "metrics",
    "ufm",
    "risk",
    "diagnose",
    "Diagnosis",
    "load_task",
    "save_task",
    "diagnosis",
    "io",
    "trainer",
    "finite_sample",
    "testing",
]
