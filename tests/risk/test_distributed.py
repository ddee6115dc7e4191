"""The exact risk split into class blocks over Dask workers equals the single-process engine (1e-12)."""

import numpy as np
import pytest

import fctheory as fc
from fctheory.risk import evaluate_risk
from fctheory.risk.distributed import class_blocks, plan_distributed, true_risk_distributed

distributed = pytest.importorskip("distributed")

RNG = np.random.default_rng(0)
TASK = fc.Task.random(3, 3, 4, 40, mu=np.array([0.5, 0.3, 0.2]), seed=1)
D = 4
W = RNG.standard_normal((D, TASK.n_w))
U = RNG.standard_normal((TASK.K, TASK.L * D))


@pytest.fixture(scope="module")
def client():
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as c,
        distributed.Client(c) as cl,
    ):
        yield cl


def _rel(a, b):
    return float(np.linalg.norm(np.asarray(a) - np.asarray(b)) / np.linalg.norm(np.asarray(b)))


def test_class_blocks_partition_the_classes():
    blocks = class_blocks(TASK, 7)
    allc = np.sort(np.concatenate(blocks))
    np.testing.assert_array_equal(allc, np.arange(TASK.K))
    assert len(blocks) == 7


@pytest.mark.parametrize("layernorm", [False, True])
def test_blocks_in_process_equal_the_single_process_risk_and_gradient(layernorm):
    ref = evaluate_risk(TASK, W, U, 0.01, layernorm=layernorm, grad=True)
    r = true_risk_distributed(TASK, W, U, 0.01, layernorm=layernorm, grad=True, blocks=5)
    assert abs(r.R - ref.R) <= 1e-12 * abs(ref.R)
    assert abs(r.R0 - ref.R0) <= 1e-12 * abs(ref.R0)
    assert _rel(r.grad_W, ref.grad_W) <= 1e-12
    assert _rel(r.grad_U, ref.grad_U) <= 1e-12


def test_dask_two_workers_equal_the_single_process_risk(client):
    full = fc.Task.full(3, 3, 3, mu=np.array([0.6, 0.3, 0.1]))
    Wf = RNG.standard_normal((3, full.n_w))
    Uf = RNG.standard_normal((full.K, full.L * 3))
    ref = evaluate_risk(full, Wf, Uf, 0.02, grad=True)
    r = true_risk_distributed(full, Wf, Uf, 0.02, grad=True, client=client)
    assert abs(r.R - ref.R) <= 1e-12 * abs(ref.R)
    assert _rel(r.grad_W, ref.grad_W) <= 1e-12 and _rel(r.grad_U, ref.grad_U) <= 1e-12


def test_plan_says_splitting_pays_only_for_large_enumerations():
    assert plan_distributed(fc.Task.full(3, 4, 7), d=16, workers=8).pays
    small = plan_distributed(TASK, d=D, workers=2)
    assert not small.pays and small.speedup < 1


def test_bad_client_is_refused():
    with pytest.raises(fc.FCTheoryError, match="client="):
        true_risk_distributed(TASK, W, U, 0.01, client=42)
