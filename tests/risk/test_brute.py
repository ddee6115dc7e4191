"""fctheory.risk._brute: the brute-force reference (class_sentences, true_risk_bruteforce) against the
itertools enumeration of tests/oracle/oracles.py."""

import numpy as np
import pytest

import fctheory as fc
from fctheory.risk import class_sentences, true_risk_bruteforce
from tests.oracle import oracles as O


def test_class_sentences_are_every_sentence_with_its_probability():
    task = fc.Task.random(3, 3, 2, 5, seed=1, mu="zipf")
    for k in range(task.K):
        X, p = class_sentences(task, k)
        ref = dict((tuple(x), q) for x, q in O.sentences_of(task.Z[k], task.s_c, task.mu))
        assert len(X) == len(ref) == task.s_c**task.L
        for x, q in zip(X, p):
            assert q == pytest.approx(ref[tuple(int(w) for w in x)], rel=1e-15)
        assert p.sum() == pytest.approx(1.0, rel=1e-14)


@pytest.mark.parametrize("layernorm", [False, True])
def test_bruteforce_risk_and_gradient_equal_the_independent_enumeration(layernorm):
    task = fc.Task.full(2, 2, 2, mu="zipf")
    rng = np.random.default_rng(3)
    W, U = rng.normal(size=(3, task.n_w)), rng.normal(size=(task.K, task.L * 3))
    got = true_risk_bruteforce(task, W, U, 0.05, layernorm=layernorm, grad=True)
    ref = O.my_risk(task.Z, task.s_c, task.mu, W, U, 0.05, layernorm=layernorm, grad=True)
    assert got.R == pytest.approx(ref["R"], rel=1e-13) and got.R0 == pytest.approx(ref["R0"], rel=1e-13)
    np.testing.assert_allclose(got.grad_W, ref["grad_W"], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got.grad_U, ref["grad_U"], rtol=1e-9, atol=1e-12)


def test_bruteforce_refuses_more_pairs_than_max_pairs():
    task = fc.Task.full(2, 2, 3)
    W, U = np.ones((2, task.n_w)), np.ones((task.K, task.L * 2))
    with pytest.raises(fc.FCTheoryError, match="max_pairs"):
        true_risk_bruteforce(task, W, U, max_pairs=task.K * task.s_c**task.L * task.K - 1)
