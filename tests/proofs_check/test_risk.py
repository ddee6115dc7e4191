"""proofs_check._risk: the checks' enumerated risk and its gradient against the tests' oracle
(tests/oracle/oracles.py) and against central finite differences."""

import numpy as np
import pytest

import fctheory as fc
from proofs_check import _risk as P
from tests.oracle import oracles as O


def _setup(seed=0):
    task = fc.Task.full(2, 2, 2, mu="zipf")
    rng = np.random.default_rng(seed)
    return task, rng.normal(size=(3, task.n_w)), rng.normal(size=(task.K, task.L * 3))


@pytest.mark.parametrize("layernorm", [False, True])
def test_risk_equals_the_tests_enumeration(layernorm):
    task, W, U = _setup()
    ref = O.my_risk(task.Z, task.s_c, task.mu, W, U, 0.05, layernorm=layernorm)
    assert P.risk(task, W, U, 0.05, layernorm=layernorm) == pytest.approx(ref["R"], rel=1e-13)


def test_risk_grad_matches_the_tests_oracle_gradient():
    task, W, U = _setup(1)
    f, gW, gU = P.risk_grad(task, W, U, 0.05)
    ref = O.my_risk(task.Z, task.s_c, task.mu, W, U, 0.05, grad=True)
    assert f == pytest.approx(ref["R"], rel=1e-13)
    np.testing.assert_allclose(gW, ref["grad_W"], rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(gU, ref["grad_U"], rtol=1e-10, atol=1e-13)


def test_U_hat_round_trips_and_matches_the_library_layout():
    U = np.arange(4 * 3 * 2, dtype=float).reshape(4, 6)
    assert np.array_equal(P.U_hat(U, 3), fc.U_hat(U, L=3))
    assert np.array_equal(P.U_from_hat(P.U_hat(U, 3), 3), U)


def test_enumerated_weights_are_the_sentence_probabilities():
    task = fc.Task.full(2, 3, 2, mu=np.array([0.5, 0.3, 0.2]))
    S = P.enumerate_sentences(task)
    assert len(S.weight) == task.K * task.s_c**task.L
    np.testing.assert_allclose(np.bincount(S.label, weights=S.weight), np.ones(task.K), rtol=1e-14)
