"""Benchmark of the exact true risk engine (issue 3).

Prints, for risk alone and risk + gradient:
  * (sentence, class) pairs per second, K·s_c^L·K pairs per evaluation;
  * the ratio to the straightforward vectorized-NumPy enumeration (``true_risk_bruteforce``),
    measured in the same run (best of default and single-threaded BLAS for the baseline);
  * the fraction of this machine's float64 matrix-multiply peak, measured in the same run with a
    big ``np.dot`` (all cores); the engine's useful flops are 2K(K−1)s_c^L per product, one
    product for the risk and three with the gradient;
  * the numba kernels against the array-API (pure NumPy) code path.

Usage::

    python benchmarks/exact_risk.py            # sizes of the issue's targets
    python benchmarks/exact_risk.py --quick    # smaller sizes, seconds
    python benchmarks/exact_risk.py --backend cupy --large   # on a GPU machine
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from fctheory import Task  # noqa: E402
from fctheory.risk import evaluate_risk, true_risk_bruteforce  # noqa: E402
from fctheory.risk._blas import blas_threads  # noqa: E402


def best_time(f, repeat):
    best = np.inf
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = f()
        best = min(best, time.perf_counter() - t0)
    return best, out


def peak_flops(n=3000, repeat=3, xp=np):
    A = xp.asarray(np.random.default_rng(0).standard_normal((n, n)))
    B = xp.asarray(np.random.default_rng(1).standard_normal((n, n)))

    def mm():
        C = A @ B
        if xp is not np:
            xp.cuda.Device().synchronize()
        return C

    mm()
    t, _ = best_time(mm, repeat)
    return 2.0 * n**3 / t


def weights(task, d, seed=0, scale=0.3):
    rng = np.random.default_rng(seed)
    return scale * rng.standard_normal((d, task.n_w)), scale * rng.standard_normal((task.K, task.L * d))


def engine_time(task, W, U, grad, repeat, backend="numpy", jit=None):
    xp = np
    if backend == "cupy":
        import cupy as xp  # noqa: PLC0415

        W, U = xp.asarray(W), xp.asarray(U)

    def run():
        r = evaluate_risk(task, W, U, 0.01, grad=grad, backend=backend, jit=jit, progress=False,
                          max_seconds=None, max_bytes=None if backend == "cupy" else 8 * 1024**3)
        if backend == "cupy":
            xp.cuda.Device().synchronize()
        return r

    run() if repeat > 1 else None  # warm-up (numba compile / CUDA context)
    return best_time(run, max(repeat - 1, 1))


def baseline_time(task, W, U, grad):
    t_default, ref = best_time(lambda: true_risk_bruteforce(task, W, U, 0.01, grad=grad), 1)
    with blas_threads(1):
        t_one, _ = best_time(lambda: true_risk_bruteforce(task, W, U, 0.01, grad=grad), 1)
    return min(t_default, t_one), ref


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes (a few seconds)")
    ap.add_argument("--backend", default="numpy", choices=("numpy", "cupy"))
    ap.add_argument("--large", action="store_true", help="also L = 8 (GPU)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", help="write the numbers to this file")
    args = ap.parse_args(argv)

    xp = np
    if args.backend == "cupy":
        import cupy as xp  # noqa: PLC0415
    print(f"numpy {np.__version__}, cores {os.cpu_count()}, backend {args.backend}")
    peak = peak_flops(xp=xp)
    print(f"measured float64 matmul peak (np.dot 3000x3000, all cores): {peak / 1e9:.1f} GFLOP/s\n")
    d = 16
    if args.quick:
        ratio_case, peak_cases = (3, 4, 4, 81), [(3, 4, 5, 243)]
    else:
        ratio_case, peak_cases = (3, 4, 6, 729), [(3, 4, 7, 2187)]
    if args.large:
        peak_cases.append((3, 4, 8, 6561))
    results = {"peak_flops": peak, "backend": args.backend, "cases": []}

    # 1) ratio to the straightforward enumeration
    n_c, s_c, L, K = ratio_case
    task = Task.full(n_c, s_c, L)
    W, U = weights(task, d)
    print(f"== ratio to straightforward enumeration: n_c={n_c}, s_c={s_c}, L={L}, K={K}, d={d}")
    for grad in (False, True):
        t_base, ref = baseline_time(task, W, U, grad)
        t_eng, r = engine_time(task, W, U, grad, args.repeat, args.backend)
        assert abs(r.R - ref.R) <= 1e-12 * abs(ref.R), (r.R, ref.R)
        pairs = r.pairs
        flops = 2.0 * K * (K - 1) * s_c**L * (3 if grad else 1)
        row = dict(case=list(ratio_case), d=d, grad=grad, t_engine=t_eng, t_baseline=t_base,
                   ratio=t_base / t_eng, pairs_per_s=pairs / t_eng, baseline_pairs_per_s=pairs / t_base,
                   frac_peak=flops / t_eng / peak)
        results["cases"].append(row)
        print(f"  {'risk+grad' if grad else 'risk     '}: engine {t_eng:8.3f} s ({pairs / t_eng:.3g} pairs/s), "
              f"enumeration {t_base:8.2f} s ({pairs / t_base:.3g} pairs/s)  ratio {t_base / t_eng:7.1f}x  "
              f"[{100 * flops / t_eng / peak:.1f}% of peak]")

    # 2) numba kernels vs the array-API path (what CuPy runs), host only
    if args.backend == "numpy":
        print("== numba kernels vs pure-NumPy array path (same sizes)")
        for grad in (False, True):
            t_nb, _ = engine_time(task, W, U, grad, args.repeat, jit=None)
            t_np, _ = engine_time(task, W, U, grad, args.repeat, jit=False)
            results["cases"].append(dict(case=list(ratio_case), grad=grad, t_numba=t_nb, t_array_api=t_np))
            print(f"  {'risk+grad' if grad else 'risk     '}: numba {t_nb:.3f} s, array-API {t_np:.3f} s "
                  f"(numba {t_np / t_nb:.2f}x faster)")

    # 3) fraction of the matmul peak
    for n_c, s_c, L, K in peak_cases:
        task = Task.full(n_c, s_c, L)
        W, U = weights(task, d)
        print(f"== fraction of peak: n_c={n_c}, s_c={s_c}, L={L}, K={K}, d={d}")
        for grad in (False, True):
            t_eng, r = engine_time(task, W, U, grad, min(args.repeat, 2), args.backend)
            flops = 2.0 * K * (K - 1) * s_c**L * (3 if grad else 1)
            row = dict(case=[n_c, s_c, L, K], d=d, grad=grad, t_engine=t_eng, pairs_per_s=r.pairs / t_eng,
                       gflops=flops / t_eng / 1e9, frac_peak=flops / t_eng / peak)
            results["cases"].append(row)
            print(f"  {'risk+grad' if grad else 'risk     '}: {t_eng:8.3f} s, {r.pairs / t_eng:.3g} pairs/s, "
                  f"{flops / t_eng / 1e9:.1f} GFLOP/s = {100 * flops / t_eng / peak:.1f}% of measured peak")
    peak_after = peak_flops(xp=xp)
    results["peak_flops_after"] = peak_after
    print(f"\nmatmul peak re-measured at the end: {peak_after / 1e9:.1f} GFLOP/s")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)


if __name__ == "__main__":
    main()
