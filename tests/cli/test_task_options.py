"""``fctheory.cli._task_options``: the task options of ``train`` and ``diagnose`` build the Task they describe."""

import argparse
import json

import numpy as np
import pytest

from fctheory import FCTheoryError, Task
from fctheory.cli._task_options import add_task_arguments, task_from_args
from fctheory.io import save_task


def _args(argv, *, random_Z):
    p = argparse.ArgumentParser()
    add_task_arguments(p, random_Z=random_Z)
    return p.parse_args(argv)


def _task(argv, *, random_Z=True, **kw):
    return task_from_args(_args(argv, random_Z=random_Z), random_Z=random_Z, **kw)


def _assert_same_task(a: Task, b: Task):
    assert (a.n_c, a.s_c, a.L, a.K) == (b.n_c, b.s_c, b.L, b.K)
    np.testing.assert_array_equal(a.Z, b.Z)
    np.testing.assert_array_equal(a.mu, b.mu)


def _weights(task, d=2):
    return np.zeros((d, task.n_w)), np.zeros((task.K, task.L * d))


# ------------------------------------------------------------------ options -> the same Task
def test_option_group_has_task_seed_only_for_random_Z():
    assert _args([], random_Z=True).task_seed is None
    assert not hasattr(_args([], random_Z=False), "task_seed")


def test_full_task_from_sizes():
    _assert_same_task(_task(["--nc", "3", "--sc", "2", "--L", "2"]), Task.full(3, 2, 2))


def test_full_task_when_K_equals_nc_to_the_L():
    _assert_same_task(_task(["--nc", "2", "--sc", "2", "--L", "3", "--K", "8"], random_Z=False), Task.full(2, 2, 3))


def test_random_task_uses_task_seed():
    got = _task(["--nc", "3", "--sc", "2", "--L", "3", "--K", "5", "--task-seed", "7"])
    _assert_same_task(got, Task.random(3, 2, 3, 5, seed=7))


def test_random_task_default_seed_is_zero():
    got = _task(["--nc", "3", "--sc", "2", "--L", "3", "--K", "5"])
    _assert_same_task(got, Task.random(3, 2, 3, 5, seed=0))
    assert not np.array_equal(got.Z, Task.random(3, 2, 3, 5, seed=1).Z)


def test_zipf_frequencies():
    _assert_same_task(_task(["--nc", "2", "--sc", "4", "--L", "2", "--mu", "zipf"]), Task.full(2, 4, 2, mu="zipf"))


def test_explicit_frequencies():
    got = _task(["--nc", "2", "--sc", "3", "--L", "2", "--mu", "0.2,0.3,0.5"])
    _assert_same_task(got, Task.full(2, 3, 2, mu=np.array([0.2, 0.3, 0.5])))


def test_explicit_counts_with_normalize():
    got = _task(["--nc", "2", "--sc", "3", "--L", "2", "--mu", "2,3,5", "--normalize-mu"])
    np.testing.assert_allclose(got.mu, [0.2, 0.3, 0.5], rtol=0, atol=1e-15)


def test_frequencies_from_file(tmp_path):
    path = tmp_path / "mu.json"
    path.write_text(json.dumps([0.1, 0.2, 0.7]))
    got = _task(["--nc", "2", "--sc", "3", "--L", "2", "--mu", str(path)])
    _assert_same_task(got, Task.full(2, 3, 2, mu=np.array([0.1, 0.2, 0.7])))


def test_latent_file_defines_Z_and_L(tmp_path):
    Z = np.array([[0, 2, 1], [2, 2, 0], [1, 0, 0]])
    path = tmp_path / "Z.npy"
    np.save(path, Z)
    got = _task(["--nc", "3", "--sc", "2", "--Z", str(path)], random_Z=False)
    _assert_same_task(got, Task(3, 2, 3, Z))


def test_task_file(tmp_path):
    task = Task.random(3, 2, 2, 4, seed=3, mu="zipf")
    path = save_task(task, str(tmp_path / "task.json"))
    _assert_same_task(_task(["--task", path]), task)


def test_sizes_default_from_weights():
    task = Task.full(2, 3, 2)
    W, U = _weights(task, d=4)
    _assert_same_task(_task(["--nc", "2"], random_Z=False, W=W, U=U), task)


def test_file_task_is_the_fallback_and_mu_overrides_it():
    file_task = Task.random(3, 2, 2, 4, seed=5)
    assert _task([], file_task=file_task) is file_task
    got = _task(["--mu", "0.25,0.75"], file_task=file_task)
    _assert_same_task(got, Task(3, 2, 2, file_task.Z, np.array([0.25, 0.75])))


# ------------------------------------------------------------------ bad options name the option
@pytest.mark.parametrize(
    ("argv", "random_Z", "option"),
    [
        (["--nc", "2", "--sc", "2"], True, "--L"),
        (["--sc", "2", "--L", "2"], True, "--nc"),
        (["--nc", "2", "--L", "2"], True, "--sc"),
        (["--nc", "1", "--sc", "2", "--L", "2"], True, "--nc"),
        (["--nc", "2", "--sc", "0", "--L", "2"], True, "--sc"),
        (["--nc", "2", "--sc", "2", "--L", "0"], True, "--L"),
        (["--nc", "2", "--sc", "2", "--L", "2", "--K", "5"], True, "--K"),
        (["--nc", "2", "--sc", "2", "--L", "2", "--K", "3"], False, "--Z"),
        (["--nc", "2", "--sc", "2", "--L", "2", "--K", "3", "--task-seed", "-1"], True, "--task-seed"),
        (["--nc", "2", "--sc", "2", "--L", "2", "--mu", "lots"], True, "--mu"),
        (["--nc", "2", "--sc", "2", "--L", "2", "--mu", "0.5,0.2"], True, "--mu"),
        (["--nc", "2", "--sc", "3", "--L", "2", "--mu", "0.5,0.2"], True, "--mu"),
        (["--nc", "2", "--sc", "2", "--L", "2", "--mu", "1,-1", "--normalize-mu"], True, "--mu"),
        ([], True, "--task"),
    ],
)
def test_bad_options_are_refused_naming_the_option(argv, random_Z, option):
    with pytest.raises(FCTheoryError, match=f"^{option}\\b"):
        _task(argv, random_Z=random_Z)


def test_task_file_with_sizes_is_refused(tmp_path):
    path = save_task(Task.full(2, 2, 2), str(tmp_path / "task.json"))
    with pytest.raises(FCTheoryError, match="^--task.*cannot be combined"):
        _task(["--task", path, "--nc", "2"])


def test_missing_files_are_refused_naming_the_option(tmp_path):
    with pytest.raises(FCTheoryError, match="^--task"):
        _task(["--task", str(tmp_path / "none.json")])
    with pytest.raises(FCTheoryError, match="^--Z"):
        _task(["--nc", "2", "--sc", "2", "--Z", str(tmp_path / "none.npy")], random_Z=False)


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["--nc", "4"], "--nc"),
        (["--nc", "2", "--sc", "2"], "--sc"),
        (["--nc", "2", "--L", "3"], "--L"),
        (["--nc", "2", "--K", "3"], "--K"),
    ],
)
def test_options_that_do_not_fit_the_weights_are_refused(argv, option):
    W, U = _weights(Task.full(2, 3, 2), d=2)  # n_w = 6, K = 4, L*d = 4
    with pytest.raises(FCTheoryError, match=f"^{option}\\b"):
        _task(argv, random_Z=False, W=W, U=U)
