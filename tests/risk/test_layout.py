"""fctheory.risk._layout: a task's groups, word probabilities and tile schedules are made once and kept while the
task lives, and every schedule (tiles, blocks, worker counts) gives the brute-force numbers.
"""

import gc
import weakref

import numpy as np
from hypothesis import given, settings

from fctheory import FCTheoryError, Task
from fctheory.risk import _layout, estimate_cost, evaluate_risk, true_risk_bruteforce

from .engine_cases import assert_matches, setups


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
    assert_matches(b, a, rtol=1e-13)


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
    lay = _layout._layout(task)
    for workers, max_bytes in [(2, budget), (2, None), (1, budget), (2, budget), (2, None), (1, None)]:
        assert_matches(evaluate_risk(task, W, U, 0.02, grad=True, max_bytes=max_bytes, workers=workers), ref)
        assert _layout._layout(task) is lay
    assert len(lay.schedules) == 4  # (tiled, untiled) × (1, 2 workers), each made once
    gone = weakref.ref(lay)
    del task, lay
    gc.collect()
    assert gone() is None
