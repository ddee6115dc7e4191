"""Small training runs whose W, U and history were recorded from the trainer before its engines were merged.

``python tests/trainer/reference_runs.py`` rewrites ``data/reference_runs.npz`` from the code on the path; the tests
compare today's runs with the recorded arrays (float64, NumPy and numba) within a rounding tolerance derived from
the run itself (:func:`rounding_tolerance`), never bit for bit: the recording machine's BLAS kernels, thread count
and compiled code sum in another order than a user's machine does, so bitwise equality would test the CPU.
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


#: float64 unit roundoff u = 2^-53 (Higham, *Accuracy and Stability of Numerical Algorithms*, §2.1)
UNIT_ROUNDOFF = 2.0**-53
#: the relative learning-rate perturbation whose effect on the run measures its amplification (first order:
#: far above the rounding noise ~1e-16, far below the nonlinear regime)
LR_STEP = 2.0**-20
#: covers what the first-order model below leaves out: the rounding is componentwise rather than a scalar
#: multiple of the update, and the softmax/LayerNorm/log evaluations add a few roundings per entry
SAFETY = 16.0


def n_steps(kw) -> int:
    """SGD steps of the run: epochs × ⌈N/batch⌉ minibatches, N = K·n_spl training sentences."""
    return int(kw["epochs"]) * -(-(TASK.K * int(kw["n_spl"])) // int(kw["batch"]))


def longest_sum(kw) -> int:
    """The most terms any one float of a step accumulates: a W-gradient entry sums batch·L·K products, each
    made by a score's dot product of length L·d (the loss over N sentences is shorter)."""
    L, K, d = TASK.L, TASK.K, int(kw["d"])
    return max(int(kw["batch"]) * L * K + L * d, TASK.K * int(kw["n_spl"]))


def max_rel_diff(got, ref) -> float:
    """max over the arrays of ‖got − ref‖_∞ / ‖ref‖_∞ (normwise per array, over the entries finite in ``ref``)."""
    worst = 0.0
    for k, r in ref.items():
        g, r = np.asarray(got[k], dtype=float), np.asarray(r, dtype=float)
        m = np.isfinite(r)
        scale = float(np.max(np.abs(r[m]))) if m.any() else 0.0
        if scale > 0:
            worst = max(worst, float(np.max(np.abs(g[m] - r[m]))) / scale)
    return worst


def rounding_tolerance(kw, run, perturbed) -> float:
    """Relative tolerance for comparing ``run`` with a run of the same code on another machine.

    Each SGD step forms its update from sums of at most m = :func:`longest_sum` terms, each with relative
    error ≤ γ_m = m·u/(1 − m·u) (Higham, Thm 3.5 / Lemma 3.1); another BLAS kernel, thread count or code
    generation changes these errors, within the same bound. A relative perturbation of every step's update is
    carried to the end of the run as a relative perturbation of the learning rate is, whose amplification

        A = max_rel_diff(run(lr·(1 + δ)), run(lr)) / δ,     δ = 2⁻²⁰

    ``perturbed`` (the same run with lr·(1 + δ)) measures on this very run. The end of the run then moves by
    at most ≈ n_steps · γ_m · A relative (first order), times :data:`SAFETY`.
    """
    m = longest_sum(kw)
    gamma = m * UNIT_ROUNDOFF / (1 - m * UNIT_ROUNDOFF)
    amp = max(1.0, max_rel_diff(perturbed, run) / LR_STEP)
    return SAFETY * n_steps(kw) * gamma * amp


def lr_perturbed(kw):
    """``kw`` with every learning rate multiplied by 1 + :data:`LR_STEP`."""
    lr = kw["lr"]
    return dict(kw, lr=[x * (1 + LR_STEP) for x in lr] if isinstance(lr, list) else lr * (1 + LR_STEP))


def arrays(prefix, run):
    """The recorded arrays of one run: W, U and the history without its wall-clock times."""
    out = {f"{prefix}/W": run.W, f"{prefix}/U": run.U}
    out.update({f"{prefix}/hist_{k}": v for k, v in run.history.items() if k != "time"})
    return out


def resumed_kw(backend):
    """The keywords of the resumed run (5 epochs in all)."""
    return dict(BASE, backend=backend, layernorm=True, seed=2, eval_every=3, epochs=5)


def resumed_run(backend, tmp, kw=None):
    """A run checkpointed after 2 of 5 epochs (not an evaluation epoch) and resumed to 5."""
    path = os.path.join(tmp, f"ck-{backend}.npz")
    kw = resumed_kw(backend) if kw is None else kw
    fc.train(TASK, **{**kw, "epochs": 2}, checkpoint=path)
    return fc.train(TASK, **kw, resume=path)


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
