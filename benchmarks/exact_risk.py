"""Benchmark of the exact true risk engine.

Prints, for risk alone and risk + gradient:
  * (sentence, class) pairs per second, K·s_c^L·K pairs per evaluation;
  * the ratio to the straightforward vectorized-NumPy enumeration (``true_risk_bruteforce``),
    measured in the same run (best of default and single-threaded BLAS for the baseline);
  * the fraction of this machine's float64 matrix-multiply peak, measured in the same run with a
    big ``np.dot`` (all cores) before every case and at the end — the **largest** of these
    measurements is the peak (the reference machine is shared, so single measurements drift by 2×);
    the engine's useful flops are 2K(K−1)s_c^L per product, one product for the risk and three with
    the gradient;
  * the numba kernels against the array-API (pure NumPy) code path, whole engine and per kernel.

Usage::

    python benchmarks/exact_risk.py            # the target sizes
    python benchmarks/exact_risk.py --quick    # smaller sizes, seconds
    python benchmarks/exact_risk.py --backend cupy --large   # on a GPU machine
    python benchmarks/exact_risk.py --repeated 2000   # an optimiser's many calls on one small task
    OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python benchmarks/exact_risk.py --peak-only --workers 1
                                                      # one core: one-thread peak against a one-worker engine

``--repeated N`` times N risk + gradient evaluations of ``Task.random(3, 3, 3, 20, seed=0)`` (d = 8), as an
optimiser makes them, with the engine's per-task tables kept (the default) and with them dropped before every
call (what every call paid before they were cached), interleaved in rounds; it reports the per-call wall and
CPU times and their ratio.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from fctheory import Task  # noqa: E402
from fctheory.risk import evaluate_risk, true_risk_bruteforce  # noqa: E402
from fctheory._threads import blas_threads  # noqa: E402


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


def cpu_peak_flops(n=3000, repeat=3):
    """Flops per CPU second of one thread's BLAS product (n×n): the per-core peak in CPU time, which other jobs on
    the machine change far less than the wall-clock peak (they take time slices, not the rate while running)."""
    A = np.random.default_rng(0).standard_normal((n, n))
    B = np.random.default_rng(1).standard_normal((n, n))
    best = 0.0
    with blas_threads(1):
        A @ B
        for _ in range(repeat):
            c0 = time.thread_time()
            A @ B
            best = max(best, 2.0 * n**3 / (time.thread_time() - c0))
    return best


def weights(task, d, seed=0, scale=0.3):
    rng = np.random.default_rng(seed)
    return scale * rng.standard_normal((d, task.n_w)), scale * rng.standard_normal((task.K, task.L * d))


def engine_time(task, W, U, grad, repeat, backend="numpy", jit=None, workers=None):
    xp = np
    if backend == "cupy":
        import cupy as xp  # noqa: PLC0415

        W, U = xp.asarray(W), xp.asarray(U)

    def run():
        r = evaluate_risk(
            task,
            W,
            U,
            0.01,
            grad=grad,
            backend=backend,
            jit=jit,
            progress=False,
            max_seconds=math.inf,
            max_bytes=math.inf if backend == "cupy" else 8 * 1024**3,
            workers=workers,
        )
        if backend == "cupy":
            xp.cuda.Device().synchronize()
        return r

    run() if repeat > 1 else None  # warm-up (numba compile / CUDA context)
    best, out, cpu = np.inf, None, np.nan
    for _ in range(max(repeat - 1, 1)):
        t0, c0 = time.perf_counter(), time.process_time()
        out = run()
        t = time.perf_counter() - t0
        if t < best:
            best, cpu = t, time.process_time() - c0
    engine_time.cpu = cpu  # CPU seconds (all threads) of the fastest run
    return best, out


def baseline_time(task, W, U, grad):
    t_default, ref = best_time(lambda: true_risk_bruteforce(task, W, U, 0.01, grad=grad), 1)
    with blas_threads(1):
        t_one, _ = best_time(lambda: true_risk_bruteforce(task, W, U, 0.01, grad=grad), 1)
    return min(t_default, t_one), ref


def kernel_comparison(results, L=7):
    """Each numba kernel against its NumPy (array-API) counterpart, on the L = 7 task's data."""
    from fctheory.risk import _blocks as B
    from fctheory.risk import _layout as E
    from fctheory.risk import _kernels as Kn

    task = Task.full(3, 4, L)
    K = task.K
    G3 = 0.3 * np.random.default_rng(0).standard_normal((K, L, task.n_w))
    m = (L + 1) // 2
    conc, _ = E._groups(task.Z, 0, m)
    t_nb, _ = best_time(lambda: B._bases(np, G3, conc, 0, 4, True), 3)
    t_np, _ = best_time(lambda: B._bases(np, G3, conc, 0, 4, False), 3)
    print(
        f"  kernel partial scores + shifted exponentials ({conc.shape[0]} prefixes x K x 4^{m}): "
        f"numba {t_nb:.3f} s, NumPy {t_np:.3f} s"
    )
    results["kernels"] = {"bases": [t_nb, t_np]}
    sA, sB, n = 4**m, 4 ** (L - m), 3 ** (L - m)
    rng = np.random.default_rng(1)
    S0 = rng.random((sA, n * sB)) * 10
    aA, aB = rng.random((n, sA)), rng.random((n, sB))
    pA, pB = np.full(sA, 1 / sA), np.full(sB, 1 / sB)
    for grad in (False, True):

        def nb():
            S = S0.copy()
            Kn.post_group(
                S,
                aA,
                aB,
                pA,
                pB,
                grad,
                1e-280,
                np.empty(n),
                np.empty((n, sA)),
                np.empty((n, sB)),
                np.empty(S.shape, np.uint8),
                np.empty(n, np.int64),
            )

        def xp():
            B._post_group_xp(np, S0.copy(), aA, aB, pA, pB, grad)

        t_nb, _ = best_time(nb, 5)
        t_np, _ = best_time(xp, 5)
        print(
            f"  kernel CE/weights sweep of one prefix group ({sA}x{n * sB}, grad={grad}): "
            f"numba {t_nb * 1e3:.1f} ms, NumPy {t_np * 1e3:.1f} ms"
        )
        results["kernels"][f"post_grad_{grad}"] = [t_nb, t_np]
    # log-space recomputation: a type-I configuration scaled 100x, where every entry needs it
    from fctheory.configurations import type1_configuration

    t3 = Task.full(3, 3, 4)
    W, U = type1_configuration(t3, d=3, c=200.0, seed=0)
    r = evaluate_risk(t3, W, U, 0.01, grad=True)
    t_nb, _ = best_time(lambda: evaluate_risk(t3, W, U, 0.01, grad=True), 2)
    t_np, _ = best_time(lambda: evaluate_risk(t3, W, U, 0.01, grad=True, jit=False), 2)
    print(
        f"  log-space fallback (type I x100, n_c=3, s_c=3, L=4, {r.n_fallback} of {t3.K * 3**4} entries): "
        f"numba {t_nb:.3f} s, NumPy {t_np:.3f} s"
    )
    results["kernels"]["fallback"] = [t_nb, t_np, r.n_fallback]


