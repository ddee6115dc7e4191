"""The numba kernels of the NC statistics (fctheory._nc_kernels) against the functions whose steps they repeat:
class_statistics_from_moments + nc_summary (the reference path of nc_summary_from_moments), the norms of
ufm_distances, numpy's SVD and a 50-digit mpmath NC1 where the problem is ill-conditioned; and the inputs
the kernels must leave to the reference (extreme scales, non-finite values, empty classes)."""

import math
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fctheory import _nc_kernels as nk
from fctheory import FCTheoryError, metrics, ufm
from fctheory.nc_diagnosis import feature_statistics, ufm_distances
from fctheory.nc_diagnosis import statistics as nc_stats

# metrics bounded by a constant (cosines, frame distances, coefficients of variation): compared with an absolute
# floor as well, since a value that should be 0 is rounding noise of either summation order
BOUNDED = {
    "nc2",
    "equinorm_means",
    "equiangularity_means",
    "mean_cos_means",
    "nc2_W",
    "equinorm_W",
    "mean_cos_W",
    "nc3",
}


def _features(seed, K, d, n_max=12, spread=1.0, offset=0.0, scale=1.0):
    """Labels (every class present, unbalanced) and features: Gaussian class means, Gaussian noise."""
    rng = np.random.default_rng(seed)
    y = np.concatenate([np.arange(K), rng.integers(0, K, int(rng.integers(0, n_max * K)))])
    H = offset + 3.0 * rng.standard_normal((K, d))[y] + spread * rng.standard_normal((y.size, d))
    return scale * H, y, scale * rng.standard_normal((K, d))


def _moments(H, y, K, shift=None):
    """(counts, sums, scatter, sq, shift) of the features shifted per class (default: each class's first row)."""
    if shift is None:
        shift = np.stack([H[y == k][0] for k in range(K)])
    D = H - shift[y]
    sums = np.zeros((K, H.shape[1]))
    np.add.at(sums, y, D)
    return np.bincount(y, minlength=K), sums, D.T @ D, np.bincount(y, weights=(D * D).sum(1), minlength=K), shift


def _means(moments):
    counts, sums, _, _, shift = moments
    return shift + sums / counts[:, None]


def _reference(moments, W):
    st = metrics.class_statistics_from_moments(*moments)
    return st, metrics.nc_summary(st, W)


def _kernel(moments, W, upper=False):
    counts, sums, scatter, sq, shift = moments
    d = sums.shape[1]
    S = np.triu(scatter) if upper else scatter
    W = np.empty((0, d)) if W is None else W
    return nk.statistics_and_summary(counts, sums, S, sq, shift, upper, W)


def _condition(means):
    """κ = s_max/s_{K−1} of the centred means (the NC1 terms divide by s_i²)."""
    s = np.linalg.svd(means - means.mean(axis=0), compute_uv=False)[: means.shape[0] - 1]
    s = s[s > 1e-13 * s[0]]
    return s[0] / s[-1]


def _assert_same(got, ref, kappa=1.0):
    """Every statistic and metric of the kernel equals the reference: 1e-12 relative (×κ² for NC1, whose
    terms divide by the squared singular values), NaN exactly where the reference has NaN."""
    ok, means, mu_G, sigma_W, sigma_B, class_var, out = got
    st, summ = ref
    assert ok
    for a, b in ((means, st.means), (mu_G, st.global_mean), (sigma_W, st.sigma_W), (sigma_B, st.sigma_B)):
        assert np.max(np.abs(a - b)) <= 1e-12 * np.max(np.abs(b)) + 1e-300
    assert np.max(np.abs(class_var - st.class_var)) <= 1e-12 * np.max(np.abs(st.class_var)) + 1e-300
    for key, value in zip(nk.KEYS, out[: len(summ)]):
        r = summ[key]
        if math.isnan(r):
            assert math.isnan(value), key
            continue
        rtol = 1e-12 * max(1.0, kappa**2 / 1e3) if key == "nc1" else 1e-12
        assert abs(value - r) <= rtol * abs(r) + (2e-14 if key in BOUNDED else 0.0), (key, value, r)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    K=st.integers(2, 9),
    d=st.integers(1, 24),
    log2_scale=st.integers(-150, 150),
    spread=st.sampled_from([1e-4, 1e-2, 1.0]),
    with_W=st.booleans(),
    upper=st.booleans(),
)
def test_statistics_and_summary_equal_the_reference_over_sizes_and_scales(
    seed, K, d, log2_scale, spread, with_W, upper
):
    H, y, W = _features(seed, K, d, spread=spread, scale=2.0**log2_scale)
    moments = _moments(H, y, K)
    W = W if with_W else None
    _assert_same(_kernel(moments, W, upper), _reference(moments, W), _condition(_means(moments)))


