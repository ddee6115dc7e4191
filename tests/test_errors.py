"""Every invalid input raises FCTheoryError (a ValueError) naming the parameter — never another
exception, never a NaN."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

import fctheory as fc

Z3 = fc.Task.full(3, 2, 2)

BAD_CALLS = [
    # (callable, kwargs, parameter name expected in the message)
    (fc.tau, dict(n_c=1, n_w=6, L=2, K=9, lam=0.01), "n_c"),
    (fc.tau, dict(n_c=3, n_w=7, L=2, K=9, lam=0.01), "n_w"),
    (fc.tau, dict(n_c=3, n_w=6, L=2, K=10, lam=0.01), "K"),
    (fc.tau, dict(n_c=3, n_w=6, L=0, K=1, lam=0.01), "L"),
    (fc.tau, dict(n_c=3, n_w=6, L=2, K=9, lam=0.0), "lam"),
    (fc.tau, dict(n_c=3, n_w=6, L=2, K=9, lam=-1.0), "lam"),
    (fc.tau, dict(n_c=3, n_w=6, L=2, K=9, lam=float("nan")), "lam"),
    (fc.tau, dict(n_c=3, n_w=6, L=2, K=9, lam=float("inf")), "lam"),
    (fc.tau, dict(n_c=3.5, n_w=6, L=2, K=9, lam=0.1), "n_c"),
    (fc.tau, dict(n_c="3", n_w=6, L=2, K=9, lam=0.1), "n_c"),
    (fc.tau, dict(n_c=3, n_w=6, L=2, K=9, lam=0.1, precision="double"), "precision"),
    (fc.tau, dict(n_c=3, n_w=6, L=2, K=0, lam=0.1), "K"),
    (fc.tau, dict(n_c=3, n_w=6, L=2, K=[1, 2], lam=[0.1, 0.2, 0.3]), "shape"),
    (fc.tau_star, dict(n_c=3, L=2, K=9, d=0, lam=0.1), "d"),
    (fc.tau_star, dict(n_c=3, L=2, K=9.5, d=3, lam=0.1), "K"),
    (fc.tau_star, dict(n_c=3, L=2, K=9, d=3, lam=0.1, backend="cuda"), "backend"),
    (fc.H, dict(t=-1.0, n_c=3, n_w=6, L=2, K=9, lam=0.1), "t"),
    (fc.solve_type3, dict(mu=[0.5, 0.6], n_c=3, L=2, lam=0.01), "mu"),
    (fc.solve_type3, dict(mu=[1.2, -0.2], n_c=3, L=2, lam=0.01), "mu"),
    (fc.solve_type3, dict(mu=[0.5, 0.5], n_c=3, L=2, lam=10.0), "lam"),
    (fc.lambda_max_type3, dict(mu="zipf", n_c=3, L=2), "mu"),
    (fc.equiangular_frame, dict(n_c=4, d=2), "d"),
    (fc.equiangular_frame, dict(n_c=1, d=2), "n_c"),
    (fc.Task, dict(n_c=3, s_c=2, L=2, Z=[[0, 0], [0, 0]]), "Z"),
    (fc.Task, dict(n_c=3, s_c=2, L=2, Z=[[0, 3]]), "Z"),
    (fc.Task, dict(n_c=3, s_c=2, L=2, Z=[[0, 1, 2]]), "Z"),
    (fc.Task, dict(n_c=3, s_c=2, L=2, Z=[[0, 1]], mu=[0.9, 0.2]), "mu"),
    (fc.Task, dict(n_c=3, s_c=2, L=2, Z=[[0, 1]], mu="pareto"), "mu"),
    (fc.Task.random, dict(n_c=2, s_c=2, L=2, K=5), "K"),
    (fc.type1_configuration, dict(task=Z3, d=1, lam=0.1), "d"),
    (fc.type1_configuration, dict(task=Z3, d=3), "c"),
    (fc.type1_configuration, dict(task=Z3, d=3, c=1.0, frame=np.eye(3)), "frame"),
    (fc.type2_configuration, dict(task=Z3, d=2, lam=0.1), "d"),
    (fc.type3_configuration, dict(task=fc.Task.random(3, 2, 2, 4, seed=0), d=3, lam=0.01), "task"),
    (fc.predict_type2, dict(n_c=3, L=2, K=9, d=3, lam=0.1, n_w=7), "n_w"),
    (fc.predict, dict(task="not a task", lam=0.1), "task"),
    (fc.predict, dict(task=Z3, lam=0.1, network="h*"), "d"),
]


@pytest.mark.parametrize(
    "fn,kwargs,name", BAD_CALLS, ids=[f"{f.__name__}-{n}-{i}" for i, (f, _, n) in enumerate(BAD_CALLS)]
)
def test_invalid_input_raises_project_error_naming_the_parameter(fn, kwargs, name):
    with pytest.raises(fc.FCTheoryError) as info:
        fn(**kwargs)
    assert isinstance(info.value, ValueError)
    assert name in str(info.value)


def test_project_error_is_a_value_error():
    assert issubclass(fc.FCTheoryError, ValueError)


@given(
    st.one_of(st.integers(-5, 120), st.floats(allow_nan=True, allow_infinity=True)),
    st.one_of(st.integers(-5, 6000), st.floats(allow_nan=True, allow_infinity=True)),
    st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-3, 3)),
    st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-3, 3)),
)
def test_tau_either_raises_project_error_or_returns_finite(n_c, L, K, lam):
    try:
        n_w = n_c * 3 if isinstance(n_c, int) else 6
        out = fc.tau(n_c=n_c, n_w=n_w, L=L, K=K, lam=lam)
    except fc.FCTheoryError:
        return
    assert np.isfinite(out) and out >= 0


@given(
    st.one_of(st.integers(-5, 120), st.floats(allow_nan=True, allow_infinity=True)),
    st.one_of(st.integers(-5, 6000), st.floats(allow_nan=True)),
    st.floats(allow_nan=True, allow_infinity=True),
    st.one_of(st.integers(-3, 10**7), st.floats(allow_nan=True)),
    st.floats(allow_nan=True, allow_infinity=True),
)
def test_tau_star_either_raises_project_error_or_returns_finite(n_c, L, K, d, lam):
    try:
        out = fc.tau_star(n_c=n_c, L=L, K=K, d=d, lam=lam)
    except fc.FCTheoryError:
        return
    assert np.isfinite(out) and out > 0


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=5), st.floats(allow_nan=True))
def test_solve_type3_either_raises_project_error_or_returns_finite(mu, lam):
    try:
        sol = fc.solve_type3(mu=mu, n_c=3, L=2, lam=lam)
    except fc.FCTheoryError:
        return
    assert np.isfinite(sol.c) and np.all(np.isfinite(sol.r))
