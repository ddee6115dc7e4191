"""Valid, fast examples for every public callable of fctheory.risk and fctheory.trainer.

Tiny tasks (n_c = 3, s_c = 2, L = 2, K ≤ 9) keep each call far below 0.2 s; the trainer runs on the
NumPy backend (no JIT compilation). Keys use the sub-package paths; the harness also accepts them
for the names re-exported at the top level (fctheory.true_risk, fctheory.train, ...).
"""

from __future__ import annotations

import functools
import os

import numpy as np

import fctheory as fc
from fctheory.trainer import TrainConfig, get_preset, make_data, train

from .harness import scratch_dir


@functools.lru_cache(maxsize=None)
def _task():
    return fc.Task.random(3, 2, 2, 4, seed=0)


@functools.lru_cache(maxsize=None)
def _full():
    return fc.Task.full(3, 2, 2)


def _weights(task, d=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((d, task.n_w)), rng.standard_normal((task.K, task.L * d))


def _risk_args(**extra):
    task = _full()
    W, U = _weights(task, 3)
    return dict(task=task, W=W, U=U, lam=0.01, **extra)


_TRAIN = dict(
    n_spl=2, d=3, epochs=2, batch=4, lr=0.1, backend="numpy", dtype="float64", init_scale=0.1, n_test=2, measure=False
)


@functools.lru_cache(maxsize=None)
def _checkpoint():
    """A finished 2-epoch run's checkpoint (resuming it runs no epoch: fast)."""
    folder = scratch_dir("checkpoint-")
    path = os.path.join(folder, "run.npz")
    train(_task(), checkpoint=path, **_TRAIN)
    return path


def _data():
    return make_data(_task(), n_spl=2, seed=0, n_test=1)


EXAMPLES = {
    # ----------------------------------------------------------------------------- fctheory.risk
    "fctheory.risk.true_risk": lambda: _risk_args(
        layernorm=False, eps=0.0, backend="numpy", progress=False, max_seconds=None, max_bytes=None
    ),
    "fctheory.risk.true_risk_grad": lambda: _risk_args(
        layernorm=False, eps=0.0, backend="numpy", progress=False, max_seconds=None, max_bytes=None
    ),
    "fctheory.risk.unregularized_risk": lambda: {
        k: v
        for k, v in _risk_args(
            layernorm=True, eps=0.0, backend="numpy", progress=False, max_seconds=None, max_bytes=None
        ).items()
        if k != "lam"
    },
    "fctheory.risk.evaluate_risk": lambda: _risk_args(
        layernorm=False,
        grad=True,
        eps=0.0,
        backend="numpy",
        jit=None,
        progress=False,
        max_seconds=None,
        max_bytes=None,
        workers=1,
    ),
    "fctheory.risk.expected_margins": lambda: {
        k: v for k, v in _risk_args(layernorm=False, eps=0.0).items() if k != "lam"
    },
    "fctheory.risk.minimize_true_risk": lambda: dict(
        task=fc.Task.full(2, 1, 2),
        d=2,
        lam=0.1,
        layernorm=False,
        seed=0,
        W0=None,
        U0=None,
        init_scale=0.1,
        gtol=1e-6,
        maxiter=20,
        memory=5,
        eps=0.0,
        backend="numpy",
        max_seconds=None,
        max_bytes=None,
        callback=None,
    ),
    "fctheory.risk.optimum": lambda: dict(
        task=fc.Task.random(2, 1, 2, 3, seed=0),
        lam=0.1,
        network="h",
        d=None,
        precision="float",
        tol=1e-8,
        maxiter=50,
        n_starts=1,
        seed=0,
        workers=1,
        max_seconds=None,
        max_bytes=None,
        symmetry=True,
        data=None,
        backend="numba",
        client=None,
        blocks=None,
    ),
    "fctheory.certify": lambda: dict(
        task=fc.Task.random(2, 1, 2, 3, seed=0),
        W=np.ones((1, 2)),
        U=np.ones((3, 2)),
        lam=0.1,
        data=(np.array([[1, 0], [1, 1], [0, 1]]), np.array([0, 1, 2])),
        solve=False,
        precision="float",
        tol=1e-8,
        backend="numba",
        client=None,
        blocks=None,
        max_seconds=None,
        max_bytes=None,
    ),
    "fctheory.optima.certify_optimality_empirical": lambda: dict(
        task=fc.Task.random(2, 1, 2, 3, seed=0),
        W=np.ones((1, 2)),
        U=np.ones((3, 2)),
        lam=0.1,
        S=np.array([[1, 0], [1, 1], [0, 1]]),
        y=np.array([0, 1, 2]),
        prec=64,
        max_pairs=None,
    ),
    "fctheory.predictions.predict_exact": lambda: dict(
        task=fc.Task.random(2, 1, 2, 3, seed=0), lam=0.1, network="h", d=None, max_seconds=None, max_bytes=None
    ),
    "fctheory.optima.sample_average_optimum": lambda: dict(
        task=fc.Task.random(3, 2, 2, 4, seed=0, mu="zipf"),
        lam=0.05,
        n_spl=3,
        replicates=2,
        n_validation=2,
        seed=0,
        tol=1e-6,
        max_seconds=60.0,
    ),
    "fctheory.risk.certify_optimality": lambda: dict(
        task=fc.Task.random(2, 1, 2, 3, seed=0), W=np.ones((1, 2)), U=np.ones((3, 2)), lam=0.1, prec=64, max_pairs=None
    ),
    "fctheory.risk.estimate_cost": lambda: dict(
        task=_full(), d=4, grad=True, backend="numpy", max_bytes=None, workers=None
    ),
    "fctheory.risk.true_risk_bruteforce": lambda: _risk_args(layernorm=False, grad=True, eps=0.0, max_pairs=10**6),
    "fctheory.risk.class_sentences": lambda: dict(task=_task(), k=1),
    # ----------------------------------------------------------------------------- fctheory.trainer
    "fctheory.trainer.train": lambda: dict(
        task=_task(),
        **_TRAIN,
        layernorm=False,
        eps=1e-5,
        lam_W=1e-3,
        lam_U=1e-3,
        seed=0,
        eval_every=None,
        checkpoint=None,
        checkpoint_every=None,
        resume=None,
        progress=False,
        callback=None,
        measure_every=None,
        keep_data=False,
    ),
    "fctheory.trainer.resume": lambda: dict(path=_checkpoint(), epochs=None),
    "fctheory.trainer.load_checkpoint": lambda: dict(path=_checkpoint()),
    "fctheory.trainer.make_data": lambda: dict(task=_task(), n_spl=2, seed=0, n_test=1),
    "fctheory.trainer.init_weights": lambda: dict(task=_task(), d=3, seed=0, init_scale=1e-3, dtype="float64"),
    "fctheory.trainer.epoch_permutation": lambda: dict(seed=0, epoch=3, n=10),
    "fctheory.trainer.measure": lambda: dict(
        task=_task(),
        W=_weights(_task(), 3)[0],
        U=_weights(_task(), 3)[1],
        layernorm=False,
        eps=1e-5,
        data=_data(),
        lam_W=1e-3,
        lam_U=1e-3,
        d=3,
        n_spl=2,
        distances=False,
        predict=True,
    ),
    "fctheory.trainer.theory_prediction": lambda: dict(task=_full(), d=4, layernorm=False, lam_W=0.01, lam_U=0.01),
    "fctheory.trainer.get_preset": lambda: dict(name="fig3", quick=True),
    "fctheory.trainer.TrainConfig": lambda: dict(
        n_spl=2,
        d=3,
        layernorm=False,
        eps=1e-5,
        lr=0.1,
        batch=4,
        epochs=2,
        lam_W=1e-3,
        lam_U=1e-3,
        seed=0,
        backend="numpy",
        dtype="float64",
        init_scale=1e-3,
        n_test=1,
        eval_every=None,
    ),
    "fctheory.trainer.TrainConfig.to_dict": lambda: (TrainConfig(n_spl=2, d=3), {}),
    "fctheory.trainer.TrainData": lambda: dict(
        X_train=np.array([[0, 2], [1, 3]]),
        y_train=np.array([0, 1]),
        X_test=np.zeros((0, 2), dtype=np.int64),
        y_test=np.zeros(0, dtype=np.int64),
    ),
    "fctheory.trainer.Preset": lambda: dict(
        name="tiny",
        description="a tiny preset",
        n_c=3,
        s_c=2,
        L=2,
        K=4,
        mu="uniform",
        d=3,
        n_spl=2,
        layernorm=False,
        lam_W=1e-3,
        lam_U=1e-3,
        lr=0.1,
        batch=4,
        epochs=2,
        eval_every=1,
        init_scale=1e-3,
        eps=1e-5,
        seed=0,
    ),
    "fctheory.trainer.Preset.task": lambda: (get_preset("fig3", quick=True), {}),
    "fctheory.trainer.Preset.train_kwargs": lambda: (get_preset("fig3", quick=True), {}),
}

SKIP = {}

ALLOW_NONFINITE = {
    # documented NaN of the optimum's comparisons: no type-III configuration off full tasks with non-uniform mu,
    # no type-I one for n_c = 1 or outside Theorem 1's range; align has no meaning for h*
    "fctheory.risk.optimum": {
        "R_type1": "NaN where no type-I (h*: type-II) configuration is defined (documented)",
        "R_type3": "NaN off full tasks with non-uniform mu (documented)",
        "align": "NaN for network h* (documented)",
        "R_convex": "NaN for the population optima (documented: the training-set optimum's min g)",
    },
    "fctheory.certify": {
        "lower_bound_optimum": "NaN without solve=True (documented)",
        "R_optimum": "NaN without solve=True (documented)",
    },
    # 𝔐(r) is undefined (NaN, documented) at distances r where no pair of latent variables lies
    "fctheory.risk.expected_margins": {"by_distance": "NaN where no pair of classes is at distance r (documented)"},
    # documented NaN sentinels of the measurements: no test set (n_test = 0), or a mean over no pair
    "fctheory.trainer.measure": {
        "test_acc": "NaN without test sentences (n_test=0)",
        "test_ce": "NaN without test sentences",
        "train_acc": "NaN without data",
        "train_ce": "NaN without data",
        "cos_W_within": "NaN when no concept has two words (s_c = 1)",
        "cos_U_within": "NaN when no concept repeats among the u_(k,l)",
    },
    # a run's history has NaN test accuracy/loss at epochs without evaluation (documented)
    "fctheory.trainer.train": {
        "history": "NaN test_acc/test_loss at epochs not evaluated (documented)",
        "measurements": "documented NaN sentinels of Measurements",
        "snapshots": "the Measurements of each snapshot: the same documented NaN sentinels",
    },
    "fctheory.trainer.resume": {
        "history": "NaN test_acc/test_loss at epochs not evaluated (documented)",
        "measurements": "documented NaN sentinels of Measurements",
        "snapshots": "the Measurements of each snapshot: the same documented NaN sentinels",
    },
    "fctheory.trainer.load_checkpoint": {"history": "NaN test_acc/test_loss at epochs not evaluated (documented)"},
}
