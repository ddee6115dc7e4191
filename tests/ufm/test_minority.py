"""Minority collapse and the SELI geometry (fctheory.ufm.minority)."""

import math

import cvxpy as cp
import numpy as np
import pytest

from fctheory import FCTheoryError, ufm
from fctheory.ufm import minority as mi

# (K_maj, K_min, n_maj, λ, loss, bias): three settings whose threshold falls inside the integer n_min grid
SETTINGS = [
    (2, 3, 1000, 3.5e-3, "ce", False),
    (3, 2, 600, 5e-3, "ce", True),
    (1, 4, 2000, 2e-3, "mse", False),
]


@pytest.mark.parametrize("K_maj,K_min,n_maj,lam,loss,bias", SETTINGS)
def test_the_closed_form_threshold_agrees_with_a_fine_grid_of_certified_optima(K_maj, K_min, n_maj, lam, loss, bias):
    # every class solved as its own group (exchangeable=False): the collapse comes out of the certified
    # optimisation, not out of the t_b = 0 rule the symmetry reduction uses
    th = mi.minority_collapse_threshold(K_maj=K_maj, K_min=K_min, n_maj=n_maj, lam_W=lam, lam_H=lam)
    n_crit = n_maj / th.r_ib
    assert 2 < n_crit < n_maj / 2
    for n_min in range(int(n_crit) - 5, int(n_crit) + 7):
        counts = [n_maj] * K_maj + [n_min] * K_min
        spread = mi.within_group_spread(counts, lam_W=lam, lam_H=lam, loss=loss, bias=bias, exchangeable=False)
        collapsed = th.collapsed(n_maj / n_min)
        assert collapsed == (n_min <= n_crit)
        if collapsed:
            assert spread[n_min] < 1e-9, (n_min, spread)
        else:
            assert spread[n_min] > 1e-3, (n_min, spread)
        np.testing.assert_array_equal(
            mi.collapsed_classes(counts, lam_W=lam, lam_H=lam), np.array(counts) == n_min if collapsed else False
        )


def test_at_the_threshold_the_minority_share_equals_lambda_squared():
    K_maj, K_min, n_maj, lam_W, lam_H = 3, 5, 250, 2e-3, 7e-3
    th = mi.minority_collapse_threshold(K_maj=K_maj, K_min=K_min, n_maj=n_maj, lam_W=lam_W, lam_H=lam_H)
    n_min = n_maj / th.r_ib
    N = K_maj * n_maj + K_min * n_min
    assert (n_min / N) == pytest.approx(N * lam_W * lam_H, rel=1e-12)
    assert th.collapsed(th.r_ib * (1 + 1e-9)) and not th.collapsed(th.r_ib * (1 - 1e-9))


def test_strong_regularisation_collapses_the_minority_at_every_ratio():
    th = mi.minority_collapse_threshold(K_maj=2, K_min=2, n_maj=100, lam_W=0.03, lam_H=0.03)  # a = 0.36 > 1/4
    assert th.always and th.collapsed(1.0) and th.collapsed(1e6)
    # a ≤ 1/4 but the larger root below 1: collapsed near balance too (the trivial regime)
    th = mi.minority_collapse_threshold(K_maj=1, K_min=8, n_maj=100, lam_W=0.014, lam_H=0.014)
    assert not th.always and th.r_low is not None and th.collapsed(1.0) and th.collapsed(th.r_ib * 2)
    assert not th.collapsed(math.sqrt(th.r_low * th.r_ib))


@pytest.mark.parametrize("loss", ["ce", "mse"])
def test_collapsed_classes_match_the_certified_optimum(loss):
    counts = [40, 9, 9, 5, 5, 5, 3, 3, 1, 0]
    for lam in (1e-3, 2.5e-3, 5e-3):
        fn = getattr(ufm, loss)
        r = fn(counts=counts, lam_W=lam, lam_H=lam)
        np.testing.assert_array_equal(r.collapsed, mi.collapsed_classes(counts, lam_W=lam, lam_H=lam))


