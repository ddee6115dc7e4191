"""fctheory.cli._table: number formatting, tables within the width, and the exact argparse option types."""

import argparse
import json

import numpy as np
import pytest

from fctheory.cli._table import dumps, fmt, integer, real, table


@pytest.mark.parametrize(
    "value, text",
    [
        (True, "True"),
        (np.int64(12), "12"),
        (0.0, "0"),
        (0.5, "0.5"),
        (1 / 3, "0.3333333333"),
        (1e-5, "1.000000000e-05"),
        (2.5e7, "2.500000000e+07"),
        (None, ""),
        ([1, 0.25], "[1, 0.25]"),
        (float("nan"), ""),
        (np.float32("nan"), ""),
        ([0.5, float("nan")], "[0.5, n/a]"),
        (np.array([[1.0, np.nan]]), "[1, n/a]"),
        (float("inf"), "inf"),
    ],
)
def test_fmt_writes_each_kind_of_value(value, text):
    assert fmt(value) == text


def test_a_table_never_prints_nan():
    text = table([["predicted_R", float("nan")], ["cosines", [1.0, float("nan")]], ["R", 0.5]], ["quantity", "value"])
    assert "nan" not in text.lower()
    assert text.splitlines()[2].rstrip() == "predicted_R"


def test_table_keeps_every_character_within_the_width():
    rows = [["a", "x" * 150, 1.5], ["b", "short", 2]]
    text = table(rows, ["id", "statement", "value"], width=60)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 60
    assert "".join(line[4:].split("  ")[0].strip() for line in lines[2:]).count("x") == 150


def test_dumps_turns_numpy_values_into_plain_json():
    assert json.loads(dumps({"a": np.arange(3), "b": np.float64(0.5)})) == {"a": [0, 1, 2], "b": 0.5}


def test_integer_option_is_exact_and_bounded():
    parse = integer(min=2, max=10**30)
    assert parse("1_000") == 1000 and parse(str(10**30)) == 10**30
    for bad in ("1", "2.0", "x", str(10**30 + 1)):
        with pytest.raises(argparse.ArgumentTypeError, match="must be an integer >= 2"):
            parse(bad)


def test_real_option_refuses_nan_and_overflow_but_accepts_the_word_inf_when_allowed():
    parse = real(0, lo_open=True, inf_ok=True)
    assert parse("0.25") == 0.25 and parse("inf") == float("inf")
    for bad in ("0", "nan", "1e400", "-1"):
        with pytest.raises(argparse.ArgumentTypeError, match="must be a number > 0"):
            parse(bad)
