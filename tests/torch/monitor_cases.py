"""What the monitor's test files share: the sizes, the unbalanced features with a large common offset, the two-pass
NumPy oracle, the batching, and the fixture that runs every test on both CPU paths (compiled kernels, tensor
operations)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs torch: pip install 'fctheory[torch]'")

from fctheory.torch import NCMonitor  # noqa: E402

K, D = 4, 6


@pytest.fixture(autouse=True, params=["cpu-kernels", "tensor-ops"])
def cpu_path(request, monkeypatch):
    """Every test runs CPU features through the compiled kernels (the default) and through the tensor
    operations of the GPU path, which a CPU-only machine checks this way."""
    monkeypatch.setattr(NCMonitor, "_cpu_kernels", request.param == "cpu-kernels")
    return request.param


def _data(seed=0, N=203, offset=1e3):
    """Unbalanced labels, class means with a large common offset (cancellation-prone moments)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, N)
    y[:K] = np.arange(K)
    H = offset + 5.0 * rng.standard_normal((K, D))[y] + rng.standard_normal((N, D))
    return H, y


def _two_pass(H, y):
    """Independent oracle: class means first, then the deviations (plain NumPy loops)."""
    means = np.stack([H[y == k].mean(axis=0) for k in range(K)])
    Dev = H - means[y]
    sigma_W = Dev.T @ Dev / len(y)
    var = np.array([np.sum(Dev[y == k] ** 2) / np.sum(y == k) for k in range(K)])
    return means, sigma_W, var


def _feed(mon, H, y, sizes=(17, 64, 1, 50)):
    i, j = 0, 0
    while i < len(y):
        b = sizes[j % len(sizes)]
        mon.update(torch.as_tensor(H[i : i + b]), torch.as_tensor(y[i : i + b]))
        i, j = i + b, j + 1


def _rel(a, b):
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))
