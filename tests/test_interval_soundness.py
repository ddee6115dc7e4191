"""Soundness of the ball-arithmetic layer (fctheory/_interval.py): every bound is checked EXACTLY.

A certified enclosure is wrong as soon as one bound is rounded the wrong way by one ulp, a root is not unique in
its box, an inclusion test accepts mere overlap or a radius is underestimated; none of these moves a reference
value out of a 1e-37-wide ball, so comparisons against a float reference cannot see them. Here every comparison
is made in exact rationals (:class:`fractions.Fraction` of the float and of the arb endpoint, or of a 100+-digit
mpmath number taken exactly), at points whose nearest double lies *above* the exact value (1/10), *below* it
(1/3) and for negative values too; tightness is checked as well (the best bound, or a few ulps), so that a
result that is merely wide is caught; root finders are fed functions whose root is not unique in the bracket
(two roots, three roots, a flat derivative) and boxes whose Krawczyk image only overlaps them or touches their
boundary. Hypothesis draws adversarial inputs: low working precision (8–16 bits), wide balls, huge and tiny
exponents.
"""

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

flint = pytest.importorskip("flint")

from fctheory import FCTheoryError  # noqa: E402
from fctheory import _interval as I  # noqa: E402


# ------------------------------------------------------------------------------------------------ exact oracles
def fr(x) -> Fraction:
    """The exact rational value of an exact arb (a point), a float, an int or an mpmath mpf."""
    if isinstance(x, flint.arb):
        assert x.is_exact(), x
        man, exp = x.mid().man_exp()
        return Fraction(int(man)) * Fraction(2) ** int(exp)
    if hasattr(x, "man_exp"):
        sign, man, exp, _ = x._mpf_  # (mpf.man_exp drops the sign)
        return (-1) ** sign * Fraction(int(man)) * Fraction(2) ** int(exp)
    return Fraction(x)


def mid_fr(ball) -> Fraction:
    return fr(ball.mid())


def rad_fr(ball) -> Fraction:
    return fr(ball.rad())


def lower_fr(ball) -> Fraction:
    return mid_fr(ball) - rad_fr(ball)


def upper_fr(ball) -> Fraction:
    return mid_fr(ball) + rad_fr(ball)


def up1(f: float) -> float:
    return float(np.nextafter(f, np.inf))


def down1(f: float) -> float:
    return float(np.nextafter(f, -np.inf))


def mp_point(num, den, dps=120):
    """num/den rounded to ``dps`` digits by mpmath, as an exact arb point (not a double)."""
    with mpmath.workdps(dps):
        x = mpmath.mpf(num) / den
    return I.exact_arb(x), x


# values whose nearest double lies above (1/10, −1/3) and below (1/3, −1/10) the exact value, and others
FRACTIONS = [(1, 10), (1, 3), (-1, 10), (-1, 3), (2, 3), (-7, 9), (10**30 + 1, 3), (1, 3 * 2**1000), (-5, 7 * 2**900)]


def test_the_chosen_points_are_rounded_both_ways_by_float():
    above = [Fraction(float(Fraction(n, d))) > Fraction(n, d) for n, d in FRACTIONS]
    assert any(above) and not all(above)
    assert Fraction(0.1) > Fraction(1, 10) and Fraction(1 / 3) < Fraction(1, 3)


# ------------------------------------------------------------------------------------------------ _down and _up
@pytest.mark.parametrize(("num", "den"), FRACTIONS)
def test_down_is_the_largest_double_not_above_a_120_digit_point(num, den):
    x, _ = mp_point(num, den)
    f = I._down(flint, x)
    assert fr(f) <= fr(x) < fr(up1(f))


@pytest.mark.parametrize(("num", "den"), FRACTIONS)
def test_up_is_the_smallest_double_not_below_a_120_digit_point(num, den):
    x, _ = mp_point(num, den)
    f = I._up(flint, x)
    assert fr(down1(f)) < fr(x) <= fr(f)


@pytest.mark.parametrize("f", [0.1, 1 / 3, -0.1, -1 / 3, 1.0, 5e-324, -5e-324, 1.7976931348623157e308, 0.0])
def test_down_and_up_of_an_exact_double_are_that_double(f):
    x = flint.arb(f)
    assert I._down(flint, x) == f and I._up(flint, x) == f


@given(
    st.integers(-(10**40), 10**40).filter(bool),
    st.integers(1, 10**40),
    st.integers(-1000, 1000),
)
@settings(max_examples=80, deadline=None)
def test_down_and_up_bracket_any_rational_point_by_one_ulp(num, den, e2):
    with mpmath.workprec(400):
        xm = mpmath.ldexp(mpmath.mpf(num) / den, e2)
    x = I.exact_arb(xm)
    lo, hi = I._down(flint, x), I._up(flint, x)
    assert fr(lo) <= fr(x) <= fr(hi)
    assert fr(up1(lo)) > fr(x) and fr(down1(hi)) < fr(x)


# ------------------------------------------------------------------------------------------------ rel_rad
def _exact_rel(ball) -> Fraction:
    return rad_fr(ball) / abs(mid_fr(ball))


