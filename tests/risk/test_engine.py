"""The exact true risk engine against straightforward enumeration.

Tolerances: R, R₀ and the gradient agree with the brute-force log-sum-exp reference to 1e-12
relative (norm-wise for gradients); finite differences to 1e-6 relative (their own truncation
and rounding error is ~1e-8 at step 1e-5).
"""

import gc
import math
import multiprocessing
import os
import tracemalloc
import weakref

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fctheory import FCTheoryError, Task
from fctheory.configurations import type1_configuration
from fctheory.risk import (
    estimate_cost,
    evaluate_risk,
    expected_margins,
    true_risk,
    true_risk_bruteforce,
    true_risk_grad,
    unregularized_risk,
)
from fctheory.risk import _engine

RTOL = 1e-12


@st.composite
def setups(draw, layernorm=None, full=None):
    n_c = draw(st.integers(2, 3))
    s_c = draw(st.integers(1, 3))
    L = draw(st.integers(1, 4 if n_c == 2 else 3))
    N = n_c**L
    is_full = draw(st.booleans()) if full is None else full
    K = N if is_full or N == 1 else draw(st.integers(1, N - 1))
    seed = draw(st.integers(0, 2**31 - 1))
    ln = draw(st.booleans()) if layernorm is None else layernorm
    d = draw(st.integers(2 if ln else 1, 4))
    scale = draw(st.sampled_from([0.05, 0.7, 3.0]))
    rng = np.random.default_rng(seed)
    mu = rng.dirichlet(np.ones(s_c)) if s_c > 1 else np.ones(1)
    task = Task.random(n_c, s_c, L, K, mu=mu / mu.sum(), seed=seed)
    W = scale * rng.standard_normal((d, task.n_w))
    U = scale * rng.standard_normal((K, L * d))
    lam = float(rng.uniform(0.0, 0.1))
    return task, W, U, lam, ln


def _rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    nb = np.linalg.norm(b)
    return np.linalg.norm(a - b) / nb if nb > 0 else np.linalg.norm(a)


def _assert_matches(r, ref, rtol=RTOL):
    assert abs(r.R - ref.R) <= rtol * abs(ref.R) + 1e-300
    assert abs(r.R0 - ref.R0) <= rtol * abs(ref.R0) + 1e-300
    # norm-wise on the whole gradient (∂R/∂W, ∂R/∂U): with h* and d = 2, φ is locally constant
    # and ∂R/∂W is exactly 0, so only rounding noise is left in it
    g = np.concatenate([np.ravel(r.grad_W), np.ravel(r.grad_U)])
    g_ref = np.concatenate([np.ravel(ref.grad_W), np.ravel(ref.grad_U)])
    assert _rel(g, g_ref) <= rtol


@given(setups())
def test_eq5_eq10_risk_and_gradient_equal_bruteforce(case):
    task, W, U, lam, ln = case
    ref = true_risk_bruteforce(task, W, U, lam, layernorm=ln, grad=True)
    _assert_matches(evaluate_risk(task, W, U, lam, layernorm=ln, grad=True), ref)


@settings(max_examples=25)
@given(setups())
def test_array_api_path_equals_bruteforce(case):
    """jit=False runs the code CuPy runs (array-API ops only), here on NumPy."""
    task, W, U, lam, ln = case
    ref = true_risk_bruteforce(task, W, U, lam, layernorm=ln, grad=True)
    _assert_matches(evaluate_risk(task, W, U, lam, layernorm=ln, grad=True, jit=False), ref)


@settings(max_examples=20)
@given(setups(), st.sampled_from([30.0, 300.0]))
def test_large_margins_use_log_space_fallback_and_stay_exact(case, blow):
    """Item 3: weights scaled up until the shifted products underflow."""
    task, W, U, lam, ln = case
    W, U = blow * W, blow * U
    ref = true_risk_bruteforce(task, W, U, lam, layernorm=ln, grad=True)
    for jit in (None, False):
        _assert_matches(evaluate_risk(task, W, U, lam, layernorm=ln, grad=True, jit=jit), ref)


@pytest.mark.parametrize("n_c,s_c,L,mu", [(2, 2, 3, [0.7, 0.3]), (3, 2, 2, "uniform"), (3, 3, 2, "zipf")])
def test_type1_scaled_100x_exact_with_fallback(n_c, s_c, L, mu):
    task = Task.full(n_c, s_c, L, mu=mu)
    W, U = type1_configuration(task, d=n_c + 1, c=100 * 1.3, seed=0)
    ref = true_risk_bruteforce(task, W, U, 0.01, grad=True)
    r = evaluate_risk(task, W, U, 0.01, grad=True)
    assert r.n_fallback > 0  # the hard path really ran
    _assert_matches(r, ref)


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


