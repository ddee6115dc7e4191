"""fctheory._files: atomic writes, the .npz format header and the refusals of damaged or foreign files."""

import os

import numpy as np
import pytest

import fctheory as fc
from fctheory._files import FORMAT_VERSION, atomic_path, load_json, load_npz, write_json, write_npz


def test_npz_round_trip_is_exact_and_hides_the_header(tmp_path):
    A = np.random.default_rng(0).normal(size=(3, 4))
    p = write_npz(str(tmp_path / "a.npz"), {"A": A, "k": np.int64(7)}, kind="demo")
    back = load_npz(p, kind="demo", required=("A",))
    assert set(back) == {"A", "k"} and np.array_equal(back["A"], A) and int(back["k"]) == 7


def test_load_npz_refuses_another_kind_a_newer_version_and_missing_entries(tmp_path):
    p = write_npz(str(tmp_path / "a.npz"), {"A": np.zeros(2)}, kind="demo")
    with pytest.raises(fc.FCTheoryError, match="expected 'other'"):
        load_npz(p, kind="other")
    with pytest.raises(fc.FCTheoryError, match="missing the entry 'B'"):
        load_npz(p, kind="demo", required=("B",))
    newer = str(tmp_path / "n.npz")
    np.savez(newer, __format__=np.array(f'{{"kind": "demo", "version": {FORMAT_VERSION + 1}}}'), A=np.zeros(1))
    with pytest.raises(fc.FCTheoryError, match="format version"):
        load_npz(newer, kind="demo")


def test_load_npz_refuses_a_truncated_file(tmp_path):
    p = write_npz(str(tmp_path / "a.npz"), {"A": np.arange(1000.0)}, kind="demo")
    data = open(p, "rb").read()
    open(p, "wb").write(data[: len(data) // 2])
    with pytest.raises(fc.FCTheoryError, match="path="):
        load_npz(p, kind="demo")


def test_atomic_path_leaves_the_old_file_and_no_temporary_on_failure(tmp_path):
    target = tmp_path / "t.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_path(str(target)) as tmp:
            open(tmp, "w").write("new")
            raise RuntimeError("interrupted")
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["t.txt"]


def test_json_round_trip_and_refusal_of_damaged_json(tmp_path):
    p = write_json(str(tmp_path / "x.json"), {"b": [1, 2.5], "a": "z"})
    assert load_json(p) == {"a": "z", "b": [1, 2.5]}
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(fc.FCTheoryError, match="not valid JSON"):
        load_json(str(tmp_path / "bad.json"))