@pytest.mark.parametrize(
    "case",
    [
        dict(K=5, d=8),  # d > K − 1
        dict(K=10, d=3),  # d < K − 1: Σ_B of rank d
        dict(K=2, d=1),
        dict(K=6, d=12, offset=1e4),  # a large common offset (the centring cancels)
        dict(K=5, d=12, spread=1e-7),  # nearly collapsed classes
        dict(K=32, d=40),  # JACOBI_MAX_K classes
    ],
    ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()),
)
def test_statistics_and_summary_equal_the_reference_on_named_cases(case):
    H, y, W = _features(3, **case)
    K = case["K"]
    moments = _moments(H, y, K)
    for Wc in (W, None):
        _assert_same(_kernel(moments, Wc), _reference(moments, Wc), _condition(_means(moments)))


def test_a_shift_far_from_the_means_gives_the_same_statistics():
    """Any per-class shift (here the origin, far from means at 1e4) is allowed; the within scatter is invariant."""
    H, y, W = _features(4, 5, 6, offset=10.0)
    moments = _moments(H, y, 5, shift=np.zeros((5, 6)))
    _assert_same(_kernel(moments, W), _reference(moments, W))


def test_the_upper_triangle_alone_is_read():
    H, y, W = _features(5, 4, 7)
    counts, sums, scatter, sq, shift = _moments(H, y, 4)
    garbage = np.triu(scatter) + np.tril(np.full((7, 7), 1e30), -1)
    got = nk.statistics_and_summary(counts, sums, garbage, sq, shift, True, W)
    _assert_same(got, _reference((counts, sums, scatter, sq, shift), W))


def test_nc1_of_ill_conditioned_means_matches_a_50_digit_oracle():
    """Means spread over six orders of magnitude: kernel (Jacobi) and reference (LAPACK) NC1 both lie within
    their conditioning of the exact tr(Σ_W Σ_B⁺)/K of the same statistics."""
    rng = np.random.default_rng(1)
    K, d = 6, 8
    base = rng.standard_normal((K, d)) * 10.0 ** np.linspace(-4, 2, K)[:, None]
    y = np.repeat(np.arange(K), 9)
    H = base[y] + 0.3 * rng.standard_normal((y.size, d))
    moments = _moments(H, y, K)
    st, summ = _reference(moments, None)
    got = _kernel(moments, None)
    with mp.workdps(50):
        M = mp.matrix(st.means.tolist())
        mu = [mp.fsum(M[k, j] for k in range(K)) / K for j in range(d)]
        Mc = mp.matrix([[M[k, j] - mu[j] for j in range(d)] for k in range(K)])
        _, s, V = mp.svd_r(Mc)
        SW = mp.matrix(st.sigma_W.tolist())
        exact = mp.fsum(
            mp.fsum(V[i, a] * SW[a, b] * V[i, b] for a in range(d) for b in range(d)) / s[i] ** 2 for i in range(K - 1)
        )
    kappa2 = float(s[0] / s[K - 2]) ** 2
    for value in (got[6][0], summ["nc1"]):
        assert abs(value - float(exact)) <= 10 * np.finfo(float).eps * kappa2 * float(exact)


def test_jacobi_singular_values_and_subspaces_equal_numpys_svd():
    rng = np.random.default_rng(2)
    for K, d in ((3, 5), (8, 8), (12, 4), (32, 40)):
        Mc = rng.standard_normal((K, d)) * 10.0 ** rng.uniform(-2, 2, (K, 1))
        ok, s, V = nk._singular_rows(Mc)
        s_ref, Vt = np.linalg.svd(Mc, full_matrices=False)[1:]
        assert ok
        # LAPACK's singular values are accurate to ~eps·s_max (Jacobi's to ~eps·s_i, see below)
        assert np.allclose(s, s_ref, rtol=1e-13, atol=50 * np.finfo(float).eps * s_ref[0])
        r = min(K, d) - 1  # projectors onto the leading subspaces (unique where the gap is clear)
        assert np.allclose(V[:, :r] @ V[:, :r].T, Vt[:r].T @ Vt[:r], atol=1e-12)


