"""nc_summary: every entry equals its own public metric on the same statistics (bitwise), NaN exactly where
that metric refuses the statistics, and the mean pairwise cosine against a direct computation."""

import math

import numpy as np
import pytest

from fctheory import FCTheoryError
from fctheory.metrics import (
    ClassStatistics,
    cdnv_from_statistics,
    class_statistics,
    equiangularity,
    equinorm,
    nc1_from_statistics,
    nc2,
    nc3_from_statistics,
    nc_summary,
)


def _data(seed, K, d, spread=1.0, offset=0.0, scale=1.0, balanced=False):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(K), 5) if balanced else np.concatenate([np.arange(K), rng.integers(0, K, 6 * K)])
    H = offset + 3.0 * rng.standard_normal((K, d))[y] + spread * rng.standard_normal((y.size, d))
    return class_statistics(scale * H, y), scale * rng.standard_normal((K, d))


# random (balanced), unbalanced with d > K−1, d < K−1, nearly collapsed, a large common offset, huge and tiny
# features (whose squares overflow / underflow float64 unless rescaled)
CASES = {
    "random": _data(0, 5, 8, balanced=True),
    "unbalanced": _data(1, 4, 9),
    "d_below_K": _data(2, 10, 3),
    "nearly_collapsed": _data(3, 5, 12, spread=1e-7),
    "offset": _data(4, 7, 8, offset=1e4),
    "huge": _data(5, 6, 7, scale=1e150),
    "tiny": _data(6, 6, 7, scale=1e-160),
}


def _refused_as_nan(fn, *args, **kw):
    try:
        return float(fn(*args, **kw))
    except FCTheoryError:
        return math.nan


def _individual(st, W=None):
    M = st.means
    out = {
        "nc1": _refused_as_nan(nc1_from_statistics, st),
        "nc1_trace_ratio": _refused_as_nan(nc1_from_statistics, st, variant="trace_ratio"),
        "cdnv": _refused_as_nan(cdnv_from_statistics, st),
        "nc2": _refused_as_nan(nc2, M),
        "equinorm_means": _refused_as_nan(equinorm, M),
        "equiangularity_means": _refused_as_nan(equiangularity, M),
        "mean_norm_means": _refused_as_nan(equinorm, M, reduction="mean"),
    }
    if W is not None:
        out["nc2_W"] = _refused_as_nan(nc2, W)
        out["equinorm_W"] = _refused_as_nan(equinorm, W, center=False)
        out["nc3"] = _refused_as_nan(nc3_from_statistics, W, st)
    return out


def _same(got, want):
    for key, value in want.items():
        assert (math.isnan(got[key]) and math.isnan(value)) or got[key] == value, (key, got[key], value)


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_entry_equals_its_metric_without_W(case):
    st, _ = CASES[case]
    got = nc_summary(st)
    assert list(got) == [
        "nc1",
        "nc1_trace_ratio",
        "cdnv",
        "nc2",
        "equinorm_means",
        "equiangularity_means",
        "mean_cos_means",
        "mean_norm_means",
    ]
    _same(got, _individual(st))
    assert all(math.isfinite(v) for v in got.values())


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_entry_equals_its_metric_with_W(case):
    st, W = CASES[case]
    got = nc_summary(st, W)
    assert list(got)[8:] == ["nc2_W", "equinorm_W", "mean_cos_W", "W_norm_sq", "nc3"]
    _same(got, _individual(st, W))


def _mean_cosine(M):
    """The mean pairwise cosine of the centred rows, computed directly (moderate magnitudes only)."""
    Mc = M - M.mean(axis=0)
    U = Mc / np.linalg.norm(Mc, axis=1)[:, None]
    C = U @ U.T
    return C[~np.eye(M.shape[0], dtype=bool)].mean()


@pytest.mark.parametrize("case", ["random", "unbalanced", "d_below_K"])
def test_mean_cosines_and_W_norm_equal_a_direct_computation(case):
    st, W = CASES[case]
    got = nc_summary(st, W)
    assert math.isclose(got["mean_cos_means"], _mean_cosine(st.means), rel_tol=1e-13, abs_tol=1e-15)
    assert math.isclose(got["mean_cos_W"], _mean_cosine(W), rel_tol=1e-13, abs_tol=1e-15)
    assert math.isclose(got["W_norm_sq"], float(np.sum(W * W)), rel_tol=1e-14)


def test_mean_cosine_of_a_simplex_is_minus_one_over_K_minus_1():
    K = 5
    M = np.eye(K) - 1.0 / K  # centred simplex vertices
    st = ClassStatistics(M, M.mean(axis=0), np.full(K, 3), np.zeros((K, K)), M.T @ M / K, np.zeros(K))
    got = nc_summary(st)
    assert math.isclose(got["mean_cos_means"], -1.0 / (K - 1), rel_tol=1e-14)
    assert got["nc2"] < 1e-15 and got["equinorm_means"] < 1e-15 and got["equiangularity_means"] < 1e-15