@settings(max_examples=15)
@given(setups())
def test_workers_tiles_and_blocks_do_not_change_the_result(case):
    """Item 2's blocking: one worker, small memory budgets (many tiles) give the same numbers."""
    task, W, U, lam, ln = case
    a = evaluate_risk(task, W, U, lam, layernorm=ln, grad=True, workers=1)
    est = estimate_cost(task, d=W.shape[0], grad=True)
    small = max(est.bytes // 3, 1)
    try:
        b = evaluate_risk(task, W, U, lam, layernorm=ln, grad=True, workers=3, max_bytes=small)
    except FCTheoryError:
        b = evaluate_risk(task, W, U, lam, layernorm=ln, grad=True, workers=3)
    _assert_matches(b, a, rtol=1e-13)


def test_tiling_over_both_halves_equals_bruteforce():
    task = Task.random(3, 3, 4, 40, mu="zipf", seed=3)
    rng = np.random.default_rng(1)
    W = rng.standard_normal((5, task.n_w))
    U = rng.standard_normal((task.K, 4 * 5))
    # the plan's per-worker share depends on the worker count, which defaults to the CPU count: fixed here
    budget = estimate_cost(task, d=5, grad=True, workers=2).bytes // 4
    est = estimate_cost(task, d=5, grad=True, max_bytes=budget, workers=2)
    assert est.tiles[0] < 9 and est.tiles[1] < 9  # 9 distinct prefixes and suffixes: really tiled
    _assert_matches(
        evaluate_risk(task, W, U, 0.02, grad=True, max_bytes=budget, workers=2),
        true_risk_bruteforce(task, W, U, 0.02, grad=True),
    )


def test_repeated_evaluations_reuse_the_task_tables_under_every_plan():
    """The per-task tables (groups, word probabilities, tile schedules) are made once per Task and kept while it
    lives; evaluations under alternating plans (tiled / untiled, worker counts) each take their own schedule
    and stay equal to brute force, and the tables go with the task."""
    task = Task.random(3, 3, 4, 40, mu="zipf", seed=3)
    rng = np.random.default_rng(2)
    W = rng.standard_normal((5, task.n_w))
    U = rng.standard_normal((task.K, 4 * 5))
    ref = true_risk_bruteforce(task, W, U, 0.02, grad=True)
    budget = estimate_cost(task, d=5, grad=True, workers=2).bytes // 4
    lay = _engine._layout(task)
    for workers, max_bytes in [(2, budget), (2, None), (1, budget), (2, budget), (2, None), (1, None)]:
        _assert_matches(evaluate_risk(task, W, U, 0.02, grad=True, max_bytes=max_bytes, workers=workers), ref)
        assert _engine._layout(task) is lay
    assert len(lay.schedules) == 4  # (tiled, untiled) × (1, 2 workers), each made once
    gone = weakref.ref(lay)
    del task, lay
    gc.collect()
    assert gone() is None


def test_a_larger_worker_pool_leaves_the_one_in_use_working():
    """An evaluation holding the pool keeps submitting to it while another asks for more workers (a larger pool
    replaces it for later evaluations, without shutting it down under the first)."""
    held = _engine._pool(2)
    larger = _engine._pool(_engine._POOL[1] + 1)
    assert larger is not held and _engine._pool(2) is larger
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


def test_bigger_task_equals_bruteforce():
    task = Task.random(3, 3, 4, 40, mu="zipf", seed=3)
    rng = np.random.default_rng(1)
    W = rng.standard_normal((5, task.n_w))
    U = rng.standard_normal((task.K, 4 * 5))
    for ln in (False, True):
        _assert_matches(
            evaluate_risk(task, W, U, 0.02, layernorm=ln, grad=True),
            true_risk_bruteforce(task, W, U, 0.02, layernorm=ln, grad=True),
        )


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
        _assert_matches(evaluate_risk(task, W, U, 0.03, grad=True, workers=workers, jit=jit), ref)
    for n in (1, 16):
        monkeypatch.setattr(_engine, "_default_workers", lambda n=n: n)
        _assert_matches(evaluate_risk(task, W, U, 0.03, grad=True, jit=jit, max_seconds=math.inf), ref)
    # per class chunk: accA[g] += B̃_B Ωᵀ and the rows of accB below and above the group's own classes
    assert bool(calls) == (jit is None)


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


# ----------------------------------------------------------------------------- item 5 and errors
def test_budget_refuses_with_the_estimate():
    task = Task.full(3, 6, 6)
    W = np.zeros((4, task.n_w))
    U = np.zeros((task.K, 24))
    with pytest.raises(FCTheoryError, match="estimated time .* exceeds the time budget"):
        true_risk(task, W, U, 0.1, max_seconds=1.0)
    with pytest.raises(FCTheoryError, match="memory budget"):
        true_risk(task, W, U, 0.1, max_bytes=10_000)


def test_estimate_is_computed_without_allocating_and_scales():
    a = estimate_cost(Task.full(3, 4, 6), d=16)
    b = estimate_cost(Task.full(3, 4, 6), d=16, grad=True)
    assert a.pairs == 729 * 4**6 * 729
    assert b.flops == pytest.approx(3 * a.flops) and b.seconds > a.seconds
    assert a.split == 3 and a.tiles[0] >= 1


@st.composite
def cost_setups(draw):
    """A small random task with weights (large ones: log-space recomputations) and an evaluation's options."""
    n_c, s_c = draw(st.integers(2, 3)), draw(st.integers(2, 4))
    L = draw(st.integers(1, 5 if s_c == 2 else 4))
    seed = draw(st.integers(0, 2**31 - 1))
    task = Task.random(n_c, s_c, L, draw(st.integers(2, min(30, n_c**L))), seed=seed)
    d, scale = draw(st.integers(1, 4)), draw(st.sampled_from([1.0, 15.0]))
    rng = np.random.default_rng(seed)
    W, U = scale * rng.standard_normal((d, task.n_w)), scale * rng.standard_normal((task.K, L * d))
    opts = dict(grad=draw(st.booleans()), jit=draw(st.booleans()), workers=draw(st.integers(1, 2)))
    return task, W, U, opts, draw(st.sampled_from([1.0, 0.8, 0.6]))


@settings(max_examples=12, deadline=None)
@given(cost_setups())
def test_cost_estimate_bytes_bound_the_traced_peak(case):
    # the peak of everything the evaluation allocates (tracemalloc sees NumPy's arrays and buffers) is within
    # the estimate, on the array-API path (jit=False, what CuPy runs) and the compiled one, tiled or not
    task, W, U, opts, frac = case
    d = W.shape[0]
    free = estimate_cost(task, d=d, max_bytes=math.inf, **opts)
    mb = int(free.bytes * frac) if frac < 1 else math.inf
    est = estimate_cost(task, d=d, max_bytes=mb, **opts)
    assume(est.tiles[0] >= 1 and est.tiles[1] >= 1 and est.bytes <= mb)  # else refused: nothing to bound
    evaluate_risk(task, W, U, 0.01, max_bytes=mb, **opts)  # first-use imports and kernel compilation
    tracemalloc.start()
    try:
        evaluate_risk(task, W, U, 0.01, max_bytes=mb, **opts)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= est.bytes


@pytest.mark.parametrize("grad", [False, True])
def test_the_plan_takes_the_large_recomputation_chunk_only_when_its_reserve_fits(grad):
    """Every entry of a type I ×100 point needs the log-space recomputation: with room in the budget the plan
    takes 65,536 (entry, class) pairs at once (few calls), in a tight budget 4,096; the traced peak stays within
    ``bytes`` either way, and both give the same risk."""
    task = Task.full(3, 3, 4)
    W, U = type1_configuration(task, d=3, c=200.0, seed=0)
    roomy = estimate_cost(task, d=3, grad=grad, workers=1, jit=False, max_bytes=math.inf)
    assert roomy.fallback_chunk == 1 << 16
    tight = estimate_cost(task, d=3, grad=grad, workers=1, jit=False, max_bytes=roomy.bytes // 2)
    assert tight.fallback_chunk == 4096 and tight.bytes <= roomy.bytes // 2
    assert estimate_cost(task, d=3, grad=grad, workers=1, max_bytes=math.inf).fallback_chunk == 4096  # numba
    results = []
    for est, mb in ((roomy, math.inf), (tight, roomy.bytes // 2)):
        evaluate_risk(task, W, U, 0.01, grad=grad, workers=1, jit=False, max_bytes=mb)
        tracemalloc.start()
        try:
            r = evaluate_risk(task, W, U, 0.01, grad=grad, workers=1, jit=False, max_bytes=mb)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert r.n_fallback == task.K * 3**4 and peak <= est.bytes
        results.append(r.R)
    assert results[0] == pytest.approx(results[1], rel=1e-13)


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
        assert _rel(cupy.asnumpy(r.grad_W), ref.grad_W) <= 1e-11
        assert _rel(cupy.asnumpy(r.grad_U), ref.grad_U) <= 1e-11
