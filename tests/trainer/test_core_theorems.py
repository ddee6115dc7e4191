"""Trained to convergence on the exact risk, the trainer lands on the configurations of Theorems 1–3.

Full tiny tasks (K = n_c^L): the training set is the whole support of D, each sentence repeated
Π_ℓ 4μ_{β_ℓ} times, so full-batch SGD is gradient descent on the exact regularised true risk
(5)/(10). A few thousand steps reach the collapse configuration predicted by the analytic core:
type I (Thm 1: ‖w‖ = √(τ/n_w), ‖u‖ = √(τ/KL)), type III (Thm 2: ‖w_(α,β)‖ = r_β, ‖u‖ = c), type II
(Thm 3: ‖φ(w)‖ = √d, ‖u‖ = τ*/√(KL)). Tolerance 1e-9 relative (observed ~1e-14).
"""

import itertools

import numpy as np

from fctheory import Task
from fctheory.trainer._engines import ENGINES
from fctheory.trainer.core import TrainConfig, TrainData, init_weights


def _support(task):
    X, y = [], []
    for k in range(task.K):
        for betas in itertools.product(range(task.s_c), repeat=task.L):
            reps = int(round(np.prod([4 * task.mu[b] for b in betas])))
            X += [task.Z[k] * task.s_c + np.array(betas)] * reps
            y += [k] * reps
    return np.array(X, dtype=np.int64), np.array(y, dtype=np.int64)


def _gradient_descent(task, d, steps, *, lr, lam_W, lam_U, layernorm=False, backend="numba"):
    X, y = _support(task)
    cfg = TrainConfig(
        n_spl=1,
        d=d,
        lr=lr,
        batch=len(X),
        lam_W=lam_W,
        lam_U=lam_U,
        layernorm=layernorm,
        eps=0.0,
        dtype="float64",
        backend=backend,
    )
    E0, U0 = init_weights(task, d=d, seed=0, init_scale=0.3)
    eng = ENGINES[backend](E0, U0, TrainData(X, y, X[:0], y[:0]), cfg)
    perm = np.arange(len(X))
    for _ in range(steps):
        eng.epoch(perm)
    E, U = eng.weights()
    return E, U.reshape(-1, d)


def test_gradient_descent_reaches_type1_theorem1():
    from fctheory import tau

    task = Task.full(3, 2, 2, mu=np.array([0.5, 0.5]))
    lam = 0.01
    E, Uh = _gradient_descent(task, 4, 4000, lr=0.5, lam_W=lam, lam_U=lam)
    t = float(tau(n_c=3, n_w=task.n_w, L=2, K=task.K, lam=lam))
    np.testing.assert_allclose(np.linalg.norm(E, axis=1), np.sqrt(t / task.n_w), rtol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(Uh, axis=1), np.sqrt(t / (task.K * task.L)), rtol=1e-9)


def test_gradient_descent_reaches_type3_theorem2():
    from fctheory import solve_type3

    task = Task.full(3, 2, 2, mu=np.array([0.75, 0.25]))
    lam = 0.01
    sol = solve_type3(mu=task.mu, n_c=3, L=2, lam=lam)
    E, Uh = _gradient_descent(task, 4, 4000, lr=0.5, lam_W=lam, lam_U=lam)
    np.testing.assert_allclose(np.linalg.norm(E, axis=1).reshape(3, 2), np.tile(sol.r, (3, 1)), rtol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(Uh, axis=1), sol.c, rtol=1e-9)


def test_gradient_descent_reaches_type2_theorem3():
    from fctheory import tau_star
    from fctheory.network import phi

    task = Task.full(3, 2, 2, mu=np.array([0.75, 0.25]))
    lam, d = 0.01, 4
    E, Uh = _gradient_descent(task, d, 4000, lr=0.5, lam_W=0.0, lam_U=lam, layernorm=True)
    t = float(tau_star(n_c=3, L=2, K=task.K, d=d, lam=lam))
    np.testing.assert_allclose(np.linalg.norm(Uh, axis=1), t / np.sqrt(task.K * task.L), rtol=1e-9)
    V = phi(E.T, eps=0.0).T
    np.testing.assert_allclose(np.linalg.norm(V, axis=1), np.sqrt(d), rtol=1e-12)
    # type II: the φ(w) of a concept coincide
    for a in range(3):
        assert np.abs(V[2 * a] - V[2 * a + 1]).max() < 1e-8
