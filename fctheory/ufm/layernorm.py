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

import numpy as np
from scipy.optimize import brentq

from .._validate import check_int
from ._common import NumericalOptimum, UFMOptimum, check_pos, labels, lbfgs_multistart, rng_of, softmax_ce

__all__ = ["layernorm_ce", "layernorm_mse", "solve_layernorm_ce", "solve_layernorm_mse", "layernorm_features"]

_SRC = "Súkeník, Lampert & Mondelli, Lemma 4.2 / eq. (8); closed forms: deep-resnets-transformers notes §2"


def _etf(K):
    return np.eye(K) - np.ones((K, K)) / K


def _KdL(K, d, lam):
    K = check_int("K", K, min=2)
    d = check_int("d", d, min=2)
    lam = check_pos("lam", lam)
    return K, d, lam


def layernorm_features(G):
    """x = √d·P⊥g/‖P⊥g‖ column-wise: a point of the LayerNorm sphere (zero mean, norm √d)."""
    d = G.shape[0]
    V = G - G.mean(axis=0, keepdims=True)
    return np.sqrt(d) * V / np.linalg.norm(V, axis=0, keepdims=True)


def _features_vjp(G, gX):
    # back-propagate through g ↦ √d·P⊥g/‖P⊥g‖
    d = G.shape[0]
    V = G - G.mean(axis=0, keepdims=True)
    nv = np.linalg.norm(V, axis=0, keepdims=True)
    U = V / nv
    gV = np.sqrt(d) / nv * (gX - U * np.sum(U * gX, axis=0, keepdims=True))
    return gV - gV.mean(axis=0, keepdims=True)


def _rho_ce(K, d, lam):
    a = np.sqrt(d) * K / (K - 1)

    def f(r):
        return np.sqrt(d) / (np.exp(a * r) + K - 1) - lam * r

    hi = np.sqrt(d) / (lam * K)  # f(hi) < 0 < f(0)
    r = brentq(f, 0.0, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)
    return r, a


