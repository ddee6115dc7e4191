"""``monte_carlo_risk`` samples its classes in blocks of about 4096 sentences: with many samples per class
the classes span several blocks, and every class must still be counted once.

With one word per concept (s_c = 1) each class has a single sentence, so the estimate has no sampling
error: the gradient must equal the exact enumeration (``fc.true_risk_grad``) to 1e-12 whatever the blocks.
"""

import numpy as np
import pytest

import fctheory as fc
from fctheory.risk.montecarlo import monte_carlo_risk


@pytest.mark.parametrize("n_samples", [1000, 4096])  # K = 9 classes: blocks of 4 classes, of 1 class
def test_classes_in_several_blocks_are_each_counted_once(n_samples):
    task = fc.Task.full(3, 1, 2)
    rng = np.random.default_rng(0)
    W, U = rng.standard_normal((4, task.n_w)), rng.standard_normal((task.K, 8))
    r = monte_carlo_risk(task, W, U, n_samples=n_samples, seed=1)
    R0, gW, gU = fc.true_risk_grad(task, W, U, 0.0)
    assert r.R == pytest.approx(float(R0), rel=1e-12)
    np.testing.assert_allclose(r.grad_W, gW, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(r.grad_U, gU, rtol=1e-12, atol=1e-14)
