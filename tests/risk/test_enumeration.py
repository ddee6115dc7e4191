"""fctheory.risk.enumeration: the engine's enumeration planned once, as the certified optima call it (enumerate_risk at
given scores against evaluate_risk); the driver's pool of host workers (kept between evaluations, replaced by a larger one
without breaking the one in use, started anew in a forked child) and the in-place gradient products of full tasks
for any worker count, against the brute-force reference.
"""

import math
import multiprocessing
import os

import numpy as np
import pytest

from fctheory import Task
from fctheory.network import U_hat
from fctheory.risk import enumeration, evaluate_risk, plan, true_risk_bruteforce
from fctheory.risk.enumeration import SCORE_MAX, check_budget, enumerate_risk, estimate, resolve_budget
from fctheory.risk.evaluation import evaluate

from .engine_cases import assert_matches


def test_a_larger_worker_pool_leaves_the_one_in_use_working():
    """An evaluation holding the pool keeps submitting to it while another asks for more workers (a larger pool
    replaces it for later evaluations, without shutting it down under the first)."""
    held = enumeration._pool(2)
    larger = enumeration._pool(enumeration._POOL[1] + 1)
    assert larger is not held and enumeration._pool(2) is larger
    assert held.submit(math.sqrt, 4.0).result(timeout=60) == 2.0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_evaluates_with_its_own_worker_pool():
    """The host workers' pool is kept between evaluations; a child forked after it was started has no such
    threads and starts its own pool (without that, its evaluation would wait forever on a dead pool)."""
    task = Task.random(3, 3, 3, 20, seed=0)
    rng = np.random.default_rng(4)
    W, U = rng.standard_normal((4, task.n_w)), rng.standard_normal((task.K, 3 * 4))
    R = evaluate_risk(task, W, U, 0.01, grad=True, workers=2).R  # the pool is running
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as pool:
        child = pool.apply_async(_child_risk, (task, W, U))
        assert child.get(timeout=120) == pytest.approx(R, rel=1e-13)


def _child_risk(task, W, U):
    return evaluate_risk(task, W, U, 0.01, grad=True, workers=2).R


@pytest.mark.parametrize("jit", [None, False])
def test_in_place_gradient_products_of_full_tasks_equal_bruteforce_for_any_worker_count(jit, monkeypatch):
    """Full tasks take the host's in-place accumulation of the gradient products (each prefix group's classes are a
    contiguous row range): on the compiled path through fctheory._blas.gemm, which releases the GIL so that the
    workers' products overlap, with jit=False through SciPy's dgemm. Every worker count gives the brute-force
    numbers, the default count patched to 1 and to 16 included."""
    import fctheory._blas as blas

    calls = []
    gemm = blas.gemm

    def counting(*args):
        calls.append(args[4].shape)
        return gemm(*args)

    monkeypatch.setattr(blas, "gemm", counting)
    task = Task.full(3, 3, 4, mu="zipf")  # K = 81; 9 prefix groups of 9 classes, sA = sB = 9
    rng = np.random.default_rng(7)
    W, U = 0.8 * rng.standard_normal((3, task.n_w)), 0.8 * rng.standard_normal((task.K, 4 * 3))
    ref = true_risk_bruteforce(task, W, U, 0.03, grad=True)
    for workers in (1, 2, 16, None):
        assert_matches(evaluate_risk(task, W, U, 0.03, grad=True, workers=workers, jit=jit), ref)
    for n in (1, 16):
        monkeypatch.setattr(plan, "default_workers", lambda n=n: n)
        assert_matches(evaluate_risk(task, W, U, 0.03, grad=True, jit=jit, max_seconds=math.inf), ref)
    # per class chunk: accA[g] += B̃_B Ωᵀ and the rows of accB below and above the group's own classes
    assert bool(calls) == (jit is None)


def test_enumerate_risk_is_evaluate_risk_at_the_lifted_point():
    """R₀ and ∂R₀/∂(scores) from enumerate_risk at scores G3 = ÛᵀW equal evaluate_risk's R₀ and, through the chain
    rule ∂R/∂W = Û·∂R₀/∂X, its gradient in W (the engine's public face, independent of the planning shortcut)."""
    task, lam = Task.random(3, 2, 3, 5, seed=0, mu=np.array([0.6, 0.4])), 0.01
    rng = np.random.default_rng(1)
    d = 3
    W, U = rng.standard_normal((d, task.n_w)), rng.standard_normal((task.K, task.L * d))
    Uh = U_hat(U, L=task.L)
    X = Uh.T @ W
    sec, byt = resolve_budget(None, None)
    est = estimate(task, task.n_w, True, "numpy", byt, 1)
    check_budget(est, sec, byt, task)
    R0, gG3, _ = enumerate_risk(np, True, task, X.reshape(task.K, task.L, task.n_w), True, est, False, 1)
    ref = evaluate_risk(task, W, U, lam, grad=True)
    assert R0 == pytest.approx(ref.R0, rel=1e-13)
    G = gG3.reshape(X.shape) / task.K  # ∇f(X): the engine's ∂R₀/∂G3 is K·∇f
    np.testing.assert_allclose(Uh @ G + lam * W, ref.grad_W, rtol=1e-11, atol=1e-14)
    assert evaluate(task, W, U, lam, False, progress=False).R == pytest.approx(ref.R, rel=1e-14)
    assert 1e250 < SCORE_MAX <= 1e308
