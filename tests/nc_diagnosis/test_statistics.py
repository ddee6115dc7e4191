"""fctheory.nc_diagnosis.statistics: moments → statistics against a two-pass oracle, the metrics from the
statistics against fctheory.metrics on the features themselves, and the package needs no PyTorch."""

import dataclasses
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from fctheory import FCTheoryError, metrics, ufm
from fctheory.nc_diagnosis import feature_statistics, nc_metrics, statistics_from_moments, ufm_distances, ufm_optimum
from fctheory.nc_diagnosis import statistics as nc_statistics
from fctheory.nc_diagnosis.statistics import _reference_norms

K, D = 5, 7


def _data(seed=0, N=157, d=D):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, N)
    y[:K] = np.arange(K)
    return 50.0 + 3.0 * rng.standard_normal((K, d))[y] + rng.standard_normal((N, d)), y


def test_moments_with_any_shift_give_the_two_pass_statistics():
    H, y = _data()
    shift = np.random.default_rng(1).standard_normal((K, D)) + 50.0
    Dv = H - shift[y]
    sums = np.stack([Dv[y == k].sum(axis=0) for k in range(K)])
    sq = np.array([np.sum(Dv[y == k] ** 2) for k in range(K)])
    st = statistics_from_moments(np.bincount(y, minlength=K), sums, Dv.T @ Dv, sq, shift)
    means = np.stack([H[y == k].mean(axis=0) for k in range(K)])
    dev = H - means[y]
    assert np.allclose(st.means, means, rtol=1e-13, atol=0)
    assert np.max(np.abs(st.sigma_W - dev.T @ dev / len(y))) < 1e-12 * np.max(np.abs(dev.T @ dev / len(y)))
    assert st.H_norm_sq == pytest.approx(float(np.sum(H * H)), rel=1e-12)


@pytest.mark.parametrize("d", [K - 1, D, 40])
def test_metrics_from_statistics_equal_the_metrics_of_the_features(d):
    """d = K−1 (Σ_W lies in the span of the centred means), d > K−1 (part of its trace outside), d = 40."""
    H, y = _data(d=d)
    W = np.random.default_rng(2).standard_normal((K, d))
    m = nc_metrics(feature_statistics(H, y), W)
    assert m["nc1"] == pytest.approx(metrics.nc1(H, y), rel=1e-10)
    assert m["nc1_trace_ratio"] == pytest.approx(metrics.nc1(H, y, variant="trace_ratio"), rel=1e-10)
    assert m["cdnv"] == pytest.approx(metrics.cdnv(H, y), rel=1e-10)
    assert m["nc3"] == pytest.approx(metrics.nc3(W, H, y), rel=1e-10)


def test_collapsed_features_give_zero_nc1():
    H, y = _data()
    means = np.stack([H[y == k].mean(axis=0) for k in range(K)])
    m = nc_metrics(feature_statistics(means[y], y))
    assert m["nc1"] == 0.0 and m["nc1_trace_ratio"] == 0.0 and m["cdnv"] == 0.0


def test_moments_with_fewer_than_two_classes_present_are_refused():
    z = np.zeros((K, D))
    with pytest.raises(FCTheoryError, match="counts"):
        statistics_from_moments(np.array([3, 0, 0, 0, 0]), z, np.zeros((D, D)), np.zeros(K), z)


def test_import_fctheory_and_nc_diagnosis_do_not_import_torch():
    code = "import sys, fctheory, fctheory.nc_diagnosis, fctheory.cli; print('torch' in sys.modules)"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "False"


def test_a_classifier_of_the_wrong_shape_is_refused():
    st = feature_statistics(*_data())
    with pytest.raises(FCTheoryError, match="W"):
        nc_metrics(st, np.ones((K, D + 1)))


def test_a_float32_layer_gives_the_metrics_and_distances_of_its_float64_copy():
    H, y = _data()
    st = feature_statistics(H, y)
    rng = np.random.default_rng(3)
    W32, b32 = rng.standard_normal((K, D)).astype(np.float32), rng.standard_normal(K).astype(np.float32)
    W64, b64 = W32.astype(np.float64), b32.astype(np.float64)
    assert nc_metrics(st, W32) == nc_metrics(st, W64)
    opt = ufm_optimum(loss="ce", K=K, n_spl=30, lam_W=5e-3, lam_H=5e-3, bias=True)
    assert ufm_distances(st, W32, b32, opt, n_spl=30) == ufm_distances(st, W64, b64, opt, n_spl=30)


