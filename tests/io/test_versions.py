"""``fctheory.io.versions``: the record of fctheory, Python and the dependencies' versions."""

import platform
import sys
from importlib import metadata

import pytest

import fctheory
from fctheory import FCTheoryError
from fctheory.io import versions
from fctheory.io import _versions as mod

REQUIRED = ("numpy", "scipy", "numba", "mpmath")
OPTIONAL = ("pandas", "pyarrow", "hypothesis", "matplotlib", "torch", "safetensors", "dask", "cupy")


def _meta(name):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def test_keys_are_in_the_documented_order():
    installed_optional = [n for n in OPTIONAL if _meta(n) is not None]
    assert list(versions()) == ["fctheory", "python", *REQUIRED, *installed_optional]


def test_values_equal_package_metadata():
    v = versions()
    for name in REQUIRED + OPTIONAL:
        if name in v:
            assert v[name] == _meta(name), name


def test_python_and_fctheory_versions():
    v = versions()
    assert v["python"] == platform.python_version() == sys.version.split()[0]
    assert v["fctheory"] == fctheory.__version__


def test_include_fctheory_false_drops_only_that_key():
    full = versions()
    without = versions(include_fctheory=False)
    assert "fctheory" not in without
    assert without == {k: x for k, x in full.items() if k != "fctheory"}


def test_missing_required_package_is_none_and_missing_optional_is_absent(monkeypatch):
    real = metadata.version

    def fake(name):
        if name in ("scipy", "pandas"):
            raise metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(mod.metadata, "version", fake)
    mod._installed.cache_clear()
    try:
        v = versions()
    finally:
        mod._installed.cache_clear()
    assert "scipy" in v and v["scipy"] is None
    assert "pandas" not in v


def test_each_call_returns_a_new_dict():
    a = versions()
    a["numpy"] = "tampered"
    assert versions()["numpy"] == _meta("numpy")


def test_include_fctheory_must_be_a_bool():
    with pytest.raises(FCTheoryError, match="include_fctheory"):
        versions(include_fctheory="yes")