@pytest.mark.parametrize("prec", [8, 10, 12, 16])
@pytest.mark.parametrize(("mid", "rad"), [(3, 1), (-3, 1), (7, 3), (-11, 5), (0.1, 0.07), (1 / 3, 0.2), (5, 4.9)])
def test_rel_rad_is_never_below_the_exact_radius_over_midpoint_at_low_precision(prec, mid, rad):
    # at 8–16 bits the quotient rad/|mid| is a wide ball: its midpoint lies below the exact ratio half the time
    with I.workprec(prec):
        ball = flint.arb(mid, rad)
        r = I.rel_rad(ball)
    exact = _exact_rel(ball)
    assert fr(r) >= exact
    assert fr(r) <= exact * (1 + Fraction(1, 2 ** (prec - 3)))  # and not far above: one quotient's rounding


@given(
    st.integers(-(2**40), 2**40).filter(bool),
    st.integers(-60, 60),
    st.integers(1, 2**30),
    st.integers(-80, 40),
    st.integers(8, 24),
)
@settings(max_examples=100, deadline=None)
def test_rel_rad_bounds_the_exact_ratio_for_adversarial_balls(m, em, r, er, prec):
    with I.workprec(prec):
        ball = flint.arb(flint.arb((flint.fmpz(m), em)), flint.arb((flint.fmpz(r), er)))
        out = I.rel_rad(ball)
    exact = _exact_rel(ball)
    assert fr(out) >= exact
    assert fr(out) <= exact * (1 + Fraction(1, 2 ** (prec - 3))) + Fraction(2.0**-1074)


def test_rel_rad_of_an_exact_ball_is_zero_and_of_a_ball_centred_at_zero_is_inf():
    assert I.rel_rad(flint.arb(0.1)) == 0.0
    assert I.rel_rad(flint.arb(0)) == 0.0
    assert I.rel_rad(flint.arb(0, 1e-300)) == math.inf
    neg = flint.arb(-2.0, 2.0**-40)  # a negative midpoint: the ratio is rad/|mid| > 0
    assert fr(I.rel_rad(neg)) >= _exact_rel(neg) >= Fraction(2.0**-41)
    assert I.rel_rad(neg) == pytest.approx(2.0**-41, rel=1e-8)


def test_rel_rad_of_a_ball_beyond_the_float64_range_is_formed_in_ball_arithmetic():
    big = flint.arb(flint.arb((flint.fmpz(3), 5000)), flint.arb((flint.fmpz(1), 4990)))  # 3·2^5000 ± 2^4990
    assert fr(I.rel_rad(big)) >= Fraction(1, 3 * 2**10)
    assert I.rel_rad(big) == pytest.approx(1 / (3 * 2**10), rel=1e-12)


# ------------------------------------------------------------------------------------------------ enclosure
def _check_enclosure_exactly(ball):
    e = I.enclosure(ball, 77)
    lo_x, hi_x = lower_fr(ball), upper_fr(ball)
    # outward: lo ≤ exact lower end, hi ≥ exact upper end; and the best such doubles
    assert fr(e.lo) <= lo_x < fr(up1(e.lo))
    assert fr(down1(e.hi)) < hi_x <= fr(e.hi)
    assert fr(e.rad) >= rad_fr(ball) and fr(down1(e.rad)) < rad_fr(ball)  # never underestimated, tight
    assert e.mid == float(mid_fr(ball))  # the midpoint correctly rounded
    assert e.width >= 2 * float(rad_fr(ball)) and fr(e.width) >= hi_x - lo_x
    assert e.rel_width == 2 * I.rel_rad(ball)
    assert e.rel_width == math.inf or fr(e.rel_width) >= 2 * _exact_rel(ball)
    assert e.prec == 77 and e.ball is ball
    assert e.contains(ball.mid()) and e.contains(I.exact_arb(e.lo)) is (lower_fr(ball) == fr(e.lo))
    return e


@pytest.mark.parametrize(("num", "den"), FRACTIONS)
def test_enclosure_of_a_200_bit_ball_has_outward_float_bounds_checked_exactly(num, den):
    with I.workprec(200):
        ball = flint.arb(flint.fmpq(num, den))
    e = _check_enclosure_exactly(ball)
    assert fr(e.lo) <= Fraction(num, den) <= fr(e.hi)
    assert e.hi - e.lo <= 2 * math.ulp(e.mid)  # one double each way, not more


@given(
    st.integers(-(2**60), 2**60).filter(bool),
    st.integers(-1100, 1000),
    st.integers(1, 2**30),
    st.integers(-1200, 900),
)
@settings(max_examples=100, deadline=None)
def test_enclosure_bounds_and_radius_are_outward_for_adversarial_balls(m, em, r, er):
    ball = flint.arb(flint.arb((flint.fmpz(m), em)), flint.arb((flint.fmpz(r), er)))
    if abs(upper_fr(ball)) > Fraction(2**1000) or abs(lower_fr(ball)) > Fraction(2**1000):
        return  # outside the float64 range the bounds are ±inf (checked separately)
    _check_enclosure_exactly(ball)


