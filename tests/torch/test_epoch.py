"""The numbers of a monitor epoch (fctheory/torch/_epoch.py): with absent classes on each epoch-end path (compiled
kernel, public functions, tiles), the UFM comparison of a row, rows without a classifier, the per-class values
and the UFM optimum's per-class norms beside them."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs torch: pip install 'fctheory[torch]'")

from fctheory import metrics  # noqa: E402
from fctheory.torch import NCMonitor  # noqa: E402

from monitor_cases import D, K, _data, _feed, _rel, _two_pass, cpu_path  # noqa: E402, F401


@pytest.mark.parametrize(
    ("K_all", "n_present", "path"),
    [(10, 4, "kernel"), (100, 40, "reference"), (100, 40, "tiles")],  # 60% absent on each of the epoch-end paths
)
def test_an_epoch_with_60_percent_of_the_classes_absent_is_that_of_the_present_ones(
    K_all, n_present, path, monkeypatch
):
    """Every number of a row (two epochs: the second's NC4 against a reference with absent classes) equals that of a
    monitor of the present classes alone (labels renumbered, the classifier's rows of the present classes), and is
    finite; the row says how many classes are present; the per-class tables agree under the original labels."""
    from fctheory.metrics import pairs

    if path == "tiles":
        monkeypatch.setattr(pairs, "LARGE_K", 16)
    rng = np.random.default_rng(K_all)
    present = np.sort(rng.choice(K_all, n_present, replace=False))
    y = np.concatenate([present, rng.choice(present, 8 * n_present)])
    H = 2.0 + 4.0 * rng.standard_normal((K_all, D))[y] + rng.standard_normal((y.size, D))
    clf, ref_clf = torch.nn.Linear(D, K_all).double(), torch.nn.Linear(D, n_present).double()
    with torch.no_grad():
        clf.bias[np.setdiff1d(np.arange(K_all), present)] = -1e6  # absent classes never predicted
        ref_clf.weight.copy_(clf.weight[present])
        ref_clf.bias.copy_(clf.bias[present])
    mon = NCMonitor(K_all, lam_W=1e-3, lam_H=1e-3, classifier=clf, progress=False)
    ref = NCMonitor(n_present, lam_W=1e-3, lam_H=1e-3, classifier=ref_clf, progress=False)
    for _ in range(2):
        for m, labels in ((mon, y), (ref, np.searchsorted(present, y))):
            with m.epoch():
                _feed(m, H, labels)
    for e, (row, rrow) in enumerate(zip(mon.rows, ref.rows)):
        assert row["K_present"] == n_present and rrow["K_present"] == n_present
        assert set(row) == set(rrow)
        for key, v in rrow.items():
            if key.endswith("seconds"):
                continue
            if e == 0 and key == "nc4":
                assert math.isnan(row[key]) and math.isnan(v)
                continue
            assert math.isfinite(row[key]), key
            assert row[key] == pytest.approx(v, rel=1e-11, abs=1e-14), key
    assert mon.statistics.classes.tolist() == present.tolist() and mon.statistics.num_classes == K_all
    got, want = mon.class_table(), ref.class_table()
    assert got["class"].tolist() == present[want["class"].to_numpy()].tolist()
    for col in want.columns.drop("class"):
        np.testing.assert_allclose(got[col].to_numpy(float), want[col].to_numpy(float), rtol=1e-11, err_msg=col)


def test_an_epoch_with_fewer_than_two_classes_present_is_recorded_without_metrics():
    mon = NCMonitor(K, lam_W=1e-3, lam_H=1e-3, progress=False)
    with mon.epoch():
        mon.update(torch.randn(3, D), torch.as_tensor([2, 2, 2]))
    assert {k: mon.rows[0][k] for k in ("epoch", "N", "K_present")} == {"epoch": 0, "N": 3, "K_present": 1}
    assert "nc1" not in mon.rows[0] and mon.statistics is None
    H, y = _data(seed=3)
    with mon.epoch():  # the next epoch starts afresh (no reference means yet)
        _feed(mon, H, y)
    assert mon.rows[1]["K_present"] == K and math.isfinite(mon.rows[1]["nc1"])


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


def test_the_class_table_is_per_class_of_each_epoch_with_the_optimums_norms_beside_it():
    H, y = _data(seed=12, offset=3.0)
    fc = torch.nn.Linear(D, K, bias=False).double()
    mon = NCMonitor(K, lam_W=1e-3, lam_H=1e-3, classifier=fc, progress=False)
    for _ in range(2):
        with mon.epoch():
            _feed(mon, H, y)
    df = mon.class_table()
    assert df["epoch"].tolist() == [0] * K + [1] * K
    last = df[df["epoch"] == 1]
    pc = metrics.per_class(mon.statistics, fc.weight.detach().numpy())
    for col in ("count", "frequency", "var", "var_rel", "cdnv", "mean_norm", "centred_norm", "w_norm", "w_cos"):
        ref = pc.counts if col == "count" else getattr(pc, col)
        np.testing.assert_allclose(last[col].to_numpy(float), ref, rtol=1e-12, err_msg=col)
    opt = mon.applicability.optimum
    np.testing.assert_allclose(last["ufm_w_norm"], np.sqrt(np.diag(np.asarray(opt.W_gram))), rtol=1e-14)
    np.testing.assert_allclose(last["ufm_mean_norm"], np.sqrt(np.diag(np.asarray(opt.means_gram))), rtol=1e-14)
    assert NCMonitor(K, lam_W=1e-3, lam_H=1e-3, per_class=False, progress=False).class_table().empty


def test_the_ufm_reference_is_the_optimum_of_the_present_classes_solved_once_per_counts():
    from fctheory.nc_diagnosis import applicable_result
    from fctheory.torch._epoch import UFMReference

    ref = UFMReference(loss="ce", K=6, lam_W=1e-3, lam_H=1e-3, lam_b=0.0, bias=False)
    counts = np.array([5, 0, 5, 5, 0, 5])
    cmp = ref.compare(4, counts)
    want = applicable_result(loss="ce", K=4, d=4, counts=np.full(4, 5), lam_W=1e-3, lam_H=1e-3, lam_b=0.0, bias=False)
    assert cmp.rows.tolist() == [0, 2, 3, 5] and cmp.app.n_spl == 5 and cmp.app.applies == want.applies
    np.testing.assert_allclose(np.asarray(cmp.app.optimum.W_gram), np.asarray(want.optimum.W_gram), rtol=1e-15)
    assert ref.compare(4, counts.copy()) is cmp  # the same counts: not solved again
    assert ref.compare(4, np.array([5, 5, 5, 5, 0, 5])).rows.tolist() == [0, 1, 2, 3, 5]


def test_the_diagonal_of_a_frame_gram_is_that_of_its_matrix():
    from fctheory.torch._epoch import _gram_diagonal
    from fctheory.ufm.gram import FrameGram

    for kind in ("etf", "identity"):
        G = FrameGram(7, 2.5, kind)
        np.testing.assert_allclose(_gram_diagonal(G, 7), np.diag(np.asarray(G)), rtol=1e-15)
    A = np.arange(9.0).reshape(3, 3)
    assert _gram_diagonal(A, 3).tolist() == [0.0, 4.0, 8.0]


def test_per_class_values_of_small_layers_are_computed_when_asked_for_with_the_epochs_own_numbers():
    """K·d ≤ the deferral limit: each epoch keeps its statistics and a copy of W, and the table computed later is that
    of each epoch (the classifier changed after every epoch here); one computed each epoch is the same."""
    from fctheory.torch import monitor as monitor_module

    H, y = _data(seed=13, offset=3.0)
    tables = []
    for limit in (monitor_module._DEFERRED_MAX, 0):  # deferred, then computed each epoch
        fc = torch.nn.Linear(D, K, bias=False).double()
        torch.nn.init.constant_(fc.weight, 0.1)
        mon = NCMonitor(K, lam_W=1e-3, lam_H=1e-3, classifier=fc, progress=False)
        old = monitor_module._DEFERRED_MAX
        monitor_module._DEFERRED_MAX = limit
        try:
            for e in range(3):
                with mon.epoch():
                    _feed(mon, H + 0.1 * e, y)
                with torch.no_grad():
                    fc.weight.mul_(2.0)  # W changes after each epoch: a deferred table must not see it
        finally:
            monitor_module._DEFERRED_MAX = old
        assert isinstance(mon._class_rows[0][1], tuple) == (limit > 0)
        tables.append(mon.class_table())
    np.testing.assert_allclose(tables[0].to_numpy(float), tables[1].to_numpy(float), rtol=1e-15)
    w = tables[0].groupby("epoch")["w_norm"].mean().to_numpy()
    np.testing.assert_allclose(w[1:] / w[:-1], 2.0, rtol=1e-12)  # each epoch's own W
