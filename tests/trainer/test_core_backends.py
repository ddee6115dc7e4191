"""Backends agree: same seed → same data, shuffles and initialisation; numba = NumPy to 1e-10.

The numba kernels do the same arithmetic as the readable NumPy step (the requirement "numba and NumPy
agree to 1e-10 in float64 after 100 steps"); float32 runs agree to float32 rounding (1e-4).
"""

import numpy as np
import pytest

from fctheory import Task, train
from fctheory.trainer import epoch_permutation, init_weights, make_data

TASK = Task.random(3, 5, 4, 20, mu="zipf", seed=3)
# 200 sentences, batch 7: 29 steps per epoch (the last one partial), 4 epochs = 116 steps
KW = dict(n_spl=10, d=6, batch=7, epochs=4, lr=0.3, lam_W=2e-3, lam_U=1e-3, init_scale=0.5, measure=False)


def test_float32_and_float64_runs_start_from_the_same_point():
    e64, u64 = init_weights(TASK, d=6, seed=5, init_scale=1e-3, dtype="float64")
    e32, u32 = init_weights(TASK, d=6, seed=5, init_scale=1e-3, dtype="float32")
    np.testing.assert_array_equal(e32, e64.astype(np.float32))
    np.testing.assert_array_equal(u32, u64.astype(np.float32))
    # PyTorch-like scales: N(0,1)/1000 and U(−1/√(Ld), 1/√(Ld))/1000
    assert np.abs(u64).max() <= 1e-3 / np.sqrt(4 * 6)


def test_same_seed_same_data_and_shuffles_different_seed_differs():
    d1, d2, d3 = make_data(TASK, n_spl=3, seed=7), make_data(TASK, n_spl=3, seed=7), make_data(TASK, n_spl=3, seed=8)
    np.testing.assert_array_equal(d1.X_train, d2.X_train)
    np.testing.assert_array_equal(d1.X_test, d2.X_test)
    assert not np.array_equal(d1.X_train, d3.X_train)
    assert not np.array_equal(d1.X_train, d1.X_test)  # test sentences are fresh draws
    np.testing.assert_array_equal(epoch_permutation(seed=7, epoch=3, n=50), epoch_permutation(seed=7, epoch=3, n=50))
    assert not np.array_equal(epoch_permutation(seed=7, epoch=3, n=50), epoch_permutation(seed=7, epoch=4, n=50))
    # the sentences follow the task: word concepts are the class's latent variable
    np.testing.assert_array_equal(d1.X_train // TASK.s_c, TASK.Z[d1.y_train])
    assert d1.X_test.shape == (TASK.K * 5, TASK.L)


@pytest.mark.gpu
def test_cupy_equals_numpy_float64():
    pytest.importorskip("cupy")
    a = train(TASK, backend="numpy", dtype="float64", **KW)
    b = train(TASK, backend="cupy", dtype="float64", **KW)
    assert np.abs(a.W - b.W).max() <= 1e-10 * max(1.0, np.abs(a.W).max())
    assert np.abs(a.U - b.U).max() <= 1e-10 * max(1.0, np.abs(a.U).max())


def test_engines_do_not_write_into_the_callers_arrays(host_backend):
    from fctheory.trainer._engines import ENGINES
    from fctheory.trainer.core import TrainConfig

    E0, U0 = init_weights(TASK, d=6, seed=0, init_scale=0.5)
    E1, U1 = E0.copy(), U0.copy()
    cfg = TrainConfig(n_spl=10, d=6, batch=7, dtype="float64", backend=host_backend)
    eng = ENGINES[host_backend](E0, U0, make_data(TASK, n_spl=10, seed=0), cfg)
    eng.epoch(np.arange(200))
    assert np.array_equal(E0, E1) and np.array_equal(U0, U1)
    assert not np.array_equal(eng.weights()[0], E0)
