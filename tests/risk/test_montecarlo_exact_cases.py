"""``monte_carlo_risk`` where the estimate has no sampling error, and at its input limits.

With one word per concept (s_c = 1) every class has a single sentence: each of the n samples is that
sentence, so R̂₀ = R₀, both half-sample gradients equal ∇R₀, and every field of the result must equal the
exact enumeration (``fc.true_risk_grad``) to 1e-12: the risk, the penalty (λ_W ≠ λ_U), the gradient
(scatter, pull-back through Û and, with LayerNorm, through φ), ‖∇R‖², ‖∇R₀‖² and a zero-width interval.
"""

import math

import mpmath
import numpy as np
import pytest

import fctheory as fc
from fctheory.diagnosis.montecarlo import monte_carlo_risk

LAM_W, LAM_U = 0.03, 0.07


def _case(n_c=3, L=2, d=4, seed=0, scale=1.0):
    task = fc.Task.full(n_c, 1, L)
    rng = np.random.default_rng(seed)
    return task, rng.standard_normal((d, task.n_w)) * scale, rng.standard_normal((task.K, L * d)) * scale


def _exact(task, W, U, layernorm=False, eps=0.0):
    R0, gW0, gU0 = fc.true_risk_grad(task, W, U, 0.0, layernorm=layernorm, eps=eps)
    pen = 0.5 * LAM_W * float(np.sum(W**2)) + 0.5 * LAM_U * float(np.sum(U**2))
    return float(R0), pen, gW0, gU0


@pytest.mark.parametrize("layernorm,eps", [(False, 0.0), (True, 0.0), (True, 0.1)])
@pytest.mark.parametrize("n_samples", [2, 3, 50])
def test_single_sentence_classes_give_the_exact_risk_and_gradient(layernorm, eps, n_samples):
    task, W, U = _case()
    R0, pen, gW0, gU0 = _exact(task, W, U, layernorm, eps)
    r = monte_carlo_risk(
        task, W, U, lam_W=LAM_W, lam_U=LAM_U, layernorm=layernorm, eps=eps, n_samples=n_samples, seed=1
    )
    assert r.R0 == pytest.approx(R0, rel=1e-12)
    assert r.penalty == pytest.approx(pen, rel=1e-13)
    assert r.R == pytest.approx(R0 + pen, rel=1e-12)
    assert r.stderr <= 1e-15 * R0  # identical samples: a zero variance up to the rounding of their mean
    assert r.ci[0] == pytest.approx(r.R, rel=1e-14) and r.ci[1] == pytest.approx(r.R, rel=1e-14)
    gW, gU = gW0 + LAM_W * W, gU0 + LAM_U * U
    np.testing.assert_allclose(r.grad_W, gW, rtol=1e-11, atol=1e-13 * np.abs(gW).max())
    np.testing.assert_allclose(r.grad_U, gU, rtol=1e-11, atol=1e-13 * np.abs(gU).max())
    g2 = float(np.sum(gW**2) + np.sum(gU**2))
    assert r.grad_norm_sq == pytest.approx(g2, rel=1e-11)
    assert r.grad_norm == pytest.approx(math.sqrt(g2), rel=1e-11)
    assert r.grad_R0_norm_sq == pytest.approx(float(np.sum(gW0**2) + np.sum(gU0**2)), rel=1e-11)
    assert r.n_samples == n_samples and r.seed == 1 and r.seconds >= 0


def test_without_grad_the_gradient_fields_are_none_and_the_risk_is_unchanged():
    task, W, U = _case(seed=2)
    a = monte_carlo_risk(task, W, U, lam_W=LAM_W, lam_U=LAM_U, n_samples=4, seed=3, grad=False)
    b = monte_carlo_risk(task, W, U, lam_W=LAM_W, lam_U=LAM_U, n_samples=4, seed=3)
    assert a.grad_W is None and a.grad_U is None and a.grad_norm is None and a.grad_norm_sq is None
    assert a.grad_R0_norm_sq is None
    assert a.R == b.R and a.ci == b.ci


def test_the_generator_seed_is_used_and_not_recorded():
    task = fc.Task.full(2, 3, 2, mu=[0.5, 0.3, 0.2])
    rng = np.random.default_rng(5)
    W, U = rng.standard_normal((3, task.n_w)), rng.standard_normal((task.K, 6))
    a = monte_carlo_risk(task, W, U, n_samples=30, seed=np.random.default_rng(9), grad=False)
    b = monte_carlo_risk(task, W, U, n_samples=30, seed=9, grad=False)
    assert a.seed is None and b.seed == 9 and a.R == b.R


def test_tiny_cross_entropies_keep_their_digits():
    # scores with a margin of 40 for the target: CE = log(1 + (K − 1)e^{−40}) ≈ 1.7e-17, kept to 1e-12
    task = fc.Task.full(3, 1, 1)
    W = 20.0 * np.eye(3)
    U = 2.0 * np.eye(3)
    r = monte_carlo_risk(task, W, U, n_samples=2, seed=0, grad=False)
    with mpmath.workdps(50):
        want = mpmath.log1p(2 * mpmath.exp(-40))
    assert r.R0 == pytest.approx(float(want), rel=1e-12)


def test_weights_beyond_1e150_are_refused_naming_them():
    task, W, U = _case()
    big = 1e151 / np.linalg.norm(W)
    monte_carlo_risk(task, W * 1e149 / np.linalg.norm(W) / 1e140, U, n_samples=2, grad=False)
    with pytest.raises(fc.FCTheoryError, match=r"^W=.*> 1e150"):
        monte_carlo_risk(task, W * big, U, n_samples=2, grad=False)
    with pytest.raises(fc.FCTheoryError, match=r"^U=.*> 1e150"):
        monte_carlo_risk(task, W, U * 1e151 / np.linalg.norm(U), n_samples=2, grad=False)


def test_layernorm_without_weight_decay_on_W_accepts_any_scale_of_W():
    # φ(W) has column norms √d whatever W's scale: a W of norm 1e200 is fine when W is not penalised
    task, W, U = _case()
    a = monte_carlo_risk(task, W * 1e200, U, layernorm=True, n_samples=2, grad=False)
    b = monte_carlo_risk(task, W, U, layernorm=True, n_samples=2, grad=False)
    assert a.R0 == pytest.approx(b.R0, rel=1e-12)
    with pytest.raises(fc.FCTheoryError, match="^W="):
        monte_carlo_risk(task, W * 1e200, U, layernorm=True, lam_W=1e-3, n_samples=2, grad=False)


@pytest.mark.parametrize("name", ["lam_W", "lam_U"])
def test_an_overflowing_penalty_is_refused_naming_its_lambda(name):
    task, W, U = _case()
    kw = {name: 1e300}
    with pytest.raises(fc.FCTheoryError, match=f"^{name}="):
        monte_carlo_risk(task, W * 1e10, U * 1e10, n_samples=2, grad=False, **kw)


def test_penalty_of_huge_weights_is_computed_without_overflow():
    # ‖W‖² = 1e400 overflows a plain sum of squares; λ = 1e-300 brings the penalty back to ~1e100
    task, W, U = _case(L=1, n_c=2, d=2)
    Wb = W * 1e140
    r = monte_carlo_risk(task, Wb, U, lam_W=1e-300, n_samples=2, grad=False)
    want = 0.5 * 1e-300 * float(np.sum(W**2)) * 1e280
    assert r.penalty == pytest.approx(want, rel=1e-12)
