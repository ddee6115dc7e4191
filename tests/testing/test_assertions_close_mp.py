"""Input parsing and messages of ``assert_close_mp`` (and the trivial-optimum message of the type-I check).

Each refused input raises FCTheoryError whose whole text is compared: it names the parameter (``value`` or
``reference``), shows the offending value (the entry itself for an entry of an array) and states the
rule. A failed comparison raises TheoryAssertionError whose whole text is compared too: it is what a user
reads when a check fails (which entry, both values to 20 digits, the error to 3, the digits shared).
"""

import mpmath
import numpy as np
import pytest

import fctheory as fc
from fctheory import FCTheoryError
from fctheory.testing import TheoryAssertionError, assert_close_mp, assert_type1_optimal

NOT_REAL = "must be a real number, an mpmath number, a decimal string or an array of those"


def _message(exc_type, fn):
    with pytest.raises(exc_type) as info:
        fn()
    return str(info.value)


def _refused(value, reference):
    return _message(FCTheoryError, lambda: assert_close_mp(value, reference))


class _Unconvertible:
    """An object NumPy cannot turn into an array."""

    def __array__(self, *args, **kwargs):
        raise RuntimeError("no array")

    def __repr__(self):
        return "_Unconvertible()"


# ----------------------------------------------------------------------------- refused input: which parameter
def test_a_string_that_is_not_a_number_is_refused_naming_its_parameter():
    rule = "must be a number, an mpmath number, a decimal string or an array of those"
    assert _refused("abc", 1.0) == f"value='abc' is invalid: {rule}"
    assert _refused(1.0, "1.0x") == f"reference='1.0x' is invalid: {rule}"


@pytest.mark.parametrize(
    ("bad", "shown"),
    [(float("inf"), "inf"), (float("-inf"), "-inf"), (float("nan"), "nan"), (mpmath.mpf("inf"), "mpf('+inf')")],
)
def test_a_non_finite_number_is_refused_naming_its_parameter(bad, shown):
    assert _refused(bad, 1.0) == f"value={shown} is invalid: must be finite"
    assert _refused(1.0, bad) == f"reference={shown} is invalid: must be finite"


@pytest.mark.parametrize(
    ("bad", "shown"),
    [(True, "True"), (np.bool_(False), "False"), (1j, "1j"), (b"1", "b'1'"), (None, "None")],
)
def test_bools_complex_bytes_and_none_are_refused_naming_their_parameter(bad, shown):
    assert _refused(bad, 1.0) == f"value={shown} is invalid: {NOT_REAL}"
    assert _refused(1.0, bad) == f"reference={shown} is invalid: {NOT_REAL}"


def test_a_bad_entry_of_an_array_is_refused_naming_the_parameter_and_the_entry():
    assert _refused([1.0, float("inf")], [1.0, 2.0]) == "value=inf is invalid: must be finite"
    assert _refused(np.array([1.0, 2.0]), np.array([1.0, np.nan])) == "reference=nan is invalid: must be finite"
    assert _refused([1.0, True], [1.0, 2.0]) == f"value=True is invalid: {NOT_REAL}"
    assert _refused([1.0, 2.0], np.array([True, False])) == f"reference=True is invalid: {NOT_REAL}"
    assert _refused([1.0, "x"], [1.0, 2.0]).startswith("value='x' is invalid: must be a number")


def test_ragged_input_is_refused():
    rule = "must be a rectangular array of numbers"
    assert _refused([[1, 2], [3]], [1, 2, 3]) == f"value=[[1, 2], [3]] is invalid: {rule}"
    assert _refused([1, 2, 3], [[1], [2, 3]]) == f"reference=[[1], [2, 3]] is invalid: {rule}"
    assert _refused([[1, 2], [3, [4, 5]]], [1, 2, 3, 4]) == f"value=[[1, 2], [3, [4, 5]]] is invalid: {rule}"


def test_input_numpy_cannot_convert_is_refused():
    rule = "must be a number or a rectangular array of numbers"
    assert _refused(_Unconvertible(), 1.0) == f"value=_Unconvertible() is invalid: {rule}"
    assert _refused(1.0, _Unconvertible()) == f"reference=_Unconvertible() is invalid: {rule}"


def test_empty_input_is_refused():
    assert _refused([], [1.0]) == "value=[] is invalid: must not be empty"
    assert _refused([1.0], np.zeros((2, 0))) == "reference=[[], []] is invalid: must not be empty"


def test_a_different_number_of_entries_is_refused_naming_reference():
    msg = _refused([1.0, 2.0], [1.0])
    assert msg == "reference=[1.0] is invalid: must have as many entries as value (2), got 1"
    assert (
        _refused(1.0, [[1.0, 2.0]])
        == "reference=[[1.0, 2.0]] is invalid: must have as many entries as value (1), got 2"
    )


# ----------------------------------------------------------------------------- accepted input, exactly
def test_python_ints_are_taken_exactly():
    assert_close_mp(3, 3)
    assert_close_mp(10**30 + 1, "1000000000000000000000000000001", digits=35)
    with pytest.raises(TheoryAssertionError):
        assert_close_mp(10**30 + 1, 10**30, digits=35)


def test_an_int_beside_a_float_in_a_list_keeps_all_its_digits():
    # as a float64 array 2^62 + 1 would become 2^62: an error of 2e-19, far above 1e-25
    assert_close_mp([2**62 + 1, 0.5], ["4611686018427387905", "0.5"], digits=25)


def test_numpy_integers_are_taken_exactly():
    # np.int64 is not a Python int; mpmath takes it only through .item(), exactly
    assert_close_mp(np.array([2**62 + 1, 3]), ["4611686018427387905", "3"], digits=25)
    assert_close_mp(np.int64(2**62 + 1), "4611686018427387905", digits=25)


