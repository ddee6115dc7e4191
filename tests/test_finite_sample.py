"""Finite-sample predictors against the exact empirical-risk minimiser on tiny tasks."""

import dataclasses

import numpy as np
import pytest

import fctheory as fc
from fctheory import finite_sample as fs
from fctheory.risk.empirical import lbfgs

LAM = 0.01


def _data(task, n_spl, seed=0):
    return task.sample(n_spl, seed=np.random.default_rng(seed))


def _flat(W, U):
    return np.concatenate([W.ravel(), U.ravel()])


def test_plugin_with_exact_frequencies_is_theorem1_and_theorem2():
    # every word equally often: ν_w = L/n_w gives Theorem 1's c and c′ (also for K < n_c^L: the
    # repetition code {α…α}, whose concepts are balanced so that equal counts are possible)
    rep = fc.Task(n_c=3, s_c=2, L=4, Z=np.repeat(np.arange(3)[:, None], 4, axis=1), mu="uniform")
    for task in (fc.Task.full(3, 2, 2), rep):
        X = np.array(
            [
                [task.Z[k, l] * task.s_c + (k + l + j) % task.s_c for l in range(task.L)]
                for k in range(task.K)
                for j in range(task.s_c)
            ]
        )
        p = fs.predict_plugin(task, X, LAM)
        t = fc.tau(n_c=task.n_c, n_w=task.n_w, L=task.L, K=task.K, lam=LAM)
        np.testing.assert_allclose(p.word_norm, np.sqrt(t / task.n_w), rtol=1e-12)
        np.testing.assert_allclose(p.u_norm, np.sqrt(t / (task.K * task.L)), rtol=1e-12)


def test_plugin_with_concept_independent_frequencies_solves_type3_system():
    # full task, the same empirical law in every concept: (7)–(8) of solve_type3 with μ = that law
    task = fc.Task.full(3, 3, 2)
    counts = np.array([3, 2, 1])
    X = np.array(
        [[task.Z[k, l] * 3 + b for l in range(2)] for k in range(task.K) for b in np.repeat(np.arange(3), counts)]
    )
    p = fs.predict_plugin(task, X, 0.02)
    sol = fc.solve_type3(mu=counts / counts.sum(), n_c=3, L=2, lam=0.02)
    np.testing.assert_allclose(p.word_norm, np.tile(sol.r, 3), rtol=1e-11)
    np.testing.assert_allclose(p.u_norm, sol.c, rtol=1e-11)


def test_perturbation_is_the_linearised_plugin_on_full_tasks():
    # full task: (b) = the derivative of (a) at the exact frequencies (both first order in ν − ν̄)
    task = fc.Task.full(3, 4, 2)
    X, y = _data(task, 400, seed=5)
    pa = fs.predict_plugin(task, X, LAM)
    pb = fs.predict_perturbation(task, X, y, LAM)
    dev_a = pa.word_norm - pa.word_norm.reshape(3, 4).mean(axis=1).repeat(4)
    dev_b = pb.word_norm - pb.theory_word_norm
    # agreement to second order in the relative count fluctuation ε ≈ 1/√(K n_spl L/n_w) ≈ 0.02
    assert np.max(np.abs(dev_a - dev_b)) < 0.05 * np.max(np.abs(dev_b))


def test_perturbation_full_is_the_derivative_of_the_minimiser_along_the_path():
    # θ(t) = argmin R + t(R̂ − R); (b) predicts dθ/dt at t = 0; compare norms (rotation-invariant)
    task = fc.Task.full(3, 2, 2)
    X, y = _data(task, 3, seed=1)
    d = 3
    W0, U0, res = fc.minimize_true_risk(task, d=d, lam=LAM, seed=0)
    pb = fs.perturbation_full(task, X, y, LAM, W0, U0)
    nW = W0.size

    def path_min(t):
        def fg(x):
            W, U = x[:nW].reshape(W0.shape), x[nW:].reshape(U0.shape)
            R, gW, gU = fc.true_risk_grad(task, W, U, LAM)
            Re, eW, eU = fs.empirical_risk_grad(task, W, U, X, y, LAM)
            return (1 - t) * R + t * Re, _flat((1 - t) * gW + t * eW, (1 - t) * gU + t * eU), None

        x = lbfgs(fg, _flat(W0, U0), 1e-11, 2000)[0]
        return fs.norms(task, x[:nW].reshape(W0.shape), x[nW:].reshape(U0.shape))

    t = 1e-3
    (wp, up), (wm, um) = path_min(t), path_min(-t)
    np.testing.assert_allclose((wp - wm) / (2 * t), pb.info["d_word_norm"], atol=1e-4, rtol=1e-3)
    np.testing.assert_allclose((up - um) / (2 * t), pb.info["d_u_norm"], atol=1e-4, rtol=1e-3)


