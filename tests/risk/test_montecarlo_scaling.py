"""``monte_carlo_risk``'s squared gradient norm when one term of the gradient dwarfs the others.

‖∇R̂₀ + p‖² is summed after dividing every term by the norm of all of them (half-sample gradients and the
penalty gradient p = (λ_W W, λ_U U)), so the squares cannot overflow. Weights of size 1e-100 give
gradients of R₀ near 1e-101 while λ = 1e250 makes the penalty gradient about 1e150: ‖∇R‖² ≈ 1e300 is a
float64, but a penalty term divided by anything but a norm that includes it would be about 1e251 and its
square would overflow. With one word per concept the estimate has no sampling error, so the oracle is the
exact enumeration (``fc.true_risk_grad``).
"""

import numpy as np
import pytest

import fctheory as fc
from fctheory.risk.montecarlo import monte_carlo_risk


@pytest.mark.parametrize(("lam_W", "lam_U"), [(1e250, 0.0), (0.0, 1e250)])
def test_a_dominant_penalty_gradient_gives_the_exact_squared_norm(lam_W, lam_U):
    task = fc.Task.full(3, 1, 2)
    rng = np.random.default_rng(0)
    W = rng.standard_normal((4, task.n_w)) * 1e-100
    U = rng.standard_normal((task.K, 8)) * 1e-100
    r = monte_carlo_risk(task, W, U, lam_W=lam_W, lam_U=lam_U, n_samples=4, seed=1)
    _, gW, gU = fc.true_risk_grad(task, W, U, 0.0)
    assert max(np.abs(gW).max(), np.abs(gU).max()) < 1e-99  # the scale of the test: R₀'s gradient is tiny
    want = float(np.sum((gW + lam_W * W) ** 2) + np.sum((gU + lam_U * U) ** 2))
    assert 1e299 < want < 1e303
    assert r.grad_norm_sq == pytest.approx(want, rel=1e-13)
    assert r.grad_norm == pytest.approx(want**0.5, rel=1e-13)


@pytest.mark.parametrize(
    ("lam_W", "lam_U", "named"),
    [
        (1e160, 0.0, "lam_W=1e+160"),
        (0.0, 1e160, "lam_U=1e+160"),
        (1e160, 1e160, "lam_W=1e+160"),
        (1e159, 1e160, "lam_U=1e+160"),
    ],
)
def test_an_overflowing_squared_gradient_norm_names_the_larger_weight_decay(lam_W, lam_U, named):
    # weights of size 1: a penalty gradient near 1e160 has a squared norm beyond float64 (ties name lam_W)
    task = fc.Task.full(3, 1, 2)
    rng = np.random.default_rng(0)
    W, U = rng.standard_normal((4, task.n_w)), rng.standard_normal((task.K, 8))
    with pytest.raises(fc.FCTheoryError) as info:
        monte_carlo_risk(task, W, U, lam_W=lam_W, lam_U=lam_U, n_samples=4, seed=1)
    assert str(info.value) == f"{named} is invalid: the squared gradient norm overflows float64"
