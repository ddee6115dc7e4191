"""Straightforward enumeration of the true risk: the reference the fast engine is tested against.

For every class k it lists all s_c^L sentences of 𝒳_k, computes their K scores with one matrix
product (sentences × L·d)·(L·d × K), and the cross-entropy in log-sum-exp form. It is also the
baseline of ``benchmarks/exact_risk.py``.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from .._validate import fail, float_array
from ..network import check_weights, phi, phi_jacobian_vjp
from ..task import Task
from ._engine import RiskResult

__all__ = ["true_risk_bruteforce", "class_sentences"]

# refuse enumerations with more (sentence, class) pairs than this by default (minutes here)
MAX_BRUTE_PAIRS = 5 * 10**9


def class_sentences(task: Task, k: int):
    """All sentences of class k as word indices (s_c^L × L) and their probabilities D_{z_k}(x)."""
    s, L = task.s_c, task.L
    betas = np.array(list(itertools.product(range(s), repeat=L)), dtype=np.int64).reshape(-1, L)
    X = task.Z[k][None, :] * s + betas
    D = np.prod(task.mu[betas], axis=1)
    return X, D


def _softplus(t):
    return np.where(t > 0, t + np.log1p(np.exp(-np.abs(t))), np.log1p(np.exp(np.minimum(t, 0))))


def true_risk_bruteforce(task: Task, W, U, lam=0.0, layernorm: bool = False, *, grad: bool = False,
                         eps: float = 0.0, max_pairs: int | None = MAX_BRUTE_PAIRS) -> RiskResult:
    """True risk (5)/(10) by plain enumeration of every (sentence, class) pair.

    Same conventions and return type as :func:`fctheory.risk.evaluate_risk`. The CE of a sentence
    of class k is computed as softplus(log Σ_{j≠k} e^{y_j − y_k}), so it keeps full relative
    precision when it is tiny. Cost: K·s_c^L·K·(2L·d + a few exponentials); refused above
    ``max_pairs`` (sentence, class) pairs (None: no limit).
    """
    if not isinstance(task, Task):
        fail("task", task, "must be a fctheory.Task")
    lam = float(float_array("lam", lam, lo=0.0))
    eps = float(float_array("eps", eps, lo=0.0))
    W = float_array("W", W)
    U = float_array("U", U)
    d = check_weights(task, W, U)
    K, L, s = task.K, task.L, task.s_c
    pairs = K * s**L * K
    if max_pairs is not None and pairs > max_pairs:
        fail("task", task, f"brute-force enumeration of {pairs:.3g} sentence-class pairs exceeds "
             f"max_pairs={max_pairs:.3g}; use fctheory.true_risk")
    V = phi(W, eps) if layernorm else W
    penalty = 0.5 * lam * (float(np.sum(U * U)) + (0.0 if layernorm else float(np.sum(W * W))))
    ce_k = np.zeros(K)
    dU = np.zeros_like(U) if grad else None
    dV = np.zeros_like(V) if grad else None
    with np.errstate(under="ignore", over="ignore", divide="ignore", invalid="ignore"):
        for k in range(K):
            X, D = class_sentences(task, k)
            feats = V.T[X].reshape(X.shape[0], L * d)  # concat(v_{x_1}, …, v_{x_L})
            Y = feats @ U.T
            if K == 1:
                continue
            Dl = Y - Y[:, k:k + 1]  # y_j − y_k (= −margin, Definition A)
            Dl[:, k] = -np.inf
            mx = Dl.max(axis=1)
            t = mx + np.log(np.exp(Dl - mx[:, None]).sum(axis=1))
            sp = _softplus(t)
            ce_k[k] = math.fsum((D * sp).tolist())
            if grad:
                P = np.exp(Dl - sp[:, None])  # p_j for j ≠ k (0 at j = k)
                P[:, k] = -np.exp(t - sp)  # p_k − 1 = −σ(t)
                Pw = P * D[:, None]
                dU += Pw.T @ feats
                back = Pw @ U  # n × L·d: Σ_j (p_j − δ_jk) u_{j,ℓ}
                for ell in range(L):
                    np.add.at(dV.T, X[:, ell], back[:, ell * d:(ell + 1) * d])
    R0 = math.fsum(ce_k.tolist()) / K
    res = RiskResult(R=R0 + penalty, R0=R0, penalty=penalty, pairs=pairs)
    if grad:
        dU /= K
        dV /= K
        res.grad_W = phi_jacobian_vjp(W, dV, eps) if layernorm else dV + lam * W
        res.grad_U = dU + lam * U
    return res
