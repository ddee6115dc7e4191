"""A Task whose concept or word indices approach the int64 limit: a named FCTheoryError or an exact answer.

Word indices α·s_c + β are int64, so n_w = n_c·s_c ≤ 2**62 is the documented limit; latent-variable entries
must be int64 concept indices below n_c. Near those limits nothing may overflow silently (a wrapped index is
a wrong answer) or escape as an OverflowError / numpy error.
"""

from __future__ import annotations

import numpy as np
import pytest

import fctheory as fc


@pytest.mark.parametrize("n_c, s_c", [(2**62, 2), (2**63, 1), (10**30, 1), (3, 10**30), (2**31, 2**32)])
def test_vocabulary_beyond_int64_word_indices_is_refused_naming_s_c(n_c, s_c):
    with pytest.raises(fc.FCTheoryError, match=r"^s_c=.*2\*\*62"):
        fc.Task(n_c=n_c, s_c=s_c, L=1, Z=[[0], [1]])


@pytest.mark.parametrize(
    "entry",
    [2**63, 2**64 - 1, 2**70, 10**30, 2.0**63, np.uint64(2**64 - 1)],
    ids=["2**63", "2**64-1", "2**70", "1e30-int", "2.0**63", "uint64-max"],
)
def test_latent_entries_beyond_int64_are_refused_naming_Z(entry):
    Z = np.array([[0], [entry]], dtype=np.uint64) if isinstance(entry, np.uint64) else [[0], [entry]]
    with pytest.raises(fc.FCTheoryError, match=r"^Z=.*64-bit integer"):
        fc.Task(n_c=2**62, s_c=1, L=1, Z=Z)


def test_latent_entry_at_the_int64_maximum_is_refused_as_a_concept_index():
    with pytest.raises(fc.FCTheoryError, match=r"^Z=9223372036854775807 is invalid: must be <= 2"):
        fc.Task(n_c=3, s_c=1, L=1, Z=np.array([[0], [2**63 - 1]], dtype=np.int64))


def test_sampled_word_indices_are_exact_at_the_largest_vocabulary():
    n_c, s_c = 2**61, 2  # n_w = 2**62, the largest vocabulary
    Z = [[n_c - 1, 0], [5, n_c - 1]]
    task = fc.Task(n_c=n_c, s_c=s_c, L=2, Z=Z, mu=[0.5, 0.5])
    X, y = task.sample(50, seed=0)
    beta = X - np.asarray(Z, dtype=np.int64)[y] * s_c  # exact in int64 only if nothing wrapped
    assert X.dtype == np.int64 and ((beta == 0) | (beta == 1)).all()
    # oracle in Python integers: every word index is α·s_c + β < n_w = 2**62
    for row, k in zip(X.tolist(), y.tolist()):
        assert all(0 <= w - Z[k][ell] * s_c <= 1 for ell, w in enumerate(row))
        assert max(row) < n_c * s_c


def test_word_index_is_exact_at_the_largest_vocabulary():
    task = fc.Task(n_c=2**61, s_c=2, L=1, Z=[[0], [1]])
    assert int(task.word_index(2**61 - 1, 1)) == 2**62 - 1
    with pytest.raises(fc.FCTheoryError, match=r"^alpha="):
        task.word_index(2**61, 0)


def test_latent_space_size_beyond_int64_is_an_exact_int_and_never_full():
    task = fc.Task.random(2**62, 1, 3, 4, seed=0)
    assert task.n_latent == 2**186 and not task.is_full
    assert task.Z.dtype == np.int64 and task.Z.min() >= 0 and int(task.Z.max()) < 2**62
