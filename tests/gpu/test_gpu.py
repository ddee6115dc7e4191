"""CuPy paths against their host twins: run on a machine with a GPU.

Each test is marked ``gpu`` and skips where CuPy or a CUDA device is missing, so the default run on a
CPU machine reports them as skipped. The figures of the last run on a lent H100 are in docs/testing.md.
"""

import numpy as np
import pytest

import fctheory as fc

cp = pytest.importorskip("cupy")
try:
    cp.cuda.runtime.getDeviceCount()
except Exception:  # pragma: no cover - no device
    pytest.skip("no CUDA device", allow_module_level=True)

pytestmark = pytest.mark.gpu


def _weights(task, d, scale=1.0, seed=0):
    rng = np.random.default_rng(seed)
    return scale * rng.standard_normal((d, task.n_w)), scale * rng.standard_normal((task.K, task.L * d))


@pytest.mark.parametrize("layernorm", [False, True])
@pytest.mark.parametrize("scale", [1.0, 40.0])  # 40: huge margins, the log-space fallback runs
def test_cupy_risk_and_gradient_equal_numpy(layernorm, scale):
    task = fc.Task.random(3, 3, 4, 20, seed=1, mu="zipf")
    W, U = _weights(task, 3, scale)
    host = fc.evaluate_risk(task, W, U, 0.01, layernorm=layernorm, grad=True, eps=1e-5 if layernorm else 0.0)
    dev = fc.evaluate_risk(
        task,
        cp.asarray(W),
        cp.asarray(U),
        0.01,
        layernorm=layernorm,
        grad=True,
        eps=1e-5 if layernorm else 0.0,
        backend="cupy",
    )
    assert abs(dev.R - host.R) <= 1e-12 * abs(host.R)
    for g_dev, g_host in ((dev.grad_W, host.grad_W), (dev.grad_U, host.grad_U)):
        g_dev = cp.asnumpy(g_dev) if hasattr(g_dev, "get") else np.asarray(g_dev)
        assert np.max(np.abs(g_dev - g_host)) <= 1e-12 * max(1.0, np.max(np.abs(g_host)))


def test_cupy_risk_on_ties_equals_log_K():
    # all scores equal: every softmax is uniform and the cross-entropy is exactly log K
    task = fc.Task.full(2, 2, 3)
    W, U = np.zeros((2, task.n_w)), np.zeros((task.K, task.L * 2))
    r = fc.evaluate_risk(task, cp.asarray(W), cp.asarray(U), 0.0, backend="cupy")
    assert abs(r.R0 - np.log(task.K)) <= 1e-15 * np.log(task.K)


@pytest.mark.parametrize("layernorm", [False, True])
def test_cupy_batched_training_equals_sequential_twins(layernorm):
    task = fc.Task.full(3, 2, 2)
    kw = dict(n_spl=4, d=5, batch=6, epochs=4, layernorm=layernorm, dtype="float64", measure=False)
    seeds, lrs, lams = [0, 1, 2], [0.1, 0.2, 0.05], [1e-3, 0.0, 1e-2]
    runs = fc.train_batched(task, seed=seeds, lr=lrs, lam_W=lams, lam_U=lams, backend="cupy", **kw)
    for run, s, lr, lam in zip(runs, seeds, lrs, lams):
        twin = fc.train(task, seed=s, lr=lr, lam_W=lam, lam_U=lam, backend="numpy", **kw)
        for a, b in ((run.W, twin.W), (run.U, twin.U)):
            assert np.max(np.abs(np.asarray(a) - b)) <= 1e-12 * max(1.0, np.max(np.abs(b)))


def test_cupy_metrics_equal_numpy_and_are_scale_invariant():
    rng = np.random.default_rng(3)
    K, d = 4, 6
    y = np.repeat(np.arange(K), 5)
    H = rng.standard_normal((K * 5, d)) + 3 * rng.standard_normal((K, d))[y]
    W = rng.standard_normal((K, d))
    for s in (1.0, 1e300, 1e-300):
        Hd = cp.asarray(H * s)
        assert abs(fc.metrics.nc1(Hd, cp.asarray(y)) - fc.metrics.nc1(H, y)) <= 1e-12 * fc.metrics.nc1(H, y)
        assert abs(fc.metrics.nc3(cp.asarray(W), Hd, cp.asarray(y)) - fc.metrics.nc3(W, H, y)) <= 1e-12


def test_cupy_phi_and_scores_equal_numpy():
    task = fc.Task.full(3, 2, 2)
    W, U = _weights(task, 4)
    X, _ = task.sample(n_spl=3, seed=0)
    for ln in (False, True):
        host = fc.scores(W, U, X, layernorm=ln)
        dev = fc.scores(cp.asarray(W), cp.asarray(U), cp.asarray(X), layernorm=ln)
        assert np.max(np.abs(cp.asnumpy(dev) - host)) <= 1e-13 * max(1.0, np.max(np.abs(host)))
