"""fctheory.optima.sample: f̂, ∇f̂ and E of a training sample on every backend, and the layouts.

Oracles: the empirical risk of fctheory.risk.empirical (an independent implementation in network weights),
central finite differences, and the identity E = f̂ − ⟨∇f̂, X⟩ (computed here from the gradient; the backends
compute E sentence by sentence)."""

from __future__ import annotations

import numpy as np
import pytest

import fctheory as fc
from fctheory import FCTheoryError
from fctheory.network import U_hat
from fctheory.optima.sample import SampleF, factors_to_network, from_table, network_to_factors, to_table
from fctheory.risk.empirical import empirical_risk


def _problem(seed=0, mu="zipf"):
    task = fc.Task.random(3, 3, 3, 7, seed=seed, mu=mu)
    S, y = task.sample(4, seed=seed + 1)
    rng = np.random.default_rng(seed)
    d = 4
    return task, S, y, rng.normal(size=(d, task.n_w)), rng.normal(size=(task.K, task.L * d))


def test_layouts_round_trip():
    task, S, y, W, U = _problem()
    X = U_hat(U, L=task.L).T @ W
    Wf, Uc = network_to_factors(W, U, task.K, task.L)
    np.testing.assert_allclose(from_table(Wf.T @ Uc, task.K, task.L), X, rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(to_table(from_table(Wf.T @ Uc, task.K, task.L), task.K, task.L), Wf.T @ Uc)
    W2, U2 = factors_to_network(Wf, Uc, task.K, task.L)
    np.testing.assert_array_equal(W2, W) and np.testing.assert_array_equal(U2, U)


@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_f_and_gradient_match_the_empirical_risk_of_the_network(backend):
    """R̂(W, U) and its gradient from fctheory.risk.empirical (sentences gathered in network weights) against
    f̂(ÛᵀW) + penalty and the factored gradients ∂f̂/∂W = Uc·∇f̂ᵀ, ∂f̂/∂Uc = W·∇f̂ (1e-12)."""
    task, S, y, W, U = _problem()
    lam = 0.03
    R, dW, dU = empirical_risk(task, W, U, S, y, lam)
    Wf, Uc = network_to_factors(W, U, task.K, task.L)
    f, E, gW, gU, inner = SampleF(task, S, y, backend).factored(Wf, Uc)
    pen = 0.5 * lam * (np.sum(W * W) + np.sum(U * U))
    assert f + pen == pytest.approx(R, rel=1e-13)
    np.testing.assert_allclose(gW + lam * Wf, dW, rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(factors_to_network(Wf, gU + lam * Uc, task.K, task.L)[1], dU, rtol=1e-11, atol=1e-13)
    assert E == pytest.approx(f - inner, rel=1e-12, abs=1e-14) and E > 0


def test_gradient_against_central_differences():
    task, S, y, W, U = _problem(seed=3, mu="uniform")
    sf = SampleF(task, S, y)
    rng = np.random.default_rng(7)
    Xt = 0.5 * rng.normal(size=sf.shape)
    f, E, G = sf(Xt)
    D = rng.normal(size=sf.shape)
    h = 1e-5
    fd = (sf(Xt + h * D)[0] - sf(Xt - h * D)[0]) / (2 * h)
    assert float(np.sum(G * D)) == pytest.approx(fd, rel=1e-7)
    # the entropy term of the certificate: mean entropy of the softmax = f̂ − ⟨∇f̂, X⟩
    assert E == pytest.approx(f - float(np.sum(G * Xt)), rel=1e-12)


def test_backends_agree():
    task, S, y, W, U = _problem(seed=5)
    Xt = np.random.default_rng(1).normal(size=(task.n_w, task.L * task.K))
    ref = SampleF(task, S, y, "numpy")(Xt)
    outs = [SampleF(task, S, y, "numba")(Xt)]
    try:
        import torch  # noqa: F401

        sf = SampleF(task, S, y, "torch")
        f, E, G = sf(sf.be.asarray(Xt))
        outs.append((f, E, sf.be.to_host(G)))
    except ImportError:  # pragma: no cover - torch is a test dependency
        pass
    for f, E, G in outs:
        assert f == pytest.approx(ref[0], rel=1e-13) and E == pytest.approx(ref[1], rel=1e-13)
        np.testing.assert_allclose(G, ref[2], rtol=1e-12, atol=1e-16)


def test_torch_backend_factored_evaluation():
    pytest.importorskip("torch")
    task, S, y, W, U = _problem(seed=2)
    Wf, Uc = network_to_factors(W, U, task.K, task.L)
    a = SampleF(task, S, y, "torch").factored(Wf, Uc)
    b = SampleF(task, S, y, "numba").factored(Wf, Uc)
    for u, v in zip(a, b):
        np.testing.assert_allclose(u, v, rtol=1e-12, atol=1e-15)


def test_cupy_backend_is_refused_cleanly_without_a_gpu():
    task, S, y, _, _ = _problem()
    try:
        import cupy  # noqa: F401

        pytest.skip("CuPy is importable here: tests/gpu covers it")
    except ImportError:
        with pytest.raises(FCTheoryError, match="backend"):
            SampleF(task, S, y, "cupy")
    with pytest.raises(FCTheoryError, match="backend"):
        SampleF(task, S, y, "jax")


def test_scores_far_from_zero_stay_finite():
    """Scores of ±1e3 (a softmax far in its tails): no overflow, CE exact where one class dominates."""
    task, S, y, _, _ = _problem(seed=4)
    sf = SampleF(task, S, y)
    Xt = np.zeros(sf.shape)
    Xt[:, :] = -1e3
    f, E, G = sf(Xt)  # every class has the same score: CE = log K, E = log K
    assert f == pytest.approx(np.log(task.K), rel=1e-14) and E == pytest.approx(np.log(task.K), rel=1e-14)
    assert np.all(np.isfinite(G))
