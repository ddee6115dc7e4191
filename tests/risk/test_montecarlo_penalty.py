"""``penalty_terms`` and ``check_magnitude`` of ``fctheory.risk.montecarlo``: the penalty, its gradient and
norm, and the refusals of weights or weight decays that overflow float64 (whole messages), and the
``seconds`` field of ``monte_carlo_risk``."""

import math

import numpy as np
import pytest

import fctheory as fc
from fctheory.risk.montecarlo import check_magnitude, monte_carlo_risk, penalty_terms

W, U = np.ones((2, 3)), np.ones((4, 2))
OVER = "the weight-decay penalty (λ/2)‖·‖² or its gradient overflows float64 for these weights"


def _message(fn, *args):
    with pytest.raises(fc.FCTheoryError) as info:
        fn(*args)
    return str(info.value)


def test_penalty_its_gradient_and_the_gradient_norm():
    penalty, pW, pU, norm = penalty_terms(W, U, 0.5, 2.0)
    assert penalty == pytest.approx(0.25 * 6 + 1.0 * 8, rel=1e-15)  # (λ_W/2)‖W‖² + (λ_U/2)‖U‖²
    np.testing.assert_array_equal(pW, 0.5 * W)
    np.testing.assert_array_equal(pU, 2.0 * U)
    assert norm == pytest.approx(math.sqrt(0.25 * 6 + 4.0 * 8), rel=1e-15)


def test_an_overflowing_penalty_term_names_its_weight_decay():
    # λ·A is finite (1e300), (λ/2)‖A‖² is not
    assert _message(penalty_terms, W * 1e100, U, 1e200, 0.0) == f"lam_W=1e+200 is invalid: {OVER}"
    assert _message(penalty_terms, W, U * 1e100, 0.0, 1e200) == f"lam_U=1e+200 is invalid: {OVER}"


def test_a_penalty_whose_sum_overflows_names_lam_W():
    # each term (λ/2)‖A‖² is 1.44e308, their sum is not a float64
    A = np.array([[1.2e154]])
    assert _message(penalty_terms, A, A, 2.0, 2.0) == (
        "lam_W=2.0 is invalid: the weight-decay penalty overflows float64 for these weights"
    )


def test_weights_up_to_norm_1e150_are_accepted_and_larger_ones_refused_by_name():
    A = np.zeros((2, 2))
    A[0, 0] = 1e150
    check_magnitude(A, A, False)
    A[0, 0] = 2e150
    rule = "is invalid: has Frobenius norm 2e+150 > 1e150: the risk, its penalty and gradient overflow float64"
    assert _message(check_magnitude, A, U, False) == f"W=[[2e+150, 0.0], [0.0, 0.0]] {rule}"
    assert _message(check_magnitude, W, A, False) == f"U=[[2e+150, 0.0], [0.0, 0.0]] {rule}"


def test_with_layernorm_and_no_decay_on_W_only_U_is_checked():
    A = np.zeros((2, 2))
    A[0, 0] = 2e150
    check_magnitude(A, U, True, 0.0)  # φ(W) does not depend on W's scale
    check_magnitude(A, U, True)  # no decay on W by default
    assert _message(check_magnitude, W, A, True, 0.0).startswith("U=")
    assert _message(check_magnitude, A, U, True, 1.0).startswith("W=")


def test_seconds_is_the_time_the_call_took():
    task = fc.Task.full(3, 1, 2)
    rng = np.random.default_rng(0)
    r = monte_carlo_risk(task, rng.standard_normal((4, task.n_w)), rng.standard_normal((task.K, 8)), n_samples=4)
    assert 0 < r.seconds < 30


def test_cross_entropies_too_large_for_their_spread_are_refused():
    # ‖W‖ = ‖U‖ = 1e149 pass check_magnitude; scores near 1e298 have a finite mean but their variance overflows
    task = fc.Task.full(3, 2, 2)
    rng = np.random.default_rng(0)
    W, U = rng.standard_normal((4, task.n_w)), rng.standard_normal((task.K, 8))
    W *= 1e149 / np.linalg.norm(W)
    U *= 1e149 / np.linalg.norm(U)
    with np.errstate(over="ignore"):
        msg = _message(lambda: monte_carlo_risk(task, W, U, n_samples=8, seed=0))
    assert msg == "W='weights' is invalid: the sampled cross-entropies are not finite (weights too large for float64)"
