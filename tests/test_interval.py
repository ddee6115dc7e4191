"""precision="interval": certified arb enclosures of λ₀, τ (Theorem 1), τ* (Theorem 3), λ_max and (7)–(8) (Theorem 2).

Oracles: the 50-digit mpmath references of the predictors (``precision="mp"``), an independent mpmath root-find of
H′(t) and H*′(t) in t (not the library's s-variable), the closed forms evaluated by mpmath at 80 digits, and the
residuals of (7)–(8) evaluated in ball arithmetic at the enclosure.

A 50-digit reference is itself only accurate to about 50 digits minus the digits lost to conditioning (near λ₀ or
λ_max up to ~15), while the enclosures are far tighter (relative width ~1e-37 at 128 bits). Containment of a
reference is therefore checked in the ball widened by :data:`MP_SLACK` (relative), which is still 1e8 times
smaller than the planted errors that must be caught. The enclosures' own relative width is checked separately
against the documented bound (2·REL_TARGET = 2e-17).
"""

import math
import sys

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

flint = pytest.importorskip("flint")

import fctheory as fc  # noqa: E402
from fctheory._interval import REL_TARGET, Enclosure, enclosure, exact_arb, krawczyk, newton_root  # noqa: E402

MP_SLACK = 1e-30  # relative accuracy credited to the 50-digit references (see the module docstring)
WIDTH = 2 * REL_TARGET  # documented bound on Enclosure.rel_width


def contains_ref(enc, ref, slack=MP_SLACK):
    """Whether the (scalar) enclosure, widened by ``slack`` relative, contains the reference value."""
    b = enc.ball
    r = exact_arb(mpmath.mpf(ref))
    widened = flint.arb(b.mid(), b.rad()) + flint.arb(0, abs(float(b.mid())) * slack)
    return bool(widened.contains(r))


def _float_exact_K(n_c, L, frac):
    """A K in [1, n_c^L] (≤ ~1e300) that float64 stores exactly, with K ≤ n_c^L exactly."""
    N = n_c**L
    K = int(float(max(1, math.floor(math.exp(min(frac * L * math.log(n_c), 690.0))))))
    while K > N:
        K = int(np.nextafter(float(K), 0))
    return max(K, 1)


