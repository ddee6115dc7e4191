"""fctheory.risk.empirical: the empirical risk of network h on training sentences, its gradient and minimiser."""

import numpy as np
import pytest

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


# ----------------------------------------------------------------------------- network h* (the trainer's objective)
def _trainer_objective(task, W, U, X, y, lam, lam_W, eps):
    """R̂* written here as the trainer's minibatch loss (torch.nn.LayerNorm's biased variance and eps)."""
    C = W - W.mean(axis=0)
    V = C / np.sqrt((C * C).mean(axis=0) + eps)
    Y = V.T[X].reshape(len(y), -1) @ U.T
    m = Y.max(axis=1)
    ce = np.log(np.exp(Y - m[:, None]).sum(axis=1)) + m - Y[np.arange(len(y)), y]
    return ce.mean() + lam_W / 2 * np.sum(W * W) + lam / 2 * np.sum(U * U)


def test_star_objective_is_the_trainers_and_its_gradient_matches_central_differences():
    task = fc.Task.random(3, 2, 3, 5, seed=1, mu="zipf")
    X, y = _data(task, 3)
    rng = np.random.default_rng(4)
    W, U = 0.3 * rng.standard_normal((4, task.n_w)), rng.standard_normal((task.K, task.L * 4))
    for lam_W, eps in ((0.02, 1e-5), (0.0, 0.0), (0.0, 0.3)):
        kw = dict(layernorm=True, eps=eps, lam_W=lam_W)
        R, dW, dU = fs.empirical_risk(task, W, U, X, y, LAM, **kw)
        assert abs(R - _trainer_objective(task, W, U, X, y, LAM, lam_W, eps)) <= 1e-13 * R
        g, x = _flat(dW, dU), _flat(W, U)
        for i in rng.choice(x.size, 12, replace=False):
            e = np.zeros_like(x)
            e[i] = 1e-6
            f = [fs.empirical_risk(task, *_split(x + s * e, W, U), X, y, LAM, grad=False, **kw)[0] for s in (1, -1)]
            assert abs((f[0] - f[1]) / 2e-6 - g[i]) < 1e-8


def _split(x, W, U):
    return x[: W.size].reshape(W.shape), x[W.size :].reshape(U.shape)


def test_minimize_empirical_risk_star_reaches_gtol_and_refuses_bad_options():
    task = fc.Task.random(3, 2, 3, 5, seed=1, mu="zipf")
    X, y = _data(task, 3)
    W, U, info = fs.minimize_empirical_risk(task, X, y, 3, LAM, seed=0, layernorm=True, lam_W=0.02)
    assert info["success"] and info["R"] == pytest.approx(_trainer_objective(task, W, U, X, y, LAM, 0.02, 1e-5))
    _, dW, dU = fs.empirical_risk(task, W, U, X, y, LAM, layernorm=True, eps=1e-5, lam_W=0.02)
    assert np.linalg.norm(_flat(dW, dU)) <= 1e-10
    with pytest.raises(fc.FCTheoryError, match="d=1"):
        fs.minimize_empirical_risk(task, X, y, 1, LAM, layernorm=True)
    with pytest.raises(fc.FCTheoryError, match="lam_W"):
        fs.minimize_empirical_risk(task, X, y, 2, LAM, lam_W=0.1)
    with pytest.raises(fc.FCTheoryError, match="eps"):
        fs.minimize_empirical_risk(task, X, y, 2, LAM, layernorm=True, eps=-1.0)
