"""Equiangular frames (Definitions D and F): exact Grams, dimension rules, the equiangular Gram."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

import fctheory as fc


@given(st.integers(2, 40), st.integers(0, 5), st.booleans(), st.one_of(st.none(), st.integers(0, 2**32 - 1)))
def test_definition_D_frame_has_exact_gram(n_c, extra, mean_zero, seed):
    d = n_c - 1 + int(mean_zero) + extra
    F = fc.equiangular_frame(n_c, d, mean_zero=mean_zero, seed=seed)
    assert F.shape == (d, n_c)
    np.testing.assert_allclose(F.T @ F, fc.equiangular_gram(n_c), rtol=0, atol=2e-15 * n_c)
    np.testing.assert_allclose(F.sum(axis=1), 0, atol=2e-15 * n_c)
    if mean_zero:
        np.testing.assert_allclose(F.sum(axis=0), 0, atol=4e-15 * n_c)


def test_frame_dimension_rules():
    with pytest.raises(fc.FCTheoryError, match="d >= n_c - 1"):
        fc.equiangular_frame(5, 3)
    with pytest.raises(fc.FCTheoryError, match="d >= n_c"):
        fc.equiangular_frame(5, 4, mean_zero=True)


def test_equiangular_gram_is_kappa_I_minus_ones():
    n = 4
    G = fc.equiangular_gram(n)
    assert np.allclose(np.diag(G), 1) and np.allclose(G[0, 1], -1 / 3)
