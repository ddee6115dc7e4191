"""The perturbation paper's anchored UFM (Eq. 2): Theorem 2.1, central path (App. A, Eq. 7),
Corollary 2.2, Theorem 3.1 (flow), Theorem 4.1 (first-order response), Theorem 4.2 (block spectra)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fctheory import FCTheoryError
from fctheory.ufm import perturbation as P

lam = st.floats(-1.0, 0.5).map(lambda e: 10.0**e)


@st.composite
def problem(draw):
    K = draw(st.integers(2, 4))
    n = draw(st.integers(1, 3))
    d = K + draw(st.integers(0, 2))
    seed = draw(st.integers(0, 2**31))
    return K, n, d, np.random.default_rng(seed)


@settings(max_examples=30)
@given(problem(), lam, lam)
def test_appendixA_central_path_closed_form_equals_direct(pr, lw, lh):
    K, n, d, rng = pr
    H = rng.standard_normal((d, K * n))
    a = P.central_path_loss(H, K=K, lam_W=lw, lam_H=lh)
    b = P.central_path_loss(H, K=K, lam_W=lw, lam_H=lh, method="direct")
    assert a == pytest.approx(b, rel=1e-12)


@settings(max_examples=20)
@given(problem(), lam, lam)
def test_eq7_gradient_matches_central_differences(pr, lw, lh):
    K, n, d, rng = pr
    H = rng.standard_normal((d, K * n))
    E = rng.standard_normal(H.shape)
    g = P.central_path_gradient(H, K=K, lam_W=lw, lam_H=lh)
    h = 1e-5
    fd = (
        P.central_path_loss(H + h * E, K=K, lam_W=lw, lam_H=lh)
        - P.central_path_loss(H - h * E, K=K, lam_W=lw, lam_H=lh)
    ) / (2 * h)
    assert np.sum(g * E) == pytest.approx(fd, rel=1e-6, abs=1e-9)
    # and ∇L equals ∇_H f at W = W*(H) (envelope theorem)
    W = P.optimal_W(H, K=K, lam_W=lw)
    _, gW, gH = P.anchored_objective(W, H, None, K=K, lam_W=lw, lam_H=lh, beta=0.0)
    assert np.linalg.norm(gW) <= 1e-10 * max(1, np.linalg.norm(W))
    np.testing.assert_allclose(g, gH, rtol=1e-9, atol=1e-12)


def test_appendixC_hessian_matches_finite_differences():
    K, n, d = 3, 2, 4
    rng = np.random.default_rng(0)
    W, H, H0 = rng.standard_normal((K, d)), rng.standard_normal((d, K * n)), rng.standard_normal((d, K * n))
    lw, lh, beta = 0.5, 0.3, 2.0
    Hww, Hwh, Hhh = P.hessian_blocks(W, H, K=K, lam_W=lw, lam_H=lh, beta=beta)
    Hess = np.block([[Hww, Hwh], [Hwh.T, Hhh]])

    def grad(x):
        Wx, Hx = x[: K * d].reshape(d, K).T, x[K * d :].reshape(K * n, d).T
        _, gW, gH = P.anchored_objective(Wx, Hx, H0, K=K, lam_W=lw, lam_H=lh, beta=beta)
        return np.concatenate([gW.T.ravel(), gH.T.ravel()])

    x = np.concatenate([W.T.ravel(), H.T.ravel()])
    J = np.column_stack([(grad(x + 1e-6 * e) - grad(x - 1e-6 * e)) / 2e-6 for e in np.eye(x.size)])
    np.testing.assert_allclose(J, Hess, atol=1e-8)


@settings(max_examples=8)
@given(problem(), lam, lam)
def test_theorem21_value_matches_numerical_minimum(pr, lw, lh):
    K, n, d, rng = pr
    cm = P.collapsed_minimizer(K=K, n_spl=n, d=d, lam_W=lw, lam_H=lh, seed=1)
    v, gW, gH = P.anchored_objective(cm.W, cm.H, None, K=K, lam_W=lw, lam_H=lh, beta=0.0)
    assert v == pytest.approx(cm.value, rel=1e-13)
    assert np.linalg.norm(gW) + np.linalg.norm(gH) <= 1e-13
    # L-BFGS on the reduced objective L(H) (β = 0) from a random start finds the same value
    sol = P.solve_anchored(rng.standard_normal((d, K * n)), K=K, lam_W=lw, lam_H=lh, beta=0.0, newton=False)
    assert sol.value == pytest.approx(cm.value, rel=1e-9, abs=1e-12)


@settings(max_examples=10)
@given(problem(), lam, lam, st.floats(0.1, 100))
def test_corollary22_anchor_at_a_minimiser_returns_it(pr, lw, lh, beta):
    K, n, d, rng = pr
    cm = P.collapsed_minimizer(K=K, n_spl=n, d=d, lam_W=lw, lam_H=lh, seed=2)
    sol = P.solve_anchored(cm.H, K=K, lam_W=lw, lam_H=lh, beta=beta)
    assert np.abs(sol.H - cm.H).max() <= 1e-10 and np.abs(sol.W - cm.W).max() <= 1e-10


def test_theorem41_first_order_error_is_second_order():
    # ‖δH − F·δH0‖ = O(ε²): fitted log-log slope ≈ 2 (generic H0, exact Schur-complement map)
    K, n, d = 3, 2, 4
    lw, lh, beta = 0.5, 0.3, 2.0
    rng = np.random.default_rng(11)
    H0 = rng.standard_normal((d, K * n)) + 2 * np.repeat(np.eye(d, K), n, axis=1)
    base = P.solve_anchored(H0, K=K, lam_W=lw, lam_H=lh, beta=beta)
    assert base.grad_norm < 1e-13
    resp = P.first_order_response(base.W, base.H, K=K, lam_W=lw, lam_H=lh, beta=beta)
    D = rng.standard_normal(H0.shape)
    eps = np.logspace(-1, -3.5, 6)
    errH, errW = [], []
    for e in eps:
        s = P.solve_anchored(H0 + e * D, K=K, lam_W=lw, lam_H=lh, beta=beta, H_init=base.H)
        dW, dH = resp.apply(e * D)
        errH.append(np.linalg.norm(s.H - base.H - dH))
        errW.append(np.linalg.norm(s.W - base.W - dW))
    slopeH = np.polyfit(np.log(eps), np.log(errH), 1)[0]
    slopeW = np.polyfit(np.log(eps), np.log(errW), 1)[0]
    assert slopeH == pytest.approx(2.0, abs=0.1) and slopeW == pytest.approx(2.0, abs=0.1)


def test_eq5_neumann_map_differs_from_exact_by_order_beta_minus_2():
    K, n, d, lw, lh = 3, 2, 5, 0.8, 0.4
    cm = P.collapsed_minimizer(K=K, n_spl=n, d=d, lam_W=lw, lam_H=lh, seed=3)
    errs = []
    betas = np.array([20.0, 40.0, 80.0, 160.0])
    for beta in betas:
        ex = P.first_order_response(cm.W, cm.H, K=K, lam_W=lw, lam_H=lh, beta=beta).F_H
        ne = P.first_order_response(cm.W, cm.H, K=K, lam_W=lw, lam_H=lh, beta=beta, kind="neumann").F_H
        errs.append(np.linalg.norm(ex - ne, 2))
    assert np.polyfit(np.log(betas), np.log(errs), 1)[0] == pytest.approx(-2.0, abs=0.05)


@settings(max_examples=15)
@given(
    st.integers(2, 4),
    st.integers(1, 3),
    st.integers(1, 3),
    st.floats(0.1, 3.0),
    st.floats(0.05, 0.9),
    st.floats(1.0, 200.0),
)
def test_theorem42_block_spectra_match_svd_of_assembled_blocks(K, n, extra, lw, cfrac, beta):
    d = K + extra
    lh = (cfrac / np.sqrt(lw)) ** 2  # c = √(λ_Hλ_W) = cfrac < 1
    cm = P.collapsed_minimizer(K=K, n_spl=n, d=d, lam_W=lw, lam_H=lh, seed=K + n)
    resp = P.first_order_response(cm.W, cm.H, K=K, lam_W=lw, lam_H=lh, beta=beta, kind="neumann")
    B = P.class_blocks(resp.F_H, K=K, n_spl=n, d=d)
    bs = P.block_spectra(K=K, n_spl=n, d=d, lam_W=lw, lam_H=lh, beta=beta)
    for k in range(K):
        np.testing.assert_allclose(np.linalg.svd(B[k, k], compute_uv=False), bs.intra, atol=1e-10)
        for kk in range(K):
            if kk != k:
                np.testing.assert_allclose(np.linalg.svd(B[k, kk], compute_uv=False), bs.inter, atol=1e-10)
    np.testing.assert_allclose(np.sort(np.linalg.eigvalsh(resp.G))[::-1], bs.G_eigenvalues, atol=1e-10)
    exact = P.first_order_response(cm.W, cm.H, K=K, lam_W=lw, lam_H=lh, beta=beta).F_H
    np.testing.assert_allclose(
        np.sort(np.linalg.eigvalsh(0.5 * (exact + exact.T)))[::-1], np.sort(bs.F_exact_eigenvalues)[::-1], atol=1e-10
    )


def test_theorem31_nc1_decreases_along_the_flow():
    K, n, d = 3, 4, 6
    rng = np.random.default_rng(5)
    H0 = rng.standard_normal((d, K * n)) + 0.7 * np.repeat(rng.standard_normal((d, K)), n, axis=1)
    for lw, lh in ((0.5, 0.3), (2.0, 1.0)):  # c < 1 and c > 1 (flow to 0)
        fl = P.gradient_flow(H0, K=K, lam_W=lw, lam_H=lh, t_max=3.0, n_eval=31)
        assert np.all(np.diff(fl.nc1_tilde) < 0)  # Thm 3.1 (1), strict
        assert np.all(np.diff(fl.T_W) <= 1e-12 * fl.T_W[0])  # Thm 3.1 (2)
        assert np.all(np.diff(fl.T_B) > 0)  # Thm 3.1 (3)
        assert np.all(np.diff(fl.loss) <= 1e-12)  # a gradient flow decreases L
        assert fl.nc1[-1] < fl.nc1[0]  # Papyan's NC1 decreases too (here)


def test_invalid_inputs():
    with pytest.raises(FCTheoryError, match="d"):
        P.collapsed_minimizer(K=4, n_spl=2, d=3, lam_W=0.5, lam_H=0.5)
    with pytest.raises(FCTheoryError, match="multiple"):
        P.central_path_loss(np.ones((3, 5)), K=2, lam_W=0.5, lam_H=0.5)
    with pytest.raises(FCTheoryError, match="lam_H"):
        P.block_spectra(K=3, n_spl=2, d=4, lam_W=2.0, lam_H=2.0, beta=10.0)
