"""NC1, CDNV and NC3 from class statistics alone equal the feature-based metrics; class statistics from
one-pass moments equal the two-pass ones; the ClassStatistics properties against direct sums."""

import math

import numpy as np
import pytest

from fctheory import FCTheoryError
from fctheory.metrics import (
    ClassStatistics,
    NCAccumulator,
    cdnv,
    cdnv_from_statistics,
    class_statistics,
    class_statistics_from_moments,
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


@pytest.mark.parametrize("variant", ["duality", "duality_squared", "etf"])
@pytest.mark.parametrize("global_mean", ["class_means", "samples"])
def test_nc3_from_statistics_equals_nc3_of_the_features(variant, global_mean):
    for i, (H, y, W) in enumerate(DATA):
        got = nc3_from_statistics(W, class_statistics(H, y), variant=variant, global_mean=global_mean)
        want = nc3(W, H, y, variant=variant, global_mean=global_mean)
        assert math.isclose(got, want, rel_tol=RTOL, abs_tol=1e-15), i


def test_the_per_sample_cosine_nc3_is_not_offered_from_statistics():
    H, y, W = DATA[0]
    with pytest.raises(FCTheoryError, match="variant"):
        nc3_from_statistics(W, class_statistics(H, y), variant="cosine")


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


@pytest.mark.parametrize("global_mean", ["class_means", "samples"])
def test_statistics_from_moments_equal_the_two_pass_statistics(global_mean):
    for i, (H, y, _) in enumerate(DATA):
        K = int(y.max()) + 1
        first = [int(np.nonzero(y == k)[0][0]) for k in range(K)]
        # each class's first sample as its shift, or (spread-out classes only: one-pass moments lose
        # ~eps·‖h − c‖²/Var relative, so a far shift ruins nearly collapsed classes) one row for all
        for rows in (first, [0] * K) if i < 3 else (first,):
            got = class_statistics_from_moments(*_moments(H, y, K, rows), global_mean=global_mean)
            want = class_statistics(H, y, global_mean=global_mean)
            assert np.array_equal(got.counts, want.counts) and got.counts.dtype == np.int64
            for k in ("means", "global_mean", "sigma_W", "sigma_B", "class_var"):
                w = getattr(want, k)
                atol = RTOL * np.max(np.abs(w))
                np.testing.assert_allclose(getattr(got, k), w, rtol=0, atol=atol, err_msg=f"{i} {k} {rows}")


def test_metrics_from_moments_equal_the_metrics_of_the_features():
    H, y, W = DATA[0]
    K = int(y.max()) + 1
    st = class_statistics_from_moments(*_moments(H, y, K, [int(np.nonzero(y == k)[0][0]) for k in range(K)]))
    assert math.isclose(nc1_from_statistics(st), nc1(H, y), rel_tol=1e-12)
    assert math.isclose(cdnv_from_statistics(st), cdnv(H, y), rel_tol=1e-12)
    assert math.isclose(nc3_from_statistics(W, st), nc3(W, H, y), rel_tol=1e-12)


def test_moments_of_huge_features_give_their_statistics():
    H, y, _ = DATA[1]
    K = int(y.max()) + 1
    counts, sums, scatter, sq, shift = _moments(H, y, K, [0] * K)
    s = 2.0**500  # the moments scale exactly; their products (s²·s) would overflow without the rescaling
    st = class_statistics_from_moments(counts, sums * s, scatter * s * s, sq * s * s, shift * s)
    ref = class_statistics_from_moments(counts, sums, scatter, sq, shift)
    assert np.array_equal(st.means, ref.means * s) and np.array_equal(st.sigma_W, ref.sigma_W * s * s)


def test_moments_near_the_overflow_limit_give_exactly_scaled_statistics_or_are_refused():
    H, y, _ = DATA[1]
    K = int(y.max()) + 1
    counts, sums, scatter, sq, shift = _moments(H, y, K, [0] * K)
    ref = class_statistics_from_moments(counts, sums, scatter, sq, shift)
    for k in range(490, 516):  # the second moments' scale 2^2k crosses the float64 limit 2^1024
        s = 2.0**k
        with np.errstate(over="ignore"):
            want = [ref.means * s, ref.global_mean * s, ref.sigma_W * s * s, ref.sigma_B * s * s, ref.class_var * s * s]
            moments = (sums * s, scatter * s * s, sq * s * s, shift * s)
        if not all(np.all(np.isfinite(a)) for a in moments):
            break  # the moments themselves overflow
        representable = all(np.all(np.isfinite(a)) for a in want)
        try:
            st = class_statistics_from_moments(counts, *moments)
        except FCTheoryError:
            assert not representable, k
            continue
        got = [st.means, st.global_mean, st.sigma_W, st.sigma_B, st.class_var]
        assert representable and all(np.array_equal(a, b) for a, b in zip(got, want)), k


def test_moments_whose_statistics_overflow_are_refused_naming_sums():
    H, y, _ = DATA[1]
    K = int(y.max()) + 1
    counts, sums, scatter, sq, shift = _moments(H, y, K, [0] * K)
    with pytest.raises(FCTheoryError, match=r"\bsums\b.*overflows"):
        class_statistics_from_moments(counts, sums * 1e300, scatter, sq, shift)


@pytest.mark.parametrize(
    ("change", "param"),
    [
        (lambda m: (np.array([3, 0, 1, 1, 1, 1]),) + m[1:], "counts"),
        (lambda m: (m[0] + 0.5,) + m[1:], "counts"),
        (lambda m: m[:2] + (m[2][1:],) + m[3:], "sums"),
        (lambda m: m[:3] + (np.append(m[3], np.nan),) + m[4:], "sq"),
        (lambda m: m[:4] + (np.full_like(m[4], np.inf),), "shift"),
    ],
)
def test_bad_moments_are_refused_naming_the_parameter(change, param):
    H, y, _ = DATA[1]
    m = _moments(H, y, 6, [0] * 6)
    with pytest.raises(FCTheoryError, match=rf"\b{param}\b"):
        class_statistics_from_moments(*change(m))


def test_accumulated_statistics_give_the_accumulators_metrics():
    H, y, W = DATA[0]
    acc = NCAccumulator(K=4, d=9)
    for i in range(0, y.size, 5):
        acc.update(H[i : i + 5], y[i : i + 5])
    st = acc.statistics()
    assert math.isclose(nc1_from_statistics(st), acc.nc1(), rel_tol=RTOL)
    assert math.isclose(cdnv_from_statistics(st), acc.cdnv(), rel_tol=RTOL)
    assert math.isclose(nc3_from_statistics(W, st), acc.nc3(W), rel_tol=RTOL)


def test_class_statistics_properties_against_direct_sums():
    H, y, _ = DATA[0]
    st = class_statistics(H, y)
    assert isinstance(st, ClassStatistics)
    assert (st.K, st.d, st.N) == (4, 9, y.size)
    assert st.balanced is (len(set(np.bincount(y))) == 1)
    assert math.isclose(st.H_norm_sq, float(np.sum(H * H)), rel_tol=1e-13)
    Hb, yb = H[: 4 * 2], np.repeat(np.arange(4), 2)
    assert class_statistics(Hb, yb).balanced is True


def test_moments_with_a_non_finite_float64_entry_are_refused_naming_the_array():
    K, d = 3, 4
    good = dict(counts=np.full(K, 2), sums=np.zeros((K, d)), scatter=np.eye(d), sq=np.ones(K), shift=np.eye(K, d))
    for name in ("sums", "scatter", "shift"):
        bad = dict(good)
        bad[name] = good[name].copy()
        bad[name][0, 0] = np.nan
        with pytest.raises(FCTheoryError, match=rf"^{name}=nan is invalid: must be finite \(entry \(0, 0\)\)$"):
            class_statistics_from_moments(**bad)


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


@pytest.mark.parametrize("k", [-300, 0, 300])
def test_moments_scaled_by_a_power_of_two_give_the_statistics_scaled_bit_for_bit(k):
    # features·2^k: first moments scale by 2^k, second ones by 2^2k, exactly, on each side of the unit scale
    H, y, _ = _data(7, 3, 4, offset=5.0)
    shift = H[[np.flatnonzero(y == c)[0] for c in range(3)]]
    D = H - shift[y]
    sums = np.stack([D[y == c].sum(axis=0) for c in range(3)])
    sq = np.array([(D[y == c] ** 2).sum() for c in range(3)])
    n = np.bincount(y)

    def stats(s):
        return class_statistics_from_moments(n, sums * s, (D.T @ D) * s * s, sq * s * s, shift * s)

    ref, got = stats(1.0), stats(2.0**k)
    for name, p in (("means", 1), ("global_mean", 1), ("sigma_W", 2), ("sigma_B", 2), ("class_var", 2)):
        assert np.array_equal(getattr(got, name), np.ldexp(getattr(ref, name), p * k)), name


def test_moments_at_unit_scale_are_not_rescaled():
    # the largest moment in [0.5, 1): no power of two to undo (the class means are the shifts themselves)
    st = class_statistics_from_moments(
        np.array([1, 1]), np.zeros((2, 1)), np.zeros((1, 1)), np.zeros(2), np.array([[0.75], [-0.75]])
    )
    assert np.array_equal(st.means, [[0.75], [-0.75]]) and np.array_equal(st.sigma_B, [[0.5625]])


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
