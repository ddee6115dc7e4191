"""fctheory.io.tasks: the task codec, task files, Z and μ from files, the task object and the sizes → Task builder."""

from __future__ import annotations

import hashlib
import importlib
import json

import numpy as np
import pytest

import fctheory
from fctheory import FCTheoryError, Task
from fctheory.io import (
    load_frequencies,
    load_latent,
    load_task,
    save_task,
    task_from_dict,
    task_from_sizes,
    task_object,
    task_to_dict,
)


def _same_task(a: Task, b: Task) -> bool:
    return (
        (a.n_c, a.s_c, a.L, a.K) == (b.n_c, b.s_c, b.L, b.K)
        and np.array_equal(a.Z, b.Z)
        and np.array_equal(a.mu, b.mu)
        and a.allow_duplicates == b.allow_duplicates
    )


TASKS = {
    "full-uniform": lambda: Task.full(3, 2, 2),
    "full-zipf": lambda: Task.full(2, 3, 2, mu="zipf"),
    "random-custom-mu": lambda: Task.random(3, 3, 3, 7, mu=np.array([0.1, 0.2 + 1e-13, 0.7 - 1e-13]), seed=4),
    "duplicates": lambda: Task.random(2, 2, 2, 6, seed=1, replace=True),
}


@pytest.mark.parametrize("make", TASKS.values(), ids=TASKS.keys())
def test_task_file_round_trips_bit_for_bit(tmp_path, make):
    task = make()
    back = load_task(save_task(task, tmp_path / "t.json"))
    assert _same_task(task, back)


@pytest.mark.parametrize("make", TASKS.values(), ids=TASKS.keys())
def test_task_dict_survives_json_text(make):
    task = make()
    assert _same_task(task_from_dict(json.loads(json.dumps(task_to_dict(task)))), task)


def test_full_task_is_written_by_name_not_by_rows():
    d = task_to_dict(Task.full(3, 2, 2, mu="zipf"))
    assert d == {"format": "fctheory-task", "version": 1, "n_c": 3, "s_c": 2, "L": 2, "K": 9, "Z": "full", "mu": "zipf"}


def test_full_rows_in_another_order_are_written_out():
    Z = Task.full(2, 1, 2).Z[::-1].copy()
    d = task_to_dict(Task(2, 1, 2, Z))
    assert d["Z"] == Z.tolist()


@pytest.mark.parametrize(
    "edit, name",
    [
        ({"format": "other"}, "task"),
        ({"version": 99}, "task:version"),
        ({"n_c": 1}, "task:n_c"),
        ({"s_c": "2"}, "task:s_c"),
        ({"mu": [0.5, 0.6]}, "task:mu"),
        ({"mu": "flat"}, "task:mu"),
        ({"Z": "all"}, "task:Z"),
        ({"Z": [[0, 0], [0, 0]], "K": 2}, "task:Z"),
        ({"Z": [[0, 0], [0, 5]], "K": 2}, "task:Z"),
        ({"K": 8}, "task:K"),
        ({"allow_duplicates": 1, "Z": [[0, 0]], "K": 1}, "task:allow_duplicates"),
    ],
)
def test_bad_task_objects_are_refused_naming_the_entry(edit, name):
    obj = {**task_to_dict(Task.full(3, 2, 2)), **edit}
    with pytest.raises(FCTheoryError, match=f"^{name}"):
        task_from_dict(obj)


def test_missing_size_is_refused_naming_it():
    obj = task_to_dict(Task.full(3, 2, 2))
    del obj["L"]
    with pytest.raises(FCTheoryError, match="task.*'L'"):
        task_from_dict(obj)


def test_task_file_that_is_not_an_object_is_refused(tmp_path):
    p = tmp_path / "t.json"
    p.write_text("[1, 2]")
    with pytest.raises(FCTheoryError, match="^task"):
        load_task(p)


def test_latent_variables_from_csv_json_npy_agree(tmp_path):
    Z = np.array([[0, 1], [2, 0], [1, 1]])
    (tmp_path / "z.csv").write_text("a,b\n0,1\n2,0\n# comment\n1,1\n")
    (tmp_path / "z.json").write_text(json.dumps({"Z": Z.tolist()}))
    np.save(tmp_path / "z.npy", Z)
    for ext in ("csv", "json", "npy"):
        got = load_latent(tmp_path / f"z.{ext}", n_c=3, L=2, K=3)
        assert got.dtype == np.int64 and np.array_equal(got, Z)


@pytest.mark.parametrize(
    "Z, kw, match",
    [
        ([[0, 1], [0, 1]], {}, "distinct"),
        ([[0, 3]], {"n_c": 3}, "concept indices"),
        ([[0, -1]], {}, ">= 0"),
        ([[0.5, 1]], {}, "integer"),
        ([[0, 1]], {"K": 2}, "K = 2 rows"),
    ],
)
def test_bad_latent_files_are_refused_naming_Z(tmp_path, Z, kw, match):
    p = tmp_path / "z.json"
    p.write_text(json.dumps(Z))
    with pytest.raises(FCTheoryError, match=f"^Z=.*{match}"):
        load_latent(p, **kw)


