"""fctheory.ufm.perturbation.response: the first-order response of Theorem 4.1 (second-order error, Eq. 5's
Neumann map) and the closed-form block spectra of Theorem 4.2 against the SVD of the assembled blocks."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fctheory.ufm import perturbation as P


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
