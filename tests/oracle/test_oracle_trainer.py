"""Oracles for every public number of the reference trainer.

A short run is replayed here with a hand-written SGD step (tests/oracle/test_kernel_paths.py checks the
step itself against finite differences) from the documented data/initialisation streams; every
field of ``Measurements`` is recomputed from its definition (pair loops for cosines, population
std, centred SVD for PCA, per-sample CE and argmax with ties to the lowest class); the attached
theory values are recomputed in mpmath.

Checklist (field -> test)
-------------------------
TrainRun.W, .U, .history[loss, train_acc, test_acc, test_loss, epoch], .epochs_done, .final_test_acc
                                  -> test_train_history_and_weights_equal_hand_replay[numpy, numba]
Measurements.train_acc, test_acc, train_ce, test_ce (ties)            -> test_measurements_fields_equal_definitions
Measurements.W_norm_mean/std, W_norm_by_rank/_std, U_norm_mean/std    -> test_measurements_fields_equal_definitions
Measurements.pca_W, pca_U, phiW_norm_mean                            -> test_measurements_fields_equal_definitions[h, h*]
Measurements.cos_W_within/across, cos_U_within/across                -> test_measurements_fields_equal_definitions
Measurements.distances                                               -> test_measurements_distances_are_the_collapse_metrics
Measurements.predicted = theory_prediction (Theorems 1, 2, 3, none)   -> test_theory_prediction_values_equal_mpmath[...]
Measurements.comparison                                              -> test_comparison_rows_pair_observed_with_predicted
pca_singular_values, concept_cosines                                  -> test_helpers_equal_definitions
"""

import math
import statistics

import numpy as np
import pytest

import fctheory as fc
from tests.oracle import oracles as O
from fctheory.metrics import collapse as C
import importlib

from fctheory.trainer import core

meas = importlib.import_module("fctheory.trainer.measure")


def _hand_step(E, U, Xb, yb, lr, lw, lu, ln, eps):
    """One SGD step of the notebooks' model by hand: mean CE gradient + λ·w, then w ← w − lr·(…)."""
    b, L = Xb.shape
    n_w, d = E.shape
    K = U.shape[0]
    V = O.my_phi(E.T, eps).T if ln else E
    dU, dV = np.zeros_like(U), np.zeros_like(E)
    loss, correct = [], 0
    for i in range(b):
        s = O.my_scores(V.T, U, list(Xb[i]), K, L, d)
        ce, g = O.my_ce_and_dy(s, int(yb[i]))
        loss.append(ce)
        correct += int(min(range(K), key=lambda k: (-s[k], k)) == yb[i])
        for j in range(K):
            for l in range(L):
                dU[j, l * d : (l + 1) * d] += g[j] * V[Xb[i, l]] / b
                dV[Xb[i, l]] += g[j] * U[j, l * d : (l + 1) * d] / b
    dE = np.stack([O.phi_jacobian_cs(E[w], eps).T @ dV[w] for w in range(n_w)]) if ln else dV
    return E - lr * (dE + lw * E), U - lr * (dU + lu * U), math.fsum(loss), correct


def _hand_eval(E, U, X, y, ln, eps):
    V = O.my_phi(E.T, eps).T if ln else E
    K, d, L = U.shape[0], E.shape[1], X.shape[1]
    tot, cor = [], 0
    for i in range(X.shape[0]):
        s = O.my_scores(V.T, U, list(X[i]), K, L, d)
        tot.append(O.my_ce_and_dy(s, int(y[i]))[0])
        cor += int(min(range(K), key=lambda k: (-s[k], k)) == y[i])
    return math.fsum(tot), cor


