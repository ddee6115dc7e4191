"""Prediction objects and configuration builders, checked against an independent brute force."""

import itertools
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import fctheory as fc


def brute_risk(task, W, U, lam, layernorm=False):
    """Straightforward enumeration of (5)/(10): every sentence of every class, weighted by D."""
    V = fc.phi(W) if layernorm else W
    total = 0.0
    for k in range(task.K):
        for betas in itertools.product(range(task.s_c), repeat=task.L):
            x = task.Z[k] * task.s_c + np.array(betas)
            prob = np.prod(task.mu[list(betas)])
            y = fc.scores(V, U, x[None, :])[0]
            m = y.max()
            total += prob * (m + math.log(np.exp(y - m).sum()) - y[k])
    reg = (0 if layernorm else np.sum(W * W)) + np.sum(U * U)
    return total / task.K + 0.5 * lam * reg


def test_lemma_K_type1_risk_equals_H_for_zipf():
    task = fc.Task.full(3, 2, 2, mu=np.array([0.7, 0.3]))
    lam = 0.01
    pred = fc.predict_type1(n_c=3, n_w=6, L=2, K=9, lam=lam)
    W, U = fc.type1_configuration(task, d=4, lam=lam, seed=3)
    assert brute_risk(task, W, U, lam) == pytest.approx(pred.risk, rel=1e-13)


def test_lemma_R_type2_risk_equals_H_star():
    task = fc.Task.full(3, 3, 2, mu="zipf")
    pred = fc.predict_type2(n_c=3, L=2, K=9, d=4, lam=0.01, n_w=9)
    W, U = fc.type2_configuration(task, d=4, lam=0.01, seed=1, scale=np.linspace(0.5, 2, 9), shift=np.arange(9.0))
    assert brute_risk(task, W, U, 0.01, layernorm=True) == pytest.approx(pred.risk, rel=1e-13)


def test_theorem2_type3_risk_and_ce_match_enumeration():
    task = fc.Task.full(3, 3, 2, mu="zipf")
    pred = fc.predict_type3(mu=task.mu, n_c=3, L=2, lam=0.02)
    W, U = fc.type3_configuration(task, d=5, lam=0.02, seed=0)
    assert brute_risk(task, W, U, 0.02) == pytest.approx(pred.risk, rel=1e-13)
    assert brute_risk(task, W, U, 0.0) == pytest.approx(pred.ce, rel=1e-13)
    assert pred.risk == pytest.approx(0.6842246337, abs=1e-10)  # derivation notes B.11(c)


def test_type1_norms_and_pca_match_the_built_configuration():
    task = fc.Task.full(3, 4, 3)
    pred = fc.predict_type1(n_c=3, n_w=12, L=3, K=27, lam=0.01)
    W, U = fc.type1_configuration(task, d=6, lam=0.01, seed=2)
    assert np.linalg.norm(W) == pytest.approx(pred.norm_W, rel=1e-13)
    assert np.linalg.norm(U) == pytest.approx(pred.norm_U, rel=1e-13)
    np.testing.assert_allclose(np.linalg.norm(W, axis=0), pred.c, rtol=1e-13)
    Wc = W.T - W.T.mean(0)
    sv = np.linalg.svd(Wc, compute_uv=False)
    np.testing.assert_allclose(sv[:2], pred.pca_W(), rtol=1e-12)
    assert sv[2] < 1e-12
    u = U.reshape(-1, 6)
    svu = np.linalg.svd(u - u.mean(0), compute_uv=False)
    np.testing.assert_allclose(svu[:2], pred.pca_U(), rtol=1e-12)


def test_type1_margin_per_position_matches_scores():
    task = fc.Task.full(2, 2, 3)
    pred = fc.predict_type1(n_c=2, n_w=4, L=3, K=8, lam=0.01)
    W, U = fc.type1_configuration(task, d=2, lam=0.01)
    X, y = task.sample(1, seed=0)
    S = fc.scores(W, U, X)
    dist = task.hamming()
    margins = S[np.arange(8), y][:, None] - S
    np.testing.assert_allclose(margins, pred.margin_per_position * dist[y], atol=1e-12)


def test_type3_balancedness_WWt_equals_UhatUhat_t():
    # at the critical point ‖W‖ = ‖U‖ (identity (8)), indeed WWᵀ = ÛÛᵀ
    task = fc.Task.full(2, 3, 3, mu="zipf")
    W, U = fc.type3_configuration(task, d=3, lam=0.02, seed=4)
    Uh = fc.U_hat(U, L=task.L)
    np.testing.assert_allclose(W @ W.T, Uh @ Uh.T, atol=1e-12)
    pred = fc.predict_type3(mu=task.mu, n_c=2, L=3, lam=0.02)
    assert pred.norm_W == pytest.approx(pred.norm_U, rel=1e-12)


def test_type2_pca_of_phiW_and_U():
    task = fc.Task.full(3, 2, 2, mu=np.array([0.6, 0.4]))
    pred = fc.predict_type2(n_c=3, L=2, K=9, d=5, lam=0.05, n_w=6)
    W, U = fc.type2_configuration(task, d=5, lam=0.05, seed=7)
    V = fc.phi(W).T
    np.testing.assert_allclose(np.linalg.svd(V - V.mean(0), compute_uv=False)[:2], pred.pca_sigma_phiW, rtol=1e-12)
    u = U.reshape(-1, 5)
    np.testing.assert_allclose(np.linalg.svd(u - u.mean(0), compute_uv=False)[:2], pred.pca_sigma_U, rtol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(fc.phi(W), axis=0), pred.phi_norm, rtol=1e-13)


@settings(max_examples=20)
@given(st.integers(2, 5), st.integers(1, 4), st.floats(-4, -1))
def test_predict_dispatches_to_the_applicable_theorem(n_c, L, loglam):
    lam = 10**loglam
    t = fc.Task.full(n_c, 2, L)
    assert isinstance(fc.predict(t, lam=lam), fc.TypeIPrediction)
    assert isinstance(fc.predict(t, lam=lam, network="h*", d=n_c + 1), fc.TypeIIPrediction)


def test_predict_refuses_uncovered_case():
    t = fc.Task.random(3, 2, 3, 5, mu=np.array([0.8, 0.2]), seed=0)
    with fc.budget(max_seconds=1e-9), pytest.raises(fc.FCTheoryError, match="no theorem covers"):
        fc.predict(t, lam=0.01)


def test_predictions_serialise_to_json():
    for p in (
        fc.predict_type1(n_c=3, n_w=1200, L=15, K=[50, 1000], lam=1e-3),
        fc.predict_type2(n_c=3, L=15, K=1000, d=100, lam=1e-3),
        fc.predict_type3(mu=np.array([0.5, 0.3, 0.2]), n_c=3, L=2, lam=0.01),
    ):
        json.dumps(p.to_dict())


def test_type1_trivial_flag_and_zero_weights_above_threshold():
    lam0 = fc.lambda_trivial(n_c=3, n_w=6, L=2, K=9)
    p = fc.predict_type1(n_c=3, n_w=6, L=2, K=9, lam=2 * lam0)
    assert p.trivial and p.tau == 0 and p.risk == pytest.approx(p.H0) and p.H0 == pytest.approx(math.log(9))
