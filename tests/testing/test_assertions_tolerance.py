"""Each assertion helper of ``fctheory.testing`` enforces exactly its documented tolerance.

An exact configuration is perturbed by a controlled amount whose effect on the checked quantity is
known in closed form (a rotation by θ moves a unit vector by 2·sin(θ/2); a tilted frame vector changes
the Gram entries by (1 − cos θ)/(n_c − 1); opposite rescalings of two words leave their mean unchanged),
and the helper must pass at 0.98× its tolerance and fail at 1.02× (1.0 ± 0.01 where the quantity is exact).
"""

import math

import mpmath
import numpy as np
import pytest

import fctheory as fc
from fctheory.testing import (
    TheoryAssertionError,
    assert_close_mp,
    assert_critical_point,
    assert_scale_invariant,
    assert_type1_optimal,
    assert_type3_optimal,
    check_gradient,
)

LAM = 0.01
BELOW, ABOVE = 0.98, 1.02
D = 4  # > n_c − 1 = 2: the frame leaves directions orthogonal to every f_α (e₂, e₃ of equiangular_frame(3, 4))


def _type1(**kw):
    task = fc.Task.full(3, 2, 2)
    W, U = fc.type1_configuration(task, d=D, lam=LAM, frame=fc.equiangular_frame(3, D), **kw)
    return task, W, U


def _rotate(v, theta):
    """Rotate v by θ in the plane of v and e₃ (orthogonal to the frame), keeping its norm."""
    out = v.copy()
    n = np.linalg.norm(v)
    out[:] = math.cos(theta) * v
    out[3] += math.sin(theta) * n
    return out


def _raises(fn, match):
    with pytest.raises(TheoryAssertionError, match=match):
        fn()


# ----------------------------------------------------------------------------- type-I constants c, c′
@pytest.mark.parametrize("which", ["W", "U"])
def test_type1_constant_tolerance_is_the_default_rtol(which):
    # scaling W (or U) by 1 + δ makes c (or c′) off by a relative δ; rtol = 1e-9 by default. The scaled
    # point is still a critical point to ≪ gtol = 1e-8 (the gradient moves by O(δ)).
    task, W, U = _type1()
    for f, ok in ((BELOW, True), (ABOVE, False)):
        s = 1 + f * 1e-9
        args = (task, W * s, U, LAM) if which == "W" else (task, W, U * s, LAM)
        if ok:
            assert_type1_optimal(*args)
        else:
            _raises(lambda: assert_type1_optimal(*args), "predicts")


# ----------------------------------------------------------------------------- Definition 1's structure
@pytest.mark.parametrize("rtol", [1e-9, 1e-6, 1e-3])
def test_word_norm_tolerance_is_rtol(rtol):
    # words (0, 0) and (1, 0) scaled by 1 ± δ: their mean norm is unchanged, each is off by exactly δ
    task, W, U = _type1()
    for f, ok in ((BELOW, True), (ABOVE, False)):
        W2 = W.copy()
        W2[:, 0] *= 1 + f * rtol
        W2[:, 2] *= 1 - f * rtol
        call = lambda: assert_type1_optimal(task, W2, U, LAM, rtol=rtol, gtol=1.0)  # noqa: E731 - gtol 1: always critical
        call() if ok else _raises(call, "one norm")


@pytest.mark.parametrize("rtol", [1e-9, 1e-6, 1e-3])
def test_word_direction_tolerance_is_rtol(rtol):
    # the two words of concept 0 rotated by ±θ about f₀: their mean direction stays f₀, each is
    # 2·sin(θ/2) away from it
    task, W, U = _type1()
    for f, ok in ((BELOW, True), (ABOVE, False)):
        theta = 2 * math.asin(f * rtol / 2)
        W2 = W.copy()
        W2[:, 0] = _rotate(W[:, 0], theta)
        W2[:, 1] = _rotate(W[:, 1], -theta)
        call = lambda: assert_type1_optimal(task, W2, U, LAM, rtol=rtol, gtol=1.0)  # noqa: E731
        call() if ok else _raises(call, "share one direction")


