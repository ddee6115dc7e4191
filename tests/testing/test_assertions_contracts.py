"""Contracts of ``check_gradient`` and ``assert_scale_invariant`` beyond their tolerances: the step each
difference uses, the random directions, the result fields, the reported worst entry, and the errors
(FCTheoryError naming the parameter; TheoryAssertionError with the documented message).

Steps and points are powers of two, so the central differences of x³ are exact: (h³ + h³)/(2h) = h².
"""

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest

import fctheory as fc
from fctheory.testing import TheoryAssertionError, assert_scale_invariant, check_gradient

EPS = 2.0**-10
A = np.array([0.0, 8.0, -16.0, 0.5])


def _cubic(x):
    return float(np.sum((x.ravel() - A) ** 3))


def _zero_grad(x):
    return np.zeros(x.shape)


def test_coordinate_steps_are_eps_times_max_one_and_the_coordinate():
    res = check_gradient(_cubic, A.copy(), grad=_zero_grad, eps=EPS, rtol=0.0, atol=1.0, raise_on_mismatch=False)
    h = EPS * np.maximum(1.0, np.abs(A))
    np.testing.assert_array_equal(res.fd, h**2)  # exact: the difference of x³ over ±h is 2h³
    np.testing.assert_array_equal(res.analytic, np.zeros(4))
    assert res.eps == EPS and res.directions == "coordinates" and res.worst == 2
    assert res.max_error == h[2] ** 2 and res.ok


def _random_steps_of_the_cubic_about(a):
    """check_gradient's 5 seeded random directions on Σ(v − a)³ at its zero-gradient point v = a (7 entries):
    fd = h²·Σ v³ along each direction v, with h = eps·max(1, ‖a‖∞)."""
    return check_gradient(
        lambda v: float(np.sum((v - a) ** 3)),
        a.copy(),
        grad=lambda v: np.zeros(7),
        eps=EPS,
        max_coords=6,
        n_directions=5,
        seed=11,
        rtol=0.0,
        atol=1.0,
        raise_on_mismatch=False,
    )


def test_random_directions_are_seeded_unit_vectors_with_step_eps_times_max_one_and_max_abs_x():
    x = np.linspace(-3.0, 3.0, 7)
    g = np.arange(7.0) - 2.5
    res = check_gradient(
        lambda v: float(g @ v), x, grad=lambda v: g, max_coords=6, n_directions=5, seed=11, raise_on_mismatch=False
    )
    dirs = np.random.default_rng(11).standard_normal((5, 7))
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    np.testing.assert_allclose(res.analytic, dirs @ g, rtol=1e-14, atol=1e-14)
    again = check_gradient(
        lambda v: float(g @ v), x, grad=lambda v: g, max_coords=6, n_directions=5, seed=11, raise_on_mismatch=False
    )
    np.testing.assert_array_equal(res.fd, again.fd)
    # the cubic along v at its zero-gradient point: fd = h²·Σ v³ with h = eps·max(1, ‖x‖∞) = eps·16
    a = np.array([0.0, 8.0, -16.0, 0.5, 1.0, 2.0, 3.0])
    res = _random_steps_of_the_cubic_about(a)
    np.testing.assert_allclose(res.fd, (EPS * 16) ** 2 * np.sum(dirs**3, axis=1), rtol=1e-9)


def test_max_coords_is_inclusive():
    res = check_gradient(lambda v: float(np.sum(v)), np.zeros(4), grad=lambda v: np.ones(4), max_coords=4)
    assert res.directions == "coordinates" and res.fd.size == 4
    res = check_gradient(
        lambda v: float(np.sum(v)), np.zeros(5), grad=lambda v: np.ones(5), max_coords=4, n_directions=3
    )
    assert res.directions == "random" and res.fd.size == 3


def test_an_error_equal_to_the_tolerance_passes():
    # f = 4 + x at 0 with h = 2^-17: fd = 1 exactly; analytic 1 + 2^-20: error = 2^-20 = atol (rtol = 0)
    res = check_gradient(
        lambda v: 4.0 + float(v[0]),
        np.zeros(1),
        grad=lambda v: np.array([1 + 2.0**-20]),
        eps=2.0**-17,
        rtol=0.0,
        atol=2.0**-20,
    )
    assert res.ok and res.max_error == 2.0**-20 == res.tolerance


