"""Benchmark: the assumption checkers and the convex certificate, against the obvious baselines.

Baselines (measured in the same run):
* Assumption A: a direct loop over (k, r, ℓ, α) counting |{j : dist = r, z_jℓ = α}| (the literal (35))
  vs :func:`fctheory.check_assumption_A` (one integer matmul per r);
* Assumption B: building all K² matrices Γ^{(j,k)} in a Python loop and stacking the (44) differences
  vs the vectorised Gram accumulation inside :func:`fctheory.check_assumption_B` (exact null space);
* global optimality: the cvxpy/Clarabel solve of min f(X) + λ‖X‖_* vs the Claim-H certificate
  (one exact gradient and one spectral norm) at Theorem 2's type-III point.

Run:  python benchmarks/assumptions.py [--K 60] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from fctheory import Task, check_assumption_A, check_assumption_B


def literal_A(Z, n_c):
    K, L = Z.shape
    N = n_c**L
    from math import comb

    bad = 0
    for k in range(K):
        for r in range(1, L + 1):
            for ell in range(L):
                for a in range(n_c):
                    cnt = sum(1 for z in Z if np.sum(z != Z[k]) == r and z[ell] == a)
                    same = Z[k, ell] == a
                    e = K * (comb(L - 1, r) * (n_c - 1) ** r if same else comb(L - 1, r - 1) * (n_c - 1) ** (r - 1))
                    bad += cnt * N != e
    return bad


def literal_B_rank(Z, n_c):
    K, L = Z.shape
    onehot = lambda z: np.eye(n_c)[z].T  # noqa: E731
    rows = []
    D = (Z[:, None] != Z[None]).sum(-1)
    for r in range(1, L + 1):
        pairs = np.argwhere(D == r)
        ref = None
        for j, k in pairs:
            G = onehot(Z[j]) @ (onehot(Z[j]) - onehot(Z[k])).T
            v = (G + G.T)[np.triu_indices(n_c)] / np.where(np.eye(n_c)[np.triu_indices(n_c)] > 0, 2, 1)
            if ref is None:
                ref = v
            else:
                rows.append(v - ref)
    M = np.array(rows)
    return n_c * (n_c + 1) // 2 - np.linalg.matrix_rank(M)


def best(f, repeat):
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = f()
        ts.append(time.perf_counter() - t0)
    return min(ts), out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--K", type=int, default=60)
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args()
    task = Task.random(3, 1, 4, a.K, seed=0)
    t_lit, nb = best(lambda: literal_A(task.Z, 3), 1)
    t_vec, res = best(lambda: check_assumption_A(task), a.repeat)
    assert nb == len(res.violations)
    print(
        f"Assumption A, n_c=3, L=4, K={a.K}: literal loop {t_lit:.3f} s, check_assumption_A {t_vec * 1e3:.2f} ms "
        f"-> {t_lit / t_vec:.0f}x ({nb} violations, identical)"
    )
    t_lit, dim_lit = best(lambda: literal_B_rank(task.Z, 3), 1)
    t_vec, resB = best(lambda: check_assumption_B(task, sdp=False), a.repeat)
    assert dim_lit == resB.dim
    print(
        f"Assumption B, same set: literal Γ loop + float rank {t_lit:.3f} s, check_assumption_B (exact) "
        f"{t_vec * 1e3:.1f} ms -> {t_lit / t_vec:.1f}x (dim {resB.dim})"
    )

    from proofs_check import _risk, convex
    from fctheory.type3 import lambda_max_type3, solve_type3

    for n_c, s_c, L in [(3, 3, 2), (4, 2, 2)]:
        t = Task.full(n_c, s_c, L, mu="zipf")
        lam = 0.5 * float(lambda_max_type3(mu=t.mu, n_c=n_c, L=L))
        S = _risk.enumerate_sentences(t)
        sol = solve_type3(mu=t.mu, n_c=n_c, L=L, lam=lam)
        W, U = _risk.type3_point(t, float(sol.c), np.asarray(sol.r), n_c + 1)
        X = _risk.X_of(W, U, L)
        t_cvx, cv = best(lambda: convex.solve_convex(t, lam, S=S), 1)
        t_cert, (lb, gl) = best(lambda: convex.lower_bound(S, X, lam), a.repeat)
        print(
            f"global optimality of type III on {t!r}: cvxpy {t_cvx:.2f} s, Claim-H certificate "
            f"{t_cert * 1e3:.2f} ms -> {t_cvx / t_cert:.0f}x (values {cv.value:.10f} vs {lb:.10f})"
        )


if __name__ == "__main__":
    main()
