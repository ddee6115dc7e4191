"""fctheory.risk.enumeration: the engine's enumeration planned once, as the certified optima call it."""

import numpy as np
import pytest

from fctheory import Task
from fctheory.network import U_hat
from fctheory.risk import evaluate_risk
from fctheory.risk.enumeration import SCORE_MAX, check_budget, enumerate_risk, estimate, evaluate, resolve_budget


def test_enumerate_risk_is_evaluate_risk_at_the_lifted_point():
    """R₀ and ∂R₀/∂(scores) from enumerate_risk at scores G3 = ÛᵀW equal evaluate_risk's R₀ and, through the chain
    rule ∂R/∂W = Û·∂R₀/∂X, its gradient in W (the engine's public face, independent of the planning shortcut)."""
    task, lam = Task.random(3, 2, 3, 5, seed=0, mu=np.array([0.6, 0.4])), 0.01
    rng = np.random.default_rng(1)
    d = 3
    W, U = rng.standard_normal((d, task.n_w)), rng.standard_normal((task.K, task.L * d))
    Uh = U_hat(U, L=task.L)
    X = Uh.T @ W
    sec, byt = resolve_budget(None, None)
    est = estimate(task, task.n_w, True, "numpy", byt, 1)
    check_budget(est, sec, byt, task)
    R0, gG3, _ = enumerate_risk(np, True, task, X.reshape(task.K, task.L, task.n_w), True, est, False, 1)
    ref = evaluate_risk(task, W, U, lam, grad=True)
    assert R0 == pytest.approx(ref.R0, rel=1e-13)
    G = gG3.reshape(X.shape) / task.K  # ∇f(X): the engine's ∂R₀/∂G3 is K·∇f
    np.testing.assert_allclose(Uh @ G + lam * W, ref.grad_W, rtol=1e-11, atol=1e-14)
    assert evaluate(task, W, U, lam, False, progress=False).R == pytest.approx(ref.R, rel=1e-14)
    assert 1e250 < SCORE_MAX <= 1e308
