"""The Newton polish of the reduced CE problem (fctheory.ufm._newton): its Hessian against finite differences,
and the small-λ certificates it makes possible."""

import math
import time

import numpy as np
import pytest

from fctheory import ufm
from fctheory._nuclear import solve
from fctheory.ufm import _newton as nw
from fctheory.ufm._reduced import ReducedCE, certify_ce
from fctheory.ufm.groups import count_groups

COUNTS = np.array([10, 5, 5, 3, 2, 1, 1, 1])


def _reduced(lam=0.01):
    red = ReducedCE(count_groups(COUNTS), lam, False)
    M = np.random.default_rng(0).standard_normal((red.G, red.Gp))
    return red, M


def test_the_hessian_of_F_matches_finite_differences_of_its_gradient():
    red, M = _reduced()
    red(M)
    t = red.t.copy()  # the inner minimiser at M (the finite differences below move it)
    hv = red.hessian(M, t)
    D = np.random.default_rng(1).standard_normal(M.shape)
    h = 1e-6
    fd = (red(M + h * D)[1] - red(M - h * D)[1]) / (2 * h)
    np.testing.assert_allclose(hv(D), fd, atol=1e-8 * np.abs(fd).max())
    # the diagonal used by the preconditioner is the diagonal of that operator
    diag = red.hessian_diagonal(M, t)
    E = np.zeros_like(M)
    E[2, 1] = 1.0
    assert hv(E)[2, 1] == pytest.approx(diag[2, 1], rel=1e-12)


def test_the_newton_system_is_the_hessian_of_g_in_the_svd_basis():
    red, M = _reduced()
    ref = nw._Reflector(np.sqrt(red.m))
    N = ref.to_N(M)
    lam = red.lam

    def grad(Nn):
        _, GM = red(ref.to_M(Nn))
        U, _, Vt = np.linalg.svd(Nn, full_matrices=False)
        return ref.to_N(GM) + lam * U @ Vt

    _, GM = red(ref.to_M(N))
    step = nw._Step(red, ref, N, GM)
    np.testing.assert_allclose(step.grad, grad(N), atol=1e-14)
    D = np.random.default_rng(2).standard_normal(N.shape)
    X1, X2 = step.U.T @ D @ step.V1, step.U.T @ D @ step.V2
    Y1, Y2 = step.apply(X1, X2)
    HD = step.U @ Y1 @ step.V1.T + step.U @ Y2 @ step.V2.T
    h = 1e-6
    fd = (grad(N + h * D) - grad(N - h * D)) / (2 * h)
    np.testing.assert_allclose(HD, fd, atol=1e-7 * np.abs(fd).max())


def test_newton_certifies_where_the_first_order_solver_stalls():
    counts = [10, 5, 2, 1]
    lam = 1e-6  # λ = √(Nλ_Wλ_H): far below every √π_k, logits ~ log(1/λ), the softmax saturated
    red = ReducedCE(count_groups(counts), lam, False)
    M, *_ = solve(red, lam, np.zeros((red.G, red.Gp)), lipschitz=0.5, tol=1e-10, maxiter=20000,
                  deadline=time.perf_counter() + 60, floor=red.floor)  # fmt: skip
    g, lb, _, _ = certify_ce(red, M, *red.inner(M))
    assert g - lb > 1e-10 * g  # the first-order solver alone stops short
    _, gn, lbn = nw.newton_polish(red, M, tol=1e-10, deadline=time.perf_counter() + 60)
    assert gn - lbn <= 1e-10 * gn
    N = sum(counts)
    r = ufm.ce(counts=counts, lam_W=lam / math.sqrt(N), lam_H=lam / math.sqrt(N))
    assert r.rel_gap <= 1e-10 and r.value == pytest.approx(gn, rel=1e-12)


def test_nothing_is_done_at_a_rank_deficient_point():
    red, _ = _reduced()
    M = np.zeros((red.G, red.Gp))
    M[0, 0] = 1.0  # rank one
    out, g, lb = nw.newton_polish(red, M, tol=1e-10, deadline=time.perf_counter() + 10)
    np.testing.assert_array_equal(out, M)
