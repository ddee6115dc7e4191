"""Input validation of fctheory.metrics and fctheory.ufm: every bad input refused cleanly, valid extremes right.

One test per root cause. Each test fails on the code before the fix (NaN at M·1e300, wrapped negative
labels, LinAlgError/ValueError/UnboundLocalError escaping, unbounded allocations, overflow at extreme λ).
Oracles are independent of the code under test: mpmath at high precision, exact power-of-two
rescalings, explicit projections, naive loops.
"""

import math
import time
import tracemalloc

import mpmath as mp
import numpy as np
import pytest

import fctheory as fc
from fctheory import FCTheoryError, metrics, ufm
from fctheory.metrics import (
    NCAccumulator,
    cdnv,
    class_statistics,
    distance_to_type1,
    distance_to_type2,
    distance_to_type3,
    equiangularity,
    equinorm,
    frame_alignment,
    nc1,
    nc2,
    nc3,
    nc4,
    within_concept_spread,
)

REL = 1e-12


def _data(seed=0, K=4, m=6, n=5):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(K), n)
    H = 3.0 * rng.standard_normal((K, m))[y] + rng.standard_normal((K * n, m))
    W = rng.standard_normal((K, m))
    return H, y, W


H0, Y0, W0 = _data()
M0 = class_statistics(H0, Y0).means
TASK = fc.Task.random(3, 2, 2, 5, seed=0)
_rng = np.random.default_rng(3)
WT = _rng.standard_normal((4, TASK.n_w))
UT = _rng.standard_normal((TASK.K, TASK.L * 4))


def _acc(s):
    return NCAccumulator(4, 6).update(H0[:7] * s, Y0[:7]).update(H0[7:] * s, Y0[7:])


# every scale-invariant quantity, as a function of the scale s applied to its inputs
SCALE_INVARIANT = {
    "nc1 papyan": lambda s: nc1(H0 * s, Y0),
    "nc1 trace_ratio": lambda s: nc1(H0 * s, Y0, variant="trace_ratio"),
    "cdnv": lambda s: cdnv(H0 * s, Y0),
    "cdnv matrix": lambda s: cdnv(H0 * s, Y0, matrix=True)[1, 2],
    **{f"nc2 {v}": (lambda v: lambda s: nc2(M0 * s, variant=v))(v) for v in ("etf", "identity", "zhu", "cosine")},
    "equinorm": lambda s: equinorm(M0 * s),
    "equiangularity max_angle": lambda s: equiangularity(M0 * s),
    "equiangularity std": lambda s: equiangularity(M0 * s, variant="std"),
    **{
        f"nc3 {v}": (lambda v: lambda s: nc3(W0 * s, H0 * s, Y0, variant=v))(v)
        for v in ("duality", "duality_squared", "etf", "cosine")
    },
    "nc3 W and H scaled apart": lambda s: nc3(W0 / s, H0 * s, Y0),
    "nc4": lambda s: nc4(W0 * s, H0 * s, Y0),
    "accumulator nc1": lambda s: _acc(s).nc1(),
    "accumulator cdnv": lambda s: _acc(s).cdnv(),
    "accumulator nc2": lambda s: _acc(s).nc2(),
    "accumulator nc3": lambda s: _acc(s).nc3(W0 * s),
    "within_concept_spread": lambda s: within_concept_spread(TASK, WT * s).spread,
    "within_concept_spread angular": lambda s: within_concept_spread(TASK, WT * s).angular_spread,
    "within_concept_spread layernorm": lambda s: within_concept_spread(TASK, WT * s, True).spread,
    "frame_alignment distance": lambda s: frame_alignment(TASK, WT * s).distance,
    "frame_alignment cosines": lambda s: frame_alignment(TASK, WT * s).max_cosine_error,
    "frame_alignment norm_cv": lambda s: frame_alignment(TASK, WT * s).norm_cv,
    "frame_alignment layernorm": lambda s: frame_alignment(TASK, WT * s, True).distance,
    "distance_to_type1": lambda s: distance_to_type1(TASK, WT * s, UT * s).distance,
    "distance_to_type2 (phi(W) is scale free)": lambda s: distance_to_type2(TASK, WT * s, UT).distance,
    "distance_to_type3": lambda s: distance_to_type3(TASK, WT * s, UT * s).distance,
    "nc1_tilde": lambda s: ufm.nc1_tilde(H0.T * s, K=4),
    "layernorm_features": lambda s: ufm.layernorm_features(H0 * s)[2, 3],
}