@pytest.mark.parametrize("ln", [False, True])
def test_train_history_and_weights_equal_hand_replay(host_backend, ln):
    task = fc.Task.full(2, 2, 2)
    kw = dict(
        d=3,
        layernorm=ln,
        eps=1e-5,
        lr=0.5,
        batch=5,
        epochs=3,
        lam_W=1e-2,
        lam_U=2e-2,
        seed=4,
        backend=host_backend,
        dtype="float64",
        init_scale=1.0,
        n_test=2,
        eval_every=2,
        measure=False,
    )
    run = fc.train(task, n_spl=3, **kw)
    data = core.make_data(task, n_spl=3, seed=4, n_test=2)
    E, U = core.init_weights(task, d=3, seed=4, init_scale=1.0)
    N = data.X_train.shape[0]
    for e in range(3):
        perm = core.epoch_permutation(seed=4, epoch=e, n=N)
        tot, cor = 0.0, 0
        for b0 in range(0, N, 5):
            rows = perm[b0 : b0 + 5]
            E, U, ls, c = _hand_step(E, U, data.X_train[rows], data.y_train[rows], 0.5, 1e-2, 2e-2, ln, 1e-5)
            tot += ls
            cor += c
        assert abs(run.history["loss"][e] - tot / N) <= 1e-12 * tot / N
        assert run.history["train_acc"][e] == cor / N
        assert run.history["epoch"][e] == e + 1
        if (e + 1) in (1, 2, 3):  # eval_every=2: epochs 1, 2 and the last
            tl, tc = _hand_eval(E, U, data.X_test, data.y_test, ln, 1e-5)
            nt = data.X_test.shape[0]
            assert abs(run.history["test_loss"][e] - tl / nt) <= 1e-12 * tl / nt
            assert run.history["test_acc"][e] == tc / nt
    assert O.rel(run.W, E.T) <= 1e-12 and O.rel(run.U, U) <= 1e-12
    assert run.epochs_done == 3 and run.final_test_acc == run.history["test_acc"][-1]


def _trained_like(ln, seed=0):
    task = fc.Task.full(3, 2, 2, mu=[0.7, 0.3])
    rng = np.random.default_rng(seed)
    W, U = O.type3_weights(task.Z, 3, 2, 2, 4, 1.1, [1.5, 0.8], F=O.simplex_frame(3, 4, mean_zero=ln))
    W = W + 0.1 * rng.standard_normal(W.shape)
    U = U + 0.1 * rng.standard_normal(U.shape)
    U[1] = U[0]  # classes 0 and 1 tie on every sentence: accuracy counts the lower index
    data = core.make_data(task, n_spl=4, seed=seed, n_test=3)
    return task, W, U, data


def _pair_cos(V, concept, n_c):
    within, across = [], []
    for i in range(V.shape[0]):
        for j in range(V.shape[0]):
            if i == j:
                continue
            ni, nj = np.linalg.norm(V[i]), np.linalg.norm(V[j])
            c = float(V[i] @ V[j] / (ni * nj))
            (within if concept[i] == concept[j] else across).append(c)
    return statistics.fmean(within), statistics.fmean(across)