def test_reduced_prediction_is_critical_and_close_to_exact_empirical_minimiser():
    task = fc.Task.full(3, 3, 2)
    X, y = _data(task, 20)
    p = fs.predict_reduced(task, X, y, LAM, gtol=1e-11)
    assert p.info["grad_norm"] <= 1e-11
    W, U, info = fs.minimize_empirical_risk(task, X, y, 8, LAM, seed=0)
    wn, un = fs.norms(task, W, U)
    # the exact minimiser is collapsed up to directional deviations of relative size ~1e-3 here
    assert np.max(np.abs(p.word_norm - wn)) < 1e-3 * wn.mean()
    assert np.max(np.abs(p.u_norm - un)) < 1e-3 * un.mean()
    # and it can only be as low as the unconstrained minimum
    assert p.info["R"] >= info["R"] - 1e-12


def test_first_order_error_shrinks_like_one_over_n_spl():
    # |exact ERM − first-order| / |exact ERM − theory| = O(ε) with ε ∝ 1/√n_spl
    task = fc.Task.full(3, 3, 2)
    ratios = []
    for n in (25, 400):
        errs, devs = [], []
        for seed in range(3):
            X, y = _data(task, n, seed=seed)
            W, U, _ = fs.minimize_empirical_risk(task, X, y, 8, LAM, seed=0, gtol=1e-10)
            wn = fs.norms(task, W, U)[0]
            pb = fs.predict_perturbation(task, X, y, LAM)
            errs.append(np.abs(wn - pb.word_norm).max())
            devs.append(np.abs(wn - pb.theory_word_norm).max())
        ratios.append(np.mean(errs) / np.mean(devs))
    # n_spl × 16: the relative error of (b) should drop by about 4 (√16); require at least 2.5
    assert ratios[1] < ratios[0] / 2.5


@pytest.mark.parametrize("bad", ["wrong_concept", "label"])
def test_sentences_not_from_the_task_are_refused(bad):
    task = fc.Task.full(3, 2, 2)
    X, y = _data(task, 2)
    if bad == "wrong_concept":
        X = X.copy()
        X[0, 0] = (X[0, 0] + task.s_c) % task.n_w
        with pytest.raises(fc.FCTheoryError, match="X="):
            fs.predict_perturbation(task, X, y, LAM)
    else:
        with pytest.raises(fc.FCTheoryError, match="y="):
            fs.predict_perturbation(task, X, y[:-1], LAM)


# ----------------------------------------------------------------------------- (d) on the population optimum


def _all_sentences(task):
    from fctheory.risk import class_sentences

    Xs = [class_sentences(task, k)[0] for k in range(task.K)]
    return np.concatenate(Xs), np.concatenate([np.full(len(S), k) for k, S in enumerate(Xs)])


def test_on_optimum_with_every_sentence_once_is_the_population_optimum():
    """Uniform μ and every sentence once: R̂ = R, so the prediction is the certified optimum of (5) itself."""
    task = fc.Task.random(3, 2, 2, 5, seed=0)
    X, y = _all_sentences(task)
    p = fs.predict_on_optimum(task, X, y, LAM, gtol=1e-11)
    opt = fc.collapsed_optimum(task, lam=LAM)
    np.testing.assert_allclose(p.word_norm, opt.w_norms, rtol=1e-7)
    np.testing.assert_allclose(p.u_norm, opt.u_norms, rtol=1e-6, atol=1e-9)
    assert p.info["R"] == pytest.approx(opt.R, rel=1e-12) and p.info["R_population"] == pytest.approx(opt.R, rel=1e-13)


def test_on_optimum_returns_a_critical_point_of_the_empirical_risk_in_its_ansatz():
    task = fc.Task.random(3, 2, 3, 8, seed=1)
    X, y = _data(task, 6)
    p = fs.predict_on_optimum(task, X, y, LAM, gtol=1e-10)
    W, U = p.info["W"], p.info["U"]
    R, dW, dU = fs.empirical_risk_grad(task, W, U, X, y, LAM)
    assert R == pytest.approx(p.info["R"], rel=1e-13) and p.info["grad_norm"] <= 1e-10
    np.testing.assert_allclose(np.linalg.norm(W, axis=0), p.word_norm, rtol=1e-13)
    D = W / np.linalg.norm(W, axis=0)
    assert np.linalg.norm(np.sum(D * dW, axis=0)) <= 1e-9 and np.linalg.norm(dU) <= 1e-9  # stationary in (ρ, U)


