"""The structure checks of ``assert_type*_optimal`` (Definitions 1–3): each at the exact edge of its tolerance,
and the messages naming the property, the offending word, block or pair, both values and the tolerance.

The configurations are built on axis vectors (n_c = 2: f₀ = e₀, f₁ = −e₀; n_c = 3: e₀, e₁, e₂) with powers of
two as norms, so every quantity a check measures is exact in float64 and an error can equal ``rtol`` exactly.
A power of two s within a factor √2 of c (or c′) is within a relative 0.42 of it, so with rtol ≥ 0.5 only the
structure check under test can fail; gtol = 1 makes the critical-point check always pass (‖∇R‖ ≤ ‖∇R₀‖ + λ‖θ‖).
"""

import math

import numpy as np
import pytest

import fctheory as fc
from fctheory.network import phi
from fctheory.testing import (
    TheoryAssertionError,
    assert_critical_point,
    assert_type1_optimal,
    assert_type2_optimal,
    assert_type3_optimal,
)

LAM = 0.01
D = 4


def _pow2_near(x):
    return 2.0 ** round(math.log2(x))


def _axis_type1(n_c=2, s_c=2, *, c=None, c_prime=None):
    """Definition 1 on axis vectors: W = c·F[:, concept], u_{k,ℓ} = c′·f_(z_kℓ), d = max(n_c, 2)."""
    task = fc.Task.full(n_c, s_c, 2)
    p = fc.predict(task, lam=LAM)
    d = max(n_c, 2)
    F = np.eye(d) if n_c > 2 else np.array([[1.0, -1.0], [0.0, 0.0]])
    c = _pow2_near(p.c) if c is None else c
    c_prime = _pow2_near(p.c_prime) if c_prime is None else c_prime
    W = c * F[:, task.word_concept]
    U = c_prime * np.moveaxis(F[:, task.Z], 0, -1).reshape(task.K, task.L * d)
    return task, W, U


def _message(fn):
    with pytest.raises(TheoryAssertionError) as info:
        fn()
    return str(info.value)


def _below(x):
    return float(np.nextafter(x, 0.0))


# ----------------------------------------------------------------------------- an error equal to rtol passes
def test_a_word_norm_spread_equal_to_rtol_passes():
    # norms (3, 2, 1, 2)·s/2: the mean is s, words (0, 0) and (1, 0) are off by exactly 0.5
    task, W, U = _axis_type1()
    W[:, 0] *= 1.5
    W[:, 2] *= 0.5
    assert_type1_optimal(task, W, U, LAM, rtol=0.5, gtol=1.0)
    with pytest.raises(TheoryAssertionError, match="one norm"):
        assert_type1_optimal(task, W, U, LAM, rtol=_below(0.5), gtol=1.0)


def test_a_word_direction_deviation_equal_to_rtol_passes():
    # concept 0's words e₀, e₀, −e₀: their mean direction is e₀, the third is ‖−e₀ − e₀‖ = 2 away
    task, W, U = _axis_type1(s_c=3)
    W[:, 2] *= -1
    assert_type1_optimal(task, W, U, LAM, rtol=2.0, gtol=1.0)
    with pytest.raises(TheoryAssertionError, match="share one direction"):
        assert_type1_optimal(task, W, U, LAM, rtol=_below(2.0), gtol=1.0)


def test_a_frame_gram_error_equal_to_rtol_passes():
    # orthonormal concept directions: ⟨f_i, f_j⟩ = 0 where equation (4) wants −1/2
    task, W, U = _axis_type1(n_c=3)
    assert_type1_optimal(task, W, U, LAM, rtol=0.5, gtol=1.0)
    with pytest.raises(TheoryAssertionError, match="equiangular frame"):
        assert_type1_optimal(task, W, U, LAM, rtol=_below(0.5), gtol=1.0)


def test_a_classifier_block_error_equal_to_rtol_passes():
    # u_{1,1} = −c′f_z: ‖−c′f − c′f‖/c′ = 2
    task, W, U = _axis_type1()
    U[1, 2:4] *= -1
    assert_type1_optimal(task, W, U, LAM, rtol=2.0, gtol=1.0)
    with pytest.raises(TheoryAssertionError, match=r"u_\{k,ℓ\} must be"):
        assert_type1_optimal(task, W, U, LAM, rtol=_below(2.0), gtol=1.0)