def test_the_scale_of_the_relative_tolerance_is_the_larger_of_analytic_and_differences():
    # analytic smaller than the (exact) differences: the scale is max|fd| = 4
    c = np.array([1.0, -2.0, 0.5, 4.0])
    res = check_gradient(
        lambda v: 4.0 + float(c @ v),
        np.zeros(4),
        grad=lambda v: c * 0.5,
        eps=2.0**-17,
        rtol=1e-3,
        atol=0.0,
        raise_on_mismatch=False,
    )
    assert res.tolerance == 1e-3 * 4.0 and not res.ok


def test_default_absolute_floor_for_a_small_value():
    # |f(x)| = 0.25 < 1: the floor is 10·ε^(2/3)·1
    res = check_gradient(lambda v: 0.25 + float(v[0]), np.zeros(1), grad=lambda v: np.ones(1), eps=2.0**-17, rtol=0.0)
    assert res.tolerance == 10 * np.finfo(np.float64).eps ** (2 / 3)


def test_a_step_lost_in_rounding_is_reported_as_a_mismatch():
    x = np.array([2.0**80, 2.0**80])  # x ± eps·x rounds to x for eps = 2^-60
    g = np.array([1e-3, 2e-3])
    res = check_gradient(lambda v: float(np.sum(v)), x, grad=lambda v: g, eps=2.0**-60, raise_on_mismatch=False)
    assert not res.ok and res.max_error == 1e308
    np.testing.assert_array_equal(res.fd, [0.0, 0.0])
    floor = 10 * np.finfo(np.float64).eps ** (2 / 3) * 2.0**81
    assert res.tolerance == floor + 1e-6 * 2e-3
    res = check_gradient(
        lambda v: float(np.sum(v)), x, grad=lambda v: g, eps=2.0**-60, atol=0.0, raise_on_mismatch=False
    )
    assert res.tolerance == 1e-6 * 2e-3  # no finite difference: the scale is the analytic one alone
    with pytest.raises(
        TheoryAssertionError,
        match=r"gradient mismatch at coordinate \(0,\): no finite difference "
        r"\(the step vanished in rounding: eps too small\), analytic 0\.001; .* 2 of 2 directions fail",
    ):
        check_gradient(lambda v: float(np.sum(v)), x, grad=lambda v: g, eps=2.0**-60)


def test_mismatch_messages_name_the_worst_direction():
    g = np.array([1.0, 5.0, 1.0])
    with pytest.raises(
        TheoryAssertionError,
        match=r"^gradient mismatch at coordinate \(1,\): finite difference 1, "
        r"analytic 5; \|error\| = 4 > tolerance .* 1 of 3 directions fail$",
    ):
        check_gradient(lambda v: float(np.sum(v)), np.zeros(3), grad=lambda v: g)
    with pytest.raises(TheoryAssertionError, match=r"at random direction \d \(seed 5\): finite difference"):
        check_gradient(lambda v: float(np.sum(v)), np.zeros(3), grad=lambda v: g, max_coords=2, seed=5)


def _f_err(fn, match, **kw):
    with pytest.raises(fc.FCTheoryError, match=match) as info:
        check_gradient(fn, np.ones(2), **kw)
    assert not isinstance(info.value, TheoryAssertionError)
    assert "=<function" in str(info.value) or str(info.value).startswith("eps=")  # the culprit itself is shown


def bad_f(v):
    return float(np.sum(v))


def bad_grad(v):
    return np.array([1.0, np.nan])


def test_the_message_shows_the_function_at_fault():
    with pytest.raises(fc.FCTheoryError, match=r"^grad=<function bad_grad"):
        check_gradient(bad_f, np.ones(2), grad=bad_grad)
    with pytest.raises(fc.FCTheoryError, match=r"^grad=<function bad_grad.*gradient of x's shape"):
        check_gradient(bad_f, np.ones(3), grad=bad_grad)
    with pytest.raises(fc.FCTheoryError, match=r"^grad=<function _named_text_grad.*must return real numbers"):
        check_gradient(bad_f, np.ones(2), grad=_named_text_grad)


def _named_text_grad(v):
    return ["a", "b"]


def test_f_and_grad_receive_x_in_its_shape():
    def f(v):
        return float(v[0, 0] + 2 * v[0, 1])

    def g(v):
        return np.array([[1.0, 2.0]]) * (v.shape == (1, 2))

    assert check_gradient(f, np.zeros((1, 2)), grad=g).ok
    assert check_gradient(lambda v: (f(v), g(v)), np.zeros((1, 2))).ok


