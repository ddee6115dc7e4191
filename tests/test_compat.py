"""The 0.x call forms of ``@public`` (``fctheory._compat.LegacyCalls``): renamed keywords and legacy positions."""

import inspect
import warnings

import numpy as np
import pytest

from fctheory import FCTheoryError, Task
from fctheory._compat import LegacyCalls
from fctheory._validate import Int, public


@public(a=Int(), b=Int(), c=Int(), renamed={"old_b": "b"}, legacy_positional=("b", "c"))
def _f(a, *, b=0, c=0):
    return (a, b, c)


def _legacy(renamed=None, legacy_positional=()):
    def g(a, *, b=0, c=0):
        return (a, b, c)

    return LegacyCalls(g, inspect.signature(g), renamed, legacy_positional)


def test_renamed_keyword_maps_to_new_name_with_deprecation_warning():
    with pytest.warns(DeprecationWarning, match=r"'old_b' is deprecated, use 'b'"):
        assert _f(1, old_b=7) == (1, 7, 0)


def test_new_keyword_alone_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _f(1, b=7, c=3) == (1, 7, 3)


def test_both_old_and_new_names_are_refused():
    with pytest.raises(FCTheoryError, match=r"got both 'old_b' \(deprecated\) and 'b'"):
        _f(1, old_b=7, b=8)


def test_legacy_positional_arguments_map_in_declared_order():
    with pytest.warns(DeprecationWarning, match=r"pass b, c by keyword"):
        assert _f(1, 5, 6) == (1, 5, 6)


def test_legacy_positional_partial_maps_only_the_first_names():
    with pytest.warns(DeprecationWarning, match=r"pass b by keyword"):
        assert _f(1, 5) == (1, 5, 0)


def test_too_many_positional_arguments_are_refused_with_counts():
    with pytest.raises(FCTheoryError, match=r"takes at most 3 positional arguments, got 4"):
        _f(1, 2, 3, 4)


def test_positional_and_keyword_for_the_same_parameter_is_refused():
    with pytest.warns(DeprecationWarning), pytest.raises(FCTheoryError, match=r"multiple values for argument 'b'"):
        _f(1, 5, b=6)


def test_deprecation_warning_is_attributed_to_the_caller():
    # the stacklevel must skip LegacyCalls.adapt and the @public wrapper: the warning points at this file
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        _f(1, old_b=2)  # line of the call below is what the warning must name
        line = inspect.currentframe().f_lineno - 1
        _f(1, 2)
        line2 = inspect.currentframe().f_lineno - 1
    assert [(w.category, w.filename, w.lineno) for w in rec] == [
        (DeprecationWarning, __file__, line),
        (DeprecationWarning, __file__, line2),
    ]


def test_library_renamed_argument_gives_the_same_result():
    # Task.sample: rng -> seed (0.x), and seed by position
    task = Task.full(2, 3, 2)
    X, y = task.sample(4, seed=11)
    with pytest.warns(DeprecationWarning, match="'rng' is deprecated"):
        X1, y1 = task.sample(4, rng=11)
    with pytest.warns(DeprecationWarning, match="pass seed by keyword"):
        X2, y2 = task.sample(4, 11)
    np.testing.assert_array_equal(X1, X)
    np.testing.assert_array_equal(X2, X)
    np.testing.assert_array_equal(y1, y)
    np.testing.assert_array_equal(y2, y)


def test_adapt_leaves_a_modern_call_untouched():
    legacy = _legacy({"old_b": "b"}, ("b",))
    kwargs = {"b": 2}
    args, out = legacy.adapt((1,), kwargs)
    assert args == (1,) and out == {"b": 2}


def test_adapt_rewrites_kwargs_in_place():
    legacy = _legacy({"old_b": "b"})
    kwargs = {"old_b": 2}
    with pytest.warns(DeprecationWarning):
        legacy.adapt((1,), kwargs)
    assert kwargs == {"b": 2}


def test_positional_count_ignores_keyword_only_parameters():
    assert _legacy().n_pos == 1


def test_renamed_target_must_be_a_parameter():
    with pytest.raises(TypeError, match=r"renamed target 'nope' is not a parameter"):
        _legacy({"old": "nope"})


def test_without_legacy_positional_extra_positions_are_not_rewritten():
    legacy = _legacy({"old_b": "b"})
    args, kwargs = legacy.adapt((1, 2), {})
    assert args == (1, 2) and kwargs == {}