def test_a_constant_error_equal_to_rtol_passes():
    # every norm exactly twice Theorem 1's c and c′ (as floats): relative errors exactly 1
    p = fc.predict(fc.Task.full(2, 2, 2), lam=LAM)
    task, W, U = _axis_type1(c=2 * p.c, c_prime=2 * p.c_prime)
    assert_type1_optimal(task, W, U, LAM, rtol=1.0, gtol=1.0)
    with pytest.raises(TheoryAssertionError, match="predicts"):
        assert_type1_optimal(task, W, U, LAM, rtol=_below(1.0), gtol=1.0)


# ----------------------------------------------------------------------------- what each failure names
def test_a_zero_word_is_named_with_its_concept_and_rank():
    task = fc.Task.full(3, 2, 2)
    W, U = fc.type1_configuration(task, d=D, lam=LAM)
    W[:, 3] = 0.0  # word (α, β) = (1, 1)
    msg = _message(lambda: assert_type1_optimal(task, W, U, LAM))
    assert msg == "(W, U) is not type-I (Definition 1): word (α, β) = (1, 1) has a zero embedding in W"


def test_the_norm_failure_names_the_word_both_norms_and_rtol():
    task, W, U = _axis_type1()
    s = W[0, 1]
    W[:, 0] *= 1.5
    W[:, 2] *= 0.5
    msg = _message(lambda: assert_type1_optimal(task, W, U, LAM, rtol=0.25, gtol=1.0))
    assert msg == (
        f"(W, U) is not type-I (Definition 1): all words must have one norm in W, but ‖w_(0,0)‖ = {1.5 * s:.17g} "
        f"differs from {s:.17g} by a relative 0.5 > rtol = 0.25"
    )


def test_type1_needs_one_norm_across_ranks_too():
    # the words of rank β = 1 longer than those of rank 0, equal within the rank: type III, not type I
    task = fc.Task.full(3, 2, 2)
    W, U = fc.type1_configuration(task, d=D, lam=LAM)
    W[:, 1::2] *= 1.01
    with pytest.raises(TheoryAssertionError, match=r"is not type-I \(Definition 1\): all words must have one norm"):
        assert_type1_optimal(task, W, U, LAM, gtol=1.0)


def test_type2_norm_failure_names_phi_of_w():
    # φ(W)'s columns have norm √d up to rounding; rtol = 1e-300 sees the rounding
    task = fc.Task.full(3, 2, 2)
    rng = np.random.default_rng(0)
    for _ in range(20):
        W, U = fc.type2_configuration(task, d=D, lam=LAM)
        W = W * rng.uniform(0.5, 3.0, W.shape[1]) + rng.normal(size=W.shape[1])
        if np.ptp(np.linalg.norm(phi(W), axis=0)) > 0:
            break
    msg = _message(lambda: assert_type2_optimal(task, W, U, LAM, rtol=1e-300))
    assert msg.startswith("(W, U) is not type-II (Definition 2): all words must have one norm in phi(W), but ‖w_(")


def test_the_direction_failure_names_the_concept_and_the_word():
    task, W, U = _axis_type1(s_c=3)
    W[:, 5] *= -1  # word (1, 2)
    msg = _message(lambda: assert_type1_optimal(task, W, U, LAM, rtol=1.0, gtol=1.0))
    assert msg == (
        "(W, U) is not type-I (Definition 1): the words of concept α = 1 must share one direction f_α, but "
        "word (1, 2) is off by ‖w/‖w‖ − f_α‖ = 2 > rtol = 1"
    )


def test_the_frame_failure_names_the_worst_pair_and_both_values():
    task, W, U = _axis_type1(n_c=3)
    msg = _message(lambda: assert_type1_optimal(task, W, U, LAM, rtol=0.25, gtol=1.0))
    assert msg == (
        "(W, U) is not type-I (Definition 1): the concept directions are not an equiangular frame (equation (4)): "
        "⟨f_0, f_1⟩ = 0, expected -0.5 (error 0.5 > rtol = 0.25)"
    )


def test_the_classifier_failure_names_the_block_and_its_concept():
    task, W, U = _axis_type1()
    U[2, 2:4] *= -1  # (k, ℓ) = (2, 1)
    msg = _message(lambda: assert_type1_optimal(task, W, U, LAM, rtol=1.0, gtol=1.0))
    assert msg == (
        "(W, U) is not type-I (Definition 1): u_{k,ℓ} must be c·f_(z_kℓ) (the frame of W's concepts), but for "
        f"(k, ℓ) = (2, 1), z = {int(task.Z[2, 1])}, the relative error is 2 > rtol = 1"
    )