@pytest.mark.parametrize("rtol", [1e-9, 1e-6, 1e-3])
def test_equiangular_frame_tolerance_is_rtol(rtol):
    # f₀ tilted by θ towards e₃ (W and U built on the tilted frame): ⟨f₀, f_j⟩ = −cos θ/(n_c − 1),
    # an error (1 − cos θ)/(n_c − 1) = 2 sin²(θ/2)/2 in equation (4)
    for f, ok in ((BELOW, True), (ABOVE, False)):
        theta = 2 * math.asin(math.sqrt(f * rtol))
        F = fc.equiangular_frame(3, D)
        F[:, 0] = _rotate(F[:, 0], theta)
        task, W0, U0 = _type1()
        c, c_prime = np.linalg.norm(W0[:, 0]), np.linalg.norm(U0[0, :D])
        W = c * F[:, task.word_concept]  # Definition 1 on the tilted frame (type1_configuration refuses it)
        U = c_prime * np.moveaxis(F[:, task.Z], 0, -1).reshape(task.K, task.L * D)
        call = lambda: assert_type1_optimal(task, W, U, LAM, rtol=rtol, gtol=1.0)  # noqa: E731
        call() if ok else _raises(call, "equiangular frame")


@pytest.mark.parametrize("rtol", [1e-9, 1e-6, 1e-3])
def test_classifier_direction_tolerance_is_rtol(rtol):
    # one block u_{k,ℓ} rotated by θ (norm kept, so c is unchanged): off by 2·sin(θ/2) relative to c
    task, W, U = _type1()
    for f, ok in ((BELOW, True), (ABOVE, False)):
        theta = 2 * math.asin(f * rtol / 2)
        U2 = U.copy()
        U2[4, D : 2 * D] = _rotate(U[4, D : 2 * D], theta)
        call = lambda: assert_type1_optimal(task, W, U2, LAM, rtol=rtol, gtol=1.0)  # noqa: E731
        call() if ok else _raises(call, r"u_\{k,ℓ\} must be")


def test_trivial_optimum_tolerance_is_atol():
    # λ ≥ λ₀: the weights must vanish; the largest |entry| is held to atol (default 1e-12)
    task = fc.Task.full(3, 2, 2)
    lam = 1.5 * fc.predict_type1(n_c=3, n_w=task.n_w, L=2, K=task.K, lam=LAM).lambda_trivial
    W, U = np.zeros((D, task.n_w)), np.zeros((task.K, 2 * D))
    for atol in (1e-12, 1e-6):
        for f, ok in ((BELOW, True), (ABOVE, False)):
            for which in ("W", "U"):
                W2, U2 = W.copy(), U.copy()
                (W2 if which == "W" else U2)[1, 1] = -f * atol
                kw = {} if atol == 1e-12 else {"atol": atol}
                call = lambda: assert_type1_optimal(task, W2, U2, lam, **kw)  # noqa: E731
                call() if ok else _raises(call, "trivial optimum")


def test_type3_rank_norm_tolerance_is_rtol():
    task = fc.Task.full(3, 2, 2, mu="zipf")
    W, U = fc.type3_configuration(task, d=D, lam=LAM, frame=fc.equiangular_frame(3, D))
    assert_type3_optimal(task, W, U, LAM)
    rtol = 1e-6
    for f, ok in ((BELOW, True), (ABOVE, False)):
        W2 = W.copy()
        W2[:, 1] *= 1 + f * rtol  # word (0, 1) and (1, 1): rank β = 1, mean r₁ unchanged
        W2[:, 3] *= 1 - f * rtol
        call = lambda: assert_type3_optimal(task, W2, U, LAM, rtol=rtol, gtol=1.0)  # noqa: E731
        call() if ok else _raises(call, "rank β = 1")
    for f, ok in ((BELOW, True), (ABOVE, False)):
        call = lambda: assert_type3_optimal(task, W, U * (1 + f * 1e-9), LAM)  # noqa: E731 - c off by δ
        call() if ok else _raises(call, "predicts")


# ----------------------------------------------------------------------------- critical point
def _critical_ratio(task, W, U, lam, layernorm):
    """‖∇R‖/(‖∇R₀‖ + λ‖θ‖) from the unpenalised exact gradient (independent of the helper's algebra)."""
    _, g0W, g0U = fc.true_risk_grad(task, W, U, 0.0, layernorm=layernorm)
    pW = np.zeros_like(W) if layernorm else lam * W
    g = math.sqrt(np.sum((g0W + pW) ** 2) + np.sum((g0U + lam * U) ** 2))
    g0 = math.sqrt(np.sum(g0W**2) + np.sum(g0U**2))
    pen = lam * math.sqrt(np.sum((W if not layernorm else 0 * W) ** 2) + np.sum(U**2))
    return g, g0 + pen


