"""Benchmark: what fctheory.torch.NCMonitor adds to an epoch of the digits tutorial's training on CPU.

One run trains the tutorial's network (docs/tutorials/digits.py: MLP 64→128→128→d→10, N = 1,400,
11 SGD steps of batch 128, cosine schedule, test accuracy every epoch) and cycles, epoch by epoch, through
four kinds of epoch (the order rotates every cycle, so drift of the shared machine's load hits all four):

* ``bare``: training epoch + test accuracy (no monitoring at all);
* ``pass``: the same + the tutorial's measurement pass over the training set, unhooked;
* ``tutorial``: the same pass with the monitor hooked and its epoch ended (exactly the tutorial's epoch);
* ``train-hook``: the monitor hooked on the training forwards (as the Lightning callback does), no extra
  pass, its epoch ended before the test accuracy.

Ratios of medians: the monitor's overhead in the tutorial is tutorial/pass − 1 (the evaluation pass is the
tutorial's choice, paid with or without a monitor); with the hook on the training forwards it is
train-hook/bare − 1; the tutorial's epoch against bare training is tutorial/bare − 1. The paired figures
(``monitor work``) are the monitor's own time inside each monitored epoch (the monitor's ``monitor_seconds``,
update + end_epoch), median over the epochs, divided by the median epoch of the baseline.

Run:  python benchmarks/torch_monitor.py [--epochs 60] [--d 32,128,512] [--threads 1]
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from pathlib import Path

import numpy as np
import torch
from threadpoolctl import threadpool_limits

from fctheory.torch import NCMonitor

SCRIPT = Path(__file__).resolve().parents[1] / "docs" / "tutorials" / "digits.py"
KINDS = ("bare", "pass", "tutorial", "train-hook")


def tutorial():
    spec = importlib.util.spec_from_file_location("digits_tutorial", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def one_setting(tut, d, epochs):
    """``epochs`` epochs of each kind, interleaved; returns the per-kind epoch times and monitor times (s)."""
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    Xtr, ytr, Xte, yte = tut.balanced_split(140)
    N = len(ytr)
    backbone, fc = tut.build(d=d)
    opt, sched = tut.optimizer(backbone, fc, 0.1, 4 * epochs)
    mons = {
        kind: NCMonitor(10, lam_W=tut.LAM_W, lam_H=tut.LAM_H, classifier=fc, progress=False).attach(backbone)
        for kind in ("tutorial", "train-hook")
    }
    times = {k: [] for k in KINDS}
    work = {k: [] for k in mons}
    for cycle in range(epochs):
        for j in range(len(KINDS)):
            kind = KINDS[(cycle + j) % len(KINDS)]
            mon = mons.get(kind)
            t0 = time.perf_counter()
            if kind == "train-hook":
                mon.begin_epoch()
                tut.train_epoch(backbone, fc, opt, Xtr, ytr, 128, N, gen, monitor=mon)
                mon.end_epoch()
            else:
                tut.train_epoch(backbone, fc, opt, Xtr, ytr, 128, N, gen)
            sched.step()
            if kind == "pass":
                tut.measurement_pass(backbone, fc, Xtr, ytr)
            elif kind == "tutorial":
                with mon.epoch():
                    tut.measurement_pass(backbone, fc, Xtr, ytr, mon)
            tut.accuracy(backbone, fc, Xte, yte)
            times[kind].append(time.perf_counter() - t0)
            if mon is not None:
                work[kind].append(mon.rows[-1]["monitor_seconds"])
    for mon in mons.values():
        mon.close()
    return {k: np.median(v) for k, v in times.items()}, {k: np.median(v) for k, v in work.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=60, help="epochs of each kind")
    ap.add_argument("--d", default="32", help="penultimate widths (comma-separated; the tutorial's is 32)")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    threadpool_limits(args.threads)  # NumPy's BLAS too (the monitor's CPU products and its end of epoch)
    tut = tutorial()
    print(f"torch {torch.__version__}, {args.threads} thread(s), medians of {args.epochs} epochs of each kind")
    print(
        "| d | bare | pass | tutorial | train-hook | monitor work (tutorial) | monitor work (train-hook) "
        "| **tutorial / pass** | **train-hook / bare** | tutorial / bare |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for d in (int(x) for x in args.d.split(",")):
        t, w = one_setting(tut, d, args.epochs)
        ms = {k: f"{1e3 * v:.2f} ms" for k, v in t.items()}
        print(
            f"| {d} | {ms['bare']} | {ms['pass']} | {ms['tutorial']} | {ms['train-hook']} "
            f"| {1e3 * w['tutorial']:.2f} ms ({100 * w['tutorial'] / t['pass']:.1f}%) "
            f"| {1e3 * w['train-hook']:.2f} ms ({100 * w['train-hook'] / t['bare']:.1f}%) "
            f"| **{100 * (t['tutorial'] / t['pass'] - 1):+.1f}%** "
            f"| **{100 * (t['train-hook'] / t['bare'] - 1):+.1f}%** "
            f"| {100 * (t['tutorial'] / t['bare'] - 1):+.1f}% |",
            flush=True,
        )


if __name__ == "__main__":
    main()