def test_frequencies_normalized_from_counts(tmp_path):
    p = tmp_path / "mu.csv"
    p.write_text("1\n3\n")
    assert np.array_equal(load_frequencies(p, s_c=2, normalize=True), [0.25, 0.75])
    with pytest.raises(FCTheoryError, match="^mu"):
        load_frequencies(p, s_c=2)


def test_frequencies_of_the_wrong_length_are_refused(tmp_path):
    p = tmp_path / "mu.json"
    p.write_text(json.dumps({"mu": [0.5, 0.5]}))
    with pytest.raises(FCTheoryError, match="^mu"):
        load_frequencies(p, s_c=3)


def test_unknown_table_extension_is_refused(tmp_path):
    p = tmp_path / "z.xlsx"
    p.write_text("0,1")
    with pytest.raises(FCTheoryError, match="^Z.*must be a .npy"):
        load_latent(p)


def test_task_object_is_a_task_file_plus_n_w():
    task = Task.random(3, 2, 2, 5, seed=0)
    obj = task_object(task)
    assert obj == {"n_c": 3, "s_c": 2, "L": 2, "K": 5, "n_w": 6, "mu": "uniform", "Z": task.Z.tolist()}
    assert _same_task(task_from_dict(obj), task)


def test_task_object_replaces_a_large_Z_by_its_sha256():
    task = Task.random(3, 2, 3, 4, seed=0)
    obj = task_object(task, z_max_entries=11)
    assert "Z" not in obj
    assert obj["Z_sha256"] == hashlib.sha256(task.Z.astype(np.int64).tobytes()).hexdigest()
    assert task_object(task, z_max_entries=12)["Z"] == task.Z.tolist()


def test_sizes_give_the_full_task_when_K_is_omitted_or_n_c_to_the_L():
    for K in (None, 9):
        assert _same_task(task_from_sizes(3, 2, 2, K=K, mu="zipf"), Task.full(3, 2, 2, mu="zipf"))


def test_sizes_draw_Z_from_the_seed_when_K_is_smaller():
    got = task_from_sizes(3, 2, 2, K=4, seed=5)
    assert _same_task(got, Task.random(3, 2, 2, 4, seed=5))


def test_sizes_with_Z_use_it():
    Z = np.array([[1, 0], [0, 2]])
    assert np.array_equal(task_from_sizes(3, 2, 2, Z=Z).Z, Z)


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"n_c": 1}, "^n_c"),
        ({"K": 10}, "^--K.*<= n_c"),
        ({"K": 4, "random_Z": False}, "^--Z.*latent variables are needed"),
        ({"L": 30, "K": None}, "^--K.*too many"),
        ({"Z": np.array([[0, 0], [0, 0]])}, "^--Z"),
    ],
)
def test_sizes_refusals_name_the_given_option(kw, match):
    args = {"n_c": 3, "s_c": 2, "L": 2, **kw}
    names = {"K": "--K", "Z": "--Z"}
    with pytest.raises(FCTheoryError, match=match):
        task_from_sizes(args.pop("n_c"), args.pop("s_c"), args.pop("L"), names=names, **args)


@pytest.mark.parametrize("old", ["fctheory", "fctheory.diagnosis", "fctheory.diagnosis.files"])
@pytest.mark.parametrize("name", ["load_task", "save_task"])
def test_old_paths_are_the_same_objects(old, name):
    import fctheory.io

    assert getattr(importlib.import_module(old), name) is getattr(fctheory.io, name)


@pytest.mark.parametrize(
    "name", ["task_to_dict", "task_from_dict", "load_latent", "load_frequencies", "TASK_FORMAT", "TASK_VERSION"]
)
def test_diagnosis_names_are_the_io_objects(name):
    import fctheory.diagnosis.files
    import fctheory.io

    assert getattr(fctheory.diagnosis, name, getattr(fctheory.diagnosis.files, name)) is getattr(fctheory.io, name)


def test_top_level_load_task_is_io_load_task():
    assert fctheory.load_task is importlib.import_module("fctheory.io.tasks").load_task


def test_the_fingerprint_tells_tasks_apart_by_latent_set_sizes_and_frequencies():
    from fctheory.io.tasks import task_fingerprint

    fc = fctheory

    a, b = fc.Task.random(3, 2, 3, 9, seed=0), fc.Task.random(3, 2, 3, 9, seed=1)
    assert task_fingerprint(a) == task_fingerprint(fc.Task(3, 2, 3, a.Z.copy())) != task_fingerprint(b)
    assert task_fingerprint(a) != task_fingerprint(fc.Task(3, 3, 3, a.Z))  # the sizes are part of it
    zipf = fc.Task(3, 2, 3, a.Z, mu="zipf")
    assert task_fingerprint(zipf) != task_fingerprint(a)  # and the word frequencies
    assert len(task_fingerprint(a)) == 64 and int(task_fingerprint(a), 16) >= 0
