"""``fctheory._version``: one version string, equal to the package metadata and to ``fctheory.__version__``."""

import importlib.metadata
import re

import pytest

import fctheory
from fctheory import _version

# PEP 440 public version (https://peps.python.org/pep-0440/#appendix-b-parsing-version-strings-with-regular-expressions)
_PEP440 = re.compile(
    r"^([1-9][0-9]*!)?(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*))*((a|b|rc)(0|[1-9][0-9]*))?"
    r"(\.post(0|[1-9][0-9]*))?(\.dev(0|[1-9][0-9]*))?$"
)


def test_version_equals_installed_metadata():
    assert _version.__version__ == importlib.metadata.version("fctheory")


def test_package_exports_the_same_version():
    assert fctheory.__version__ is _version.__version__


def test_version_is_pep440_canonical():
    assert isinstance(_version.__version__, str)
    assert _PEP440.match(_version.__version__), _version.__version__


def test_version_agrees_with_packaging_parser():
    packaging_version = pytest.importorskip("packaging.version")
    assert str(packaging_version.Version(_version.__version__)) == _version.__version__
