"""fctheory.ufm.perturbation.solvers: the minimiser of (2) (Corollary 2.2) and the central-path flow of Theorem 3.1
with its NC monitors (Papyan's NC1 checked at t = 0 against the matrices assembled sample by sample)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fctheory.ufm import perturbation as P

from .cases import exact_traces, features, lam, problem


@settings(max_examples=10)
@given(problem(), lam, lam, st.floats(0.1, 100))
def test_corollary22_anchor_at_a_minimiser_returns_it(pr, lw, lh, beta):
    K, n, d, rng = pr
    cm = P.collapsed_minimizer(K=K, n_spl=n, d=d, lam_W=lw, lam_H=lh, seed=2)
    sol = P.solve_anchored(cm.H, K=K, lam_W=lw, lam_H=lh, beta=beta)
    assert np.abs(sol.H - cm.H).max() <= 1e-10 and np.abs(sol.W - cm.W).max() <= 1e-10


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


def _papyan_nc1(H, K):
    d, N = H.shape
    n = N // K
    mu = np.stack([H[:, k * n : (k + 1) * n].mean(axis=1) for k in range(K)], axis=1)
    muG = mu.mean(axis=1)
    SW = np.zeros((d, d))
    for k in range(K):
        for i in range(n):
            v = H[:, k * n + i] - mu[:, k]
            SW += np.outer(v, v) / N
    SB = sum(np.outer(mu[:, k] - muG, mu[:, k] - muG) for k in range(K)) / K
    w, V = np.linalg.eigh(SB)
    keep = w > 1e-12 * w.max()
    SBp = (V[:, keep] / w[keep]) @ V[:, keep].T
    return float(np.trace(SW @ SBp)) / K


def test_gradient_flow_records_both_nc1_statistics_and_the_traces_at_t0():
    K, n, d = 3, 4, 4
    H0 = features(K, n, d, seed=7) / 10
    fl = P.gradient_flow(H0, K=K, lam_W=0.1, lam_H=0.05, t_max=0.5, n_eval=3)
    trW, trB = exact_traces(H0 * 10, K)
    assert fl.t[0] == 0.0
    assert fl.nc1_tilde[0] == pytest.approx(float(trW / trB), rel=1e-13)
    assert fl.T_W[0] == pytest.approx(float(trW) / 100, rel=1e-13)  # e^{2λ_H·0} tr Σ_W
    assert fl.T_B[0] == pytest.approx(float(trB) / 100, rel=1e-13)
    assert fl.nc1[0] == pytest.approx(_papyan_nc1(H0, K), rel=1e-10)
    for i in range(3):  # every sample of the flow: ÑC1 = T_W/T_B (the e^{2λ_H t} factors cancel)
        assert fl.nc1_tilde[i] == pytest.approx(fl.T_W[i] / fl.T_B[i], rel=1e-13)
        assert fl.nc1_tilde[i] == pytest.approx(P.nc1_tilde(fl.H[i], K=K), rel=1e-13)
