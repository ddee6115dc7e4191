"""Straightforward enumeration of the true risk: the reference the fast engine is tested against.

For every class k it lists all s_c^L sentences of 𝒳_k, computes their K scores with one matrix
product (sentences × L·d)·(L·d × K), and the cross-entropy in log-sum-exp form. It is also the
baseline of ``benchmarks/exact_risk.py``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .._budget import check_work
from .._validate import Array, Bool, Instance, Int, Real, fail, public
from ..network import check_weights, phi, phi_jacobian_vjp
from ..task import Task
from .evaluation import RiskResult
from .plan import SCORE_MAX, _g

__all__ = ["true_risk_bruteforce", "class_sentences"]

# refuse enumerations with more (sentence, class) pairs than this by default (minutes here)
MAX_BRUTE_PAIRS = 5 * 10**9


def _check_sentences(task, what):
    # s_c^L sentences of L word indices (int64), their probabilities, and itertools' tuples (~(56 + 8L) bytes each)
    n = task.s_c**task.L
    check_work("task", task, items=n * task.L, bytes=n * (24 * task.L + 64), what=what)


@public(task=Instance(Task), k=Int(min=0))
def class_sentences(task: Task, k: int):
    """All sentences of class k as word indices (s_c^L × L) and their probabilities D_{z_k}(x).

    Parameters
    ----------
    task : Task
    k : int
        Class index, 0 ≤ k < K.

    Returns
    -------
    X : ndarray of int64, shape (s_c^L, L)
        Word indices x_ℓ = z_{k,ℓ}·s_c + β_ℓ (the convention of section 2).
    D : ndarray, shape (s_c^L,)
        D_{z_k}(x) = Π_ℓ μ_{β_ℓ}.
    """
    if k >= task.K:
        fail("k", k, f"must be a class index < K = {task.K}")
    _check_sentences(task, "class_sentences (s_c^L sentences)")
    return _class_sentences(task, k)


def _class_sentences(task, k):
    s, L = task.s_c, task.L
    betas = np.array(list(itertools.product(range(s), repeat=L)), dtype=np.int64).reshape(-1, L)
    X = task.Z[k][None, :] * s + betas
    D = np.prod(task.mu[betas], axis=1)
    return X, D


def _softplus(t):
    return np.where(t > 0, t + np.log1p(np.exp(-np.abs(t))), np.log1p(np.exp(np.minimum(t, 0))))


def _check_cost(task: Task, d: int, max_pairs) -> int:
    """The number of (sentence, class) pairs, refused above ``max_pairs`` or the budget in force."""
    K, L, s = task.K, task.L, task.s_c
    pairs = K * s**L * K
    if max_pairs is not None and pairs > max_pairs:
        fail(
            "task",
            task,
            f"brute-force enumeration of {_g(pairs)} sentence-class pairs exceeds "
            f"max_pairs={max_pairs:.3g}; use fctheory.true_risk",
        )
    n = s**L
    _check_sentences(task, "true_risk_bruteforce (s_c^L sentences per class)")
    # per class: features n×L·d, scores and softmax terms n×K (a few copies); products ~2·L·d flops a pair
    check_work(
        "task",
        task,
        bytes=8 * n * (L * d + 6 * K + L + 4) + 8 * K * L * d * 4,
        seconds=pairs * (2 * L * d + 30) * 1e-10 + K * n * L * 2e-7,
        what="true_risk_bruteforce",
    )
    return pairs


@public(
    task=Instance(Task),
    W=Array(ndim=2),
    U=Array(ndim=2),
    lam=Real(lo=0.0),
    layernorm=Bool(),
    grad=Bool(),
    eps=Real(lo=0.0),
    max_pairs=Int(min=1).or_none(),
    legacy_positional=("layernorm",),
)
def true_risk_bruteforce(
    task: Task,
    W,
    U,
    lam=0.0,
    *,
    layernorm: bool = False,
    grad: bool = False,
    eps: float = 0.0,
    max_pairs: int | None = MAX_BRUTE_PAIRS,
) -> RiskResult:
    """True risk (5)/(10) by plain enumeration of every (sentence, class) pair.

    Same conventions and return type as :func:`fctheory.risk.evaluate_risk`. The CE of a sentence
    of class k is computed as softplus(log Σ_{j≠k} e^{y_j − y_k}), so it keeps full relative
    precision when it is tiny. Cost: K·s_c^L·K·(2L·d + a few exponentials); refused above
    ``max_pairs`` (sentence, class) pairs (None: no limit) and, whatever ``max_pairs``, above the
    memory and time budget in force (:func:`fctheory.get_budget`).
    """
    d = check_weights(task, W, U)
    K, L = task.K, task.L
    if layernorm and eps == 0.0 and d == 1:
        fail("W", W, "LayerNorm with eps=0 needs d >= 2 rows (φ of a scalar is undefined)")
    pairs = _check_cost(task, d, max_pairs)
    with np.errstate(over="ignore", invalid="ignore"):
        V = phi(W, eps=eps) if layernorm else W
        wW, wU = float(np.sum(W * W)), float(np.sum(U * U))
        penalty = 0.5 * lam * (wU + (0.0 if layernorm else wW))
        gmax = float(np.max(np.abs(U.reshape(K * L, d) @ V)))  # max |<u_(k,l), v_w>|
    if not (math.isfinite(gmax) and 2.0 * L * gmax <= SCORE_MAX):
        fail("W", W, f"the scores overflow float64 (max |<u_(k,l), w>| = {gmax:.3g}); use smaller weights")
    if not math.isfinite(penalty):
        big = "W" if not math.isfinite(wW) else "U" if not math.isfinite(wU) else "lam"
        fail(big, {"W": W, "U": U, "lam": lam}[big], "the penalty (λ/2)(‖W‖² + ‖U‖²) overflows float64")
    ce_k = np.zeros(K)
    dU = np.zeros_like(U) if grad else None
    dV = np.zeros_like(V) if grad else None
    with np.errstate(under="ignore", over="ignore", divide="ignore", invalid="ignore"):
        for k in range(K):
            X, D = _class_sentences(task, k)
            feats = V.T[X].reshape(X.shape[0], L * d)  # concat(v_{x_1}, …, v_{x_L})
            Y = feats @ U.T
            if K == 1:
                continue
            Dl = Y - Y[:, k : k + 1]  # y_j − y_k (= −margin, Definition A)
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
                    np.add.at(dV.T, X[:, ell], back[:, ell * d : (ell + 1) * d])
    R0 = math.fsum(ce_k.tolist()) / K
    res = RiskResult(R=R0 + penalty, R0=R0, penalty=penalty, pairs=pairs)
    if grad:
        dU /= K
        dV /= K
        with np.errstate(over="ignore", invalid="ignore"):
            res.grad_W = phi_jacobian_vjp(W, dV, eps) if layernorm else dV + lam * W
            res.grad_U = dU + lam * U
        if not (np.all(np.isfinite(res.grad_W)) and np.all(np.isfinite(res.grad_U))):
            fail("lam", lam, "the gradient overflows float64 at these weights; use smaller weights or λ")
    return res
