"""fctheory.risk.plan: the cost estimate (computed without allocating; its bytes bound the traced peak of the
evaluation on every path), the tile plan that fits a memory budget, and the refusal of a request over the budget.
"""

import math
import tracemalloc

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fctheory import FCTheoryError, Task
from fctheory.configurations import type1_configuration
from fctheory.risk import estimate_cost, evaluate_risk, true_risk, true_risk_bruteforce

from .engine_cases import assert_matches


def test_tiling_over_both_halves_equals_bruteforce():
    task = Task.random(3, 3, 4, 40, mu="zipf", seed=3)
    rng = np.random.default_rng(1)
    W = rng.standard_normal((5, task.n_w))
    U = rng.standard_normal((task.K, 4 * 5))
    # the plan's per-worker share depends on the worker count, which defaults to the CPU count: fixed here
    budget = estimate_cost(task, d=5, grad=True, workers=2).bytes // 4
    est = estimate_cost(task, d=5, grad=True, max_bytes=budget, workers=2)
    assert est.tiles[0] < 9 and est.tiles[1] < 9  # 9 distinct prefixes and suffixes: really tiled
    assert_matches(
        evaluate_risk(task, W, U, 0.02, grad=True, max_bytes=budget, workers=2),
        true_risk_bruteforce(task, W, U, 0.02, grad=True),
    )


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
