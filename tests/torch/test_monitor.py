"""NCMonitor: one-pass device statistics against a two-pass NumPy oracle, metrics against fctheory.metrics,
the hook path against explicit updates, the table, the Parquet file and the figure."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs torch: pip install 'fctheory[torch]'")

from fctheory import FCTheoryError, metrics, ufm  # noqa: E402
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


def test_metrics_equal_fctheory_metrics_on_the_same_features():
    H, y = _data(offset=3.0)
    fc = torch.nn.Linear(D, K).double()
    mon = NCMonitor(K, lam_W=1e-3, lam_H=1e-3, classifier=fc, progress=False)
    for _ in range(2):  # NC4 compares with the previous epoch's means: equal features give metrics.nc4
        with mon.epoch():
            _feed(mon, H, y)
    row = mon.rows[-1]
    W, b = fc.weight.detach().numpy(), fc.bias.detach().numpy()
    expected = {
        "nc1": metrics.nc1(H, y),
        "nc1_trace_ratio": metrics.nc1(H, y, variant="trace_ratio"),
        "cdnv": metrics.cdnv(H, y),
        "nc2": metrics.nc2(metrics.class_statistics(H, y).means),
        "nc3": metrics.nc3(W, H, y),
        "nc4": metrics.nc4(W, H, y, b=b),
    }
    for name, value in expected.items():
        assert row[name] == pytest.approx(value, rel=1e-10, abs=1e-14), name


def test_nc4_is_nan_in_the_first_epoch():
    H, y = _data()
    mon = NCMonitor(K, lam_W=1e-3, lam_H=1e-3, classifier=torch.nn.Linear(D, K).double(), progress=False)
    with mon.epoch():
        _feed(mon, H, y)
    assert math.isnan(mon.rows[0]["nc4"])


def test_hook_path_equals_explicit_update_path():
    H, y = _data(offset=1.0)
    torch.manual_seed(0)
    body, fc = torch.nn.Linear(D, D).double(), torch.nn.Linear(D, K).double()
    X = torch.as_tensor(H)
    hooked = NCMonitor(K, lam_W=1e-3, lam_H=1e-3, classifier=fc, progress=False).attach(body)
    explicit = NCMonitor(K, lam_W=1e-3, lam_H=1e-3, classifier=fc, progress=False)
    for _ in range(2):
        with torch.no_grad(), hooked.epoch(), explicit.epoch():
            for idx in torch.arange(len(y)).split(40):
                with hooked.batch(torch.as_tensor(y)[idx]):
                    body(X[idx])
                explicit.update(body(X[idx]), torch.as_tensor(y)[idx])
            body(X)  # outside a batch block: ignored by the hook
    for a, b in zip(hooked.rows, explicit.rows):
        for key in a:
            if key.endswith("seconds"):
                continue
            assert a[key] == pytest.approx(b[key], rel=1e-12, abs=0, nan_ok=True), key


def _optimum_network(K=4, n=6, d=5, lam_W=5e-3, lam_H=2e-3):
    opt = ufm.ce(K=K, n_spl=n, lam_W=lam_W, lam_H=lam_H)
    W = np.zeros((K, d))
    W[:, :K] = math.sqrt(opt.W_norm_sq / (K - 1)) * (np.eye(K) - 1.0 / K)
    y = np.repeat(np.arange(K), n)
    return W, opt.extras["h_over_w"] * W[y], y


def test_distances_vanish_at_the_ufm_optimum():
    W, H, y = _optimum_network()
    fc = torch.nn.Linear(5, 4, bias=False).double()
    with torch.no_grad():
        fc.weight.copy_(torch.as_tensor(W))
    mon = NCMonitor(4, lam_W=5e-3, lam_H=2e-3, classifier=fc, progress=False)
    with mon.epoch():
        mon.update(torch.as_tensor(H), torch.as_tensor(y))
    row = mon.rows[-1]
    assert row["dist_W_gram"] < 1e-13 and row["dist_means_gram"] < 1e-13
    assert row["W_norm_sq_ratio"] == pytest.approx(1.0, rel=1e-13)
    assert row["H_norm_sq_ratio"] == pytest.approx(1.0, rel=1e-13)
    assert row["ufm_applies"]


def test_table_columns_parquet_and_figure(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    pytest.importorskip("matplotlib")
    H, y = _data(offset=1.0)
    mon = NCMonitor(K, lam_W=1e-3, lam_H=1e-3, classifier=torch.nn.Linear(D, K).double(), progress=False)
    for e in range(3):
        with mon.epoch() as extra:
            _feed(mon, H + 0.1 * e, y)
            extra["loss"] = 1.0 / (e + 1)
    df = mon.table()
    assert len(df) == 3 and df["epoch"].tolist() == [0, 1, 2]
    for col in (
        "nc1",
        "nc1_trace_ratio",
        "cdnv",
        "nc2",
        "nc2_W",
        "nc3",
        "nc4",
        "mean_cos_means",
        "W_norm_sq",
        "ufm_W_norm_sq",
        "dist_W_gram",
        "dist_means_gram",
        "W_norm_sq_ratio",
        "H_norm_sq_ratio",
        "monitor_seconds",
        "loss",
    ):
        assert col in df.columns, col
    path = mon.save(str(tmp_path / "history.parquet"))
    back = pd.read_parquet(path)
    assert back["nc1"].tolist() == df["nc1"].tolist()
    fig = mon.plot(str(tmp_path / "history.png"))
    with open(fig, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "labels, match", [([0, 1, 2, 9], "labels"), ([[0, 1], [2, 3]], "labels"), ([0.0, 1.0, 2.0, 3.0], "labels")]
)
def test_bad_labels_are_refused_naming_labels(labels, match):
    mon = NCMonitor(K, lam_W=1e-3, lam_H=1e-3, progress=False)
    with pytest.raises(FCTheoryError, match=match):
        mon.update(torch.zeros(4, D), torch.as_tensor(labels))


def test_bad_features_and_constructor_arguments_are_refused():
    mon = NCMonitor(K, lam_W=1e-3, lam_H=1e-3, progress=False)
    mon.update(torch.zeros(2, D), torch.as_tensor([0, 1]))
    with pytest.raises(FCTheoryError, match="features"):
        mon.update(torch.zeros(2, D + 1), torch.as_tensor([0, 1]))
    with pytest.raises(FCTheoryError, match="lam_H"):
        NCMonitor(K, lam_W=1e-3, lam_H=-1.0)
    with pytest.raises(FCTheoryError, match="classifier"):
        NCMonitor(K, lam_W=1e-3, lam_H=1e-3, classifier=torch.nn.Linear(D, K + 1))


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


def test_the_epoch_after_a_refused_one_starts_afresh():
    """After the refusal the monitor holds no epoch: the next batches (without begin_epoch) start a new one,
    whose statistics are those of its own data alone."""
    H, y = _data()
    bad = H.copy()
    bad[57, 2] = float("nan")
    mon = NCMonitor(K, lam_W=1e-3, lam_H=1e-3, progress=False)
    _feed(mon, bad, y)
    with pytest.raises(FCTheoryError, match="features"):
        mon.end_epoch()
    _feed(mon, H, y)
    mon.end_epoch()
    means, sigma_W, _ = _two_pass(H, y)
    assert [row["epoch"] for row in mon.rows] == [0]
    assert mon.rows[0]["N"] == len(y)
    assert _rel(mon.statistics.means, means) < 1e-12
    assert _rel(mon.statistics.sigma_W, sigma_W) < 1e-12


def test_bad_labels_in_a_batch_block_are_refused_when_the_hooked_layer_runs():
    layer = torch.nn.Identity()
    mon = NCMonitor(K, lam_W=1e-3, lam_H=1e-3, progress=False).attach(layer)
    with pytest.raises(FCTheoryError, match=r"labels=.*must lie in \[0, K-1\]"):
        with mon.batch(torch.as_tensor([0, 1, K])):
            layer(torch.zeros(3, D))
    assert mon._pending is None  # the block was left: later outputs are not labelled


def test_epochs_under_inference_mode_alternate_with_normal_ones():
    """The per-batch buffers outlive an epoch: made under torch.inference_mode, they must still be writable
    by a later epoch outside it (and the statistics stay those of each epoch's data)."""
    H, y = _data()
    mon = NCMonitor(K, lam_W=1e-3, lam_H=1e-3, classifier=torch.nn.Linear(D, K).double(), progress=False)
    for inference in (True, False, True):
        with torch.inference_mode(inference):
            mon.begin_epoch()
            _feed(mon, H, y, sizes=(50,))  # the same batch sizes each epoch: their buffers are reused
        mon.end_epoch()
    _, sigma_W, _ = _two_pass(H, y)
    assert len(mon.rows) == 3 and not math.isnan(mon.rows[-1]["nc4"])
    assert _rel(mon.statistics.sigma_W, sigma_W) < 1e-12


def test_an_epoch_missing_a_class_is_refused():
    mon = NCMonitor(K, lam_W=1e-3, lam_H=1e-3, progress=False)
    mon.begin_epoch()
    mon.update(torch.randn(3, D), torch.as_tensor([0, 1, 2]))
    with pytest.raises(FCTheoryError, match="class 3"):
        mon.end_epoch()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_statistics_on_a_cuda_device_equal_two_pass_numpy():
    H, y = _data()
    mon = NCMonitor(K, lam_W=1e-3, lam_H=1e-3, progress=False)
    with mon.epoch():
        for idx in np.array_split(np.arange(len(y)), 4):
            mon.update(torch.as_tensor(H[idx], device="cuda"), torch.as_tensor(y[idx], device="cuda"))
    means, sigma_W, _ = _two_pass(H, y)
    assert _rel(mon.statistics.means, means) < 1e-12
    assert _rel(mon.statistics.sigma_W, sigma_W) < 1e-12


def test_progress_bar_shows_the_epochs(capsys):
    H, y = _data()
    mon = NCMonitor(K, lam_W=1e-3, lam_H=1e-3, total_epochs=2, progress=True)
    for _ in range(2):
        with mon.epoch():
            _feed(mon, H, y)
    mon.close()
    err = capsys.readouterr().err
    assert "NC monitor" in err and "2/2" in err


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


@pytest.mark.parametrize(
    "kind", ["float32", "float16", "strided", "wide"], ids=["float32", "float16", "strided", "d=300 (torch blocks)"]
)
def test_cpu_kernels_and_tensor_ops_give_the_same_rows(kind, monkeypatch):
    """Three epochs with a biased classifier (NC4 from the second epoch on): every entry of every row of the
    two CPU paths agrees to 1e-12 (NC4's counts exactly), whatever the features' dtype and layout."""
    d = 300 if kind == "wide" else D
    H, y = _data(seed=5, N=150)
    H = np.concatenate([H] * (d // D + 1), axis=1)[:, :d] + np.arange(d) * 1e-3
    X = torch.as_tensor(H, dtype=torch.float16 if kind == "float16" else torch.float32)
    if kind == "strided":
        X = torch.repeat_interleave(X, 2, dim=1)[:, ::2]
    fc = torch.nn.Linear(d, K)
    rows = {}
    for path in (True, False):
        monkeypatch.setattr(NCMonitor, "_cpu_kernels", path)
        mon = NCMonitor(K, lam_W=1e-3, lam_H=1e-3, classifier=fc, progress=False)
        for _ in range(3):
            with mon.epoch():
                for i in range(0, len(y), 40):
                    mon.update(X[i : i + 40], torch.as_tensor(y[i : i + 40]))
        rows[path] = mon.rows
    for a, b in zip(rows[True], rows[False]):
        assert a.keys() == b.keys()
        for key in a:
            if key in ("monitor_seconds", "epoch_seconds"):
                continue
            assert a[key] == pytest.approx(b[key], rel=1e-12, abs=1e-14, nan_ok=True), key
    assert math.isnan(rows[True][0]["nc4"]) and not math.isnan(rows[True][1]["nc4"])


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_a_half_precision_classifier_gives_the_rows_of_its_float32_copy(dtype):
    """The classifier's weights are read in float64 whatever their dtype: a bfloat16/float16 layer (its values
    exact in float32) gives every row of a float32 copy of it, NC4 counts included."""
    H, y = _data(seed=7, N=120)
    X, Y = torch.as_tensor(H, dtype=torch.float32), torch.as_tensor(y)
    half = torch.nn.Linear(D, K).to(dtype)
    full = torch.nn.Linear(D, K)
    with torch.no_grad():
        full.weight.copy_(half.weight.float())
        full.bias.copy_(half.bias.float())
    rows = []
    for clf in (half, full):
        mon = NCMonitor(K, lam_W=1e-3, lam_H=1e-3, classifier=clf, progress=False)
        for _ in range(2):
            with mon.epoch():
                mon.update(X, Y)
        rows.append(mon.rows[-1])
    for key in rows[1]:
        if key not in ("monitor_seconds", "epoch_seconds"):
            assert rows[0][key] == pytest.approx(rows[1][key], rel=1e-12, abs=1e-15, nan_ok=True), key


def test_features_of_another_width_in_the_next_epoch_start_afresh():
    """Epoch 1 with d = 6, epoch 2 with d = 4: the second row is a fresh monitor's first (no moments or
    reference means carried over from the wider epoch)."""
    H, y = _data(seed=8, N=90)
    X, Y = torch.as_tensor(H, dtype=torch.float32), torch.as_tensor(y)
    mon = NCMonitor(K, lam_W=1e-3, lam_H=1e-3, progress=False)
    for width in (6, 4):
        with mon.epoch():
            mon.update(X[:, :width], Y)
    fresh = NCMonitor(K, lam_W=1e-3, lam_H=1e-3, progress=False)
    with fresh.epoch():
        fresh.update(X[:, :4], Y)
    for key in ("nc1", "cdnv", "nc2", "H_norm_sq_per_sample", "dist_means_gram"):
        assert mon.rows[1][key] == pytest.approx(fresh.rows[0][key], rel=1e-12), key


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


@pytest.mark.parametrize("bias", [True, False])
def test_the_ufm_entries_of_a_row_are_ufm_distances_of_the_epoch(bias):
    """The row's UFM columns are exactly ufm_distances' keys and values for the epoch's statistics, and
    h_over_w is √(‖H‖²/N) / √(‖W‖²/K) of the features themselves."""
    from fctheory.nc_diagnosis import applicable_result, ufm_distances

    H, y = _data(seed=10)
    fc = torch.nn.Linear(D, K, bias=bias).double()
    mon = NCMonitor(K, lam_W=1e-3, lam_H=1e-3, classifier=fc, progress=False)
    with mon.epoch():
        _feed(mon, H, y)
    row, st = mon.rows[-1], mon.statistics
    W = fc.weight.detach().numpy()
    b = fc.bias.detach().numpy() if bias else None
    app = applicable_result(loss="ce", K=K, d=D, counts=st.counts, lam_W=1e-3, lam_H=1e-3, lam_b=0.0, bias=bias)
    expected = ufm_distances(st, W, b, app.optimum, n_spl=app.n_spl)
    for key, value in expected.items():
        assert row[key] == pytest.approx(value, rel=1e-12, abs=1e-15), key
    h_over_w = math.sqrt(np.sum(H * H) / len(y)) / math.sqrt(np.sum(W * W) / K)
    assert row["h_over_w"] == pytest.approx(h_over_w, rel=1e-12)


def test_rows_without_a_classifier_have_no_classifier_columns():
    H, y = _data(seed=11)
    mon = NCMonitor(K, lam_W=1e-3, lam_H=1e-3, progress=False)
    with mon.epoch():
        _feed(mon, H, y)
    summary = metrics.nc_summary(mon.statistics)
    row = mon.rows[-1]
    assert not {"nc2_W", "equinorm_W", "mean_cos_W", "W_norm_sq", "nc3", "nc4", "dist_W_gram", "h_over_w"} & set(row)
    for key, value in summary.items():
        assert row[key] == pytest.approx(value, rel=1e-12, abs=2e-14, nan_ok=True), key


def test_a_classifier_of_another_width_is_refused_naming_W():
    H, y = _data(seed=12)
    mon = NCMonitor(K, lam_W=1e-3, lam_H=1e-3, classifier=torch.nn.Linear(D + 1, K), progress=False)
    mon.begin_epoch()
    _feed(mon, H, y)
    with pytest.raises(FCTheoryError, match=r"^W="):
        mon.end_epoch()


def test_labels_out_of_range_are_refused_with_their_range_and_the_constraint():
    mon = NCMonitor(K, lam_W=1e-3, lam_H=1e-3, progress=False)
    with pytest.raises(FCTheoryError) as err:
        mon.update(torch.zeros(4, D), torch.as_tensor([0, -1, 2, 9]))
    assert str(err.value) == f"labels='values -1..9' is invalid: must lie in [0, K-1] = [0, {K - 1}]"


def test_non_finite_features_are_refused_with_the_whole_message():
    H, y = _data()
    H[57, 2] = math.inf
    mon = NCMonitor(K, lam_W=1e-3, lam_H=1e-3, progress=False)
    mon.begin_epoch()
    _feed(mon, H, y)
    with pytest.raises(FCTheoryError) as err:
        mon.end_epoch()
    assert str(err.value).startswith("features='a batch of this epoch with non-finite entries (or entries whose")
    assert str(err.value).endswith(" is invalid: must be finite; the epoch's moments are dropped")


def test_an_exception_inside_an_epoch_block_propagates_and_records_nothing():
    H, y = _data()
    mon = NCMonitor(K, lam_W=1e-3, lam_H=1e-3, progress=False)
    with pytest.raises(KeyError, match="from the training loop"), mon.epoch():
        _feed(mon, H, y)
        raise KeyError("from the training loop")
    assert mon.rows == []
    with mon.epoch():  # the next epoch starts afresh
        _feed(mon, H, y)
    assert len(mon.rows) == 1 and mon.rows[0]["N"] == len(y)