@pytest.mark.parametrize("ln", [False, True])
def test_measurements_fields_equal_definitions(ln):
    task, W, U, data = _trained_like(ln)
    eps = 1e-5
    m = meas.measure(task, W, U, layernorm=ln, eps=eps, data=data, distances=False, predict=False)
    E = W.T
    for X, y, acc, ce in (
        (data.X_train, data.y_train, m.train_acc, m.train_ce),
        (data.X_test, data.y_test, m.test_acc, m.test_ce),
    ):
        tl, tc = _hand_eval(E, U, X, y, ln, eps)
        assert acc == tc / X.shape[0]
        assert abs(ce - tl / X.shape[0]) <= 1e-12 * tl / X.shape[0] and ce > 0
    wn = [float(np.linalg.norm(W[:, j])) for j in range(task.n_w)]
    assert abs(m.W_norm_mean - statistics.fmean(wn)) <= 1e-14 * m.W_norm_mean
    assert abs(m.W_norm_std - statistics.pstdev(wn)) <= 1e-12 * m.W_norm_std
    for b in range(task.s_c):
        nb = [wn[a * task.s_c + b] for a in range(task.n_c)]
        assert abs(m.W_norm_by_rank[b] - statistics.fmean(nb)) <= 1e-14 * m.W_norm_by_rank[b]
        assert abs(m.W_norm_by_rank_std[b] - statistics.pstdev(nb)) <= 1e-12 * max(m.W_norm_by_rank_std[b], 1e-300)
    d = W.shape[0]
    us = [U[k, l * d : (l + 1) * d] for k in range(task.K) for l in range(task.L)]
    un = [float(np.linalg.norm(u)) for u in us]
    assert abs(m.U_norm_mean - statistics.fmean(un)) <= 1e-14 * m.U_norm_mean
    assert abs(m.U_norm_std - statistics.pstdev(un)) <= 1e-12 * m.U_norm_std
    V = O.my_phi(W, eps) if ln else W
    np.testing.assert_allclose(m.pca_W, O.centred_singular_values(V.T)[:5], rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(m.pca_U, O.centred_singular_values(np.array(us))[:5], rtol=1e-12, atol=1e-13)
    cw = _pair_cos(V.T, task.word_concept, task.n_c)
    cu = _pair_cos(np.array(us), task.Z.ravel(), task.n_c)
    assert abs(m.cos_W_within - cw[0]) <= 1e-13 and abs(m.cos_W_across - cw[1]) <= 1e-13
    assert abs(m.cos_U_within - cu[0]) <= 1e-13 and abs(m.cos_U_across - cu[1]) <= 1e-13
    if ln:
        assert (
            abs(m.phiW_norm_mean - statistics.fmean(float(np.linalg.norm(V[:, j])) for j in range(task.n_w)))
            <= 1e-14 * 2
        )
    else:
        assert m.phiW_norm_mean is None


def test_measurements_distances_are_the_collapse_metrics():
    task, W, U, data = _trained_like(False)
    m = meas.measure(task, W, U, predict=False)
    assert m.distances["I"] == C.distance_to_type1(task, W, U).distance
    assert m.distances["III"] == C.distance_to_type3(task, W, U).distance
    task, W, U, data = _trained_like(True)
    m = meas.measure(task, W, U, layernorm=True, predict=False)
    assert set(m.distances) == {"II"} and m.distances["II"] == C.distance_to_type2(task, W, U).distance


def test_theory_prediction_values_equal_mpmath():
    # Theorem 1: uniform words, λ_W = λ_U
    t = fc.Task.full(3, 2, 2)
    p = meas.theory_prediction(t, d=4, layernorm=False, lam_W=0.01, lam_U=0.01)
    tau = O.mp_tau(3, 6, 2, 9, 0.01)
    assert p["theorem"].startswith("Theorem 1")
    assert abs(p["tau"] - float(tau)) <= 1e-12 * float(tau)
    assert (
        abs(p["w_norm"] - math.sqrt(float(tau) / 6)) <= 1e-12 and abs(p["u_norm"] - math.sqrt(float(tau) / 18)) <= 1e-12
    )
    np.testing.assert_allclose(p["pca_W"], [math.sqrt(float(tau) / 2)] * 2 + [0.0], rtol=1e-12)
    np.testing.assert_allclose(p["pca_U"], [math.sqrt(float(tau) / 2)] * 2 + [0.0], rtol=1e-12)
    ce = O.mp_H(tau, 3, 6, 2, 9, 0.01) - 0.01 * tau
    assert abs(p["ce"] - float(ce)) <= 1e-11 * float(ce) and p["ce"] > 0
    assert p["cos_within"] == 1.0 and p["cos_across"] == -0.5
    # … which is the CE of the predicted configuration, by enumeration
    W, U = O.type3_weights(t.Z, 3, 2, 2, 3, p["u_norm"], [p["w_norm"]] * 2)
    assert abs(p["ce"] - O.my_risk(t.Z, 2, t.mu, W, U, 0.0)["R0"]) <= 1e-11 * p["ce"]
    # Theorem 3: h*, λ_W = 0
    t3 = fc.Task.full(3, 3, 2, mu="zipf")
    p = meas.theory_prediction(t3, d=4, layernorm=True, lam_W=0.0, lam_U=0.01)
    ts = O.mp_tau_star(3, 2, 9, 4, 0.01)
    assert p["theorem"].startswith("Theorem 3")
    assert abs(p["tau"] - float(ts)) <= 1e-12 * float(ts) and abs(p["u_norm"] - float(ts) / math.sqrt(18)) <= 1e-12
    assert p["w_norm"] == 2.0
    np.testing.assert_allclose(p["pca_W"], [math.sqrt(9 * 4 / 2)] * 2 + [0.0], rtol=1e-14)
    np.testing.assert_allclose(p["pca_U"], [float(ts) / math.sqrt(2)] * 2 + [0.0], rtol=1e-12)
    ce = O.mp_H_star(ts, 3, 2, 9, 4, 0.01) - 0.01 * ts * ts / 2
    assert abs(p["ce"] - float(ce)) <= 1e-11 * float(ce) and p["ce"] > 0
    # Theorem 2: zipf words on the full task, λ below (9)
    p = meas.theory_prediction(t3, d=4, layernorm=False, lam_W=0.02, lam_U=0.02)
    sol = fc.solve_type3(mu=t3.mu, n_c=3, L=2, lam=0.02)
    c, r = O.mp_solve_type3(t3.mu, 3, 2, 0.02, (sol.c, sol.r))
    assert p["theorem"] == "Theorem 2"
    assert abs(p["u_norm"] - float(c)) <= 1e-12 * float(c)
    np.testing.assert_allclose(p["r"], [float(x) for x in r], rtol=1e-12)
    # λ above (9), or no theorem: no numbers
    lm = float(O.mp_lambda_max(t3.mu, 3, 2))
    assert set(meas.theory_prediction(t3, d=4, layernorm=False, lam_W=2 * lm, lam_U=2 * lm)) == {"theorem"}
    # unequal decays: Theorem 1 at λ = √(λ_W λ_U), word norms times a = (λ_U/λ_W)^(1/4) (the reduction of diagnose)
    q = meas.theory_prediction(t, d=4, layernorm=False, lam_W=0.01, lam_U=0.02)
    tau = float(O.mp_tau(3, 6, 2, 9, math.sqrt(0.01 * 0.02)))
    assert q["theorem"] == "Theorem 1" and abs(q["tau"] - tau) <= 1e-12 * tau
    assert (
        abs(q["w_norm"] - 2**0.25 * math.sqrt(tau / 6)) <= 1e-12
        and abs(q["u_norm"] - math.sqrt(tau / 18) / 2**0.25) <= 1e-12
    )
    assert meas.theory_prediction(t, d=4, layernorm=False, lam_W=0.0, lam_U=0.02) == {}


def test_comparison_rows_pair_observed_with_predicted():
    t = fc.Task.full(3, 2, 2)
    W, U = O.type3_weights(t.Z, 3, 2, 2, 4, 1.0, [1.0, 1.0])
    m = meas.measure(t, W, U, lam_W=0.01, lam_U=0.01, distances=False)
    rows = {q: (o, p) for q, o, p in m.comparison()}
    assert rows["mean ‖w‖"] == (m.W_norm_mean, m.predicted["w_norm"])
    assert rows["mean ‖u_kℓ‖"] == (m.U_norm_mean, m.predicted["u_norm"])
    assert rows["unregularised train CE"][1] == m.predicted["ce"]
    assert rows["PCA σ1 of W"] == (m.pca_W[0], m.predicted["pca_W"][0])


def test_helpers_equal_definitions():
    rng = np.random.default_rng(3)
    A = rng.standard_normal((9, 4)) + 100.0
    np.testing.assert_allclose(meas.pca_singular_values(A, k=3), O.centred_singular_values(A)[:3], rtol=1e-11)
    concept = np.array([0, 0, 1, 1, 1, 2, 2, 0, 2])
    A[4] = 0.0  # zero vector: excluded from the cosines
    w, a = meas.concept_cosines(A, concept, n_c=3)
    keep = np.linalg.norm(A, axis=1) > 0
    # pairs with the zero vector count as cosine 0 in the library's normalisation; reproduce by loops
    within, across = [], []
    for i in range(9):
        for j in range(9):
            if i != j:
                ni, nj = np.linalg.norm(A[i]), np.linalg.norm(A[j])
                c = float(A[i] @ A[j] / (ni * nj)) if keep[i] and keep[j] else 0.0
                (within if concept[i] == concept[j] else across).append(c)
    assert abs(w - statistics.fmean(within)) <= 1e-13 and abs(a - statistics.fmean(across)) <= 1e-13
