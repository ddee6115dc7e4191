"""Max-margin (15), norm-constrained CE (34) and the output-ball problem (12): closed forms vs solvers."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fctheory import FCTheoryError, ufm
from fctheory.ufm._common import softmax_ce


@settings(max_examples=6)
@given(st.integers(2, 4), st.integers(1, 3), st.integers(0, 2))
def test_eq15_max_margin_value_matches_slsqp(K, n, extra):
    m = K - 1 + extra
    closed = ufm.max_margin(K=K, n_spl=n)
    num = ufm.solve_max_margin(K=K, n_spl=n, d=m, n_starts=3, seed=0)
    assert num.grad_norm <= 1e-9  # constraint violation of the returned point
    assert num.value == pytest.approx(closed.value, rel=1e-9)
    # ‖W‖² = ‖H‖² at the optimum (review notes §2.1)
    assert np.sum(num.W**2) == pytest.approx(np.sum(num.H**2), rel=1e-6)


@settings(max_examples=30)
@given(st.integers(2, 8), st.integers(1, 9))
def test_eq15_closed_form_configuration_is_feasible_and_tight(K, n):
    # w_k = α v_k, h_{k,i} = β v_k: every margin is 1, and Ji et al.'s bound holds with equality
    res = ufm.max_margin(K=K, n_spl=n)
    E = np.eye(K) - 1.0 / K
    V = E / np.linalg.norm(E, axis=1, keepdims=True)
    W = np.sqrt(res.extras["alpha_sq"]) * V
    H = np.repeat(np.sqrt(res.extras["beta_sq"]) * V.T, n, axis=1)
    Z = W @ H
    y = np.repeat(np.arange(K), n)
    own = Z[y, np.arange(K * n)]
    Z2 = Z.copy()
    Z2[y, np.arange(K * n)] = -np.inf
    margins = own - Z2.max(axis=0)
    np.testing.assert_allclose(margins, 1.0, rtol=1e-12)
    val = 0.5 * np.sum(W**2) + 0.5 * np.sum(H**2)
    assert val == pytest.approx(res.value, rel=1e-12)
    bound = (np.sum(W**2) + np.sum(H**2)) / (2 * (K - 1) * np.sqrt(n))
    assert margins.min() == pytest.approx(bound, rel=1e-12)


@settings(max_examples=10)
@given(st.integers(2, 5), st.floats(0.1, 3), st.floats(0.1, 3))
def test_eq34_norm_constrained_ce_matches_lbfgs(K, Ow, Oh):
    closed = ufm.norm_constrained_ce(K=K, Omega_W=Ow, Omega_H=Oh)
    num = ufm.solve_norm_constrained_ce(K=K, n_spl=2, d=K, Omega_W=Ow, Omega_H=Oh, n_starts=2, seed=0)
    assert num.value == pytest.approx(closed.value, rel=1e-9)
    # constraints hold (tight by construction)
    assert np.mean(np.sum(num.W**2, axis=1)) == pytest.approx(Ow, rel=1e-12)
    assert np.mean(np.sum(num.H**2, axis=0)) <= Oh * (1 + 1e-12)


@settings(max_examples=15)
@given(st.integers(2, 8), st.floats(0.01, 20))
def test_eq12_output_ball_matches_lbfgs_and_etf(K, R):
    closed = ufm.output_ball(K=K, R=R)
    num = ufm.solve_output_ball(K=K, R=R, k=0, n_starts=2, seed=1)
    assert num.value == pytest.approx(closed.value, rel=1e-9, abs=1e-14)
    h = closed.extras["h_star"][0]
    assert np.linalg.norm(h) == pytest.approx(R, rel=1e-12)
    assert softmax_ce(h[:, None], np.array([0]))[0] == pytest.approx(closed.value, rel=1e-12, abs=1e-300)


def test_invalid_inputs():
    with pytest.raises(FCTheoryError, match="R"):
        ufm.output_ball(K=3, R=0.0)
    with pytest.raises(FCTheoryError, match="Omega_W"):
        ufm.norm_constrained_ce(K=3, Omega_W=-1.0, Omega_H=1.0)