def repeated_calls(n, rounds=5):
    """Per-call wall and CPU seconds of risk + gradient on a small task, with the per-task tables kept or
    dropped before every call; medians over ``rounds`` interleaved rounds of ``n // rounds`` calls."""
    from fctheory.risk import _layout as E

    task = Task.random(3, 3, 3, 20, seed=0)
    W, U = weights(task, 8)
    calls = max(n // rounds, 1)
    times = {"kept": [], "dropped": []}

    def one(drop):
        if drop:
            E._LAYOUTS.clear()
        return evaluate_risk(task, W, U, 0.01, grad=True, progress=False)

    one(False)
    for _ in range(rounds):
        for key, drop in (("kept", False), ("dropped", True)):
            t0, c0 = time.perf_counter(), time.process_time()
            for _ in range(calls):
                one(drop)
            times[key].append(((time.perf_counter() - t0) / calls, (time.process_time() - c0) / calls))
    med = {k: (float(np.median([w for w, _ in v])), float(np.median([c for _, c in v]))) for k, v in times.items()}
    print(f"== {calls * rounds} calls of risk+gradient on Task.random(3, 3, 3, 20, seed=0), d=8 (per call)")
    for k, (w, c) in med.items():
        print(f"  tables {k:7s}: {w * 1e3:.3f} ms wall, {c * 1e3:.3f} ms CPU")
    print(
        f"  ratio dropped/kept: {med['dropped'][0] / med['kept'][0]:.2f}x wall, "
        f"{med['dropped'][1] / med['kept'][1]:.2f}x CPU"
    )
    return med


def report_fractions(results, timed, peaks, cpu_peaks):
    """Print (and add to ``results``) each timed case's fraction of the wall-clock peak and of the CPU-time peak."""
    peak = max(peaks)
    results["peak_flops_measurements"] = peaks
    results["peak_flops"] = peak
    print(
        f"\n== fraction of the float64 matmul peak: peak = max of {len(peaks)} measurements "
        f"({', '.join(f'{p / 1e9:.1f}' for p in peaks)} GFLOP/s) = {peak / 1e9:.1f} GFLOP/s"
    )
    for row, flops, t in timed:
        row["frac_peak"] = flops / t / peak
        print(
            f"  case {row['case']} {'risk+grad' if row['grad'] else 'risk     '}: "
            f"{row['gflops']:.1f} GFLOP/s = {100 * row['frac_peak']:.1f}% of peak"
        )
    if not cpu_peaks:
        return
    cpu_peak = max(cpu_peaks)
    results["cpu_peak_flops_measurements"] = cpu_peaks
    print(
        f"\n== in CPU time: one thread's product reaches {cpu_peak / 1e9:.1f} GFLOP per CPU second (max of "
        f"{', '.join(f'{p / 1e9:.1f}' for p in cpu_peaks)}); the engine's flops per CPU second of all its threads:"
    )
    for row, flops, _ in timed:
        if "cpu_engine" in row:
            row["frac_cpu_peak"] = flops / row["cpu_engine"] / cpu_peak
            print(
                f"  case {row['case']} {'risk+grad' if row['grad'] else 'risk     '}: "
                f"{flops / row['cpu_engine'] / 1e9:.1f} GFLOP per CPU second = {100 * row['frac_cpu_peak']:.1f}%"
            )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes (a few seconds)")
    ap.add_argument("--backend", default="numpy", choices=("numpy", "cupy"))
    ap.add_argument("--large", action="store_true", help="also L = 8 (GPU)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", help="write the numbers to this file")
    ap.add_argument("--peak-only", action="store_true", help="only the fraction-of-peak case (skip the baseline)")
    ap.add_argument(
        "--workers", type=int, help="the engine's host workers in the fraction-of-peak case (default: cores)"
    )
    ap.add_argument("--repeated", type=int, metavar="N", help="only N calls on a small task (the per-task tables)")
    args = ap.parse_args(argv)
    if args.repeated:
        med = repeated_calls(args.repeated)
        if args.json:
            with open(args.json, "w") as fh:
                json.dump({"repeated": med}, fh, indent=1)
        return

    xp = np
    if args.backend == "cupy":
        import cupy as xp  # noqa: PLC0415
    print(
        f"numpy {np.__version__}, cores {os.cpu_count()}, backend {args.backend}, load average {os.getloadavg()[0]:.1f}"
    )
    peaks = [peak_flops(xp=xp)]
    print(f"float64 matmul peak (np.dot 3000x3000, all cores), first measurement: {peaks[0] / 1e9:.1f} GFLOP/s\n")
    d = 16
    if args.quick:
        ratio_case, peak_cases = (3, 4, 4, 81), [(3, 4, 5, 243)]
    else:
        ratio_case, peak_cases = (3, 4, 6, 729), [(3, 4, 7, 2187)]
    if args.large:
        peak_cases.append((3, 4, 8, 6561))
    results = {"backend": args.backend, "cases": []}
    timed = []  # (row, flops, t): fractions of peak are filled in at the end

    # 1) ratio to the straightforward enumeration
    n_c, s_c, L, K = ratio_case
    if args.peak_only:
        ratio_case = None
    task = Task.full(n_c, s_c, L)
    W, U = weights(task, d)
    if ratio_case is not None:
        print(f"== ratio to straightforward enumeration: n_c={n_c}, s_c={s_c}, L={L}, K={K}, d={d}")
    for grad in (False, True) if ratio_case is not None else ():
        t_base, ref = baseline_time(task, W, U, grad)
        t_eng, r = engine_time(task, W, U, grad, args.repeat, args.backend)
        assert abs(r.R - ref.R) <= 1e-12 * abs(ref.R), (r.R, ref.R)
        pairs = r.pairs
        flops = 2.0 * K * (K - 1) * s_c**L * (3 if grad else 1)
        row = dict(
            case=list(ratio_case),
            d=d,
            grad=grad,
            t_engine=t_eng,
            t_baseline=t_base,
            ratio=t_base / t_eng,
            pairs_per_s=pairs / t_eng,
            baseline_pairs_per_s=pairs / t_base,
            gflops=flops / t_eng / 1e9,
        )
        results["cases"].append(row)
        timed.append((row, flops, t_eng))
        print(
            f"  {'risk+grad' if grad else 'risk     '}: engine {t_eng:8.3f} s ({pairs / t_eng:.3g} pairs/s, "
            f"{flops / t_eng / 1e9:.1f} GFLOP/s), enumeration {t_base:8.2f} s ({pairs / t_base:.3g} pairs/s)"
            f"  ratio {t_base / t_eng:7.1f}x"
        )

    # 2) numba kernels vs the array-API path (what CuPy runs), host only
    if args.backend == "numpy" and ratio_case is not None:
        print("== numba kernels vs pure-NumPy array path (same sizes)")
        for grad in (False, True):
            t_nb, _ = engine_time(task, W, U, grad, args.repeat, jit=None)
            t_np, _ = engine_time(task, W, U, grad, args.repeat, jit=False)
            results["cases"].append(dict(case=list(ratio_case), grad=grad, t_numba=t_nb, t_array_api=t_np))
            print(
                f"  {'risk+grad' if grad else 'risk     '}: numba {t_nb:.3f} s, array-API {t_np:.3f} s "
                f"(numba {t_np / t_nb:.2f}x faster)"
            )
        kernel_comparison(results)

    # 3) fraction of the matmul peak
    cpu_peaks = []
    for n_c, s_c, L, K in peak_cases:
        peaks.append(peak_flops(xp=xp))
        cpu_peaks.append(cpu_peak_flops()) if args.backend == "numpy" else None
        task = Task.full(n_c, s_c, L)
        W, U = weights(task, d)
        print(f"== fraction of peak: n_c={n_c}, s_c={s_c}, L={L}, K={K}, d={d}")
        for grad in (False, True):
            t_eng, r = engine_time(task, W, U, grad, min(args.repeat, 2), args.backend, workers=args.workers)
            cpu = engine_time.cpu
            flops = 2.0 * K * (K - 1) * s_c**L * (3 if grad else 1)
            row = dict(
                case=[n_c, s_c, L, K],
                d=d,
                grad=grad,
                t_engine=t_eng,
                cpu_engine=cpu,
                pairs_per_s=r.pairs / t_eng,
                gflops=flops / t_eng / 1e9,
            )
            results["cases"].append(row)
            timed.append((row, flops, t_eng))
            print(
                f"  {'risk+grad' if grad else 'risk     '}: {t_eng:8.3f} s, {r.pairs / t_eng:.3g} pairs/s, "
                f"{flops / t_eng / 1e9:.1f} GFLOP/s (CPU {cpu:.2f} s, load {os.getloadavg()[0]:.1f})"
            )
    peaks.append(peak_flops(xp=xp))
    if cpu_peaks:
        cpu_peaks.append(cpu_peak_flops())
    report_fractions(results, timed, peaks, cpu_peaks)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)


if __name__ == "__main__":
    main()
