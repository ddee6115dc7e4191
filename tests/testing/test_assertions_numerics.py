"""The assertion helpers give their verdict whatever NumPy's error state (a test suite may run under
``np.errstate(all="raise")``): overflow and underflow inside a helper never escape as FloatingPointError, and
huge values are measured without overflow. Also ``check_gradient``'s documented defaults and the message
of an f that stops returning numbers away from x.
"""

import math

import numpy as np
import pytest

import fctheory as fc
from fctheory.testing import (
    TheoryAssertionError,
    assert_critical_point,
    assert_scale_invariant,
    assert_type1_optimal,
    check_gradient,
)

LAM = 0.01


def _antipodal_type1(c, c_prime=1.0, lam=LAM):
    """Definition 1 for n_c = 2 with f₀ = −f₁ = e₀ + e₁ (d = 2): every word has norm c·√2."""
    task = fc.Task.full(2, 2, 2)
    F = np.array([[1.0, -1.0], [1.0, -1.0]])
    W = c * F[:, task.word_concept]
    U = c_prime * np.moveaxis(F[:, task.Z], 0, -1).reshape(task.K, task.L * 2)
    return task, W, U


def test_word_norms_beyond_the_float64_range_fail_the_constant_check():
    # entries 1.5e308: finite, but each word's norm 2.1e308 is not; reported as c = inf
    task, W, U = _antipodal_type1(1.5e308)
    with np.errstate(all="raise"):
        with pytest.raises(TheoryAssertionError, match=r"^c = ‖w_\(α,β\)‖ = inf but Theorem 1"):
            assert_type1_optimal(task, W, U, LAM)


def test_subnormal_word_norms_fail_the_constant_check():
    task, W, U = _antipodal_type1(2.0**-1060)
    with np.errstate(all="raise"):
        with pytest.raises(TheoryAssertionError, match=r"^c = ‖w_\(α,β\)‖ = 1\.1[0-9]*e-319 but Theorem 1"):
            assert_type1_optimal(task, W, U, LAM)


def test_a_relative_error_beyond_the_float64_range_is_reported_as_inf():
    # c′ ≈ 0.33 at λ = 0.3 and ‖u‖ = 1.2e308: the relative error 3.7e308 overflows
    lam = 0.3
    p = fc.predict(fc.Task.full(2, 2, 2), lam=lam)
    task, W, U = _antipodal_type1(p.c / math.sqrt(2), 1.2e308 / math.sqrt(2), lam=lam)
    with np.errstate(all="raise"):
        with pytest.raises(TheoryAssertionError, match=r"^c′ = ‖u_\{k,ℓ\}‖ = .* \(relative error inf > rtol"):
            assert_type1_optimal(task, W, U, lam, rtol=1e-6)


def test_critical_point_norms_do_not_overflow():
    # LayerNorm network, u entries 3.4e153 and λ ≈ 5.2: λu ≈ 1.7e154, whose square overflows; ‖∇R‖ = 3.5e154
    # is far above gtol·(‖∇R₀‖ + λ‖θ‖) ≈ 3.5e146 (a norm that overflowed to inf would pass inf ≤ inf)
    task = fc.Task.full(2, 2, 1)
    W, U = fc.type2_configuration(task, d=2, lam=LAM)
    U = U / np.abs(U).max() * 3.375e153
    lam = 1.3 * 1.34e154 / 3.375e153
    with pytest.raises(TheoryAssertionError, match=r"‖∇R‖ = 3\.4[0-9]e\+154 > atol \+ gtol"):
        assert_critical_point(task, W, U, lam, layernorm=True)


# ----------------------------------------------------------------------------- check_gradient
def test_a_difference_beyond_the_float64_range_is_a_mismatch():
    # fd = 1.5e308, analytic −1.5e308: |error| overflows
    a = 1.5e308
    with np.errstate(all="raise"):
        res = check_gradient(
            lambda v: a * float(v[0]), np.zeros(1), grad=lambda v: -a * np.ones(1), raise_on_mismatch=False
        )
    assert not res.ok


def test_a_random_step_leaving_the_float64_range_is_refused_naming_eps():
    with np.errstate(all="raise"):
        with pytest.raises(fc.FCTheoryError, match=r"^eps=0\.5 is invalid: the step h = .* takes x ± h out"):
            check_gradient(
                lambda v: 0.0, np.full(2, 1.7e308), grad=lambda v: np.zeros(2), eps=0.5, max_coords=1, n_directions=2
            )


def _linear(v):
    return float(np.arange(1.0, v.size + 1) @ v.ravel())


def _linear_grad(v):
    return np.arange(1.0, v.size + 1)


def test_default_max_coords_is_64():
    assert check_gradient(_linear, np.zeros(64), grad=_linear_grad).directions == "coordinates"
    assert check_gradient(_linear, np.zeros(65), grad=_linear_grad).directions == "random"


def test_default_n_directions_is_16():
    assert check_gradient(_linear, np.zeros(65), grad=_linear_grad).analytic.size == 16


def test_default_seed_is_0():
    dirs = np.random.default_rng(0).standard_normal((16, 65))
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    res = check_gradient(_linear, np.zeros(65), grad=_linear_grad)
    np.testing.assert_allclose(res.analytic, dirs @ np.arange(1.0, 66), rtol=1e-14)


def test_f_returning_a_non_number_away_from_x_is_refused_naming_f():
    # grad given: f must return a plain number, and the message says so (no "(value, gradient)")
    with pytest.raises(fc.FCTheoryError, match=r"^f=.* is invalid: must return a real number, got str$"):
        check_gradient(lambda v: 1.0 if v[0] == 0 else "x", np.zeros(1), grad=lambda v: np.zeros(1))


# ----------------------------------------------------------------------------- assert_scale_invariant
def test_scales_overflowing_the_input_are_refused_under_raise():
    with np.errstate(all="raise"):
        with pytest.raises(fc.FCTheoryError, match=r"^scales=1e\+300 is invalid: s·M leaves the normal float64"):
            assert_scale_invariant(lambda A: float(A.max()), np.array([1e10]), scales=(1e300,))


def test_a_metric_overflowing_inside_fails_as_not_scale_invariant():
    # Σa²/Σa² overflows to inf/inf = nan at s = 1e300: an assertion failure, not a FloatingPointError
    def naive(A):
        return float(np.sum(A * A) / np.sum(A * A))

    with np.errstate(all="raise"):
        with pytest.raises(
            TheoryAssertionError, match=r"^not scale invariant: metric\(M\) = 1 but metric\(1e\+300·M\)"
        ):
            assert_scale_invariant(naive, np.array([1.0, 2.0]), scales=(1.0, 1e300))


def test_a_difference_beyond_the_float64_range_is_not_scale_invariant():
    # metric(M) = 1.5e308, metric(1e300·M) = −1.5e308: |difference| overflows to inf
    def flips(A):
        return 1.5e308 if A.max() < 1e100 else -1.5e308

    with np.errstate(all="raise"):
        with pytest.raises(TheoryAssertionError, match=r"\(\|difference\| inf > atol"):
            assert_scale_invariant(flips, np.array([1.0, 2.0]), scales=(1.0, 1e300))
