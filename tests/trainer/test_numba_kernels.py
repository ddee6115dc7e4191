"""fctheory.trainer._numba_kernels: the compiled epochs do the same arithmetic as the readable NumPy step
(the numba and NumPy trainers agree to 1e-10 in float64 after 100 steps, and in float32)."""

import numpy as np
import pytest

from fctheory import train
from fctheory.trainer import init_weights
from tests.trainer.test_core_backends import KW, TASK


@pytest.mark.parametrize("layernorm", [False, True])
def test_numba_equals_numpy_float64_after_100_steps(layernorm):
    a = train(TASK, layernorm=layernorm, backend="numpy", dtype="float64", **KW)
    b = train(TASK, layernorm=layernorm, backend="numba", dtype="float64", **KW)
    assert a.epochs_done * 29 >= 100
    for x, y in ((a.W, b.W), (a.U, b.U)):
        assert np.abs(x - y).max() <= 1e-10 * max(1.0, np.abs(x).max())
    np.testing.assert_allclose(a.history["loss"], b.history["loss"], rtol=1e-12)
    np.testing.assert_array_equal(a.history["train_acc"], b.history["train_acc"])
    # the run actually moved the weights (the comparison is not vacuous)
    assert np.abs(a.W - init_weights(TASK, d=6, seed=0, init_scale=0.5)[0].T).max() > 1e-2


@pytest.mark.parametrize("layernorm", [False, True])
def test_numba_equals_numpy_float32(layernorm):
    a = train(TASK, layernorm=layernorm, backend="numpy", dtype="float32", **KW)
    b = train(TASK, layernorm=layernorm, backend="numba", dtype="float32", **KW)
    assert a.W.dtype == b.W.dtype == np.float32 and a.U.dtype == np.float32
    np.testing.assert_allclose(a.W, b.W, rtol=0, atol=1e-4 * np.abs(a.W).max())
    np.testing.assert_allclose(a.U, b.U, rtol=0, atol=1e-4 * np.abs(a.U).max())