def test_an_mpmath_matrix_is_read_entry_by_entry():
    assert_close_mp(mpmath.matrix([[1, 2], [3, 4]]), [1.0, 2.0, 3.0, 4.0])
    msg = _message(TheoryAssertionError, lambda: assert_close_mp(mpmath.matrix([[1, 2], [3, 4]]), [1, 2, 3, 5]))
    assert msg.startswith("value[3] = 4.0 differs from reference = 5.0")


def test_every_entry_of_an_array_is_compared():
    for i in range(3):
        ref = [1.0, 2.0, 3.0]
        ref[i] = 1.5 * ref[i]
        msg = _message(TheoryAssertionError, lambda: assert_close_mp([1.0, 2.0, 3.0], ref))  # noqa: B023
        assert msg.startswith(f"value[{i}] = ")


# ----------------------------------------------------------------------------- the failure message
def test_failure_message_of_an_array_entry():
    msg = _message(TheoryAssertionError, lambda: assert_close_mp([1.0, 2.0], [1.0, "2.5"], digits=3))
    assert msg == "value[1] = 2.0 differs from reference = 2.5: |error| = 0.5, about 0.7 digits agree, 3 required"


def test_failure_message_of_a_scalar_has_no_index():
    msg = _message(TheoryAssertionError, lambda: assert_close_mp(1001, 1000, digits=6))
    # |error| = 1 exactly: the digits shared are still log10(1000 / 1) = 3
    assert msg == "value = 1001.0 differs from reference = 1000.0: |error| = 1.0, about 3.0 digits agree, 6 required"


def test_failure_message_shows_20_digits_of_each_value_and_3_of_the_error():
    v = "0.333333333333333333333333333333333"  # 33 digits
    ref = "0.3333333333333333333333"  # 22 digits: |error| = 3.33…e-23
    msg = _message(TheoryAssertionError, lambda: assert_close_mp(v, ref, digits=25))
    assert msg == (
        "value = 0.33333333333333333333 differs from reference = 0.33333333333333333333: "
        "|error| = 3.33e-23, about 22.0 digits agree, 25 required"
    )


def test_failure_message_against_a_zero_reference_shows_atol():
    msg = _message(TheoryAssertionError, lambda: assert_close_mp(0.5, 0, atol=0.25))
    assert msg == (
        "value = 0.5 differs from reference = 0.0: |error| = 0.5, about 0.0 digits agree, 12 required (atol 0.25)"
    )


def test_failure_message_of_a_two_entry_array_carries_the_index():
    msg = _message(TheoryAssertionError, lambda: assert_close_mp([1.0, 2.0], [3.0, 2.0]))
    assert msg == "value[0] = 1.0 differs from reference = 3.0: |error| = 2.0, about 0.2 digits agree, 12 required"


# ----------------------------------------------------------------------------- the trivial optimum's message
def _trivial_case():
    task = fc.Task.full(3, 2, 2)
    lam0 = fc.predict_type1(n_c=3, n_w=task.n_w, L=2, K=task.K, lam=0.01).lambda_trivial
    W, U = np.zeros((4, task.n_w)), np.zeros((task.K, 8))
    W[1, 1] = -(2.0**-20)
    return task, W, U, lam0


def test_trivial_optimum_accepts_a_largest_entry_equal_to_atol():
    task, W, U, lam0 = _trivial_case()
    assert_type1_optimal(task, W, U, 1.5 * lam0, atol=2.0**-20)


def test_trivial_optimum_message_shows_lam_and_lambda0_to_17_digits():
    task, W, U, lam0 = _trivial_case()
    assert lam0 < 0.3
    msg = _message(TheoryAssertionError, lambda: assert_type1_optimal(task, W, U, 0.3, atol=2.0**-21))
    # 0.3 to 17 significant digits, not repr's shortest form "0.3"
    assert msg == (
        f"lam = 0.29999999999999999 ≥ λ₀ = {lam0:.17g}: Theorem 1 predicts the trivial optimum (W, U) = (0, 0), "
        "but max|W| = 9.54e-07, max|U| = 0 > atol = 4.76837e-07"
    )


def test_trivial_optimum_message_shows_an_integral_lam_without_a_fraction():
    task, W, U, lam0 = _trivial_case()
    msg = _message(TheoryAssertionError, lambda: assert_type1_optimal(task, W, U, 1, atol=2.0**-21))
    assert msg.startswith(f"lam = 1 ≥ λ₀ = {lam0:.17g}: Theorem 1 predicts")


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.longdouble])
def test_numpy_floats_of_any_width_are_taken_exactly(dtype):
    x = dtype(1) / dtype(3)  # not a float64: its exact binary value differs from 1/3 and from float64(1/3)
    p, q = x.as_integer_ratio()
    with mpmath.workdps(60):
        exact = mpmath.mpf(p) / q
    assert_close_mp(x, exact, digits=40)
    assert_close_mp(np.array([x, x]), [exact, exact], digits=40)
    if dtype is not np.longdouble:  # where long double is float64 it equals 1/3 in float64 as well
        with pytest.raises(TheoryAssertionError):
            assert_close_mp(x, 1 / 3, digits=40)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.longdouble])
def test_non_finite_numpy_floats_of_any_width_are_refused(dtype):
    msg = _refused(dtype("inf"), 1.0)
    assert msg.startswith("value=") and msg.endswith(
        "inf') is invalid: must be finite" if dtype is np.longdouble else "=inf is invalid: must be finite"
    )
    assert _refused(1.0, np.array([1.0, "-inf"], dtype=dtype)).startswith("reference=")
