"""Valid, fast examples for every public callable of fctheory.diagnosis and fctheory.risk.load_weights.

Tiny tasks (n_c = 3, s_c = 2, L = 2, K ≤ 9); files are written into a fresh scratch folder per call
(:func:`harness.scratch_dir`: under pytest's ``tmp_path_factory`` when run by the tests).
"""

from __future__ import annotations

import functools
import os

import numpy as np

import fctheory as fc

from .harness import scratch_dir


@functools.lru_cache(maxsize=None)
def _full():
    return fc.Task.full(3, 2, 2)


def _weights(task, d=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((d, task.n_w)), rng.standard_normal((task.K, task.L * d))


def _tmp():
    return scratch_dir("diagnose-")


def _weights_file():
    task = _full()
    W, U = _weights(task)
    p = os.path.join(_tmp(), "w.npz")
    np.savez(p, W=W, U=U, Z=task.Z, mu=task.mu)
    return p


def _task_file():
    p = os.path.join(_tmp(), "task.json")
    fc.save_task(fc.Task.random(3, 2, 2, 4, seed=0), p)
    return p


def _z_file():
    p = os.path.join(_tmp(), "z.npy")
    np.save(p, fc.Task.random(3, 2, 2, 4, seed=0).Z)
    return p


def _mu_file():
    p = os.path.join(_tmp(), "mu.json")
    with open(p, "w") as f:
        f.write("[0.75, 0.25]")
    return p


def _diag_args(**extra):
    task = _full()
    W, U = _weights(task)
    return dict(W=W, U=U, task=task, lam_W=0.01, lam_U=0.01, assumptions=False, distances=False, **extra)


EXAMPLES = {
    "fctheory.diagnose": lambda: _diag_args(),
    "fctheory.diagnosis.applicable_theorem": lambda: dict(task=_full(), d=3, lam_W=0.01, lam_U=0.01),
    "fctheory.diagnosis.monte_carlo_risk": lambda: dict(
        task=_full(), W=_weights(_full())[0], U=_weights(_full())[1], lam_W=0.01, lam_U=0.01, n_samples=8, seed=0
    ),
    "fctheory.load_task": lambda: dict(path=_task_file()),
    "fctheory.save_task": lambda: dict(task=_full(), path=os.path.join(_tmp(), "t.json")),
    "fctheory.diagnosis.task_to_dict": lambda: dict(task=_full()),
    "fctheory.diagnosis.task_from_dict": lambda: dict(
        obj={"n_c": 3, "s_c": 2, "L": 2, "Z": [[0, 1], [2, 2]], "mu": "zipf"}
    ),
    "fctheory.diagnosis.load_latent": lambda: dict(path=_z_file(), n_c=3, L=2),
    "fctheory.diagnosis.load_frequencies": lambda: dict(path=_mu_file(), s_c=2),
    "fctheory.diagnosis.load_run": lambda: dict(path=_weights_file()),
    "fctheory.diagnosis.save_run": lambda: dict(
        path=os.path.join(_tmp(), "run"),
        task=_full(),
        W=_weights(_full())[0],
        U=_weights(_full())[1],
        config={"lam_W": 0.01, "lam_U": 0.01},
    ),
    "fctheory.risk.load_weights": lambda: dict(path=_weights_file(), L=2),
    "fctheory.diagnosis.weights_from_state_dict": lambda: dict(
        state_dict={"emb.weight": _weights(_full())[0].T, "clf.weight": _weights(_full())[1]}, L=2
    ),
}


@functools.lru_cache(maxsize=None)
def _diagnosis():
    return fc.diagnose(**_diag_args())


# methods: (instance, kwargs); the figures take about a second (matplotlib), inside the harness' time limit
EXAMPLES["fctheory.Diagnosis.plot"] = lambda: (_diagnosis(), dict(out=os.path.join(_tmp(), "fig")))
EXAMPLES["fctheory.Diagnosis.report"] = lambda: (_diagnosis(), dict(out=os.path.join(_tmp(), "rep")))

SKIP = {}

ALLOW_NONFINITE = {}
