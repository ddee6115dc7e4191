"""API 1.0: the 0.x names and positional calls still work, warn, and give identical results.

Each test calls one function the old way under ``pytest.warns(DeprecationWarning)`` and compares with
the new call bit for bit (the same code runs; only the argument binding differs).
"""

import warnings

import numpy as np
import pytest

import fctheory as fc
from fctheory import ufm


def same(old, new):
    """Old call warns; new call does not; results are identical."""
    with pytest.warns(DeprecationWarning, match="CHANGELOG"):
        a = old()
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        b = new()
    return a, b


def test_tau_positional():
    a, b = same(lambda: fc.tau(3, 1200, 15, 1000, 1e-3), lambda: fc.tau(n_c=3, n_w=1200, L=15, K=1000, lam=1e-3))
    assert a == b


def test_tau_positional_precision_and_backend():
    a, b = same(
        lambda: fc.tau(3, 12, 2, 4, 0.01, "float", 50, "numpy"),
        lambda: fc.tau(n_c=3, n_w=12, L=2, K=4, lam=0.01, backend="numpy"),
    )
    assert a == b


def test_H_positional_after_t():
    a, b = same(lambda: fc.H(0.7, 3, 12, 2, 4, 0.01), lambda: fc.H(0.7, n_c=3, n_w=12, L=2, K=4, lam=0.01))
    assert a == b


def test_tau_star_positional():
    a, b = same(lambda: fc.tau_star(3, 15, 1000, 100, 1e-3), lambda: fc.tau_star(n_c=3, L=15, K=1000, d=100, lam=1e-3))
    assert a == b


def test_solve_type3_positional():
    mu = np.array([6, 3, 2]) / 11
    a, b = same(lambda: fc.solve_type3(mu, 3, 2, 0.02), lambda: fc.solve_type3(mu=mu, n_c=3, L=2, lam=0.02))
    assert a.c == b.c and np.array_equal(a.r, b.r)


def test_predict_type1_positional():
    a, b = same(
        lambda: fc.predict_type1(3, 1200, 15, 1000, 1e-3),
        lambda: fc.predict_type1(n_c=3, n_w=1200, L=15, K=1000, lam=1e-3),
    )
    assert a.to_dict() == b.to_dict()


def test_predict_lam_positional():
    task = fc.Task.full(2, 2, 2)
    a, b = same(lambda: fc.predict(task, 0.01), lambda: fc.predict(task, lam=0.01))
    assert a.to_dict() == b.to_dict()


def test_configuration_d_positional():
    task = fc.Task.full(3, 2, 2)
    (W1, U1), (W2, U2) = same(
        lambda: fc.type1_configuration(task, 4, 0.01, seed=0),
        lambda: fc.type1_configuration(task, d=4, lam=0.01, seed=0),
    )
    assert np.array_equal(W1, W2) and np.array_equal(U1, U2)


def test_task_full_mu_positional_and_sample_rng_keyword():
    a, b = same(lambda: fc.Task.full(3, 2, 2, "zipf"), lambda: fc.Task.full(3, 2, 2, mu="zipf"))
    assert np.array_equal(a.mu, b.mu) and np.array_equal(a.Z, b.Z)
    (X1, y1), (X2, y2) = same(lambda: b.sample(3, rng=4), lambda: b.sample(3, seed=4))
    assert np.array_equal(X1, X2) and np.array_equal(y1, y2)


def test_network_keyword_only_parameters():
    U = np.arange(24.0).reshape(2, 12)
    a, b = same(lambda: fc.U_hat(U, 3), lambda: fc.U_hat(U, L=3))
    assert np.array_equal(a, b)


def test_true_risk_layernorm_positional():
    task = fc.Task.full(2, 2, 2)
    W, U = fc.type2_configuration(task, d=3, lam=0.01, seed=0)
    a, b = same(lambda: fc.true_risk(task, W, U, 0.01, True), lambda: fc.true_risk(task, W, U, 0.01, layernorm=True))
    assert a == b


def test_minimize_true_risk_positional():
    task = fc.Task.full(2, 1, 2)
    (W1, U1, r1), (W2, U2, r2) = same(
        lambda: fc.minimize_true_risk(task, 3, 0.01, seed=0, maxiter=5),
        lambda: fc.minimize_true_risk(task, d=3, lam=0.01, seed=0, maxiter=5),
    )
    assert np.array_equal(W1, W2) and r1.R == r2.R


