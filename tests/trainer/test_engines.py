"""One engine per backend, for R runs at once (fctheory/trainer/engines.py)."""

from __future__ import annotations

import numpy as np

import fctheory as fc
from fctheory.trainer.data import TrainConfig, initial_weights, permutation, sample_data
from fctheory.trainer.engines import make_engine

TASK = fc.Task.random(3, 4, 4, 10, seed=1)


def _engine(backend, seeds, lrs):
    cfgs = [
        TrainConfig(n_spl=6, d=5, batch=7, lr=lr, seed=s, dtype="float64", layernorm=True, backend=backend)
        for s, lr in zip(seeds, lrs)
    ]
    datas = [sample_data(TASK, 6, s, 2) for s in seeds]
    weights = [initial_weights(TASK, 5, s, 0.5) for s in seeds]
    E0, U0 = np.stack([w[0] for w in weights]), np.stack([w[1] for w in weights])
    eng = make_engine(
        backend,
        E0,
        U0,
        np.stack([d.X_train for d in datas]),
        np.stack([d.y_train for d in datas]),
        [(d.X_test, d.y_test) for d in datas],
        cfgs,
    )
    return eng, E0, U0


def _two_epochs(eng, seeds):
    out = []
    for e in range(2):
        with eng.threads():
            out.append(eng.epoch(np.stack([permutation(s, e, 60) for s in seeds])))
    return out


def test_each_run_of_a_batch_is_bitwise_the_engine_of_that_run_alone(host_backend):
    seeds, lrs = [3, 4, 3], [0.5, 0.2, 0.1]
    batch, _, _ = _engine(host_backend, seeds, lrs)
    stats = _two_epochs(batch, seeds)
    for r in range(3):
        alone, _, _ = _engine(host_backend, seeds[r : r + 1], lrs[r : r + 1])
        single = _two_epochs(alone, seeds[r : r + 1])
        for (ls, c), (ls1, c1) in zip(stats, single):
            assert ls[r] == ls1[0] and c[r] == c1[0]
        for a, b in zip(batch.weights(r), alone.weights(0)):
            assert np.array_equal(a, b)
        assert batch.evaluate(r) == alone.evaluate(0)


def test_engines_train_on_copies_of_the_initial_weights(host_backend):
    eng, E0, U0 = _engine(host_backend, [0, 1], [0.5, 0.5])
    E_before, U_before = E0.copy(), U0.copy()
    _two_epochs(eng, [0, 1])
    assert np.array_equal(E0, E_before) and np.array_equal(U0, U_before)
    assert not np.array_equal(eng.weights(1)[0], E0[1]) and eng.finite().tolist() == [True, True]
