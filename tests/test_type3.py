"""Theorem 2 / Proposition D: the system (7)–(8) and condition (9)."""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import fctheory as fc
from fctheory._validate import check_mu

ZIPF = lambda s: check_mu("zipf", s)  # noqa: E731

# derivation notes, "Tiny exact reference values" (Theorem 2, Zipf)
REFERENCE = [
    ((3, 3, 2, 0.02), 1.1870394734, (1.9364489255, 1.6220141304, 1.4400041624)),
    ((3, 3, 2, 0.1), 0.6825265798, (1.2931179264, 0.8490016013, 0.6341115849)),
    ((2, 4, 3, 0.02), 0.9184769490, (1.9127927731, 1.6159602574, 1.4460507032, 1.3274157178)),
    ((4, 3, 2, 0.01), 1.2762124261, (2.364381178, 2.0251215797, 1.8271095986)),
    ((3, 4, 3, 0.005), 1.0010764518, (3.0214844265, 2.6392256137, 2.4179731309, 2.2620092053)),
]


@st.composite
def type3_params(draw, max_sc=6):
    n_c = draw(st.integers(2, 6))
    L = draw(st.integers(1, 4))
    s_c = draw(st.integers(1, max_sc))
    w = np.array(draw(st.lists(st.floats(0.01, 1.0), min_size=s_c, max_size=s_c)))
    mu = w / w.sum()
    lmax = fc.lambda_max_type3(mu=mu, n_c=n_c, L=L)
    frac = draw(st.one_of(st.floats(1e-12, 0.999999), st.floats(0.5, 1 - 1e-6)))
    lam = max(lmax * frac, 1e-12)
    return mu, n_c, L, lam


@pytest.mark.parametrize("args,c,r", REFERENCE)
def test_proposition_D_reference_values(args, c, r):
    n_c, s_c, L, lam = args
    sol = fc.solve_type3(mu=ZIPF(s_c), n_c=n_c, L=L, lam=lam)
    assert sol.c == pytest.approx(c, abs=2e-10)
    np.testing.assert_allclose(sol.r, r, atol=2e-9)


@given(type3_params())
def test_residuals_of_7_and_8_below_1e_12(p):
    sol = fc.solve_type3(**dict(zip(("mu", "n_c", "L", "lam"), p)))
    assert sol.residual_7 <= 1e-12 and sol.residual_8 <= 1e-12


@given(type3_params())
def test_residuals_recomputed_in_mpmath_from_the_printed_system(p):
    mu, n_c, L, lam = p
    sol = fc.solve_type3(mu=mu, n_c=n_c, L=L, lam=lam)
    with mpmath.workdps(40):
        c = mpmath.mpf(float(sol.c))
        kap = mpmath.mpf(n_c) / (n_c - 1)
        for rb, m in zip(sol.r, mu):
            rb = mpmath.mpf(float(rb))
            lhs = (mpmath.mpf(lam) / L) * (rb / c) * (n_c - 1 + mpmath.exp(kap * c * rb))
            assert abs(lhs / mpmath.mpf(m) - 1) < 1e-12
        lhs8 = sum((mpmath.mpf(float(rb)) / c) ** 2 for rb in sol.r)
        assert abs(lhs8 / (L * mpmath.mpf(n_c) ** (L - 1)) - 1) < 1e-12


@settings(max_examples=8)
@given(type3_params(max_sc=4))
def test_solve_type3_float_matches_mpmath_50_digits(p):
    mu, n_c, L, lam = p
    sol = fc.solve_type3(mu=mu, n_c=n_c, L=L, lam=lam)
    lmax = fc.lambda_max_type3(mu=mu, n_c=n_c, L=L)
    tol = 1e-6 if lam > lmax * (1 - 1e-6) else 1e-11
    with mpmath.workdps(50):
        ref = fc.solve_type3(mu=mu, n_c=n_c, L=L, lam=lam, precision="mp")
        assert abs(sol.c - ref.c) / ref.c <= tol
        for a, b in zip(sol.r, ref.r):
            assert abs(a - b) / b <= tol


@given(type3_params())
def test_r_strictly_increasing_in_mu(p):
    mu, n_c, L, lam = p
    sol = fc.solve_type3(mu=mu, n_c=n_c, L=L, lam=lam)
    order = np.argsort(mu, kind="stable")
    m, r = mu[order], sol.r[order]
    strict = np.diff(m) > 0
    assert np.all(np.diff(r)[strict] > 0)
    assert np.all(sol.r > 0) and sol.c > 0


