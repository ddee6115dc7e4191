"""fctheory.risk.evaluation: the exact true risk (5)/(10) and its gradient against straightforward enumeration
(true_risk_bruteforce) and central differences, its public wrappers, and its refusals.

Tolerances: R, R₀ and the gradient agree with the brute-force log-sum-exp reference to 1e-12 relative (norm-wise
for gradients); finite differences to 1e-6 relative (their own truncation and rounding error is ~1e-8 at step
1e-5).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fctheory import FCTheoryError, Task
from fctheory.configurations import type1_configuration
from fctheory.risk import (
    evaluate_risk,
    expected_margins,
    true_risk,
    true_risk_bruteforce,
    true_risk_grad,
    unregularized_risk,
)

from .engine_cases import RTOL, assert_matches, rel, setups


@given(setups())
def test_eq5_eq10_risk_and_gradient_equal_bruteforce(case):
    task, W, U, lam, ln = case
    ref = true_risk_bruteforce(task, W, U, lam, layernorm=ln, grad=True)
    assert_matches(evaluate_risk(task, W, U, lam, layernorm=ln, grad=True), ref)


@settings(max_examples=25)
@given(setups())
def test_array_api_path_equals_bruteforce(case):
    """jit=False runs the code CuPy runs (array-API ops only), here on NumPy."""
    task, W, U, lam, ln = case
    ref = true_risk_bruteforce(task, W, U, lam, layernorm=ln, grad=True)
    assert_matches(evaluate_risk(task, W, U, lam, layernorm=ln, grad=True, jit=False), ref)


@settings(max_examples=20)
@given(setups(), st.sampled_from([30.0, 300.0]))
def test_large_margins_use_log_space_fallback_and_stay_exact(case, blow):
    """Item 3: weights scaled up until the shifted products underflow."""
    task, W, U, lam, ln = case
    W, U = blow * W, blow * U
    ref = true_risk_bruteforce(task, W, U, lam, layernorm=ln, grad=True)
    for jit in (None, False):
        assert_matches(evaluate_risk(task, W, U, lam, layernorm=ln, grad=True, jit=jit), ref)


@pytest.mark.parametrize("n_c,s_c,L,mu", [(2, 2, 3, [0.7, 0.3]), (3, 2, 2, "uniform"), (3, 3, 2, "zipf")])
def test_type1_scaled_100x_exact_with_fallback(n_c, s_c, L, mu):
    task = Task.full(n_c, s_c, L, mu=mu)
    W, U = type1_configuration(task, d=n_c + 1, c=100 * 1.3, seed=0)
    ref = true_risk_bruteforce(task, W, U, 0.01, grad=True)
    r = evaluate_risk(task, W, U, 0.01, grad=True)
    assert r.n_fallback > 0  # the hard path really ran
    assert_matches(r, ref)


@settings(max_examples=15)
@given(setups())
def test_lemma_S_gradient_matches_central_differences(case):
    task, W, U, lam, ln = case
    if ln:  # stay away from columns with tiny variance, where φ is badly conditioned
        W = W + np.linspace(-1, 1, W.shape[0])[:, None]
    _, gW, gU = true_risk_grad(task, W, U, lam, layernorm=ln)
    rng = np.random.default_rng(0)
    h = 1e-5
    for _ in range(2):
        dW = rng.standard_normal(W.shape)
        dU = rng.standard_normal(U.shape)
        fd = (
            true_risk(task, W + h * dW, U + h * dU, lam, layernorm=ln)
            - true_risk(task, W - h * dW, U - h * dU, lam, layernorm=ln)
        ) / (2 * h)
        an = np.sum(gW * dW) + np.sum(gU * dU)
        assert abs(fd - an) <= 1e-6 * (abs(an) + np.sqrt(np.sum(gW**2) + np.sum(gU**2)) * 1e-2 + 1e-8)


@settings(max_examples=20)
@given(setups())
def test_public_wrappers_agree(case):
    task, W, U, lam, ln = case
    r = evaluate_risk(task, W, U, lam, layernorm=ln, grad=True)
    R, gW, gU = true_risk_grad(task, W, U, lam, layernorm=ln)
    assert R == r.R and np.array_equal(gW, r.grad_W) and np.array_equal(gU, r.grad_U)
    assert true_risk(task, W, U, lam, layernorm=ln) == pytest.approx(r.R, rel=RTOL)
    assert unregularized_risk(task, W, U, layernorm=ln) == pytest.approx(r.R0, rel=RTOL, abs=1e-300)
    pen = 0.5 * lam * (np.sum(U**2) + (0 if ln else np.sum(W**2)))
    assert r.penalty == pytest.approx(pen, rel=1e-14)


def test_bigger_task_equals_bruteforce():
    task = Task.random(3, 3, 4, 40, mu="zipf", seed=3)
    rng = np.random.default_rng(1)
    W = rng.standard_normal((5, task.n_w))
    U = rng.standard_normal((task.K, 4 * 5))
    for ln in (False, True):
        assert_matches(
            evaluate_risk(task, W, U, 0.02, layernorm=ln, grad=True),
            true_risk_bruteforce(task, W, U, 0.02, layernorm=ln, grad=True),
        )


def test_single_class_has_zero_cross_entropy():
    task = Task(2, 2, 2, [[0, 1]])
    W = np.ones((2, 4)) * [[1.0], [2.0]]
    U = np.arange(4.0)[None, :]
    r = evaluate_risk(task, W, U, 0.5, grad=True)
    assert r.R0 == 0.0
    assert np.allclose(r.grad_W, 0.5 * W) and np.allclose(r.grad_U, 0.5 * U)


def test_definition_A_expected_margins_equal_enumeration():
    task = Task.random(3, 2, 3, 11, mu=[0.8, 0.2], seed=2)
    rng = np.random.default_rng(0)
    W = rng.standard_normal((3, task.n_w))
    U = rng.standard_normal((task.K, 9))
    from fctheory.risk import class_sentences
    from fctheory.network import scores

    em = expected_margins(task, W, U)
    for k in range(task.K):
        X, D = class_sentences(task, k)
        Y = scores(W, U, X)
        ybar = D @ Y
        np.testing.assert_allclose(em.scores[k], ybar, rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(em.matrix[k], ybar[k] - ybar, rtol=1e-12, atol=1e-13)
    assert em.alignment == pytest.approx(np.trace(em.scores))
    H = task.hamming()
    for r in range(1, task.L + 1):
        if (H == r).any():
            assert em.by_distance[r] == pytest.approx(em.matrix[H == r].mean(), rel=1e-12)


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(lam=-1.0), "lam"),
        (dict(backend="torch"), "backend"),
        (dict(W=np.zeros((2, 5))), "W="),
        (dict(U=np.zeros((3, 3))), "U="),
        (dict(W=np.full((2, 4), np.nan)), "finite"),
        (dict(task="task"), "task"),
        (dict(max_seconds=0.0), "max_seconds"),
    ],
)
def test_invalid_input_raises_project_error(kw, match):
    args = dict(task=Task.full(2, 2, 2), W=np.ones((2, 4)), U=np.ones((4, 4)), lam=0.1)
    args.update(kw)
    with pytest.raises(FCTheoryError, match=match):
        true_risk(args.pop("task"), args.pop("W"), args.pop("U"), args.pop("lam"), **args)


def test_progress_bar_can_be_forced(capsys):
    task = Task.full(2, 2, 3)
    W = np.ones((2, 4)) * [[1.0], [-1.0]]
    U = np.ones((8, 6))
    R = true_risk(task, W, U, 0.1, progress=True)
    assert R == pytest.approx(true_risk(task, W, U, 0.1, progress=False), rel=0)
    assert "exact risk" in capsys.readouterr().err


@pytest.mark.gpu
def test_cupy_backend_equals_numpy():
    cupy = pytest.importorskip("cupy")
    task = Task.random(3, 3, 4, 50, mu="zipf", seed=0)
    rng = np.random.default_rng(0)
    W = rng.standard_normal((6, task.n_w))
    U = rng.standard_normal((task.K, 24))
    for ln in (False, True):
        ref = evaluate_risk(task, W, U, 0.01, layernorm=ln, grad=True)
        r = evaluate_risk(task, cupy.asarray(W), cupy.asarray(U), 0.01, layernorm=ln, grad=True, backend="cupy")
        assert abs(r.R - ref.R) <= RTOL * ref.R
        assert rel(cupy.asnumpy(r.grad_W), ref.grad_W) <= 1e-11
        assert rel(cupy.asnumpy(r.grad_U), ref.grad_U) <= 1e-11
