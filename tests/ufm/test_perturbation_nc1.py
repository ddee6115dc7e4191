"""NC1 statistics of the perturbed UFM (``fctheory.ufm.perturbation``) against brute-force sums.

ÑC1 = tr Σ_W / tr Σ_B (the paper's Eq. 3) with Σ_W = (1/N) Σ_{k,i} (h_{k,i} − h̄_k)(h_{k,i} − h̄_k)ᵀ and
Σ_B = (1/K) Σ_k (h̄_k − h̄_G)(h̄_k − h̄_G)ᵀ, h̄_G the mean of the class means. On integer features both
traces are exact rationals (``fractions.Fraction``), so the float result is held to 1e-14: a ddof
(n − 1 for n), a K − 1 for K or the sample mean in Σ_B would all be caught. The flow's NC1 (Papyan's
(1/K)·tr(Σ_W Σ_B⁺)) is checked at t = 0 against the matrices assembled sample by sample.
"""

from fractions import Fraction

import numpy as np
import pytest

from fctheory.ufm import perturbation


def _exact_traces(H, K):
    """(tr Σ_W, tr Σ_B) as Fractions, summing over the samples one by one."""
    d, N = H.shape
    n = N // K
    cols = [[Fraction(int(v)) for v in H[:, j]] for j in range(N)]
    means = [[sum(cols[k * n + i][r] for i in range(n)) / n for r in range(d)] for k in range(K)]
    glob = [sum(means[k][r] for k in range(K)) / K for r in range(d)]
    trW = sum((cols[k * n + i][r] - means[k][r]) ** 2 for k in range(K) for i in range(n) for r in range(d)) / N
    trB = sum((means[k][r] - glob[r]) ** 2 for k in range(K) for r in range(d)) / K
    return trW, trB


def _features(K, n, d, seed, unbalanced_means=True):
    rng = np.random.default_rng(seed)
    H = rng.integers(-5, 6, size=(d, K * n)).astype(float)
    if unbalanced_means:  # class offsets: the mean of the class means differs from 0 and from any one class
        H += np.repeat(rng.integers(-20, 21, size=(d, K)), n, axis=1)
    return H


@pytest.mark.parametrize("K,n,d", [(2, 2, 3), (3, 2, 4), (4, 3, 2), (5, 1, 6), (3, 7, 3)])
def test_nc1_tilde_is_the_trace_ratio_of_exact_covariances(K, n, d):
    H = _features(K, n, d, seed=K * 100 + n)
    trW, trB = _exact_traces(H, K)
    assert perturbation.nc1_tilde(H, K=K) == pytest.approx(float(trW / trB), rel=1e-14, abs=0)


def test_nc1_tilde_is_scale_invariant_and_zero_for_collapsed_features():
    H = _features(3, 4, 3, seed=1)
    base = perturbation.nc1_tilde(H, K=3)
    for s in (2.0**-1000, 3.0, 1e300 / np.abs(H).max()):
        assert perturbation.nc1_tilde(H * s, K=3) == pytest.approx(base, rel=1e-14)
    means = np.repeat(H[:, ::4], 4, axis=1)  # every sample at its class's first sample: Σ_W = 0
    assert perturbation.nc1_tilde(means, K=3) == 0.0


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
    H0 = _features(K, n, d, seed=7) / 10
    fl = perturbation.gradient_flow(H0, K=K, lam_W=0.1, lam_H=0.05, t_max=0.5, n_eval=3)
    trW, trB = _exact_traces(H0 * 10, K)
    assert fl.t[0] == 0.0
    assert fl.nc1_tilde[0] == pytest.approx(float(trW / trB), rel=1e-13)
    assert fl.T_W[0] == pytest.approx(float(trW) / 100, rel=1e-13)  # e^{2λ_H·0} tr Σ_W
    assert fl.T_B[0] == pytest.approx(float(trB) / 100, rel=1e-13)
    assert fl.nc1[0] == pytest.approx(_papyan_nc1(H0, K), rel=1e-10)
    for i in range(3):  # every sample of the flow: ÑC1 = T_W/T_B (the e^{2λ_H t} factors cancel)
        assert fl.nc1_tilde[i] == pytest.approx(fl.T_W[i] / fl.T_B[i], rel=1e-13)
        assert fl.nc1_tilde[i] == pytest.approx(perturbation.nc1_tilde(fl.H[i], K=K), rel=1e-13)
