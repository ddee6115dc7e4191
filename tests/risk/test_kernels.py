"""fctheory.risk._kernels: the shifted exponentials of the exact engine's partial scores (bases) against explicit loops."""

import itertools
import math

import numpy as np
import pytest

from fctheory.risk._kernels import bases, bases_serial


@pytest.mark.parametrize("kernel", [bases, bases_serial], ids=["parallel", "serial"])
def test_bases_are_the_shifted_exponentials_of_the_prefix_sums_and_their_class_maxima(kernel):
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
            assert M[g, a] == max(ref)
            np.testing.assert_allclose(B[g, :, a], [math.exp(y - max(ref)) for y in ref], rtol=1e-14, atol=1e-14)
            assert B[g, :, a].max() == 1.0  # the class attaining the maximum: exp(0), exactly