def test_one_sided_non_finite_value_is_refused():
    _f_err(
        lambda v: float(np.sum(v)) if v[0] <= 1 else math.inf,
        r"^eps=0\.001 is invalid: f\(x ± h\) is not finite",
        grad=lambda v: np.ones(2),
        eps=1e-3,
    )


def test_floating_point_warnings_inside_are_silenced():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(fc.FCTheoryError, match="^eps="):
            # f(x) ≈ 1.3e308 is finite, f(x + h) overflows inside NumPy
            check_gradient(
                lambda v: float(np.sum(np.exp(np.float64(886.0) * v))),
                np.full(2, 0.8),
                grad=lambda v: np.zeros(2),
                eps=2e-3,
            )
        with pytest.raises(fc.FCTheoryError, match="^grad="):
            check_gradient(lambda v: 0.0, np.ones(2), grad=lambda v: np.exp(np.float64(800.0) * v))
        res = check_gradient(
            lambda v: float(np.sum(v)),
            np.array([2.0**80]),
            grad=lambda v: np.ones(1),
            eps=2.0**-60,
            raise_on_mismatch=False,
        )
        assert not res.ok
        with pytest.raises(fc.FCTheoryError, match="^metric="):
            assert_scale_invariant(lambda A: float(np.log(np.float64(0.0) * A.max())), M1)
        with pytest.raises(TheoryAssertionError):
            assert_scale_invariant(
                lambda A: np.float64(1.0) / (np.float64(1.0) - A.max()) if A.max() != 1 else 1.0,
                M1,
                scales=[1.0, 0.5, 2.0],
            )


def test_the_failure_count_excludes_errors_equal_to_the_tolerance():
    # fd = 1 exactly in both coordinates; errors 2^-20 (= atol: passes) and 2^-10 (fails)
    g = np.array([1 + 2.0**-20, 1 + 2.0**-10])
    with pytest.raises(TheoryAssertionError, match="1 of 2 directions fail"):
        check_gradient(
            lambda v: 4.0 + float(np.sum(v)), np.zeros(2), grad=lambda v: g, eps=2.0**-17, rtol=0.0, atol=2.0**-20
        )


def test_random_steps_use_one_when_x_is_small():
    a = np.array([0.0, 0.5, -0.25, 0.125, 0.0, 0.5, 0.25])
    res = _random_steps_of_the_cubic_about(a)
    dirs = np.random.default_rng(11).standard_normal((5, 7))
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    np.testing.assert_allclose(res.fd, EPS**2 * np.sum(dirs**3, axis=1), rtol=1e-9)


def test_bad_functions_raise_fctheoryerror_naming_them():
    _f_err(lambda v: "x", r"^f=.*must return a real number, got str$", grad=lambda v: v)
    _f_err(
        lambda v: (1.0, v) if v[0] == 1 else ("x", v),
        r"^f=.*must return a real number \(or \(value, gradient\)\),"
        r" got str$",
    )
    _f_err(lambda v: 1.0, r"^f=.*must return \(value, gradient\) when grad is not given$")
    _f_err(lambda v: (1.0, v, v), r"^f=.*must return \(value, gradient\) when grad is not given$")
    _f_err(lambda v: float(np.sum(v)), r"^grad=.*must return real numbers$", grad=lambda v: ["a", "b"])
    _f_err(lambda v: (None, v), r"^f=.*must return a real number \(or \(value, gradient\)\), got NoneType$")
    _f_err(lambda v: (1.0, ["a", "b"]), r"^f=.*must return real numbers$")
    _f_err(lambda v: math.inf, r"^f=.*returned a non-finite value inf at x$", grad=lambda v: v)
    _f_err(
        lambda v: float(np.sum(v)),
        r"^grad=.*must return a gradient of x's shape \(2,\), got shape \(3,\)$",
        grad=lambda v: np.ones(3),
    )
    _f_err(lambda v: (float(np.sum(v)), np.ones(3)), r"^f=.*must return a gradient of x's shape")
    _f_err(
        lambda v: float(np.sum(v)), r"^grad=.*returned a non-finite gradient$", grad=lambda v: np.array([1.0, np.nan])
    )
    _f_err(lambda v: (float(np.sum(v)), np.array([np.inf, 1.0])), r"^f=.*returned a non-finite gradient$")
    _f_err(
        lambda v: float(np.sum(v)),
        r"^eps=1e\+308 is invalid: the step h = 1e\+308 takes x ± h out of the float64 "
        r"range; choose a smaller eps$",
        grad=lambda v: v,
        eps=1e308,
    )
    _f_err(
        lambda v: float(np.sum(v)) if abs(v[0] - 1) < 1e-12 else math.nan,
        r"^eps=0\.001 is invalid: f\(x ± h\) is "
        r"not finite for the step h = 0\.001 \(direction 0\); choose a smaller eps$",
        grad=lambda v: v,
        eps=1e-3,
    )


