"""Measurements on exact collapse configurations equal the values the theory assigns them."""

import numpy as np
import pytest

from fctheory import Task
from fctheory.frames import equiangular_frame
from fctheory.trainer.measure import concept_cosines, measure, pca_singular_values


def _type1(task, d, c, cp, seed=0):
    F = equiangular_frame(task.n_c, d, seed=seed)  # d×n_c, unit columns, Gram κI − 11ᵀ/(n_c−1)
    W = c * F[:, task.word_concept]
    U = cp * F[:, task.Z.ravel()].T.reshape(task.K, task.L * d)
    return W, U


@pytest.mark.parametrize("n_c,s_c,L,K,d", [(3, 4, 2, 7, 5), (4, 2, 3, 20, 6), (2, 3, 2, 4, 3)])
def test_type1_configuration_measurements_theorem1(n_c, s_c, L, K, d):
    task = Task.random(n_c, s_c, L, K, seed=1)
    c, cp = 1.7, 0.6
    W, U = _type1(task, d, c, cp)
    m = measure(task, W, U, distances=False, predict=False)
    assert m.W_norm_mean == pytest.approx(c, rel=1e-12) and m.W_norm_std < 1e-12
    np.testing.assert_allclose(m.W_norm_by_rank, c, rtol=1e-12)
    assert m.U_norm_mean == pytest.approx(cp, rel=1e-12) and m.U_norm_std < 1e-12
    assert m.cos_W_within == pytest.approx(1, abs=1e-12)
    assert m.cos_W_across == pytest.approx(-1 / (n_c - 1), abs=1e-12)
    assert m.cos_U_within == pytest.approx(1, abs=1e-12)
    # ‖W‖_F² = c² n_w spread equally over n_c − 1 directions (derivations B: σ = √(τ/(n_c−1)))
    sig = np.sqrt(c**2 * task.n_w / (n_c - 1))
    np.testing.assert_allclose(m.pca_W[: n_c - 1], sig, rtol=1e-12)
    assert np.all(m.pca_W[n_c - 1 :] < 1e-12 * sig)


def test_pca_is_centred_svd_like_sklearn():
    rng = np.random.default_rng(0)
    M = rng.standard_normal((50, 4)) + 10.0
    s = pca_singular_values(M, k=4)
    np.testing.assert_allclose(s**2, np.sort(np.linalg.eigvalsh(np.cov(M.T) * 49))[::-1], rtol=1e-12)


def test_concept_cosines_match_pairwise_definition():
    rng = np.random.default_rng(2)
    V = rng.standard_normal((9, 3))
    lab = np.array([0, 0, 1, 2, 1, 0, 2, 2, 1])
    Vh = V / np.linalg.norm(V, axis=1, keepdims=True)
    C = Vh @ Vh.T
    same = (lab[:, None] == lab[None]) & ~np.eye(9, dtype=bool)
    diff = lab[:, None] != lab[None]
    w, a = concept_cosines(V, lab, n_c=3)
    assert w == pytest.approx(C[same].mean(), rel=1e-13)
    assert a == pytest.approx(C[diff].mean(), rel=1e-13)


def test_predictions_theorem1_and_3_are_attached():
    task = Task.random(3, 4, 2, 9, seed=0)
    W, U = _type1(task, 4, 1.0, 1.0)
    p = measure(task, W, U, lam_W=1e-2, lam_U=1e-2, distances=False).predicted
    if not p:
        pytest.skip("analytic core not available")
    assert p["theorem"].startswith("Theorem 1")
    assert p["w_norm"] == pytest.approx(np.sqrt(p["tau"] / task.n_w), rel=1e-14)
    assert p["u_norm"] == pytest.approx(np.sqrt(p["tau"] / (task.K * task.L)), rel=1e-14)
    q = measure(task, W, U, layernorm=True, eps=0.0, lam_W=0.0, lam_U=1e-2, distances=False).predicted
    assert q["theorem"].startswith("Theorem 3") and q["w_norm"] == pytest.approx(2.0)


def test_distance_to_type1_is_zero_on_a_type1_configuration():
    pytest.importorskip("fctheory.metrics.collapse")
    task = Task.random(3, 3, 2, 6, seed=4)
    W, U = _type1(task, 4, 1.3, 0.8)
    m = measure(task, W, U, predict=False)
    assert m.distances["I"] < 1e-8


def test_measure_every_records_snapshots_during_training():
    from fctheory import train

    task = Task.random(3, 3, 2, 6, seed=4)
    run = train(task, n_spl=4, d=4, epochs=6, batch=5, lr=0.5, init_scale=0.3, measure_every=3, measure=False)
    assert [e for e, _ in run.snapshots] == [3, 6]
    m6 = run.snapshots[-1][1]
    assert m6.W_norm_mean == pytest.approx(np.linalg.norm(run.W.astype(float), axis=0).mean(), rel=1e-12)
    assert m6.distances == {}
