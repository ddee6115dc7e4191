"""Errata in the appendix proofs of Feature Collapse (see docs/errata.md)."""
from fractions import Fraction
from math import comb

import numpy as np
import pytest

import fctheory as fc


@pytest.mark.parametrize("n_c,L", [(2, 4), (3, 3), (3, 4), (4, 3)])
def test_lemma_B_proof_same_concept_ratio_is_C_Lm1_r_over_C_L_r(n_c, L):
    """Among the latent variables at distance r from z_k, the fraction that keeps concept z_kℓ at
    position ℓ is C(L−1, r)/C(L, r) = (L−r)/L (corrected), not C(L−1, r−1)/C(L, r) = r/L (printed)."""
    task = fc.Task.full(n_c, 1, L)
    D = task.hamming()
    k, ell = 0, 0
    for r in range(1, L):
        ring = np.nonzero(D[k] == r)[0]
        frac = Fraction(int(np.sum(task.Z[ring, ell] == task.Z[k, ell])), len(ring))
        assert frac == Fraction(comb(L - 1, r), comb(L, r))  # corrected
        if 2 * r != L:
            assert frac != Fraction(comb(L - 1, r - 1), comb(L, r))  # printed


@pytest.mark.parametrize("n_c,L", [(2, 2), (2, 3), (3, 2)])
def test_lemma_C_holds_for_n_c_below_4_although_its_proof_uses_a_fourth_concept(n_c, L):
    """Lemma C (Assumption B on the full latent set) holds for n_c = 2, 3 too, checked exactly."""
    res = fc.check_assumption_B(fc.Task.full(n_c, 1, L).Z, n_c, sdp=False)
    assert res.holds
