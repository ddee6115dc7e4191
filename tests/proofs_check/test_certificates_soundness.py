"""Soundness of proofs_check.certificates' rigorous bounds, checked exactly or against 120-digit values.

float_down/float_up at interval ends whose nearest double lies above (1/10) and below (1/3) them, negative ends
too, compared in exact rationals; the Frobenius bound against the exact norm (squares of rationals), over
adversarial arrays (differences whose squares underflow, huge dynamic range); every closed-form enclosure
against an independent 120-digit evaluation (a different but equal expression of σ_β, v_β), containment and
tightness; the rounding bound of closed_form_grad against the exact rounding error; certify's enclosure of
ρ − 1 and its gap bound at the float point they certify.
"""

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

from fctheory import Task, lambda_max_type3, solve_type3
from proofs_check import certificates as C

iv = mpmath.iv


def fr(x) -> Fraction:
    """The exact rational of a float or an mpmath mpf."""
    if isinstance(x, mpmath.mpf):
        sign, man, exp, _ = x._mpf_  # (mpf.man_exp drops the sign)
        return (-1) ** sign * Fraction(int(man)) * Fraction(2) ** int(exp)
    return Fraction(x)


def up1(f):
    return float(np.nextafter(f, np.inf))


def down1(f):
    return float(np.nextafter(f, -np.inf))


def _iv_of(num, den, prec=200):
    """An mpmath interval enclosing num/den (ends at ``prec`` bits, neither of them a double)."""
    old = iv.prec
    iv.prec = prec
    try:
        return iv.mpf(num) / den
    finally:
        iv.prec = old


@pytest.mark.parametrize(("num", "den"), [(1, 10), (1, 3), (-1, 10), (-1, 3), (2, 3), (-7, 9), (1, 3 * 2**1000)])
def test_float_down_and_float_up_are_the_nearest_doubles_outside_the_interval_ends(num, den):
    x = _iv_of(num, den)
    with mpmath.workprec(256):
        lo, hi = (fr(e) for e in C.ends(x))
    d, u = C.float_down(x), C.float_up(x)
    assert fr(d) <= lo < fr(up1(d))
    assert fr(down1(u)) < hi <= fr(u)
    assert fr(d) <= Fraction(num, den) <= fr(u)


@pytest.mark.parametrize("f", [0.5, -0.1, 1 / 3, 5e-324, 0.0])
def test_float_down_and_float_up_of_a_double_end_are_that_double(f):
    x = iv.mpf(f)
    assert C.float_down(x) == f and C.float_up(x) == f


# ---------------------------------------------------------------------------------------------- frobenius_bound
def _exact_sq(D1, D2) -> Fraction:
    return sum((Fraction(float(a)) - Fraction(float(b))) ** 2 for a, b in zip(D1.ravel(), D2.ravel()))


def _check_frobenius(D1, D2):
    bound = C.frobenius_bound(D1, D2)
    exact_sq = _exact_sq(D1, D2)
    assert bound >= 0 and (math.isinf(bound) or fr(bound) ** 2 >= exact_sq)
    return bound, exact_sq


@pytest.mark.parametrize("scale", [1.0, 1e-13, 1e-150, 1.5e-160, 1e-170, 1e-300, 1e150])
def test_frobenius_bound_is_an_upper_bound_at_every_scale_and_a_tight_one(scale):
    rng = np.random.default_rng(11)
    A = rng.normal(size=(30, 7))
    B = A + scale * rng.normal(size=A.shape)
    bound, exact_sq = _check_frobenius(A, B)
    if exact_sq and math.sqrt(float(exact_sq)) > 1e-290:
        assert bound <= math.sqrt(float(exact_sq)) * (1 + 1e-12)


def test_frobenius_bound_of_differences_whose_squares_underflow_is_not_zero():
    D1, D2 = np.full(10, 1e-170), np.zeros(10)
    assert C.frobenius_bound(D1, D2) >= 1e-170 * math.sqrt(10)
    assert C.frobenius_bound(D2, D2) >= 0


def test_frobenius_bound_of_empty_or_equal_arrays_is_the_tiny_positive_floor():
    assert C.frobenius_bound(np.empty((0, 3)), np.empty((0, 3))) == 1e-300
    assert C.frobenius_bound(np.full(4, 0.1), np.full(4, 0.1)) == 1e-300


def test_frobenius_bound_is_infinite_when_a_difference_overflows():
    with np.errstate(over="ignore"):
        assert C.frobenius_bound(np.array([1e308, 0.0]), np.array([-1e308, 0.0])) == math.inf