def test_on_optimum_is_close_to_the_exact_empirical_minimiser_on_a_partial_task():
    """It can only be as low as the unconstrained empirical minimum, and it explains its word norms."""
    task = fc.Task.random(3, 3, 3, 9, seed=2)
    X, y = _data(task, 30)
    p = fs.predict_on_optimum(task, X, y, LAM, gtol=1e-10)
    W, U, info = fs.minimize_empirical_risk(task, X, y, 9, LAM, seed=0, gtol=1e-9)
    wn, _ = fs.norms(task, W, U)
    assert p.info["R"] >= info["R"] - 1e-12 and p.info["R"] - info["R"] < 1e-3 * info["R"]
    r2 = 1 - np.sum((wn - p.word_norm) ** 2) / np.sum((wn - wn.mean()) ** 2)
    assert r2 > 0.9


def _refuse_enumeration(monkeypatch):
    """The exact engine's answer for a task beyond it (the paper's 400^15 sentences per class): refused."""

    def refused(task, **kw):
        raise fc.FCTheoryError("task=... is invalid: estimated working memory exceeds the memory budget")

    monkeypatch.setattr(fs, "_population_optimum", refused)


def test_on_optimum_beyond_the_engine_takes_the_uniform_collapsed_directions(monkeypatch):
    """Non-uniform μ where enumeration is refused: every word keeps its concept's direction at the collapsed
    optimum of the same latent set with uniform μ, and the fit is a critical point of R̂ in (ρ, U)."""
    task = fc.Task.random(3, 3, 3, 9, mu="zipf", seed=2)
    X, y = _data(task, 30)
    _refuse_enumeration(monkeypatch)
    p = fs.predict_on_optimum(task, X, y, LAM, gtol=1e-10)
    assert p.info["directions"] == fs.DIRECTIONS_UNIFORM
    uni = fc.collapsed_optimum(dataclasses.replace(task, mu="uniform"), lam=LAM)
    D = p.info["W"] / np.linalg.norm(p.info["W"], axis=0)
    Du = uni.W / np.linalg.norm(uni.W, axis=0)
    np.testing.assert_allclose(np.abs(np.sum(D * Du, axis=0)), 1.0, atol=1e-12)
    R, dW, dU = fs.empirical_risk_grad(task, p.info["W"], p.info["U"], X, y, LAM)
    assert R == pytest.approx(p.info["R"], rel=1e-13)
    assert np.linalg.norm(np.sum(D * dW, axis=0)) <= 1e-9 and np.linalg.norm(dU) <= 1e-9


def test_on_optimum_beyond_the_engine_explains_the_exact_empirical_minimiser(monkeypatch):
    """Zipf words, directions from the uniform-μ collapsed optimum: the word norms of the unconstrained
    empirical minimiser (any width, every word free) are explained with R² > 0.9 and the frequent words are the
    long ones; R̂ is within 1% of the unconstrained minimum and never below it."""
    task = fc.Task.random(3, 3, 3, 9, mu="zipf", seed=2)
    X, y = _data(task, 30)
    W, U, info = fs.minimize_empirical_risk(task, X, y, 9, LAM, seed=0, gtol=1e-9)
    wn, _ = fs.norms(task, W, U)
    _refuse_enumeration(monkeypatch)
    p = fs.predict_on_optimum(task, X, y, LAM, gtol=1e-10)
    assert info["R"] - 1e-12 <= p.info["R"] < info["R"] * 1.01
    r2 = 1 - np.sum((wn - p.word_norm) ** 2) / np.sum((wn - wn.mean()) ** 2)
    assert r2 > 0.9
    by_rank = p.word_norm.reshape(task.n_c, task.s_c).mean(axis=0)
    assert by_rank[0] > by_rank[1] > by_rank[2]


def test_on_optimum_refused_collapsed_problem_is_not_hidden(monkeypatch):
    """Uniform μ has no cheaper fallback: the refusal reaches the caller."""
    task = fc.Task.random(3, 2, 3, 8, seed=1)
    X, y = _data(task, 3)
    _refuse_enumeration(monkeypatch)
    with pytest.raises(fc.FCTheoryError, match="memory budget"):
        fs.predict_on_optimum(task, X, y, LAM)


def test_on_optimum_with_non_uniform_words_uses_the_enumerated_optimum():
    task = fc.Task.random(3, 2, 2, 5, mu="zipf", seed=0)
    X, y = _data(task, 10)
    p = fs.predict_on_optimum(task, X, y, LAM)
    assert p.method == "optimum" and p.info["grad_norm"] <= 1e-9 and np.all(np.isfinite(p.word_norm))
    assert p.info["population_gap"] <= 1e-10 * p.info["R_population"]