def _assert_orthogonal_rows_with_singular_values_of(R, M):
    G = R @ R.T
    n = np.sqrt(np.diag(G))
    off = np.abs(G - np.diag(np.diag(G)))
    assert (off <= 4 * np.finfo(float).eps * np.outer(n, n)).all()
    np.testing.assert_allclose(np.sort(n)[::-1], np.linalg.svd(M, compute_uv=False), rtol=1e-13)


def test_jacobi_rows_converge_to_orthogonal_rows_of_the_singular_values():
    """R = ΣVᵀ up to the row order: mutually orthogonal rows (to eps) whose norms are the singular values."""
    M = np.random.default_rng(28).standard_normal((6, 8))
    R = M.copy()
    assert nk._jacobi_rows(R)
    _assert_orthogonal_rows_with_singular_values_of(R, M)


def test_jacobi_rotates_every_non_orthogonal_pair_of_a_sweep():
    """Rows e_1, e_2, e_1 + e_3: the pairs (1, 2) and (2, 3) are orthogonal, (1, 3) is not (⟨r_1, r_3⟩ = 1):
    it is rotated too, after an orthogonal pair of the same row was skipped."""
    M = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 0.0, 1.0]])
    R = M.copy()
    assert nk._jacobi_rows(R)
    _assert_orthogonal_rows_with_singular_values_of(R, M)


def test_without_W_the_classifier_entries_stay_nan():
    H, y, _ = _features(29, 3, 4)
    out = _kernel(_moments(H, y, 3), None)[-1]
    assert out.dtype == np.float64 and np.isnan(out[8:]).all() and np.isfinite(out[:8]).all()


def test_jacobi_singular_values_of_graded_rows_have_full_relative_accuracy():
    """Rows scaled from 1 down to 1e-10: every singular value to 1e-13 relative of the 50-digit SVD (the
    property of one-sided Jacobi that a bidiagonalising SVD does not have)."""
    rng = np.random.default_rng(3)
    Mc = rng.standard_normal((6, 9)) * 10.0 ** np.linspace(0, -10, 6)[:, None]
    ok, s, _ = nk._singular_rows(Mc)
    assert ok
    with mp.workdps(50):
        exact = sorted((float(x) for x in mp.svd_r(mp.matrix(Mc.tolist()), compute_uv=False)), reverse=True)
    np.testing.assert_allclose(s, exact, rtol=1e-13)


def test_more_classes_than_jacobi_max_k_are_left_to_the_reference():
    K = nk.JACOBI_MAX_K + 1
    H, y, W = _features(16, K, 40)
    moments = _moments(H, y, K)
    assert not _kernel(moments, W)[0]
    st, summ = metrics.nc_summary_from_moments(*moments, W)
    assert summ == _reference(moments, W)[1]


@pytest.mark.parametrize("log2_scale", [-300, -230, 230, 300])
def test_extreme_scales_are_left_to_the_reference(log2_scale):
    """Beyond 2^±200 the kernel declines; nc_summary_from_moments then returns the reference itself (bitwise)."""
    H, y, W = _features(6, 5, 6, scale=2.0**log2_scale)
    moments = _moments(H, y, 5)
    assert not _kernel(moments, W)[0]
    st, summ = metrics.nc_summary_from_moments(*moments, W)
    st_r, summ_r = _reference(moments, W)
    np.testing.assert_array_equal(st.sigma_W, st_r.sigma_W)
    assert summ == pytest.approx(summ_r, rel=0, abs=0, nan_ok=True)


@pytest.mark.parametrize("log2_scale", [-190, 190])
def test_scales_inside_the_range_are_computed_by_the_kernel(log2_scale):
    H, y, W = _features(7, 4, 5, scale=2.0**log2_scale)
    moments = _moments(H, y, 4)
    _assert_same(_kernel(moments, W), _reference(moments, W))


def _with_exponent(A, e):
    """A rescaled by a power of two so that its largest |entry| lies in [2^(e−1), 2^e)."""
    return A * 2.0 ** (e - math.frexp(np.abs(A).max())[1])


@pytest.mark.parametrize("which", ["sums", "shift", "scatter", "sq"])
@pytest.mark.parametrize("inside", [True, False])
def test_each_moment_alone_sets_the_rescaling_range(which, inside):
    """The rescaling exponent is the largest of the first moments' exponents and half (rounded up) of the second
    moments': one moment alone at exponent 200 (first) or 400 (second) is computed, at 201 or 401 declined."""
    H, y, _ = _features(25, 3, 4)
    moments = dict(zip(("counts", "sums", "scatter", "sq", "shift"), _moments(H, y, 3)))
    e = (200 if which in ("sums", "shift") else 400) + (0 if inside else 1)
    moments[which] = _with_exponent(moments[which], e)
    m = moments
    got = nk.statistics_and_summary(m["counts"], m["sums"], m["scatter"], m["sq"], m["shift"], False, np.empty((0, 4)))
    assert got[0] == inside


