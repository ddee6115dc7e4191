"""fctheory._validate: the boundary checks every public function uses: integers, word frequencies, latent-set
sizes, broadcasting, and the @public decorator's declared kinds (each refusal names the parameter)."""

import inspect
from fractions import Fraction

import numpy as np
import pytest

import fctheory as fc
from fctheory._validate import (
    Int,
    Real,
    _Binder,
    broadcast_shape,
    check_int,
    check_latent_size,
    check_mu,
    public,
)


def test_check_int_accepts_integral_values_exactly():
    assert check_int("n", 10**30) == 10**30 and check_int("n", 4.0) == 4 and check_int("n", np.int8(3)) == 3


@pytest.mark.parametrize("bad", [True, 2.5, float("nan"), "3", None])
def test_check_int_refuses_non_integers_naming_the_parameter(bad):
    with pytest.raises(fc.FCTheoryError, match=r"^n="):
        check_int("n", bad)


def test_check_int_bounds_are_inclusive():
    assert check_int("n", 2, min=2, max=2) == 2
    with pytest.raises(fc.FCTheoryError, match="must be >= 3"):
        check_int("n", 2, min=3)


def test_zipf_frequencies_are_the_normalised_harmonic_weights():
    mu = check_mu("zipf", 4)
    ref = [Fraction(1, b) / sum(Fraction(1, j) for j in range(1, 5)) for b in range(1, 5)]
    np.testing.assert_allclose(mu, [float(r) for r in ref], rtol=1e-15)
    np.testing.assert_array_equal(check_mu("uniform", 3), np.full(3, 1 / 3))


@pytest.mark.parametrize("bad", [[0.5, 0.6], [1.2, -0.2], [0.5, np.nan]])
def test_frequencies_that_are_not_a_distribution_are_refused(bad):
    with pytest.raises(fc.FCTheoryError, match="mu="):
        check_mu(np.array(bad))


def test_latent_size_is_checked_without_forming_n_c_power_L():
    check_latent_size(np.array([10]), np.array([400]), np.array([10**18]))  # 10^400 overflows a float
    with pytest.raises(fc.FCTheoryError, match="K="):
        check_latent_size(np.array([3]), np.array([2]), np.array([10]))


def test_broadcast_shape_names_the_arrays_that_do_not_broadcast():
    assert broadcast_shape(a=np.zeros(3), b=np.zeros((2, 1))) == (2, 3)
    with pytest.raises(fc.FCTheoryError, match="a.*b|b.*a"):
        broadcast_shape(a=np.zeros(3), b=np.zeros(4))


def test_public_applies_the_declared_kinds_in_order():
    @public(n=Int(min=1), x=Real(lo=0, lo_open=True))
    def f(*, n, x):
        return n, x

    assert f(n=3.0, x=0.5) == (3, 0.5) and isinstance(f(n=3.0, x=0.5)[0], int)
    with pytest.raises(fc.FCTheoryError, match=r"^n=0"):
        f(n=0, x=1.0)
    with pytest.raises(fc.FCTheoryError, match=r"^x=0"):
        f(n=1, x=0.0)


def _recording():
    """A @public function whose body returns what it received, and its undecorated twin as the oracle."""

    def body(a, b=2, *, c, d=4):
        return a, b, c, d

    return public(a=Int(), b=Int(), c=Int(), d=Int())(body), body


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((1,), {"c": 3}), ((1, 5), {"c": 3, "d": 7}), ((), {"a": 1, "c": 3}), ((), {"d": 7, "c": 3, "b": 5, "a": 1})],
)
def test_public_passes_every_valid_call_form_to_the_body_as_python_binds_it(args, kwargs):
    wrapped, body = _recording()
    assert wrapped(*args, **kwargs) == body(*args, **kwargs)


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((1,), {}), ((1, 2, 3), {"c": 3}), ((1,), {"a": 1, "c": 3}), ((1,), {"c": 3, "e": 0})],
)
def test_public_refuses_every_invalid_call_form_naming_the_function(args, kwargs):
    wrapped, body = _recording()
    with pytest.raises(TypeError):  # the oracle: Python refuses the call
        body(*args, **kwargs)
    with pytest.raises(fc.FCTheoryError, match=r"body\(\)"):
        wrapped(*args, **kwargs)


