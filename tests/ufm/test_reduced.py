"""The CE UFM in the count-group coordinates (fctheory.ufm._reduced): the reduced function against the full
K-class cross-entropy, its gradient, the exact inner minimisers, and the bias-free dual point."""

import math

import numpy as np
import pytest

from fctheory.ufm._reduced import ReducedCE, _bias_free
from fctheory.ufm.groups import count_groups, lift

COUNTS = np.array([6, 3, 3, 2, 2, 2, 1, 0, 0])


def _full_ce(counts, X, b):
    """Σ_k π_k CE(X_k/√π_k + b, e_k) over the present classes, directly (no groups)."""
    pres = np.flatnonzero(counts > 0)
    pi = counts[pres] / counts.sum()
    Z = X / np.sqrt(pi)[None, :] + b[:, None]
    own = Z[pres, np.arange(pres.size)]
    lse = np.log(np.exp(Z - Z.max(axis=0)).sum(axis=0)) + Z.max(axis=0)
    return float(pi @ (lse - own))


@pytest.mark.parametrize("bias", [False, True])
def test_the_reduced_cross_entropy_is_the_full_one_at_the_lifted_point(bias):
    counts = COUNTS if not bias else COUNTS[COUNTS > 0]
    g = count_groups(counts)
    red = ReducedCE(g, 0.05, bias)
    rng = np.random.default_rng(0)
    M = rng.standard_normal((red.G, red.Gp))
    t = np.where(red.multi, rng.standard_normal(red.Gp), 0.0)
    c = rng.standard_normal(red.G) if bias else np.zeros(red.G)
    f = red.evaluate(M, t, c)[0]
    beta = np.where(red.multi, t / np.maximum(red.mp - 1, 1), 0.0)
    Mf = np.zeros((g.G, g.Gp))
    Mf[: red.G] = M
    assert f == pytest.approx(_full_ce(counts, lift(g, Mf, beta), c[g.label]), rel=1e-13)


@pytest.mark.parametrize("bias", [False, True])
def test_the_gradient_of_F_matches_finite_differences(bias):
    counts = COUNTS if not bias else COUNTS[COUNTS > 0]
    red = ReducedCE(count_groups(counts), 0.03, bias)
    rng = np.random.default_rng(1)
    M = rng.standard_normal((red.G, red.Gp))
    _, G = red(M)
    D = rng.standard_normal(M.shape)
    h = 1e-6
    fd = (red(M + h * D)[0] - red(M - h * D)[0]) / (2 * h)
    assert fd == pytest.approx(float(np.sum(G * D)), rel=1e-7, abs=1e-9)


@pytest.mark.parametrize("bias", [False, True])
def test_the_inner_minimisers_are_exact(bias):
    counts = COUNTS if not bias else COUNTS[COUNTS > 0]
    lam = 0.36  # between the √π of the groups (0.56, 0.40, 0.32, 0.23): one of two multi-class groups collapses
    red = ReducedCE(count_groups(counts), lam, bias)
    M = np.random.default_rng(2).standard_normal((red.G, red.Gp))
    t, c = red.inner(M)
    _, P, omo, _ = red.evaluate(M, t, c)
    gt = red.grad_t(P, omo)
    act = red.active
    assert act.any() and (red.multi & ~act).any()
    np.testing.assert_allclose(gt[act], -lam, rtol=1e-12)  # ∂f/∂t_b = −λ where t_b > 0
    assert np.all(t[act] > 0) and np.all(t[~act] == 0)
    np.testing.assert_allclose(gt[red.multi & ~act], -red.sq[red.multi & ~act], rtol=1e-12)  # −√π_b at t_b = 0
    if bias:
        idx = red.idx
        Ptot = P.copy()
        Ptot[idx, idx] += 1.0 - omo
        np.testing.assert_allclose(Ptot @ red.w - red.w, 0.0, atol=1e-15)  # ∂f/∂c = 0


def test_the_bias_free_point_has_no_bias_part_and_refuses_a_negative_probability():
    counts = COUNTS[COUNTS > 0]
    red = ReducedCE(count_groups(counts), 0.05, True)
    rng = np.random.default_rng(3)
    M = rng.standard_normal((red.G, red.Gp))
    t, c = red.inner(M)
    c = c + 1e-3 * rng.standard_normal(red.G)  # a little off the optimal bias: a residual to correct
    _, P, omo, ell = red.evaluate(M, t, c)
    Q, qomo = _bias_free(red, P, omo, ell)
    idx = red.idx
    Qt = Q.copy()
    Qt[idx, idx] += 1.0 - qomo
    assert np.all(Q >= 0) and np.all(qomo <= 1)
    np.testing.assert_allclose(Qt.sum(axis=0), 1.0, atol=1e-14)  # every softmax still sums to 1
    np.testing.assert_allclose(Qt @ red.w - red.w, 0.0, atol=1e-15)  # Σ_b w_b (q_b − e_b) = 0
    # a bias far off the optimum: some class would have to give up more than its own probability
    _, P, omo, ell = red.evaluate(M, t, c + 30.0 * np.arange(red.G))
    assert _bias_free(red, P, omo, ell) == (None, None)


def test_the_trivial_threshold_of_a_collapsing_group_is_its_share():
    # one group of 4 equal classes: t_b > 0 iff √π_b = 1/2 > λ (the balanced threshold Kq = 1)
    for lam, active in ((0.49, True), (0.5, False), (0.51, False)):
        red = ReducedCE(count_groups([5, 5, 5, 5]), lam, False)
        assert bool(red.active[0]) == active
        assert math.isclose(red.sq[0], 0.5)