@pytest.mark.parametrize("which", ["scatter", "sq"])
def test_statistics_are_the_references_bit_for_bit_at_an_odd_second_moment_exponent(which):
    """A second moment setting the exponent with an odd exponent of its own (11: e = 6, not 5.5): the
    statistics equal class_statistics_from_moments to the rounding of the summation order."""
    H, y, _ = _features(26, 3, 4)
    moments = dict(zip(("counts", "sums", "scatter", "sq", "shift"), _moments(H, y, 3)))
    moments[which] = _with_exponent(moments[which], 11)
    moments = tuple(moments[k] for k in ("counts", "sums", "scatter", "sq", "shift"))
    ok, means, mu_G, sigma_W, _, class_var, _ = _kernel(moments, None)
    st = metrics.class_statistics_from_moments(*moments)
    assert ok
    for a, b in ((means, st.means), (mu_G, st.global_mean), (sigma_W, st.sigma_W), (class_var, st.class_var)):
        # the same exact rescalings; the kernel's own summation order leaves rounding differences only
        np.testing.assert_allclose(a, b, rtol=2e-15, atol=2e-15 * np.abs(b).max())


@pytest.mark.parametrize(("e1", "inside"), [(200, True), (201, False)])
def test_summary_of_means_at_the_range_edge(e1, inside):
    """summary alone (as statistics_and_summary never calls it on such means): class means with exponent 200
    are computed, 201 declined, whatever the exponent of their centred rows."""
    rng = np.random.default_rng(27)
    means = _with_exponent(1.0 + 2.0**-20 * rng.standard_normal((3, 4)), e1)  # centred rows at 2^(e1−20)
    out = np.full(len(nk.KEYS), np.nan)
    A = rng.standard_normal((4, 4))
    assert nk.summary(means, A @ A.T, np.ones(3), np.empty((0, 4)), out) == inside


@pytest.mark.parametrize("e1", [200, 199])
def test_summary_of_centred_means_at_the_range_edge(e1):
    """Centred class means (their own centring exponent 0 or 1) with exponent 200 or 199: total exponent
    e = 200 is computed (a bound, not excluded)."""
    means = np.array([[0.75, -0.5], [-0.75, 0.5]]) * 2.0 ** (e1 - 0)
    out = np.full(len(nk.KEYS), np.nan)
    assert nk.summary(means, np.eye(2), np.ones(2), np.empty((0, 2)), out)
    assert np.isfinite(out[:8]).all()


@pytest.mark.parametrize(("exponent", "inside"), [(200, True), (201, False)])
def test_a_classifier_alone_at_the_range_edge(exponent, inside):
    """W (alone: the features at unit scale) with largest entry in [2^(e−1), 2^e): computed for e = 200, equal to
    the reference; declined for e = 201."""
    H, y, W = _features(9, 4, 5)
    W = W * 2.0 ** (exponent - math.frexp(np.abs(W).max())[1])
    moments = _moments(H, y, 4)
    got = _kernel(moments, W)
    if inside:
        _assert_same(got, _reference(moments, W))
    else:
        assert not got[0]


@pytest.mark.parametrize("unit", ["W", "means"])
def test_nc3_where_a_unit_scaled_norm_is_exactly_one(unit):
    """‖W·2^-e‖_F or ‖M̃·2^-e‖_F exactly 1 (entries ±0.5) is an ordinary value of NC3, not a zero norm."""
    half = 0.5 * np.array([[1.0, 1.0], [-1.0, -1.0]])
    other = np.array([[0.75, -0.25], [-0.5, 0.3125]])
    means, W = (other, half) if unit == "W" else (half, other)
    H, y = means, np.arange(2)
    moments = _moments(H, y, 2)
    got = _kernel(moments, W)
    assert np.isfinite(got[-1][12])
    _assert_same(got, _reference(moments, W))


