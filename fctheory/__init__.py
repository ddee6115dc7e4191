"""fctheory: numerical theory and verification toolkit for feature collapse and neural collapse.

Predictors of Theorems 1–3 of *Feature Collapse* (Laurent, von Brecht, Bresson), the exact true
risk (5)/(10), property-based theorem checks, and the neural-collapse UFM optima and metrics.
See ``docs/`` for the theory as implemented and the conventions.
"""

import importlib as _importlib

# infrastructure: the project error, the work budget, the version
from ._budget import Budget, budget, get_budget, set_budget
from ._errors import FCTheoryError
from ._version import __version__ as __version__

# the model (section 2): tasks, equiangular frames, the networks h and h*
from .frames import equiangular_frame, equiangular_gram, is_equiangular
from .network import U_from_hat, U_hat, phi, scores
from .task import Task

# theory: Theorems 1-3 and their predictions (predictions.applicable_theorem decides which applies)
# fctheory.tau, fctheory.tau_star and fctheory.sweep are functions that shadow their modules (docs/conventions.md)
from .tau import H, H_prime, lambda_trivial, tau
from .tau_star import H_star, H_star_prime, tau_star
from .type3 import Type3Solution, lambda_max_type3, solve_type3
from .predictions import (
    TypeIIIPrediction,
    TypeIIPrediction,
    TypeIPrediction,
    predict,
    predict_type1,
    predict_type2,
    predict_type3,
)
from .configurations import type1_configuration, type2_configuration, type3_configuration
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
from . import finite_sample  # finite-sample predictors: fctheory.finite_sample.predict_plugin, ...

# the true risk (5)/(10): exact enumeration, its gradient, its minimiser (fctheory.risk)
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

# neural collapse: metrics and unconstrained-features-model optima (fctheory.metrics.nc1, fctheory.ufm.ce, ...)
from . import metrics, risk, ufm

# file formats (fctheory.io: task, weight, run and checkpoint files, the JSON codec)
from . import io

# training (fctheory.train is the function; the package is fctheory.trainer)
from . import trainer
from .trainer import TrainRun, train
from .trainer.batched import train_batched

# your network against the theory (package: fctheory.diagnosis)
from . import diagnosis
from .diagnosis import Diagnosis, diagnose, load_task, save_task

# your network's last-layer features against the regularised UFM optimum (package: fctheory.nc_diagnosis)
from . import nc_diagnosis
from .nc_diagnosis import FeatureDiagnosis, diagnose_features

# many points at once (fctheory.sweep(spec) is the function; `from fctheory.sweep import plot, ...`)
from .sweep import sweep

# property tests of your own code: strategies and assertion helpers (Hypothesis loads on first use)
from . import testing

# sub-packages with an optional dependency, imported on first attribute access (PEP 562) so that
# `import fctheory` never imports it; left out of __all__ so that `from fctheory import *` does not either
_LAZY_SUBPACKAGES = ("torch",)  # fctheory.torch: the PyTorch training monitor (pip install 'fctheory[torch]')


def __getattr__(name: str):
    """``fctheory.torch`` on first access (its ImportError says how to install PyTorch when it is missing)."""
    if name in _LAZY_SUBPACKAGES:
        return _importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY_SUBPACKAGES))


# the public API, one name per line; the fuzz suite
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
    "diagnose_features",
    "FeatureDiagnosis",
    "nc_diagnosis",
    "io",
    "trainer",
    "finite_sample",
    "testing",
]
