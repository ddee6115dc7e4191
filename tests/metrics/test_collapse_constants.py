"""Constants inside the collapse metrics (``fctheory.metrics.collapse``) against brute-force constructions.

Oracle for the distances: an exact collapse configuration (frame F, constants c, c′, r_β) plus a shift
b·e added to every word vector (and b′·e to every classifier block). Every configuration's words sum
to zero (Σ_α f_α = 0 for an equiangular frame, each concept equally often), so the shift is Frobenius-
orthogonal to all candidates: the nearest configuration is the unshifted one and the distance is known
in closed form, e.g. type I: √((b²n_w + b′²KL)/(c²n_w + b²n_w + c′²KL + b′²KL)). A dropped square root,
a factor 2 or a wrong normalisation changes it by far more than the 1e-10 tolerance.
"""

import math

import numpy as np
import pytest

import fctheory as fc
from fctheory.metrics import collapse

N_C, S_C, L, D = 3, 2, 2, 5


def _task(mu="uniform"):
    return fc.Task.full(N_C, S_C, L, mu=mu)


def _orthogonal_unit(F, seed=0):
    """A unit vector orthogonal to the columns of F (d > rank F)."""
    v = np.random.default_rng(seed).standard_normal(F.shape[0])
    Q, _ = np.linalg.qr(F)
    v -= Q @ (Q.T @ v)
    return v / np.linalg.norm(v)


def _U(task, F, c_prime, shift):
    U = np.empty((task.K, task.L * F.shape[0]))
    for k in range(task.K):
        for ell in range(task.L):
            U[k, ell * F.shape[0] : (ell + 1) * F.shape[0]] = c_prime * F[:, task.Z[k, ell]] + shift
    return U


def _W(task, F, r_by_rank, shift):
    W = np.empty((F.shape[0], task.n_w))
    for a in range(task.n_c):
        for b in range(task.s_c):
            W[:, a * task.s_c + b] = r_by_rank[b] * F[:, a] + shift
    return W


@pytest.mark.parametrize("b,b2", [(0.3, 0.0), (0.0, 0.7), (0.4, 1.3), (2.0, 0.1)])
def test_distance_to_type1_is_the_relative_frobenius_distance(b, b2):
    task = _task()
    F = fc.equiangular_frame(N_C, D, seed=1)
    e = _orthogonal_unit(F)
    c, cp = 1.7, 0.6
    W, U = _W(task, F, [c] * S_C, b * e), _U(task, F, cp, b2 * e)
    res = collapse.distance_to_type1(task, W, U)
    n_w, KL = task.n_w, task.K * task.L
    want = math.sqrt((b * b * n_w + b2 * b2 * KL) / (c * c * n_w + b * b * n_w + cp * cp * KL + b2 * b2 * KL))
    assert res.distance == pytest.approx(want, rel=1e-10, abs=1e-14)
    assert res.c == pytest.approx(c, rel=1e-10) and res.c_prime == pytest.approx(cp, rel=1e-10)
    np.testing.assert_allclose(res.W_star, _W(task, F, [c] * S_C, 0 * e), rtol=0, atol=1e-10)


@pytest.mark.parametrize("b,b2", [(0.3, 0.0), (0.0, 0.7), (0.4, 1.3)])
def test_distance_to_type3_is_the_relative_frobenius_distance(b, b2):
    task = _task("zipf")
    F = fc.equiangular_frame(N_C, D, seed=2)
    e = _orthogonal_unit(F, 1)
    r, c = np.array([1.9, 0.8]), 0.5
    W, U = _W(task, F, r, b * e), _U(task, F, c, b2 * e)
    res = collapse.distance_to_type3(task, W, U)
    KL = task.K * task.L
    star = N_C * float(np.sum(r**2)) + c * c * KL
    want = math.sqrt((b * b * task.n_w + b2 * b2 * KL) / (star + b * b * task.n_w + b2 * b2 * KL))
    assert res.distance == pytest.approx(want, rel=1e-10, abs=1e-14)
    np.testing.assert_allclose(res.r, r, rtol=1e-10)
    assert res.c == pytest.approx(c, rel=1e-10)


