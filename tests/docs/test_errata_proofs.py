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
    res = fc.check_assumption_B(fc.Task.full(n_c, 1, L).Z, n_c=n_c, sdp=False)
    assert res.holds


def test_every_check_id_named_in_errata_exists():
    """docs/errata.md names proofs_check checks by id (`existence-assumptionA`, ...): each must be registered
    (entry 7 once named `existence-A`, which does not exist)."""
    import re
    from pathlib import Path

    from proofs_check.registry import get_checks

    text = (Path(__file__).resolve().parents[2] / "docs" / "errata.md").read_text()
    # a backticked dash-joined word (the shape of every check id), or anything written after "check"
    named = set(re.findall(r"`([A-Za-z0-9]+(?:-[A-Za-z0-9]+)+)`", text))
    named |= set(re.findall(r"\bchecks? `([^`]+)`", text))
    ids = {c.id for c in get_checks()}
    assert named, "errata.md names no check id: the pattern above no longer matches its wording"
    assert named <= ids, f"unknown check ids in docs/errata.md: {sorted(named - ids)}"
