"""fctheory.ufm.perturbation.objective: the anchored objective (2), its Hessian (App. C), W*(H) and the central
path L(H) with its gradient (App. A, Eq. 7), against direct evaluation and finite differences."""

import numpy as np
import pytest
from hypothesis import given, settings

from fctheory.ufm import perturbation as P

from .cases import lam, problem


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