def test_a_radius_below_the_smallest_subnormal_is_rounded_up_not_to_zero():
    ball = flint.arb(1, flint.arb((flint.fmpz(2**29 + 1), -1110)))
    e = I.enclosure(ball, 128)
    assert e.rad == 5e-324 and fr(e.rad) >= rad_fr(ball)
    assert e.lo == down1(1.0) and e.hi == up1(1.0)


def test_enclosure_of_an_exact_double_is_that_double_with_zero_width():
    e = I.enclosure(flint.arb(-0.1), 128)
    assert e.lo == e.hi == e.mid == -0.1 and e.rad == 0 and e.rel_width == 0 and e.width == 0
    assert float(e) == -0.1


def test_enclosure_array_stacks_the_fields_of_each_scalar_enclosure():
    with I.workprec(200):
        balls = [flint.arb(flint.fmpq(k, 7)) for k in range(1, 7)]
    items = [I.enclosure(b, 128 * k) for k, b in enumerate(balls, 1)]
    arr = I.enclosure_array(items, (2, 3))
    assert I.enclosure_array(items[:1], ()) is items[0]
    for name in ("lo", "hi", "mid", "rad", "rel_width", "prec"):
        got = getattr(arr, name)
        assert got.shape == (2, 3)
        assert got.ravel().tolist() == [getattr(e, name) for e in items]
    assert arr.prec.dtype.kind == "i" and arr.lo.dtype == np.float64
    assert [b is c for b, c in zip(arr.ball.ravel(), balls)] == [True] * 6
    np.testing.assert_array_equal(arr.width, arr.hi - arr.lo)
    exact = np.array([Fraction(k, 7) for k in range(1, 7)], dtype=object).reshape(2, 3)
    inside = np.empty((2, 3), dtype=object)
    for idx in np.ndindex(2, 3):
        q = exact[idx]
        with mpmath.workprec(300):
            inside[idx] = mpmath.mpf(q.numerator) / q.denominator
    assert arr.contains(inside).all()
    assert not arr.contains(np.full((2, 3), 0.5)).any()
    assert arr.contains(np.array([[0.5, 1.0, 2.0], [4 / 7, 5 / 7, 6 / 7]])).tolist() == [[False] * 3, [False] * 3]


def test_contains_of_a_scalar_enclosure_refuses_a_value_one_ulp_outside():
    e = I.enclosure(flint.arb(2).sqrt(), 53)
    assert e.contains(math.sqrt(2)) is not e.contains(up1(e.hi))
    assert not e.contains(up1(float(upper_fr(e.ball)) * 1.0000001))
    assert not e.contains(-math.sqrt(2))


# ------------------------------------------------------------------------------------------------ exact inputs
@pytest.mark.parametrize("x", [0.1, -1 / 3, 5e-324, 1.7976931348623157e308, np.float64(0.7), np.float32(0.1)])
def test_exact_fmpq_and_exact_arb_take_a_double_as_the_rational_it_stores(x):
    q = I.exact_fmpq(x)
    assert Fraction(int(q.p), int(q.q)) == Fraction(float(x))
    a = I.exact_arb(x)
    assert a.is_exact() and fr(a) == Fraction(float(x))


def test_exact_fmpq_and_exact_arb_take_ints_and_mpf_exactly():
    big = 3**700 + 1  # beyond the float64 range and its 53 bits
    assert I.exact_fmpq(big) == flint.fmpq(big) and fr(I.exact_arb(big)) == big
    assert fr(I.exact_arb(np.int64(-7))) == -7 and I.exact_fmpq(np.int64(-7)) == -7
    with mpmath.workprec(300):
        x = mpmath.mpf(1) / 3
    q = I.exact_fmpq(x)
    assert Fraction(int(q.p), int(q.q)) == fr(x) != Fraction(1, 3)
    with I.workprec(53):  # the mpf keeps all its 300 bits whatever the working precision
        a = I.exact_arb(x)
    assert a.is_exact() and fr(a) == fr(x)
    ball = flint.arb(1, 0.5)
    assert I.exact_arb(ball) is ball


def test_exact_one_minus_p_is_the_exact_rational_and_refuses_K_above_n_c_to_the_L():
    assert I.exact_one_minus_p(3, 40, 12345) == flint.fmpq(3**40 - 12345, 3**40)
    assert I.exact_one_minus_p(2, 3, 8) == 0
    assert I.exact_one_minus_p(7, 1, 1) == flint.fmpq(6, 7)
    with pytest.raises(FCTheoryError) as info:
        I.exact_one_minus_p(3, 40, 3**40 + 1)
    assert str(info.value) == (f"K={3**40 + 1} is invalid: must be <= n_c**L = 3**40 (the number of latent variables)")


@pytest.mark.parametrize("x", ["-0.5", "-0.1", "-1e-400", "-3e500"])
def test_exact_fmpq_and_exact_arb_keep_the_sign_of_a_negative_mpf(x):
    with mpmath.workprec(300):
        m = mpmath.mpf(x)
    q = I.exact_fmpq(m)
    assert Fraction(int(q.p), int(q.q)) == fr(m) < 0
    a = I.exact_arb(m)
    assert a.is_exact() and fr(a) == fr(m) < 0