@pytest.mark.parametrize("name", sorted(SCALE_INVARIANT))
def test_scale_invariant_metrics_rescale_first(name):
    f = SCALE_INVARIANT[name]
    ref = f(1.0)
    assert np.isfinite(ref) and ref != 0
    for s in (1e300, 1e-300):
        assert f(s) == pytest.approx(ref, rel=REL), s


def test_power_of_two_rescaling_is_exact():
    # 2^900 and 2^-900 multiply exactly: the rescaled metrics must agree to the last bit
    for s in (2.0**900, 2.0**-900):
        assert nc1(H0 * s, Y0) == nc1(H0, Y0)
        assert nc2(M0 * s) == nc2(M0)


def test_class_statistics_scale_back_exactly():
    st = class_statistics(H0 * 2.0**500, Y0)
    ref = class_statistics(H0, Y0)
    np.testing.assert_array_equal(st.means, ref.means * 2.0**500)
    assert np.allclose(st.sigma_W / 2.0**1000, ref.sigma_W, rtol=1e-14, atol=0)
    with pytest.raises(FCTheoryError, match="H=.*overflows"):
        class_statistics(H0 * 1e300, Y0)  # Σ_W ~ 1e600 is beyond float64: refused, not inf


# ------------------------------------------------------------------------------ labels
def test_negative_labels_are_refused_not_wrapped():
    y = Y0.copy()
    y[3] = -1
    for f in (lambda: nc1(H0, y), lambda: cdnv(H0, y), lambda: nc3(W0, H0, y), lambda: class_statistics(H0, y)):
        with pytest.raises(FCTheoryError, match=r"^y="):
            f()


def test_accumulator_refuses_a_bad_batch_and_keeps_its_state():
    acc = _acc(1.0)
    before = (acc.n.copy(), acc.mean.copy(), acc.scatter.copy())
    y = Y0[:7].copy()
    y[0] = -1  # would wrap to class K−1 with fancy indexing
    with pytest.raises(FCTheoryError, match=r"^y="):
        acc.update(H0[:7], y)
    with pytest.raises(FCTheoryError, match=r"^y="):
        acc.update(H0[:7], np.full(7, 4))  # label K
    with pytest.raises(FCTheoryError, match=r"^H="):
        acc.update(H0[:7, :5], Y0[:7])  # wrong m
    with pytest.raises(FCTheoryError, match=r"^y="):
        acc.update(H0[:7], Y0[:6])  # mismatched lengths
    np.testing.assert_array_equal(acc.n, before[0])
    np.testing.assert_array_equal(acc.mean, before[1])
    np.testing.assert_array_equal(acc.scatter, before[2])
    assert acc.nc1() == pytest.approx(nc1(H0, Y0), rel=REL)


def test_a_huge_label_is_renumbered_not_counted():
    # np.bincount would allocate 10**15 counters: the metrics renumber the classes present instead
    y = Y0.copy()
    y[0] = 10**15
    t = time.perf_counter()
    got = nc1(H0, y)
    assert time.perf_counter() - t < 1.0
    y2 = Y0.copy()
    y2[0] = Y0.max() + 1  # the same classes, numbered densely
    assert got == pytest.approx(nc1(H0, y2), rel=1e-13)


