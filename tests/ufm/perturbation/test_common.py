"""fctheory.ufm.perturbation._common: the shape checks and refusals every entry point shares."""

import numpy as np
import pytest

from fctheory import FCTheoryError
from fctheory.ufm import perturbation as P
from fctheory.ufm.perturbation._common import _solve


def test_invalid_inputs():
    with pytest.raises(FCTheoryError, match="d"):
        P.collapsed_minimizer(K=4, n_spl=2, d=3, lam_W=0.5, lam_H=0.5)
    with pytest.raises(FCTheoryError, match="multiple"):
        P.central_path_loss(np.ones((3, 5)), K=2, lam_W=0.5, lam_H=0.5)
    with pytest.raises(FCTheoryError, match="lam_H"):
        P.block_spectra(K=3, n_spl=2, d=4, lam_W=2.0, lam_H=2.0, beta=10.0)


def test_w_must_match_h_and_features_must_be_finite():
    H = np.ones((3, 4))
    with pytest.raises(FCTheoryError, match=r"^W=.*\(K, d\) = \(2, 3\)"):
        P.anchored_objective(np.ones((2, 4)), H, None, K=2, lam_W=0.5, lam_H=0.5, beta=0.0)
    with pytest.raises(FCTheoryError, match="^H=.*finite"):
        P.optimal_W(np.full((3, 4), np.inf), K=2, lam_W=0.5)


def test_a_singular_solve_is_the_project_error_naming_the_parameter():
    with pytest.raises(FCTheoryError, match="^lam_W=0.5 is invalid: B is singular to working precision"):
        _solve(np.zeros((2, 2)), np.eye(2), "lam_W", 0.5, "B")
    with pytest.raises(FCTheoryError, match="^beta=2.0 is invalid: the solve with F overflows float64"):
        _solve(np.eye(2) * 1e-300, np.full((2, 2), 1e300), "beta", 2.0, "F")
