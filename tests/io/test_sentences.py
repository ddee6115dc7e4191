"""Sentence files (:mod:`fctheory.io.sentences`): round trip, plain ``.npz`` files, refusals naming the parameter,
and the trainer's training set of a seed (against the trainer's own :func:`fctheory.trainer.data.make_data`)."""

from __future__ import annotations

import numpy as np
import pytest

import fctheory as fc
from fctheory.io import load_sentences, save_sentences, training_sentences
from fctheory.trainer.data import make_data


@pytest.mark.parametrize("mu", ["uniform", "zipf"])
def test_round_trip_with_the_task(tmp_path, mu):
    task = fc.Task.random(3, 4, 2, 5, mu=mu, seed=0)
    S, y = training_sentences(task, n_spl=3, seed=2)
    save_sentences(tmp_path / "s.npz", S, y, task=task, n_spl=3, seed=2)
    sf = load_sentences(tmp_path / "s.npz", task=task)
    assert np.array_equal(sf.S, S) and np.array_equal(sf.y, y) and (sf.n_spl, sf.seed) == (3, 2)
    assert np.array_equal(sf.task.Z, task.Z) and np.allclose(sf.task.mu, task.mu, rtol=0, atol=0)
    assert sf.data[0] is sf.S


def test_the_trainers_training_set():
    task = fc.Task.random(3, 2, 3, 7, seed=1)
    for seed in (0, 5, 2**40):
        S, y = training_sentences(task, n_spl=4, seed=seed)
        ref = make_data(task, n_spl=4, seed=seed)
        assert np.array_equal(S, ref.X_train) and np.array_equal(y, ref.y_train)
        # the stream the trainer documents (fctheory.trainer.data): default_rng([seed, 1])
        S1, y1 = task.sample(4, seed=np.random.default_rng([seed, 1]))
        assert np.array_equal(S, S1) and np.array_equal(y, y1)


def test_a_plain_npz_is_read_without_a_task(tmp_path):
    task = fc.Task.random(3, 2, 3, 4, seed=1)
    S, y = task.sample(2, seed=0)
    np.savez(tmp_path / "p.npz", S=S, y=y)
    sf = load_sentences(tmp_path / "p.npz")
    assert sf.task is None and sf.n_spl is None and np.array_equal(sf.S, S)
    assert np.array_equal(load_sentences(tmp_path / "p.npz", task=task).y, y)


def test_refusals_name_the_parameter(tmp_path):
    task = fc.Task.random(3, 2, 3, 4, seed=1)
    S, y = task.sample(2, seed=0)
    with pytest.raises(fc.FCTheoryError, match="^--data="):
        load_sentences(tmp_path / "missing.npz", name="--data")
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(fc.FCTheoryError, match="^--data=.*not a readable"):
        load_sentences(tmp_path / "bad.npz", name="--data")
    np.savez(tmp_path / "x.npz", X=S, y=y)
    with pytest.raises(fc.FCTheoryError, match="^--data=.*'S'"):
        load_sentences(tmp_path / "x.npz", name="--data")
    np.savez(tmp_path / "f.npz", S=S.astype(float) + 0.5, y=y)
    with pytest.raises(fc.FCTheoryError, match="^--data=.*integers"):
        load_sentences(tmp_path / "f.npz", name="--data")
    np.savez(tmp_path / "n.npz", S=S, y=y[:-1])
    with pytest.raises(fc.FCTheoryError, match="^--data=.*labels"):
        load_sentences(tmp_path / "n.npz", name="--data")
    save_sentences(tmp_path / "t.npz", S, y, task=task)
    other = fc.Task.random(3, 2, 3, 4, seed=7)
    with pytest.raises(fc.FCTheoryError, match="^--data=.*different task"):
        load_sentences(tmp_path / "t.npz", task=other, name="--data")
    with pytest.raises(fc.FCTheoryError, match="^S="):
        save_sentences(tmp_path / "u.npz", S[:, :2], y, task=task)
    with pytest.raises(fc.FCTheoryError, match="^y="):
        save_sentences(tmp_path / "u.npz", S, y[:-1])