def test_reference_norms_equal_numpy_with_a_non_zero_optimal_bias():
    """The norms of the reference path (any scale) against plain NumPy, b* ≠ 0 so that b − b* ≠ b + b*."""
    rng = np.random.default_rng(31)
    M, W, GM, GW = (rng.standard_normal(s) for s in ((4, 6), (4, 6), (4, 4), (4, 4)))
    b, bs = rng.standard_normal(4), rng.standard_normal(4)
    got = _reference_norms(M, W, b, GM, GW, bs)
    n = np.linalg.norm
    expected = [n(M @ M.T - GM), n(GM), n(W @ W.T - GW), n(GW), float(np.sum(W * W)), n(W), n(b - bs)]
    np.testing.assert_allclose(got, expected, rtol=1e-14)


@pytest.mark.parametrize("opt_bias", [True, False])
def test_ufm_distances_take_the_compiled_norms_in_their_range(opt_bias, monkeypatch):
    """Unit-scale statistics, W and b (against an optimum with or without a bias): the compiled kernel's norms,
    never the rescaled reference path (which is for scales outside the kernel's range)."""
    rng = np.random.default_rng(32)
    y = np.repeat(np.arange(4), 5)
    st = feature_statistics(rng.standard_normal((4, 6))[y] + 0.1 * rng.standard_normal((20, 6)), y)
    W, b = rng.standard_normal((4, 6)), rng.standard_normal(4)
    opt = ufm.ce(K=4, n_spl=5, lam_W=1e-3, lam_H=1e-3, bias=opt_bias)

    def refuse(*args):
        raise AssertionError("the reference norms were computed")

    monkeypatch.setattr(nc_statistics, "_reference_norms", refuse)
    out = ufm_distances(st, W, b, opt, n_spl=5)
    assert math.isfinite(out["dist_W_gram"]) and ("dist_bias" in out) == opt_bias


def test_host64_keeps_a_float64_array_and_converts_anything_else():
    a = np.arange(6.0).reshape(2, 3)
    assert nc_statistics._host64(a) is a
    for other in (a.astype(np.float32), a.astype(np.int64), a.tolist()):
        got = nc_statistics._host64(other)
        assert type(got) is np.ndarray and got.dtype == np.float64
        np.testing.assert_array_equal(got, a)


def test_is64_only_for_float64_numpy_arrays():
    a = np.zeros(3)
    assert nc_statistics._is64(a)
    assert not any(nc_statistics._is64(x) for x in (a.astype(np.float32), a.astype(np.int64), a.tolist(), None))


def _layer(seed, scale=1.0):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(4), 5)
    st = feature_statistics(scale * (rng.standard_normal((4, 6))[y] + 0.1 * rng.standard_normal((20, 6))), y)
    return st, scale * rng.standard_normal((4, 6)), scale * rng.standard_normal(4)


@pytest.mark.parametrize("name", ["W", "b"])
def test_ufm_distances_refuse_a_layer_of_the_wrong_shape_naming_it(name):
    st, W, b = _layer(33)
    opt = ufm.ce(K=4, n_spl=5, lam_W=1e-3, lam_H=1e-3, bias=True)
    bad = dict(W=W, b=b)
    bad[name] = np.ones((5, 6)) if name == "W" else np.ones(5)
    with pytest.raises(FCTheoryError, match=f"^{name}="):
        ufm_distances(st, bad["W"], bad["b"], opt, n_spl=5)


def test_ufm_distances_refuse_an_overflowing_bias_the_optimum_does_not_have():
    st, W, b = _layer(34)
    opt = ufm.ce(K=4, n_spl=5, lam_W=1e-3, lam_H=1e-3, bias=False)
    with pytest.raises(FCTheoryError, match="^b=.*overflows"):
        ufm_distances(st, W, np.full(4, 1e300), opt, n_spl=5)


