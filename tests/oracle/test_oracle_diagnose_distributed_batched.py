"""Oracles for fctheory.diagnose, fctheory.risk.distributed, fctheory.train_batched, and CostEstimate.bytes.

* diagnose: every numeric field of the Diagnosis of arbitrary (non-collapsed) weights is recomputed
  here: R, R0 and the gradients by plain enumeration (tests/oracle/oracles.py my_risk), the penalty and its
  gradient by hand, norms and cosines by loops, PCA spectra by centred SVDs;
* true_risk_distributed: R, R0, penalty and gradients against the same enumeration (not against
  the single-process engine it is built on); class_blocks against the partition and prefix-group
  rules it documents;
* train_batched: the fields tests/trainer/test_batched.py leaves out (test_loss, epochs_done, every
  measurement) against the sequential twin;
* CostEstimate.bytes against the memory the engine actually allocates (tracemalloc peak, which
  numpy reports to), with and without a tight budget.

Checklist (field -> test)
-------------------------
Diagnosis.R, R0, penalty, grad_norm, grad_R0_norm, grad_penalty_norm, grad_rel, critical, method
                                      -> test_diagnose_risk_and_gradient_fields_equal_enumeration[h, h*]
Diagnosis.W_norms, phiW_norms, W_norm_by_rank(_std), U_norms, pca_W, pca_U, cos_* -> same test
Diagnosis.exact_cost                  -> test_diagnose_exact_cost_is_the_cost_estimate
true_risk_distributed (R, R0, penalty, grad_W, grad_U, pairs, n_fallback) -> test_distributed_equals_enumeration[...]
class_blocks                          -> test_class_blocks_partition_balanced_and_prefix_ordered
plan_distributed (blocks, speedup, pays, bytes_*) -> test_plan_distributed_fields_are_consistent
train_batched test_loss, epochs_done, measurements -> test_batched_remaining_fields_equal_sequential_twin
CostEstimate.bytes, tiles vs max_bytes -> test_cost_estimate_bytes_bound_the_allocated_peak[...],
                                         test_cost_estimate_bytes_bound_the_array_api_path_on_a_three_concept_task
"""

import dataclasses
import math
import statistics
import tracemalloc

import numpy as np
import pytest

import fctheory as fc
from tests.oracle import oracles as O
from fctheory.risk import estimate_cost, evaluate_risk
from fctheory.risk.distributed import class_blocks, plan_distributed, true_risk_distributed
from fctheory.trainer.batched import train_batched


def _pair_cos(V, concept):
    within, across = [], []
    for i in range(V.shape[0]):
        for j in range(V.shape[0]):
            if i != j:
                c = float(V[i] @ V[j] / (np.linalg.norm(V[i]) * np.linalg.norm(V[j])))
                (within if concept[i] == concept[j] else across).append(c)
    return statistics.fmean(within), statistics.fmean(across)