def test_contains_refuses_the_negative_of_its_value_and_non_finite_mpf():
    e = I.enclosure(flint.arb(0.5), 128)
    assert e.contains(mpmath.mpf(0.5)) and not e.contains(mpmath.mpf(-0.5))
    zero = I.enclosure(flint.arb(0), 0)
    assert zero.contains(mpmath.mpf(0))
    for bad in ("inf", "-inf", "nan"):
        assert not zero.contains(mpmath.mpf(bad)) and not e.contains(mpmath.mpf(bad))
    with pytest.raises((OverflowError, ValueError)):
        I.exact_fmpq(mpmath.mpf("inf"))


def test_workprec_sets_and_restores_the_precision_even_on_error():
    old = flint.ctx.prec
    with pytest.raises(ZeroDivisionError):
        with I.workprec(17.9) as fl:
            assert fl is flint and flint.ctx.prec == 17
            raise ZeroDivisionError
    assert flint.ctx.prec == old


# ------------------------------------------------------------------------------------------------ latent terms
@pytest.mark.parametrize(
    ("n_c", "L", "K", "s"), [(3, 15, 1000, 0.1), (2, 1, 2, 1 / 3), (7, 9, 12345, 2.5), (5, 300, 10**20, 40.0)]
)
def test_latent_terms_enclose_the_120_digit_values(n_c, L, K, s):
    with mpmath.workdps(120):
        S = mpmath.mpf(s)
        u = (n_c - 1) * mpmath.exp(-S)
        p = mpmath.mpf(K) / mpmath.mpf(n_c) ** L
        PL = p * (1 + u) ** L
        ref = [u / (1 + u), 1 / (1 + u), PL / (1 - p + PL), (1 - p) / (1 - p + PL)]
    with I.workprec(256):
        got = I.latent_terms(n_c, L, K, flint.arb(I.exact_one_minus_p(n_c, L, K)), I.exact_arb(s))
    for g, r in zip(got, ref):
        assert _close(g, r), (g, r)
        assert I.rel_rad(g) < 1e-60


def _close(ball, ref) -> bool:
    """The ball contains ref up to ref's own 120-digit accuracy."""
    err = abs(fr(ref)) * Fraction(1, 10**110)
    return lower_fr(ball) - err <= fr(ref) <= upper_fr(ball) + err


# ------------------------------------------------------------------------------------------------ newton_root
def cubic(r1, r2, r3):
    def f(s):
        return (s - r1) * (s - r2) * (s - r3)

    def fp(s):
        return (s - r2) * (s - r3) + (s - r1) * (s - r3) + (s - r1) * (s - r2)

    return f, fp


def test_newton_root_encloses_sqrt2_tightly_and_checks_it_exactly():
    with I.workprec(128):
        X = I.newton_root(lambda s: s * s - 2, lambda s: 2 * s, 1.0, 2.0)
        assert X is not None
        lo, hi = lower_fr(X), upper_fr(X)
        assert lo > 0 and lo * lo < 2 < hi * hi  # exact: √2 ∈ [lo, hi]
        assert hi - lo < Fraction(1, 2**120)


@pytest.mark.parametrize(
    ("roots", "lo", "hi"),
    [((1.0, 2.2, 3.0), 0.5, 3.7), ((1.0, 1.0, 2.0), 0.5, 2.5), ((-3.1, -0.3, 2.9), -4.0, 4.0)],
)
def test_newton_root_refuses_a_bracket_holding_more_than_one_root(roots, lo, hi):
    """Three roots, or a double root and a simple one: f(lo) < 0 < f(hi) holds but f′ changes sign."""
    f, fp = cubic(*roots)
    with I.workprec(128):
        assert f(flint.arb(lo)) < 0 < f(flint.arb(hi))
        assert I.newton_root(f, fp, lo, hi) is None


def test_newton_root_refuses_a_derivative_only_certified_nonnegative():
    # f = s³ on [−1, 2]: f′ is given as the ball [0, 4] (its lower end at or just below 0, arb rounds radii
    # up) on every box, so f′ > 0 is not certified (a flat piece of f, an interval of zeros, would pass f′ ≥ 0)
    with I.workprec(128):
        d = flint.arb(0).union(flint.arb(4))
        assert not d > 0
        assert I.newton_root(lambda s: s**3, lambda s: d, -1.0, 2.0) is None


def test_newton_root_returns_the_box_reached_when_a_narrower_box_loses_the_derivative_sign():
    # f = s − 1/3 on [0, 1]; f′ is enclosed by [1, 1] on the bracket but by the (valid, loose) [−1, 1] on any
    # narrower box: the first Newton step is proven, the loop stops there and returns its box
    def fp(X):
        return flint.arb(1) if X.rad() >= 0.5 else flint.arb(0, 1)

    with I.workprec(128):
        third = flint.arb(1) / 3
        X = I.newton_root(lambda s: s - third, fp, 0.0, 1.0)
        assert X is not None and X.contains(third) and float(X.rad()) < 1e-30


