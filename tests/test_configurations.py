"""fctheory.configurations: the collapse configurations of Definitions 1-3, against weights built by hand
(tests/oracle/oracles.py) from the same frame and the Theorems' constants (50-digit mpmath)."""

import numpy as np

import fctheory as fc
from tests.oracle import oracles as O


def _frame(n_c, d, mean_zero=False):
    return O.simplex_frame(n_c, d, mean_zero=mean_zero)


def test_type1_with_explicit_constants_equals_hand_built_weights():
    task = fc.Task.full(3, 2, 2)
    F = _frame(3, 4)
    W, U = fc.type1_configuration(task, d=4, c=0.7, c_prime=1.3, frame=F)
    W_ref, U_ref = O.type3_weights(task.Z, 3, 2, 2, 4, c=1.3, r=np.full(2, 0.7), F=F)
    np.testing.assert_allclose(W, W_ref, rtol=0, atol=1e-15)
    np.testing.assert_allclose(U, U_ref, rtol=0, atol=1e-15)


def test_type1_default_c_prime_balances_the_norms_of_W_and_U_hat():
    task = fc.Task.full(3, 2, 2)
    W, U = fc.type1_configuration(task, d=4, c=0.9, frame=_frame(3, 4))
    assert abs(np.linalg.norm(W) - np.linalg.norm(fc.U_hat(U, L=task.L))) <= 1e-14 * np.linalg.norm(W)


def test_type1_from_lam_uses_theorem1_constants():
    task = fc.Task.full(3, 2, 2)
    lam = 0.01
    t = float(O.mp_tau(3, task.n_w, 2, task.K, lam))
    W, U = fc.type1_configuration(task, d=4, lam=lam, frame=_frame(3, 4))
    np.testing.assert_allclose(np.linalg.norm(W, axis=0), np.sqrt(t / task.n_w), rtol=1e-10)
    np.testing.assert_allclose(
        np.linalg.norm(U.reshape(task.K, task.L, 4), axis=2), np.sqrt(t / (task.K * task.L)), rtol=1e-10
    )


def test_type2_phi_of_W_is_sqrt_d_times_the_mean_zero_frame():
    task = fc.Task.full(3, 2, 2)
    F = _frame(3, 5, mean_zero=True)
    W, U = fc.type2_configuration(task, d=5, c=0.4, frame=F, scale=2.5, shift=-1.0)
    np.testing.assert_allclose(O.my_phi(W), np.sqrt(5) * F[:, task.word_concept], atol=1e-13)
    _, U_ref = O.type3_weights(task.Z, 3, 2, 2, 5, c=0.4, r=np.ones(2), F=F)
    np.testing.assert_allclose(U, U_ref, atol=1e-15)


def test_type2_from_lam_uses_theorem3_constant():
    task = fc.Task.full(3, 2, 2)
    lam = 0.01
    c = float(O.mp_tau_star(3, 2, task.K, 5, lam)) / np.sqrt(task.K * task.L)
    _, U = fc.type2_configuration(task, d=5, lam=lam, frame=_frame(3, 5, mean_zero=True))
    np.testing.assert_allclose(np.linalg.norm(U.reshape(task.K, task.L, 5), axis=2), c, rtol=1e-10)


def test_type3_with_explicit_constants_equals_hand_built_weights():
    task = fc.Task.full(3, 3, 2, mu="zipf")
    F = _frame(3, 4)
    r = np.array([1.5, 0.8, 0.3])
    W, U = fc.type3_configuration(task, d=4, c=0.6, r=r, frame=F)
    W_ref, U_ref = O.type3_weights(task.Z, 3, 3, 2, 4, c=0.6, r=r, F=F)
    np.testing.assert_allclose(W, W_ref, atol=1e-15)
    np.testing.assert_allclose(U, U_ref, atol=1e-15)


def test_type3_from_lam_satisfies_equations_7_and_8():
    task = fc.Task.full(2, 2, 2, mu="zipf")
    lam = 0.01
    F = _frame(2, 3)
    W, U = fc.type3_configuration(task, d=3, lam=lam, frame=F)
    r = W[:, [0, 1]].T @ F[:, 0]  # w_(0,β) = r_β f_0 and ‖f_0‖ = 1
    c = float(U[0, :3] @ F[:, task.Z[0, 0]])
    res = O.mp_residuals(task.mu, 2, 2, lam, c, r)
    assert max(abs(float(x)) for x in res) <= 1e-9