@given(
    hnp.arrays(np.float64, st.integers(1, 40), elements=st.floats(-1e200, 1e200, allow_subnormal=True)),
    st.floats(-300, 100),
    st.integers(0, 2**32 - 1),
)
@settings(max_examples=80, deadline=None)
def test_frobenius_bound_is_an_upper_bound_for_adversarial_arrays(D1, log_scale, seed):
    rng = np.random.default_rng(seed)
    D2 = D1 + 10.0**log_scale * rng.standard_cauchy(size=D1.shape)
    if not np.all(np.isfinite(D2)):
        return
    _check_frobenius(D1, D2)


# ---------------------------------------------------------------------------------------------- closed_form
def _oracle(mu, n_c, L, a, b, lam, dps=120):
    """The closed-form quantities at 120 digits, σ_β written as 1/(1 + (n_c − 1)e^(b_β − a_β))."""
    with mpmath.workdps(dps):
        K = n_c**L
        mu = [mpmath.mpf(float(m)) for m in mu]
        a = [mpmath.mpf(float(x)) for x in a]
        b = [mpmath.mpf(float(x)) for x in b]
        lam = mpmath.mpf(float(lam))
        S = mpmath.fsum(mu)
        SL = S ** (L - 1)
        sig = [1 / (1 + (n_c - 1) * mpmath.exp(bb - aa)) for aa, bb in zip(a, b)]
        v = [m * (1 - s) for m, s in zip(mu, sig)]
        s = mpmath.mpf(n_c) / (n_c - 1) * SL * mpmath.norm(v) * mpmath.sqrt(mpmath.mpf(L) / (n_c * K))
        d = [aa - bb for aa, bb in zip(a, b)]
        sab = [aa + (n_c - 1) * bb for aa, bb in zip(a, b)]
        nuc = mpmath.sqrt(mpmath.mpf(K * L) / n_c) * ((n_c - 1) * mpmath.norm(d) + mpmath.norm(sab))
        f = -L * SL * mpmath.fsum(m * mpmath.log(x) for m, x in zip(mu, sig))
        inner = -L * SL * mpmath.fsum(x * y for x, y in zip(v, d))
        gap = lam * nuc + inner + mpmath.log(K) * S**L / lam * max(0, s - lam)
        g = [-SL * x / K for x in v]
        return dict(s=s, rho=s / lam, nuc=nuc, f=f, inner=inner, gap=gap, g=g, g_other=[-x / (n_c - 1) for x in g])


def _inside_and_tight(x, ref, rel=2.0**-140):
    with mpmath.workprec(512):
        lo, hi = C.ends(x)
        assert lo <= ref <= hi, (x, ref)
        assert hi - lo <= rel * abs(ref) + mpmath.mpf(2) ** -600, (x, ref)


CASES = [
    (3, 3, 2, 1.0, 0.5, None),  # the type-III point
    (2, 2, 4, 2.0, 0.1, None),
    (5, 10, 20, 1.0, 0.9, None),  # K = 5^20
    (3, 2, 3, 0.5, 0.3, 7),  # random concept-symmetric points, s ≠ λ, negative entries
    (4, 3, 2, 0.0, 0.01, 8),  # s > λ: the excess max(0, s − λ) enters the gap
    (2, 4, 5, 1.5, 0.9, 9),
]


def _inputs(n_c, s_c, L, z, frac, seed):
    mu = C.zipf_mu(s_c, z)
    lam = frac * float(lambda_max_type3(mu=mu, n_c=n_c, L=L))
    if seed is None:
        _, _, a, b = C.type3_entries(mu, n_c, L, lam)
    else:
        rng = np.random.default_rng(seed)
        a, b = 2 * rng.normal(size=s_c), 2 * rng.normal(size=s_c)
    return mu, lam, a, b


@pytest.mark.parametrize(("n_c", "s_c", "L", "z", "frac", "seed"), CASES)
def test_closed_form_enclosures_hold_the_120_digit_values_and_are_tight(n_c, s_c, L, z, frac, seed):
    mu, lam, a, b = _inputs(n_c, s_c, L, z, frac, seed)
    cf = C.closed_form(mu, n_c, L, a, b, lam)
    ref = _oracle(mu, n_c, L, a, b, lam)
    for name in ("s", "rho", "nuc", "f", "inner"):
        _inside_and_tight(getattr(cf, name), ref[name])
    for x, r in zip(cf.g + cf.g_other, ref["g"] + ref["g_other"]):
        _inside_and_tight(x, r)
    with mpmath.workprec(512):
        lo, hi = C.ends(cf.gap)
        assert lo <= ref["gap"] <= hi  # the gap is an upper bound: max(0, s − λ) is enclosed by [0, hi]
        assert C.float_up(cf.gap) >= ref["gap"]


