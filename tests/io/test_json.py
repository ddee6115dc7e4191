"""fctheory.io.to_json and versions: the one converter of every JSON output, and the one list of versions."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import mpmath
import numpy as np
import pytest

import fctheory
from fctheory.io import to_json, versions
from fctheory.io.json import mp_str


def test_bools_stay_bools_before_the_integer_rule():
    out = to_json({"a": True, "b": np.bool_(False), "c": [np.True_]})
    assert out == {"a": True, "b": False, "c": [True]}
    assert type(out["a"]) is bool and type(out["b"]) is bool and type(out["c"][0]) is bool


def test_numpy_scalars_become_python_numbers():
    out = to_json([np.int8(-3), np.uint64(2**64 - 1), np.float32(0.5), np.float64(0.1)])
    assert out == [-3, 2**64 - 1, 0.5, 0.1]
    assert [type(v) for v in out] == [int, int, float, float]


def test_arrays_become_nested_lists_and_0d_arrays_scalars():
    a = np.arange(6, dtype=np.int64).reshape(2, 3)
    assert to_json(a) == [[0, 1, 2], [3, 4, 5]]
    assert to_json(np.array(2.5)) == 2.5 and type(to_json(np.array(7))) is int


def test_nan_and_inf_become_null_with_a_note_naming_the_field():
    notes = []
    out = to_json({"r": {"R": float("nan"), "g": [1.0, np.float64(np.inf), -math.inf]}}, notes, "results")
    assert out == {"r": {"R": None, "g": [1.0, None, None]}}
    assert notes == [
        "results.r.R: NaN written as null",
        "results.r.g[1]: inf written as null",
        "results.r.g[2]: -inf written as null",
    ]
    json.dumps(out, allow_nan=False)  # strict JSON


def test_nan_without_notes_is_null_silently():
    assert to_json([float("nan"), np.float32("inf")]) == [None, None]


def test_nan_at_top_level_is_noted_as_value():
    notes = []
    assert to_json(float("nan"), notes) is None and notes == ["value: NaN written as null"]


def test_mpmath_numbers_are_decimal_strings_at_full_precision():
    with mpmath.workdps(60):
        x = mpmath.mpf(1) / 3
        s = to_json({"x": x}, dps=50)["x"]
    assert isinstance(s, str) and s == "0." + "3" * 50
    with mpmath.workdps(60):
        assert abs(mpmath.mpf(s) - mpmath.mpf(1) / 3) < mpmath.mpf(10) ** -50


def test_mpmath_non_finite_is_written_as_mpmath_writes_it():
    assert mp_str(mpmath.inf, 30) == "+inf" and mp_str(mpmath.nan, 30) == "nan"


def test_keys_become_strings():
    assert to_json({1: "a", (2, 3): "b", None: "c"}) == {"1": "a", "(2, 3)": "b", "None": "c"}


def test_dataclasses_become_objects_recursively():
    @dataclass
    class Inner:
        v: np.ndarray

    @dataclass
    class Outer:
        name: str
        inner: Inner

    assert to_json(Outer("x", Inner(np.array([1.0, 2.0])))) == {"name": "x", "inner": {"v": [1.0, 2.0]}}


def test_dataclass_class_and_other_objects_become_strings():
    @dataclass
    class C:
        a: int = 1

    assert to_json(C) == str(C)
    assert to_json(Path("a") / "b") == str(Path("a") / "b")


def test_result_is_accepted_by_strict_json_round_trip():
    v = {"a": [np.float64(1.5), None, "s", True], "b": np.zeros((2, 2)), "c": float("-inf")}
    out = to_json(v)
    assert json.loads(json.dumps(out, allow_nan=False)) == out


def test_versions_lists_fctheory_python_and_the_required_packages():
    v = versions()
    assert list(v)[:6] == ["fctheory", "python", "numpy", "scipy", "numba", "mpmath"]
    assert v["fctheory"] == fctheory.__version__ and v["numpy"] == np.__version__
    assert v["mpmath"] == mpmath.__version__


def test_versions_without_fctheory_is_the_cli_envelope_list():
    from fctheory.cli._output import versions as cli_versions

    v = versions(include_fctheory=False)
    assert "fctheory" not in v and v == cli_versions()


def test_versions_returns_a_new_dict_each_call():
    v = versions()
    v["numpy"] = "changed"
    assert versions()["numpy"] == np.__version__


def test_sweep_versions_line_is_built_from_the_same_record():
    from fctheory.sweep.executors import versions as sweep_versions

    v = versions()
    assert sweep_versions() == f"fctheory {v['fctheory']}; numpy {v['numpy']}; python {v['python']}"


def test_version_module_is_the_package_version():
    from fctheory._version import __version__

    assert fctheory.__version__ is __version__


@pytest.mark.parametrize(
    "old", ["fctheory.cli._output:jsonable", "fctheory.cli._output:mp_str", "fctheory.cli._output:task_object"]
)
def test_cli_output_names_are_the_io_objects(old):
    import importlib

    import fctheory.io
    import fctheory.io.json

    mod, name = old.split(":")
    home = fctheory.io.json if name == "mp_str" else fctheory.io
    assert getattr(importlib.import_module(mod), name) is getattr(home, {"jsonable": "to_json"}.get(name, name))
