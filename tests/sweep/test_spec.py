"""fctheory.sweep.spec: spec errors name the key, point ids, random designs."""

import pytest

import fctheory as fc
from fctheory.sweep import load_spec
from fctheory.sweep.spec import point_id


@pytest.mark.parametrize(
    "bad, key",
    [
        ({"target": "tau", "bogus": 1}, "bogus="),
        ({"target": "no_such_function"}, "target="),
        ({"target": "tau", "grid": {"lam": 0.1}}, "grid.lam="),
        ({"target": "tau", "grid": {"lam": [-1.0]}, "fixed": {"n_c": 3, "n_w": 6, "L": 2, "K": 4}}, "grid.lam="),
        ({"target": "tau", "fixed": {"colour": 1}}, "fixed.colour="),
        ({"target": "tau", "random": {"n": 3, "lam": {"log_uniform": [0, 1]}}}, "random.lam.log_uniform="),
        ({"target": "tau", "seeds": -2}, "seeds="),
        ({"target": "tau", "executor": "mpi"}, "executor="),
    ],
)
def test_spec_errors_name_the_key(bad, key):
    with pytest.raises(fc.FCTheoryError, match=key):
        load_spec(bad)


def test_point_id_depends_on_parameters_not_their_order():
    assert point_id("tau", {"a": 1, "b": 2.5}) == point_id("tau", {"b": 2.5, "a": 1})
    assert point_id("tau", {"a": 1, "b": 2.5}) != point_id("tau", {"a": 1, "b": 2.50001})
    assert point_id("tau", {"a": 1}) != point_id("tau_star", {"a": 1})


def test_random_design_is_reproducible_and_within_bounds():
    spec = {
        "target": "tau",
        "fixed": {"n_c": 3, "s_c": 5, "L": 3, "K": 9},
        "random": {"n": 5, "seed": 3, "lam": {"log_uniform": [1e-4, 1e-1]}},
    }
    a, b = load_spec(spec).points(), load_spec(spec).points()
    assert a == b and len(a) == 5
    assert all(1e-4 <= p["lam"] <= 1e-1 for p in a)