@pytest.mark.parametrize(("lo", "hi"), [(1.0, 2.0), (0.0, 1.0), (2.0, 3.0), (-1.0, 0.5)])
def test_newton_root_refuses_a_bracket_whose_ends_are_not_certified_of_opposite_sign(lo, hi):
    # f = s − 1: at lo = 1 the sign is 0 (not < 0), [0, 1] ends at the root, [2, 3] and [−1, 0.5] have no root
    with I.workprec(128):
        assert I.newton_root(lambda s: s - 1, lambda s: flint.arb(1), lo, hi) is None


def test_newton_root_refuses_a_derivative_enclosure_inconsistent_with_f():
    # f′ claimed ≈ 1e-6 on [0, 1] while f = s − 1/3 has slope 1: the Newton image misses the box entirely
    with I.workprec(128):
        assert I.newton_root(lambda s: s - flint.arb(1) / 3, lambda s: flint.arb(1e-6), 0.0, 1.0) is None


@given(st.floats(-50, 50), st.floats(0.01, 10), st.floats(0.001, 5), st.integers(64, 256))
@settings(max_examples=40, deadline=None)
def test_newton_root_result_holds_the_exact_root_of_a_monotone_function(c, w_lo, w_hi, prec):
    # f(s) = eˢ + s − (e^c + c): increasing, unique root c (a double, so checked exactly)
    def f(s):
        return s.exp() + s - (flint.arb(c).exp() + c)

    with I.workprec(prec):
        X = I.newton_root(f, lambda s: s.exp() + 1, c - w_lo, c + w_hi)
        assert X is not None and X.contains(flint.arb(c))
        assert lower_fr(X) <= fr(c) <= upper_fr(X)
        assert float(X.rad()) <= 2.0 ** (-prec + 12) * max(1.0, abs(c))


# ------------------------------------------------------------------------------------------------ bisect_to_newton
@pytest.mark.parametrize(("roots", "lo", "hi"), [((1.0, 2.2, 3.0), 0.5, 3.7), ((-3.1, -0.3, 2.9), -4.0, 4.0)])
def test_bisect_to_newton_splits_a_three_root_bracket_down_to_one_certified_root(roots, lo, hi):
    f, fp = cubic(*roots)
    with I.workprec(128):
        X = I.bisect_to_newton(f, fp, lo, hi)
        assert X is not None
        inside = [r for r in roots if X.contains(flint.arb(r))]
        assert len(inside) == 1 and float(X.rad()) < 1e-30
        assert fp(X) > 0  # the returned box is one on which the root is unique


def test_bisect_to_newton_refuses_ends_of_the_same_sign_even_with_roots_between():
    # (s − 1)(s − 2) is positive at 0 and 3: no certified bracket, although bisection could find a root
    def f(s):
        return (s - 1) * (s - 2)

    with I.workprec(128):
        assert I.bisect_to_newton(f, lambda s: 2 * s - 3, 0.0, 3.0) is None
        assert I.bisect_to_newton(lambda s: s - 1, lambda s: flint.arb(1), 1.0, 3.0) is None  # f(lo) = 0


@pytest.mark.parametrize(("lo", "hi"), [(1.0, 3.7), (1.9, 3.7), (0.5, 3.0)])
def test_bisect_to_newton_refuses_a_bracket_not_certified_at_its_ends_although_a_root_lies_inside(lo, hi):
    # (s − 1)(s − 2)(s − 3): f(1) = 0, f(1.9) = 0.099 > 0, f(3) = 0; bisection from such ends would still find
    # the root 3 (or 1), but the bracket f(lo) < 0 < f(hi) is the documented precondition
    f, fp = cubic(1.0, 2.0, 3.0)
    with I.workprec(128):
        assert I.bisect_to_newton(f, fp, lo, hi) is None


def test_bisect_to_newton_accepts_an_upper_end_with_a_small_positive_value():
    with I.workprec(128):
        X = I.bisect_to_newton(lambda s: s - 1, lambda s: flint.arb(1), 0.0, 1.5)  # f(hi) = 0.5
        assert X is not None and X.contains(flint.arb(1)) and float(X.rad()) < 1e-30
        X = I.bisect_to_newton(lambda s: s - 1, lambda s: flint.arb(1), 0.5, 3.0)  # f(lo) = −0.5
        assert X is not None and X.contains(flint.arb(1))


def test_bisect_to_newton_gives_up_when_a_midpoint_hits_a_root_exactly():
    # roots 1, 2, 3 on [0.5, 3.5]: the first midpoint is the root 2, whose sign is 0 (neither side certified)
    f, fp = cubic(1.0, 2.0, 3.0)
    with I.workprec(128):
        assert I.bisect_to_newton(f, fp, 0.5, 3.5) is None


