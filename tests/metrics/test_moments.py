"""Class statistics (fctheory/metrics/moments.py): ClassStatistics' properties against direct sums, and the
statistics from one-pass moments equal to the two-pass ones — exactly scaled near the overflow limit, refused
naming the array when they cannot be formed."""

import math

import numpy as np
import pytest

from fctheory import FCTheoryError
from fctheory.metrics import (
    ClassStatistics,
    cdnv,
    cdnv_from_statistics,
    class_statistics,
    class_statistics_from_moments,
    nc1,
    nc1_from_statistics,
    nc3,
    nc3_from_statistics,
)

from .test_variability import DATA, RTOL, _data, _moments


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
        (lambda m: (np.array([3, 0, 0, 0, 0, 0]),) + m[1:], "counts"),  # one class present
        (lambda m: (np.array([3, -1, 1, 1, 1, 1]),) + m[1:], "counts"),
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


def test_metrics_from_moments_equal_the_metrics_of_the_features():
    H, y, W = DATA[0]
    K = int(y.max()) + 1
    st = class_statistics_from_moments(*_moments(H, y, K, [int(np.nonzero(y == k)[0][0]) for k in range(K)]))
    assert math.isclose(nc1_from_statistics(st), nc1(H, y), rel_tol=1e-12)
    assert math.isclose(cdnv_from_statistics(st), cdnv(H, y), rel_tol=1e-12)
    assert math.isclose(nc3_from_statistics(W, st), nc3(W, H, y), rel_tol=1e-12)


def test_moments_with_absent_classes_give_the_statistics_of_the_present_ones():
    # the samples of 3 of 6 classes: the moments' rows of the other 3 (count 0) hold anything finite, never read;
    # the statistics equal those of the moments with the absent rows removed, and name the present classes
    H, y, _ = DATA[1]
    keep = np.array([0, 2, 5])
    sel = np.isin(y, keep)
    H, y = H[sel], y[sel]
    first = [int(np.nonzero(y == k)[0][0]) if k in keep else 0 for k in range(6)]
    counts, sums, scatter, sq, shift = _moments(H, y, 6, first)
    assert counts[[1, 3, 4]].tolist() == [0, 0, 0]
    for a in (sums, sq, shift):
        a[[1, 3, 4]] = 7.0
    st = class_statistics_from_moments(counts, sums, scatter, sq, shift)
    ref = class_statistics_from_moments(*_moments(H, np.searchsorted(keep, y), 3, [first[k] for k in keep]))
    assert st.K == 3 and st.num_classes == 6 and st.classes.tolist() == keep.tolist() and st.absent == 3
    for a, b in zip(
        [st.means, st.global_mean, st.counts, st.sigma_W, st.sigma_B, st.class_var],
        [ref.means, ref.global_mean, ref.counts, ref.sigma_W, ref.sigma_B, ref.class_var],
    ):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_a_class_of_one_sample_has_exactly_zero_variance_from_any_shift():
    # q_k − ‖s_k‖²/n_k cancels to rounding noise for n_k = 1 when the shift is not the sample itself
    rng = np.random.default_rng(11)
    H = rng.standard_normal((7, 40)) * 1e3
    y = np.array([0, 0, 1, 2, 2, 2, 3])  # classes 1 and 3 have one sample
    shift = rng.standard_normal((4, 40))  # far from the samples
    D = H - shift[y]
    sums = np.zeros((4, 40))
    np.add.at(sums, y, D)
    # the singletons' squared norms one ulp above ‖s_k‖² (as another summation order may round them): without the
    # rule q_k − ‖s_k‖² leaves that ulp as a variance
    sq = np.bincount(y, weights=[math.fsum(r * r) for r in D], minlength=4)
    sq[[1, 3]] = np.nextafter(sq[[1, 3]], np.inf)
    st = class_statistics_from_moments(np.bincount(y, minlength=4), sums, D.T @ D, sq, shift)
    assert st.class_var[1] == 0.0 and st.class_var[3] == 0.0 and st.class_var[0] > 0
    # the compiled kernel of nc_summary_from_moments (host float64 moments, ≤ 32 classes) likewise
    from fctheory.metrics import nc_summary_from_moments

    kst, _ = nc_summary_from_moments(np.bincount(y, minlength=4), sums, D.T @ D, sq, shift)
    assert kst.class_var[1] == 0.0 and kst.class_var[3] == 0.0 and kst.class_var[0] > 0