@pytest.mark.parametrize("b2", [0.0, 0.7, 2.5])
def test_distance_to_type2_compares_phi_of_W_with_sqrt_d_times_the_frame(b2):
    # φ(W) = √d·F exactly (any positive scale and shift of the columns); ‖φ(W)‖² = d·n_w
    task = _task()
    F = fc.equiangular_frame(N_C, D, mean_zero=True, seed=3)
    e = _orthogonal_unit(np.column_stack([F, np.ones(D)]), 2)
    c = 0.9
    W = _W(task, F, [3.0] * S_C, 0 * e) + 0.25  # scaled and shifted: φ removes both
    U = _U(task, F, c, b2 * e)
    res = collapse.distance_to_type2(task, W, U)
    KL = task.K * task.L
    want = math.sqrt(b2 * b2 * KL / (D * task.n_w + c * c * KL + b2 * b2 * KL))
    assert res.distance == pytest.approx(want, rel=1e-10, abs=1e-14)
    assert res.c == pytest.approx(c, rel=1e-10)
    np.testing.assert_allclose(res.W_star, math.sqrt(D) * F[:, task.word_concept], rtol=0, atol=1e-10)


@pytest.mark.parametrize("a,b", [(1.0, 0.0), (1.0, 0.5), (0.2, 3.0)])
def test_frame_alignment_of_shifted_centres(a, b):
    # centres M = a·F + b·e1ᵀ: distance |b|/√(a² + b²), c = a, equal norms, cosines (−a²/(n_c−1) + b²)/(a² + b²)
    task = _task()
    F = fc.equiangular_frame(N_C, D, seed=4)
    e = _orthogonal_unit(F, 3)
    res = collapse.frame_alignment(task, _W(task, F, [a] * S_C, b * e))
    assert res.distance == pytest.approx(abs(b) / math.hypot(a, b), rel=1e-10, abs=1e-14)
    assert res.c == pytest.approx(a, rel=1e-10)
    assert res.norm_cv == pytest.approx(0.0, abs=1e-14)
    cos = (-a * a / (N_C - 1) + b * b) / (a * a + b * b)
    assert res.max_cosine_error == pytest.approx(abs(cos + 1 / (N_C - 1)), rel=1e-10, abs=1e-14)


def test_frame_alignment_norm_cv_is_the_population_coefficient_of_variation():
    task = _task()
    F = fc.equiangular_frame(N_C, D, seed=5)
    scales = np.array([1.0, 2.0, 4.0])
    W = np.column_stack([scales[a] * F[:, a] for a in task.word_concept])
    mean = scales.mean()
    assert collapse.frame_alignment(task, W).norm_cv == pytest.approx(
        math.sqrt(np.mean((scales - mean) ** 2)) / mean, rel=1e-12
    )


def test_within_concept_spread_equals_explicit_sums():
    task = _task()
    W = np.random.default_rng(6).standard_normal((D, task.n_w))
    res = collapse.within_concept_spread(task, W)
    num, den, per, ang = 0.0, 0.0, [], 0.0
    for a in range(N_C):
        words = [W[:, a * S_C + b] for b in range(S_C)]
        centre = sum(words) / S_C
        np.testing.assert_allclose(res.centres[:, a], centre, rtol=1e-14, atol=1e-15)
        na = sum(float(np.dot(w - centre, w - centre)) for w in words)
        da = sum(float(np.dot(w, w)) for w in words)
        per.append(na / da)
        num, den = num + na, den + da
        units = [w / np.linalg.norm(w) for w in words]
        uc = sum(units) / S_C
        ang += sum(float(np.dot(u - uc, u - uc)) for u in units)
    assert res.spread == pytest.approx(num / den, rel=1e-13)
    np.testing.assert_allclose(res.per_concept, per, rtol=1e-13)
    assert res.angular_spread == pytest.approx(ang / task.n_w, rel=1e-13)
