"""Benchmark: NCMonitor's one-pass statistics against rhubarbwu/neural-collapse's accumulators, same features, device.

The peer (https://github.com/rhubarbwu/neural-collapse, package ``neural_collapse``; not on PyPI: install it
with ``pip install git+https://github.com/rhubarbwu/neural-collapse`` or put a checkout on ``PYTHONPATH``)
needs the class means before the second moments, so an epoch's features go through it twice:
``MeanAccumulator`` (pass 1), then ``CovarAccumulator`` and ``VarNormAccumulator`` with those means
(pass 2), then ``covariance_ratio`` (NC1, metric "pinv") and ``variability_cdnv`` (CDNV). NCMonitor makes
one pass (``update`` per batch) and ``end_epoch`` computes from its statistics NC1, CDNV and everything
else of a row (NC2, norms, angles, the UFM distances), so its metric time covers more.

Both run in float64 (the peer's ``dtype=torch.float64``; its CDNV kernel grid takes torch's default dtype,
so that is float64 while the peer computes) on the same float32 feature batches, after one untimed
warm-up epoch each; times are medians of ``--reps`` repetitions, interleaved. The two NC1 and CDNV agree
to ~1e-12 relative (the peers' conventions, docs/metrics-peers.md rows RW-nc1-pinv and RW-cdnv: global
mean = mean of the class means; class variance Σ‖h − μ_k‖²/n_k; Σ_B⁺ by pseudo-inverse, which on generic
features keeps the same K − 1 directions as fctheory's default rank rule). The script stops with an error
if they differ by more than 1e-10.

On a GPU (``--device cuda``) the features live on the device, both sides compute there, and every timed
section ends with ``torch.cuda.synchronize()``.

Vocabulary scale (K in the tens of thousands): ``--n`` may be a list, one sample count per K (reduced counts on
a small machine); ``--peer-tile T`` passes the peer's own ``tile_size`` to its CDNV (its K × K grid is still
formed: 8·K² bytes), ``--peer-max-K`` skips the peer above that many classes (the grid would not fit), and
``--reps 1`` measures one epoch after a single small warm-up of both libraries (numba's caches, the peer's
kernels) instead of a warm-up per setting. Each row reports wall and CPU seconds (``time.process_time``: all
threads of the process, the figure to compare on a loaded machine) and the process's peak RSS so far.

Run:  python benchmarks/torch_monitor_peers.py [--n 50000] [--K 10,100] [--d 64,512] [--batch 1000] [--reps 3]
      [--device cpu|cuda] [--threads 1] [--peer-tile T] [--peer-max-K K]
"""

from __future__ import annotations

import argparse
import math
import resource
import time

import numpy as np
import torch

from fctheory.torch import NCMonitor

try:
    from neural_collapse.accumulate import CovarAccumulator, MeanAccumulator, VarNormAccumulator
    from neural_collapse.measure import covariance_ratio, variability_cdnv
except ImportError:  # the peer is optional
    MeanAccumulator = None


def batches(N, K, d, B, seed=0, device="cpu"):
    """Float32 features of K well-separated Gaussian classes (every class in every epoch), in batches of B."""
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, K, (N,), generator=g)
    y[:K] = torch.arange(K)
    H = 4.0 * torch.randn(K, d, generator=g)[y] + torch.randn(N, d, generator=g) + 10.0
    return list(zip(H.float().to(device).split(B), y.to(device).split(B)))


def _clock(device):
    """perf_counter after the device's queued work has finished."""
    if str(device).startswith("cuda"):
        torch.cuda.synchronize()
    return time.perf_counter()


def peer_epoch(data, K, d, tile=None):
    """Two passes of the peer's accumulators, then its NC1 and CDNV; returns (nc1, cdnv, accumulate s, metric s,
    accumulate CPU s, metric CPU s)."""
    device = data[0][0].device
    f64 = dict(device=device, dtype=torch.float64)
    t0, c0 = _clock(device), time.process_time()
    means = MeanAccumulator(K, d, **f64)
    for H, y in data:
        means.accumulate(H, y)
    M, m_G = means.compute()
    covar, varnorm = CovarAccumulator(K, d, M=M, **f64), VarNormAccumulator(K, d, M=M, **f64)
    for H, y in data:
        covar.accumulate(H, y, M)
        varnorm.accumulate(H, y, M)
    V_intra, V_norms = covar.compute(), varnorm.compute()[0]
    t1, c1 = _clock(device), time.process_time()
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)  # the peer's CDNV grid is allocated in the default dtype
    try:
        nc1, cdnv = float(covariance_ratio(V_intra, M, m_G)), float(variability_cdnv(V_norms, M, tile_size=tile))
    finally:
        torch.set_default_dtype(previous)
    t2 = _clock(device)
    return nc1, cdnv, t1 - t0, t2 - t1, c1 - c0, time.process_time() - c1


