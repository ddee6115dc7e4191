"""fctheory.risk._kernels: the shifted exponentials of the exact engine's partial scores (bases) against explicit loops."""

import itertools
import math

import numpy as np
import pytest

from fctheory.risk._kernels import bases, bases_serial, scatter_marginals, scatter_marginals_serial


@pytest.mark.parametrize("extreme", [False, True], ids=["split", "extreme"])
@pytest.mark.parametrize("class_major", [False, True])
@pytest.mark.parametrize("kernel", [bases, bases_serial], ids=["parallel", "serial"])
def test_bases_are_the_shifted_exponentials_of_the_prefix_sums_and_their_class_maxima(kernel, class_major, extreme):
    """B = exp(Y − M) in every entry to its relative precision (no absolute slack: the normalisers need small
    entries relatively exact), M the exact maximum of the prefix sums. Random scores: B is formed as products of
    the halves' exponentials. Extreme: class 0 leads the first position by 300 and class 1 the other two by 300
    each, so the halves' maxima sum 300 above the joint one and every entry is exponentiated (the class attaining
    the maximum then gets exp(0) = 1 exactly)."""
    rng = np.random.default_rng(0)
    K, L, n_c, s = 4, 5, 3, 2
    G3 = rng.normal(size=(K, L, n_c * s))
    lo, h = 1, 3
    if extreme:
        G3[0, lo] += 300.0
        G3[1, lo + 1 : lo + h] += 300.0
    conc = rng.integers(0, n_c, size=(2, h))
    M = np.empty((2, s**h))
    if class_major:  # the engine's suffix bases: written through a strided view of a K × (groups·s^h) matrix
        Bt = np.empty((K, 2, s**h))
        kernel(G3, conc, lo, s, Bt.transpose(1, 0, 2), M)
        B = Bt.transpose(1, 0, 2)
    else:
        B = np.empty((2, K, s**h))
        kernel(G3, conc, lo, s, B, M)
    eps = np.finfo(float).eps
    for g in range(2):
        for a, betas in enumerate(itertools.product(range(s), repeat=h)):  # a = Σ_i β_i s^{h−1−i}
            terms = [[G3[j, lo + i, conc[g, i] * s + betas[i]] for i in range(h)] for j in range(K)]
            ref = [sum(t) for t in terms]
            assert M[g, a] == max(ref)
            # Y − M summed in another order (halves) moves exp(Y − M) by ≤ 2h·eps·Σ|terms| relative, plus the
            # roundings of three exponentials and two products
            cond = 2 * h * eps * max(sum(abs(x) for x in t) for t in terms) + 16 * eps
            np.testing.assert_allclose(B[g, :, a], [math.exp(y - max(ref)) for y in ref], rtol=cond, atol=0)
            if extreme:
                assert B[g, :, a].max() == 1.0


@pytest.mark.parametrize("kernel", [scatter_marginals, scatter_marginals_serial], ids=["parallel", "serial"])
@pytest.mark.parametrize("s,h", [(1, 3), (2, 3), (3, 2), (4, 1)])
def test_scatter_adds_the_marginals_of_every_position_to_the_gradient_of_its_word(kernel, s, h):
    rng = np.random.default_rng(1)
    K, n_c, nG, lo, L = 3, 3, 4, 1, 5
    Q = rng.normal(size=(nG, K, s**h))
    conc = rng.integers(0, n_c, size=(nG, h))
    g0 = rng.normal(size=(K, L, n_c * s))
    ref = g0.copy()
    for g in range(nG):
        for a, betas in enumerate(itertools.product(range(s), repeat=h)):  # a = Σ_i β_i s^{h−1−i}
            for i in range(h):
                ref[:, lo + i, conc[g, i] * s + betas[i]] += Q[g, :, a]
    out = g0.copy()
    kernel(Q, conc, lo, s, out)
    # each entry sums at most nG·s^h + 1 terms of size ≤ max|Q|, |g0|, in another order than the loop above
    tol = 4 * (nG * s**h + 1) * np.finfo(float).eps * max(np.abs(Q).max(), np.abs(g0).max())
    np.testing.assert_allclose(out, ref, rtol=0, atol=tol)
    # a strided view (the engine's suffix side) gives the same sums
    Qt = np.ascontiguousarray(Q.transpose(1, 0, 2)).reshape(K, nG * s**h)
    out2 = g0.copy()
    kernel(Qt.reshape(K, nG, s**h).transpose(1, 0, 2), conc, lo, s, out2)
    np.testing.assert_allclose(out2, out, rtol=0, atol=tol)
