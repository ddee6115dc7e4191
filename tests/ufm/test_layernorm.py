"""LayerNorm-constrained UFM (Súkeník et al. GUFM (8), Lemma 4.2): closed forms vs L-BFGS on the
sphere, and the dimension conditions (d ≥ K for CE and MSE+bias, d ≥ K+1 for bias-free MSE)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fctheory import FCTheoryError, ufm
from fctheory.metrics import nc2

lams = st.floats(-1.5, 0.0).map(lambda e: 10.0**e)


@st.composite
def K_d(draw, extra_min):
    K = draw(st.integers(2, 4))
    d = K + extra_min + draw(st.integers(0, 2))
    return K, max(d, 2)


@settings(max_examples=8)
@given(K_d(0), lams)
def test_lemma42_ce_scalar_root_matches_lbfgs(Kd, lam):
    K, d = Kd
    closed = ufm.layernorm_ce(K=K, d=d, lam=lam)
    assert closed.closed_form
    num = ufm.solve_layernorm_ce(K=K, n_spl=1, d=d, lam=lam, n_starts=2, seed=0)
    assert num.value == pytest.approx(closed.value, rel=1e-9)
    assert num.value >= closed.value - 1e-12
    # stationarity of the scalar problem: √d/(e^{aρ}+K−1) = λρ
    rho, a = closed.extras["rho"], closed.extras["a"]
    assert np.sqrt(d) / (np.exp(a * rho) + K - 1) == pytest.approx(lam * rho, rel=1e-13)


@settings(max_examples=6)
@given(K_d(1), lams)
def test_lemma42_mse_without_bias_matches_lbfgs(Kd, lam):
    K, d = Kd
    closed = ufm.layernorm_mse(K=K, d=d, lam=lam)
    assert closed.closed_form and closed.value == pytest.approx(lam * K / (2 * (d + lam * K)), rel=1e-15)
    num = ufm.solve_layernorm_mse(K=K, n_spl=1, d=d, lam=lam, n_starts=1, seed=0)
    assert num.value == pytest.approx(closed.value, rel=1e-9)
    assert nc2(num.W, variant="identity", center=False) < 1e-4  # orthogonal rows (NC2B = 0)


@settings(max_examples=8)
@given(K_d(0), lams)
def test_mse_with_unregularised_bias_matches_lbfgs(Kd, lam):
    K, d = Kd
    closed = ufm.layernorm_mse(K=K, d=d, lam=lam, bias=True)
    num = ufm.solve_layernorm_mse(K=K, n_spl=1, d=d, lam=lam, bias=True, n_starts=2, seed=0)
    assert num.value == pytest.approx(closed.value, rel=1e-9)
    np.testing.assert_allclose(num.b, 1.0 / K, atol=1e-5)


@pytest.mark.parametrize("K,lam", [(3, 0.05), (4, 0.1)])
def test_bias_free_mse_at_d_equal_K_is_not_the_closed_form(K, lam):
    # notes §2 erratum 3: with d = K, K orthonormal zero-sum rows do not exist; the optimum is
    # strictly above λK/(2(d+λK)) and its Gram is an ETF, not a multiple of the identity
    res = ufm.layernorm_mse(K=K, d=K, lam=lam)
    assert not res.closed_form
    formula = res.extras["formula_value"]
    assert res.value > formula * 1.5
    # the solver finds a point strictly better than every point with the claimed structure
    # (orthonormal rows, NC2B = 0), whose best value at d = K is 1/2 − d(K−1)/(2K(d+λK))
    assert res.value < res.extras["orthogonal_structure_value"] - 1e-3
    W = res.extras["numerical"].W
    assert nc2(W, variant="identity", center=False) > 0.4
    # MSE is invariant under (w_k, x_k) → (−w_k, −x_k): the Gram is an ETF up to row signs
    nr = np.linalg.norm(W, axis=1)
    C = np.abs(W @ W.T) / np.outer(nr, nr)
    np.testing.assert_allclose(C[~np.eye(K, dtype=bool)], 1.0 / (K - 1), atol=1e-5)
    np.testing.assert_allclose(nr, nr.mean(), rtol=1e-5)
    # and at d = K+1 the closed form is attained
    assert ufm.layernorm_mse(K=K, d=K + 1, lam=lam).closed_form


def test_ce_below_d_equal_K_is_not_the_closed_form():
    res = ufm.layernorm_ce(K=4, d=3, lam=0.1)  # notes: 0.366 (numerical) vs 0.307 (formula)
    assert not res.closed_form
    assert res.value > res.extras["formula_value"] + 0.03


def test_gufm_objective_at_the_closed_form_configuration():
    # build the CE optimum explicitly: features √d·u_k, rows ρ*·u_k with u a unit ETF in 1^⊥
    K, d, lam = 3, 5, 0.2
    res = ufm.layernorm_ce(K=K, d=d, lam=lam)
    E = np.eye(K) - 1.0 / K
    U = np.zeros((K, d))
    U[:, :K] = E  # centred simplex vertices, padded with zeros (d > K)
    U = U - U.mean(axis=1, keepdims=True)  # each u_k zero-sum in R^d (LayerNorm's hyperplane) ...
    U = U - U.mean(axis=0, keepdims=True)  # ... and Σ_k u_k = 0 (row sums stay 0)
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    np.testing.assert_allclose(U.sum(axis=1), 0, atol=1e-15)
    np.testing.assert_allclose(U @ U.T, K / (K - 1) * E, atol=1e-12)
    X = np.sqrt(d) * U.T
    W = res.extras["rho"] * U
    Z = W @ X
    lse = np.log(np.exp(Z).sum(axis=0))
    val = np.mean(lse - np.diag(Z)) + lam / 2 * np.sum(W * W)
    assert val == pytest.approx(res.value, rel=1e-13)


def test_invalid_dimension_raises():
    with pytest.raises(FCTheoryError, match="d"):
        ufm.layernorm_ce(K=3, d=1, lam=0.1)


def test_orthogonal_structure_value_at_d_equal_K_is_attained():
    # W = z·I (orthonormal rows), x_k = √d·P⊥e_k/‖P⊥e_k‖, z = √d·s/(d+λK), s = √((K−1)/K)
    K, lam = 3, 0.05
    d = K
    s = np.sqrt((K - 1) / K)
    z = np.sqrt(d) * s / (d + lam * K)
    P = np.eye(d) - 1.0 / d
    X = np.sqrt(d) * P / np.linalg.norm(P, axis=0)
    W = z * np.eye(K)
    val = 0.5 * np.sum((W @ X - np.eye(K)) ** 2) / K + lam / 2 * np.sum(W * W)
    assert val == pytest.approx(ufm.layernorm_mse(K=K, d=d, lam=lam).extras["orthogonal_structure_value"], rel=1e-13)
