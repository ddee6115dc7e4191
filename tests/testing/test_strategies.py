"""fctheory.testing.strategies: the public strategies, used on the library (the assertion helpers: test_assertions.py).

Every strategy must draw only valid input; every assertion helper must pass on the theorems' optima and
fail (TheoryAssertionError, an AssertionError) on perturbed points; and a user's property test written
only against fctheory.testing finds a planted bug in a toy predictor (the example of docs/testing-api.md).
"""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fctheory as fc
from fctheory._validate import check_mu
from fctheory.testing import (
    assert_close_mp,
    assert_type1_optimal,
    assert_type2_optimal,
    assert_type3_optimal,
    check_gradient,
    configurations,
    predictor_params,
    tasks,
    weights,
    word_distributions,
)

FEW = settings(
    max_examples=15,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
SMALL = dict(max_K=27, max_n_c=3, max_L=3, max_s_c=2)  # enumeration of the true risk stays ~ms


# ----------------------------------------------------------------------------- strategies: validity
@FEW
@given(word_distributions())
def test_word_distributions_pass_the_validation_rule(mu):
    assert np.array_equal(check_mu(mu), mu) and np.all(mu > 0) and abs(mu.sum() - 1) <= 1e-12


@FEW
@given(tasks(**SMALL))
def test_tasks_are_valid_tasks_with_distinct_latent_variables(task):
    assert len({tuple(z) for z in task.Z}) == task.K <= 27
    assert fc.Task(n_c=task.n_c, s_c=task.s_c, L=task.L, Z=task.Z, mu=task.mu).K == task.K


@FEW
@given(tasks(full=True, max_K=16))
def test_full_tasks_satisfy_assumption_A_exactly(task):
    # the exact checker (35), independent of how the strategy built the set (rows may be permuted)
    assert task.is_full and fc.check_assumption_A(task).holds


@FEW
@given(tasks(full=False, max_K=16))
def test_random_latent_sets_are_proper_subsets(task):
    assert task.K < task.n_c**task.L and not fc.check_assumption_A(task).holds  # integrality (docs/theory.md)


def test_tasks_refuses_an_impossible_full_request():
    with pytest.raises(fc.FCTheoryError, match="max_K"):
        tasks(full=True, n_c=3, L=4, max_K=27)


@pytest.mark.parametrize(
    "name",
    [
        "tau",
        "predict_type1",
        "lambda_trivial",
        "tau_star",
        "predict_type2",
        "solve_type3",
        "predict_type3",
        "lambda_max_type3",
    ],
)
@pytest.mark.parametrize("domain", ["valid", "precision", "moderate"])
def test_predictor_params_are_accepted_and_give_finite_values(name, domain):
    fn = getattr(fc, name)

    @settings(max_examples=12, derandomize=True, deadline=None, database=None)
    @given(predictor_params(name, domain=domain))
    def prop(p):
        out = fn(**p)
        for v in (
            [out]
            if np.ndim(out) == 0 and not hasattr(out, "__dataclass_fields__")
            else [getattr(out, k) for k in ("c", "r", "risk", "tau", "tau_star") if hasattr(out, k)]
        ):
            assert np.all(np.isfinite(np.asarray(v, dtype=float))), (p, v)

    prop()


@FEW
@given(tasks(**SMALL).flatmap(lambda t: st.tuples(st.just(t), weights(t, extreme_scales=True))))
def test_weights_have_the_task_shapes_and_are_finite(tw):
    task, (W, U) = tw
    d = W.shape[0]
    assert W.shape == (d, task.n_w) and U.shape == (task.K, task.L * d)
    assert np.all(np.isfinite(W)) and np.all(np.isfinite(U))
    assert math.isfinite(fc.true_risk(task, W, U, 0.01))


# ------------------------------------------------------- the project's own checks, on the public strategies
@settings(max_examples=25, derandomize=True, deadline=None, database=None)
@given(predictor_params("tau", domain="precision"))
def test_tau_float_matches_mpmath_50_digits_public_strategy(p):
    """Theorem 1 precision claim (docs/theory.md): 12 digits for every λ, however close to λ₀ (0 exactly above)."""
    with mpmath.workdps(50):
        assert_close_mp(fc.tau(**p), fc.tau(**p, precision="mp"), digits=12)


@settings(max_examples=25, derandomize=True, deadline=None, database=None)
@given(predictor_params("solve_type3", domain="precision"))
def test_type3_residuals_of_7_and_8_public_strategy(p):
    """(7)–(8) re-evaluated at 40 digits from the float output: relative residuals ≤ 1e-12."""
    sol = fc.solve_type3(**p)
    n_c, L, lam, mu = p["n_c"], p["L"], p["lam"], p["mu"]
    with mpmath.workdps(40):
        c, kap = mpmath.mpf(float(sol.c)), mpmath.mpf(n_c) / (n_c - 1)
        lhs7 = [
            (mpmath.mpf(lam) / L) * (mpmath.mpf(float(r)) / c) * (n_c - 1 + mpmath.exp(kap * c * float(r)))
            for r in sol.r
        ]
        assert_close_mp(lhs7, [mpmath.mpf(float(m)) for m in mu], digits=12)
        lhs8 = sum((mpmath.mpf(float(r)) / c) ** 2 for r in sol.r)
        assert_close_mp(lhs8, L * mpmath.mpf(n_c) ** (L - 1), digits=12)


@settings(FEW, max_examples=8)
@given(
    tasks(max_K=9, max_n_c=3, max_L=2, max_s_c=2).flatmap(lambda t: st.tuples(st.just(t), weights(t, 2))), st.booleans()
)
def test_true_risk_grad_matches_central_differences(tw, layernorm):
    task, (W, U) = tw
    lam = 0.01
    if layernorm and np.any(np.ptp(W, axis=0) == 0):
        W = W + np.arange(W.shape[0])[:, None]  # φ needs non-constant columns (d = 2 here)
    shapes = W.size

    def f(x):
        Wx, Ux = x[:shapes].reshape(W.shape), x[shapes:].reshape(U.shape)
        R, gW, gU = fc.true_risk_grad(task, Wx, Ux, lam, layernorm=layernorm)
        return R, np.concatenate([gW.ravel(), gU.ravel()])

    res = check_gradient(f, np.concatenate([W.ravel(), U.ravel()]), rtol=1e-6, max_coords=24, n_directions=8)
    assert res.ok


# ------------------------------------------------------------------- assertion helpers on the optima
@FEW
@given(
    tasks(full=True, mu="uniform", max_K=27).flatmap(lambda t: st.tuples(st.just(t), configurations(t, kind="type1")))
)
def test_type1_configurations_are_theorem1_optima(tc):
    task, (W, U, lam) = tc
    assert_type1_optimal(task, W, U, lam)


@FEW
@given(tasks(full=True, max_K=27).flatmap(lambda t: st.tuples(st.just(t), configurations(t, kind="type2"))))
def test_type2_configurations_are_theorem3_optima(tc):
    task, (W, U, lam) = tc
    assert_type2_optimal(task, W, U, lam)


@FEW
@given(tasks(full=True, max_K=27, mu="zipf").flatmap(lambda t: st.tuples(st.just(t), configurations(t, kind="type3"))))
def test_type3_configurations_are_theorem2_points(tc):
    task, (W, U, lam) = tc
    assert_type3_optimal(task, W, U, lam)


# ---------------------------------------------------------------- the user's test of docs/testing-api.md
def my_tau(n_c, n_w, L, K, lam, *, bug=False):
    """A user's own τ = argmin_t H(t) (Theorem 1), by bisection on H′ written from (92).

    With ``bug=True`` the (n_c − 1) of κ = n_c/(n_c − 1) is dropped (κ = n_c), an error invisible at n_c = 2.
    """
    kappa = n_c if bug else n_c / (n_c - 1)
    eta = kappa / math.sqrt(n_w * K * L)
    p = K / n_c**L

    def H_prime(t):
        a = 1 + (n_c - 1) * math.exp(-eta * t)
        return lam - p * L * a ** (L - 1) * (n_c - 1) * eta * math.exp(-eta * t) / (1 - p + p * a**L)

    if H_prime(0.0) >= 0:
        return 0.0
    lo, hi = 0.0, 1.0
    while H_prime(hi) < 0:
        lo, hi = hi, 2 * hi
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if H_prime(mid) < 0 else (lo, mid)
    return (lo + hi) / 2


def user_property(predictor):
    """The user's property test: only fctheory.testing and fctheory's public predictors."""

    @settings(max_examples=100, derandomize=True, deadline=None, database=None)
    @given(predictor_params("tau", domain="moderate"))
    def test_my_tau_matches_fctheory(p):
        assert math.isclose(predictor(**p), fc.tau(**p), rel_tol=1e-7, abs_tol=1e-300), p

    return test_my_tau_matches_fctheory


def test_user_property_passes_on_the_correct_toy_predictor():
    user_property(my_tau)()


def test_user_property_finds_the_planted_bug():
    from hypothesis import find

    with pytest.raises(AssertionError):
        user_property(lambda **p: my_tau(**p, bug=True))()
    # the minimal falsifying example Hypothesis reports: the bug needs n_c ≥ 3
    bad = find(
        predictor_params("tau", domain="moderate"),
        lambda p: not math.isclose(my_tau(**p, bug=True), fc.tau(**p), rel_tol=1e-7),
        settings=settings(max_examples=200, derandomize=True, database=None),
    )
    assert bad["n_c"] == 3
