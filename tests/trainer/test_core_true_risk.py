"""Empirical risk of the trainer over the whole enumerated support, weighted by D, is the true risk.

Tiny tasks with μ = (3/4, 1/4): every sentence x of class k is put in the training set
Π_ℓ 4μ_{β_ℓ} times (an integer), so the plain sample mean the trainer computes equals
(1/K) Σ_k Σ_x D_{z_k}(x) CE(h(x), k), the unregularised true risk of (5) / (10); a full-batch SGD
step with lr = 1 then moves the weights by exactly the gradient of R (Lemma S). Compared with our
own enumeration and with the exact-risk engine ``fctheory.risk`` (tolerance 1e-11 relative).
"""

import itertools

import numpy as np
import pytest

from fctheory import Task
from fctheory.network import scores
from fctheory.trainer._engines import ENGINES
from fctheory.trainer.core import TrainConfig, TrainData

MU = np.array([0.75, 0.25])


def _support_dataset(task):
    """All sentences of every class, each repeated Π 4μ_β times (so the sample mean is the D-average)."""
    X, y = [], []
    for k in range(task.K):
        for betas in itertools.product(range(task.s_c), repeat=task.L):
            reps = int(round(np.prod([4 * task.mu[b] for b in betas])))
            x = task.Z[k] * task.s_c + np.array(betas)
            X += [x] * reps
            y += [k] * reps
    return np.array(X, dtype=np.int64), np.array(y, dtype=np.int64)


def _own_true_risk(task, W, U, layernorm, eps):
    """(1/K) Σ_k Σ_x D_{z_k}(x) CE(h(x), k) by direct enumeration with weights."""
    total = 0.0
    for k in range(task.K):
        for betas in itertools.product(range(task.s_c), repeat=task.L):
            p = np.prod(task.mu[list(betas)])
            x = (task.Z[k] * task.s_c + np.array(betas))[None]
            s = scores(W, U, x, layernorm=layernorm, eps=eps)[0]
            m = s.max()
            total += p * (m + np.log(np.exp(s - m).sum()) - s[k])
    return total / task.K


def _engine(task, backend, X, y, E, U, layernorm, eps, lam_W, lam_U):
    cfg = TrainConfig(
        n_spl=1,
        d=E.shape[1],
        layernorm=layernorm,
        eps=eps,
        lr=1.0,
        batch=X.shape[0],
        epochs=1,
        lam_W=lam_W,
        lam_U=lam_U,
        backend=backend,
        dtype="float64",
    )
    data = TrainData(X, y, X[:0], y[:0])
    return ENGINES[backend](E, U, data, cfg)


CASES = [
    (2, 2, 2, [[0, 0], [0, 1], [1, 1]], 3, False, 0.0),
    (2, 2, 2, [[0, 0], [1, 0], [0, 1], [1, 1]], 3, True, 0.0),
    (3, 2, 2, [[0, 1], [2, 0], [1, 1], [2, 2]], 4, True, 1e-5),
    (2, 2, 3, [[0, 0, 1], [1, 0, 1], [1, 1, 0]], 2, False, 0.0),
]


@pytest.mark.parametrize("n_c,s_c,L,Z,d,layernorm,eps", CASES)
def test_enumerated_empirical_risk_equals_true_risk_eq5_eq10(host_backend, n_c, s_c, L, Z, d, layernorm, eps):
    task = Task(n_c, s_c, L, np.array(Z), MU)
    X, y = _support_dataset(task)
    rng = np.random.default_rng(7)
    W = rng.standard_normal((d, task.n_w))
    U = rng.standard_normal((task.K, L * d)) * 0.7
    eng = _engine(task, host_backend, X, y, W.T.copy(), U.copy(), layernorm, eps, 0.0, 0.0)
    loss_sum, _ = eng.evaluate("train")
    R0 = _own_true_risk(task, W, U, layernorm, eps)
    assert loss_sum / X.shape[0] == pytest.approx(R0, rel=1e-12)
    risk = pytest.importorskip("fctheory.risk")
    assert loss_sum / X.shape[0] == pytest.approx(
        risk.unregularized_risk(task, W, U, layernorm=layernorm, eps=eps), rel=1e-11
    )


@pytest.mark.parametrize("n_c,s_c,L,Z,d,layernorm,eps", CASES)
def test_full_batch_step_is_true_risk_gradient_lemma_S(host_backend, n_c, s_c, L, Z, d, layernorm, eps):
    risk = pytest.importorskip("fctheory.risk")
    lam = 0.05
    task = Task(n_c, s_c, L, np.array(Z), MU)
    X, y = _support_dataset(task)
    rng = np.random.default_rng(11)
    W = rng.standard_normal((d, task.n_w))
    U = rng.standard_normal((task.K, L * d)) * 0.7
    lam_W = 0.0 if layernorm else lam  # (10) penalises U only
    eng = _engine(task, host_backend, X, y, W.T.copy(), U.copy(), layernorm, eps, lam_W, lam)
    eng.epoch(np.arange(X.shape[0]))  # one full-batch step, lr = 1
    E1, U1 = eng.weights()
    gW = W - E1.T
    gU = U - U1
    R, dW, dU = risk.true_risk_grad(task, W, U, lam, layernorm=layernorm, eps=eps)
    np.testing.assert_allclose(gW, dW, rtol=0, atol=1e-11 * np.abs(dW).max())
    np.testing.assert_allclose(gU, dU, rtol=0, atol=1e-11 * np.abs(dU).max())