def test_c_tends_to_zero_as_lambda_increases_to_lambda_max():
    mu = ZIPF(5)
    lmax = fc.lambda_max_type3(mu=mu, n_c=3, L=3)
    gaps = np.array([1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6])
    c = fc.solve_type3(mu=mu, n_c=3, L=3, lam=lmax * (1 - gaps)).c
    assert np.all(np.diff(c) < 0) and c[-1] < 1e-2 * c[0]


def test_condition_9_violation_raises_with_lambda_max_in_message():
    mu = ZIPF(400)
    lmax = fc.lambda_max_type3(mu=mu, n_c=3, L=15)
    assert lmax == pytest.approx(1.1515e-4, rel=1e-4)  # derivation notes B.12
    with pytest.raises(fc.FCTheoryError, match=r"lambda_max = 0\.000115148"):
        fc.solve_type3(mu=mu, n_c=3, L=15, lam=1e-3)
    with pytest.raises(ValueError):
        fc.solve_type3(mu=mu, n_c=3, L=15, lam=lmax)


def test_lambda_max_closed_form():
    mu = np.array([0.5, 0.3, 0.2])
    assert fc.lambda_max_type3(mu=mu, n_c=3, L=2) == pytest.approx(
        math.sqrt(2 / 3**3 * (0.25 + 0.09 + 0.04)), rel=1e-15
    )


def test_uniform_mu_reduces_to_type_I():
    # with μ uniform, r_β are all equal and (c, r) is Theorem 1's (c′, c) at K = n_c^L
    n_c, s_c, L, lam = 3, 4, 3, 0.01
    sol = fc.solve_type3(mu=np.full(s_c, 1 / s_c), n_c=n_c, L=L, lam=lam)
    K = n_c**L
    t = fc.tau(n_c=n_c, n_w=n_c * s_c, L=L, K=K, lam=lam)
    np.testing.assert_allclose(sol.r, math.sqrt(t / (n_c * s_c)), rtol=1e-12)
    assert sol.c == pytest.approx(math.sqrt(t / (K * L)), rel=1e-12)


def test_solve_type3_broadcasts_over_lambda():
    mu = ZIPF(3)
    lam = np.array([0.01, 0.02, 0.1])
    sol = fc.solve_type3(mu=mu, n_c=3, L=2, lam=lam)
    assert sol.c.shape == (3,) and sol.r.shape == (3, 3)
    assert sol.c[1] == pytest.approx(1.1870394734, abs=2e-10)


# ------------------------------------------------------------------------------------- condition (9) at its boundary
# λ_max = √((L/n_c^{L+1}) Σμ²) is an exact dyadic rational for n_c = 2 and (μ, L) = ([1], 1), ([1], 2), ([1], 8),
# ([½, ½], 4): λ can sit exactly on it. The float logs of λ and λ_max differ there by rounding only (for ([1], 2)
# log λ_max rounds up, so a comparison of logs alone accepted λ = λ_max and returned a c > 0 that does not exist).
DYADIC_LAMBDA_MAX = [((1.0,), 1, 0.5), ((1.0,), 2, 0.5), ((1.0,), 8, 0.125), ((0.5, 0.5), 4, 0.25)]


@pytest.mark.parametrize("precision", ["float", "mp"])
@pytest.mark.parametrize(("mu", "L", "lmax"), DYADIC_LAMBDA_MAX)
def test_solve_type3_refuses_lam_exactly_at_a_dyadic_lambda_max(mu, L, lmax, precision):
    for lam in (lmax, float(np.nextafter(lmax, np.inf))):
        with pytest.raises(fc.FCTheoryError, match=r"condition \(9\) requires lam < lambda_max"):
            fc.solve_type3(mu=np.array(mu), n_c=2, L=L, lam=lam, precision=precision)


@pytest.mark.parametrize(("mu", "L", "lmax"), DYADIC_LAMBDA_MAX)
def test_solve_type3_solves_just_below_a_dyadic_lambda_max_and_agrees_with_the_mp_reference(mu, L, lmax):
    lam = lmax * (1 - 2.0**-50)  # a few ulps below: δ = log(λ_max²/λ²) ≈ 2^-49 from the exact ratio
    sol = fc.solve_type3(mu=np.array(mu), n_c=2, L=L, lam=lam)
    ref = fc.solve_type3(mu=np.array(mu), n_c=2, L=L, lam=lam, precision="mp")
    assert 0 < sol.c == pytest.approx(float(ref.c), rel=1e-10)
    np.testing.assert_allclose(sol.r, np.array(ref.r, dtype=float), rtol=1e-10)