def test_centring_is_exact_for_rows_sharing_a_large_offset():
    """Rows c + δ_i with δ ~ 2^-30·c: the first row subtracted first makes the differences exact, so the centred
    rows equal the exact rational ones to a few ulps of δ (adding instead of subtracting loses 30 bits)."""
    rng = np.random.default_rng(16)
    M = 0.75 + 2.0**-30 * rng.standard_normal((5, 4))
    out = np.empty_like(M)
    e = nk._centred_unit(M, out)
    F = [[Fraction(x) for x in row] for row in M.tolist()]
    exact = [[F[i][j] - sum(F[k][j] for k in range(5)) / 5 for j in range(4)] for i in range(5)]
    exact = np.array([[float(x) for x in row] for row in exact])
    np.testing.assert_allclose(out * 2.0**e, exact, rtol=0, atol=1e-14 * np.abs(exact).max())


def test_centring_takes_the_references_steps_bit_for_bit():
    """As fctheory.metrics.nc._centred_unit: the first row subtracted, then the mean, then the rescaling."""
    rng = np.random.default_rng(17)
    for K, d in ((2, 3), (5, 7), (12, 4)):
        M = 0.3 * rng.standard_normal((K, d)) + 0.6 * rng.standard_normal(d)
        out = np.empty((K, d))
        e = nk._centred_unit(M, out)
        ref, e_ref = metrics.nc._centred_unit(np, M, True, with_exponent=True)
        assert e == e_ref
        np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("where", ["sums", "scatter", "sq", "shift", "W"])
@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_non_finite_inputs_are_declined(where, bad):
    H, y, W = _features(8, 3, 4)
    counts, sums, scatter, sq, shift = _moments(H, y, 3)
    arrays = dict(sums=sums, scatter=scatter, sq=sq, shift=shift, W=W)
    arrays[where] = arrays[where].copy()
    arrays[where].flat[1] = bad
    a = arrays
    assert not nk.statistics_and_summary(counts, a["sums"], a["scatter"], a["sq"], a["shift"], False, a["W"])[0]


def test_an_empty_class_is_declined():
    H, y, _ = _features(9, 3, 4)
    counts, sums, scatter, sq, shift = _moments(H, y, 3)
    counts[1] = 0
    assert not nk.statistics_and_summary(counts, sums, scatter, sq, shift, False, np.empty((0, 4)))[0]


def _direct_moments(means, seed, n=3):
    """Moments whose class means are exactly ``means`` (each class shifted by its mean, zero sums) and whose
    within-class scatter is a random positive definite matrix."""
    rng = np.random.default_rng(seed)
    K, d = means.shape
    A = rng.standard_normal((d, d + 2))
    counts = np.full(K, n)
    return counts, np.zeros((K, d)), A @ A.T, rng.uniform(1.0, 2.0, K), means.copy()


@pytest.mark.parametrize("ratio", [0.9, 1.05])  # 1.05: between the cut-off 10 and 11
def test_nc1_keeps_a_singular_value_exactly_above_its_cut_off(ratio):
    """Centred means with singular values s_1 and t = ratio·10·max(K, d)·eps·s_1: the direction of t is kept
    (NC1 dominated by its 1/t² term) for ratio 1.05 and dropped for 0.9, as in the reference."""
    K, d = 3, 64
    rng = np.random.default_rng(19)
    U = np.linalg.qr(np.column_stack([np.ones(K), rng.standard_normal((K, 2))]))[0][:, 1:]  # columns ⊥ 1
    V = np.linalg.qr(rng.standard_normal((d, 2)))[0]
    s1 = 0.9
    t = ratio * 10.0 * max(K, d) * np.finfo(float).eps * s1
    moments = _direct_moments(s1 * np.outer(U[:, 0], V[:, 0]) + t * np.outer(U[:, 1], V[:, 1]), 20)
    got, ref = _kernel(moments, None), _reference(moments, None)
    one_term = got[3][:, :] @ V[:, 0] @ V[:, 0] / s1**2  # v_1ᵀ Σ_W v_1 / s_1² (≥ NC1 when t is dropped)
    assert (got[-1][0] > 1e20 * one_term) == (ratio > 1.0)
    _assert_same(got, ref, kappa=s1 / t)  # the 1/t² term: t itself carries a relative error ~eps·s_1/t


@pytest.mark.parametrize("unit", ["means", "W"])
def test_rows_of_norm_exactly_one_are_ordinary(unit):
    """Rows of (unit-scaled) norm exactly 1 (entries ±0.5 in four columns): every metric as in the reference,
    none taken for a zero-norm row."""
    # centred rows (they sum to 0) of rank K − 1 = 3, each of norm exactly 1: the same after centring
    half = 0.5 * np.array(
        [[1.0, 1.0, 1.0, 1.0], [1.0, -1.0, -1.0, 1.0], [-1.0, 1.0, -1.0, -1.0], [-1.0, -1.0, 1.0, -1.0]]
    )
    other = np.array(
        [[0.75, -0.25, 0.5, 0.125], [-0.5, 0.3125, 0.25, -0.75], [0.1, 0.2, -0.6, 0.4], [0.3, -0.7, 0.2, 0.05]]
    )
    means, W = (half, other) if unit == "means" else (other, half)
    moments = _direct_moments(means, 21)
    got = _kernel(moments, W)
    assert np.isfinite(got[-1]).all()
    _assert_same(got, _reference(moments, W))


