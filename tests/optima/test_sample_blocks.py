"""f̂ over blocks of sentences (here and on a Dask cluster) against the one-process f̂."""

from __future__ import annotations

import numpy as np
import pytest

import fctheory as fc
from fctheory import FCTheoryError
from fctheory.optima import optimum
from fctheory.optima.sample import SampleF
from fctheory.optima.sample_blocks import BlockSample, as_client, sentence_blocks


def _sample(n_c, s_c, L, K, n_spl, seed, mu="zipf"):
    task = fc.Task.random(n_c, s_c, L, K, seed=seed, mu=mu)
    S, y = task.sample(n_spl, seed=seed + 100)
    return task, S, y


def test_sentence_blocks_partition_the_sample():
    assert sentence_blocks(10, 3) == [(0, 3), (3, 7), (7, 10)] and sentence_blocks(2, 5) == [(0, 1), (1, 2)]
    for N, b in [(1, 1), (17, 4), (100, 7), (5, 5)]:
        parts = sentence_blocks(N, b)
        assert parts[0][0] == 0 and parts[-1][1] == N and all(a < c for a, c in parts)
        assert all(parts[k][1] == parts[k + 1][0] for k in range(len(parts) - 1))


def test_block_sample_is_the_one_process_sample_function():
    """Σ over blocks of f̂, E, the factored gradients, the products with ∇f̂ and its Gram matrix: the
    one-process values to rounding (1e-12)."""
    task, S, y = _sample(3, 3, 3, 8, 5, 1)
    rng = np.random.default_rng(0)
    W, Uc = rng.normal(size=(4, task.n_w)), rng.normal(size=(4, task.L * task.K))
    ref, blk = SampleF(task, S, y), BlockSample(task, S, y, blocks=3)
    a, b = ref.factored(W, Uc), blk.factored(W, Uc)
    for u, v in zip(a, b):
        np.testing.assert_allclose(v, u, rtol=1e-12, atol=1e-15)
    v, u = rng.normal(size=task.L * task.K), rng.normal(size=task.n_w)
    np.testing.assert_allclose(blk.matvec(v), ref.matvec(v), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(blk.rmatvec(u), ref.rmatvec(u), rtol=1e-12, atol=1e-15)
    (M1, m1, F1), (M2, m2, F2) = ref.gram(), blk.gram()
    np.testing.assert_allclose(M2, M1, rtol=1e-12, atol=1e-15)
    assert m1 == m2 and F2 == pytest.approx(F1, rel=1e-12) and blk.nfev == 1


def test_as_client_refuses_what_is_not_a_client():
    assert as_client(None) is None
    with pytest.raises(FCTheoryError, match="client"):
        as_client(3)


def test_sentence_blocks_here_and_on_a_dask_cluster_give_the_same_optimum():
    """f̂ summed over blocks of sentences (here, and on a two-worker Dask cluster) is the one-process f̂ to
    rounding: the same certified optimum (1e-12)."""
    assert sentence_blocks(10, 3) == [(0, 3), (3, 7), (7, 10)] and sentence_blocks(2, 5) == [(0, 1), (1, 2)]
    task, S, y = _sample(3, 3, 3, 8, 4, 0)
    ref = optimum(task, lam=0.01, data=(S, y))
    here = optimum(task, lam=0.01, data=(S, y), blocks=3)
    assert here.certified and here.R == pytest.approx(ref.R, rel=1e-12)
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as lc:
        with distributed.Client(lc) as cl:
            on = optimum(task, lam=0.01, data=(S, y), client=cl, blocks=4)
            c = fc.certify(task, ref.W, ref.U, lam=0.01, data=(S, y), client=cl, solve=False)
    assert on.certified and on.R == pytest.approx(ref.R, rel=1e-12) and c.rel_gap <= 1e-9
    with pytest.raises(FCTheoryError, match="client"):
        optimum(task, lam=0.01, data=(S, y), client=3)
