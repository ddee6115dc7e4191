"""minimize_true_risk lands on the theorems' predictions.

Risk to 1e-9 (absolute), norms to 1e-6, ‖∇R‖ ≤ 1e-10, and balancedness WWᵀ = ÛÛᵀ at the
critical points it finds (from (161)–(164): ∇_W R·Wᵀ = ∇_Û R·Ûᵀ + λ(WWᵀ − ÛÛᵀ)).
"""

import numpy as np
import pytest

import fctheory as fc
from fctheory import FCTheoryError, Task
from fctheory.network import U_hat, phi
from fctheory.risk import minimize_true_risk


def _balanced(W, U, L, tol):
    Uh = U_hat(U, L=L)
    A, B = W @ W.T, Uh @ Uh.T
    assert np.abs(A - B).max() <= tol * np.abs(A).max()


@pytest.mark.parametrize("seed", [0, 1])
def test_theorem_1_exact_minimizer_is_type1(seed):
    task = Task.full(3, 2, 2)
    lam, d = 0.01, 7
    W, U, res = minimize_true_risk(task, d=d, lam=lam, seed=seed)
    assert res.success and res.grad_norm <= 1e-10
    p = fc.predict_type1(n_c=3, n_w=task.n_w, L=2, K=task.K, lam=lam)
    assert res.R == pytest.approx(p.risk, abs=1e-9)
    np.testing.assert_allclose(np.linalg.norm(W, axis=0), p.c, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(U.reshape(task.K * 2, d), axis=1), p.c_prime, atol=1e-6)
    _balanced(W, U, 2, 1e-7)


def test_theorem_2_exact_minimizer_is_type3_for_zipf():
    task = Task.full(3, 3, 2, mu="zipf")
    lam, d = 0.02, 10
    W, U, res = minimize_true_risk(task, d=d, lam=lam, seed=1)
    assert res.success
    p = fc.predict_type3(mu=task.mu, n_c=3, L=2, lam=lam)
    assert res.R == pytest.approx(p.risk, abs=1e-9)
    np.testing.assert_allclose(np.linalg.norm(W, axis=0), np.tile(p.r, 3), atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(U.reshape(task.K * 2, d), axis=1), p.c, atol=1e-6)
    _balanced(W, U, 2, 1e-7)


def test_theorem_3_exact_minimizer_of_R_star_is_type2():
    task = Task.full(3, 3, 2, mu="zipf")
    lam, d = 0.01, 4
    W, U, res = minimize_true_risk(task, d=d, lam=lam, layernorm=True, seed=2)
    assert res.success
    p = fc.predict_type2(n_c=3, L=2, K=task.K, d=d, lam=lam, n_w=task.n_w)
    assert res.R == pytest.approx(p.risk, abs=1e-9)
    np.testing.assert_allclose(np.linalg.norm(U.reshape(task.K * 2, d), axis=1), p.c, atol=1e-6)
    V = phi(W)
    G = V.T @ V / d  # cosines of φ(w): 1 within a concept, −1/(n_c−1) across (type II)
    same = task.word_concept[:, None] == task.word_concept[None, :]
    np.testing.assert_allclose(G[same], 1.0, atol=1e-6)
    np.testing.assert_allclose(G[~same], -0.5, atol=1e-6)


def test_critical_points_are_balanced_for_partial_latent_sets():
    task = Task.random(3, 2, 3, 7, mu=[0.6, 0.4], seed=4)
    W, U, res = minimize_true_risk(task, d=4, lam=0.05, seed=0)
    assert res.success
    _balanced(W, U, 3, 1e-7)


def test_minimizer_validates_input():
    with pytest.raises(FCTheoryError, match="lam"):
        minimize_true_risk(Task.full(2, 2, 2), d=3, lam=0.0)
    with pytest.raises(FCTheoryError, match="W0"):
        minimize_true_risk(Task.full(2, 2, 2), d=3, lam=0.1, W0=np.zeros((2, 2)))