def test_equinorm_of_nearly_equal_norms_matches_a_50_digit_oracle():
    """Centred means whose norms differ by ~1e-7 (coefficient of variation ~1e-7): the kernel's equinorm to 1e-7
    relative of the exact value (Σ‖μ‖² − K·mean² instead of Σ(‖μ‖ − mean)² would lose half the digits)."""
    K, d = 7, 9
    rng = np.random.default_rng(22)
    E = np.eye(K, d) - np.eye(K, d).mean(axis=0)  # centred rows of equal norm
    means = E * (1.0 + 1e-7 * rng.standard_normal(K))[:, None]
    got = _kernel(_direct_moments(means, 23), None)
    with mp.workdps(50):
        M = [[mp.mpf(float(x)) for x in row] for row in means]
        mu = [mp.fsum(M[k][j] for k in range(K)) / K for j in range(d)]
        nr = [mp.sqrt(mp.fsum((M[k][j] - mu[j]) ** 2 for j in range(d))) for k in range(K)]
        mean = mp.fsum(nr) / K
        cv = mp.sqrt(mp.fsum((x - mean) ** 2 for x in nr) / K) / mean
    assert abs(got[-1][4] - float(cv)) <= 1e-7 * float(cv)


def test_the_full_scatter_is_read_in_both_triangles():
    """upper=False with a scatter whose two triangles differ (as a sum of rounded products may): Σ_W averages
    them, as the reference does."""
    H, y, W = _features(24, 3, 4)
    counts, sums, scatter, sq, shift = _moments(H, y, 3)
    scatter = scatter + np.tril(np.full((4, 4), 1e-3), -1)
    moments = (counts, sums, scatter, sq, shift)
    _assert_same(_kernel(moments, W), _reference(moments, W))


def test_undefined_metrics_are_nan_as_in_the_reference():
    """Coinciding class means (NC1, CDNV, NC2 … undefined) and a zero classifier (its entries undefined)."""
    rng = np.random.default_rng(10)
    y = np.repeat(np.arange(3), 4)
    A = rng.standard_normal((6, 5))
    H = np.concatenate([np.stack([A[2 * k], -A[2 * k], A[2 * k + 1], -A[2 * k + 1]]) for k in range(3)])
    assert (np.stack([H[y == k].sum(axis=0) for k in range(3)]) == 0).all()  # rows ±a: every mean exactly 0
    moments = _moments(H, y, 3, shift=np.zeros((3, 5)))
    W = np.zeros((3, 5))
    got, ref = _kernel(moments, W), _reference(moments, W)
    assert math.isnan(ref[1]["nc1"]) and math.isnan(ref[1]["nc2_W"])
    _assert_same(got, ref)


def test_nc_summary_from_moments_runs_the_kernel_on_host_moments(monkeypatch):
    calls = []
    kernel = nk.statistics_and_summary

    def spy(*args):
        calls.append(1)
        return kernel(*args)

    monkeypatch.setattr(nk, "statistics_and_summary", spy)
    H, y, W = _features(11, 4, 5)
    moments = _moments(H, y, 4)
    st, summ = metrics.nc_summary_from_moments(*moments, W)
    assert calls == [1]
    out = np.array([summ[key] for key in nk.KEYS])
    _assert_same((True, st.means, st.global_mean, st.sigma_W, st.sigma_B, st.class_var, out), _reference(moments, W))
    torch = pytest.importorskip("torch", reason="needs torch: pip install 'fctheory[torch]'")
    as_t = [torch.as_tensor(a) for a in moments]
    st_t, summ_t = metrics.nc_summary_from_moments(*as_t, torch.as_tensor(W))
    assert calls == [1]  # tensors: the reference path, on their device
    assert summ_t == pytest.approx(summ, rel=1e-12, abs=2e-14)


