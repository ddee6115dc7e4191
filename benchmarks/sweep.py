"""Runs per second of batched training against sequential single runs, in the same process.

R runs of one shape that differ in seed (the typical seed / λ / lr sweep) are trained

* sequentially: ``fctheory.train(..., seed=r)`` one after the other (what a hand-written loop does);
* batched: one ``fctheory.train_batched(..., seed=range(R))`` call (leading run axis).

Both include data sampling and initialisation, without the final measurements (``measure=False``),
with the same backend and dtype. A warm-up call of each comes first (numba compilation, CUDA context,
cuBLAS handles). The sequential time is measured on ``--seq-runs`` runs and scaled to R (the runs are
identical in cost). Run 0 of the batch is compared with sequential run 0 (same seed): the relative
difference of W is printed (float64: ≤ 1e-12; float32: rounding).

    python benchmarks/sweep.py --backend numba --runs 16 --shape fig3 --epochs 1
    python benchmarks/sweep.py --backend cupy --runs 64 --shape fig3 --epochs 3      # on a GPU

Shapes: ``fig3`` (n_c = 3, n_w = 1200, L = 15, K = 1000, d = 100, n_spl = 5: 50 SGD steps of batch
100 per epoch, 0.9 GFLOP per step) and ``small`` (n_c = 3, s_c = 8, L = 5, K = 40, d = 12, n_spl = 5,
batch 20: the quick presets' shape, where per-step overhead dominates).
The last line printed is a markdown table row for docs/performance.md.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import time

_ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
_ap.add_argument("--backend", default="numba", choices=("numba", "numpy", "cupy"))
_ap.add_argument("--runs", type=int, default=16, help="runs in the batch (R)")
_ap.add_argument("--shape", default="fig3", choices=("fig3", "small"))
_ap.add_argument("--epochs", type=int, default=1)
_ap.add_argument("--dtype", default="float32", choices=("float32", "float64"))
_ap.add_argument(
    "--seq-runs", type=int, default=None, help="sequential runs timed (default: min(runs, 4); all runs with --seq-all)"
)
_ap.add_argument("--seq-all", action="store_true", help="time all R sequential runs (no scaling)")
_ap.add_argument("--threads", type=int, default=None, help="BLAS / numba threads (default: all cores)")
ARGS = _ap.parse_args()
if ARGS.threads:
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        os.environ[var] = str(ARGS.threads)

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import fctheory as fc  # noqa: E402
from fctheory.trainer.batched import train_batched  # noqa: E402


def shape():
    if ARGS.shape == "fig3":
        task = fc.Task.random(3, 400, 15, 1000, seed=np.random.default_rng([0, 0]))
        return task, dict(n_spl=5, d=100, batch=100, lr=0.1, lam_W=1e-3, lam_U=1e-3, init_scale=1e-3)
    task = fc.Task.random(3, 8, 5, 40, seed=np.random.default_rng([0, 0]))
    return task, dict(n_spl=5, d=12, batch=20, lr=0.5, lam_W=1e-3, lam_U=1e-3, init_scale=0.1)


def device() -> str:
    if ARGS.backend == "cupy":
        import cupy  # noqa: PLC0415

        name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
        return name.decode() if isinstance(name, bytes) else str(name)
    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"


def main():
    task, kw = shape()
    R = ARGS.runs
    common = dict(
        epochs=ARGS.epochs,
        backend=ARGS.backend,
        dtype=ARGS.dtype,
        measure=False,
        n_test=5,
        eval_every=max(ARGS.epochs, 1),
        **kw,
    )
    n_spl = common.pop("n_spl")
    n_seq = R if ARGS.seq_all else (ARGS.seq_runs or min(R, 4))
    print(
        f"{ARGS.shape}: {task!r}, d={kw['d']}, n_spl={n_spl}, batch={kw['batch']}, {ARGS.epochs} epoch(s), "
        f"{ARGS.backend}/{ARGS.dtype}, R={R} runs; sequential timed on {n_seq} run(s); device: {device()}"
    )
    fc.set_budget(max_seconds=float("inf"), max_bytes=float("inf"))  # a benchmark sizes itself
    # warm-up: compilation, CUDA context, allocator
    fc.train(task, n_spl=n_spl, **{**common, "epochs": 1}, seed=10**6)
    train_batched(task, n_spl=n_spl, **{**common, "epochs": 1}, seed=[10**6, 10**6 + 1])

    t = time.perf_counter()
    seq = [fc.train(task, n_spl=n_spl, **common, seed=r) for r in range(n_seq)]
    t_seq = (time.perf_counter() - t) / n_seq  # seconds per run
    t = time.perf_counter()
    bat = train_batched(task, n_spl=n_spl, **common, seed=list(range(R)))
    t_bat = time.perf_counter() - t
    diff = float(np.abs(bat[0].W.astype(np.float64) - seq[0].W).max() / np.abs(seq[0].W).max())
    rs_seq, rs_bat = 1.0 / t_seq, R / t_bat
    ratio = rs_bat / rs_seq
    steps = ARGS.epochs * -(-task.K * n_spl // kw["batch"])
    print(f"sequential: {t_seq:.3f} s per run ({rs_seq:.3g} runs/s, {t_seq / max(steps, 1) * 1e3:.3g} ms per step)")
    print(
        f"batched:    {t_bat:.3f} s for {R} runs ({rs_bat:.3g} runs/s, {t_bat / max(steps, 1) * 1e3:.3g} ms per "
        f"batched step)"
    )
    print(
        f"ratio (batched / sequential runs per second): {ratio:.2f}x; run 0 vs its sequential twin: max rel. "
        f"diff of W {diff:.1e}"
    )
    day = datetime.date.today().isoformat()
    print(
        f"| {day} | {device()} | {ARGS.backend} | {ARGS.dtype} | {ARGS.shape} | {R} | {ARGS.epochs} | "
        f"{rs_seq:.3g} | {rs_bat:.3g} | **{ratio:.2f}×** |"
    )


if __name__ == "__main__":
    main()
