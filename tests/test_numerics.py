"""fctheory._numerics: exact power-of-two rescaling, overflow-free norms, double-double arithmetic, the _logmath shim."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, strategies as st

from fctheory import _logmath, _numerics
from fctheory._backend import array_namespace_of
from fctheory._numerics import column_exponents, norms, pow2_exponent, pow2_scale, pow2_unscale, safe_norm


@pytest.mark.parametrize("scale", [1.0, 1e300, 1e-300, 3.7e-310])
def test_pow2_exponent_brings_the_largest_entry_into_half_open_unit_interval(scale):
    A = np.random.default_rng(0).standard_normal((5, 4)) * scale
    e = pow2_exponent(A)
    assert 0.5 <= np.max(np.abs(np.ldexp(A, -e))) < 1.0


@pytest.mark.parametrize("A", [np.zeros((3, 2)), np.zeros((0, 4)), np.array([np.inf, 1.0]), np.array([np.nan])])
def test_pow2_exponent_is_zero_where_nothing_may_be_rescaled(A):
    assert pow2_exponent(A) == 0


def test_rescaling_round_trips_bit_for_bit():
    A = np.random.default_rng(1).standard_normal((6, 7)) * 1e250
    e = pow2_exponent(A)
    assert np.array_equal(pow2_unscale(pow2_scale(A, e), e), A)
    assert pow2_scale(A, 0) is A and pow2_unscale(A, 0) is A


def test_column_exponents_scale_each_column_separately():
    A = np.array([[1e300, 3e-300, 0.0], [-2e300, 1e-300, 0.0]])
    e = column_exponents(A)
    cols = np.max(np.abs(np.ldexp(A, -e[None, :])), axis=0)
    assert np.all((cols[:2] >= 0.5) & (cols[:2] < 1.0)) and e[2] == 0
    assert column_exponents(A, keepdims=True).shape == (1, 3)


@pytest.mark.parametrize("scale", [1.0, 1e200, 1e-200])
def test_safe_norm_equals_math_hypot_of_all_entries(scale):
    rng = np.random.default_rng(2)
    A, B = rng.standard_normal((3, 4)) * scale, rng.standard_normal(5) * scale
    ref = math.hypot(*A.ravel(), *B.ravel())  # correctly rounded to within an ulp, overflow-free
    assert safe_norm(A, B) == pytest.approx(ref, rel=4e-16)


@pytest.mark.parametrize("k", [-1000, -600, -401, -400, -3, 0, 7, 400, 401, 600, 1000])
def test_safe_norm_of_one_array_is_bitwise_the_rescaled_norm_at_every_scale(k):
    # one float64 array takes the direct √Σa² where no square can overflow or underflow; the two-array call
    # (an empty second array) always rescales: both are the same float at every scale
    a = np.random.default_rng(k % 17).standard_normal((4, 5)) * 2.0**k
    assert safe_norm(a) == safe_norm(a, np.zeros(0))
    assert safe_norm(a) == pytest.approx(math.hypot(*a.ravel()), rel=4e-16)


def test_safe_norm_of_rows_whose_largest_entry_is_one():
    # a largest entry of exactly 1 is an ordinary scale, not a special value, on both paths
    assert safe_norm(np.array([1.0, 1.0])) == math.sqrt(2.0)
    assert safe_norm(np.array([1.0]), np.array([1.0])) == math.sqrt(2.0)


def test_safe_norm_of_lists_and_of_float32_data_is_the_float64_norm():
    assert safe_norm([3.0, 4.0]) == 5.0 and safe_norm([3.0], [4.0]) == 5.0
    # float32 squares summed in float32 would lose ~7 digits over 10^5 entries: the norm is taken in float64
    a = np.random.default_rng(4).random(10**5).astype(np.float32)
    ref = math.sqrt(math.fsum(float(x) ** 2 for x in a))
    assert safe_norm(a) == pytest.approx(ref, rel=1e-14)


def test_safe_norm_keeps_a_strict_underflow_setting_quiet():
    # entries 2^1074 below the largest underflow to 0 in the rescaled squares, silently whatever the caller's setting
    a = np.array([1e-300, 3e300, 4e300])
    with np.errstate(under="raise"):
        got = safe_norm(a)
    assert got == pytest.approx(5e300, rel=4e-16)


def test_pow2_scale_keeps_a_strict_underflow_setting_quiet():
    # entries far below the largest underflow to 0 by design; a caller's np.errstate(under="raise") must not
    # turn that into an error (nor change the result)
    A = np.array([1e-300, 1.0, 3.0])
    with np.errstate(under="raise"):
        got = pow2_scale(A, 60)
    assert np.array_equal(got, np.ldexp(A, -60))
    assert np.array_equal(pow2_scale(A, -5), A * 32.0)


def test_safe_norm_of_zero_and_of_an_overflowing_norm():
    assert safe_norm(np.zeros(3), np.zeros((0,))) == 0.0
    assert safe_norm(np.full(4, 1.5e308)) == math.inf


@pytest.mark.parametrize("axis", [0, 1])
def test_norms_match_hypot_along_each_axis_at_extreme_scales(axis):
    M = np.random.default_rng(3).standard_normal((4, 6)) * 1e-305
    got = norms(M, axis)
    ref = [math.hypot(*v) for v in (M.T if axis == 0 else M)]
    np.testing.assert_allclose(got, ref, rtol=4e-16)


def test_norms_at_moderate_scale_equal_numpy_bit_for_bit():
    M = np.random.default_rng(4).standard_normal((5, 3))
    assert np.array_equal(norms(M, 0), np.linalg.norm(M, axis=0))


def test_logmath_is_a_shim_of_numerics():
    for name in ("expit", "log1p_aexpm1", "log1p_aexpm1_prime", "solve_monotone"):
        assert getattr(_logmath, name) is getattr(_numerics, name)


# every binary exponent range: normal, subnormal results, overflow, and the two-step exponents beyond ±1023
_LDEXP_EXPONENTS = [0, 1, -1, 52, -60, 1000, -1000, 1023, 1024, 1025, -1022, -1074, -1075, -1100, 2000, -2146]


def _ldexp_inputs():
    rng = np.random.default_rng(3)
    A = rng.standard_normal(400) * 10.0 ** rng.integers(-320, 308, 400)
    return np.concatenate([A, [0.0, -0.0, 5e-324, -5e-324, 1.7e308, 2.2250738585072014e-308, 0.75, -0.5]])


@pytest.mark.parametrize("e", _LDEXP_EXPONENTS)
def test_ldexp_of_a_tensor_is_bitwise_numpys_ldexp(e):
    torch = pytest.importorskip("torch", reason="needs torch: pip install 'fctheory[torch]'")

    A = _ldexp_inputs()
    t = torch.from_numpy(A)
    with np.errstate(over="ignore", under="ignore"):
        want = np.ldexp(A, e)
    got = _numerics.ldexp(t, e, array_namespace_of(t)).numpy()
    # bit patterns: the signs of zeros and the last bit of subnormal results included
    assert np.array_equal(got.view(np.int64), want.view(np.int64))


def test_pow2_rescaling_of_a_tensor_round_trips_and_stays_a_tensor():
    torch = pytest.importorskip("torch", reason="needs torch: pip install 'fctheory[torch]'")

    A = torch.from_numpy(np.random.default_rng(4).standard_normal((5, 3)) * 1e-310)
    xp = array_namespace_of(A)
    e = pow2_exponent(A, xp)
    assert e == pow2_exponent(A.numpy())
    S = pow2_scale(A, e, xp)
    assert isinstance(S, torch.Tensor) and 0.5 <= float(S.abs().max()) < 1.0
    assert torch.equal(pow2_unscale(S, e, xp), A)


# ----------------------------------------------------------------------------- double-double arithmetic
# oracle: exact rationals (every double and every pair sum is an exact Fraction)
_finite = st.floats(min_value=-1e30, max_value=1e30, allow_nan=False, allow_infinity=False).filter(
    lambda x: x == 0 or abs(x) > 1e-30
)


def _dd(hi, lo_frac):
    """A normalised double-double (hi, lo) with |lo| ≤ ulp(hi)/2: lo = lo_frac·ulp(hi)/2."""
    return _numerics.two_sum(hi, lo_frac * float(np.spacing(hi)) / 2)


def _q(x):
    return Fraction(float(x[0])) + Fraction(float(x[1]))


def _dd_rel(got, exact):
    return abs(_q(got) - exact) / abs(exact)


@given(_finite, _finite)
def test_two_sum_and_two_prod_are_error_free(a, b):
    s, e = _numerics.two_sum(a, b)
    assert s == a + b and Fraction(s) + Fraction(e) == Fraction(a) + Fraction(b)
    p, f = _numerics.two_prod(a, b)
    assert p == a * b and Fraction(p) + Fraction(f) == Fraction(a) * Fraction(b)


_mant = st.floats(0.5, 2.0)
_frac = st.floats(-1.0, 1.0)
_exp = st.integers(-60, 60)


@given(_mant, _frac, _mant, _frac, _exp, st.booleans())
def test_dd_add_is_accurate_to_2_to_the_minus_104_even_under_cancellation(a, fa, b, fb, e, cancel):
    # cancel: b is a's negative up to its last bits, so the leading 53+ bits of a + b vanish
    x = _dd(a, fa)
    y = _dd(-a * (1 + 2.0**-40), fb) if cancel else _dd(b * 2.0**e, fb)
    exact = _q(x) + _q(y)
    assert _dd_rel(_numerics.dd_add(x, y), exact) <= 2.0**-104


@given(_mant, _frac, _mant, _frac, _exp)
def test_dd_mul_div_sqrt_are_accurate_to_2_to_the_minus_102(a, fa, b, fb, e):
    x, y = _dd(a, fa), _dd(b * 2.0**e, fb)
    assert _dd_rel(_numerics.dd_mul(x, y), _q(x) * _q(y)) <= 2.0**-102
    assert _dd_rel(_numerics.dd_div(x, y), _q(x) / _q(y)) <= 2.0**-102
    # √: compare squares (exact in Fraction): (s² − y)/y ≈ 2·(relative error of s)
    s = _q(_numerics.dd_sqrt(y))
    assert abs(s * s - _q(y)) / _q(y) <= 2.0**-101


def test_dd_operations_work_elementwise_on_arrays():
    x = (np.array([1.0, 3.0]), np.array([2.0**-60, 0.0]))
    y = (np.array([3.0, 1.0]), np.zeros(2))
    q = _numerics.dd_div(x, y)
    assert abs(_q((q[0][0], q[1][0])) - (1 + Fraction(2) ** -60) / 3) <= Fraction(2) ** -106
    assert q[0][1] == 3.0 and q[1][1] == 0.0


def test_safe_norm_reduces_every_library_on_its_device_like_numpy(array_backend):
    """The same float64 norm, bit for bit, from NumPy data and from the library's array: tiny (subnormal),
    huge (squares beyond float64), overflowing (inf) and non-finite entries."""
    rng = np.random.default_rng(5)
    cases = [
        rng.standard_normal((4, 3)),
        rng.standard_normal(7) * 1e200,
        np.array([1e-320, -3e-321, 0.0]),
        np.array([1.7e308, 1.7e308]),
        np.array([1.0, np.inf]),
        np.array([1.0, np.nan]),
        np.zeros((0, 2)),
    ]
    for A in cases:
        want = safe_norm(A)
        got = safe_norm(array_backend.asarray(A))
        assert (np.isnan(got) and np.isnan(want)) or got == want, (A, got, want)
    assert safe_norm(array_backend.asarray(cases[0]), cases[1]) == safe_norm(cases[0], cases[1])
