"""Small training runs whose W, U and history were recorded from the trainer before its engines were merged.

``python tests/trainer/reference_runs.py`` rewrites ``data/reference_runs.npz`` from the code on the path; the tests
compare today's runs with the recorded arrays bit for bit (float64, NumPy and numba).
"""

from __future__ import annotations

import os
import sys

import numpy as np

import fctheory as fc
from fctheory.trainer.batched import train_batched

DATA = os.path.join(os.path.dirname(__file__), "data", "reference_runs.npz")
TASK = fc.Task.random(3, 4, 4, 10, seed=0)
# n_spl=7 gives N = 70 sentences: a batch of 8 leaves a last minibatch of 6
BASE = dict(
    n_spl=7,
    d=6,
    batch=8,
    epochs=4,
    lr=0.3,
    lam_W=1e-3,
    lam_U=2e-3,
    init_scale=0.5,
    n_test=3,
    eval_every=3,
    dtype="float64",
    measure=False,
)
HOST = ("numpy", "numba")


def train_cases():
    """(name, keyword arguments of train) for every recorded single run."""
    for backend in HOST:
        for ln in (False, True):
            for seed in (0, 5):
                yield f"train-{backend}-ln{int(ln)}-s{seed}", dict(BASE, backend=backend, layernorm=ln, seed=seed)


def batched_cases():
    """(name, keyword arguments of train_batched) for every recorded batch."""
    for backend in HOST:
        for ln in (False, True):
            yield (
                f"batched-{backend}-ln{int(ln)}",
                dict(BASE, backend=backend, layernorm=ln, seed=[0, 5, 0], lr=[0.3, 0.2, 0.1], lam_W=[1e-3, 0, 1e-2]),
            )
        yield f"batched-{backend}-one", dict(BASE, backend=backend, seed=[3], layernorm=True)
        # the second run diverges; errors="return" keeps the others
        yield f"batched-{backend}-diverge", dict(BASE, backend=backend, seed=[1, 1], lr=[0.3, 1e12], errors="return")


def arrays(prefix, run):
    """The recorded arrays of one run: W, U and the history without its wall-clock times."""
    out = {f"{prefix}/W": run.W, f"{prefix}/U": run.U}
    out.update({f"{prefix}/hist_{k}": v for k, v in run.history.items() if k != "time"})
    return out


def resumed_run(backend, tmp):
    """A run checkpointed after 2 of 5 epochs (not an evaluation epoch) and resumed to 5."""
    path = os.path.join(tmp, f"ck-{backend}.npz")
    kw = dict(BASE, backend=backend, layernorm=True, seed=2, eval_every=3)
    fc.train(TASK, **{**kw, "epochs": 2}, checkpoint=path)
    return fc.train(TASK, **{**kw, "epochs": 5}, resume=path)


def record(tmp):
    out = {}
    for name, kw in train_cases():
        out.update(arrays(name, fc.train(TASK, **kw)))
    for name, kw in batched_cases():
        for r, run in enumerate(train_batched(TASK, **kw)):
            if isinstance(run, fc.FCTheoryError):
                out[f"{name}/{r}/error"] = np.array(str(run))
            else:
                out.update(arrays(f"{name}/{r}", run))
    for backend in HOST:
        out.update(arrays(f"resume-{backend}", resumed_run(backend, tmp)))
    return out


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        np.savez_compressed(sys.argv[1] if len(sys.argv) > 1 else DATA, **record(tmp))
