"""Regularised CE / MSE UFM (review eqs. (21), (28)): closed forms vs L-BFGS and cvxpy."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fctheory import FCTheoryError, ufm
from fctheory.metrics import nc1, nc2

lams = st.floats(-3.0, 0.0).map(lambda e: 10.0**e)
solver_lams = st.floats(-2.5, 0.0).map(lambda e: 10.0**e)  # smaller λ: same result, slower L-BFGS


def etf_rows(K, m, rng):
    E = np.eye(K) - 1.0 / K
    U, _, _ = np.linalg.svd(E)
    B = U[:, : K - 1]  # orthonormal basis of 1^⊥ in R^K
    Q, _ = np.linalg.qr(rng.standard_normal((m, K - 1)))
    V = E @ B @ Q.T  # K×m, rows = centred vertices
    return V / np.linalg.norm(V, axis=1, keepdims=True)


@settings(max_examples=10)
@given(st.integers(2, 4), st.integers(1, 3), solver_lams, solver_lams, st.booleans())
def test_eq21_ce_closed_form_equals_lbfgs_optimum(K, n, lam_W, lam_H, bias):
    Kq = K * np.sqrt(n * lam_W * lam_H)
    assume(abs(Kq - 1) > 0.05)  # the flat threshold region is checked separately
    closed = ufm.ce(K=K, n_spl=n, lam_W=lam_W, lam_H=lam_H, bias=bias)
    num = ufm.solve_ce(K=K, n_spl=n, d=K, lam_W=lam_W, lam_H=lam_H, bias=bias, n_starts=1, seed=0)
    assert num.value == pytest.approx(closed.value, rel=1e-9, abs=1e-12)
    assert num.value >= closed.value - 1e-12  # closed form is the global minimum
    if not closed.trivial:
        y = np.repeat(np.arange(K), n)
        assert nc1(num.H.T, y) < 1e-6  # collapse (the solver's accuracy bounds this, not the theory)
        assert np.sum(num.W**2) == pytest.approx(closed.W_norm_sq, rel=1e-4)


@settings(max_examples=10)
@given(st.integers(2, 4), st.integers(1, 3), solver_lams, solver_lams, st.booleans())
def test_eq28_mse_closed_form_equals_lbfgs_optimum(K, n, lam_W, lam_H, bias):
    Kq = K * np.sqrt(n * lam_W * lam_H)
    assume(abs(Kq - 1) > 0.05)
    closed = ufm.mse(K=K, n_spl=n, lam_W=lam_W, lam_H=lam_H, bias=bias)
    num = ufm.solve_mse(K=K, n_spl=n, d=K, lam_W=lam_W, lam_H=lam_H, bias=bias, n_starts=1, seed=1)
    assert num.value == pytest.approx(closed.value, rel=1e-9, abs=1e-12)
    assert num.value >= closed.value - 1e-12
    if bias:
        np.testing.assert_allclose(num.b, 1.0 / K, atol=1e-4)


@settings(max_examples=30)
@given(st.integers(2, 6), st.integers(1, 4), lams, lams, st.integers(0, 3))
def test_ce_closed_form_configuration_is_stationary_with_the_stated_value(K, n, lam_W, lam_H, extra):
    # build W*, H* from the result (ETF rows, h = √(λ_W/(nλ_H)) w) in dimension m ≥ K−1: value and ∇ = 0
    res = ufm.ce(K=K, n_spl=n, lam_W=lam_W, lam_H=lam_H)
    m = K - 1 + extra
    rng = np.random.default_rng(K + 10 * n + extra)
    V = etf_rows(K, m, rng)
    W = np.sqrt(res.W_norm_sq / K) * V
    H = np.repeat((res.extras["h_over_w"] * W).T, n, axis=1)
    val, gW, gH, _ = ufm.ce_objective(W, H, None, n_spl=n, lam_W=lam_W, lam_H=lam_H)
    assert val == pytest.approx(res.value, rel=1e-12, abs=1e-15)
    scale = max(1.0, np.linalg.norm(W))
    assert np.linalg.norm(gW) <= 1e-12 * scale and np.linalg.norm(gH) <= 1e-12 * scale
    np.testing.assert_allclose(W @ W.T, res.W_gram, atol=1e-12 * scale**2)


@settings(max_examples=30)
@given(st.integers(2, 6), st.integers(1, 4), lams, lams, st.booleans())
def test_mse_closed_form_configuration_is_stationary_with_the_stated_value(K, n, lam_W, lam_H, bias):
    res = ufm.mse(K=K, n_spl=n, lam_W=lam_W, lam_H=lam_H, bias=bias)
    rng = np.random.default_rng(K + n)
    m = K + 1
    # W = a·Rᵀ with Rᵀ orthonormal rows (bias-free) or a·√(K/(K−1))·ETF rows (bias); h = √(λ_W/(nλ_H))·w
    if bias:
        V = etf_rows(K, m, rng) * np.sqrt((K - 1) / K)  # rows with Gram I − 11ᵀ/K
    else:
        V, _ = np.linalg.qr(rng.standard_normal((m, K)))
        V = V.T
    W = np.sqrt(res.W_gram[0, 0] / (V[0] @ V[0])) * V if res.W_gram[0, 0] > 0 else 0 * V
    H = np.repeat((np.sqrt(lam_W / (n * lam_H)) * W).T, n, axis=1)
    b = res.bias
    val, gW, gH, gb = ufm.mse_objective(W, H, b, n_spl=n, lam_W=lam_W, lam_H=lam_H)
    assert val == pytest.approx(res.value, rel=1e-12, abs=1e-15)
    assert np.linalg.norm(gW) + np.linalg.norm(gH) <= 1e-12 * max(1, np.linalg.norm(W))
    if bias:
        assert np.linalg.norm(gb) <= 1e-13


def test_threshold_Kq_equal_one_branches_agree():
    # review notes §2.4–2.5: the non-trivial and trivial branches agree at K√(nλ_Wλ_H) = 1
    K, n = 4, 3
    lam = 1.0 / (K * np.sqrt(n))  # λ_W = λ_H = lam ⇒ Kq = 1
    for eps in (1e-6, 1e-9):
        below = lam * (1 - eps)
        assert ufm.ce(K=K, n_spl=n, lam_W=below, lam_H=below).value == pytest.approx(np.log(K), rel=1e-5)
        assert ufm.mse(K=K, n_spl=n, lam_W=below, lam_H=below).value == pytest.approx(0.5, rel=1e-5)
        assert ufm.mse(K=K, n_spl=n, lam_W=below, lam_H=below, bias=True).value == pytest.approx(
            (K - 1) / (2 * K), rel=1e-5
        )
    assert ufm.ce(K=K, n_spl=n, lam_W=lam, lam_H=lam).trivial and ufm.mse(K=K, n_spl=n, lam_W=lam, lam_H=lam).trivial


def test_zero_is_optimal_above_the_threshold():
    K, n, lam = 3, 2, 0.4  # Kq = 3·√2·0.4 ≈ 1.7
    for solve, closed in ((ufm.solve_ce, ufm.ce), (ufm.solve_mse, ufm.mse)):
        num = solve(K=K, n_spl=n, d=K, lam_W=lam, lam_H=lam, n_starts=2, seed=3)
        assert closed(K=K, n_spl=n, lam_W=lam, lam_H=lam).trivial
        assert num.value == pytest.approx(closed(K=K, n_spl=n, lam_W=lam, lam_H=lam).value, rel=1e-10)
        assert np.linalg.norm(num.W) < 1e-4 and np.linalg.norm(num.H) < 1e-4


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("K,n,lam_W,lam_H", [(3, 2, 0.05, 0.1), (4, 2, 0.01, 0.02)])
def test_eq23_convex_reformulation_agrees(K, n, lam_W, lam_H, bias):
    # (23)–(24): nuclear-norm program solved by cvxpy (interior point: agreement to ~1e-7)
    v, _, _ = ufm.convex_ce(K=K, n_spl=n, lam_W=lam_W, lam_H=lam_H, bias=bias)
    assert v == pytest.approx(ufm.ce(K=K, n_spl=n, lam_W=lam_W, lam_H=lam_H, bias=bias).value, abs=1e-7)
    v, _, _ = ufm.convex_mse(K=K, n_spl=n, lam_W=lam_W, lam_H=lam_H, bias=bias)
    assert v == pytest.approx(ufm.mse(K=K, n_spl=n, lam_W=lam_W, lam_H=lam_H, bias=bias).value, abs=1e-7)


def test_ce_optimum_is_a_simplex_etf_with_self_duality():
    K, n, lw, lh = 4, 2, 5e-3, 1e-2
    res = ufm.ce(K=K, n_spl=n, lam_W=lw, lam_H=lh)
    assert nc2(res.W_gram, variant="etf", center=False) <= 1e-12  # rows of a Gram ∝ E_K are themselves ∝ E_K
    assert res.means_gram == pytest.approx(res.extras["h_over_w"] ** 2 * res.W_gram)
    assert res.H_norm_sq == pytest.approx(lw / lh * res.W_norm_sq)


def test_invalid_parameters_raise():
    with pytest.raises(FCTheoryError, match="lam_W"):
        ufm.ce(K=3, n_spl=2, lam_W=-1.0, lam_H=0.1)
    with pytest.raises(FCTheoryError, match="K"):
        ufm.mse(K=1, n_spl=2, lam_W=0.1, lam_H=0.1)
    with pytest.raises(FCTheoryError, match="n"):
        ufm.ce(K=3, n_spl=0, lam_W=0.1, lam_H=0.1)


@pytest.mark.slow
@settings(max_examples=40)
@given(st.integers(2, 5), st.integers(1, 4), lams, lams, st.booleans(), st.integers(0, 2))
def test_ce_and_mse_closed_forms_thorough(K, n, lam_W, lam_H, bias, extra):
    assume(abs(K * np.sqrt(n * lam_W * lam_H) - 1) > 0.02)
    m = K - 1 + extra if bias else K + extra
    for closed, solve in ((ufm.ce, ufm.solve_ce), (ufm.mse, ufm.solve_mse)):
        c = closed(K, n, lam_W, lam_H, bias)
        num = solve(K, n, max(m, K - 1 if closed is ufm.ce else m), lam_W, lam_H, bias, n_starts=3, seed=2)
        assert num.value == pytest.approx(c.value, rel=1e-9, abs=1e-12)


def test_bias_free_mse_closed_form_needs_m_at_least_K():
    # with m = K−1 no orthogonal frame of K class means exists: the optimum lies strictly above
    # the closed-form value (which the same solver attains at m = K)
    K, n, lw, lh = 3, 2, 0.01, 0.02
    closed = ufm.mse(K=K, n_spl=n, lam_W=lw, lam_H=lh)
    low = ufm.solve_mse(K=K, n_spl=n, d=K - 1, lam_W=lw, lam_H=lh, n_starts=3, seed=0)
    assert low.value > closed.value + 1e-3
    assert ufm.solve_mse(K=K, n_spl=n, d=K, lam_W=lw, lam_H=lh, n_starts=1, seed=0).value == pytest.approx(
        closed.value, rel=1e-9
    )