def monitor_epoch(mon, data):
    """One NCMonitor epoch; returns (nc1, cdnv, update s, end_epoch s, update CPU s, end_epoch CPU s)."""
    device = data[0][0].device
    t0, c0 = _clock(device), time.process_time()
    mon.begin_epoch()
    for H, y in data:
        mon.update(H, y)
    t1, c1 = _clock(device), time.process_time()
    row = mon.end_epoch()
    t2 = _clock(device)
    return row["nc1"], row["cdnv"], t1 - t0, t2 - t1, c1 - c0, time.process_time() - c1


def one_setting(N, K, d, B, reps, device="cpu", peer=True, tile=None):
    data = batches(N, K, d, B, device=device)
    mon = NCMonitor(K, lam_W=1e-3, lam_H=1e-3, progress=False)
    if reps > 1:
        monitor_epoch(mon, data)  # warm-up; the UFM optimum is solved once per training
        if peer:
            peer_epoch(data, K, d, tile)
    ours, theirs = [], []
    for _ in range(reps):
        ours.append(monitor_epoch(mon, data))
        if peer:
            theirs.append(peer_epoch(data, K, d, tile))
    o = np.median(np.array(ours), axis=0)
    if not peer:
        return o, None, None, ours[-1][:2]
    t = np.median(np.array(theirs), axis=0)
    rel = max(abs(ours[-1][0] - theirs[-1][0]) / abs(theirs[-1][0]), abs(ours[-1][1] - theirs[-1][1]) / theirs[-1][1])
    if rel > 1e-10:
        raise SystemExit(
            f"K={K}, d={d}: NC1/CDNV differ by {rel:.2e} relative (ours {ours[-1][:2]}, peer {theirs[-1][:2]})"
        )
    return o, t, rel, ours[-1][:2]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", default="50000", help="samples per epoch: one number, or one per K (comma-separated)")
    ap.add_argument("--K", default="10,100")
    ap.add_argument("--d", default="64,512")
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", default="cpu", help="cpu or cuda (the features and both computations there)")
    ap.add_argument("--peer-tile", type=int, default=None, help="the peer's CDNV tile_size (default: one tile)")
    ap.add_argument("--peer-max-K", type=int, default=None, help="skip the peer above this many classes")
    args = ap.parse_args()
    if MeanAccumulator is None:
        raise SystemExit(
            "neural_collapse is not installed (not on PyPI): pip install git+https://github.com/rhubarbwu/neural-collapse"
        )
    torch.set_num_threads(args.threads)
    print(
        f"torch {torch.__version__}, {args.device}"
        f"{' (' + torch.cuda.get_device_name() + ')' if args.device.startswith('cuda') else ''}, "
        f"{args.threads} thread(s), N = {args.n}, batch {args.batch}, float64 accumulation, "
        f"peer tile {args.peer_tile}, peer up to K = {args.peer_max_K}"
    )
    Ks = [int(k) for k in args.K.split(",")]
    ns = [int(n) for n in args.n.split(",")]
    ns = ns * len(Ks) if len(ns) == 1 else ns
    if args.reps == 1:  # one small warm-up of both libraries instead of one per setting
        one_setting(2000, 1100, 16, args.batch, 1, args.device, peer=True, tile=args.peer_tile)
    print(
        "| K | d | N | peer: 2 passes | NCMonitor: 1 pass (update) | ratio | peer NC1 + CDNV | NCMonitor end_epoch "
        "| total ratio | CPU s: peer passes + metrics / NCMonitor update + end_epoch (total ratio) | peak RSS | NC1 "
        "| max rel. diff NC1/CDNV |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for K, N in zip(Ks, ns):
        for d in (int(x) for x in args.d.split(",")):
            peer = args.peer_max_K is None or K <= args.peer_max_K
            o, t, rel, (nc1, _) = one_setting(N, K, d, args.batch, args.reps, args.device, peer, args.peer_tile)
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
            if t is None:
                t = [math.nan] * 6
            print(
                f"| {K} | {d} | {N} | {t[2]:.2f} s | {o[2]:.2f} s | **{t[2] / o[2]:.2f}×** "
                f"| {t[3]:.2f} s | {o[3]:.2f} s | **{(t[2] + t[3]) / (o[2] + o[3]):.2f}×** "
                f"| {t[4]:.1f} + {t[5]:.1f} / {o[4]:.1f} + {o[5]:.1f} (**{(t[4] + t[5]) / (o[4] + o[5]):.2f}×**) "
                f"| {rss:.2f} GB | {nc1:.4g} | {'—' if rel is None else f'{rel:.1e}'} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
