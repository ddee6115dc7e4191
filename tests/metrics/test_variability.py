"""NC1 and CDNV (fctheory.metrics.variability): from class statistics alone they equal the feature-based metrics;
one-pass moments equal the two-pass ones; the ClassStatistics properties against direct sums."""

import math

import numpy as np
import pytest

from fctheory import FCTheoryError
from fctheory.metrics import (
    ClassStatistics,
    cdnv,
    cdnv_from_statistics,
    class_statistics,
    nc1,
    nc1_from_statistics,
    nc3,
    nc3_from_statistics,
)

RTOL = 1e-12


def _data(seed, K, d, spread=1.0, offset=0.0):
    rng = np.random.default_rng(seed)
    y = np.concatenate([np.arange(K), rng.integers(0, K, 6 * K)])
    H = offset + 3.0 * rng.standard_normal((K, d))[y] + spread * rng.standard_normal((y.size, d))
    return H, y, rng.standard_normal((K, d))


# unbalanced; d > K−1, d = K−1 and d < K−1 (Σ_B of rank d); nearly collapsed; a large common offset
DATA = [_data(0, 4, 9), _data(1, 6, 5), _data(2, 10, 3), _data(3, 5, 12, spread=1e-6), _data(4, 7, 8, offset=1e3)]


def _moments(H, y, K, shift_rows):
    """One-pass moments of h − c_y, with c_k the given row of H for each class (any shift works)."""
    shift = H[shift_rows]
    Dv = H - shift[y]
    sums = np.stack([Dv[y == k].sum(axis=0) for k in range(K)])
    sq = np.array([np.sum(Dv[y == k] ** 2) for k in range(K)])
    return np.bincount(y, minlength=K), sums, Dv.T @ Dv, sq, shift


@pytest.mark.parametrize("variant", ["papyan", "trace_ratio", "within_fraction", "between_fraction"])
@pytest.mark.parametrize("global_mean", ["class_means", "samples"])
def test_nc1_from_statistics_equals_nc1_of_the_features(variant, global_mean):
    for i, (H, y, _) in enumerate(DATA):
        st = class_statistics(H, y)
        got = nc1_from_statistics(st, variant=variant, global_mean=global_mean)
        assert math.isclose(got, nc1(H, y, variant=variant, global_mean=global_mean), rel_tol=RTOL), i


@pytest.mark.parametrize("option", [{"pinv_rtol": 1e-10}, {"rank": "K-1"}])
def test_nc1_from_statistics_takes_the_pseudo_inverse_options_of_nc1(option):
    for H, y, _ in DATA[:2] + DATA[3:]:  # rank="K-1" needs d >= K−1
        assert math.isclose(nc1_from_statistics(class_statistics(H, y), **option), nc1(H, y, **option), rel_tol=RTOL)


def test_nc1_from_statistics_refuses_rank_K_minus_1_like_nc1():
    H, y, _ = DATA[2]  # d = 3 < K − 1 = 9
    with pytest.raises(FCTheoryError, match="rank"):
        nc1(H, y, rank="K-1")
    with pytest.raises(FCTheoryError, match="rank"):
        nc1_from_statistics(class_statistics(H, y), rank="K-1")


@pytest.mark.parametrize("ddof", [0, 1])
@pytest.mark.parametrize("option", [{}, {"dist_exp": 0.7}, {"reduction": "cv"}, {"matrix": True, "dist_exp": 2.0}])
def test_cdnv_from_statistics_equals_cdnv_of_the_features(ddof, option):
    for i, (H, y, _) in enumerate(DATA):
        got = cdnv_from_statistics(class_statistics(H, y, ddof=ddof), **option)
        want = cdnv(H, y, ddof=ddof, **option)
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=0, err_msg=str(i))


def test_metrics_from_statistics_of_huge_features_equal_those_of_the_features():
    H, y, W = DATA[1]
    st = class_statistics(H * 1e150, y)  # Σ_W ~ 1e300: the squares of the centred means would overflow
    assert math.isclose(nc1_from_statistics(st), nc1(H, y), rel_tol=RTOL)
    assert math.isclose(cdnv_from_statistics(st), cdnv(H, y), rel_tol=RTOL)
    assert math.isclose(nc3_from_statistics(W, st), nc3(W, H, y), rel_tol=RTOL)


def test_metrics_from_statistics_refuse_coinciding_class_means_naming_st():
    H = np.array([[1.0, 2.0], [1.0, 2.0], [1.0, 2.0], [1.0, 2.0]]) + np.array(
        [[0.1, 0], [-0.1, 0], [0, 0.1], [0, -0.1]]
    )
    st = class_statistics(H, np.array([0, 0, 1, 1]))
    for fn in (nc1_from_statistics, lambda s: nc1_from_statistics(s, variant="trace_ratio"), cdnv_from_statistics):
        with pytest.raises(FCTheoryError, match=r"\bst\b"):
            fn(st)


def test_cdnv_of_many_classes_in_row_blocks_equals_the_pairwise_formula():
    # K·K·d > 2^18: the squared distances are formed in blocks of rows (here 26 rows of 100 at a time, so
    # several blocks); oracle: the definition pair by pair
    rng = np.random.default_rng(5)
    K, d = 100, 100
    means, var = rng.standard_normal((K, d)), rng.random(K) + 0.5
    st = ClassStatistics(means, means.mean(axis=0), np.full(K, 4), np.zeros((d, d)), np.zeros((d, d)), var)
    i, j = np.triu_indices(K, 1)
    d2 = ((means[i] - means[j]) ** 2).sum(axis=1)
    ref = float(np.mean((var[i] + var[j]) / (2.0 * d2)))
    assert cdnv_from_statistics(st) == pytest.approx(ref, rel=1e-13)
    ref_cv = np.std((var[i] + var[j]) / (2.0 * d2)) / ref
    assert cdnv_from_statistics(st, reduction="cv") == pytest.approx(ref_cv, rel=1e-12)


@pytest.mark.parametrize("matrix", [False, True])
def test_coinciding_class_means_are_refused_with_the_whole_message(matrix):
    means = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    st = ClassStatistics(means, means.mean(axis=0), np.full(3, 2), np.eye(2), np.eye(2), np.ones(3))
    msg = "^st='two classes with the same mean' is invalid: CDNV is undefined when class means coincide$"
    with pytest.raises(FCTheoryError, match=msg):
        cdnv_from_statistics(st, matrix=matrix)


@pytest.mark.parametrize("dist_exp", [0.5, 2.0])
def test_cdnv_with_another_distance_exponent_equals_the_pairwise_definition(dist_exp):
    # V(i, j) = (Var_i + Var_j) / (2‖μ_i − μ_j‖^(2p)), averaged over the ordered pairs i ≠ j
    rng = np.random.default_rng(8)
    K, d = 5, 3
    means, var = 2.0 * rng.standard_normal((K, d)), rng.random(K) + 0.1
    st = ClassStatistics(means, means.mean(axis=0), np.full(K, 3), np.eye(d), np.eye(d), var)
    ref = np.mean(
        [
            (var[i] + var[j]) / (2.0 * np.sum((means[i] - means[j]) ** 2) ** dist_exp)
            for i in range(K)
            for j in range(K)
            if i != j
        ]
    )
    assert cdnv_from_statistics(st, dist_exp=dist_exp) == pytest.approx(ref, rel=1e-13)
