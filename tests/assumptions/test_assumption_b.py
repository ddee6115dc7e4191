"""fctheory.assumptions.assumption_b: the equations (44) solved exactly and the SDP certificate outside 𝒜."""

import numpy as np
import pytest
from hypothesis import given

from fctheory import Task
from fctheory.assumptions import check_assumption_B

from .cases import FULL, latent_sets


# ------------------------------------------------------------------------------------- Assumption B
@pytest.mark.parametrize("n_c,L", FULL[1:6])
def test_lemma_C_assumption_B_holds_on_full_latent_set(n_c, L):
    res = check_assumption_B(Task.full(n_c, 1, L))
    assert res.holds and res.dim == 2 and res.certificate is None


def _gamma(Z, n_c, j, k):
    L = Z.shape[1]
    Zj = np.zeros((n_c, L))
    Zk = np.zeros((n_c, L))
    Zj[Z[j], np.arange(L)] = 1
    Zk[Z[k], np.arange(L)] = 1
    return Zj @ (Zj - Zk).T


def _spread_44(A, Z, n_c):
    D = (Z[:, None] != Z[None]).sum(-1)
    worst = 0.0
    for r in range(1, Z.shape[1] + 1):
        v = [np.sum(A * _gamma(Z, n_c, j, k)) for j, k in np.argwhere(D == r)]
        if v:
            worst = max(worst, max(v) - min(v))
    return worst


@given(latent_sets(max_K=10))
def test_assumption_B_solution_space_contains_span_I_11T(case):
    """<aI + b11^T, Gamma^(j,k)> = a dist(z_j, z_k): the set A always solves (44), so dim >= 2."""
    n_c, Z = case
    res = check_assumption_B(Z, n_c=n_c, sdp=False)
    assert res.dim >= 2
    for A in (np.eye(n_c), np.ones((n_c, n_c))):
        assert _spread_44(A, Z, n_c) <= 1e-12
    for B in res.basis:
        assert _spread_44(B, Z, n_c) <= 1e-9 * max(1.0, np.abs(B).max())
    assert res.holds == (res.dim == 2)


@pytest.mark.parametrize("seed", range(3))
def test_assumption_B_sdp_certificate_is_psd_solution_outside_A(seed):
    task = Task.random(3, 1, 3, 3, seed=seed)
    res = check_assumption_B(task)
    assert not res.holds and res.dim > 2
    A = res.certificate
    assert res.sdp_status == "optimal"
    assert np.linalg.eigvalsh(A).min() > 1e-6
    assert _spread_44(A, task.Z, 3) <= 1e-10
    # distance from span{I, 11ᵀ}
    Q = np.linalg.qr(np.stack([np.eye(3).ravel(), np.ones(9)], 1))[0]
    assert np.linalg.norm(A.ravel() - Q @ (Q.T @ A.ravel())) > 1e-3
    # the analytic certificate I + B/(2||B||) is positive definite and solves (44) too
    Aa = res.analytic_certificate
    assert np.linalg.eigvalsh(Aa).min() >= 0.5 - 1e-12
    assert _spread_44(Aa, task.Z, 3) <= 1e-10


def test_assumption_B_holds_for_moderate_random_K():
    # the paper calls B "mild": with K = 10 of 27 latent variables it holds on these seeds
    assert all(check_assumption_B(Task.random(3, 1, 3, 10, seed=s)).holds for s in range(3))