@st.composite
def theorem1_params(draw, near=None):
    n_c = draw(st.integers(2, 100))
    L = draw(st.one_of(st.integers(1, 20), st.integers(1, 5000)))
    n_w = n_c * draw(st.integers(1, 10**9 // n_c))
    K = draw(st.one_of(st.just(None), st.floats(0, 1))) if L * math.log2(n_c) < 52 else draw(st.floats(0, 1))
    K = n_c**L if K is None else _float_exact_K(n_c, L, K)  # K = n_c^L: the full latent set
    lam0 = fc.lambda_trivial(n_c=n_c, n_w=n_w, L=L, K=K)
    near = draw(st.booleans()) if near is None else near
    if near:  # within a relative 1e-15 .. 1e-3 below λ₀ (where the float path loses digits)
        lam = lam0 * (1 - 10 ** draw(st.floats(-15, -3)))
    else:
        lam = lam0 * 10 ** draw(st.floats(-30, 0.5))
    return n_c, n_w, L, K, max(lam, 5e-324)


@st.composite
def theorem3_params(draw):
    n_c = draw(st.integers(2, 100))
    L = draw(st.one_of(st.integers(1, 20), st.integers(1, 5000)))
    K = _float_exact_K(n_c, L, draw(st.floats(0, 1)))
    d = draw(st.integers(1, 10**6))
    lam = 10 ** draw(st.floats(-30, 30))
    return n_c, L, K, d, lam


@st.composite
def type3_params(draw, max_sc=6, max_L=30):
    n_c = draw(st.integers(2, 6))
    L = draw(st.integers(1, max_L))
    s_c = draw(st.integers(1, max_sc))
    w = np.array(draw(st.lists(st.floats(0.05, 1.0), min_size=s_c, max_size=s_c)))
    mu = w / w.sum()
    lmax = fc.lambda_max_type3(mu=mu, n_c=n_c, L=L)
    frac = draw(st.one_of(st.floats(1e-4, 0.99), st.floats(0.99, 1 - 1e-9)))
    return mu, n_c, L, lmax * frac


def _tau_H_prime_root(n_c, n_w, L, K, lam, guess):
    """Independent root of H′(t) = λ − ηL·p(1+u)^{L−1}u/(1 − p + p(1+u)^L), u = (n_c−1)e^{−ηt}, in t."""
    with mpmath.workdps(60):
        n_c, n_w, L, K, lam = (mpmath.mpf(float(v)) for v in (n_c, n_w, L, K, lam))
        p = K / n_c**L
        eta = n_c / (n_c - 1) / mpmath.sqrt(n_w * K * L)

        def Hp(t):
            u = (n_c - 1) * mpmath.exp(-eta * t)
            return lam - eta * L * p * (1 + u) ** (L - 1) * u / (1 - p + p * (1 + u) ** L)

        g = mpmath.mpf(guess)
        return +mpmath.findroot(Hp, (g * (1 - mpmath.mpf("1e-12")), g * (1 + mpmath.mpf("1e-12"))), solver="anderson")


def _check_tau(p):
    n_c, n_w, L, K, lam = p
    enc = fc.tau(n_c=n_c, n_w=n_w, L=L, K=K, lam=lam, precision="interval")
    ref = fc.tau(n_c=n_c, n_w=n_w, L=L, K=K, lam=lam, precision="mp")
    assert isinstance(enc, Enclosure)
    if ref == 0:
        assert enc.ball.is_exact() and enc.mid == 0 and enc.hi == 0, (p, enc)
        return
    assert contains_ref(enc, ref), (p, enc, ref)
    assert enc.rel_width <= WIDTH, (p, enc.rel_width)
    assert enc.lo <= float(ref) <= enc.hi


@given(theorem1_params())
@settings(max_examples=30, deadline=None)
def test_tau_enclosure_contains_the_mp_reference(p):
    _check_tau(p)


@pytest.mark.slow
@given(theorem1_params())
@settings(max_examples=400, deadline=None)
def test_tau_enclosure_contains_the_mp_reference_many(p):
    _check_tau(p)


@given(theorem1_params(near=True))
@settings(max_examples=10, deadline=None)
def test_tau_enclosure_contains_an_independent_root_of_H_prime(p):
    enc = fc.tau(n_c=p[0], n_w=p[1], L=p[2], K=p[3], lam=p[4], precision="interval")
    if enc.mid == 0:
        return  # λ ≥ λ₀ after rounding λ: covered by the exact-threshold tests
    root = _tau_H_prime_root(*p, guess=enc.ball.mid().str(40, radius=False))
    assert contains_ref(enc, root), (p, enc, root)


def test_tau_is_exactly_zero_at_a_dyadic_threshold_and_positive_one_ulp_below():
    # n_c = n_w = 2, L = 1, K = 2: λ₀ = √(2/2)/(2 + 1 − 1) = 1/2 exactly
    at = fc.tau(n_c=2, n_w=2, L=1, K=2, lam=0.5, precision="interval")
    assert at.ball.is_exact() and at.mid == 0 and at.rel_width == 0
    lam = float(np.nextafter(0.5, 0))
    below = fc.tau(n_c=2, n_w=2, L=1, K=2, lam=lam, precision="interval")
    assert below.lo > 0 and below.rel_width <= WIDTH
    assert contains_ref(below, fc.tau(n_c=2, n_w=2, L=1, K=2, lam=lam, precision="mp", dps=80), slack=1e-40)


def test_tau_is_certified_positive_one_ulp_below_lambda0_and_the_float_path_agrees():
    # one ulp below the float λ₀ the true λ is still below λ₀: the exact threshold test and the geometric
    # bracket find the tiny positive τ (≈ 8.3e-13), which the 100-digit reference and the float path confirm
    p = dict(n_c=7, n_w=7, L=9, K=12345)
    lam = float(np.nextafter(fc.lambda_trivial(**p), 0))
    enc = fc.tau(**p, lam=lam, precision="interval")
    assert enc.lo > 0 and enc.rel_width <= WIDTH
    assert fc.tau(**p, lam=lam) == pytest.approx(enc.mid, rel=1e-13)
    assert contains_ref(enc, fc.tau(**p, lam=lam, precision="mp", dps=100), slack=1e-60)


def test_tau_interval_broadcasts_like_the_float_path():
    lam = np.array([[1e-3], [1e-5], [10.0]])
    enc = fc.tau(n_c=3, n_w=1200, L=np.array([15, 30]), K=1000, lam=lam, precision="interval")
    flt = fc.tau(n_c=3, n_w=1200, L=np.array([15, 30]), K=1000, lam=lam)
    assert enc.mid.shape == enc.lo.shape == enc.ball.shape == (3, 2)
    np.testing.assert_allclose(enc.mid, flt, rtol=1e-12)
    assert np.all(enc.lo <= enc.hi) and np.all(enc.mid[2] == 0)
    one = fc.tau(n_c=3, n_w=1200, L=30, K=1000, lam=1e-5, precision="interval")
    assert one.ball.mid() == enc.ball[1, 1].mid()


def _tau_star_H_prime_root(n_c, L, K, d, lam, guess):
    """Independent root of H*′(t) = λt − η*L·p(1+u)^{L−1}u/(1 − p + p(1+u)^L), u = (n_c−1)e^{−η*t}, in t."""
    with mpmath.workdps(60):
        n_c, L, K, d, lam = (mpmath.mpf(float(v)) for v in (n_c, L, K, d, lam))
        p = K / n_c**L
        eta = n_c / (n_c - 1) / mpmath.sqrt(K * L / d)

        def Hp(t):
            u = (n_c - 1) * mpmath.exp(-eta * t)
            return lam * t - eta * L * p * (1 + u) ** (L - 1) * u / (1 - p + p * (1 + u) ** L)

        g = mpmath.mpf(guess)
        return +mpmath.findroot(Hp, (g * (1 - mpmath.mpf("1e-12")), g * (1 + mpmath.mpf("1e-12"))), solver="anderson")


def _check_tau_star(p):
    n_c, L, K, d, lam = p
    enc = fc.tau_star(n_c=n_c, L=L, K=K, d=d, lam=lam, precision="interval")
    ref = fc.tau_star(n_c=n_c, L=L, K=K, d=d, lam=lam, precision="mp")
    assert contains_ref(enc, ref), (p, enc, ref)
    assert enc.rel_width <= WIDTH, (p, enc.rel_width)
    root = _tau_star_H_prime_root(*p, guess=enc.ball.mid().str(40, radius=False))
    assert contains_ref(enc, root), (p, enc, root)


@given(theorem3_params())
@settings(max_examples=25, deadline=None)
def test_tau_star_enclosure_contains_the_mp_reference_and_the_root_of_H_star_prime(p):
    _check_tau_star(p)


@pytest.mark.slow
@given(theorem3_params())
@settings(max_examples=300, deadline=None)
def test_tau_star_enclosure_contains_the_mp_reference_many(p):
    _check_tau_star(p)


@given(theorem1_params(near=False))
@settings(max_examples=25, deadline=None)
def test_lambda_trivial_enclosure_contains_the_closed_form_at_80_digits(p):
    n_c, n_w, L, K, _ = p
    enc = fc.lambda_trivial(n_c=n_c, n_w=n_w, L=L, K=K, precision="interval")
    with mpmath.workdps(80):
        N = mpmath.mpf(n_c) ** L
        ref = mpmath.sqrt(mpmath.mpf(L) * K / n_w) / (K + 1 - mpmath.mpf(K) / N)
    assert contains_ref(enc, ref, slack=1e-70), (p, enc)
    assert enc.rel_width <= WIDTH


@given(type3_params())
@settings(max_examples=15, deadline=None)
def test_lambda_max_enclosure_contains_the_closed_form_at_80_digits(p):
    mu, n_c, L, _ = p
    enc = fc.lambda_max_type3(mu=mu, n_c=n_c, L=L, precision="interval")
    with mpmath.workdps(80):
        ref = mpmath.sqrt(mpmath.mpf(L) / mpmath.mpf(n_c) ** (L + 1) * sum(mpmath.mpf(float(m)) ** 2 for m in mu))
    assert contains_ref(enc, ref, slack=1e-70) and enc.rel_width <= WIDTH


def _residuals_contain_zero(mu, n_c, L, lam, sol):
    """(7) and (8) evaluated in ball arithmetic over the enclosures contain 0 (an independent sanity check)."""
    with flint.ctx.workprec(256):
        c = sol.c.ball
        kappa = flint.arb(n_c) / (n_c - 1)
        ok = []
        for r, m in zip(sol.r.ball, mu):
            lhs = flint.arb(lam) / L * (r / c) * (n_c - 1 + (kappa * c * r).exp())
            ok.append((lhs - flint.arb(float(m))).contains(0))
        s = sum((r / c) ** 2 for r in sol.r.ball) - flint.arb(L) * flint.arb(n_c) ** (L - 1)
        ok.append(s.contains(0))
    return all(ok)


def _check_type3(p):
    mu, n_c, L, lam = p
    sol = fc.solve_type3(mu=mu, n_c=n_c, L=L, lam=lam, precision="interval")
    ref = fc.solve_type3(mu=mu, n_c=n_c, L=L, lam=lam, precision="mp")
    assert isinstance(sol, fc.Type3Solution) and isinstance(sol.c, Enclosure) and sol.r.mid.shape == mu.shape
    assert contains_ref(sol.c, ref.c), (p, sol.c, ref.c)
    for i in range(len(mu)):
        b = sol.r.ball[i]
        one = Enclosure(b, 0.0, 0.0, 0.0, 0.0, 0.0, 0)
        assert contains_ref(one, ref.r[i]), (p, i, b, ref.r[i])
    assert sol.c.rel_width <= WIDTH and np.all(sol.r.rel_width <= WIDTH), (sol.c.rel_width, sol.r.rel_width)
    assert _residuals_contain_zero(mu, n_c, L, lam, sol)


@given(type3_params())
@settings(max_examples=15, deadline=None)
def test_solve_type3_enclosure_contains_the_mp_reference(p):
    _check_type3(p)


@pytest.mark.slow
@given(type3_params(max_sc=20, max_L=200))
@settings(max_examples=150, deadline=None)
def test_solve_type3_enclosure_contains_the_mp_reference_many(p):
    _check_type3(p)


def test_solve_type3_interval_batch_matches_scalar_calls():
    mu = np.array([6, 3, 2]) / 11
    lam = np.array([0.02, 0.05])
    sol = fc.solve_type3(mu=mu, n_c=3, L=2, lam=lam, precision="interval")
    assert sol.c.mid.shape == (2,) and sol.r.mid.shape == (2, 3) and sol.lam_max.mid.shape == (2,)
    one = fc.solve_type3(mu=mu, n_c=3, L=2, lam=0.05, precision="interval")
    assert sol.c.ball[1].mid() == one.c.ball.mid()
    np.testing.assert_allclose(sol.c.mid, fc.solve_type3(mu=mu, n_c=3, L=2, lam=lam).c, rtol=1e-12)


# ----------------------------------------------------------------------------------------- planted errors
def test_a_planted_shift_of_1e_8_is_caught_by_the_containment_check():
    ref = fc.tau(n_c=3, n_w=1200, L=15, K=1000, lam=1e-3, precision="mp")
    enc = fc.tau(n_c=3, n_w=1200, L=15, K=1000, lam=1e-3, precision="interval")
    assert contains_ref(enc, ref)
    wrong = enclosure(enc.ball * (1 + flint.arb("1e-8")), enc.prec)
    assert not contains_ref(wrong, ref)
    assert not contains_ref(enc, ref * (1 + mpmath.mpf("1e-8")))


def test_a_planted_shift_of_1e_8_in_c_of_type3_is_caught():
    mu = np.array([0.5, 0.3, 0.2])
    ref = fc.solve_type3(mu=mu, n_c=3, L=2, lam=0.01, precision="mp")
    sol = fc.solve_type3(mu=mu, n_c=3, L=2, lam=0.01, precision="interval")
    assert contains_ref(sol.c, ref.c)
    assert not contains_ref(enclosure(sol.c.ball * (1 + flint.arb("1e-8")), 128), ref.c)


def test_newton_root_refuses_a_bracket_without_a_sign_change():
    def f(s):
        return s * s + 1

    def fp(s):
        return 2 * s

    with flint.ctx.workprec(128):
        assert newton_root(f, fp, 1.0, 2.0) is None
        X = newton_root(lambda s: s * s - 2, lambda s: 2 * s, 1.0, 2.0)
        assert X.contains(flint.arb(2).sqrt()) and float(X.rad()) < 1e-35


def test_krawczyk_encloses_the_root_of_a_planted_system():
    # x² + y² = 4, x − y = 0: root (√2, √2); the Krawczyk result must contain it and be tight
    with flint.ctx.workprec(128):

        def F(z):
            return [z[0] ** 2 + z[1] ** 2 - 4, z[0] - z[1]]

        def J(z):
            return flint.arb_mat([[2 * z[0], 2 * z[1]], [1, -1]])

        Z = krawczyk(F, J, [1.3, 1.5], 1e-12)
        root = flint.arb(2).sqrt()
        assert all(Zi.contains(root) and float(Zi.rad()) < 1e-30 for Zi in Z)


# ----------------------------------------------------------------------------------------- bad input
def test_a_misspelt_precision_is_refused():
    with pytest.raises(fc.FCTheoryError, match="precision"):
        fc.tau(n_c=3, n_w=12, L=2, K=4, lam=0.01, precision="Interval")
    with pytest.raises(fc.FCTheoryError, match="precision"):
        fc.lambda_trivial(n_c=3, n_w=12, L=2, K=4, precision="mp")


def test_K_above_n_c_power_L_is_refused_exactly():
    # float64 K one ulp above 3**40 passes the float check (it allows a 1e-15 slack) but not the exact one
    K = float(np.nextafter(float(3**40), np.inf))
    assert int(K) > 3**40
    with pytest.raises(fc.FCTheoryError, match="K"):
        fc.tau(n_c=3, n_w=3, L=40, K=K, lam=1e-3, precision="interval")
    with pytest.raises(fc.FCTheoryError, match="K"):
        fc.lambda_trivial(n_c=3, n_w=3, L=40, K=K, precision="interval")


def test_lam_above_lambda_max_is_refused_with_interval_precision():
    mu = np.array([0.5, 0.3, 0.2])
    lmax = fc.lambda_max_type3(mu=mu, n_c=3, L=2)
    with pytest.raises(fc.FCTheoryError, match="lam"):
        fc.solve_type3(mu=mu, n_c=3, L=2, lam=lmax * 1.01, precision="interval")


def test_missing_python_flint_gives_an_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "flint", None)  # makes `import flint` raise ImportError
    with pytest.raises(fc.FCTheoryError, match=r"fctheory\[certify\]"):
        fc.tau(n_c=3, n_w=12, L=2, K=4, lam=0.01, precision="interval")
    with pytest.raises(fc.FCTheoryError, match=r"fctheory\[certify\]"):
        fc.lambda_max_type3(mu="uniform", s_c=3, n_c=3, L=2, precision="interval")


# ----------------------------------------------------------------------------------------- exact thresholds
# Thresholds that are exact dyadic rationals, so that λ can sit exactly on them and one ulp either side:
# λ₀ = √(LK/n_w)/(K + 1 − p) = 1/2, 1/4, 1/8 for n_c = 2, L = 1, K = 2 (p = 1), n_w = 2, 8, 32;
# λ_max = √((L/n_c^{L+1}) Σμ²) = 1/2, 1/2, 1/8, 1/4 for n_c = 2 and (μ, L) = ([1], 1), ([1], 2), ([1], 8), ([½, ½], 4).
LAMBDA0_DYADIC = [(2, 0.5), (8, 0.25), (32, 0.125)]
LAMBDA_MAX_DYADIC = [((1.0,), 1, 0.5), ((1.0,), 2, 0.5), ((1.0,), 8, 0.125), ((0.5, 0.5), 4, 0.25)]


@pytest.mark.parametrize(("n_w", "lam0"), LAMBDA0_DYADIC)
def test_lambda_trivial_enclosure_of_a_dyadic_lambda0_holds_it_exactly_and_tightly(n_w, lam0):
    enc = fc.lambda_trivial(n_c=2, n_w=n_w, L=1, K=2, precision="interval")
    assert enc.contains(lam0) and enc.lo <= lam0 <= enc.hi
    assert enc.hi - enc.lo <= 2 * math.ulp(lam0)


@pytest.mark.parametrize(("n_w", "lam0"), LAMBDA0_DYADIC)
def test_tau_interval_is_exactly_zero_at_lambda0_and_one_ulp_above(n_w, lam0):
    for lam in (lam0, float(np.nextafter(lam0, np.inf)), 2 * lam0):
        enc = fc.tau(n_c=2, n_w=n_w, L=1, K=2, lam=lam, precision="interval")
        assert enc.ball.is_exact() and enc.mid == enc.lo == enc.hi == 0 and enc.prec == 0, lam


@pytest.mark.parametrize(("n_w", "lam0"), LAMBDA0_DYADIC)
def test_tau_interval_is_certified_positive_one_ulp_below_lambda0(n_w, lam0):
    lam = float(np.nextafter(lam0, 0))
    enc = fc.tau(n_c=2, n_w=n_w, L=1, K=2, lam=lam, precision="interval")
    assert enc.lo > 0 and enc.prec > 0 and enc.rel_width <= WIDTH


@pytest.mark.parametrize(("mu", "L", "lmax"), LAMBDA_MAX_DYADIC)
def test_lambda_max_type3_enclosure_of_a_dyadic_lambda_max_holds_it_exactly_and_tightly(mu, L, lmax):
    enc = fc.lambda_max_type3(mu=np.array(mu), n_c=2, L=L, precision="interval")
    assert enc.contains(lmax) and enc.lo <= lmax <= enc.hi
    assert enc.hi - enc.lo <= 2 * math.ulp(lmax)


@pytest.mark.parametrize(("mu", "L", "lmax"), LAMBDA_MAX_DYADIC)
def test_solve_type3_interval_refuses_lam_exactly_at_lambda_max_deciding_condition_9_exactly(mu, L, lmax):
    for lam in (lmax, float(np.nextafter(lmax, np.inf))):
        with pytest.raises(fc.FCTheoryError, match=r"condition \(9\) requires lam < lambda_max = 0\.\d+ \("):
            fc.solve_type3(mu=np.array(mu), n_c=2, L=L, lam=lam, precision="interval")


@pytest.mark.parametrize(("mu", "L", "lmax"), [LAMBDA_MAX_DYADIC[0], LAMBDA_MAX_DYADIC[3]])
def test_solve_type3_interval_certifies_c_positive_just_below_lambda_max(mu, L, lmax):
    lam = lmax * (1 - 2.0**-50)  # a few ulps below (the float path's check refuses the last ulps)
    sol = fc.solve_type3(mu=np.array(mu), n_c=2, L=L, lam=lam, precision="interval")
    assert sol.c.lo > 0 and sol.c.rel_width <= WIDTH and sol.lam_max.contains(lmax)


# ------------------------------------------------------------------- what the certified root finders are given
# Interval Newton is sound only if the derivative it is handed encloses f′: a wrong derivative formula can
# still contract onto the root (the result then contains the reference and looks certified). The derivative
# closures of τ and τ* are therefore checked against a high-precision central difference of the f they come
# with, and the float starting guess against the root (in the solver's variable s = ηt).
TAU_P = dict(n_c=3, n_w=600, L=5, K=100)  # p = 100/243: both E1 and E2 terms of G″ matter
TAU_STAR_P = dict(n_c=3, L=5, K=100, d=40)


def _spy(monkeypatch, module_name, attr):
    import importlib

    module = importlib.import_module(module_name)
    real, calls = getattr(module, attr), []

    def spy(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, attr, spy)
    return calls


def _assert_derivative_of(f, fprime, s):
    old = flint.ctx.prec
    flint.ctx.prec = 320
    try:
        x = exact_arb(s)
        h = x * flint.arb(2) ** -80
        fd = (f(x + h) - f(x - h)) / (2 * h)  # truncation error ~ h² (relative 1e-48)
        d = fprime(x)
    finally:
        flint.ctx.prec = old
    assert abs(float((d - fd).mid())) <= 1e-12 * abs(float(d.mid())), (s, d, fd)


@pytest.mark.parametrize("name, params, lam", [("tau", TAU_P, 1e-3), ("tau_star", TAU_STAR_P, 1e-2)])
def test_interval_newton_is_given_the_derivative_of_its_function(monkeypatch, name, params, lam):
    calls = _spy(monkeypatch, f"fctheory.{name}", "bisect_to_newton")
    getattr(fc, name)(**params, lam=lam, precision="interval")
    f, fprime, lo, hi = calls[-1]
    for s in (lo, 0.5 * (lo + hi), hi, 0.1 * lo, 10.0 * hi):
        _assert_derivative_of(f, fprime, s)


def test_tau_interval_starts_its_bracket_from_the_float_root_in_s(monkeypatch):
    calls = _spy(monkeypatch, "fctheory.tau", "bracket_increasing")
    enc = fc.tau(**TAU_P, lam=1e-3, precision="interval")
    n_c, n_w, L, K = (TAU_P[k] for k in ("n_c", "n_w", "L", "K"))
    eta = n_c / (n_c - 1) / math.sqrt(n_w * K * L)
    assert calls[-1][1] == pytest.approx(enc.mid * eta, rel=1e-12)


def test_tau_star_interval_starts_its_bracket_from_the_float_root_in_s(monkeypatch):
    calls = _spy(monkeypatch, "fctheory.tau_star", "bracket_increasing")
    enc = fc.tau_star(**TAU_STAR_P, lam=1e-2, precision="interval")
    n_c, L, K, d = (TAU_STAR_P[k] for k in ("n_c", "L", "K", "d"))
    eta = n_c / (n_c - 1) * math.sqrt(d / (K * L))
    assert calls[-1][1] == pytest.approx(enc.mid * eta, rel=1e-12)


@pytest.mark.parametrize(
    ("module_name", "attr", "call", "what"),
    [
        ("fctheory.tau", "bracket_increasing", lambda: fc.tau(**TAU_P, lam=1e-3, precision="interval"), "tau"),
        (
            "fctheory.tau_star",
            "bracket_increasing",
            lambda: fc.tau_star(**TAU_STAR_P, lam=1e-2, precision="interval"),
            "tau_star",
        ),
        (
            "fctheory.tau",
            "_lambda0_ball",
            lambda: fc.lambda_trivial(n_c=3, n_w=600, L=5, K=100, precision="interval"),
            "lambda_trivial",
        ),
    ],
)
def test_an_uncertifiable_enclosure_is_refused_naming_the_quantity(monkeypatch, module_name, attr, call, what):
    import importlib

    monkeypatch.setattr(importlib.import_module(module_name), attr, lambda *a, **k: None)
    with pytest.raises(fc.FCTheoryError, match=rf"could not certify {what} up to \d+ bits"):
        call()