def test_gradient_values_are_read_as_floats():
    res = check_gradient(lambda v: float(np.sum(v)), np.zeros(2), grad=lambda v: [Fraction(1), Fraction(1)])
    assert res.ok and res.analytic.dtype == np.float64
    res = check_gradient(lambda v: (Fraction(float(np.sum(v))), [1, 1]), np.zeros((1, 2)))
    assert res.ok and res.worst == 0


# ----------------------------------------------------------------------------- assert_scale_invariant
M1 = np.array([[1.0, -0.5], [0.25, 0.0]])


def test_a_difference_equal_to_the_bound_passes():
    drift = 2.0**-40
    assert_scale_invariant(lambda A: 1.0 + (0.0 if np.max(np.abs(A)) == 1 else drift), M1, rtol=0.0, atol=drift)


def test_the_message_names_the_worst_entry_and_its_values():
    def metric(A):
        return np.array([2.0, 3.0 * (1 + (0.0 if np.max(np.abs(A)) == 1 else 1e-6))])

    with pytest.raises(
        TheoryAssertionError,
        match=r"^not scale invariant: metric\(M\)\[1\] = 3 but metric\(1e-300·M\)"
        r"\[1\] = 3\.00000\d* \(\|difference\| 3e-06 > atol \+ rtol·\|metric\(M\)\| = 3e-12\)$",
    ):
        assert_scale_invariant(metric, M1)
    with pytest.raises(
        TheoryAssertionError, match=r"^not scale invariant: metric\(M\) = 1 but metric\(1e\+300·M\) = 2 "
    ):
        assert_scale_invariant(lambda A: 2.0 if np.max(np.abs(A)) > 1 else 1.0, M1)


def test_metric_values_are_read_as_floats():
    assert_scale_invariant(lambda A: Fraction(1, 3), M1)
    assert_scale_invariant(lambda A: [1, 2], M1)
    with pytest.raises(
        TheoryAssertionError, match=r"metric\(M\) = 0\.33333333333333331 but metric\(1e-300·M\) = 0\.5 "
    ):
        assert_scale_invariant(lambda A: Fraction(1, 3) if np.max(np.abs(A)) == 1 else Fraction(1, 2), M1)


def metric_of_nan(A):
    return math.nan


def test_a_non_finite_metric_is_shown_in_the_message():
    with pytest.raises(fc.FCTheoryError, match=r"^metric=<function metric_of_nan"):
        assert_scale_invariant(metric_of_nan, M1)


def test_a_metric_changing_shape_fails():
    with pytest.raises(
        TheoryAssertionError,
        match=r"^metric\(s·M\) has shape \(2,\) for s = 1e-300, metric\(M\) has "
        r"shape \(\)$",
    ):
        assert_scale_invariant(lambda A: 1.0 if np.max(np.abs(A)) == 1 else np.ones(2), M1)


def test_scales_must_keep_the_entries_normal_floats():
    tiny = np.finfo(np.float64).tiny
    assert_scale_invariant(lambda A: 1.0, np.array([1.0, 2.0]), scales=[tiny])  # 1·tiny is still normal
    with pytest.raises(
        fc.FCTheoryError,
        match=r"^scales=.* is invalid: s·M leaves the normal float64 range for M's "
        r"entries in \[0\.5, 2\]$",
    ):
        assert_scale_invariant(lambda A: 1.0, np.array([0.5, 2.0]), scales=[tiny])
    with pytest.raises(fc.FCTheoryError, match=r"^scales=1e\+308 is invalid"):
        assert_scale_invariant(lambda A: 1.0, np.array([0.5, 2.0]), scales=[1e308])
    with pytest.raises(
        fc.FCTheoryError, match=r"^metric=.* is invalid: returned a non-finite value array\(nan\) for M$"
    ):
        assert_scale_invariant(lambda A: math.nan, M1)
