"""fctheory.optima.api: the one entry point fctheory.optimum, its dispatch and its refusals."""

import doctest
import importlib

import numpy as np
import pytest

import fctheory as fc
from fctheory import FCTheoryError, Task
from fctheory.optima import optimum


def test_docstring_example_runs():
    res = doctest.testmod(importlib.import_module("fctheory.optima.api"), optionflags=doctest.ELLIPSIS)
    assert res.attempted > 0 and res.failed == 0


def test_uniform_words_dispatch_to_the_collapsed_problem_and_agree_with_enumeration():
    """symmetry=True (collapsed coordinates) and symmetry=False (the engine's enumeration) are two independent
    solves of the same problem: the same minimum and word norms."""
    task, lam = Task.random(3, 2, 2, 5, seed=1), 0.02
    a, b = optimum(task, lam=lam), optimum(task, lam=lam, symmetry=False)
    assert a.certified and b.certified
    assert a.R == pytest.approx(b.R, rel=1e-10)
    np.testing.assert_allclose(np.linalg.norm(a.W, axis=0), np.linalg.norm(b.W, axis=0), rtol=1e-5)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(lam=0.0), "lam"),
        (dict(lam=0.01, network="h**"), "network"),
        (dict(lam=0.01, tol=0.0), "tol"),
        (dict(lam=0.01, precision="double"), "precision"),
        (dict(lam=0.01, network="h*", d=1), "d"),
    ],
)
def test_bad_input_is_refused_naming_the_parameter(kwargs, match):
    with pytest.raises(FCTheoryError, match=match):
        optimum(Task.random(2, 2, 2, 3, seed=0), **kwargs)


def test_the_top_level_and_risk_names_are_this_entry_point():
    assert fc.optimum is optimum and fc.risk.optimum is optimum
    assert fc.OptimumResult is fc.optima.OptimumResult is fc.risk.OptimumResult