# ------------------------------------------------------------------------------------------ diagnose
@pytest.mark.parametrize("ln", [False, True])
def test_diagnose_risk_and_gradient_fields_equal_enumeration(ln):
    task = fc.Task.random(3, 2, 2, 5, mu=[0.6, 0.4], seed=1)
    d, lw, lu = 4, (0.0 if ln else 0.03), 0.02
    rng = np.random.default_rng(2)
    W, U = rng.standard_normal((d, task.n_w)), rng.standard_normal((task.K, task.L * d))
    D = fc.diagnose(task, W, U, lam_W=lw, lam_U=lu, layernorm=ln, assumptions=False)
    assert D.method == "exact" and D.network == ("h*" if ln else "h") and D.d == d
    ref = O.my_risk(task.Z, task.s_c, task.mu, W, U, 0.0, layernorm=ln, grad=True)
    pen = 0.5 * lw * float(np.sum(W * W)) + 0.5 * lu * float(np.sum(U * U))
    assert abs(D.R0 - ref["R0"]) <= 1e-12 * ref["R0"]
    assert abs(D.penalty - pen) <= 1e-14 * pen
    assert abs(D.R - (ref["R0"] + pen)) <= 1e-12 * D.R
    gW0, gU0 = ref["grad_W"], ref["grad_U"]  # λ = 0: the gradient of R0 alone
    g0 = math.sqrt(np.sum(gW0**2) + np.sum(gU0**2))
    gp = math.sqrt(np.sum((lw * W) ** 2) + np.sum((lu * U) ** 2))
    g = math.sqrt(np.sum((gW0 + lw * W) ** 2) + np.sum((gU0 + lu * U) ** 2))
    assert abs(D.grad_R0_norm - g0) <= 1e-10 * g0
    assert abs(D.grad_penalty_norm - gp) <= 1e-14 * gp
    assert abs(D.grad_norm - g) <= 1e-10 * g
    assert abs(D.grad_rel - g / (g0 + gp)) <= 1e-10 * D.grad_rel
    assert D.critical is (D.grad_rel <= D.rtol) and D.critical is False
    # geometry
    V = O.my_phi(W) if ln else W
    wn = np.array([np.linalg.norm(W[:, j]) for j in range(task.n_w)])
    np.testing.assert_allclose(D.W_norms, wn, rtol=1e-15)
    shown = np.array([np.linalg.norm(V[:, j]) for j in range(task.n_w)]) if ln else wn
    if ln:
        np.testing.assert_allclose(D.phiW_norms, shown, rtol=1e-14)
    else:
        assert D.phiW_norms is None
    for b in range(task.s_c):
        nb = [shown[a * task.s_c + b] for a in range(task.n_c)]
        assert abs(D.W_norm_by_rank[b] - statistics.fmean(nb)) <= 1e-14 * D.W_norm_by_rank[b]
        assert abs(D.W_norm_by_rank_std[b] - statistics.pstdev(nb)) <= 1e-12 * D.W_norm_by_rank_std[b] + 1e-14 * nb[0]
    us = [U[k, l * d : (l + 1) * d] for k in range(task.K) for l in range(task.L)]
    np.testing.assert_allclose(D.U_norms, np.array([np.linalg.norm(u) for u in us]).reshape(task.K, task.L), rtol=1e-15)
    np.testing.assert_allclose(D.pca_W, O.centred_singular_values(V.T)[:d], rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(D.pca_U, O.centred_singular_values(np.array(us))[:d], rtol=1e-12, atol=1e-13)
    cw, cu = _pair_cos(V.T, task.word_concept), _pair_cos(np.array(us), task.Z.ravel())
    assert abs(D.cos_W_within - cw[0]) <= 1e-13 and abs(D.cos_W_across - cw[1]) <= 1e-13
    assert abs(D.cos_U_within - cu[0]) <= 1e-13 and abs(D.cos_U_across - cu[1]) <= 1e-13
    np.testing.assert_array_equal(D.W, W)
    np.testing.assert_array_equal(D.U, U)


def test_diagnose_exact_cost_is_the_cost_estimate():
    task = fc.Task.random(3, 2, 3, 6, seed=0)
    rng = np.random.default_rng(0)
    W, U = rng.standard_normal((4, task.n_w)), rng.standard_normal((task.K, task.L * 4))
    D = fc.diagnose(task, W, U, lam_W=0.01, lam_U=0.01, assumptions=False, distances=False)
    e = estimate_cost(task, d=4, grad=True, max_bytes=int(fc.get_budget().max_bytes))
    assert D.exact_cost["pairs"] == task.K * task.s_c**task.L * task.K == e.pairs
    assert D.exact_cost["bytes"] == e.bytes
    assert D.exact_cost["log10_pairs"] == pytest.approx(math.log10(e.pairs), rel=1e-14)


# ------------------------------------------------------------------------------------------ distributed
@pytest.mark.parametrize("ln,blocks", [(False, 3), (True, 5), (False, 1)])
def test_distributed_equals_enumeration(ln, blocks):
    task = fc.Task.random(3, 2, 3, 7, mu=[0.7, 0.3], seed=2)
    d, lam = 3, 0.02
    rng = np.random.default_rng(4)
    W, U = rng.standard_normal((d, task.n_w)), rng.standard_normal((task.K, task.L * d))
    r = true_risk_distributed(task, W, U, lam, layernorm=ln, grad=True, blocks=blocks)
    ref = O.my_risk(task.Z, task.s_c, task.mu, W, U, lam, layernorm=ln, grad=True)
    assert abs(r.R0 - ref["R0"]) <= 1e-12 * ref["R0"]
    assert abs(r.penalty - ref["penalty"]) <= 1e-14 * ref["penalty"]
    assert abs(r.R - ref["R"]) <= 1e-12 * ref["R"]
    assert O.rel(r.grad_W, ref["grad_W"]) <= 1e-10 and O.rel(r.grad_U, ref["grad_U"]) <= 1e-10
    assert r.pairs == task.K * task.s_c**task.L * task.K and r.n_fallback == 0


def test_class_blocks_partition_balanced_and_prefix_ordered():
    task = fc.Task.random(3, 2, 4, 23, seed=5)
    m = 2  # ⌈L/2⌉: the engine's prefix
    for nb in (1, 4, 7, 23, 40):
        blocks = class_blocks(task, nb)
        assert len(blocks) == min(nb, task.K)
        sizes = [len(b) for b in blocks]
        assert max(sizes) - min(sizes) <= 1  # balanced (array_split)
        np.testing.assert_array_equal(np.sort(np.concatenate(blocks)), np.arange(task.K))
        assert all(np.all(np.diff(b) > 0) for b in blocks)
        # blocks follow the prefix groups: concatenated in block order, the prefixes are sorted
        # by first appearance, so each prefix group occupies one contiguous run
        order = [k for b in blocks for k in sorted(b, key=lambda k: (tuple(task.Z[k, :m]), k))]
        pref = [tuple(task.Z[k, :m]) for k in order]
        runs = [p for i, p in enumerate(pref) if i == 0 or p != pref[i - 1]]
        assert len(runs) == len(set(pref))


def test_plan_distributed_fields_are_consistent():
    task = fc.Task.full(3, 4, 7)
    for workers, blocks in ((8, None), (3, 5)):
        p = plan_distributed(task, d=16, workers=workers, blocks=blocks)
        assert p.blocks == min(blocks or 4 * workers, task.K) and p.workers == workers
        single = estimate_cost(task, d=16, workers=None)
        assert p.seconds_single == single.seconds and p.bytes_single == single.bytes
        assert p.bytes_block == estimate_cost(task, d=16, workers=1).bytes
        assert abs(p.speedup - p.seconds_single / p.seconds_distributed) <= 1e-15 * p.speedup
        rounds = -(-p.blocks // workers)
        assert p.seconds_distributed >= rounds * p.seconds_block  # plus overheads
        assert p.pays == (p.speedup >= 1.5)


# ------------------------------------------------------------------------------------------ batched
def test_batched_remaining_fields_equal_sequential_twin():
    task = fc.Task.random(3, 2, 3, 6, seed=0)
    kw = dict(d=4, epochs=3, batch=5, dtype="float64", init_scale=0.5, n_test=2, backend="numpy")
    runs = train_batched(task, n_spl=4, seed=[1, 2], lr=[0.2, 0.1], lam_W=[1e-3, 0.0], lam_U=[0.0, 1e-2], **kw)
    for r, (s, lr, lw, lu) in zip(runs, [(1, 0.2, 1e-3, 0.0), (2, 0.1, 0.0, 1e-2)]):
        twin = fc.train(task, n_spl=4, seed=s, lr=lr, lam_W=lw, lam_U=lu, **kw)
        assert r.epochs_done == twin.epochs_done == 3
        np.testing.assert_allclose(r.history["test_loss"], twin.history["test_loss"], rtol=1e-12, atol=0)
        np.testing.assert_array_equal(r.history["epoch"], twin.history["epoch"])
        assert r.final_test_acc == twin.final_test_acc
        for f in dataclasses.fields(twin.measurements):
            a, b = getattr(r.measurements, f.name), getattr(twin.measurements, f.name)
            if isinstance(b, dict):
                assert a.keys() == b.keys(), f.name
                continue
            if b is None:
                assert a is None
                continue
            np.testing.assert_allclose(
                np.asarray(a, float), np.asarray(b, float), rtol=1e-11, atol=1e-13, err_msg=f.name
            )


# ------------------------------------------------------------------------------------------ CostEstimate.bytes
@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.parametrize("tight", [False, True])
def test_cost_estimate_bytes_bound_the_allocated_peak(grad, tight):
    task = fc.Task.random(3, 3, 5, 40, seed=0)
    d = 4
    rng = np.random.default_rng(0)
    W, U = rng.standard_normal((d, task.n_w)), rng.standard_normal((task.K, task.L * d))
    free = estimate_cost(task, d=d, grad=grad, workers=1, max_bytes=math.inf)
    mb = free.bytes // 3 if tight else math.inf
    est = estimate_cost(task, d=d, grad=grad, workers=1, max_bytes=mb)
    if tight:
        assert est.bytes <= mb and est.tiles[0] * est.tiles[1] < free.tiles[0] * free.tiles[1]
    evaluate_risk(task, W, U, 0.01, grad=grad, workers=1, jit=True, max_bytes=mb)  # warm the kernels
    tracemalloc.start()
    try:  # the numba path (the default; numba is a required dependency)
        evaluate_risk(task, W, U, 0.01, grad=grad, workers=1, jit=True, max_bytes=mb)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= est.bytes  # the estimate is an upper bound of what the engine allocates
    assert est.bytes <= 6 * peak  # and not a vacuous one


@pytest.mark.parametrize("grad", [False, True])
def test_cost_estimate_bytes_bound_the_allocated_peak_of_the_array_api_path(grad):
    # the array-API path (jit=False) allocated up to ~1.35x the budget its tile plan was sized for, because
    # the plan counted the compiled kernel's 9 bytes per normaliser entry; the plan now counts the
    # temporaries of _post_group_xp (estimate_cost(..., jit=False))
    task = fc.Task.random(2, 5, 6, 30, seed=0)
    d = 3
    rng = np.random.default_rng(0)
    W, U = rng.standard_normal((d, task.n_w)), rng.standard_normal((task.K, task.L * d))
    mb = estimate_cost(task, d=d, grad=grad, workers=1, max_bytes=math.inf, jit=False).bytes // 3
    est = estimate_cost(task, d=d, grad=grad, workers=1, max_bytes=mb, jit=False)
    tracemalloc.start()
    try:
        evaluate_risk(task, W, U, 0.01, grad=grad, workers=1, jit=False, max_bytes=mb)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= est.bytes <= mb
    assert est.bytes <= 6 * peak  # not a vacuous bound


def test_cost_estimate_bytes_bound_the_array_api_path_on_a_three_concept_task():
    # this shape exceeded the estimate by ~25%: NumPy's buffered iterator (broadcast operations, up to
    # 3 × 64 KiB) and the Python objects were not counted, and the partial scores were built with a copy
    task = fc.Task.random(3, 3, 5, 60, seed=1)
    d = 4
    rng = np.random.default_rng(0)
    W, U = rng.standard_normal((d, task.n_w)), rng.standard_normal((task.K, task.L * d))
    mb = estimate_cost(task, d=d, grad=False, workers=1, max_bytes=math.inf, jit=False).bytes // 3
    est = estimate_cost(task, d=d, grad=False, workers=1, max_bytes=mb, jit=False)
    evaluate_risk(task, W, U, 0.01, grad=False, workers=1, jit=False, max_bytes=mb)  # first-use imports
    tracemalloc.start()
    try:
        evaluate_risk(task, W, U, 0.01, grad=False, workers=1, jit=False, max_bytes=mb)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= est.bytes <= mb
    assert est.bytes <= 3 * peak  # not a vacuous bound (measured: 2.2x, a third of it the log-space reserve)