def test_bisect_to_newton_bisects_until_the_derivative_is_certified():
    # f = s³ − 1/1000 on [−1, 1]: f′ = 3s² vanishes at 0, so Newton is refused until the bracket excludes 0
    def f(s):
        return s**3 - flint.arb(1) / 1000

    calls = []

    def fp(s):
        calls.append(s)
        return 3 * s**2

    with I.workprec(128):
        X = I.bisect_to_newton(f, fp, -1.0, 1.0)
        assert X is not None
        assert lower_fr(X) ** 3 < Fraction(1, 1000) < upper_fr(X) ** 3
        assert len(calls) > 3


def test_bisect_to_newton_returns_none_after_max_bisect_without_a_certified_derivative():
    f, fp = cubic(1.0, 1.0, 2.0)
    with I.workprec(128):
        # (s − 1)²(s − 2) is negative at both 0.5 and 1.5 (a double root between): refused at once
        assert I.bisect_to_newton(f, fp, 0.5, 1.5) is None
        # f′ given as a ball always containing 0: never certified, bisection gives up after max_bisect steps
        assert I.bisect_to_newton(lambda s: s - 1, lambda s: flint.arb(0, 1), 0.0, 3.0, max_bisect=5) is None
        X = I.bisect_to_newton(lambda s: s - 1, lambda s: flint.arb(1), 0.0, 3.0, max_bisect=1)
        assert X is not None and X.contains(flint.arb(1))


# ------------------------------------------------------------------------------------------------ bracket_increasing
def _linear(c):
    cc = I.exact_arb(c)
    return lambda s: s - cc


def _check_bracket(c, br):
    assert br is not None
    lo, hi = br
    assert fr(lo) < fr(c) < fr(hi)  # f(lo) < 0 < f(hi) exactly for f = s − c
    return lo, hi


@pytest.mark.parametrize(("rel_err", "width"), [(0.0, 2e-9), (1e-7, 2e-6), (1e-4, 2e-3), (0.2, 1.0)])
@pytest.mark.parametrize("c", [1e-200, 1 / 3, 0.1, 1e100])
def test_bracket_increasing_around_a_good_guess_is_as_narrow_as_the_guess_allows(c, rel_err, width):
    lo, hi = _check_bracket(c, I.bracket_increasing(_linear(c), c * (1 + rel_err)))
    assert hi - lo <= width * c * (1 + rel_err) * 1.001


@pytest.mark.parametrize("guess", [math.nan, 0.0, math.inf, -1.0, 1e-300])
@pytest.mark.parametrize("c", [1e-250, 1e-100, 0.3, 1e50, 1e290])
def test_bracket_increasing_without_a_usable_guess_walks_out_by_factors_of_2_to_the_16(c, guess):
    lo, hi = _check_bracket(c, I.bracket_increasing(_linear(c), guess))
    assert lo > 0 and hi / lo <= 2.0**16 * (1 + 1e-15)


def test_bracket_increasing_walks_from_a_guess_below_one_when_its_neighbourhoods_miss():
    # guess 0.5 far above the root 1e-5: f(0.5) > 0 at once, so the bracket is [0, 0.5] (zero_negative)
    assert I.bracket_increasing(_linear(1e-5), 0.5) == (0.0, 0.5)


def test_bracket_increasing_starts_from_zero_when_the_root_is_below_1e_300():
    assert I.bracket_increasing(_linear(1e-305), math.nan) == (0.0, 1e-300)
    assert I.bracket_increasing(_linear(1e-305), 0.0, zero_negative=False) is not None


@pytest.mark.parametrize("c", [1e-250, 1e-30, 0.3])
def test_bracket_increasing_without_zero_negative_walks_down_to_a_positive_lower_end(c):
    # the guess is far above the root: the upper end is the guess, the lower end is found by dividing by 2^16
    guess = 1e10
    lo, hi = _check_bracket(c, I.bracket_increasing(_linear(c), guess, zero_negative=False))
    assert hi == guess and 0 < lo and c / lo <= 2.0**16


def _walk(c):
    """The bracket of the upward walk 1e-300·2^(16k) for the root c > 1e-300: (last point below, first above)."""
    lo, hi = 0.0, 1e-300
    while hi <= c:
        lo, hi = hi, min(hi * 2.0**16, 1e300)
    return lo, hi


@pytest.mark.parametrize("c", [1e-250, 1e-100, 0.3, 7.0, 1e250])
def test_bracket_increasing_walks_up_exactly_through_1e_300_times_powers_of_2_to_the_16(c):
    assert I.bracket_increasing(_linear(c), math.nan) == _walk(c)


def test_bracket_increasing_walks_up_to_the_1e300_cap_keeping_the_last_point_below():
    c = 5e299
    lo, hi = I.bracket_increasing(_linear(c), math.nan)
    assert hi == 1e300 and (lo, hi) == _walk(c) and 1e300 / 2.0**16 < lo < c  # the last point below, not 1e300/2^16


def test_bracket_increasing_steps_over_a_walk_point_that_is_the_root_exactly():
    c = 1e-300 * 2.0**32  # the walk's third point: f(c) = 0 is neither sign
    lo, hi = _check_bracket(c, I.bracket_increasing(_linear(c), math.nan))
    assert (lo, hi) == (1e-300 * 2.0**16, c * 2.0**16)


