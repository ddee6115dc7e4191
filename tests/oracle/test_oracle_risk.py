"""Oracles for every public number of the exact-risk package.

Reference: the independent enumeration of tests/oracle/oracles.py (itertools over sentences, explicit
score loops, stable CE, complex-step LayerNorm Jacobian) and closed-form counts.

Checklist (field -> test)
-------------------------
RiskResult.R, .R0, .penalty        -> test_public_wrappers_equal_enumeration (true_risk, unregularized_risk,
                                      true_risk_grad, evaluate_risk risk-only and with gradient); kernel paths:
                                      tests/oracle/test_kernel_paths.py
RiskResult.grad_W, .grad_U, .grad_norm -> test_public_wrappers_equal_enumeration
RiskResult.n_fallback              -> test_n_fallback_counts_underflowed_normalizers (0 for moderate weights,
                                      > 0 and ≤ K·s_c^L for huge ones; identical risk-only / gradient)
RiskResult.pairs, .seconds         -> test_pairs_and_seconds
ExpectedMargins.scores, .matrix, .by_distance, .pairs_at_distance, .alignment
                                   -> test_expected_margins_equal_enumeration[h, h*]
CostEstimate.pairs, .flops, .split, .tiles, .block, .bytes, .seconds -> test_cost_estimate_fields
class_sentences                    -> test_class_sentences_equal_itertools
MinimizeResult.R, .R0, .grad_norm, .success, .nit, .nfev, .history, .W, .U
                                   -> test_minimize_result_fields_equal_enumeration_at_the_returned_point
load_weights                       -> test_load_weights_round_trip
"""

import math

import numpy as np
import pytest

import fctheory as fc
from tests.oracle import oracles as O
from fctheory.risk import (
    class_sentences,
    estimate_cost,
    evaluate_risk,
    expected_margins,
    load_weights,
    minimize_true_risk,
    true_risk,
    true_risk_grad,
    unregularized_risk,
)

RTOL = 1e-12


def _setup(ln, seed=0, K=6, scale=1.0):
    t = fc.Task.random(3, 2, 2, K, mu=[0.7, 0.3], seed=seed)
    rng = np.random.default_rng(seed)
    W = scale * rng.standard_normal((3, t.n_w))
    U = scale * rng.standard_normal((t.K, 6))
    return t, W, U


@pytest.mark.parametrize("ln,eps", [(False, 0.0), (True, 0.0), (True, 0.01)])
def test_public_wrappers_equal_enumeration(ln, eps):
    t, W, U = _setup(ln)
    lam = 0.03
    o = O.my_risk(t.Z, t.s_c, t.mu, W, U, lam, ln, eps, grad=True)
    assert abs(true_risk(t, W, U, lam, layernorm=ln, eps=eps) - o["R"]) <= RTOL * o["R"]
    assert abs(unregularized_risk(t, W, U, layernorm=ln, eps=eps) - o["R0"]) <= RTOL * o["R0"]
    R, gW, gU = true_risk_grad(t, W, U, lam, layernorm=ln, eps=eps)
    assert abs(R - o["R"]) <= RTOL * o["R"]
    assert O.rel(gW, o["grad_W"]) <= RTOL and O.rel(gU, o["grad_U"]) <= RTOL
    for grad in (False, True):
        r = evaluate_risk(t, W, U, lam, layernorm=ln, eps=eps, grad=grad)
        assert abs(r.R - o["R"]) <= RTOL * o["R"] and abs(r.R0 - o["R0"]) <= RTOL * o["R0"]
        assert abs(r.penalty - o["penalty"]) <= 1e-15 * o["penalty"]
        assert abs(r.R - (r.R0 + r.penalty)) <= 1e-15 * r.R
        if grad:
            gn = math.sqrt(np.sum(o["grad_W"] ** 2) + np.sum(o["grad_U"] ** 2))
            assert abs(r.grad_norm - gn) <= RTOL * gn


def test_n_fallback_counts_underflowed_normalizers():
    t = fc.Task.full(2, 2, 3, mu=[0.6, 0.4])
    F = O.simplex_frame(2, 2)
    W, U = O.type3_weights(t.Z, 2, 2, 3, 2, 1.0, [1.0, 0.8], F=F)
    assert evaluate_risk(t, W, U, 0.0).n_fallback == 0
    # scores differ by ≥ 2·c·r·κ per differing position; at c = r = 40 every other class is
    # e^{−6400} below: S′ = Σ_{j≠k} e^{y_j − max} underflows for every (sentence, class)
    W, U = O.type3_weights(t.Z, 2, 2, 3, 2, 40.0, [40.0, 40.0], F=F)
    counts = [evaluate_risk(t, W, U, 0.0, grad=g, jit=j).n_fallback for g in (False, True) for j in (None, False)]
    assert len(set(counts)) == 1
    assert 0 < counts[0] <= t.K * t.s_c**t.L


