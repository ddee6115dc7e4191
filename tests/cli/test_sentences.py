"""fctheory.cli._sentences: the --data option's sentence file, read and checked, refusals naming --data."""

from __future__ import annotations

import numpy as np
import pytest

import fctheory as fc
from fctheory.cli._sentences import read_sentences
from fctheory.io import save_sentences


def test_a_sentence_file_is_read_back_and_checked_against_the_task(tmp_path):
    task = fc.Task.random(3, 2, 2, 5, seed=0, mu="zipf")
    S, y = task.sample(3, seed=1)
    path = save_sentences(tmp_path / "s.npz", S, y, task=task, n_spl=3, seed=1)
    got = read_sentences(path, task=task)
    np.testing.assert_array_equal(got.S, S) and np.testing.assert_array_equal(got.y, y)
    other = fc.Task.random(3, 2, 2, 5, seed=7, mu="zipf")
    with pytest.raises(fc.FCTheoryError, match="^--data"):
        read_sentences(path, task=other)  # sentences of another task
    with pytest.raises(fc.FCTheoryError, match="^--data"):
        read_sentences(tmp_path / "missing.npz")