def test_assumption_checker_n_c_positional():
    Z = fc.Task.full(2, 1, 2).Z
    a, b = same(lambda: fc.check_assumption_A(Z, 2), lambda: fc.check_assumption_A(Z, n_c=2))
    assert a.holds == b.holds


def test_ufm_n_renamed_n_spl():
    a, b = same(
        lambda: ufm.ce(K=10, n=50, lam_W=5e-3, lam_H=5e-3), lambda: ufm.ce(K=10, n_spl=50, lam_W=5e-3, lam_H=5e-3)
    )
    assert a.value == b.value


def test_ufm_positional_closed_form():
    a, b = same(lambda: ufm.mse(4, 3, 0.01, 0.02), lambda: ufm.mse(K=4, n_spl=3, lam_W=0.01, lam_H=0.02))
    assert a.value == b.value


def test_ufm_solver_m_renamed_d():
    a, b = same(
        lambda: ufm.solve_ce(3, 2, 2, 0.01, 0.01, seed=0, n_starts=1),
        lambda: ufm.solve_ce(K=3, n_spl=2, d=2, lam_W=0.01, lam_H=0.01, seed=0, n_starts=1),
    )
    assert a.value == b.value
    c, d = same(
        lambda: ufm.solve_ce(K=3, n=2, m=2, lam_W=0.01, lam_H=0.01, seed=0, n_starts=1),
        lambda: ufm.solve_ce(K=3, n_spl=2, d=2, lam_W=0.01, lam_H=0.01, seed=0, n_starts=1),
    )
    assert c.value == d.value == a.value


def test_train_n_spl_positional():
    task = fc.Task.full(2, 2, 2)
    kw = dict(epochs=2, backend="numpy", measure=False, seed=0)
    a, b = same(lambda: fc.train(task, 2, 3, **kw), lambda: fc.train(task, n_spl=2, d=3, **kw))
    assert np.array_equal(a.W, b.W) and np.array_equal(a.U, b.U)


def test_diagnose_old_argument_order():
    task = fc.Task.full(2, 2, 2)
    W, U = fc.type1_configuration(task, d=2, lam=0.01)
    kw = dict(assumptions=False, distances=False)
    a, b = same(
        lambda: fc.diagnose(W, U, task, 0.01, 0.01, **kw), lambda: fc.diagnose(task, W, U, lam_W=0.01, lam_U=0.01, **kw)
    )
    assert a.R == b.R and a.grad_norm == b.grad_norm


def test_old_and_new_name_together_are_refused():
    with pytest.raises(fc.FCTheoryError, match="'n'.*'n_spl'"):
        ufm.ce(K=10, n=50, n_spl=50, lam_W=5e-3, lam_H=5e-3)


def test_too_many_positional_arguments_are_refused():
    with pytest.raises(fc.FCTheoryError, match="positional"):
        fc.tau(3, 12, 2, 4, 0.01, "float", 50, "numba", "extra")


def test_new_keyword_only_parameters_refuse_a_positional_beyond_the_legacy_ones():
    # U_hat(U, L) is the 0.x form; a third positional has never existed
    with pytest.raises(fc.FCTheoryError):
        fc.U_hat(np.zeros((2, 4)), 2, 3)


def test_solve_type3_accepts_a_named_mu_with_s_c():
    want = fc.solve_type3(mu=fc.Task.full(3, 3, 2, mu="zipf").mu, n_c=3, L=2, lam=0.02)
    got = fc.solve_type3(mu="zipf", s_c=3, n_c=3, L=2, lam=0.02)
    assert got.c == want.c and np.array_equal(got.r, want.r)
    assert fc.lambda_max_type3(mu="uniform", s_c=4, n_c=3, L=2) == fc.lambda_max_type3(mu=np.full(4, 0.25), n_c=3, L=2)
    assert fc.predict_type3(mu="zipf", s_c=3, n_c=3, L=2, lam=0.02).c == want.c


def test_named_mu_without_s_c_names_s_c():
    with pytest.raises(fc.FCTheoryError, match="^s_c="):
        fc.solve_type3(mu="zipf", n_c=3, L=2, lam=0.02)


def test_s_c_must_match_an_explicit_mu():
    with pytest.raises(fc.FCTheoryError, match="^mu="):
        fc.solve_type3(mu=np.array([0.5, 0.5]), s_c=3, n_c=3, L=2, lam=0.02)