def test_nc_summary_from_moments_runs_the_kernel_without_a_classifier(monkeypatch):
    calls = []
    kernel = nk.statistics_and_summary
    monkeypatch.setattr(nk, "statistics_and_summary", lambda *args: calls.append(1) or kernel(*args))
    H, y, _ = _features(12, 4, 5)
    _, summ = metrics.nc_summary_from_moments(*_moments(H, y, 4))
    assert calls == [1] and set(summ) == set(nk.KEYS[:8])


def test_nc_summary_from_moments_reads_the_whole_scatter_by_default():
    """upper defaults to False: a scatter whose lower triangle differs from the upper one (a rounded
    accumulation may give one) is averaged over both, as class_statistics_from_moments does."""
    H, y, W = _features(30, 3, 4)
    counts, sums, scatter, sq, shift = _moments(H, y, 3)
    scatter = scatter + np.tril(np.full((4, 4), 1e-3), -1)
    st, _ = metrics.nc_summary_from_moments(counts, sums, scatter, sq, shift, W)
    ref = metrics.class_statistics_from_moments(counts, sums, scatter, sq, shift)
    np.testing.assert_allclose(st.sigma_W, ref.sigma_W, rtol=1e-13, atol=1e-15)


def test_nc_summary_from_moments_refuses_what_the_reference_refuses():
    H, y, W = _features(12, 3, 4)
    counts, sums, scatter, sq, shift = _moments(H, y, 3)
    with pytest.raises(FCTheoryError, match="class 2 is empty"):
        metrics.nc_summary_from_moments(np.array([4, 3, 0]), sums, scatter, sq, shift)
    with pytest.raises(FCTheoryError, match=r"\bW\b"):
        metrics.nc_summary_from_moments(counts, sums, scatter, sq, shift, W[:, :3])
    bad = sums.copy()
    bad[0, 0] = math.nan
    with pytest.raises(FCTheoryError, match="sums"):
        metrics.nc_summary_from_moments(counts, bad, scatter, sq, shift)


# ----------------------------------------------------------------------------- the UFM distances' norms
def _norms_oracle(M, W, b, GM, GW, bs):
    return [
        np.linalg.norm(M @ M.T - GM),
        np.linalg.norm(GM),
        np.linalg.norm(W @ W.T - GW),
        np.linalg.norm(GW),
        float(np.sum(W * W)),
        np.linalg.norm(b - bs),
    ]


def test_ufm_norms_equal_numpy():
    rng = np.random.default_rng(13)
    M, W, GM, GW = (rng.standard_normal(s) for s in ((5, 7), (5, 7), (5, 5), (5, 5)))
    b, bs = rng.standard_normal(5), rng.standard_normal(5)
    out = np.full(6, np.nan)
    assert nk.ufm_norms(M, W, b, GM, GW, bs, out)
    np.testing.assert_allclose(out, _norms_oracle(M, W, b, GM, GW, bs), rtol=1e-14)


def test_ufm_norms_skip_an_absent_classifier_and_bias():
    rng = np.random.default_rng(14)
    M, GM = rng.standard_normal((4, 3)), rng.standard_normal((4, 4))
    out = np.full(6, np.nan)
    assert nk.ufm_norms(M, np.empty((0, 3)), np.empty(0), GM, GM, np.empty(0), out)
    assert np.isfinite(out[:2]).all() and np.isnan(out[2:]).all()


@pytest.mark.parametrize(
    ("value", "inside"), [(2.0**200, True), (2.0**201, False), (2.0**-200, True), (2.0**-201, False), (math.nan, False)]
)
def test_ufm_norms_range(value, inside):
    """The largest entry of each input must lie in [2^-200, 2^200] (or the input be 0)."""
    M = np.full((2, 2), value)
    out = np.full(6, np.nan)
    assert (
        nk.ufm_norms(M, np.empty((0, 2)), np.empty(0), np.zeros((2, 2)), np.zeros((2, 2)), np.empty(0), out) == inside
    )


@pytest.mark.parametrize("where", range(6))
def test_ufm_norms_decline_when_any_one_input_is_outside_the_range(where):
    """M, W, b, GM, GW, b*: one of them with an entry 2^201 (the others at unit scale) and the kernel declines."""
    rng = np.random.default_rng(15)
    args = [rng.standard_normal(s) for s in ((3, 4), (3, 4), (3,), (3, 3), (3, 3), (3,))]
    args[where].flat[1] = 2.0**201
    assert not nk.ufm_norms(*args, np.full(6, np.nan))


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("scale", [1.0, 2.0**-190, 2.0**230])
def test_ufm_distances_kernel_and_reference_norms_agree(bias, scale, monkeypatch):
    H, y, W = _features(15, 4, 6, scale=scale)
    st_ = feature_statistics(H, y)
    opt = ufm.ce(K=4, n_spl=5, lam_W=1e-3, lam_H=1e-3, bias=bias)
    b = np.linspace(-1.0, 1.0, 4) * scale if bias else None
    got = ufm_distances(st_, W, b, opt, n_spl=5)
    monkeypatch.setattr(nc_stats, "_kernel_norms", lambda *a: None)
    ref = ufm_distances(st_, W, b, opt, n_spl=5)
    assert got.keys() == ref.keys()
    assert got == pytest.approx(ref, rel=1e-13)