@pytest.mark.parametrize("layernorm", [False, True])
def test_critical_point_bound_is_gtol_times_data_plus_penalty(layernorm):
    task = fc.Task.full(2, 2, 2)
    rng = np.random.default_rng(3)
    W, U = rng.standard_normal((3, task.n_w)), rng.standard_normal((task.K, 2 * 3))
    lam = 0.3
    g, scale = _critical_ratio(task, W, U, lam, layernorm)
    assert 0.01 < g / scale < 1
    for f, ok in ((1 + 1e-6, True), (1 - 1e-6, False)):
        call = lambda: assert_critical_point(task, W, U, lam, layernorm=layernorm, gtol=f * g / scale)  # noqa: E731
        call() if ok else _raises(call, "not a critical point")
    # atol adds to the bound: gtol·scale + atol = g·(1 ± 1e-6)
    gtol = 0.5 * g / scale
    for f, ok in ((1 + 1e-6, True), (1 - 1e-6, False)):
        atol = f * g - gtol * scale
        call = lambda: assert_critical_point(task, W, U, lam, layernorm=layernorm, gtol=gtol, atol=atol)  # noqa: E731
        call() if ok else _raises(call, "not a critical point")


def test_critical_point_default_gtol_is_1e_8():
    task = fc.Task.full(2, 2, 2)
    rng = np.random.default_rng(3)
    W, U = rng.standard_normal((3, task.n_w)), rng.standard_normal((task.K, 2 * 3))
    g, scale = _critical_ratio(task, W, U, 0.3, False)
    for f, ok in ((1 + 1e-6, True), (1 - 1e-6, False)):
        call = lambda: assert_critical_point(task, W, U, 0.3, atol=f * g - 1e-8 * scale)  # noqa: E731
        call() if ok else _raises(call, "not a critical point")


# ----------------------------------------------------------------------------- check_gradient
def _linear(c, f0=4.0):
    """f(x) = f0 + c·x: central differences at x = 0 with a power-of-two step are exact."""
    return lambda x: f0 + float(np.dot(c, x.ravel()))


C = np.array([1.0, -2.0, 0.5, 4.0])


@pytest.mark.parametrize("rtol", [1e-6, 1e-4])
def test_check_gradient_relative_tolerance_on_coordinates(rtol):
    # analytic = c·(1 + δ), fd = c exactly: error/scale = δ/(1 + δ), held to rtol (atol = 0)
    for f, ok in ((BELOW, True), (ABOVE, False)):
        d = f * rtol / (1 - f * rtol)  # δ/(1 + δ) = f·rtol
        res = check_gradient(
            _linear(C),
            np.zeros(4),
            grad=lambda x: C * (1 + d),
            eps=2.0**-17,
            rtol=rtol,
            atol=0.0,
            raise_on_mismatch=False,
        )
        assert res.ok is ok, (f, res)
        assert res.tolerance == pytest.approx(rtol * 4 * (1 + d), rel=1e-12)
        assert res.max_error == pytest.approx(4 * d, rel=1e-9)
        assert res.worst == 3 and res.directions == "coordinates"
        if not ok:
            _raises(
                lambda: check_gradient(
                    _linear(C),
                    np.zeros(4),
                    grad=lambda x: C * (1 + d),
                    eps=2.0**-17,  # noqa: B023
                    rtol=rtol,
                    atol=0.0,
                ),
                "gradient mismatch",
            )


def test_check_gradient_default_rtol_and_atol_floor():
    # default atol: 10·ε^(2/3)·max(1, |f(x)|) (here |f(x)| = 4); with rtol = 0 it is the whole tolerance
    floor = 10 * np.finfo(np.float64).eps ** (2 / 3) * 4.0
    for f, ok in ((BELOW, True), (ABOVE, False)):
        g = C.copy()
        g[0] += f * floor
        res = check_gradient(
            _linear(C),
            np.zeros(4),
            grad=lambda x: g,
            eps=2.0**-17,
            rtol=0.0,  # noqa: B023
            raise_on_mismatch=False,
        )
        assert res.ok is ok and res.tolerance == pytest.approx(floor, rel=1e-12)
    # default rtol = 1e-6 on top of the floor: analytic 4 → g₃ with g₃ − 4 = f·(floor + 1e-6·g₃)
    for f, ok in ((BELOW, True), (ABOVE, False)):
        g = C.copy()
        g[3] = (4 + f * floor) / (1 - f * 1e-6)
        res = check_gradient(
            _linear(C),
            np.zeros(4),
            grad=lambda x: g,
            eps=2.0**-17,  # noqa: B023
            raise_on_mismatch=False,
        )
        assert res.tolerance == pytest.approx(floor + 1e-6 * g[3], rel=1e-12)
        assert res.ok is ok