def test_a_zero_classifier_is_named():
    task, W, U = _axis_type1()
    msg = _message(lambda: assert_type1_optimal(task, W, np.zeros_like(U), LAM))
    assert msg == "(W, U) is not type-I (Definition 1): U = 0 while W ≠ 0"


def _rotate(v, theta):
    """Rotate v by θ in the plane of v and e₃ (orthogonal to equiangular_frame(3, 4)), keeping its norm."""
    out = math.cos(theta) * v
    out[3] += math.sin(theta) * np.linalg.norm(v)
    return out


def test_word_direction_tolerance_holds_for_large_deviations():
    # the two words of concept 0 rotated by ±θ: each 2·sin(θ/2) from their normalised mean f₀ (passes at
    # 0.98·rtol, fails at 1.02·rtol); the deviation is the whole vector w/‖w‖ − f₀, not one coordinate of it
    task = fc.Task.full(3, 2, 2)
    W, U = fc.type1_configuration(task, d=D, lam=LAM, frame=fc.equiangular_frame(3, D))
    rtol = 0.9
    for f, ok in ((0.98, True), (1.02, False)):
        theta = 2 * math.asin(f * rtol / 2)
        W2 = W.copy()
        W2[:, 0] = _rotate(W[:, 0], theta)
        W2[:, 1] = _rotate(W[:, 1], -theta)
        if ok:
            assert_type1_optimal(task, W2, U, LAM, rtol=rtol, gtol=1.0)
        else:
            with pytest.raises(TheoryAssertionError, match="share one direction"):
                assert_type1_optimal(task, W2, U, LAM, rtol=rtol, gtol=1.0)


# ----------------------------------------------------------------------------- the theorem's constants
def test_a_scalar_constant_failure_shows_both_values_without_an_index():
    p = fc.predict(fc.Task.full(2, 2, 2), lam=LAM)
    task, W, U = _axis_type1(c=2 * p.c)
    msg = _message(lambda: assert_type1_optimal(task, W, U, LAM, rtol=0.5, gtol=1.0))
    assert msg == (
        f"c = ‖w_(α,β)‖ = {2 * p.c:.17g} but Theorem 1 (c = √(τ/n_w)) predicts {p.c:.17g} "
        "(relative error 1 > rtol = 0.5)"
    )


def test_a_rank_norm_failure_names_the_rank():
    # type III: the words of rank β = 1 all longer by 1e-6, so r₁ (the second of two entries) is off
    task = fc.Task.full(3, 2, 2, mu="zipf")
    W, U = fc.type3_configuration(task, d=D, lam=LAM, frame=fc.equiangular_frame(3, D))
    W[:, 1::2] *= 1 + 1e-6
    msg = _message(lambda: assert_type3_optimal(task, W, U, LAM, gtol=1.0))
    assert msg.startswith("r_β = ‖w_(α,β)‖[1] = ")
    assert "but Theorem 2 ((7)–(8)) predicts" in msg and "(relative error 1e-06 > rtol = 1e-09)" in msg


# ----------------------------------------------------------------------------- shape refusals
def _refusal(fn):
    with pytest.raises(fc.FCTheoryError) as info:
        fn()
    assert not isinstance(info.value, TheoryAssertionError)
    return str(info.value)


@pytest.mark.parametrize("check", [assert_type1_optimal, assert_critical_point])
def test_a_w_with_the_wrong_number_of_columns_is_refused_naming_w(check):
    task = fc.Task.full(3, 2, 2)
    W, U = fc.type1_configuration(task, d=D, lam=LAM)
    msg = _refusal(lambda: check(task, W[:, :-1], U[:, :-1], LAM))
    assert msg == (
        "W=array(shape=(4, 5), dtype=float64) is invalid: must have shape (d, n_w) with n_w = 6 columns "
        "(one per word), got (4, 5)"
    )


@pytest.mark.parametrize("check", [assert_type1_optimal, assert_critical_point])
def test_a_u_that_does_not_match_w_is_refused_naming_u(check):
    task = fc.Task.full(3, 2, 2)
    W, U = fc.type1_configuration(task, d=D, lam=LAM)
    msg = _refusal(lambda: check(task, W, U[:, :-1], LAM))
    assert msg == (
        "U=array(shape=(9, 7), dtype=float64) is invalid: must have shape (K, L·d) = (9, 8) for W of shape "
        "(4, 6), got (9, 7)"
    )