def test_closed_form_gap_takes_the_excess_of_s_over_lambda_at_its_upper_end():
    # λ = s/2 at a random point: the excess s − λ = s/2 > 0 must be counted in full in the gap's upper end
    mu, _, a, b = _inputs(3, 2, 3, 0.5, 0.3, 7)
    s = _oracle(mu, 3, 3, a, b, 1.0)["s"]
    lam = float(s) / 2
    cf = C.closed_form(mu, 3, 3, a, b, lam)
    ref = _oracle(mu, 3, 3, a, b, lam)
    assert ref["s"] > lam
    with mpmath.workprec(512):
        assert C.ends(cf.gap)[1] >= ref["gap"] and C.ends(cf.gap)[1] <= ref["gap"] * (1 + mpmath.mpf(2) ** -120)


def test_closed_form_restores_the_interval_precision():
    old = iv.prec
    mu, lam, a, b = _inputs(3, 3, 2, 1.0, 0.5, None)
    C.closed_form(mu, 3, 2, a, b, lam, prec=300)
    assert iv.prec == old


# ---------------------------------------------------------------------------------------------- closed_form_grad
@pytest.mark.parametrize(("n_c", "s_c", "L", "seed"), [(2, 2, 2, None), (3, 2, 2, 3), (2, 3, 3, 4)])
def test_closed_form_grad_error_bound_is_never_below_the_exact_rounding_error(n_c, s_c, L, seed):
    task = Task.full(n_c, s_c, L, mu=C.zipf_mu(s_c, 1.0))
    mu, lam, a, b = _inputs(n_c, s_c, L, 1.0, 0.4, seed)
    cf = C.closed_form(task.mu, n_c, L, a, b, lam)
    G, err = C.closed_form_grad(task, cf)
    ref = _oracle(task.mu, n_c, L, a, b, lam)
    own = task.word_concept[None, :] == task.Z.reshape(-1)[:, None]
    with mpmath.workprec(512):
        total = mpmath.mpf(0)
        for (j, w), gv in np.ndenumerate(G):
            exact = (ref["g"] if own[j, w] else ref["g_other"])[task.word_rank[w]]
            total += (mpmath.mpf(float(gv)) - exact) ** 2
        exact_err = mpmath.sqrt(total)
        assert 0 < exact_err <= err <= exact_err * (1 + 1e-6) + 1e-300


# ---------------------------------------------------------------------------------------------- certify
@pytest.mark.parametrize(
    ("n_c", "s_c", "L", "z", "frac"), [(3, 3, 2, 1.0, 0.5), (2, 2, 4, 2.0, 0.1), (4, 2, 3, 0.5, 0.9)]
)
def test_certify_encloses_rho_minus_one_and_bounds_the_gap_at_the_float_point(n_c, s_c, L, z, frac):
    row = C.certify(n_c, s_c, L, z, frac, engine=False)
    mu = C.zipf_mu(s_c, z)
    _, _, a, b = C.type3_entries(mu, n_c, L, row.lam)
    ref = _oracle(mu, n_c, L, a, b, row.lam)
    with mpmath.workprec(512):
        assert fr(row.rho_lo) <= fr(ref["rho"] - 1) <= fr(row.rho_hi)
        assert row.gap_hi >= ref["gap"] >= 0
    # ρ − 1 is formed in mpmath's interval arithmetic at its default 53 bits: a width of a few ulps of 1
    assert row.rho_hi - row.rho_lo <= 4 * 2.0**-53
    assert row.K == n_c**L and row.lam == frac * float(lambda_max_type3(mu=mu, n_c=n_c, L=L))