def test_ufm_distances_at_an_extreme_scale_with_a_bias_the_optimum_does_not_have():
    """The reference path (features at 2^300) with a bias against a bias-free optimum: no bias distance."""
    st, W, b = _layer(35, scale=2.0**300)
    opt = ufm.ce(K=4, n_spl=5, lam_W=1e-3, lam_H=1e-3, bias=False)
    out = ufm_distances(st, W, b, opt, n_spl=5)
    assert "dist_bias" not in out and math.isfinite(out["dist_means_gram"])


def test_ufm_distances_against_an_optimum_made_by_hand_of_lists():
    """An optimum whose Grams and bias are lists (not float64 arrays): the reference path, the same numbers."""
    st, W, b = _layer(36)
    opt = ufm.ce(K=4, n_spl=5, lam_W=1e-3, lam_H=1e-3, bias=True)
    lists = dataclasses.replace(
        opt, means_gram=opt.means_gram.tolist(), W_gram=opt.W_gram.tolist(), bias=opt.bias.tolist()
    )
    assert ufm_distances(st, W, b, lists, n_spl=5) == pytest.approx(ufm_distances(st, W, b, opt, n_spl=5), rel=1e-13)


@pytest.mark.parametrize("bias", [True, False])
def test_ufm_distances_against_numpy_with_its_documented_keys(bias):
    """Every entry of ufm_distances from its definition in plain NumPy (Gram distances, norm ratios, h_over_w,
    the bias distance), under exactly the documented keys."""
    from fctheory import ufm
    from fctheory.nc_diagnosis import feature_statistics, ufm_distances

    rng = np.random.default_rng(21)
    K, d, n = 4, 6, 5
    y = np.repeat(np.arange(K), n)
    H = 3.0 * rng.standard_normal((K, d))[y] + rng.standard_normal((K * n, d))
    W = rng.standard_normal((K, d))
    b = rng.standard_normal(K) if bias else None
    st = feature_statistics(H, y)
    opt = ufm.ce(K=K, n_spl=n, lam_W=1e-2, lam_H=1e-3, bias=bias)
    got = ufm_distances(st, W, b, opt, n_spl=n)
    keys = ["ufm_W_norm_sq", "ufm_H_norm_sq", "H_norm_sq_per_sample", "dist_means_gram", "H_norm_sq_ratio"]
    keys += ["dist_W_gram", "W_norm_sq_ratio", "h_over_w"] + (["dist_bias"] if bias else [])
    assert list(got) == keys
    M = np.stack([H[y == k].mean(axis=0) for k in range(K)])
    h_sq = np.sum(H * H) / len(y)
    expected = {
        "ufm_W_norm_sq": opt.W_norm_sq,
        "ufm_H_norm_sq": opt.H_norm_sq,
        "H_norm_sq_per_sample": h_sq,
        "dist_means_gram": np.linalg.norm(M @ M.T - opt.means_gram) / np.linalg.norm(opt.means_gram),
        "H_norm_sq_ratio": h_sq / (opt.H_norm_sq / (K * n)),
        "dist_W_gram": np.linalg.norm(W @ W.T - opt.W_gram) / np.linalg.norm(opt.W_gram),
        "W_norm_sq_ratio": np.sum(W * W) / opt.W_norm_sq,
        "h_over_w": np.sqrt(h_sq) / np.sqrt(np.sum(W * W) / K),
    }
    if bias:
        expected["dist_bias"] = np.linalg.norm(b - opt.bias)
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, rel=1e-12), key


def test_h_over_w_of_a_zero_classifier_is_nan():
    from fctheory import ufm
    from fctheory.nc_diagnosis import feature_statistics, ufm_distances

    rng = np.random.default_rng(22)
    y = np.repeat(np.arange(3), 4)
    st = feature_statistics(rng.standard_normal((12, 5)), y)
    opt = ufm.ce(K=3, n_spl=4, lam_W=1e-2, lam_H=1e-3, bias=False)
    assert math.isnan(ufm_distances(st, np.zeros((3, 5)), None, opt, n_spl=4)["h_over_w"])
