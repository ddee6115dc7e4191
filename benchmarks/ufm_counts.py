"""Benchmark of the certified UFM optimum for any class counts (``fctheory.ufm.ce(counts=...)``).

Three measurements, in one run, on one problem family: the class counts of a Zipfian sample (p_k ∝ 1/k, seed 0)
of 10⁶ samples over K classes, λ_W = λ_H = 1e-6 (λ = √(Nλ_Wλ_H) = 1e-3, below every √π_k: nothing collapses, the
optimum has rank K − 1 and the softmax is far from saturated, the regime where first-order methods are slowest):

* **K = 100 against cvxpy (SCS).** The certified optimum (relative gap ≤ 1e-10) against cvxpy on the same convex
  program in its strongest form (the class-level program min Σ_k π_k ℓ(Z_k, e_k) + λ‖Z diag(√π)‖_*, K × K
  unknowns: what the paper codes solve at small K, and far smaller than the per-sample one), solved by SCS at
  eps_abs = eps_rel = 1e-9. Clarabel, the interior-point default, cannot take K = 100 on a 23 GB machine (its KKT
  system of the 2K × 2K PSD cone grew past 19 GB before it was stopped).
* **K = 50 against cvxpy (Clarabel).** The same comparison at the largest K where the interior-point solver fits
  (1.5 GB, a few minutes).
* **K = 10,000.** The certified optimum's CPU and wall seconds, its relative gap and the number of count groups.

Ratios are of CPU seconds of this process (``time.process_time``: all threads counted, robust to other jobs on a
shared machine), fctheory's the best of ``--repeat`` runs, cvxpy's of one; the values agree to the baseline's
accuracy. The solver limits BLAS to one thread (the problems are small dense matrices).
Usage::

    python benchmarks/ufm_counts.py                  # all three parts (about 40 minutes, mostly cvxpy)
    python benchmarks/ufm_counts.py --quick          # K = 10,000 only
    python benchmarks/ufm_counts.py --no-big         # the cvxpy comparisons only
    python benchmarks/ufm_counts.py --json out.json
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

from fctheory import ufm  # noqa: E402

LAM = 1e-6  # λ_W = λ_H: λ = √(Nλ_Wλ_H) = 1e-3 for N = 10⁶, below every √π_k: no group collapses, rank K − 1


def zipf_counts(K, N=10**6, seed=0):
    """The class counts of N draws from p_k ∝ 1/k over K classes."""
    p = 1.0 / np.arange(1, K + 1)
    return np.random.default_rng(seed).multinomial(N, p / p.sum())


def _timed(fn, repeat):
    """(result, best CPU seconds, best wall seconds) of ``repeat`` calls."""
    best_cpu = best_wall = math.inf
    out = None
    for _ in range(repeat):
        c, w = time.process_time(), time.perf_counter()
        out = fn()
        best_cpu = min(best_cpu, time.process_time() - c)
        best_wall = min(best_wall, time.perf_counter() - w)
    return out, best_cpu, best_wall


def cvxpy_class_level(counts, lam_W, lam_H, solver, bias=False):
    """The same convex program solved by cvxpy (``solver``: "SCS" at eps 1e-9, or "CLARABEL"); returns its value."""
    import cvxpy as cp  # noqa: PLC0415 - only the baseline needs it

    counts = np.asarray(counts)
    K, N = counts.size, int(counts.sum())
    pres = np.flatnonzero(counts > 0)
    pi = counts[pres] / N
    Z = cp.Variable((K, pres.size))
    logits = Z + (cp.reshape(cp.Variable(K), (K, 1), order="F") @ np.ones((1, pres.size)) if bias else 0)
    E = np.zeros((K, pres.size))
    E[pres, np.arange(pres.size)] = 1.0
    data = cp.sum(cp.multiply(pi, cp.log_sum_exp(logits, axis=0))) - cp.sum(cp.multiply(E * pi[None, :], logits))
    lam = math.sqrt(N * lam_W * lam_H)
    prob = cp.Problem(cp.Minimize(data + lam * cp.normNuc(Z @ np.diag(np.sqrt(pi)))))
    kw = dict(eps_abs=1e-9, eps_rel=1e-9, max_iters=10**6) if solver == "SCS" else {}
    prob.solve(solver=solver, **kw)
    return float(prob.value)


def part_cvxpy(K, solver, repeat):
    counts = zipf_counts(K)
    r, cpu, wall = _timed(lambda: ufm.ce(counts=counts, lam_W=LAM, lam_H=LAM), repeat)
    v, cpu_c, wall_c = _timed(lambda: cvxpy_class_level(counts, LAM, LAM, solver), 1)
    return {
        "K": K,
        "solver": solver,
        "groups": r.extras["groups"],
        "fctheory_cpu_s": cpu,
        "fctheory_wall_s": wall,
        "cvxpy_cpu_s": cpu_c,
        "cvxpy_wall_s": wall_c,
        "ratio_cpu": cpu_c / cpu,
        "ratio_wall": wall_c / wall,
        "value": r.value,
        "cvxpy_value": v,
        "rel_diff": (v - r.value) / r.value,
        "rel_gap": r.rel_gap,
        "certified": r.certified,
    }


def part_k10000(max_seconds):
    counts = zipf_counts(10_000)
    r, cpu, wall = _timed(lambda: ufm.ce(counts=counts, lam_W=LAM, lam_H=LAM, max_seconds=max_seconds), 1)
    return {
        "K": 10_000,
        "N": int(counts.sum()),
        "present": int(np.count_nonzero(counts)),
        "groups": r.extras["groups"],
        "cpu_s": cpu,
        "wall_s": wall,
        "rel_gap": r.rel_gap,
        "certified": r.certified,
        "width": r.width,
        "value": r.value,
        "nit": r.nit,
    }


def _say_cvxpy(k):
    print(
        f"K={k['K']} ({k['groups']} groups) vs cvxpy/{k['solver']}: fctheory {k['fctheory_cpu_s']:.3f} s CPU "
        f"({k['fctheory_wall_s']:.3f} s wall, rel. gap {k['rel_gap']:.1e}), cvxpy {k['cvxpy_cpu_s']:.1f} s CPU "
        f"({k['cvxpy_wall_s']:.1f} s wall): ratio {k['ratio_cpu']:.0f}x CPU, {k['ratio_wall']:.0f}x wall; "
        f"values differ by {k['rel_diff']:.1e}",
        flush=True,
    )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="K = 10,000 only (no cvxpy)")
    ap.add_argument("--no-big", action="store_true", help="the cvxpy comparisons only (no K = 10,000)")
    ap.add_argument("--max-seconds", type=float, default=600.0, help="the K = 10,000 solve's time limit")
    ap.add_argument("--repeat", type=int, default=3, help="fctheory's solves per comparison (the best is kept)")
    ap.add_argument("--json", default=None, help="write the measurements to this file")
    a = ap.parse_args(argv)
    out = {}
    if not a.quick:
        out["k50_clarabel"] = part_cvxpy(50, "CLARABEL", a.repeat)
        _say_cvxpy(out["k50_clarabel"])
        out["k100_scs"] = part_cvxpy(100, "SCS", a.repeat)
        _say_cvxpy(out["k100_scs"])
    if not a.no_big:
        out["k10000"] = big = part_k10000(a.max_seconds)
        print(
            f"K=10,000 ({big['present']} classes present, {big['groups']} groups, N = {big['N']}): "
            f"{big['cpu_s']:.1f} s CPU, {big['wall_s']:.1f} s wall, certified {big['certified']} "
            f"(rel. gap {big['rel_gap']:.1e}), rank {big['width']}",
            flush=True,
        )
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1)
    return out


if __name__ == "__main__":
    main()