def test_certify_with_the_engine_fills_every_field_consistently():
    row = C.certify(3, 2, 2, 1.0, 0.5, engine=True)
    assert row.engine and row.task == "(3,2,2,9)" and row.as_dict()["K"] == 9
    assert 0 <= row.seconds < 600
    assert abs(row.rho_engine) <= 1e-12 and row.f_err <= 1e-13  # the engine agrees with the closed form
    assert 0 < row.weyl <= 1e-13 and row.spec_err <= row.weyl + C.svd_bound((row.K * row.L, 6), 1.0)
    # the engine's gradient and the rounded closed form differ by no more than the Weyl bound claims
    task = Task.full(3, 2, 2, mu=C.zipf_mu(2, 1.0))
    _, _, a, b = C.type3_entries(task.mu, 3, 2, row.lam)
    X = C.structured_X(task, a, b)
    _, G = C.engine_grad_f(task, X)
    cf = C.closed_form(task.mu, 3, 2, a, b, row.lam)
    Gcf, e_cf = C.closed_form_grad(task, cf)
    assert np.linalg.norm(G - Gcf) / row.lam <= row.weyl
    assert row.weyl == (C.frobenius_bound(G, Gcf) + e_cf) / row.lam
    # the recorded inputs and the relative error of f (f is far from 1 here, so a product would differ)
    f_eng, f_up = C.engine_grad_f(task, X)[0], C.float_up(cf.f)
    assert abs(f_up - 1) > 0.1 and row.f_err == pytest.approx(abs(f_eng - f_up) / f_up, rel=1e-9)
    assert (row.zipf, row.frac, row.s_c) == (1.0, 0.5, 2)
    assert row.c == float(solve_type3(mu=task.mu, n_c=3, L=2, lam=row.lam).c)


def test_a_planted_spectrum_scale_moves_rho_and_the_engine_spectrum_error():
    row = C.certify(3, 2, 2, 1.0, 0.5, engine=True, spectrum_scale=2 / 3)
    assert row.rho_hi < -0.3 and row.rho_lo < row.rho_hi  # ρ − 1 = 2/3 − 1
    assert row.spec_err == pytest.approx(1 / 3, rel=1e-9)  # the engine's spectrum (λ) against the planted 2λ/3


@pytest.mark.parametrize(("s_c", "a", "expected"), [(3, 1.0, [6 / 11, 3 / 11, 2 / 11]), (4, 0.0, [0.25] * 4)])
def test_zipf_mu_is_proportional_to_beta_to_the_minus_a(s_c, a, expected):
    np.testing.assert_allclose(C.zipf_mu(s_c, a), expected, rtol=1e-15)
    np.testing.assert_allclose(C.zipf_mu(3, 2.0), np.array([1, 1 / 4, 1 / 9]) / (1 + 1 / 4 + 1 / 9), rtol=1e-15)


def test_type3_entries_are_c_r_and_minus_c_r_over_n_c_minus_one():
    mu = C.zipf_mu(3, 1.0)
    c, r, a, b = C.type3_entries(mu, 4, 2, 0.01)
    sol = solve_type3(mu=mu, n_c=4, L=2, lam=0.01)
    assert c == sol.c and np.array_equal(r, sol.r)
    np.testing.assert_array_equal(a, c * r)
    np.testing.assert_array_equal(b, -(c * r) / 3)


def test_ends_are_the_exact_interval_ends():
    x = _iv_of(1, 3)
    with mpmath.workprec(256):
        lo, hi = C.ends(x)
        assert lo < mpmath.mpf(1) / 3 < hi and hi - lo < mpmath.mpf(2) ** -190


def test_svd_bound_is_max_dimension_times_unit_roundoff_times_the_largest_singular_value():
    assert C.svd_bound((12, 7), 3.0) == 12 * 2.0**-53 * 3.0
    assert C.svd_bound((5, 40), 0.5) == 40 * 2.0**-53 * 0.5


def test_engine_grad_f_runs_quietly_and_forwards_its_time_limit():
    import importlib

    home = importlib.import_module("fctheory.risk")  # where proofs_check's lead("evaluate_risk") looks it up
    task = Task.full(2, 2, 2)
    X = np.zeros((task.K * task.L, task.n_w))
    calls = []
    real = home.evaluate_risk

    def spy(*args, **kw):
        calls.append((args[3:], kw))
        return real(*args, **kw)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(home, "evaluate_risk", spy)
        C.engine_grad_f(task, X, workers=3, max_seconds=123.0)
        C.engine_grad_f(task, X)
    assert calls == [
        ((0.0,), dict(grad=True, workers=3, max_seconds=123.0, progress=False)),
        ((0.0,), dict(grad=True, workers=1, max_seconds=None, progress=False)),  # one worker by default
    ]


def test_certify_reports_the_relative_error_of_the_engines_f():
    # an engine value of f planted 2^-20 (relative) off: f_err is |f_eng − f|/f, whatever f's size
    real = C.engine_grad_f

    def shifted(task, X, **kw):
        f, G = real(task, X, **kw)
        return f * (1 + 2.0**-20), G

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(C, "engine_grad_f", shifted)
        row = C.certify(2, 3, 2, 1.0, 0.2, engine=True)
    assert row.f_err == pytest.approx(2.0**-20, rel=1e-6)
