"""fctheory: numerical theory and verification toolkit for feature collapse and neural collapse.

Predictors of Theorems 1–3 of *Feature Collapse* (Laurent, von Brecht, Bresson), the exact true
risk (5)/(10), property-based theorem checks, and the neural-collapse UFM optima and metrics.
See ``docs/`` for the theory as implemented and the conventions.
"""

import importlib as _importlib
import sys as _sys
import types as _types
from typing import TYPE_CHECKING as _TYPE_CHECKING

# infrastructure, loaded eagerly (no dependency beyond NumPy): the project error, the work budget, the version
from ._budget import Budget, budget, get_budget, set_budget
from ._errors import FCTheoryError
from ._version import __version__ as __version__

# Everything else is imported on first attribute access (PEP 562, as SPEC 1 / lazy_loader do): users import
# the predictors into their own projects, and `import fctheory` must not load SciPy, mpmath, numba, SymPy, ...
# (tests/test_init.py holds the list of what a bare import may not load). `fctheory.tau(...)` then imports
# fctheory.tau and what it needs, nothing else. The imports below are the one list of the public names and
# where they live: type checkers, IDEs and the API reference (griffe) read them as written, and at run time
# __getattr__ reads them from this file's syntax tree on the first access (_lazy_names).
if _TYPE_CHECKING:
    # the model (section 2): tasks, equiangular frames, the networks h and h*
    from .frames import equiangular_frame, equiangular_gram, is_equiangular
    from .network import U_from_hat, U_hat, phi, scores
    from .task import Task

    # theory: Theorems 1-3 and their predictions (predictions.applicable_theorem decides which applies)
    # fctheory.tau, fctheory.tau_star and fctheory.sweep are functions that shadow their modules (docs/conventions.md)
    from .tau import H, H_prime, lambda_trivial, tau
    from .tau_star import H_star, H_star_prime, tau_star
    from .type3 import Type3Solution, lambda_max_type3, solve_type3
    from .optima import (
        CollapsedOptimum,
        CollapsedOptimumStar,
        collapsed_optimum,
        collapsed_optimum_star,
        collapsed_risk,
    )
    from .partial import LemmaBScale, lemma_b_scale

    # the certified optima (fctheory.optima): population, collapsed, training-set, h*
    from .optima import Certificate, OptimumResult, certify, certify_optimality, optimum
    from .predictions import (
        PartialPrediction,
        PartialStarPrediction,
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
    from . import metrics, optima, predictions, risk, ufm

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

# sub-packages with an optional dependency, loaded on first access too, but left out of __all__ so that
# `from fctheory import *` does not import it
_LAZY_SUBPACKAGES = ("torch",)  # fctheory.torch: the PyTorch training monitor (pip install 'fctheory[torch]')
# functions that share their module's name: the package attribute is the function, never the module
# (docs/conventions.md); importing the module must not rebind it
_SHADOWED = ("tau", "tau_star", "sweep")


_LAZY = None  # public name -> (module relative to fctheory, attribute or None for the module), on first use


def _lazy_names() -> dict:
    """The names imported under ``if _TYPE_CHECKING:`` in this file, each with its module (read once)."""
    global _LAZY
    if _LAZY is None:
        import ast  # noqa: PLC0415 - needed on the first lazy access only, not by `import fctheory`

        with open(__file__, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
        block = next(n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", "") == "_TYPE_CHECKING")
        lazy = {}
        for node in block.body:
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:  # `from .tau import tau`: an attribute; `from . import io`: a module
                    lazy[alias.asname or alias.name] = (node.module, alias.name) if node.module else (alias.name, None)
        lazy.update({name: (name, None) for name in _LAZY_SUBPACKAGES})
        _LAZY = lazy
    return _LAZY


def __getattr__(name: str):
    """The lazily loaded names: a public function or class, a sub-package, or ``fctheory.torch``.

    ``fctheory.torch`` raises an ImportError that says how to install PyTorch when it is missing.
    """
    if name.startswith("__") or name not in _lazy_names():
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attr = _lazy_names()[name]
    value = _importlib.import_module(f"{__name__}.{module}")
    if attr is not None:
        value = getattr(value, attr)
    globals()[name] = value  # later accesses are plain attribute look-ups
    return value


def __dir__():
    return sorted(set(globals()) | set(_lazy_names()))


class _Package(_types.ModuleType):
    """fctheory's module type: importing ``fctheory.tau`` (the module) binds the function ``tau``.

    The import system sets ``fctheory.<child>`` to the child module when it first loads it; for the names in
    :data:`_SHADOWED` the public attribute is the function of that name defined in the module.
    """

    def __setattr__(self, name, value):
        if name in _SHADOWED and isinstance(value, _types.ModuleType):
            value = getattr(value, name)
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package


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
    "PartialPrediction",
    "PartialStarPrediction",
    "LemmaBScale",
    "lemma_b_scale",
    "CollapsedOptimum",
    "collapsed_optimum",
    "collapsed_risk",
    "CollapsedOptimumStar",
    "collapsed_optimum_star",
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
    "optimum",
    "OptimumResult",
    "certify",
    "Certificate",
    "certify_optimality",
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
    "optima",
    "predictions",
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
