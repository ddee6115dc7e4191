"""Benchmark: the overhead of fctheory.torch.NCMonitor relative to an epoch of the digits tutorial.

In one run, epoch by epoch and interleaved, on the tutorial's network (docs/tutorials/digits.py):
* ``train``: one training epoch (11 SGD steps of batch 128 over N = 1,400 samples);
* ``pass``: the measurement pass over the training set without a monitor (a forward of the backbone);
* ``monitored``: the same pass with the monitor hooked and the epoch ended (metrics, UFM distances);
the monitor's overhead is (monitored − pass) / train. ``--d`` repeats it for wider penultimate layers
(the d×d scatter and the metrics' eigendecomposition grow as d², d³).

Run:  python benchmarks/torch_monitor.py [--epochs 30] [--d 32,128,512] [--threads 1]
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from pathlib import Path

import numpy as np
import torch

from fctheory.torch import NCMonitor

SCRIPT = Path(__file__).resolve().parents[1] / "docs" / "tutorials" / "digits.py"


def tutorial():
    spec = importlib.util.spec_from_file_location("digits_tutorial", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def one_setting(tut, d, epochs):
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    Xtr, ytr, _, _ = tut.balanced_split(140)
    N = len(ytr)
    backbone, fc = tut.build(d=d)
    opt = torch.optim.SGD(list(backbone.parameters()) + list(fc.parameters()), lr=0.05, momentum=0.9)
    mon = NCMonitor(10, lam_W=tut.LAM_W, lam_H=tut.LAM_H, classifier=fc, progress=False).attach(backbone)
    chunks = torch.arange(N).split(512)
    t = {"train": [], "pass": [], "monitored": [], "end_epoch": []}
    for _ in range(epochs):
        t0 = time.perf_counter()
        tut.train_epoch(backbone, fc, opt, Xtr, ytr, 128, N, gen)
        t1 = time.perf_counter()
        backbone.eval()
        with torch.no_grad():
            for idx in chunks:
                backbone(Xtr[idx])
        t2 = time.perf_counter()
        with torch.no_grad():
            mon.begin_epoch()
            for idx in chunks:
                with mon.batch(ytr[idx]):
                    backbone(Xtr[idx])
            t3 = time.perf_counter()
            mon.end_epoch()
        t4 = time.perf_counter()
        t["train"].append(t1 - t0)
        t["pass"].append(t2 - t1)
        t["monitored"].append(t4 - t2)
        t["end_epoch"].append(t4 - t3)
    mon.close()
    return {k: float(np.median(v)) for k, v in t.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--d", default="32,128,512", help="penultimate widths (comma-separated)")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    tut = tutorial()
    print(f"torch {torch.__version__}, {args.threads} thread(s), median of {args.epochs} epochs")
    print("| d | training epoch | pass without monitor | pass with monitor | of which end_epoch | overhead / epoch |")
    print("|---|---|---|---|---|---|")
    for d in (int(x) for x in args.d.split(",")):
        r = one_setting(tut, d, args.epochs)
        over = (r["monitored"] - r["pass"]) / r["train"]
        print(
            f"| {d} | {1e3 * r['train']:.1f} ms | {1e3 * r['pass']:.2f} ms | {1e3 * r['monitored']:.2f} ms | "
            f"{1e3 * r['end_epoch']:.2f} ms | **{100 * over:.0f}%** |",
            flush=True,
        )


if __name__ == "__main__":
    main()