def test_condition_9_is_decided_per_entry_of_a_batch_at_the_boundary():
    lam = np.array([0.5 * (1 - 2.0**-50), 0.5])
    with pytest.raises(fc.FCTheoryError, match=r"lam=0\.5 is invalid"):
        fc.solve_type3(mu=np.array([1.0]), n_c=2, L=2, lam=lam)
    sol = fc.solve_type3(mu=np.array([1.0]), n_c=2, L=np.array([1, 2]), lam=lam[0])
    assert np.all(sol.c > 0)


def test_the_interval_enclosure_decides_condition_9_exactly_on_its_own():
    # the certified solver refuses λ = λ_max itself, whatever its caller checked before
    from fctheory.type3 import _type3_enclosure

    pytest.importorskip("flint")
    with pytest.raises(fc.FCTheoryError) as info:
        _type3_enclosure(np.array([1.0]), 2, 2, 0.5, 1e-8, np.array([1e-8]))
    assert str(info.value) == (
        "lam=0.5 is invalid: condition (9) requires lam < lambda_max = 0.5 (decided exactly); "
        "for larger lam the only type-III critical point is (W, U) = (0, 0)"
    )


def test_the_interval_enclosure_refuses_a_float_starting_point_that_overflowed():
    from fctheory.type3 import _type3_enclosure

    pytest.importorskip("flint")
    with pytest.raises(fc.FCTheoryError) as info:
        _type3_enclosure(np.array([1.0]), 2, 2, 0.25, math.inf, np.array([math.inf]))
    assert str(info.value) == (
        "lam=0.25 is invalid: precision='interval' starts from the float64 solution, which under/overflows here"
    )


def test_the_interval_enclosure_refuses_a_system_it_cannot_certify_naming_the_solver(monkeypatch):
    import fctheory.type3  # noqa: F401
    import sys

    pytest.importorskip("flint")
    monkeypatch.setattr(sys.modules["fctheory.type3"], "krawczyk", lambda *a, **k: None)
    with pytest.raises(fc.FCTheoryError, match=r"could not certify solve_type3 up to \d+ bits"):
        fc.solve_type3(mu=ZIPF(3), n_c=3, L=2, lam=0.02, precision="interval")


def test_the_interval_solution_carries_the_broadcast_inputs_and_zero_residuals_of_its_batch():
    pytest.importorskip("flint")
    kw = dict(mu=ZIPF(3), n_c=np.array([[3], [4]]), L=2, lam=np.array([0.02, 0.01]))
    flt = fc.solve_type3(**kw)
    sol = fc.solve_type3(**kw, precision="interval")
    for name in ("mu", "n_c", "L", "lam"):
        got, want = getattr(sol, name), getattr(flt, name)
        assert got.shape == want.shape and np.array_equal(got, want), name
    assert sol.mu.shape == (2, 2, 3) and sol.lam.shape == (2, 2)
    for name in ("residual_7", "residual_8"):
        res = getattr(sol, name)
        assert isinstance(res, np.ndarray) and res.shape == (2, 2) and not np.any(res), name


def test_the_krawczyk_jacobian_is_the_derivative_of_the_residuals():
    # a Jacobian that is not F′ proves nothing, even where it agrees with F′ at the root (e.g. −2/Σt for −2Σt, Σt = 1)
    flint = pytest.importorskip("flint")
    from fctheory.type3 import _type3_system

    old = flint.ctx.prec
    flint.ctx.prec = 320
    try:
        F, J = _type3_system(ZIPF(3), 3, 2, 0.02)
        z = [flint.arb(v) for v in (0.3, -0.2, 0.1, 0.4)]  # a point off the solution: Σt ≠ 1 there
        Jz = J(z)
        h = flint.arb(2) ** -100
        for j in range(4):
            zp = [v + h if k == j else v for k, v in enumerate(z)]
            zm = [v - h if k == j else v for k, v in enumerate(z)]
            for i, (a, b) in enumerate(zip(F(zp), F(zm))):
                fd = float(((a - b) / (2 * h)).mid())
                assert float(Jz[i, j].mid()) == pytest.approx(fd, rel=1e-12, abs=1e-12), (i, j)
    finally:
        flint.ctx.prec = old
