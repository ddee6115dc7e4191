"""fctheory.risk.empirical: the empirical risk of network h on training sentences, its gradient and minimiser."""

import numpy as np

import fctheory as fc
from fctheory.risk import empirical as fs

LAM = 0.01


def _data(task, n_spl, seed=0):
    return task.sample(n_spl, seed=np.random.default_rng(seed))


def _flat(W, U):
    return np.concatenate([W.ravel(), U.ravel()])


def test_empirical_risk_gradient_matches_central_differences():
    task = fc.Task.random(3, 2, 3, 5, seed=1)
    X, y = _data(task, 3)
    rng = np.random.default_rng(2)
    W, U = rng.standard_normal((4, task.n_w)), rng.standard_normal((task.K, task.L * 4))
    _, dW, dU = fs.empirical_risk_grad(task, W, U, X, y, LAM)
    g = _flat(dW, dU)
    x = _flat(W, U)
    nW = W.size
    for i in rng.choice(x.size, 12, replace=False):
        e = np.zeros_like(x)
        e[i] = 1e-6
        f = [
            fs.empirical_risk_grad(
                task, (x + s * e)[:nW].reshape(W.shape), (x + s * e)[nW:].reshape(U.shape), X, y, LAM
            )[0]
            for s in (1, -1)
        ]
        assert abs((f[0] - f[1]) / 2e-6 - g[i]) < 1e-8


def test_empirical_risk_with_every_sentence_weighted_by_D_is_the_true_risk():
    # independent oracle: the exact-risk engine; every sentence of a class listed with multiplicity ∝ D
    task = fc.Task.full(2, 2, 2)  # uniform: all s_c^L sentences equally likely
    from fctheory.risk import class_sentences

    Xs, ys = [], []
    for k in range(task.K):
        S = class_sentences(task, k)[0]
        Xs.append(S)
        ys.append(np.full(len(S), k))
    X, y = np.concatenate(Xs), np.concatenate(ys)
    rng = np.random.default_rng(0)
    W, U = rng.standard_normal((3, task.n_w)), rng.standard_normal((task.K, task.L * 3))
    R = fs.empirical_risk_grad(task, W, U, X, y, LAM)[0]
    assert abs(R - fc.true_risk(task, W, U, LAM)) < 1e-12 * R


def test_minimize_empirical_risk_reaches_gtol():
    task = fc.Task.full(3, 2, 2)
    X, y = _data(task, 4)
    W, U, info = fs.minimize_empirical_risk(task, X, y, 6, LAM, seed=0)
    assert info["success"] and info["grad_norm"] <= 1e-10
    _, dW, dU = fs.empirical_risk_grad(task, W, U, X, y, LAM)
    assert np.linalg.norm(_flat(dW, dU)) <= 1e-10
