"""fctheory.optima.result: the balanced factors of the optimum X = ÛᵀW (Claim G) and the result object."""

import numpy as np
import pytest

from fctheory import Task
from fctheory.network import U_hat
from fctheory.optima import optimum
from fctheory.optima.result import balanced_factors


def test_balanced_factors_reproduce_x_with_equal_norms_the_nuclear_norm():
    """ÛᵀW = X and ‖W‖² = ‖Û‖² = ‖X‖_* (Claim G), of width rank X, for a random rank-3 matrix; a larger width pads
    with zero rows."""
    rng = np.random.default_rng(0)
    L = 2
    X = rng.standard_normal((6 * L, 3)) @ rng.standard_normal((3, 7))
    W, U, r = balanced_factors(X, L)
    s = np.linalg.svd(X, compute_uv=False)
    assert r == 3 and W.shape == (3, 7) and U.shape == (6, L * 3)
    np.testing.assert_allclose(U_hat(U, L=L).T @ W, X, atol=1e-13 * s[0])
    assert np.sum(W**2) == pytest.approx(s.sum(), rel=1e-13)
    assert np.sum(U_hat(U, L=L) ** 2) == pytest.approx(s.sum(), rel=1e-13)
    W5, U5, _ = balanced_factors(X, L, width=5)
    assert W5.shape == (5, 7) and not W5[3:].any() and np.array_equal(W5[:3], W)
    np.testing.assert_allclose(U_hat(U5, L=L).T @ W5, X, atol=1e-13 * s[0])


def test_balanced_factorisation_of_the_smallest_width():
    task, lam = Task.random(3, 2, 2, 5, seed=1), 0.02
    res = optimum(task, lam=lam)
    Uh = U_hat(res.U, L=task.L)
    s = np.linalg.svd(res.X, compute_uv=False)
    assert res.W.shape == (res.width, task.n_w) and res.width == int(np.sum(s > 1e-9 * s[0]))
    np.testing.assert_allclose(Uh.T @ res.W, res.X, atol=1e-13)
    assert np.sum(res.W**2) == pytest.approx(s.sum(), rel=1e-12)
    assert np.sum(Uh**2) == pytest.approx(s.sum(), rel=1e-12)
    wide = optimum(task, lam=lam, d=res.width + 3)  # zero rows: same risk
    assert wide.W.shape[0] == res.width + 3 and wide.R == pytest.approx(res.R, rel=1e-13)