def test_K_inconsistent_with_y_names_K_and_absent_classes_change_nothing():
    with pytest.raises(FCTheoryError, match=r"^K=2 .*smaller"):
        nc1(H0, Y0, K=2)
    assert nc1(H0, Y0, K=100) == pytest.approx(nc1(H0, Y0), rel=1e-13)  # 96 absent classes
    y = np.array([0] * 5 + [2] * 5)  # class 1 absent: the metric of classes {0, 2}
    assert nc1(H0[:10], y) == pytest.approx(nc1(H0[:10], np.array([0] * 5 + [1] * 5)), rel=1e-13)


def test_nc4_with_means_checks_columns_and_labels():
    means = class_statistics(H0, Y0).means
    with pytest.raises(FCTheoryError, match=r"^means="):
        nc4(W0, H0, Y0, means=means[:, :5])
    with pytest.raises(FCTheoryError, match=r"^y="):
        nc4(W0, H0, np.full(len(Y0), 7), means=means)


# ------------------------------------------------------------------------------ degenerate inputs
def test_zero_within_class_scatter_gives_exact_zero():
    H = M0[Y0]  # every feature equals its class mean
    assert nc1(H, Y0) == 0.0 and nc1(H, Y0, variant="trace_ratio") == 0.0 and cdnv(H, Y0) == 0.0


def test_rank_deficient_between_class_scatter_uses_its_range():
    # class means on one line (Σ_B of rank 1): NC1 = uᵀΣ_W u / Σ_k c_k² (explicit projection oracle)
    rng = np.random.default_rng(7)
    K, n, m = 4, 6, 5
    u = rng.standard_normal(m)
    u /= np.linalg.norm(u)
    c = np.array([-3.0, -1.0, 0.5, 3.5])
    y = np.repeat(np.arange(K), n)
    H = (c[:, None] * u)[y] + 0.3 * rng.standard_normal((K * n, m))
    mus = np.array([H[y == k].mean(0) for k in range(K)])
    cc = (mus - mus.mean(0)) @ u  # the collinear part of the centred means
    H = H - ((mus - mus.mean(0)) - np.outer(cc, u))[y]  # make the means exactly collinear
    mus = np.array([H[y == k].mean(0) for k in range(K)])
    cc = (mus - mus.mean(0)) @ u
    SW = sum(np.outer(h - mus[k], h - mus[k]) for h, k in zip(H, y)) / len(y)
    assert nc1(H, y) == pytest.approx(u @ SW @ u / np.sum(cc**2), rel=1e-10)


def test_coinciding_class_means_are_refused_not_nan():
    H = np.ones((8, 3))
    y = np.repeat(np.arange(2), 4)
    for f in (lambda: nc1(H, y), lambda: nc1(H, y, variant="trace_ratio"), lambda: cdnv(H, y), lambda: nc2(H[:2])):
        with pytest.raises(FCTheoryError, match="undefined"):
            f()


def test_layernorm_features_refuse_constant_columns():
    G = np.random.default_rng(0).standard_normal((3, 4))
    G[:, 2] = 5.0
    with pytest.raises(FCTheoryError, match=r"^G=.*column 2 is constant"):
        ufm.layernorm_features(G)


# ------------------------------------------------------------------------------ sizes bounded first
@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: metrics.etf_gram(10**9), "K"),
        (lambda: NCAccumulator(10, 10**6), "d"),
        # the closed-form optima hold their K×K Grams as three numbers (FrameGram): K is bounded by the items budget
        (lambda: ufm.ce(K=10**9, n_spl=5, lam_W=0.1, lam_H=0.1), "K"),
        (lambda: ufm.mse(K=10**9, n_spl=5, lam_W=0.1, lam_H=0.1), "K"),
        (lambda: ufm.max_margin(K=10**6, n_spl=5), "K"),
        (lambda: ufm.solve_ce(K=2, n_spl=10**8, d=2, lam_W=0.1, lam_H=0.1), "n_spl"),
        (lambda: ufm.solve_max_margin(K=3, n_spl=10**9, d=2), "n_spl"),
        (lambda: ufm.convex_ce(K=30, n_spl=50, lam_W=0.1, lam_H=0.1), "n_spl"),
        (lambda: ufm.solve_layernorm_ce(K=60, n_spl=1, d=2, lam=0.1), "K"),  # d = 2 enumerates 2^(K−1) sign patterns
        (lambda: ufm.block_spectra(K=2, n_spl=10**12, d=3, lam_W=0.5, lam_H=0.3, beta=2.0), "n_spl"),
        (lambda: ufm.collapsed_minimizer(K=3, n_spl=10**12, d=4, lam_W=0.5, lam_H=0.3), "n_spl"),
        (lambda: ufm.solve_ce(K=10**400, n_spl=1, d=2, lam_W=0.1, lam_H=0.1), "K"),
    ],
)
def test_sizes_are_checked_before_allocation(call, name):
    t = time.perf_counter()
    with pytest.raises(FCTheoryError, match=rf"^{name}=.*budget"):
        call()
    assert time.perf_counter() - t < 1.0


