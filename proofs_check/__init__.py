"""proofs_check: the Feature Collapse paper's lemmas run as checks.

Symbolic (sympy) where the statement is algebra, exact or numeric enumeration where it is about the
true risk of small tasks, Hypothesis where it is about functions, and convex optimisation (cvxpy)
where it is about global optimality. ``python -m proofs_check`` (or ``fctheory check``) runs the
table; ``--self-test`` runs every check against a deliberately wrong statement.

Each check is importable, e.g. ``from proofs_check.symbolic import check_lemma_B_i`` and
``check_lemma_B_i()`` returns a detail string or raises :class:`CheckFailed`.
"""

import importlib

from .registry import (
    LOADERS,
    MODULES,
    REGISTRY,
    Check,
    CheckFailed,
    CheckResult,
    count_expects,
    expect,
    get_checks,
    run_checks,
    tolerances,
)

__all__ = [
    "REGISTRY",
    "Check",
    "CheckFailed",
    "CheckResult",
    "count_expects",
    "expect",
    "get_checks",
    "run_checks",
    "tolerances",
]

_MODULES = MODULES


def _load_all() -> None:
    """Import every check module (each registers its checks on import), in table order."""
    for name in MODULES:
        importlib.import_module(f"{__name__}.{name}")


# looked up when called, so that replacing ``proofs_check._load_all`` (as the runner's tests do) takes effect
LOADERS.append(lambda: _load_all())
