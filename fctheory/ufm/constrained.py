"""Unregularised and norm-constrained CE models (review §2.1, §2.2, §2.8).

* :func:`max_margin` — the min-norm separation problem (15) whose KKT points the normalised
  gradient flow of the unregularised CE UFM converges to (Ji et al. 2021);
* :func:`norm_constrained_ce` — balanced layer-peeled model (34) of Fang et al. 2021;
* :func:`output_ball` — CE over outputs in a ball of radius R (Wojtowytsch et al., eqs. (10)–(12)).
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

from ._common import (
    NumericalOptimum,
    UFMOptimum,
    check_pos,
    check_sizes,
    labels,
    lbfgs_multistart,
    rng_of,
    single_thread_blas,
    softmax_ce,
)

__all__ = [
    "max_margin",
    "norm_constrained_ce",
    "output_ball",
    "solve_max_margin",
    "solve_norm_constrained_ce",
    "solve_output_ball",
]


def _etf_gram(K):
    return np.eye(K) - np.ones((K, K)) / K


def max_margin(K: int, n: int) -> UFMOptimum:
    """Optimum of the min-norm separation problem (15):

        min ½‖W‖² + ½‖H‖²  s.t.  (w_k − w_j)ᵀ h_{k,i} ≥ 1  for all k ≠ j, i.

    Value (K−1)√n with ‖W‖² = ‖H‖² = (K−1)√n, w_k = α v_k, h_{k,i} = β v_k (v a unit simplex ETF),
    α² = (K−1)√n/K, β² = (K−1)/(K√n). Needs m ≥ K−1. Every margin equals 1 and the Ji et al. bound
    q_min ≤ (‖W‖²+‖H‖²)/(2(K−1)√n) holds with equality.
    """
    K, n, _ = check_sizes(K, n)
    v = (K - 1) * np.sqrt(n)
    a2 = v / K
    b2 = (K - 1) / (K * np.sqrt(n))
    kappa = K / (K - 1)  # unit simplex Gram = κ(I − 11ᵀ/K)
    return UFMOptimum(
        model="max_margin", value=float(v), W_norm_sq=float(v), H_norm_sq=float(v),
        W_gram=a2 * kappa * _etf_gram(K), means_gram=b2 * kappa * _etf_gram(K), bias=None,
        threshold=None, trivial=False, closed_form=True, conditions="m >= K-1",
        source="Ji et al. 2021 (review eq. (15)); closed form: review notes §2.1",
        extras={"alpha_sq": float(a2), "beta_sq": float(b2), "margin": 1.0},
    )


def norm_constrained_ce(K: int, Omega_W: float, Omega_H: float) -> UFMOptimum:
    """Balanced norm-constrained CE (34): min (1/N)Σ ℓ_CE(W h_{k,i}, e_k) subject to
    (1/K)Σ‖w_k‖² ≤ Ω_W and (1/N)Σ‖h_{k,i}‖² ≤ Ω_H.

    Value log(1 + (K−1)·exp(−K√(Ω_WΩ_H)/(K−1))), attained by a self-dual simplex ETF with
    ‖w_k‖² = Ω_W, ‖h_{k,i}‖² = Ω_H (independent of n). Needs m ≥ K−1.
    """
    K, _, _ = check_sizes(K, 1)
    Ow = check_pos("Omega_W", Omega_W)
    Oh = check_pos("Omega_H", Omega_H)
    gap = K * np.sqrt(Ow * Oh) / (K - 1)
    kappa = K / (K - 1)
    return UFMOptimum(
        model="norm_constrained_ce", value=float(np.log1p((K - 1) * np.exp(-gap))),
        W_norm_sq=float(K * Ow), H_norm_sq=float("nan"),
        W_gram=Ow * kappa * _etf_gram(K), means_gram=Oh * kappa * _etf_gram(K), bias=None,
        threshold=None, trivial=False, closed_form=True,
        conditions="m >= K-1; balanced classes (H_norm_sq = N*Omega_H depends on n)",
        source="Fang et al. 2021 (review eq. (34)); closed form: review notes §2.8",
        extras={"logit_gap": float(gap)},
    )


def output_ball(K: int, R: float) -> UFMOptimum:
    """min ℓ_CE(h, e_k) over outputs ‖h‖ ≤ R (review eq. (12), ball centred at 0):
    h* = R√(K/(K−1))(e_k − 1/K), value log(1 + (K−1)·exp(−R√(K/(K−1)))).

    Here ``W_gram`` holds the Gram matrix of the K optimal outputs (a simplex ETF of radius R).
    """
    K, _, _ = check_sizes(K, 1)
    R = check_pos("R", R)
    gap = R * np.sqrt(K / (K - 1))
    G = R**2 * K / (K - 1) * _etf_gram(K)
    return UFMOptimum(
        model="output_ball", value=float(np.log1p((K - 1) * np.exp(-gap))),
        W_norm_sq=float("nan"), H_norm_sq=float(K * R**2), W_gram=G, means_gram=G, bias=None,
        threshold=None, trivial=False, closed_form=True, conditions="none (any K >= 2, R > 0)",
        source="Wojtowytsch et al. 2020 (review eqs. (10)-(12)); value: review notes §2.2",
        extras={"h_star": R * np.sqrt(K / (K - 1)) * (np.eye(K) - 1.0 / K), "logit_gap": float(gap)},
    )


# ----------------------------------------------------------------------------- numerical solvers
def solve_max_margin(K, n, m, *, n_starts=4, seed=None) -> NumericalOptimum:
    """SLSQP on (15) from random starts (exact constraint Jacobian)."""
    K, n, m = check_sizes(K, n, m)
    N = K * n
    y = labels(K, n)
    rng = rng_of(seed)
    others = np.array([[j for j in range(K) if j != k] for k in range(K)])  # K × (K−1)

    def split(x):
        return x[: K * m].reshape(K, m), x[K * m :].reshape(m, N)

    def f(x):
        return 0.5 * float(x @ x)

    def fg(x):
        return x

    cols = np.repeat(np.arange(N), K - 1)
    jj = others[y].ravel()  # competitor class of each constraint
    kk = np.repeat(y, K - 1)

    def cons(x):
        W, H = split(x)
        Z = W @ H
        return Z[kk, cols] - Z[jj, cols] - 1.0

    def cons_jac(x):
        W, H = split(x)
        nc = cols.size
        J = np.zeros((nc, x.size))
        r = np.arange(nc)
        for c in range(m):
            # ∂/∂W[kk, c] = H[c, col]; ∂/∂W[jj, c] = −H[c, col]
            J[r, kk * m + c] += H[c, cols]
            J[r, jj * m + c] -= H[c, cols]
            # ∂/∂H[c, col] = W[kk, c] − W[jj, c]
            J[r, K * m + c * N + cols] = W[kk, c] - W[jj, c]
        return J

    best, vals = None, []
    for _ in range(n_starts):
        x0 = rng.standard_normal(K * m + m * N)
        with single_thread_blas():
            res = minimize(
                f, x0, jac=fg, method="SLSQP",
                constraints=[{"type": "ineq", "fun": cons, "jac": cons_jac}],
                options={"maxiter": 2000, "ftol": 1e-16},
            )
        feas = cons(res.x).min()
        val = res.fun if feas > -1e-9 else np.inf
        vals.append(val)
        if best is None or val < best[0]:
            best = (val, res.x, feas)
    W, H = split(best[1])
    return NumericalOptimum(float(best[0]), W, H, None, float(-min(best[2], 0.0)), np.array(vals), "SLSQP")


def solve_norm_constrained_ce(K, n, m, Omega_W, Omega_H, *, n_starts=3, seed=None) -> NumericalOptimum:
    """L-BFGS on (34) with the constraints made active by the parametrisation
    W = √(KΩ_W)·X/‖X‖_F, H = √(NΩ_H)·G/‖G‖_F (the loss decreases along the optimal ray, so both
    norm constraints are tight at the optimum)."""
    K, n, m = check_sizes(K, n, m)
    Ow = check_pos("Omega_W", Omega_W)
    Oh = check_pos("Omega_H", Omega_H)
    N = K * n
    y = labels(K, n)
    sW, sH = np.sqrt(K * Ow), np.sqrt(N * Oh)

    def fun(x):
        X = x[: K * m].reshape(K, m)
        G = x[K * m :].reshape(m, N)
        nX, nG = np.linalg.norm(X), np.linalg.norm(G)
        W, H = sW * X / nX, sH * G / nG
        loss, D = softmax_ce(W @ H, y)
        gW, gH = D @ H.T, W.T @ D
        # chain rule through v ↦ s·v/‖v‖: (s/‖v‖)(g − (g·v̂)v̂)
        gX = sW / nX * (gW - np.sum(gW * X) / nX**2 * X)
        gG = sH / nG * (gH - np.sum(gH * G) / nG**2 * G)
        return loss, np.concatenate([gX.ravel(), gG.ravel()])

    rng = rng_of(seed)
    x0s = [rng.standard_normal(K * m + m * N) for _ in range(n_starts)]
    x, fval, vals, gn = lbfgs_multistart(fun, x0s)
    X, G = x[: K * m].reshape(K, m), x[K * m :].reshape(m, N)
    return NumericalOptimum(float(fval), sW * X / np.linalg.norm(X), sH * G / np.linalg.norm(G), None, gn, vals, "L-BFGS")


def solve_output_ball(K, R, k=0, *, n_starts=3, seed=None) -> NumericalOptimum:
    """L-BFGS on ℓ_CE(h, e_k) with h = R·x/‖x‖ (the optimum is on the sphere). Returns h in ``H``."""
    K, _, _ = check_sizes(K, 1)
    R = check_pos("R", R)
    y = np.array([k])

    # minimise log ℓ: same minimiser, but scale-free gradients when ℓ is tiny (large R)
    def fun(x):
        nx = np.linalg.norm(x)
        h = R * x / nx
        loss, D = softmax_ce(h[:, None], y)
        g = D[:, 0] / loss
        return np.log(loss), R / nx * (g - (g @ x) / nx**2 * x)

    rng = rng_of(seed)
    x, fval, vals, gn = lbfgs_multistart(fun, [rng.standard_normal(K) for _ in range(n_starts)])
    return NumericalOptimum(float(np.exp(fval)), np.zeros((K, 0)), (R * x / np.linalg.norm(x))[:, None], None, gn,
                            np.exp(vals), "L-BFGS on log(loss)")
