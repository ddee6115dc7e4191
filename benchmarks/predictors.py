"""Benchmark: 100,000 τ solves (Theorem 1) as one vectorised call vs a per-item scipy.optimize loop.

Both baselines are measured in the same run on a subsample and extrapolated per item:
* ``brentq``: scipy.optimize.brentq on H′(t) (the fast, informed way to do it by hand);
* ``minimize_scalar``: scipy.optimize.minimize_scalar(H, bounded) (the naive "argmin H").
The parameter sets are random over n_c ∈ [2, 10], L ∈ [1, 30], K ∈ [1, n_c^L], with λ below the
trivial threshold λ₀ (so every item is a real solve) and also a log-uniform λ sweep.

Run:  python benchmarks/predictors.py [--n 100000] [--sub 2000] [--seed 0]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy.optimize import brentq, minimize_scalar

import fctheory as fc


def _H_parts(n_c, n_w, L, K):
    p = K / n_c**L
    eta = n_c / (n_c - 1) / math.sqrt(n_w * K * L)
    return p, eta


def tau_brentq(n_c, n_w, L, K, lam):
    p, eta = _H_parts(n_c, n_w, L, K)

    def Hp(t):
        u = (n_c - 1) * math.exp(-eta * t)
        return lam - eta * L * p * (1 + u) ** (L - 1) * u / (1 - p + p * (1 + u) ** L)

    if Hp(0.0) >= 0:
        return 0.0
    hi = 1.0
    while Hp(hi) < 0:
        hi *= 2
    return brentq(Hp, 0.0, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps)


def tau_minimize_scalar(n_c, n_w, L, K, lam):
    p, eta = _H_parts(n_c, n_w, L, K)

    def H(t):
        return math.log(1 - p + p * (1 + (n_c - 1) * math.exp(-eta * t)) ** L) + lam * t

    hi = 1.0
    while H(2 * hi) < H(hi):
        hi *= 2
    return minimize_scalar(H, bounds=(0.0, 2 * hi), method="bounded", options={"xatol": 1e-12 * hi}).x


def params(n, rng, near_solve=True):
    n_c = rng.integers(2, 11, n)
    L = rng.integers(1, 31, n)
    s_c = rng.integers(1, 100, n)
    K = np.maximum(1, np.floor(np.exp(rng.uniform(0, 1, n) * L * np.log(n_c))))
    K = np.minimum(K, n_c.astype(float) ** L)
    lam0 = fc.lambda_trivial(n_c=n_c, n_w=n_c * s_c, L=L, K=K)
    if near_solve:
        lam = lam0 * np.exp(-np.exp(rng.uniform(np.log(1e-3), np.log(30), n)))
    else:
        lam = 10 ** rng.uniform(-12, 3, n)
    return n_c, n_c * s_c, L, K, np.maximum(lam, 1e-12)


def best_of(fn, repeat):
    best = math.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--sub", type=int, default=2000, help="items timed for the per-item baselines")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    fc.tau(n_c=3, n_w=6, L=2, K=9, lam=0.01)  # JIT warm-up (compiled kernels are cached on disk)
    for label, near in (("lambda < lambda_0 (every item solved)", True), ("lambda log-uniform in [1e-12, 1e3]", False)):
        P = params(args.n, rng, near)
        kw = dict(zip(("n_c", "n_w", "L", "K", "lam"), P))
        t_vec, out = best_of(lambda: fc.tau(**kw), 3)
        t_np, out_np = best_of(lambda: fc.tau(**kw, backend="numpy"), 1)
        idx = rng.choice(args.n, args.sub, replace=False)
        items = [tuple(float(a[i]) for a in P) for i in idx]
        t0 = time.perf_counter()
        ref = np.array([tau_brentq(*it) for it in items])
        t_brent = (time.perf_counter() - t0) / args.sub * args.n
        sub_ms = max(args.sub // 5, 50)
        t0 = time.perf_counter()
        for it in items[:sub_ms]:
            tau_minimize_scalar(*it)
        t_ms = (time.perf_counter() - t0) / sub_ms * args.n
        err = np.max(np.abs(ref - out[idx]) / np.maximum(ref, 1e-300))
        print(f"\n{label}: {args.n} parameter sets, {np.mean(out > 0):.0%} non-trivial")
        print(f"  fctheory.tau (numba, one call)   {t_vec:8.3f} s")
        print(f"  fctheory.tau (numpy backend)      {t_np:8.3f} s   (ratio numba/numpy {t_np / t_vec:6.1f}x)")
        print(f"  per-item brentq on H'  (extrap.)  {t_brent:8.3f} s   ratio {t_brent / t_vec:7.1f}x")
        print(f"  per-item minimize_scalar (extrap.) {t_ms:7.3f} s   ratio {t_ms / t_vec:7.1f}x")
        print(f"  max rel. difference vs brentq: {err:.2e}")


if __name__ == "__main__":
    main()
