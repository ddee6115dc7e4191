"""The docstring examples of the core modules are executable and correct."""

import doctest
import importlib

import pytest

# (fctheory.tau the attribute is the function; the module lives in sys.modules)
MODULES = [
    "fctheory.tau",
    "fctheory.tau_star",
    "fctheory.type3",
    "fctheory.partial",
    "fctheory.theorems",
    "fctheory.predictions.verdict",
    "fctheory.optima.api",
    "fctheory.optima.collapsed",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    res = doctest.testmod(module, extraglobs={"np": __import__("numpy")}, optionflags=doctest.ELLIPSIS)
    assert res.attempted > 0 and res.failed == 0
