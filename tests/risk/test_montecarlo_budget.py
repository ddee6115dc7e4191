"""``monte_carlo_risk``'s cost estimate, refused over the budget with a message naming ``n_samples``.

Task full(3, 1, 2): K = 9 classes, L = 2, n_w = 3; n = 1000 samples per class. The estimates are
K·n·K = 81000 items, K·n·K·L·4e-9 = 6.48e-4 s and 8·(L·n_w·K·(3 with the gradient, else 1) + K·n) bytes:
73296 with the gradient, 72432 without. A budget 0.1% below an estimate refuses, 0.1% above accepts.
"""

import math

import numpy as np
import pytest

import fctheory as fc
from fctheory.risk.montecarlo import monte_carlo_risk

TASK = fc.Task.full(3, 1, 2)
_rng = np.random.default_rng(0)
W, U = _rng.standard_normal((4, TASK.n_w)), _rng.standard_normal((TASK.K, 8))


def _message(field, limit, grad):
    with fc.budget(**{field: limit}), pytest.raises(fc.FCTheoryError) as info:
        monte_carlo_risk(TASK, W, U, n_samples=1000, seed=0, grad=grad)
    return str(info.value)


@pytest.mark.parametrize(
    ("field", "estimate", "shown", "unit", "grad"),
    [
        ("max_items", 81000, "8.1e+04", "items", True),
        ("max_seconds", 6.48e-4, "0.000648", "s", True),
        ("max_bytes", 73296, "7.33e+04", "bytes", True),
        ("max_bytes", 72432, "7.24e+04", "bytes", False),
    ],
)
def test_estimate_over_the_budget_is_refused_naming_n_samples(field, estimate, shown, unit, grad):
    limit = estimate * 0.999
    assert _message(field, limit, grad) == (
        f"n_samples=1000 is invalid: the Monte-Carlo estimate needs about {shown} {unit}, over the budget "
        f"{field}={limit:.3g} (raise it with fctheory.set_budget({field}=...) or FCTHEORY_{field.upper()})"
    )
    with fc.budget(**{field: estimate * 1.001}):
        monte_carlo_risk(TASK, W, U, n_samples=1000, seed=0, grad=grad)


def test_grad_norm_is_the_root_of_the_squared_norm_below_one():
    r = monte_carlo_risk(TASK, W * 1e-3, U * 1e-3, n_samples=4, seed=0)
    assert 0 < r.grad_norm_sq < 1e-2
    assert r.grad_norm == math.sqrt(r.grad_norm_sq)
