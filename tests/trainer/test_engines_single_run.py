"""The single-run view of the engines (``fctheory/trainer/_engines.py``): ``ENGINES[backend](E, U, data, cfg)``
is the R = 1 engine of ``fctheory/trainer/engines.py`` with scalar results."""

import numpy as np

import fctheory as fc
from fctheory.trainer._engines import ENGINES, SingleRun
from fctheory.trainer.data import TrainConfig, initial_weights, permutation, sample_data
from fctheory.trainer.engines import make_engine

TASK = fc.Task.random(3, 4, 3, 6, seed=2)


def _setup(backend, seed=1):
    cfg = TrainConfig(n_spl=5, d=4, batch=4, lr=0.3, seed=seed, dtype="float64", backend=backend)
    data = sample_data(TASK, 5, seed, 2)
    E0, U0 = initial_weights(TASK, 4, seed, 0.5)
    return cfg, data, E0, U0


def test_factories_cover_every_backend_with_their_names():
    assert sorted(ENGINES) == ["cupy", "numba", "numpy"]
    assert {k: f.__name__ for k, f in ENGINES.items()} == {
        "numpy": "NumpyEngine",
        "numba": "NumbaEngine",
        "cupy": "CupyEngine",
    }


def test_single_run_is_bitwise_the_engine_with_one_run(host_backend):
    cfg, data, E0, U0 = _setup(host_backend)
    single = ENGINES[host_backend](E0, U0, data, cfg)
    assert isinstance(single, SingleRun)
    multi = make_engine(
        host_backend, E0[None], U0[None], data.X_train[None], data.y_train[None], [(data.X_test, data.y_test)], [cfg]
    )
    N = data.X_train.shape[0]
    for e in range(2):
        perm = permutation(cfg.seed, e, N)
        loss, correct = single.epoch(perm)
        loss_m, correct_m = multi.epoch(perm[None])
        assert type(loss) is float and type(correct) is int
        assert loss == float(loss_m[0]) and correct == int(correct_m[0])
    for a, b in zip(single.weights(), multi.weights(0)):
        np.testing.assert_array_equal(a, b)
    assert single.evaluate("test") == multi.evaluate(0, "test")
    assert single.evaluate("train") == multi.evaluate(0, "train")


def test_properties_view_the_run_weights(host_backend):
    cfg, data, E0, U0 = _setup(host_backend)
    single = ENGINES[host_backend](E0, U0, data, cfg)
    np.testing.assert_array_equal(np.asarray(single.E), E0)
    np.testing.assert_array_equal(np.asarray(single.U), U0)
    single.epoch(permutation(cfg.seed, 0, data.X_train.shape[0]))
    E, U = single.weights()
    np.testing.assert_array_equal(np.asarray(single.E), E)
    np.testing.assert_array_equal(np.asarray(single.U), U)
    assert not np.array_equal(E, E0)  # it trained, on a copy
    assert single.cfg is cfg and single.xp is np


def test_finite_is_a_bool_that_sees_non_finite_weights(host_backend):
    cfg, data, E0, U0 = _setup(host_backend)
    assert ENGINES[host_backend](E0, U0, data, cfg).finite() is True
    E_bad = E0.copy()
    E_bad[0, 0] = np.nan
    assert ENGINES[host_backend](E_bad, U0, data, cfg).finite() is False