def test_check_gradient_relative_tolerance_on_random_directions():
    # x larger than max_coords: ⟨∇f, v⟩ over random unit v; analytic = (1 + δ)c, so error = δ|c·v|
    c = np.linspace(-1, 2, 10)
    rtol = 1e-6
    for f, ok in ((0.9, True), (1.1, False)):  # central differences of a linear f: error ~1e-11 ≪ 1e-7
        d = f * rtol / (1 - f * rtol)
        res = check_gradient(
            _linear(c),
            np.zeros(10),
            grad=lambda x: c * (1 + d),
            max_coords=4,  # noqa: B023
            n_directions=6,
            rtol=rtol,
            atol=0.0,
            raise_on_mismatch=False,
        )
        assert res.directions == "random" and res.fd.size == 6
        assert res.ok is ok


# ----------------------------------------------------------------------------- assert_close_mp
@pytest.mark.parametrize("digits", [6, 12, 15, 30])
def test_close_mp_relative_tolerance_is_ten_to_minus_digits(digits):
    with mpmath.workdps(60):
        ref = mpmath.mpf(2) / 3
        for f, ok in ((0.99, True), (1.01, False)):
            for sign in (1, -1):
                v = ref * (1 + sign * f * mpmath.mpf(10) ** (-digits))
                call = lambda: assert_close_mp(v, ref, digits=digits)  # noqa: E731
                call() if ok else _raises(call, f"{digits} required")


def test_close_mp_default_is_12_digits_and_atol_adds():
    with mpmath.workdps(40):
        ref = mpmath.mpf(7) / 3
        assert_close_mp(ref * (1 + mpmath.mpf("0.99e-12")), ref)
        _raises(lambda: assert_close_mp(ref * (1 + mpmath.mpf("1.01e-12")), ref), "12 required")
        # atol + 10^-digits·|ref|: an error of 1e-9 + 0.99e-12·ref passes with atol 1e-9, 1.01e-12 does not
        for f, ok in ((0.99, True), (1.01, False)):
            v = ref + mpmath.mpf("1e-9") + f * mpmath.mpf("1e-12") * ref
            call = lambda: assert_close_mp(v, ref, atol=1e-9)  # noqa: E731
            call() if ok else _raises(call, "required")
        for f, ok in ((0.99, True), (1.01, False)):  # reference 0: atol alone
            call = lambda: assert_close_mp(f * 1e-9, 0.0, atol=1e-9)  # noqa: E731
            call() if ok else _raises(call, "required")


def test_close_mp_compares_beyond_float64():
    # a 20-digit agreement requested of decimal strings (parsed at digits + 10, not at mpmath's default 15
    # digits): a difference in the 22nd digit passes, one in the 19th fails
    assert_close_mp("0.1234567890123456789012", "0.1234567890123456789013", digits=20)
    _raises(lambda: assert_close_mp("0.1234567890123456799", "0.1234567890123456789", digits=20), "20 required")


def test_close_mp_keeps_the_digits_of_high_precision_mpf_inputs():
    # mpf values made at 50 digits, compared at 30 outside any workdps: an error of 1e-25 must fail
    with mpmath.workdps(50):
        ref = mpmath.mpf(1) / 7
        v = ref + mpmath.mpf("1e-25")
    _raises(lambda: assert_close_mp(v, ref, digits=30), "30 required")
    assert_close_mp(v, ref, digits=24)


# ----------------------------------------------------------------------------- assert_scale_invariant
def _drifting_metric(delta):
    """metric(M) = (1, 3) at M's own scale and (1, 3)·(1 + δ) at every other scale (max|M| = 1)."""
    return lambda A: np.array([1.0, 3.0]) * (1.0 if np.max(np.abs(A)) == 1.0 else 1.0 + delta)


M1 = np.array([[1.0, -0.5], [0.25, 0.0]])


@pytest.mark.parametrize("rtol", [1e-12, 1e-6])
def test_scale_invariance_relative_tolerance(rtol):
    for f, ok in ((BELOW, True), (ABOVE, False)):
        kw = {} if rtol == 1e-12 else {"rtol": rtol}
        call = lambda: assert_scale_invariant(_drifting_metric(f * rtol), M1, **kw)  # noqa: E731
        call() if ok else _raises(call, "not scale invariant")


def test_scale_invariance_absolute_tolerance_adds_entrywise():
    # the error of entry 1 is 3δ; bound atol + rtol·3 with rtol = 0: passes iff 3δ ≤ atol
    for f, ok in ((BELOW, True), (ABOVE, False)):
        call = lambda: assert_scale_invariant(_drifting_metric(f * 1e-8 / 3), M1, rtol=0.0, atol=1e-8)  # noqa: E731
        call() if ok else _raises(call, "not scale invariant")
    assert_scale_invariant(_drifting_metric(1e-9), M1, rtol=1e-9 / 2, atol=1e-9 * 3 / 2 * 1.02)
