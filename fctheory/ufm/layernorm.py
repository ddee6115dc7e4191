"""The LayerNorm-constrained UFM of Súkeník, Lampert & Mondelli (GUFM, eq. (8)).

    min_{W, X}  𝓛(W X (+ b1ᵀ), Y) + (λ/2)‖W‖²   s.t.  ‖x_i‖ = √d,  1ᵀx_i = 0,

W ∈ R^{K×d}, X ∈ R^{d×N}; no feature penalty (LayerNorm fixes the norm), losses averaged over the
N samples: CE (1/N)Σ ℓ_CE, MSE (1/(2N))‖·‖². The optimum does not depend on n. Closed forms
(deep-resnets-transformers notes §2, with the paper's errata corrected):

* CE (d ≥ K): rows w_k = ρ*·u_k, features √d·u_k, u a unit simplex ETF in 1^⊥, with ρ* the root of
  √d/(exp(aρ) + K − 1) = λρ, a = √d·K/(K−1); value log(1 + (K−1)e^{−aρ*}) + (λK/2)ρ*².
* MSE without bias (d ≥ K+1): orthogonal zero-sum rows of norm z* = √d/(d + λK),
  value λK/(2(d + λK)).
* MSE with an unregularised bias (d ≥ K): b* = 1/K, W = ρ*·U (U unit ETF), ρ* = √d(K−1)/(K(d+λ(K−1))),
  value λ(K−1)²/(2K(d + λ(K−1))).

When the dimension condition fails the functions return the numerical optimum
(``closed_form=False``) and keep the formula in ``extras["formula_value"]``, which then is not
attained.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy.optimize import brentq

from .._budget import check_work
from .._validate import Array, Bool, Int, Real, Seed, fail, public
from ._common import (
    KIND_K,
    KIND_N,
    KIND_STARTS,
    NumericalOptimum,
    UFMOptimum,
    check_finite_result,
    gram_budget,
    labels,
    lbfgs_multistart,
    rng_of,
    seconds_of,
    softmax_ce,
    solver_budget,
)

__all__ = ["layernorm_ce", "layernorm_mse", "solve_layernorm_ce", "solve_layernorm_mse", "layernorm_features"]

_SRC = "Súkeník, Lampert & Mondelli, Lemma 4.2 / eq. (8); closed forms: deep-resnets-transformers notes §2"


def _etf(K):
    E = np.full((K, K), -1.0 / K)
    E[np.diag_indices(K)] += 1.0
    return E


#: the feature dimension is a count that must be a float64 too (√d enters every formula)
KIND_D = Int(min=2, max=10**300)
KIND_LAMBDA = Real(lo=0.0, lo_open=True)
#: λ range of the iterative solver (the closed forms take any λ > 0)
SOLVER_LAM_RANGE = (1e-6, 1e6)


def _solver_lam(lam):
    lo, hi = SOLVER_LAM_RANGE
    if not lo <= lam <= hi:
        fail("lam", lam, f"the numerical solver needs {lo:g} <= lam <= {hi:g}")


def _features_unchecked(G):
    d = G.shape[0]
    V = G - G.mean(axis=0, keepdims=True)
    return np.sqrt(d) * V / np.linalg.norm(V, axis=0, keepdims=True)


@public(G=Array(ndim=2))
def layernorm_features(G):
    """x = √d·P⊥g/‖P⊥g‖ column-wise: a point of the LayerNorm sphere (zero mean, norm √d).

    Column-wise scale invariant: every centred column is rescaled exactly by a power of two before
    its norm is taken, so columns of any magnitude give the same point. A column whose centred part
    is zero (a constant column, or any column when d = 1) has no direction and is refused.
    """
    d = G.shape[0]
    # exact per-column rescaling before the mean, so 1e308 entries cannot overflow the sum
    g = np.max(np.abs(G), axis=0)
    with np.errstate(under="ignore"):
        G = np.ldexp(G, -np.where(g > 0, np.frexp(g)[1], 0)[None, :])
    V = G - G.mean(axis=0, keepdims=True)
    a = np.max(np.abs(V), axis=0)
    if np.any(a == 0):
        j = int(np.argmin(a))
        fail(
            "G",
            f"array of shape {G.shape}",
            f"column {j} is constant: P⊥g = 0 has no direction on the LayerNorm sphere",
        )
    with np.errstate(under="ignore"):
        V = np.ldexp(V, -np.frexp(a)[1][None, :])
    return math.sqrt(d) * V / np.linalg.norm(V, axis=0, keepdims=True)


def _features_vjp(G, gX):
    # back-propagate through g ↦ √d·P⊥g/‖P⊥g‖
    d = G.shape[0]
    V = G - G.mean(axis=0, keepdims=True)
    nv = np.linalg.norm(V, axis=0, keepdims=True)
    U = V / nv
    gV = np.sqrt(d) / nv * (gX - U * np.sum(U * gX, axis=0, keepdims=True))
    return gV - gV.mean(axis=0, keepdims=True)


def _rho_ce(K, d, lam):
    """The root ρ* of √d/(e^{aρ} + K − 1) = λρ, a = √d·K/(K−1), for any λ > 0.

    First in s = log ρ, where g(s) = log √d − log(e^{a e^s} + K − 1) − log λ − s is strictly
    decreasing and bracketed by ρ_lo = min(1/a, √d/((K+2)λ)) (there e^{aρ} + K − 1 ≤ K + 2, so g ≥ 0)
    and ρ_hi = √d/(λK) (g ≤ 0): both ends and every evaluation stay finite from λ = 1e-300 to 1e308.
    The root is then polished in ρ (relative error ~eps instead of eps·|log ρ|).
    """
    d = float(d)
    a = math.sqrt(d) * K / (K - 1)
    l_sd, l_lam, l_K1 = 0.5 * math.log(d), math.log(lam), math.log(K - 1)

    l_a = math.log(a)

    def g(s):
        if l_a + s > 700.0:
            return -math.exp(700.0)  # a·ρ > e^700: log(e^{aρ} + K − 1) = aρ dwarfs every other term
        x = a * math.exp(s)  # a·ρ
        # log(e^x + K − 1) without overflow
        lse = x + math.log1p((K - 1) * math.exp(-x)) if x > l_K1 else l_K1 + math.log1p(math.exp(x - l_K1))
        return l_sd - lse - l_lam - s

    s_lo = min(-l_a, l_sd - math.log(K + 2) - l_lam)
    s_hi = l_sd - l_lam - math.log(K)
    if s_lo >= s_hi or g(s_hi) >= 0.0:
        s = s_hi  # the root is at the upper end to working precision (huge λ: ρ* = √d/(λK)(1 − O(aρ*)))
    elif g(s_lo) <= 0.0:
        s = s_lo
    else:
        s = brentq(g, s_lo, s_hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500)
    r = math.exp(s)

    def f(r):
        # √d/(e^{ar} + K − 1) written with e^{−ar} ≤ 1: no overflow at the bracket end for small λ
        e = math.exp(-a * r)
        return math.sqrt(d) * e / (1.0 + (K - 1) * e) - lam * r

    lo, hi = r * (1 - 1e-10), r * (1 + 1e-10)
    if r > 0 and f(lo) > 0 > f(hi):
        r = brentq(f, lo, hi, xtol=max(r * 1e-17, 5e-324), rtol=4 * np.finfo(float).eps, maxiter=200)
    return r, a


@public(K=KIND_K, d=KIND_D, lam=KIND_LAMBDA, n_starts=KIND_STARTS, seed=Seed(), legacy_positional=("K", "d", "lam"))
def layernorm_ce(*, K: int, d: int, lam: float, n_starts: int = 4, seed=0) -> UFMOptimum:
    """Optimum of the LayerNorm-constrained CE UFM (GUFM (8) with mean cross-entropy).

    Parameters
    ----------
    K : int
        Classes (≥ 2).
    d : int
        Feature dimension (≥ 2); the closed form needs d ≥ K (a simplex ETF inside 1^⊥).
    lam : float
        Weight decay on W (> 0).
    n_starts, seed :
        Used only when d < K, where the optimum is computed by :func:`solve_layernorm_ce`.

    Notes
    -----
    Any λ > 0 is answered by the closed form (the root is bracketed in [0, √d/(λK)] and found by
    Brent's method without overflow); the numerical path (d < K) needs λ in [1e-6, 1e6].
    """
    gram_budget("K", K, K, 3, "ufm.layernorm_ce")
    rho, a = _rho_ce(K, d, lam)
    formula = float(np.log1p((K - 1) * np.exp(-a * rho)) + 0.5 * K * (lam * rho) * rho)  # λK never formed
    extras = {"rho": float(rho), "a": float(a), "formula_value": formula, "logit_gap": float(a * rho)}
    cond = "d >= K (simplex ETF inside the zero-sum hyperplane)"
    if d >= K:
        return UFMOptimum(
            model="layernorm_ce",
            value=formula,
            W_norm_sq=float(K * rho**2),
            H_norm_sq=float("nan"),
            W_gram=rho**2 * K / (K - 1) * _etf(K),
            means_gram=d * K / (K - 1) * _etf(K),
            bias=None,
            threshold=None,
            trivial=False,
            closed_form=True,
            conditions=cond,
            source=_SRC,
            extras=extras,
        )
    num = solve_layernorm_ce(K=K, n_spl=1, d=d, lam=lam, n_starts=n_starts, seed=seed)
    return _numerical_result("layernorm_ce", num, cond, extras, K)


@public(
    K=KIND_K,
    d=KIND_D,
    lam=KIND_LAMBDA,
    bias=Bool(),
    n_starts=KIND_STARTS,
    seed=Seed(),
    legacy_positional=("K", "d", "lam", "bias"),
)
def layernorm_mse(*, K: int, d: int, lam: float, bias: bool = False, n_starts: int = 4, seed=0) -> UFMOptimum:
    """Optimum of the LayerNorm-constrained MSE UFM (GUFM (8) with (1/(2N))‖WX (+b1ᵀ) − Y‖²).

    ``bias=False``: z* = √d/(d+λK) (not the printed 1/(√d(1+λK))), value λK/(2(d+λK)), needs d ≥ K+1
    (the paper's d ≥ K is not enough: K orthonormal rows must also be zero-sum).
    ``bias=True`` (unregularised b): value λ(K−1)²/(2K(d+λ(K−1))), needs d ≥ K.
    The formulas are evaluated through d/λ (no overflow of λK at λ ≈ 1e308, no underflow at λ ≈ 1e-300);
    the numerical path (dimension condition violated) needs λ in [1e-6, 1e6].
    """
    gram_budget("K", K, K, 3, "ufm.layernorm_mse")
    dl = d / lam  # finite for any λ > 0 when d < 1e300 … except λ subnormal: then inf, handled below
    sd = math.sqrt(d)
    with np.errstate(over="ignore"):
        if bias:
            u = dl + (K - 1)  # (d + λ(K−1))/λ
            rho = sd * (K - 1) / K / (d + lam * (K - 1)) if math.isfinite(d + lam * (K - 1)) else 0.0
            formula = float((K - 1) ** 2 / (2 * K) / u)  # λ(K−1)²/(2K(d+λ(K−1)))
            need = K
            Wg = rho * rho * K / (K - 1) * _etf(K)
            Mg = d * K / (K - 1) * _etf(K)
            extras = {"rho": float(rho), "formula_value": formula, "t": float(dl / u) if math.isfinite(u) else 1.0}
            cond = "d >= K (simplex ETF inside the zero-sum hyperplane)"
        else:
            u = dl + K  # (d + λK)/λ
            z = sd / (d + lam * K) if math.isfinite(d + lam * K) else 0.0
            formula = float(K / (2 * u))  # λK/(2(d+λK))
            need = K + 1
            Wg = z * z * np.eye(K)
            Mg = d * np.eye(K)
            printed = 1 / (sd * (1 + lam * K)) if math.isfinite(1 + lam * K) else 0.0
            extras = {"z": float(z), "formula_value": formula, "printed_z": float(printed)}
            cond = "d >= K+1 (K orthonormal rows inside the zero-sum hyperplane)"
    check_finite_result("d", d, Mg, what="the feature Gram matrix d*E_K")
    model = "layernorm_mse+bias" if bias else "layernorm_mse"
    if d >= need:
        return UFMOptimum(
            model=model,
            value=formula,
            W_norm_sq=float(np.trace(Wg)),
            H_norm_sq=float("nan"),
            W_gram=Wg,
            means_gram=Mg,
            bias=np.full(K, 1.0 / K) if bias else None,
            threshold=None,
            trivial=False,
            closed_form=True,
            conditions=cond,
            source=_SRC,
            extras=extras,
        )
    if not bias and d == K:
        # best point with the claimed structure W = z·Q (orthonormal rows, NC2B = 0) at d = K:
        # ‖Wx_k − e_k‖² = z²d − 2z q_kᵀx_k + 1, best x_k ∝ P⊥q_k, and Σ_k‖P⊥q_k‖² = K−1 forces
        # ‖P⊥q_k‖ ≤ √((K−1)/K) on average ⇒ value 1/2 − d(K−1)/(2K(d+λK)) (the solver beats it)
        extras["orthogonal_structure_value"] = float(0.5 - (K - 1) / (2 * K) * (dl / (dl + K)))
    num = solve_layernorm_mse(K=K, n_spl=1, d=d, lam=lam, bias=bias, n_starts=n_starts, seed=seed)
    return _numerical_result(model, num, cond, extras, K)


def _numerical_result(model, num, cond, extras, K):
    W, X = num.W, num.H
    Xbar = X.reshape(X.shape[0], K, -1).mean(axis=2)
    ex = dict(extras)
    ex["numerical"] = num
    return UFMOptimum(
        model=model,
        value=num.value,
        W_norm_sq=float(np.sum(W * W)),
        H_norm_sq=float(np.sum(X * X)),
        W_gram=W @ W.T,
        means_gram=Xbar.T @ Xbar,
        bias=num.b,
        threshold=None,
        trivial=False,
        closed_form=False,
        conditions=cond + " -- violated: numerical optimum (multi-start L-BFGS)",
        source=_SRC,
        extras=ex,
    )


# ----------------------------------------------------------------------------- solvers
def _solve(K, n, d, lam, bias, loss, n_starts, seed):
    N = K * n
    y = labels(K, n)
    Y = np.repeat(np.eye(K), n, axis=1)

    # MSE: an unregularised bias is eliminated in closed form, b(W, X) = mean_i(y_i − W x_i)
    # (variable projection; by the envelope theorem the gradients in W, X are unchanged).
    # CE never uses a bias here.
    def unpack(x):
        W = x[: K * d].reshape(K, d)
        G = x[K * d : K * d + d * N].reshape(d, N)
        b = (Y - W @ _features_unchecked(G)).mean(axis=1) if bias else None
        return W, G, b

    def fun(x):
        W, G, _ = unpack(x[: K * d + d * N])
        X = _features_unchecked(G)
        Z = W @ X
        if bias:
            Z = Z + (Y - Z).mean(axis=1, keepdims=True)
        if loss == "ce":
            val, D = softmax_ce(Z, y)
        else:
            R = Z - Y
            val, D = 0.5 * float(np.sum(R * R)) / N, R / N
        val += 0.5 * lam * float(np.sum(W * W))
        gW = D @ X.T + lam * W
        gG = _features_vjp(G, W.T @ D)
        return val, np.concatenate([gW.ravel(), gG.ravel()])

    rng = rng_of(seed)
    if d == 2:
        return _solve_d2(K, n, lam, bias, fun, rng, n_starts)  # noqa
    dim = K * d + d * N
    x, f, vals, gn = lbfgs_multistart(fun, [rng.standard_normal(dim) for _ in range(n_starts)])
    W, G, b = unpack(x)
    return NumericalOptimum(
        float(f), W.copy(), layernorm_features(G), None if b is None else b.copy(), gn, vals, "L-BFGS"
    )


def _solve_d2(K, n, lam, bias, fun, rng, n_starts):
    """d = 2: the LayerNorm sphere is the two points ±(1, −1), where the sphere parametrisation has
    zero gradient; enumerate the class-wise sign patterns and optimise W (and b) for each."""

    best = None
    allv = []
    for signs in itertools.product((1.0, -1.0), repeat=K - 1):
        s = np.repeat(np.array((1.0,) + signs), n)  # global sign symmetry: fix class 0
        G = np.vstack([s, -s])

        def fw(x, G=G):
            v, g = fun(np.concatenate([x, G.ravel()]))
            return v, g[: 2 * K]

        dim = 2 * K
        x, f, vals, gn = lbfgs_multistart(fw, [rng.standard_normal(dim) for _ in range(max(1, n_starts))])
        allv.extend(vals)
        if best is None or f < best[1]:
            best = (x, f, gn, G)
    x, f, gn, G = best
    W = x.reshape(K, 2)
    X = layernorm_features(G)
    b = (np.repeat(np.eye(K), n, axis=1) - W @ X).mean(axis=1) if bias else None
    return NumericalOptimum(float(f), W, X, b, gn, np.array(allv), "enumeration + L-BFGS")


def _solver_checks(K, n, d, lam, n_starts, what):
    """λ range and budget of the numerical solvers (d = 2 enumerates 2^(K−1) sign patterns)."""
    _solver_lam(lam)
    N = K * n
    if d == 2:
        # the sign patterns are enumerated before any optimisation: size them exactly first
        kk = min(K, 4096)  # 2^4095 patterns is beyond any budget: never form 2^(K−1) for a huge K
        check_work(
            "K",
            K,
            items=2 ** (kk - 1) * n_starts,
            seconds=seconds_of(2 ** (kk - 1) * n_starts * 2000 * (50_000 + 40 * kk * N)),
            what=f"{what} at d = 2 (2^(K-1) sign patterns)",
        )
    solver_budget(
        dict(K=K, n_spl=n, d=d),
        dim=K * d + d * N,
        flops=12 * K * d * N + 30 * K * N,
        n_starts=n_starts,
        extra_bytes=8 * 8 * (K + d) * N,
        what=what,
    )


_SOLVE_KINDS = dict(K=KIND_K, n_spl=KIND_N, d=KIND_D, lam=KIND_LAMBDA, n_starts=KIND_STARTS, seed=Seed())


@public(**_SOLVE_KINDS, renamed={"n": "n_spl"}, legacy_positional=("K", "n_spl", "d", "lam"))
def solve_layernorm_ce(*, K, n_spl, d, lam, n_starts=4, seed=None) -> NumericalOptimum:
    """Multi-start L-BFGS on the LayerNorm-constrained CE UFM; features parametrised on the sphere.

    Returns W (K×d) and the features X (d×N) in ``H``. Needs λ in [1e-6, 1e6]; the size (and at
    d = 2 the 2^(K−1) enumerated sign patterns) is checked against the budget first.
    """
    n = n_spl  # the papers' n (samples per class)
    _solver_checks(K, n, d, lam, n_starts, "ufm.solve_layernorm_ce")
    return _solve(K, n, d, lam, False, "ce", n_starts, seed)


@public(**_SOLVE_KINDS, bias=Bool(), renamed={"n": "n_spl"}, legacy_positional=("K", "n_spl", "d", "lam", "bias"))
def solve_layernorm_mse(*, K, n_spl, d, lam, bias=False, n_starts=4, seed=None) -> NumericalOptimum:
    """Multi-start L-BFGS on the LayerNorm-constrained MSE UFM (optionally with a free bias); λ range
    and budget as in :func:`solve_layernorm_ce`."""
    n = n_spl  # the papers' n (samples per class)
    _solver_checks(K, n, d, lam, n_starts, "ufm.solve_layernorm_mse")
    return _solve(K, n, d, lam, bias, "mse", n_starts, seed)