def test_bracket_increasing_steps_over_a_neighbourhood_end_that_is_the_root_exactly():
    g = 0.7
    for c in (g * (1 - 1e-9), g * (1 + 1e-9)):  # the first neighbourhood's lower or upper end is the root
        lo, hi = _check_bracket(c, I.bracket_increasing(_linear(c), g))
        assert (lo, hi) == (g * (1 - 1e-6), g * (1 + 1e-6))


def test_bracket_increasing_walking_down_steps_over_a_point_that_is_the_root_exactly():
    guess = 1e10
    c = guess / 2.0**32  # the walk down's second point
    lo, hi = _check_bracket(c, I.bracket_increasing(_linear(c), guess, zero_negative=False))
    assert (lo, hi) == (c / 2.0**16, guess)


def test_bracket_increasing_gives_up_beyond_1e300_and_after_max_steps():
    assert I.bracket_increasing(_linear(1e305), math.nan) is None
    assert I.bracket_increasing(_linear(1e200), math.nan, max_steps=3) is None
    assert I.bracket_increasing(lambda s: flint.arb(1), 0.0, zero_negative=False) is None  # never negative
    assert I.bracket_increasing(lambda s: flint.arb(0, 1), 0.0) is None  # sign never certified


# ------------------------------------------------------------------------------------------------ krawczyk
def _sqrt2_system():
    def F(z):
        return [z[0] ** 2 + z[1] ** 2 - 4, z[0] - z[1]]

    def J(z):
        return flint.arb_mat([[2 * z[0], 2 * z[1]], [1, -1]])

    return F, J


def test_krawczyk_encloses_the_root_of_a_2d_system_exactly_and_tightly():
    F, J = _sqrt2_system()
    with I.workprec(128):
        Z = I.krawczyk(F, J, [1.3, 1.5], 1e-12)
    assert Z is not None and len(Z) == 2
    for Zi in Z:
        lo, hi = lower_fr(Zi), upper_fr(Zi)
        assert 0 < lo and lo * lo < 2 < hi * hi and hi - lo < Fraction(1, 2**115)


def test_krawczyk_refuses_a_box_holding_two_zeros():
    # (x − 1)(x − 1.1) on [1 ± 0.5]: K(X) = [−4, 6] overlaps X but is not inside it
    def F(z):
        return [(z[0] - 1) * (z[0] - flint.arb(1.1))]

    def J(z):
        return flint.arb_mat([[2 * z[0] - flint.arb(2.1)]])

    with I.workprec(128):
        assert I.krawczyk(F, J, [1.0], 0.5) is None


def test_krawczyk_refuses_an_image_as_wide_as_the_box():
    # F(x) = x − 1/4 with a (valid, loose) Jacobian enclosure [0, 2] on boxes: K(X) = X up to arb's outward
    # rounding of the radii (so K(X) is not in the interior of X): nothing is proved
    def F(z):
        return [z[0] - flint.arb(0.25)]

    def J(z):
        return flint.arb_mat([[flint.arb(1) if z[0].is_exact() else flint.arb(1, 1)]])

    with I.workprec(128):
        assert I.krawczyk(F, J, [0.25], 2.0**-10) is None


def test_krawczyk_returns_the_proven_box_when_the_contraction_stalls():
    # F(x) = x − 1/4 with a Jacobian enclosure [0.2, 1.8] on boxes: K(X) = 1/4 ± 0.8·rho, inside X but not
    # 0.75 times narrower, so the rounds stop at once with the box proven in the first
    def F(z):
        return [z[0] - flint.arb(0.25)]

    def J(z):
        return flint.arb_mat([[flint.arb(1) if z[0].is_exact() else flint.arb(1, 0.8)]])

    with I.workprec(128):
        Z = I.krawczyk(F, J, [0.25], 2.0**-10)
    assert Z is not None and Z[0].contains(flint.arb(0.25))
    assert 0.79 * 2.0**-10 <= float(Z[0].rad()) <= 0.81 * 2.0**-10


def test_krawczyk_refuses_a_box_too_wide_for_the_contraction():
    # x² − 2 near √2 with rho = 2: X = [−0.59, 3.41], K(X) = [−1.41, 4.24] is wider than X
    with I.workprec(128):
        assert I.krawczyk(lambda z: [z[0] ** 2 - 2], lambda z: flint.arb_mat([[2 * z[0]]]), [1.4], 2.0) is None
        Z = I.krawczyk(lambda z: [z[0] ** 2 - 2], lambda z: flint.arb_mat([[2 * z[0]]]), [1.4], 0.3)
        assert Z is not None and Z[0].contains(flint.arb(2).sqrt())


def test_krawczyk_returns_none_for_a_singular_jacobian():
    with I.workprec(128):
        assert I.krawczyk(lambda z: [z[0] ** 2], lambda z: flint.arb_mat([[2 * z[0]]]), [0.0], 0.1) is None
        # singular at the refined centre only in the rounds (the refinement is skipped with refine=0)
        assert I.krawczyk(lambda z: [z[0] ** 2], lambda z: flint.arb_mat([[2 * z[0]]]), [0.0], 0.1, refine=0) is None