# ----------------------------------------------------------------------------- the monitor's epoch call
@pytest.mark.parametrize("with_W", [True, False])
@pytest.mark.parametrize("bias", [True, False])
def test_epoch_numbers_equal_the_public_functions(with_W, bias):
    """One call for the statistics, the metrics, the UFM norms and ‖H‖² (the scatter's upper triangle alone),
    equal to nc_summary_from_moments, ufm_distances and ClassStatistics.H_norm_sq on the same moments."""
    K, d = 5, 6
    H, y, Wr = _features(17, K, d)
    counts, sums, scatter, sq, shift = _moments(H, y, K)
    W = Wr if with_W else None
    b = np.linspace(-1.0, 1.0, K) if (with_W and bias) else None
    n_spl = int(counts.min())
    opt = ufm.ce(K=K, n_spl=n_spl, lam_W=1e-3, lam_H=1e-3, bias=bias)
    none2, none1 = np.empty((0, d)), np.empty(0)
    got = nk.epoch_numbers(
        counts,
        sums,
        np.triu(scatter),
        sq,
        shift,
        True,
        none2 if W is None else W,
        none1 if b is None else b,
        opt.means_gram,
        opt.W_gram,
        none1 if b is None else opt.bias,
    )
    ok, means, _, sigma_W, _, _, summary, norms, h_norm_sq = got
    assert ok
    st_, summ = metrics.nc_summary_from_moments(counts, sums, scatter, sq, shift, W)
    np.testing.assert_allclose(means, st_.means, rtol=1e-14)
    np.testing.assert_allclose(sigma_W, st_.sigma_W, rtol=1e-13, atol=1e-15)
    assert dict(zip(summ, summary)) == pytest.approx(summ, rel=1e-14, nan_ok=True)
    assert h_norm_sq == pytest.approx(st_.H_norm_sq, rel=1e-14)
    dist = nc_stats.distances_from_kernel_norms(
        norms, h_norm_sq / st_.N, opt, K=K, n_spl=n_spl, W=with_W, b=b is not None
    )
    assert dist == pytest.approx(ufm_distances(st_, W, b, opt, n_spl=n_spl), rel=1e-13)


def test_upper_moments_of_another_library_take_the_reference_path_on_their_device():
    torch = pytest.importorskip("torch", reason="needs torch: pip install 'fctheory[torch]'")
    H, y, W = _features(18, 4, 5)
    counts, sums, scatter, sq, shift = _moments(H, y, 4)
    upper = [
        torch.as_tensor(a) for a in (counts, sums, np.triu(scatter) + np.tril(np.full((5, 5), 9.0), -1), sq, shift)
    ]
    st_t, summ_t = metrics.nc_summary_from_moments(*upper, torch.as_tensor(W), upper=True)
    _, summ = metrics.nc_summary_from_moments(counts, sums, scatter, sq, shift, W)
    assert isinstance(st_t.means, torch.Tensor)
    assert summ_t == pytest.approx(summ, rel=1e-12, abs=2e-14)


def test_the_kernel_path_keeps_the_budget_of_nc_summary():
    from fctheory import budget

    H, y, _ = _features(19, 4, 5)
    moments = _moments(H, y, 4)
    with budget(max_bytes=100), pytest.raises(FCTheoryError) as err:
        metrics.nc_summary_from_moments(*moments)
    assert str(err.value).startswith(
        "st='statistics of K = 4 classes' is invalid: nc_summary (K x K Gram and pair matrices) needs about "
    )


def test_a_classifier_of_another_width_is_refused_with_the_whole_message():
    H, y, W = _features(20, 3, 4)
    with pytest.raises(FCTheoryError) as err:
        metrics.nc_summary_from_moments(*_moments(H, y, 3), W[:, :3])
    assert str(err.value) == "W='array of shape (3, 3)' is invalid: must have shape (K, d) = (3, 4) like the statistics"
