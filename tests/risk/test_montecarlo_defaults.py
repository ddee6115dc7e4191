"""``monte_carlo_risk``'s documented defaults: 1000 samples per class, a 95% interval, the gradient, no
weight decay, no LayerNorm, a fresh seed."""

import numpy as np
import pytest

import fctheory as fc
from fctheory.risk.montecarlo import monte_carlo_risk


def test_defaults():
    task = fc.Task.full(3, 1, 2)
    rng = np.random.default_rng(0)
    W, U = rng.standard_normal((4, task.n_w)), rng.standard_normal((task.K, 8))
    r = monte_carlo_risk(task, W, U)
    assert (r.n_samples, r.confidence, r.penalty, r.seed) == (1000, 0.95, 0.0, None)
    assert r.grad_W is not None and r.grad_U is not None
    # one sentence per class: the estimate is exact, and without LayerNorm it is the risk of W itself
    assert r.R == pytest.approx(float(fc.true_risk_grad(task, W, U, 0.0)[0]), rel=1e-12)
