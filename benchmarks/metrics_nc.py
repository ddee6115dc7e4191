"""Benchmark: NC metrics on N samples × m features, vectorised two-pass code vs the textbook way.

Baselines (measured in the same run):
* NC1: ``np.linalg.pinv`` of the m×m between-class covariance and ``trace(Σ_W Σ_B⁺)``, with Σ_W
  accumulated sample by sample (the literal eq. (4)), on a subsample, extrapolated per sample;
* NC1 via a dense pinv but vectorised Σ_W (the "informed numpy" way);
* streaming: :class:`fctheory.metrics.NCAccumulator` over batches vs in-memory :func:`nc1`.

Run:  python benchmarks/metrics_nc.py [--N 50000] [--m 256] [--K 10] [--batch 4096]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from fctheory.metrics import NCAccumulator, cdnv, nc1


def nc1_literal(H, y, K):
    mus = np.array([H[y == k].mean(0) for k in range(K)])
    muG = mus.mean(0)
    SW = np.zeros((H.shape[1], H.shape[1]))
    for h, c in zip(H, y):
        d = h - mus[c]
        SW += np.outer(d, d)
    SW /= len(y)
    Mc = mus - muG
    SB = Mc.T @ Mc / K
    return np.trace(SW @ np.linalg.pinv(SB)) / K


def nc1_dense(H, y, K):
    mus = np.array([H[y == k].mean(0) for k in range(K)])
    D = H - mus[y]
    SW = D.T @ D / len(y)
    Mc = mus - mus.mean(0)
    return np.trace(SW @ np.linalg.pinv(Mc.T @ Mc / K)) / K


def timed(f, *a, repeat=3):
    best = np.inf
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = f(*a)
        best = min(best, time.perf_counter() - t)
    return best, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--N", type=int, default=50000)
    ap.add_argument("--m", type=int, default=256)
    ap.add_argument("--K", type=int, default=10)
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--sub", type=int, default=2000, help="subsample for the literal per-sample baseline")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    y = rng.integers(0, args.K, args.N)
    H = rng.standard_normal((args.N, args.m)) + 3 * rng.standard_normal((args.K, args.m))[y]

    t_fast, v_fast = timed(nc1, H, y)
    t_dense, v_dense = timed(nc1_dense, H, y, args.K)
    sub = slice(0, args.sub)
    t_lit, _ = timed(nc1_literal, H[sub], y[sub], args.K, repeat=1)
    t_lit_full = t_lit * args.N / args.sub

    def stream():
        acc = NCAccumulator(args.K, args.m)
        for i in range(0, args.N, args.batch):
            acc.update(H[i : i + args.batch], y[i : i + args.batch])
        return acc.nc1()

    t_stream, v_stream = timed(stream, repeat=1)
    t_cdnv, _ = timed(cdnv, H, y)
    print(f"N={args.N} m={args.m} K={args.K}")
    print(f"nc1 (fctheory, SVD of the K×m means)   {t_fast * 1e3:9.1f} ms   value {v_fast:.12g}")
    print(
        f"nc1 dense pinv(Σ_B) baseline           {t_dense * 1e3:9.1f} ms   ratio {t_dense / t_fast:6.1f}x   "
        f"|Δ| {abs(v_dense - v_fast):.2e}"
    )
    print(f"nc1 literal per-sample (extrapolated)  {t_lit_full * 1e3:9.1f} ms   ratio {t_lit_full / t_fast:6.1f}x")
    print(
        f"NCAccumulator, batches of {args.batch:<6d}      {t_stream * 1e3:9.1f} ms   "
        f"ratio {t_stream / t_fast:6.2f}x of in-memory   |Δ| {abs(v_stream - v_fast):.2e}"
    )
    print(f"cdnv                                   {t_cdnv * 1e3:9.1f} ms")


if __name__ == "__main__":
    main()
