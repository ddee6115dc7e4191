"""fctheory.risk.margins: expected scores and margins (Definition A, (53), (63)) against a plain enumeration
of every sentence of every class (tests/oracle/oracles.py), weighted by its probability."""

import numpy as np
import pytest

import fctheory as fc
from fctheory.risk import expected_margins
from tests.oracle import oracles as O


def _enumerated_scores(task, V, U):
    d = V.shape[0]
    ybar = np.zeros((task.K, task.K))
    for k in range(task.K):
        for x, p in O.sentences_of(task.Z[k], task.s_c, task.mu):
            ybar[k] += p * O.my_scores(V, U, x, task.K, task.L, d)
    return ybar


def _weights(task, d, seed):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(d, task.n_w)), rng.normal(size=(task.K, task.L * d))


@pytest.mark.parametrize("layernorm", [False, True])
def test_expected_scores_equal_enumeration(layernorm):
    task = fc.Task.random(3, 2, 3, 7, seed=2, mu="zipf")
    W, U = _weights(task, 4, 0)
    got = expected_margins(task, W, U, layernorm=layernorm)
    V = O.my_phi(W) if layernorm else W
    np.testing.assert_allclose(got.scores, _enumerated_scores(task, V, U), rtol=1e-12, atol=1e-12)


def test_margin_matrix_is_diagonal_minus_row_with_zero_diagonal():
    task = fc.Task.full(2, 2, 2)
    W, U = _weights(task, 3, 1)
    m = expected_margins(task, W, U)
    ref = _enumerated_scores(task, W, U)
    np.testing.assert_allclose(m.matrix, np.diag(ref)[:, None] - ref, rtol=1e-12, atol=1e-12)
    assert np.all(np.diag(m.matrix) == 0)


def test_by_distance_averages_the_margins_over_pairs_at_each_hamming_distance():
    task = fc.Task.full(2, 2, 3)
    W, U = _weights(task, 3, 3)
    m = expected_margins(task, W, U)
    H = np.array([[sum(a != b for a, b in zip(zk, zj)) for zj in task.Z] for zk in task.Z])
    for r in range(task.L + 1):
        assert m.pairs_at_distance[r] == np.sum(H == r)
        assert m.by_distance[r] == pytest.approx(m.matrix[H == r].mean(), rel=1e-12, abs=1e-15)


def test_alignment_is_the_trace_of_the_expected_scores():
    task = fc.Task.full(3, 2, 2)
    W, U = _weights(task, 3, 4)
    m = expected_margins(task, W, U)
    assert m.alignment == pytest.approx(float(np.trace(_enumerated_scores(task, W, U))), rel=1e-12)


def test_distance_without_pairs_is_nan():
    task = fc.Task(n_c=2, s_c=2, L=2, Z=np.array([[0, 0], [1, 1]]))  # the two rows differ in both positions
    W, U = _weights(task, 2, 5)
    m = expected_margins(task, W, U)
    assert m.pairs_at_distance[1] == 0 and np.isnan(m.by_distance[1])
