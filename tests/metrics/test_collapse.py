"""Feature-collapse metrics: distances to type-I/II/III configurations (Definitions 1–3), spread, alignment."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fctheory import FCTheoryError, Task, U_from_hat, equiangular_frame, phi
from fctheory.metrics import (
    distance_to_type1,
    distance_to_type2,
    distance_to_type3,
    frame_alignment,
    within_concept_spread,
)

TOL = 1e-12


@st.composite
def task_and_dim(draw, mean_zero=False):
    n_c = draw(st.integers(2, 5))
    s_c = draw(st.integers(1, 4))
    L = draw(st.integers(1, 3))
    K = draw(st.integers(1, min(12, n_c**L)))
    extra = draw(st.integers(0, 4))
    d = (n_c if mean_zero else n_c - 1) + extra
    d = max(d, 2 if mean_zero else 1)
    seed = draw(st.integers(0, 2**31 - 1))
    return Task.random(n_c, s_c, L, K, seed=seed), d, seed


def _type1(task, d, c, cp, seed):
    F = equiangular_frame(task.n_c, d, seed=seed)
    return c * F @ task.P, U_from_hat(cp * F @ task.Z_onehot, L=task.L)


@settings(max_examples=40)
@given(task_and_dim(), st.floats(0.01, 100), st.floats(0.01, 100))
def test_definition1_type1_configuration_has_distance_zero(tdim, c, cp):
    task, d, seed = tdim
    W, U = _type1(task, d, c, cp, seed)
    res = distance_to_type1(task, W, U)
    assert res.distance <= TOL
    assert res.c == pytest.approx(c, rel=1e-12)
    assert res.c_prime == pytest.approx(cp, rel=1e-12)
    # type I is a special case of type III (r_β ≡ c)
    r3 = distance_to_type3(task, W, U)
    assert r3.distance <= TOL
    np.testing.assert_allclose(r3.r, c, rtol=1e-12)


@settings(max_examples=40)
@given(task_and_dim(), st.lists(st.floats(0.0, 10), min_size=4, max_size=4), st.floats(0.0, 10))
def test_definition3_type3_configuration_has_distance_zero(tdim, rs, c):
    task, d, seed = tdim
    r = np.array((rs * 2)[: task.s_c])
    F = equiangular_frame(task.n_c, d, seed=seed)
    W = (F @ task.P) * r[task.word_rank]
    U = U_from_hat(c * F @ task.Z_onehot, L=task.L)
    res = distance_to_type3(task, W, U)
    assert res.distance <= TOL
    # the constants are identifiable when neither block is negligible next to the other
    if 1e-6 * max(c, 1.0) < r.max() and 1e-6 * r.max() < c:
        np.testing.assert_allclose(res.r, r, rtol=1e-10, atol=1e-12 * r.max())


@settings(max_examples=40)
@given(task_and_dim(mean_zero=True), st.floats(0.01, 100), st.floats(0.01, 100), st.floats(-5, 5))
def test_definition2_type2_configuration_has_distance_zero(tdim, c, scale, shift):
    task, d, seed = tdim
    F = equiangular_frame(task.n_c, d, mean_zero=True, seed=seed)
    # any W with φ(W) = √d F P: φ is invariant to positive scaling and to adding a multiple of 1
    W = scale * np.sqrt(d) * F @ task.P + shift
    U = U_from_hat(c * F @ task.Z_onehot, L=task.L)
    res = distance_to_type2(task, W, U)
    assert res.distance <= TOL
    assert res.c == pytest.approx(c, rel=1e-12)
    np.testing.assert_allclose(phi(res.W_star), res.W_star, atol=1e-12)


def test_type3_with_unequal_magnitudes_is_not_type1():
    task = Task.random(3, 3, 2, 6, seed=0)
    F = equiangular_frame(3, 4, seed=1)
    W = (F @ task.P) * np.array([2.0, 1.0, 0.5])[task.word_rank]
    U = U_from_hat(F @ task.Z_onehot, L=task.L)
    assert distance_to_type3(task, W, U).distance <= TOL
    assert distance_to_type1(task, W, U).distance > 0.1


def test_distances_positive_on_random_weights():
    rng = np.random.default_rng(3)
    task = Task.random(4, 2, 3, 10, seed=2)
    d = 6
    W = rng.standard_normal((d, task.n_w))
    U = rng.standard_normal((task.K, task.L * d))
    for f in (distance_to_type1, distance_to_type2, distance_to_type3):
        assert f(task, W, U).distance > 0.3


def test_distance_grows_linearly_with_perturbation():
    # d(ε) = ε‖E‖/‖X‖ + O(ε²) for a perturbation orthogonal to the configuration manifold's normal cone;
    # we check 0 < d(ε) ≤ ε‖E‖/‖X‖ (the configuration itself is a candidate) and d(ε)/ε bounded away from 0
    rng = np.random.default_rng(5)
    task = Task.random(3, 2, 2, 7, seed=4)
    W, U = _type1(task, 5, 1.3, 0.7, 6)
    E_W, E_U = rng.standard_normal(W.shape), rng.standard_normal(U.shape)
    norm = np.sqrt((W**2).sum() + (U**2).sum())
    for eps in (1e-2, 1e-4, 1e-6):
        Wp, Up = W + eps * E_W, U + eps * E_U
        res = distance_to_type1(task, Wp, Up)
        upper = eps * np.sqrt((E_W**2).sum() + (E_U**2).sum()) / np.sqrt((Wp**2).sum() + (Up**2).sum())
        assert 0.2 * upper < res.distance <= upper * (1 + 1e-9)
    assert norm > 0


def test_distance_invariant_under_rotation():
    rng = np.random.default_rng(7)
    task = Task.random(3, 2, 2, 6, seed=1)
    d = 5
    W = rng.standard_normal((d, task.n_w))
    U = rng.standard_normal((task.K, task.L * d))
    Qr, _ = np.linalg.qr(rng.standard_normal((d, d)))
    U_rot = (U.reshape(task.K, task.L, d) @ Qr.T).reshape(task.K, task.L * d)
    for f in (distance_to_type1, distance_to_type3):
        a, b = f(task, W, U).distance, f(task, Qr @ W, U_rot).distance
        assert abs(a - b) <= 1e-8


def test_zero_weights_are_type1_with_zero_constants():
    task = Task.random(3, 2, 2, 5, seed=0)
    res = distance_to_type1(task, np.zeros((3, task.n_w)), np.zeros((task.K, 3 * task.L)))
    assert res.distance == 0.0 and res.c == 0.0 and res.c_prime == 0.0


def test_frames_need_enough_dimensions():
    task = Task.random(4, 1, 1, 4, seed=0)
    with pytest.raises(FCTheoryError, match="d >= 3"):
        distance_to_type1(task, np.ones((2, 4)), np.ones((4, 2)))
    with pytest.raises(FCTheoryError, match="d >= 4"):
        distance_to_type2(task, np.arange(12.0).reshape(3, 4), np.ones((4, 3)))
    with pytest.raises(FCTheoryError, match="shape"):
        distance_to_type1(task, np.ones((3, 5)), np.ones((4, 3)))


@settings(max_examples=30)
@given(task_and_dim(), st.floats(0.01, 100))
def test_within_concept_spread_zero_on_collapse_and_scale_invariant(tdim, c):
    task, d, seed = tdim
    W, _ = _type1(task, d, c, 1.0, seed)
    res = within_concept_spread(task, W)
    assert res.spread <= TOL and res.angular_spread <= TOL
    rng = np.random.default_rng(seed)
    Wr = rng.standard_normal(W.shape)
    a, b = within_concept_spread(task, Wr), within_concept_spread(task, c * Wr)
    assert abs(a.spread - b.spread) <= 1e-12
    # matches the straightforward loop
    num = den = 0.0
    for al in range(task.n_c):
        cols = Wr[:, al * task.s_c : (al + 1) * task.s_c]
        num += ((cols - cols.mean(1, keepdims=True)) ** 2).sum()
        den += (cols**2).sum()
    assert a.spread == pytest.approx(num / den, rel=1e-12)


def test_angular_spread_zero_for_type3():
    task = Task.random(3, 3, 1, 3, seed=0)
    F = equiangular_frame(3, 4, seed=0)
    W = (F @ task.P) * np.array([3.0, 1.0, 0.2])[task.word_rank]
    res = within_concept_spread(task, W)
    assert res.spread > 0.1 and res.angular_spread <= TOL


@settings(max_examples=30)
@given(task_and_dim(mean_zero=True), st.floats(0.01, 100))
def test_frame_alignment_zero_on_equiangular_centres(tdim, c):
    task, d, seed = tdim
    F = equiangular_frame(task.n_c, d, mean_zero=True, seed=seed)
    W = c * F @ task.P
    for ln in (False, True):
        res = frame_alignment(task, W, layernorm=ln)
        assert res.distance <= TOL
        assert res.max_cosine_error <= 1e-12 and res.norm_cv <= 1e-12


def test_frame_alignment_positive_on_orthogonal_centres():
    task = Task.random(3, 1, 1, 3, seed=0)
    res = frame_alignment(task, np.eye(3))
    assert res.distance > 0.1 and res.max_cosine_error == pytest.approx(0.5)
