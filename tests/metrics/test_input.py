"""The NC metrics' input checks and exact power-of-two rescalings (fctheory/metrics/_input.py): features and
labels refused naming the parameter, the value and the rule; rescalings exact (checked in rationals) and
refused, not silently infinite, when the result overflows float64."""

from fractions import Fraction

import numpy as np
import pytest

from fctheory import FCTheoryError
from fctheory.metrics._input import _exponent, _features, _labels, _scale_back, _unit


@pytest.mark.parametrize("H", [np.array([[1.0, np.nan]]), np.array([[np.inf, 0.0]]), np.array([[1, 2]], dtype=object)])
def test_features_that_are_not_finite_reals_are_refused_naming_H(H):
    with pytest.raises(FCTheoryError, match=r"^H=.*must be (finite|real numbers)"):
        _features(H.astype(float) if H.dtype != object else np.array([["a", "b"]]))


@pytest.mark.parametrize(
    ("H", "rule"),
    [(np.zeros(3), "must be a 2-D array"), (np.zeros((0, 3)), "must not be empty")],
)
def test_features_of_the_wrong_shape_are_refused(H, rule):
    with pytest.raises(FCTheoryError, match=rf"^H=.*{rule}"):
        _features(H)


def test_integer_and_float32_features_become_float64_unchanged():
    xp, H = _features(np.array([[1, 2], [3, 4]], dtype=np.int32))
    assert H.dtype == np.float64 and np.array_equal(H, [[1.0, 2.0], [3.0, 4.0]])
    _, H = _features(np.array([[0.1]], dtype=np.float32))
    assert H.dtype == np.float64 and H[0, 0] == float(np.float32(0.1))


@pytest.mark.parametrize(
    ("y", "K", "match"),
    [
        (np.array([0, 1]), None, r"^y=.*length N = 3"),
        (np.array([0, -1, 1]), None, r"^y=.*labels must be >= 0"),
        (np.array([0.0, 0.5, 1.0]), None, r"^y=.*must be integer class labels"),
        (np.array([0, 0, 0]), None, r"^y=.*at least 2 classes present"),
        (np.array([5, 5, 5]), 10**12, r"^y=.*at least 2 classes present"),
        (np.array([0, 1, 2]), 2, r"^K=2 .*smaller than the number of classes in y \(labels up to 2\)"),
    ],
)
def test_bad_labels_are_refused_naming_y_or_K(y, K, match):
    with pytest.raises(FCTheoryError, match=match):
        _labels(y, 3, K)


def test_labels_give_int64_labels_the_class_count_and_counts():
    y, K, counts, present = _labels(np.array([1.0, 0.0, 1.0]), 3)  # integral floats are accepted as labels
    assert y.dtype == np.int64 and K == 2 and counts.tolist() == [1, 2] and present.all
    _, K, counts, present = _labels(np.array([0, 1, 1]), 3, K=2)
    assert K == 2 and counts.tolist() == [1, 2] and present.classes.tolist() == [0, 1] and present.num_classes == 2


@pytest.mark.parametrize(
    ("y", "K", "classes", "num_classes"),
    [
        (np.array([0, 2, 2]), None, [0, 2], 3),  # a gap in the labels
        (np.array([0, 1, 9]), None, [0, 1, 9], 10),  # more classes than samples
        (np.array([1, 1, 3]), 4, [1, 3], 4),  # absent classes before, between and after
        (np.array([7, 10**12 - 1, 7]), 10**12, [7, 10**12 - 1], 10**12),  # K far beyond N: never K counters
    ],
)
def test_absent_classes_leave_the_present_ones_renumbered_in_order(y, K, classes, num_classes):
    yc, Kp, counts, present = _labels(y, 3, K)
    assert Kp == len(classes) and present.classes.tolist() == classes and present.num_classes == num_classes
    assert not present.all
    # the renumbered labels index the present classes: classes[yc] gives back y, and the counts are theirs
    assert np.array_equal(present.classes[yc], y) and counts.tolist() == [int((y == c).sum()) for c in classes]


@pytest.mark.parametrize("scale", [1.0, 0.75, 2.0**-1074, 1.7e308, 3e-300, 1e300])
def test_unit_rescaling_is_exact_and_lands_in_half_one(scale):
    A = np.array([[scale, -scale / 3], [0.0, scale / 7]])
    U, e = _unit(np, A)
    assert 0.5 <= np.max(np.abs(U)) < 1.0
    for a, u in zip(A.ravel(), U.ravel()):  # u = a·2^-e exactly, in rationals
        assert Fraction(float(u)) == Fraction(float(a)) * Fraction(2) ** (-e)
    assert _exponent(np, np.zeros((2, 2))) == 0


def test_scale_back_is_exact_and_refuses_an_overflow_naming_the_parameter():
    assert _scale_back("H", "v", 0.75, 3, "x") == 6.0
    A = np.array([0.5, -0.25])
    assert np.array_equal(_scale_back("H", "v", A, -2, "x"), [0.125, -0.0625])
    assert _scale_back("H", "v", A, 0, "x") is A
    with pytest.raises(
        FCTheoryError, match=r"^H='v' is invalid: Sigma_W overflows float64 at this scale \(entries up to 2\^2000\)"
    ):
        _scale_back("H", "v", 0.75, 2000, "Sigma_W")
    with pytest.raises(FCTheoryError, match=r"^H='v' is invalid: the means overflows float64"):
        _scale_back("H", "v", A, 1100, "the means")
