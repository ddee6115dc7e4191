"""fctheory.ufm.perturbation.minimizer: Theorem 2.1's collapsed minimiser against a numerical minimum, and ÑC1
(Eq. 3) against brute-force sums in exact rationals.

ÑC1 = tr Σ_W / tr Σ_B with Σ_W = (1/N) Σ_{k,i} (h_{k,i} − h̄_k)(h_{k,i} − h̄_k)ᵀ and
Σ_B = (1/K) Σ_k (h̄_k − h̄_G)(h̄_k − h̄_G)ᵀ, h̄_G the mean of the class means. On integer features both
traces are exact rationals (``fractions.Fraction``), so the float result is held to 1e-14: a ddof
(n − 1 for n), a K − 1 for K or the sample mean in Σ_B would all be caught."""

import numpy as np
import pytest
from hypothesis import given, settings

from fctheory.ufm import perturbation as P

from .cases import exact_traces, features, lam, problem


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


@pytest.mark.parametrize("K,n,d", [(2, 2, 3), (3, 2, 4), (4, 3, 2), (5, 1, 6), (3, 7, 3)])
def test_nc1_tilde_is_the_trace_ratio_of_exact_covariances(K, n, d):
    H = features(K, n, d, seed=K * 100 + n)
    trW, trB = exact_traces(H, K)
    assert P.nc1_tilde(H, K=K) == pytest.approx(float(trW / trB), rel=1e-14, abs=0)


def test_nc1_tilde_is_scale_invariant_and_zero_for_collapsedfeatures():
    H = features(3, 4, 3, seed=1)
    base = P.nc1_tilde(H, K=3)
    for s in (2.0**-1000, 3.0, 1e300 / np.abs(H).max()):
        assert P.nc1_tilde(H * s, K=3) == pytest.approx(base, rel=1e-14)
    means = np.repeat(H[:, ::4], 4, axis=1)  # every sample at its class's first sample: Σ_W = 0
    assert P.nc1_tilde(means, K=3) == 0.0
