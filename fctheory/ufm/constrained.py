"""Unregularised and norm-constrained CE models (review §2.1, §2.2, §2.8).

* :func:`max_margin` — the min-norm separation problem (15) whose KKT points the normalised
  gradient flow of the unregularised CE UFM converges to (Ji et al. 2021);
* :func:`norm_constrained_ce` — balanced layer-peeled model (34) of Fang et al. 2021;
* :func:`output_ball` — CE over outputs in a ball of radius R (Wojtowytsch et al., eqs. (10)–(12)).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import minimize

from .._validate import Int, Real, Seed, fail, public
from ._common import (
    KIND_K,
    KIND_N,
    KIND_STARTS,
    NumericalOptimum,
    UFMOptimum,
    check_finite_result,
    exp_or_fail,
    gram_budget,
    labels,
    lbfgs_multistart,
    rng_of,
    single_thread_blas,
    softmax_ce,
    solver_budget,
)

#: range of the radius / norm bounds in which the iterative checks are run (the closed forms take any)
SOLVER_RANGE = (1e-6, 1e6)
_POS = Real(lo=0.0, lo_open=True)

__all__ = [
    "max_margin",
    "norm_constrained_ce",
    "output_ball",
    "solve_max_margin",
    "solve_norm_constrained_ce",
    "solve_output_ball",
]


def _etf_gram(K):
    E = np.full((K, K), -1.0 / K)
    E[np.diag_indices(K)] += 1.0
    return E


def _in_solver_range(name, value):
    lo, hi = SOLVER_RANGE
    if not lo <= value <= hi:
        fail(name, value, f"the numerical solver needs {lo:g} <= {name} <= {hi:g} (use the closed form outside)")


@public(K=KIND_K, n_spl=KIND_N, renamed={"n": "n_spl"}, legacy_positional=("K", "n_spl"))
def max_margin(*, K: int, n_spl: int) -> UFMOptimum:
    """Optimum of the min-norm separation problem (15):

        min ½‖W‖² + ½‖H‖²  s.t.  (w_k − w_j)ᵀ h_{k,i} ≥ 1  for all k ≠ j, i.

    Value (K−1)√n with ‖W‖² = ‖H‖² = (K−1)√n, w_k = α v_k, h_{k,i} = β v_k (v a unit simplex ETF),
    α² = (K−1)√n/K, β² = (K−1)/(K√n). Needs d ≥ K−1. Every margin equals 1 and the Ji et al. bound
    q_min ≤ (‖W‖²+‖H‖²)/(2(K−1)√n) holds with equality. √n is taken through log n, so any n
    whose value (K−1)√n fits in float64 is answered (beyond, it is refused).
    """
    n = n_spl  # the papers' n (samples per class)
    gram_budget("K", K, K, 3, "ufm.max_margin")
    ls = 0.5 * math.log(n)  # log √n for an int of any size
    v = exp_or_fail("n_spl", n, math.log(K - 1) + ls, "the value (K-1)*sqrt(n)")
    a2 = v / K
    b2 = (K - 1) / K * math.exp(-ls)
    kappa = K / (K - 1)  # unit simplex Gram = κ(I − 11ᵀ/K)
    return UFMOptimum(
        model="max_margin",
        value=float(v),
        W_norm_sq=float(v),
        H_norm_sq=float(v),
        W_gram=a2 * kappa * _etf_gram(K),
        means_gram=b2 * kappa * _etf_gram(K),
        bias=None,
        threshold=None,
        trivial=False,
        closed_form=True,
        conditions="d >= K-1",
        source="Ji et al. 2021 (review eq. (15)); closed form: review notes §2.1",
        extras={"alpha_sq": float(a2), "beta_sq": float(b2), "margin": 1.0},
    )


@public(K=KIND_K, Omega_W=_POS, Omega_H=_POS, legacy_positional=("K", "Omega_W", "Omega_H"))
def norm_constrained_ce(*, K: int, Omega_W: float, Omega_H: float) -> UFMOptimum:
    """Balanced norm-constrained CE (34): min (1/N)Σ ℓ_CE(W h_{k,i}, e_k) subject to
    (1/K)Σ‖w_k‖² ≤ Ω_W and (1/N)Σ‖h_{k,i}‖² ≤ Ω_H.

    Value log(1 + (K−1)·exp(−K√(Ω_WΩ_H)/(K−1))), attained by a self-dual simplex ETF with
    ‖w_k‖² = Ω_W, ‖h_{k,i}‖² = Ω_H (independent of n). Needs d ≥ K−1. The logit gap is taken through
    logs (no overflow of Ω_WΩ_H); a ‖W‖² = KΩ_W or Gram matrix beyond float64 is refused.
    """
    gram_budget("K", K, K, 3, "ufm.norm_constrained_ce")
    Ow, Oh = Omega_W, Omega_H
    gap = exp_or_fail("Omega_W", Omega_W, math.log(K / (K - 1)) + 0.5 * (math.log(Ow) + math.log(Oh)), "the logit gap")
    kappa = K / (K - 1)
    check_finite_result("Omega_W", Omega_W, K * Ow, Ow * kappa, what="‖W*‖² = K*Omega_W")
    check_finite_result("Omega_H", Omega_H, Oh * kappa, what="the feature Gram matrix Omega_H*K/(K-1)*E_K")
    return UFMOptimum(
        model="norm_constrained_ce",
        value=_log1p_exp(math.log(K - 1) - gap),
        W_norm_sq=float(K * Ow),
        H_norm_sq=float("nan"),
        W_gram=Ow * kappa * _etf_gram(K),
        means_gram=Oh * kappa * _etf_gram(K),
        bias=None,
        threshold=None,
        trivial=False,
        closed_form=True,
        conditions="d >= K-1; balanced classes (H_norm_sq = N*Omega_H depends on n)",
        source="Fang et al. 2021 (review eq. (34)); closed form: review notes §2.8",
        extras={"logit_gap": float(gap)},
    )


def _log1p_exp(x):
    """log(1 + e^x) without overflow."""
    return x + math.log1p(math.exp(-x)) if x > 0 else math.log1p(math.exp(x))


@public(K=KIND_K, R=_POS, legacy_positional=("K", "R"))
def output_ball(*, K: int, R: float) -> UFMOptimum:
    """min ℓ_CE(h, e_k) over outputs ‖h‖ ≤ R (review eq. (12), ball centred at 0):
    h* = R√(K/(K−1))(e_k − 1/K), value log(1 + (K−1)·exp(−R√(K/(K−1)))).

    Here ``W_gram`` holds the Gram matrix of the K optimal outputs (a simplex ETF of radius R).
    Any R > 0 whose Gram matrix R²K/(K−1)·E_K fits in float64 (R ≲ 1.3e154) is answered; larger R
    is refused with that reason.
    """
    gram_budget("K", K, K, 4, "ufm.output_ball")
    gap = R * math.sqrt(K / (K - 1))
    with np.errstate(over="ignore"):
        r2 = np.float64(R) ** 2 * K / (K - 1)
    check_finite_result("R", R, r2, K * r2, what="R**2*K/(K-1) (the Gram matrix of the optimal outputs)")
    G = float(r2) * _etf_gram(K)
    return UFMOptimum(
        model="output_ball",
        value=_log1p_exp(math.log(K - 1) - gap),
        W_norm_sq=float("nan"),
        H_norm_sq=float(K * R * R),
        W_gram=G,
        means_gram=G,
        bias=None,
        threshold=None,
        trivial=False,
        closed_form=True,
        conditions="none (any K >= 2, R > 0)",
        source="Wojtowytsch et al. 2020 (review eqs. (10)-(12)); value: review notes §2.2",
        extras={"h_star": R * np.sqrt(K / (K - 1)) * (np.eye(K) - 1.0 / K), "logit_gap": float(gap)},
    )


# ----------------------------------------------------------------------------- numerical solvers
@public(
    K=KIND_K,
    n_spl=KIND_N,
    d=Int(min=1),
    n_starts=KIND_STARTS,
    seed=Seed(),
    renamed={"n": "n_spl", "m": "d"},
    legacy_positional=("K", "n_spl", "d"),
)
def solve_max_margin(*, K, n_spl, d, n_starts=4, seed=None) -> NumericalOptimum:
    """SLSQP on (15) from random starts (exact constraint Jacobian).

    SLSQP works with a dense (constraints × unknowns) Jacobian and O(unknowns³) steps; the size is
    checked against the budget before any work.
    """
    n, m = n_spl, d  # the papers' n (samples per class) and m (feature dimension)
    N = K * n
    dim, nc = K * m + m * N, N * (K - 1)
    solver_budget(
        dict(K=K, n_spl=n, d=m),
        dim=dim,
        flops=2 * (nc + dim) * dim * dim,
        n_starts=n_starts,
        iters=200,
        extra_bytes=8 * 4 * (nc + dim) * (dim + 2),
        what="ufm.solve_max_margin (SLSQP)",
    )
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
                f,
                x0,
                jac=fg,
                method="SLSQP",
                constraints=[{"type": "ineq", "fun": cons, "jac": cons_jac}],
                options={"maxiter": 2000, "ftol": 1e-16},
            )
        feas = cons(res.x).min()
        val = res.fun if feas > -1e-9 else np.inf
        vals.append(val)
        if best is None or val < best[0]:
            best = (val, res.x, feas)
    if not np.isfinite(best[0]):
        fail("n_starts", n_starts, "no SLSQP start reached a feasible point; use more starts or another seed")
    W, H = split(best[1])
    return NumericalOptimum(float(best[0]), W, H, None, float(-min(best[2], 0.0)), np.array(vals), "SLSQP")


@public(
    K=KIND_K,
    n_spl=KIND_N,
    d=Int(min=1),
    Omega_W=_POS,
    Omega_H=_POS,
    n_starts=KIND_STARTS,
    seed=Seed(),
    renamed={"n": "n_spl", "m": "d"},
    legacy_positional=("K", "n_spl", "d", "Omega_W", "Omega_H"),
)
def solve_norm_constrained_ce(*, K, n_spl, d, Omega_W, Omega_H, n_starts=3, seed=None) -> NumericalOptimum:
    """L-BFGS on (34) with the constraints made active by the parametrisation
    W = √(KΩ_W)·X/‖X‖_F, H = √(NΩ_H)·G/‖G‖_F (the loss decreases along the optimal ray, so both
    norm constraints are tight at the optimum). Needs Ω_W, Ω_H in [1e-6, 1e6] (:data:`SOLVER_RANGE`)."""
    n, m = n_spl, d  # the papers' n (samples per class) and m (feature dimension)
    _in_solver_range("Omega_W", Omega_W)
    _in_solver_range("Omega_H", Omega_H)
    Ow, Oh = Omega_W, Omega_H
    N = K * n
    solver_budget(
        dict(K=K, n_spl=n, d=m),
        dim=K * m + m * N,
        flops=8 * K * m * N + 30 * K * N,
        n_starts=n_starts,
        extra_bytes=8 * 8 * K * N,
        what="ufm.solve_norm_constrained_ce (L-BFGS)",
    )
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
    return NumericalOptimum(
        float(fval), sW * X / np.linalg.norm(X), sH * G / np.linalg.norm(G), None, gn, vals, "L-BFGS"
    )


@public(K=KIND_K, R=_POS, k=Int(min=0), n_starts=KIND_STARTS, seed=Seed(), legacy_positional=("K", "R", "k"))
def solve_output_ball(*, K, R, k=0, n_starts=3, seed=None) -> NumericalOptimum:
    """L-BFGS on ℓ_CE(h, e_k) with h = R·x/‖x‖ (the optimum is on the sphere). Returns h in ``H``.

    k is the label (0 ≤ k < K); needs R in [1e-6, 1e6] (:data:`SOLVER_RANGE`).
    """
    if k >= K:
        fail("k", k, f"must be a class index < K = {K}")
    _in_solver_range("R", R)
    solver_budget(dict(K=K), dim=K, flops=40 * K, n_starts=n_starts, what="ufm.solve_output_ball (L-BFGS)")
    others = np.array([j for j in range(K) if j != k])

    # minimise log ℓ, evaluated in the log domain: with a_j = h_j − h_k and L = log Σ_{j≠k} e^{a_j},
    # ℓ = log(1 + e^L) = softplus(L), so log ℓ never underflows even when ℓ does (large R), and
    # ∂ log ℓ/∂a_j = e^{a_j − L}·e^{L − softplus(L)}/ℓ stays finite
    def fun(x):
        nx = np.linalg.norm(x)
        u = x / nx
        a = R * (u[others] - u[k])
        amax = a.max()
        L = amax + math.log(float(np.sum(np.exp(a - amax))))
        if L < -30.0:
            # ℓ = S − S²/2 + … with S = e^L < 1e-13: log ℓ = L − S/2 and the factor is e^{−S/2}
            S = math.exp(L)
            f, factor = L - S / 2, math.exp(-S / 2)
        else:
            sp = _log1p_exp(L)
            f = math.log(sp)
            factor = math.exp(L - sp - f)
        w = np.exp(a - L) * factor
        g = np.zeros(K)
        g[others] = w
        g[k] = -w.sum()
        return f, R / nx * (g - (g @ u) * u)

    rng = rng_of(seed)
    x, fval, vals, gn = lbfgs_multistart(fun, [rng.standard_normal(K) for _ in range(n_starts)])
    return NumericalOptimum(
        float(np.exp(fval)),
        np.zeros((K, 0)),
        (R * x / np.linalg.norm(x))[:, None],
        None,
        gn,
        np.exp(vals),
        "L-BFGS on log(loss)",
    )
