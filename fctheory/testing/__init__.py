"""fctheory.testing: Hypothesis strategies and assertion helpers for testing code against the theory.

Public, documented in ``docs/testing-api.md``. Two groups:

* **strategies** (:mod:`fctheory.testing.strategies`): Hypothesis strategies whose every drawn value is
  valid input to fctheory: :func:`tasks`, :func:`word_distributions`, :func:`predictor_params`,
  :func:`weights`, :func:`configurations`, :func:`labels_and_features`;
* **assertions** (:mod:`fctheory.testing.assertions`): :func:`assert_type1_optimal`,
  :func:`assert_type2_optimal`, :func:`assert_type3_optimal`, :func:`assert_critical_point`,
  :func:`check_gradient`, :func:`assert_close_mp`, :func:`assert_scale_invariant`. A mismatch raises
  :class:`TheoryAssertionError` (an ``AssertionError``, so pytest reports a failed assertion).

``import fctheory`` imports this package, but the two modules (and Hypothesis) load on first use of a
name (PEP 562), so ``import fctheory`` stays as fast as before.
"""

from __future__ import annotations

import importlib

_STRATEGIES = (
    "tasks",
    "word_distributions",
    "predictor_params",
    "weights",
    "configurations",
    "labels_and_features",
    "Configuration",
    "PREDICTORS",
)
_ASSERTIONS = (
    "TheoryAssertionError",
    "GradientCheck",
    "assert_type1_optimal",
    "assert_type2_optimal",
    "assert_type3_optimal",
    "assert_critical_point",
    "check_gradient",
    "assert_close_mp",
    "assert_scale_invariant",
)

__all__ = list(_STRATEGIES + _ASSERTIONS)


def __getattr__(name):
    if name in _STRATEGIES:
        module = importlib.import_module(".strategies", __name__)
    elif name in _ASSERTIONS:
        module = importlib.import_module(".assertions", __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(module, name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
