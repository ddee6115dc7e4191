"""fctheory.risk._kernels: the partial-score tables of the exact engine (bases) against explicit loops."""

import itertools

import numpy as np
import pytest

from fctheory.risk._kernels import bases, bases_serial


@pytest.mark.parametrize("kernel", [bases, bases_serial], ids=["parallel", "serial"])
def test_bases_are_the_prefix_sums_of_scores_and_their_class_maxima(kernel):
    rng = np.random.default_rng(0)
    K, L, n_c, s = 4, 5, 3, 2
    G3 = rng.normal(size=(K, L, n_c * s))
    lo, h = 1, 3
    conc = rng.integers(0, n_c, size=(2, h))
    B = np.empty((2, K, s**h))
    M = np.empty((2, s**h))
    kernel(G3, conc, lo, s, B, M)
    for g in range(2):
        for a, betas in enumerate(itertools.product(range(s), repeat=h)):  # a = Σ_i β_i s^{h−1−i}
            ref = [sum(G3[j, lo + i, conc[g, i] * s + betas[i]] for i in range(h)) for j in range(K)]
            np.testing.assert_allclose(B[g, :, a], ref, rtol=1e-14, atol=1e-14)
            assert M[g, a] == max(ref)