def test_dense_hessians_are_sized_before_allocation():
    H = np.zeros((50, 400))  # dN = 20000: three dN x dN blocks would be ~10 GB
    with pytest.raises(FCTheoryError, match=r"^H=.*budget"):
        ufm.hessian_blocks(np.zeros((2, 50)), H, K=2, lam_W=0.5, lam_H=0.3, beta=1.0)
    with pytest.raises(FCTheoryError, match=r"^H=.*budget"):
        ufm.first_order_response(np.zeros((2, 50)), H, K=2, lam_W=0.5, lam_H=0.3, beta=1.0)


def test_type2_fit_never_forms_a_d_by_d_basis():
    task = fc.Task.random(3, 2, 2, 4, seed=1)
    d = 4000  # the old explicit basis of 1^⊥ was d x d = 128 MB
    rng = np.random.default_rng(0)
    W, U = rng.standard_normal((d, task.n_w)), rng.standard_normal((task.K, task.L * d))
    tracemalloc.start()
    try:
        distance_to_type2(task, W, U, max_iter=5)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40e6


def test_type2_frames_stay_mean_zero_and_exact():
    # a type-II configuration (mean-zero frame) has distance 0 with the implicit Householder basis
    task = fc.Task.random(3, 2, 2, 4, seed=2)
    W, U = fc.type2_configuration(task, d=5, lam=0.01)
    res = distance_to_type2(task, W, U)
    assert res.distance <= 1e-12
    np.testing.assert_allclose(res.frame.sum(axis=0), 0.0, atol=1e-13)


# ------------------------------------------------------------------------------ iteration controls
def test_frame_alignment_refuses_max_iter_zero():
    with pytest.raises(FCTheoryError, match=r"^max_iter=0 "):
        frame_alignment(TASK, WT, max_iter=0)
    assert frame_alignment(TASK, WT, max_iter=1).distance >= 0.0


# ------------------------------------------------------------------------------ UFM closed forms at extreme λ
mp.mp.dps = 60


def _ce_mp(K, n, lw, lh):
    with mp.workdps(800):  # 1 − (K−1)q must resolve q ~ 1e-300
        q = mp.sqrt(n * mp.mpf(lw) * mp.mpf(lh))
        if K * q >= 1:
            return mp.log(K), mp.mpf(0)
        gap = mp.log(1 / q - (K - 1))
        return -mp.log(1 - (K - 1) * q) + (K - 1) * q * gap, (K - 1) * mp.sqrt(n * mp.mpf(lh) / lw) * gap


@pytest.mark.parametrize(
    "K, n, lw, lh", [(3, 5, 1e-300, 1e-300), (10, 10**30, 1e-200, 1e-150), (4, 2, 1e-300, 1e200), (3, 7, 0.01, 0.02)]
)
def test_ce_closed_form_at_extreme_lambda_matches_mpmath(K, n, lw, lh):
    res = ufm.ce(K=K, n_spl=n, lam_W=lw, lam_H=lh)
    value, rho = _ce_mp(K, n, lw, lh)
    assert res.value == pytest.approx(float(value), rel=REL)
    assert res.W_norm_sq == pytest.approx(float(rho), rel=REL)