def test_krawczyk_result_is_an_exact_enclosure_for_a_linear_system_with_a_float_centre_far_off():
    # 3x + y = 1, x − 2y = 0: root (2/7, 1/7); the starting point is 10 away, the Newton refinement moves it
    def F(z):
        return [3 * z[0] + z[1] - 1, z[0] - 2 * z[1]]

    def J(z):
        return flint.arb_mat([[3, 1], [1, -2]])

    with I.workprec(128):
        Z = I.krawczyk(F, J, [10.0, -10.0], 1e-20)
    assert Z is not None
    for Zi, q in zip(Z, (Fraction(2, 7), Fraction(1, 7))):
        assert lower_fr(Zi) <= q <= upper_fr(Zi) and upper_fr(Zi) - lower_fr(Zi) < Fraction(1, 2**110)


# ------------------------------------------------------------------------------------------------ adaptive
def test_adaptive_doubles_the_precision_until_the_target_and_sets_it_during_the_solve():
    seen = []

    def solve(prec):
        seen.append((prec, flint.ctx.prec))
        return None if prec < 512 else flint.arb(1, 2.0 ** (-prec + 400))

    old = flint.ctx.prec
    ball, prec = I.adaptive(solve, what="x")
    assert seen == [(128, 128), (256, 256), (512, 512)] and prec == 512 and ball.rad() > 0
    assert flint.ctx.prec == old


def test_adaptive_tries_every_precision_up_to_and_including_prec_max():
    seen = []

    def solve(prec):
        seen.append(prec)
        return None if prec < I.PREC_MAX else [flint.arb(1), flint.arb(2, 1e-30)]

    out, prec = I.adaptive(solve, what="x")
    assert seen == [128, 256, 512, 1024, 2048, 4096] and prec == I.PREC_MAX and len(out) == 2


def test_adaptive_returns_the_last_certified_result_when_the_target_is_never_met():
    calls = []

    def solve(prec):
        calls.append(prec)
        return (flint.arb(1, 1e-10), flint.arb(3)) if prec <= 1024 else None

    out, prec = I.adaptive(solve, what="x")
    assert prec == 1024 and isinstance(out, tuple) and calls[-1] == I.PREC_MAX


def test_adaptive_stops_at_the_first_result_whose_every_ball_meets_the_target():
    def solve(prec):
        return [flint.arb(1, 1e-30), flint.arb(1, 1e-16 if prec < 1024 else 0)]

    assert I.adaptive(solve, what="x")[1] == 1024


def test_adaptive_raises_naming_what_could_not_be_certified():
    msg = (
        "precision='interval' is invalid: could not certify the thing up to 4096 bits (the enclosure test "
        "failed); use precision='mp' for a reference value"
    )
    with pytest.raises(FCTheoryError) as info:
        I.adaptive(lambda prec: None, what="the thing")
    assert str(info.value) == msg


def _ball_with_rel_rad_exactly_the_target():
    """A ball [M ± 2^-60] whose rel_rad (at the current precision) is exactly REL_TARGET, M found by a scan."""
    target = Fraction(I.REL_TARGET)
    rad = flint.arb(1, flint.arb((flint.fmpz(1), -60))).rad()  # 2^-60 as arb stores it (rounded up)
    for k in range(20000):
        M = fr(rad) / target * (1 + Fraction(k, 2**62))
        with I.workprec(300):
            mid = flint.arb(flint.fmpq(M.numerator, M.denominator)).mid()
        ball = flint.arb(mid, flint.arb((flint.fmpz(1), -60)))
        if I.rel_rad(ball) == I.REL_TARGET:
            return ball
    raise AssertionError("no ball found")


def test_adaptive_accepts_a_relative_radius_equal_to_the_target():
    ball = _ball_with_rel_rad_exactly_the_target()
    assert I.adaptive(lambda prec: ball, what="x") == (ball, I.PREC0)


def test_flint_module_is_python_flint():
    assert I.flint_module() is flint


def test_flint_module_without_python_flint_names_the_extra_to_install(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "flint", None)  # makes `import flint` raise ImportError
    with pytest.raises(FCTheoryError) as info:
        I.flint_module()
    assert str(info.value) == (
        "precision='interval' needs python-flint (arb ball arithmetic), which is not installed: "
        "pip install 'fctheory[certify]'"
    )
    assert isinstance(info.value.__cause__, ImportError)


def test_contains_of_a_zero_dimensional_array_of_balls_is_elementwise():
    ball = np.empty((), dtype=object)
    ball[()] = flint.arb(1, 1e-3)
    e = I.Enclosure(ball=ball, lo=0.999, hi=1.001, mid=1.0, rad=1e-3, rel_width=2e-3, prec=128)
    got = e.contains(1.0005)
    assert isinstance(got, np.ndarray) and got.shape == () and bool(got)
    assert not bool(e.contains(1.1))