def layernorm_ce(K: int, d: int, lam: float, *, n_starts: int = 4, seed=0) -> UFMOptimum:
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
    """
    K, d, lam = _KdL(K, d, lam)
    rho, a = _rho_ce(K, d, lam)
    formula = float(np.log1p((K - 1) * np.exp(-a * rho)) + 0.5 * lam * K * rho**2)
    extras = {"rho": float(rho), "a": float(a), "formula_value": formula, "logit_gap": float(a * rho)}
    cond = "d >= K (simplex ETF inside the zero-sum hyperplane)"
    if d >= K:
        return UFMOptimum(
            model="layernorm_ce", value=formula, W_norm_sq=float(K * rho**2), H_norm_sq=float("nan"),
            W_gram=rho**2 * K / (K - 1) * _etf(K), means_gram=d * K / (K - 1) * _etf(K), bias=None,
            threshold=None, trivial=False, closed_form=True, conditions=cond, source=_SRC, extras=extras,
        )
    num = solve_layernorm_ce(K, 1, d, lam, n_starts=n_starts, seed=seed)
    return _numerical_result("layernorm_ce", num, cond, extras, K)


def layernorm_mse(K: int, d: int, lam: float, bias: bool = False, *, n_starts: int = 4, seed=0) -> UFMOptimum:
    """Optimum of the LayerNorm-constrained MSE UFM (GUFM (8) with (1/(2N))‖WX (+b1ᵀ) − Y‖²).

    ``bias=False``: z* = √d/(d+λK) (not the printed 1/(√d(1+λK))), value λK/(2(d+λK)), needs d ≥ K+1
    (the paper's d ≥ K is not enough: K orthonormal rows must also be zero-sum).
    ``bias=True`` (unregularised b): value λ(K−1)²/(2K(d+λ(K−1))), needs d ≥ K.
    """
    K, d, lam = _KdL(K, d, lam)
    if bias:
        rho = np.sqrt(d) * (K - 1) / (K * (d + lam * (K - 1)))
        formula = float(lam * (K - 1) ** 2 / (2 * K * (d + lam * (K - 1))))
        need = K
        Wg = rho**2 * K / (K - 1) * _etf(K)
        Mg = d * K / (K - 1) * _etf(K)
        extras = {"rho": float(rho), "formula_value": formula, "t": float(d / (d + lam * (K - 1)))}
        cond = "d >= K (simplex ETF inside the zero-sum hyperplane)"
    else:
        z = np.sqrt(d) / (d + lam * K)
        formula = float(lam * K / (2 * (d + lam * K)))
        need = K + 1
        Wg = z**2 * np.eye(K)
        Mg = d * np.eye(K)
        extras = {"z": float(z), "formula_value": formula, "printed_z": float(1 / (np.sqrt(d) * (1 + lam * K)))}
        cond = "d >= K+1 (K orthonormal rows inside the zero-sum hyperplane)"
    model = "layernorm_mse+bias" if bias else "layernorm_mse"
    if d >= need:
        return UFMOptimum(
            model=model, value=formula, W_norm_sq=float(np.trace(Wg)), H_norm_sq=float("nan"), W_gram=Wg,
            means_gram=Mg, bias=np.full(K, 1.0 / K) if bias else None, threshold=None, trivial=False,
            closed_form=True, conditions=cond, source=_SRC, extras=extras,
        )
    if not bias and d == K:
        # best point with the claimed structure W = z·Q (orthonormal rows, NC2B = 0) at d = K:
        # ‖Wx_k − e_k‖² = z²d − 2z q_kᵀx_k + 1, best x_k ∝ P⊥q_k, and Σ_k‖P⊥q_k‖² = K−1 forces
        # ‖P⊥q_k‖ ≤ √((K−1)/K) on average ⇒ value 1/2 − d(K−1)/(2K(d+λK)) (the solver beats it)
        extras["orthogonal_structure_value"] = float(0.5 - d * (K - 1) / (2 * K * (d + lam * K)))
    num = solve_layernorm_mse(K, 1, d, lam, bias, n_starts=n_starts, seed=seed)
    return _numerical_result(model, num, cond, extras, K)


def _numerical_result(model, num, cond, extras, K):
    W, X = num.W, num.H
    Xbar = X.reshape(X.shape[0], K, -1).mean(axis=2)
    ex = dict(extras)
    ex["numerical"] = num
    return UFMOptimum(
        model=model, value=num.value, W_norm_sq=float(np.sum(W * W)), H_norm_sq=float(np.sum(X * X)),
        W_gram=W @ W.T, means_gram=Xbar.T @ Xbar, bias=num.b, threshold=None, trivial=False,
        closed_form=False, conditions=cond + " -- violated: numerical optimum (multi-start L-BFGS)",
        source=_SRC, extras=ex,
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
        b = (Y - W @ layernorm_features(G)).mean(axis=1) if bias else None
        return W, G, b

    def fun(x):
        W, G, _ = unpack(x[: K * d + d * N])
        X = layernorm_features(G)
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
    return NumericalOptimum(float(f), W.copy(), layernorm_features(G), None if b is None else b.copy(), gn, vals, "L-BFGS")


def _solve_d2(K, n, lam, bias, fun, rng, n_starts):
    """d = 2: the LayerNorm sphere is the two points ±(1, −1), where the sphere parametrisation has
    zero gradient; enumerate the class-wise sign patterns and optimise W (and b) for each."""
    import itertools

    N = K * n
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


def solve_layernorm_ce(K, n, d, lam, *, n_starts=4, seed=None) -> NumericalOptimum:
    """Multi-start L-BFGS on the LayerNorm-constrained CE UFM; features parametrised on the sphere.

    Returns W (K×d) and the features X (d×N) in ``H``.
    """
    K, d, lam = _KdL(K, d, lam)
    n = check_int("n", n, min=1)
    return _solve(K, n, d, lam, False, "ce", n_starts, seed)


def solve_layernorm_mse(K, n, d, lam, bias=False, *, n_starts=4, seed=None) -> NumericalOptimum:
    """Multi-start L-BFGS on the LayerNorm-constrained MSE UFM (optionally with a free bias)."""
    K, d, lam = _KdL(K, d, lam)
    n = check_int("n", n, min=1)
    return _solve(K, n, d, lam, bias, "mse", n_starts, seed)