def test_ce_and_mse_at_huge_lambda_are_trivial_without_overflow():
    for lam in (1e300, 1.7976931348623157e308):
        c, m = ufm.ce(K=3, n_spl=5, lam_W=lam, lam_H=lam), ufm.mse(K=3, n_spl=5, lam_W=lam, lam_H=lam, bias=True)
        assert c.trivial and c.value == math.log(3) and c.W_norm_sq == 0.0
        assert m.trivial and m.value == pytest.approx(1 / 3, rel=REL)
    c = ufm.ce(K=3, n_spl=5, lam_W=1.7976931348623157e308, lam_H=1.7976931348623157e308)
    assert c.extras["q"] is None and c.extras["log_q"] > 710  # q itself is beyond float64: its log is given


def test_mse_at_tiny_lambda_matches_mpmath():
    res = ufm.mse(K=4, n_spl=3, lam_W=1e-300, lam_H=1e-290)
    Kq = 4 * mp.sqrt(3 * mp.mpf(1e-300) * mp.mpf(1e-290))
    assert res.value == pytest.approx(float(Kq - Kq**2 / 2), rel=REL)


def test_unrepresentable_optimal_norm_is_refused_naming_lambda():
    # ρ* = (K−1)√(nλ_H/λ_W)·gap ~ 1e314: the value is finite, the norm is not representable
    with pytest.raises(FCTheoryError, match=r"^lam_W=.*beyond the float64 range"):
        ufm.ce(K=3, n_spl=5, lam_W=5e-324, lam_H=1e300)


def test_max_margin_takes_sqrt_n_through_logs():
    res = ufm.max_margin(K=3, n_spl=10**400)
    assert res.value == pytest.approx(2e200, rel=REL)
    with pytest.raises(FCTheoryError, match=r"^n_spl="):
        ufm.max_margin(K=3, n_spl=10**700)


def test_norm_constrained_and_output_ball_at_extremes():
    assert ufm.norm_constrained_ce(K=3, Omega_W=1e-300, Omega_H=1e-300).value == pytest.approx(math.log(3), rel=REL)
    assert (
        ufm.norm_constrained_ce(K=3, Omega_W=1e300, Omega_H=1e300).value == 0.0
    )  # e^{-1.5e300} underflows: exact rounding
    assert ufm.output_ball(K=4, R=1e-300).value == pytest.approx(math.log(4), rel=REL)
    with pytest.raises(FCTheoryError, match=r"^R="):
        ufm.output_ball(K=4, R=1e200)  # the R² Gram matrix is beyond float64