# ---------------------------------------------------------------------------------------------- SELI
@pytest.mark.parametrize("counts", [[10, 5, 2, 1], [7, 7, 1, 1, 1]])
def test_seli_is_the_minimum_nuclear_norm_interpolation_of_the_margins(counts):
    # the UF-SVM in X = Z̄ diag(√π): min ‖X‖_* subject to x_kk − x_jk ≥ √π_k, solved by cvxpy
    c = np.array(counts)
    K, pi = c.size, c / c.sum()
    X = cp.Variable((K, K))
    cons = [X[k, k] - X[j, k] >= math.sqrt(pi[k]) for k in range(K) for j in range(K) if j != k]
    prob = cp.Problem(cp.Minimize(cp.normNuc(X)), cons)
    prob.solve(solver="CLARABEL")
    S = mi.seli_geometry(counts)
    assert prob.value == pytest.approx(S.nuclear_norm, rel=1e-7)
    np.testing.assert_allclose(X.value, S.X, atol=1e-6)


def test_seli_grams_are_those_of_the_papers_svd_of_the_simplex_encoded_labels():
    counts = np.array([6, 3, 3, 1])
    K, N = counts.size, counts.sum()
    Y = np.zeros((K, N))
    Y[np.repeat(np.arange(K), counts), np.arange(N)] = 1.0
    Zhat = (np.eye(K) - 1.0 / K) @ Y
    V, lam, Ut = np.linalg.svd(Zhat, full_matrices=False)
    WW = (V * lam) @ V.T
    HH = (Ut.T * lam) @ Ut
    S = mi.seli_geometry(counts)
    np.testing.assert_allclose(S.W_gram, WW / np.trace(WW), atol=1e-13)
    y = np.repeat(np.arange(K), counts)
    first = np.searchsorted(y, np.arange(K))  # one sample of each class: features collapse
    np.testing.assert_allclose(S.means_gram, HH[np.ix_(first, first)] / np.trace(WW), atol=1e-13)


def test_the_regularised_optimum_approaches_seli_at_rate_one_over_log_lambda():
    counts = [7, 7, 1, 1, 1]
    N = sum(counts)
    S = mi.seli_geometry(counts)
    d = []
    lams = [1e-2, 1e-3, 1e-4, 1e-5]
    for lam in lams:
        r = ufm.ce(counts=counts, lam_W=lam / math.sqrt(N), lam_H=lam / math.sqrt(N))
        assert r.certified
        assert not r.collapsed.any()  # π_min > λ²: no minority collapse on the way to SELI
        Wg = np.asarray(r.W_gram)
        d.append(float(np.linalg.norm(Wg / np.trace(Wg) - S.W_gram)))
    assert all(a > b for a, b in zip(d, d[1:]))  # closer as λ → 0
    scaled = [x * math.log(1 / lam) for x, lam in zip(d, lams)]  # d ≈ c/log(1/λ)
    assert max(scaled) / min(scaled) < 1.25


def test_phase_diagram_matches_the_threshold_and_plots(tmp_path):
    ratios = np.array([2.0, 5.0, 10.0, 20.0, 50.0])
    lams = np.array([2e-3, 5e-3])
    D = mi.minority_phase_diagram(K_maj=2, K_min=2, n_maj=500, ratios=ratios, lams=lams)
    for i, lam in enumerate(lams):
        th = mi.minority_collapse_threshold(K_maj=2, K_min=2, n_maj=500, lam_W=lam, lam_H=lam)
        for j, r in enumerate(ratios):
            n_min = max(1, round(500 / r))
            assert (D.spread[i, j] < 1e-9) == th.collapsed(500 / n_min)
    pytest.importorskip("matplotlib")
    path = D.plot(tmp_path / "phase.png")
    assert (tmp_path / "phase.png").stat().st_size > 1000 and path.endswith("phase.png")


def test_bad_arguments_are_refused():
    with pytest.raises(FCTheoryError, match="^K_min="):
        mi.minority_collapse_threshold(K_maj=2, K_min=1, n_maj=10, lam_W=1e-3, lam_H=1e-3)
    with pytest.raises(FCTheoryError, match="^counts="):
        mi.collapsed_classes([0, 0], lam_W=1e-3, lam_H=1e-3)
