"""is_equiangular, the checker of (4): every branch and tolerance pinned (survivors of the mutmut run
recorded in docs/testing.md).

Frames are built by hand in R^4: the simplex of n_c = 3 unit vectors in the first two coordinates
(Gram κI − 11ᵀ/(n_c−1), κ = n_c/(n_c − 1), i.e. 1 on the diagonal and −1/(n_c−1) off it, exactly up to
rounding), so perturbations can be placed precisely.
"""

import math
import warnings

import numpy as np
import pytest

import fctheory as fc
from fctheory import is_equiangular


def simplex():
    ang = 2 * np.pi * np.arange(3) / 3
    F = np.zeros((4, 3))
    F[0], F[1] = np.cos(ang), np.sin(ang)
    return F


def test_exact_simplex_is_equiangular_and_default_does_not_ask_mean_zero():
    F = simplex()
    assert is_equiangular(F)
    # each f_α has a nonzero mean over its d coordinates: the default (mean_zero=False) ignores it
    assert abs(F.sum(axis=0)).max() > 0.1
    assert not is_equiangular(F, mean_zero=True)


def test_mean_zero_frame_passes_mean_zero_check():
    F = fc.equiangular_frame(n_c=3, d=5, mean_zero=True, seed=0)
    assert is_equiangular(F, mean_zero=True) and is_equiangular(F)


def test_mean_zero_tolerance_is_atol_not_numpy_default():
    # rotate the mean-zero frame by θ = 1e-10 towards the all-ones direction: Gram unchanged, column sums ~1e-10
    F = fc.equiangular_frame(n_c=3, d=5, mean_zero=True, seed=0)
    one = np.ones(5) / math.sqrt(5)
    v = F[:, 0] / np.linalg.norm(F[:, 0])  # ⟂ one since F is mean-zero
    th = 1e-10
    Q = (
        np.eye(5)
        + math.sin(th) * (np.outer(one, v) - np.outer(v, one))
        + (math.cos(th) - 1) * (np.outer(one, one) + np.outer(v, v))
    )
    G = Q @ F
    assert np.allclose(G.T @ G, fc.equiangular_gram(3), rtol=0, atol=1e-14)
    assert 1e-12 < abs(G.sum(axis=0)).max() < 1e-8
    assert not is_equiangular(G, mean_zero=True)
    assert is_equiangular(G, mean_zero=True, atol=1e-9)


def test_gram_tolerance_is_atol():
    F = simplex()
    F[0, 0] += 1e-6
    assert not is_equiangular(F)
    assert is_equiangular(F, atol=1e-5)


def test_vectors_must_sum_to_zero_within_atol():
    # a common offset a ⟂ span(F), |a| = 1e-9: Gram moves by |a|² = 1e-18 (inside atol) but Σ_α f_α = 3a ≠ 0;
    # a's entries sum to 0 so the grand total of F is still 0 (only the per-coordinate sums see it)
    F = simplex()
    a = 1e-9 * np.array([0.0, 0.0, 1.0, -1.0]) / math.sqrt(2)
    G = F + a[:, None]
    assert abs(G.sum()) < 1e-15 and 1e-12 < abs(G.sum(axis=1)).max() < 1e-8
    assert not is_equiangular(G)
    assert is_equiangular(G, atol=1e-8)


def test_zero_row_sums_do_not_make_a_frame():
    F = np.array([[1.0, -1.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    assert abs(F.sum(axis=1)).max() == 0
    assert not is_equiangular(F)


@pytest.mark.parametrize("F", [np.ones(4), np.ones((4, 1)), np.ones((2, 2, 2))])
def test_wrong_shapes_are_not_equiangular(F):
    assert is_equiangular(F) is False


def test_two_vectors_can_be_equiangular():
    # n_c = 2: Gram [[1, −1], [−1, 1]]: f_1 = −f_0, unit vectors
    F = np.array([[1.0, -1.0], [0.0, 0.0]])
    assert is_equiangular(F)


def test_huge_entries_are_not_equiangular_and_raise_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert is_equiangular(simplex() * 1e200) is False
        assert is_equiangular(np.full((4, 3), np.nan)) is False


def test_gram_size_is_checked_against_the_budget_before_forming_it():
    n_c, d = 300, 2
    F = np.zeros((d, n_c))
    need = 24 * n_c * n_c
    with fc.budget(max_bytes=need - 1):
        with pytest.raises(
            fc.FCTheoryError, match=r"^F=.*is_equiangular \(the n_c×n_c Gram matrix\) needs about 2\.16e\+06 bytes"
        ):
            is_equiangular(F)
    with fc.budget(max_bytes=need):
        assert is_equiangular(F) is False
    with fc.budget(max_seconds=d * n_c * n_c / 1e9 * (1 - 1e-9)):
        with pytest.raises(fc.FCTheoryError, match="needs about 0.00018 s"):
            is_equiangular(F)
    with fc.budget(max_seconds=d * n_c * n_c / 1e9):
        assert is_equiangular(F) is False