def _rho_mp(K, d, lam):
    a = mp.sqrt(d) * K / (K - 1)
    f = lambda r: mp.sqrt(d) / (mp.exp(a * r) + K - 1) - lam * r  # noqa: E731
    lo, hi = mp.mpf(0), mp.sqrt(d) / (lam * K)
    for _ in range(1200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
    return (lo + hi) / 2


@pytest.mark.parametrize("lam", [1e-300, 1e-3, 1e300, 1.7e308])
def test_layernorm_ce_root_at_extreme_lambda_matches_mpmath(lam):
    res = ufm.layernorm_ce(K=3, d=5, lam=lam)
    assert res.extras["rho"] == pytest.approx(float(_rho_mp(3, 5, mp.mpf(lam))), rel=1e-12)
    assert np.isfinite(res.value)


def test_layernorm_mse_never_forms_lambda_K():
    res = ufm.layernorm_mse(K=5, d=6, lam=1.7e308)
    lam = mp.mpf(1.7e308)
    assert res.value == pytest.approx(float(lam * 5 / (2 * (6 + lam * 5))), rel=REL)


def test_collapsed_minimizer_extreme_lambda():
    res = ufm.collapsed_minimizer(K=3, n_spl=2, d=4, lam_W=1e-300, lam_H=1e-10)
    c = mp.sqrt(mp.mpf(1e-300) * mp.mpf(1e-10))
    assert res.rho == pytest.approx(float((1 - c) * mp.sqrt(mp.mpf(1e-300) / mp.mpf(1e-10))), rel=REL)
    with pytest.raises(FCTheoryError, match=r"^lam_H="):
        ufm.collapsed_minimizer(K=3, n_spl=2, d=4, lam_W=1e300, lam_H=5e-324)  # ρ = √(λ_W/λ_H) ~ 1e311


def test_block_spectra_ratios_through_logs():
    res = ufm.block_spectra(K=2, n_spl=2, d=3, lam_W=1e-300, lam_H=1e-10, beta=1e150)
    r_b = mp.sqrt(mp.mpf(1e-10) / mp.mpf(1e-300)) / mp.mpf(1e150)
    assert res.sigma_min_intra == pytest.approx(float(1 - r_b), rel=REL)
    # √(λ_H/λ_W) ~ 1e311 is an eigenvalue of G: beyond float64, refused (was inf and NaN)
    with pytest.raises(FCTheoryError, match=r"^lam_H="):
        ufm.block_spectra(K=2, n_spl=2, d=3, lam_W=5e-324, lam_H=1e300, beta=1e300)


# ------------------------------------------------------------------------------ numerical solvers
def test_solvers_refuse_lambda_outside_their_range():
    with pytest.raises(FCTheoryError, match=r"^lam_W=.*numerical solvers"):
        ufm.solve_ce(K=3, n_spl=2, d=3, lam_W=1e-300, lam_H=0.1)
    with pytest.raises(FCTheoryError, match=r"^lam=.*numerical solver"):
        ufm.solve_layernorm_mse(K=3, n_spl=1, d=5, lam=1e300)
    with pytest.raises(FCTheoryError, match=r"^lam="):
        ufm.layernorm_ce(K=5, d=3, lam=1e-300)  # d < K: the numerical path


def test_solve_output_ball_works_in_the_log_domain():
    # the loss e^{-R·gap} underflows at R = 1e3; log ℓ stays finite (old code: log(0), NaN gradient)
    for R in (100.0, 1e3, 1e5):
        s = ufm.solve_output_ball(K=4, R=R, k=1, seed=0)
        c = ufm.output_ball(K=4, R=R)
        assert np.isfinite(s.value) and s.value == pytest.approx(c.value, rel=1e-10, abs=1e-300)
    with pytest.raises(FCTheoryError, match=r"^k=4 "):
        ufm.solve_output_ball(K=4, R=1.0, k=4)  # was an IndexError


def test_cvxpy_failures_become_the_project_error(monkeypatch):
    import cvxpy as cp

    def boom(self, *args, **kwargs):
        raise cp.error.SolverError("solver exploded")

    monkeypatch.setattr(cp.Problem, "solve", boom)
    with pytest.raises(FCTheoryError, match=r"^solver='CLARABEL'.*SolverError"):
        ufm.convex_ce(K=2, n_spl=1, lam_W=0.1, lam_H=0.1)


def test_objective_overflow_is_refused_not_nan():
    W = np.full((3, 3), 1e200)
    H = np.full((3, 6), 1e200)
    with pytest.raises(FCTheoryError, match=r"^W=.*overflows"):
        ufm.ce_objective(W, H, None, n_spl=2, lam_W=0.1, lam_H=0.1)
    with pytest.raises(FCTheoryError, match=r"^H="):
        ufm.ce_objective(np.ones((3, 3)), np.ones((3, 5)), None, n_spl=2, lam_W=0.1, lam_H=0.1)  # not K*n columns


# ------------------------------------------------------------------------------ perturbation model
def test_optimal_W_is_exact_at_any_scale():
    rng = np.random.default_rng(4)
    H = rng.standard_normal((3, 6))
    s, lam = 2.0**520, 0.3  # (sH)(sH)ᵀ overflows float64
    # W*(sH; λ) = W*(H; λ/s²)/s exactly; the oracle solves the normal equations at the small scale
    n = 3
    A = H @ H.T + n * float(np.ldexp(lam, -1040)) * np.eye(3)  # λ/s²
    ref = np.linalg.solve(A, H @ np.repeat(np.eye(2), n, axis=1).T).T / s
    np.testing.assert_allclose(ufm.optimal_W(H * s, K=2, lam_W=lam), ref, rtol=1e-10)


def test_optimal_W_rank_deficient_tiny_ridge_is_the_min_norm_solution():
    rng = np.random.default_rng(5)
    H = rng.standard_normal((6, 4))  # d > N: HHᵀ singular; λ = 1e-300 makes the solve singular
    Y = np.repeat(np.eye(2), 2, axis=1)
    np.testing.assert_allclose(ufm.optimal_W(H, K=2, lam_W=1e-300), Y @ np.linalg.pinv(H), rtol=1e-10)


def test_central_path_loss_rescales_before_forming_HHt():
    rng = np.random.default_rng(6)
    H = 8.0 * rng.standard_normal((3, 6))
    s = 2.0**510  # (sH)(sH)ᵀ overflows; L(sH; λ_W s², 0) = L(H; λ_W, 0)
    a = ufm.central_path_loss(H * s, K=2, lam_W=0.5 * s * s, lam_H=0.0)
    assert a == pytest.approx(ufm.central_path_loss(H, K=2, lam_W=0.5, lam_H=0.0), rel=REL)


def test_singular_hessian_block_is_reported_not_raised():
    with pytest.raises(FCTheoryError, match=r"^lam_W=.*singular"):
        ufm.first_order_response(np.zeros((2, 3)), np.zeros((3, 4)), K=2, lam_W=5e-324, lam_H=0.3, beta=1.0)


def test_shape_mismatches_name_the_argument():
    H = np.ones((3, 4))
    with pytest.raises(FCTheoryError, match=r"^W="):
        ufm.anchored_objective(np.ones((2, 5)), H, None, K=2, lam_W=0.5, lam_H=0.3, beta=0.0)
    with pytest.raises(FCTheoryError, match=r"^H0="):
        ufm.anchored_objective(np.ones((2, 3)), H, None, K=2, lam_W=0.5, lam_H=0.3, beta=1.0)
    with pytest.raises(FCTheoryError, match=r"^F="):
        ufm.class_blocks(np.eye(5), K=2, n_spl=1, d=3)
    resp = ufm.first_order_response(np.ones((2, 3)) * 0.1, H * 0.2, K=2, lam_W=0.5, lam_H=0.3, beta=2.0)
    with pytest.raises(FCTheoryError, match=r"^dH0="):
        resp.apply(np.ones((4, 4)))


def test_gradient_flow_stops_at_the_time_budget():
    rng = np.random.default_rng(8)
    H = rng.standard_normal((3, 4)) + np.repeat(rng.standard_normal((3, 2)), 2, axis=1)
    t = time.perf_counter()
    with fc.budget(max_seconds=0.3):
        with pytest.raises(FCTheoryError, match=r"^t_max=.*time budget"):
            ufm.gradient_flow(H, K=2, lam_W=0.5, lam_H=0.3, t_max=1e9, rtol=1e-13, atol=1e-300)
    assert time.perf_counter() - t < 5.0
    with pytest.raises(FCTheoryError, match=r"^t_max="):
        ufm.gradient_flow(H, K=2, lam_W=0.5, lam_H=0.3, t_max=5e-324)  # was a ValueError from solve_ivp


# ------------------------------------------------------------------------------ declarations
def test_every_public_name_of_ufm_and_metrics_is_declared():
    import inspect

    from fctheory.ufm import perturbation

    assert set(perturbation.__all__) <= set(ufm.__all__)
    for mod in (ufm, metrics):
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.isclass(obj):
                declared = getattr(obj, "__fc_result__", False) or hasattr(obj, "__fc_params__")
            else:
                declared = hasattr(obj, "__fc_params__")
            assert declared, f"{mod.__name__}.{name}"
    for meth in ("update", "statistics", "nc1", "cdnv", "nc2", "nc3"):
        assert hasattr(getattr(NCAccumulator, meth), "__fc_params__"), meth
