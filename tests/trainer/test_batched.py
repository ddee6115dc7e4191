"""Batched training: every run of a batch equals its sequential twin fctheory.train."""

import numpy as np
import pytest

import fctheory as fc
from fctheory.trainer.batched import batch_key, train_batched

TASK = fc.Task.random(3, 4, 3, 10, seed=0)
KW = dict(d=5, epochs=4, batch=7, dtype="float64", init_scale=0.5, n_test=3)
SEEDS = [0, 1, 2, 0]
LRS = [0.1, 0.2, 0.05, 0.3]
LWS = [1e-3, 0.0, 1e-2, 1e-3]
LUS = [1e-3, 1e-2, 0.0, 1e-3]


def _rel(a, b):
    return float(np.abs(np.asarray(a) - np.asarray(b)).max() / np.abs(np.asarray(b)).max())


@pytest.mark.parametrize("layernorm", [False, True])
def test_each_run_equals_its_sequential_twin(host_backend, layernorm):
    runs = train_batched(
        TASK,
        n_spl=6,
        seed=SEEDS,
        lr=LRS,
        lam_W=LWS,
        lam_U=LUS,
        backend=host_backend,
        layernorm=layernorm,
        measure=False,
        **KW,
    )
    assert len(runs) == 4
    for r, (s, lr, lw, lu) in enumerate(zip(SEEDS, LRS, LWS, LUS)):
        twin = fc.train(
            TASK,
            n_spl=6,
            seed=s,
            lr=lr,
            lam_W=lw,
            lam_U=lu,
            backend=host_backend,
            layernorm=layernorm,
            measure=False,
            **KW,
        )
        assert _rel(runs[r].W, twin.W) <= 1e-12
        assert _rel(runs[r].U, twin.U) <= 1e-12
        for key in ("loss", "train_acc"):
            np.testing.assert_allclose(runs[r].history[key], twin.history[key], rtol=1e-12, atol=0)
        np.testing.assert_array_equal(runs[r].history["test_acc"], twin.history["test_acc"])
        assert runs[r].config == twin.config


def test_measurements_match_the_twin():
    runs = train_batched(TASK, n_spl=6, seed=[3, 4], lr=0.2, backend="numpy", **KW)
    twin = fc.train(TASK, n_spl=6, seed=4, lr=0.2, backend="numpy", **KW)
    assert runs[1].measurements.test_acc == twin.measurements.test_acc
    assert abs(runs[1].measurements.train_ce - twin.measurements.train_ce) <= 1e-12 * twin.measurements.train_ce


def test_a_diverging_run_is_reported_and_the_others_continue():
    runs = train_batched(
        TASK,
        n_spl=6,
        seed=[0, 1],
        lr=[0.1, 1e6],
        backend="numpy",
        errors="return",
        measure=False,
        **{**KW, "init_scale": 50.0},
    )
    assert isinstance(runs[1], fc.FCTheoryError) and "diverged" in str(runs[1])
    twin = fc.train(TASK, n_spl=6, seed=0, lr=0.1, backend="numpy", measure=False, **{**KW, "init_scale": 50.0})
    assert _rel(runs[0].W, twin.W) <= 1e-12
    with pytest.raises(fc.FCTheoryError, match="lr="):
        train_batched(
            TASK, n_spl=6, seed=[0, 1], lr=[0.1, 1e6], backend="numpy", measure=False, **{**KW, "init_scale": 50.0}
        )


def test_per_run_lengths_must_agree():
    with pytest.raises(fc.FCTheoryError, match="lr="):
        train_batched(TASK, n_spl=6, seed=[0, 1, 2], lr=[0.1, 0.2], backend="numpy", **KW)


def test_batch_key_ignores_only_the_batch_axes():
    a = dict(n_spl=5, d=4, seed=0, lr=0.1, lam_W=0.0, lam_U=1.0)
    assert batch_key(a) == batch_key({**a, "seed": 9, "lr": 0.3, "lam_W": 1.0})
    assert batch_key(a) != batch_key({**a, "d": 5})