def _with_means(st, means):
    return ClassStatistics(means, means.mean(axis=0), st.counts, st.sigma_W, st.sigma_B, st.class_var)


def test_entries_are_nan_exactly_where_the_metrics_refuse_coinciding_means():
    st, W = CASES["random"]
    st = _with_means(st, np.tile(st.means[:1], (st.K, 1)))  # Σ_B = 0: every mean-based metric is undefined
    got, want = nc_summary(st, W), _individual(st, W)
    assert all(math.isnan(want[k]) for k in ("nc1", "nc1_trace_ratio", "cdnv", "nc2", "equinorm_means", "nc3"))
    _same(got, want)
    assert math.isnan(got["mean_cos_means"])


def test_a_class_mean_at_the_global_mean_leaves_only_the_cosines_undefined():
    st, W = CASES["random"]
    a, b = np.arange(1.0, 9.0), np.arange(8.0, 0.0, -1.0) ** 2
    M = np.stack([np.zeros(8), a, -a, b, -b])  # integer rows summing to 0: centred row 0 is exactly zero
    st = _with_means(st, M)
    got, want = nc_summary(st, W), _individual(st, W)
    assert math.isnan(want["equiangularity_means"]) and math.isnan(got["mean_cos_means"])
    assert math.isfinite(got["nc1"]) and math.isfinite(got["nc2"])
    _same(got, want)


def test_two_coinciding_means_leave_only_cdnv_undefined():
    st, W = CASES["unbalanced"]
    M = np.array(st.means)
    M[1] = M[0]
    st = _with_means(st, M)
    got, want = nc_summary(st, W), _individual(st, W)
    assert math.isnan(got["cdnv"]) and math.isfinite(got["nc1"]) and math.isfinite(got["equiangularity_means"])
    _same(got, want)


def test_a_zero_classifier_gives_nan_for_its_entries():
    st, W = CASES["random"]
    got, want = nc_summary(st, np.zeros_like(W)), _individual(st, np.zeros_like(W))
    assert all(math.isnan(got[k]) for k in ("nc2_W", "equinorm_W", "mean_cos_W", "nc3"))
    assert got["W_norm_sq"] == 0.0
    _same(got, want)


def test_a_classifier_of_the_wrong_shape_is_refused():
    st, W = CASES["random"]
    with pytest.raises(FCTheoryError, match="W"):
        nc_summary(st, W[:, :-1])


def test_a_classifier_whose_squared_norm_overflows_is_refused_naming_W():
    st, W = CASES["random"]
    with pytest.raises(FCTheoryError, match=r"^W='array of shape \(5, 8\)' is invalid: ‖W‖² overflows float64"):
        nc_summary(st, W * 1e160)
    assert math.isfinite(nc_summary(st, W * 1e150)["W_norm_sq"])


def test_a_float32_classifier_gives_the_entries_of_its_float64_copy():
    st, W = CASES["unbalanced"]
    W32 = W.astype(np.float32)
    got, ref = nc_summary(st, W32), nc_summary(st, W32.astype(np.float64))
    assert got.keys() == ref.keys()
    for key in ref:
        assert got[key] == ref[key] or (math.isnan(got[key]) and math.isnan(ref[key])), key


@pytest.mark.parametrize("K_present", [4, 40])  # the compiled kernel's path (≤ 32 classes) and the reference path
@pytest.mark.parametrize("upper", [False, True])
def test_nc_summary_from_moments_with_absent_classes_is_that_of_the_present_ones(K_present, upper):
    from fctheory.metrics import nc_summary_from_moments

    rng = np.random.default_rng(K_present)
    K, d = int(2.5 * K_present), 7  # 60% of the classes absent
    present = np.sort(rng.choice(K, size=K_present, replace=False))
    y = np.concatenate([present, rng.choice(present, size=5 * K_present)])
    H = 3.0 * rng.standard_normal((K, d))[y] + rng.standard_normal((y.size, d))
    W = rng.standard_normal((K, d))
    counts = np.bincount(y, minlength=K)
    shift = np.zeros((K, d))
    sums = np.zeros((K, d))
    np.add.at(sums, y, H)
    sq = np.bincount(y, weights=(H * H).sum(1), minlength=K)
    S = H.T @ H
    st, got = nc_summary_from_moments(counts, sums, np.triu(S) if upper else S, sq, shift, W, upper=upper)
    ref = nc_summary(class_statistics(H, np.searchsorted(present, y)), W[present])
    assert st.K == K_present and st.num_classes == K and st.classes.tolist() == present.tolist()
    for key in ref:
        assert math.isfinite(got[key]), key
        assert got[key] == pytest.approx(ref[key], rel=1e-9, abs=1e-12), key