def test_pairs_and_seconds():
    t, W, U = _setup(False)
    r = evaluate_risk(t, W, U, 0.1)
    assert r.pairs == t.K * t.s_c**t.L * t.K
    assert 0 <= r.seconds < 60


@pytest.mark.parametrize("ln", [False, True])
def test_expected_margins_equal_enumeration(ln):
    t = fc.Task.random(3, 2, 3, 11, mu=[0.8, 0.2], seed=4)
    rng = np.random.default_rng(1)
    d = 3
    W = rng.standard_normal((d, t.n_w))
    U = rng.standard_normal((t.K, t.L * d))
    em = expected_margins(t, W, U, layernorm=ln)
    V = O.my_phi(W) if ln else W
    K, L = t.K, t.L
    ybar = np.zeros((K, K))
    for k in range(K):
        for x, p in O.sentences_of(t.Z[k], t.s_c, t.mu):
            ybar[k] += p * O.my_scores(V, U, x, K, L, d)
    np.testing.assert_allclose(em.scores, ybar, rtol=1e-12, atol=1e-13)
    M = np.diag(ybar)[:, None] - ybar
    np.testing.assert_allclose(em.matrix, M, rtol=1e-12, atol=1e-13)
    assert abs(em.alignment - np.trace(ybar)) <= 1e-12 * np.abs(ybar).sum()
    dist = np.array([[int(np.sum(t.Z[k] != t.Z[j])) for j in range(K)] for k in range(K)])
    for r in range(L + 1):
        sel = dist == r
        assert em.pairs_at_distance[r] == sel.sum()
        if sel.sum() == 0:
            assert math.isnan(em.by_distance[r])
        else:
            assert em.by_distance[r] == pytest.approx(M[sel].mean(), rel=1e-12, abs=1e-13)


def test_cost_estimate_fields():
    t = fc.Task.random(3, 3, 5, 40, seed=0)
    for grad in (False, True):
        e = estimate_cost(t, d=4, grad=grad)
        assert e.pairs == 40 * 3**5 * 40
        assert e.flops == pytest.approx(2.0 * 40 * 39 * 3**5 * (3 if grad else 1), rel=1e-15)
        assert e.split == 3  # ⌈L/2⌉
        nA = len({tuple(z[:3]) for z in t.Z})
        nB = len({tuple(z[3:]) for z in t.Z})
        assert 1 <= e.tiles[0] <= nA and 1 <= e.tiles[1] <= nB
        assert 1 <= e.block <= 40 and e.bytes > 0 and e.seconds > 0


@pytest.mark.parametrize("mu", ["uniform", [0.5, 0.3, 0.2]])
def test_class_sentences_equal_itertools(mu):
    t = fc.Task.random(3, 3, 3, 5, mu=mu, seed=1)
    for k in range(t.K):
        X, D = class_sentences(t, k)
        ref = list(O.sentences_of(t.Z[k], t.s_c, O.word_probs(mu, 3)))
        assert X.shape == (27, 3)
        got = sorted(zip(map(tuple, X.tolist()), D))
        exp = sorted((tuple(x), p) for x, p in ref)
        for (xa, pa), (xb, pb) in zip(got, exp):
            assert xa == xb and abs(pa - pb) <= 1e-16
        assert abs(math.fsum(D) - 1) <= 1e-15


def test_minimize_result_fields_equal_enumeration_at_the_returned_point():
    t = fc.Task.full(2, 2, 2, mu=[0.7, 0.3])
    W, U, res = minimize_true_risk(t, d=3, lam=0.05, seed=0, gtol=1e-9)
    o = O.my_risk(t.Z, t.s_c, t.mu, W, U, 0.05, grad=True)
    assert np.array_equal(res.W, W) and np.array_equal(res.U, U)
    assert abs(res.R - o["R"]) <= RTOL * o["R"] and abs(res.R0 - o["R0"]) <= RTOL * o["R0"]
    gn = math.sqrt(np.sum(o["grad_W"] ** 2) + np.sum(o["grad_U"] ** 2))
    assert abs(res.grad_norm - gn) <= 1e-6 * gn + 1e-15  # a tiny norm: relative noise is large
    assert res.success == (res.grad_norm <= 1e-9) and res.success
    assert res.nit >= 1 and res.nfev >= res.nit
    assert len(res.history) == res.nit + 1 and res.history[-1] == pytest.approx(res.R, rel=1e-14)
    assert all(b <= a + 1e-13 * abs(a) for a, b in zip(res.history, res.history[1:]))  # monotone descent
    assert isinstance(res.message, str) and res.seconds >= 0


def test_load_weights_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    W, U = rng.standard_normal((3, 6)), rng.standard_normal((9, 6))
    p = tmp_path / "w.npz"
    np.savez(p, W=W, U=U, Z=np.arange(18).reshape(9, 2))
    W2, U2, extra = load_weights(p)
    assert np.array_equal(W2, W) and np.array_equal(U2, U)
    assert np.array_equal(extra["Z"], np.arange(18).reshape(9, 2))