def _recording_var_keyword():
    """As :func:`_recording`, with a ``**extra`` (whose keywords pass unchecked)."""

    def body(a, b=2, *, c, **extra):
        return a, b, c, extra

    return public(a=Int(), b=Int(), c=Int())(body), body


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((1,), {"c": 3}),
        ((1,), {"c": 3, "loss": 0.5}),
        ((), {"z": 0, "a": 1, "c": 3, "y": "s"}),
        ((1, 5), {"c": 3, "d": 7}),
    ],
)
def test_public_with_var_keyword_passes_every_valid_call_form_as_python_binds_it(args, kwargs):
    wrapped, body = _recording_var_keyword()
    assert wrapped(*args, **kwargs) == body(*args, **kwargs)


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((1,), {}), ((1, 2, 3), {"c": 3}), ((1,), {"a": 1, "c": 3}), ((1, 2), {"b": 2, "c": 3})],
)
def test_public_with_var_keyword_refuses_every_invalid_call_form_naming_the_function(args, kwargs):
    wrapped, body = _recording_var_keyword()
    with pytest.raises(TypeError):
        body(*args, **kwargs)
    with pytest.raises(fc.FCTheoryError, match=r"body\(\)"):
        wrapped(*args, **kwargs)


def _bound_by_inspect(fn, args, kwargs):
    """The oracle of _Binder.bind: inspect's binding, the ``**`` dict's entries flattened after the others."""
    sig = inspect.signature(fn)
    arguments = dict(sig.bind(*args, **kwargs).arguments)
    var = [p.name for p in sig.parameters.values() if p.kind is p.VAR_KEYWORD]
    extra = arguments.pop(var[0], {}) if var else {}
    return tuple(list(sig.parameters)[: len(args)]), list({**arguments, **extra}.items())


@pytest.mark.parametrize("var_keyword", [False, True])
@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((1,), {"c": 3}),
        ((1, 5), {"c": 3}),
        ((), {"a": 1, "c": 3}),
        ((), {"c": 3, "b": 5, "a": 1}),
        ((1,), {"c": 3, "z": 0}),
    ],
)
def test_binder_binds_the_usual_call_forms_as_inspect_does(var_keyword, args, kwargs):
    """The fast path (no inspect) takes every usual call form and binds it as ``sig.bind`` would."""
    body = _recording_var_keyword()[1] if var_keyword else _recording()[1]
    if "z" in kwargs and not var_keyword:
        kwargs = {k: v for k, v in kwargs.items() if k != "z"}
    got = _Binder(inspect.signature(body)).bind(args, kwargs)
    assert got is not None
    assert (got[0], list(got[1].items())) == _bound_by_inspect(body, args, kwargs)


@pytest.mark.parametrize("var_keyword", [False, True])
@pytest.mark.parametrize(("args", "kwargs"), [((1,), {}), ((1, 2, 3), {"c": 3}), ((1,), {"a": 1, "c": 3})])
def test_binder_leaves_every_wrong_call_to_inspect(var_keyword, args, kwargs):
    body = _recording_var_keyword()[1] if var_keyword else _recording()[1]
    assert _Binder(inspect.signature(body)).bind(args, kwargs) is None


def test_binder_leaves_positional_only_and_var_positional_signatures_to_inspect():
    def f(a, /, b):
        return a, b

    def g(a, *rest):
        return a, rest

    assert _Binder(inspect.signature(f)).bind((1, 2), {}) is None
    assert _Binder(inspect.signature(g)).bind((1,), {}) is None


def test_public_with_var_keyword_checks_the_declared_keywords():
    wrapped, _ = _recording_var_keyword()
    with pytest.raises(fc.FCTheoryError, match=r"^c="):
        wrapped(1, c=1.5, extra=1)


def test_public_checks_keyword_arguments_in_parameter_order_whatever_their_order_in_the_call():
    wrapped, _ = _recording()
    with pytest.raises(fc.FCTheoryError, match=r"^a="):
        wrapped(c=0.5, a=0.5)
