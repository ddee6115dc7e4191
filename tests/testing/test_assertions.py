"""fctheory.testing.assertions: the assertion helpers pass on the theorems' optima and fail (TheoryAssertionError,
an AssertionError) on perturbed points, wrong constants, wrong gradients and scale-dependent metrics."""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import fctheory as fc
from fctheory.testing import (
    TheoryAssertionError,
    assert_close_mp,
    assert_critical_point,
    assert_scale_invariant,
    assert_type1_optimal,
    assert_type2_optimal,
    assert_type3_optimal,
    check_gradient,
    labels_and_features,
)

FEW = settings(
    max_examples=15,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.mark.parametrize(
    "kind,check", [("type1", assert_type1_optimal), ("type2", assert_type2_optimal), ("type3", assert_type3_optimal)]
)
def test_assertions_reject_wrong_constants_and_perturbations(kind, check):
    task = fc.Task.full(n_c=3, s_c=2, L=2, mu="uniform" if kind == "type1" else "zipf")
    lam = 0.01
    make = getattr(fc, f"{kind}_configuration")
    W, U = make(task, d=4, lam=lam, seed=1)
    check(task, W, U, lam)
    with pytest.raises(TheoryAssertionError, match="predicts"):
        check(task, 1.01 * W if kind != "type2" else W, 1.01 * U, lam)  # right structure, wrong constants
    W2 = W.copy()
    W2[0, 1] += 1e-6
    with pytest.raises(AssertionError, match="not type-I"):
        check(task, W2, U, lam)
    with pytest.raises(AssertionError, match="critical point|predicts"):
        check(task, W, U, 1.5 * lam)  # the optimum of another λ


def test_assert_critical_point_message_names_the_gradient():
    task = fc.Task.full(n_c=2, s_c=2, L=2)
    W, U = fc.type1_configuration(task, d=2, c=1.0, c_prime=1.0)
    with pytest.raises(TheoryAssertionError, match=r"‖∇R‖ = .* > atol \+ gtol"):
        assert_critical_point(task, W, U, 0.01)
    assert_critical_point(task, np.zeros_like(W), np.zeros_like(U), 0.01)  # the origin: ∇R = 0 exactly


def test_check_gradient_catches_a_wrong_gradient_and_reports_it():
    f = lambda x: float(np.sum(np.sin(x) * x))  # noqa: E731
    g = lambda x: np.cos(x) * x + np.sin(x)  # noqa: E731
    x = np.linspace(-2, 2, 7)
    res = check_gradient(f, x, grad=g)
    assert res.ok and res.max_error < 1e-8 and res.directions == "coordinates"
    with pytest.raises(AssertionError, match=r"gradient mismatch at coordinate \(3,\)"):
        check_gradient(f, x, grad=lambda x: g(x) + np.eye(7)[3] * 1e-3)
    big = np.linspace(-1, 1, 200)
    assert check_gradient(f, big, grad=g, max_coords=10).directions == "random"
    assert not check_gradient(f, big, grad=lambda x: 1.001 * g(x), max_coords=10, raise_on_mismatch=False).ok


def test_assert_close_mp_counts_digits():
    with mpmath.workdps(30):
        ref = mpmath.pi
        assert_close_mp(math.pi, ref, digits=15)
        with pytest.raises(AssertionError, match="digits agree, 17 required"):
            assert_close_mp(math.pi, ref, digits=17)
        assert_close_mp([1.0, 2.0], ["1.0000000000001", "2"], digits=12)


@FEW
@given(labels_and_features())
def test_nc1_is_scale_invariant(Hy):
    H, y = Hy
    if np.ptp(H[:, :], axis=0).max() == 0:
        return
    lo, hi = np.log10(np.abs(H[H != 0]).min()), np.log10(np.abs(H).max())
    scales = [10.0**e for e in (-300, -100, 0, 100, 300) if hi + e < 307 and lo + e > -300]
    # exact collapse gives NC1 at rounding level (~1e-16): compared absolutely there
    assert_scale_invariant(
        lambda M: fc.metrics.nc1(M, y, variant="trace_ratio"), H, scales=scales, rtol=1e-12, atol=1e-20
    )


def test_assert_scale_invariant_catches_a_scale_dependent_metric():
    M = np.arange(1.0, 7.0).reshape(2, 3)
    with pytest.raises(AssertionError, match="not scale invariant"):
        assert_scale_invariant(lambda A: float(np.sum(A)) / (1 + float(np.sum(A))), M)


def test_optimality_helpers_accept_the_weights_first_order():
    # assert_type1_optimal(W, U, task, lam) (diagnose's order) is the same check as (task, W, U, lam)
    import fctheory as fc
    from fctheory.testing import assert_type1_optimal

    task = fc.Task.full(3, 2, 2)
    W, U = fc.type1_configuration(task, d=4, lam=0.01)
    assert_type1_optimal(W, U, task, 0.01)
    with pytest.raises(AssertionError):
        assert_type1_optimal(1.01 * W, U, task, 0.01)
