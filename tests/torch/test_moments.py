"""The monitor's one-pass moments (fctheory/torch/_moments.py): the epoch's statistics against a two-pass NumPy
oracle whatever the shifts, dtypes and widths, non-finite features refused when the epoch ends, NC4's nearest-mean
reference without the classes absent from the previous epoch."""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs torch: pip install 'fctheory[torch]'")

from fctheory import FCTheoryError, metrics  # noqa: E402
from fctheory.torch import NCMonitor  # noqa: E402

from monitor_cases import D, K, _data, _feed, _rel, _two_pass, cpu_path  # noqa: E402, F401


@pytest.mark.parametrize("epochs", [1, 2])
def test_streaming_statistics_equal_two_pass_numpy(epochs):
    """Epoch 1 shifts each class by its first sample, epoch 2 by the previous epoch's mean: both
    reproduce the two-pass means, Σ_W and class variances to 1e-12 despite the 1e3 offset."""
    H, y = _data()
    mon = NCMonitor(K, lam_W=1e-3, lam_H=1e-3, progress=False)
    for _ in range(epochs):
        with mon.epoch():
            _feed(mon, H, y)
    means, sigma_W, var = _two_pass(H, y)
    st = mon.statistics
    assert _rel(st.means, means) < 1e-12
    assert _rel(st.sigma_W, sigma_W) < 1e-12
    assert _rel(st.class_var, var) < 1e-12
    assert st.counts.tolist() == np.bincount(y, minlength=K).tolist()


def test_float32_features_accumulate_in_float64():
    """float32 batches: the statistics are those of the float32 values in float64 arithmetic."""
    H, y = _data(offset=10.0)
    H32 = H.astype(np.float32)
    mon = NCMonitor(K, lam_W=1e-3, lam_H=1e-3, progress=False)
    with mon.epoch():
        _feed(mon, H32, y)
    _, sigma_W, _ = _two_pass(H32.astype(np.float64), y)
    assert mon.statistics.sigma_W.dtype == np.float64
    assert _rel(mon.statistics.sigma_W, sigma_W) < 1e-12


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), 1e200])
def test_non_finite_features_are_refused_when_the_epoch_ends(bad):
    """A batch with a NaN, an infinity or an entry whose square overflows float64 (1e200) is accepted by
    update() (no host synchronisation per batch) and the epoch is refused when it ends, naming features."""
    H, y = _data()
    H[57, 2] = bad  # not the first sample of its class (the first epoch's shift)
    mon = NCMonitor(K, lam_W=1e-3, lam_H=1e-3, progress=False)
    mon.begin_epoch()
    _feed(mon, H, y)
    with pytest.raises(FCTheoryError, match="features=.*non-finite.*must be finite; the epoch's moments are dropped"):
        mon.end_epoch()
    assert mon.rows == []


def test_nc4_never_takes_a_class_absent_from_the_previous_epoch_as_the_nearest_mean():
    """Epoch 1 without class 3, epoch 2 with it: the nearest-mean decision of epoch 2 is over the classes of epoch 1
    (brute force), the classifier's over all K."""
    H, y = _data(seed=4, offset=0.0)
    fc = torch.nn.Linear(D, K).double()
    mon = NCMonitor(K, lam_W=1e-3, lam_H=1e-3, classifier=fc, progress=False)
    first = y != 3
    with mon.epoch():
        _feed(mon, H[first], y[first])
    with mon.epoch():
        _feed(mon, H, y)
    mu = np.stack([H[first][y[first] == k].mean(axis=0) for k in range(3)])
    ncc = np.argmin(((H[:, None, :] - mu[None]) ** 2).sum(-1), axis=1)
    pred = (H @ fc.weight.detach().numpy().T + fc.bias.detach().numpy()).argmax(axis=1)
    assert mon.rows[1]["nc4"] == pytest.approx(np.mean(pred != ncc), abs=1e-15)
    assert np.any(pred == 3)  # the classifier does decide for class 3 somewhere


def test_wide_features_use_the_blocked_scatter_and_equal_two_pass_numpy():
    """d = 300 (≥ 256: the scatter is accumulated by row blocks of 128, the last one 44 wide) gives the
    two-pass Σ_W, exactly symmetric."""
    rng = np.random.default_rng(3)
    d, N = 300, 411
    y = rng.integers(0, K, N)
    y[:K] = np.arange(K)
    H = 10.0 + 3.0 * rng.standard_normal((K, d))[y] + rng.standard_normal((N, d))
    mon = NCMonitor(K, lam_W=1e-3, lam_H=1e-3, progress=False)
    for _ in range(2):
        with mon.epoch():
            for idx in np.array_split(np.arange(N), 3):
                mon.update(torch.as_tensor(H[idx]), torch.as_tensor(y[idx]))
    means = np.stack([H[y == k].mean(axis=0) for k in range(K)])
    Dev = H - means[y]
    st = mon.statistics
    assert _rel(st.sigma_W, Dev.T @ Dev / N) < 1e-12
    assert np.array_equal(st.sigma_W, st.sigma_W.T)


def test_the_epochs_statistics_are_the_two_pass_class_statistics():
    """monitor.statistics after an epoch: every field of metrics.class_statistics of the same features
    (means, global mean, int64 counts, Σ_W, Σ_B, class variances) to 1e-12."""
    H, y = _data(seed=9, offset=2.0)
    mon = NCMonitor(K, lam_W=1e-3, lam_H=1e-3, progress=False)
    for _ in range(2):
        with mon.epoch():
            _feed(mon, H, y)
    st, ref = mon.statistics, metrics.class_statistics(H, y)
    assert st.counts.dtype == np.int64 and np.array_equal(st.counts, ref.counts)
    for field in ("means", "global_mean", "sigma_W", "sigma_B", "class_var"):
        assert _rel(np.asarray(getattr(st, field)), np.asarray(getattr(ref, field))) < 1e-12, field
