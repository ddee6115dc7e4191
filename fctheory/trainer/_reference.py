"""The readable reference step, written once against the array namespace ``xp`` (NumPy or CuPy).

One SGD step on a minibatch, exactly as PyTorch's ``SGD(weight_decay=λ)`` does it on the
authors' model: the gradient of the minibatch-mean cross-entropy plus λ·w, then w ← w − lr·(that).
The embedding table is word-major, E = Wᵀ (n_w×d), as ``nn.Embedding`` stores it.
"""
from __future__ import annotations

import numpy as np


def layernorm_rows(xp, E, eps):
    """φ applied to every word embedding (row of E): returns (φ(E), σ) with σ = √(var + eps)."""
    C = E - E.mean(axis=1, keepdims=True)
    sig = xp.sqrt((C * C).mean(axis=1, keepdims=True) + eps)
    return C / sig, sig


def scatter_add_for(xp):
    """``out[idx] += vals`` with repeated indices accumulated (``xp.add.at``).

    CuPy ≥ 13 has ``cupy.add.at`` (``cupyx.scatter_add`` is deprecated since); older CuPy only the latter.
    """
    add_at = getattr(getattr(xp, "add", None), "at", None)
    if add_at is not None:
        return add_at
    import cupyx  # noqa: PLC0415 - only on the CuPy path, old CuPy

    return cupyx.scatter_add


def minibatch_grad(xp, E, U, Xb, yb, layernorm, eps, scatter_add):
    """Gradient of the minibatch-mean cross-entropy (no weight decay) with respect to E and U.

    Returns (summed cross-entropy, number correct, ∂E, ∂U).
    """
    b, L = Xb.shape
    d = E.shape[1]
    if layernorm:
        V, sig = layernorm_rows(xp, E, eps)
    else:
        V = E
    F = V[Xb].reshape(b, L * d)  # concat(φ(w_{x_1}), …, φ(w_{x_L}))
    S = F @ U.T
    m = S.max(axis=1, keepdims=True)
    ex = xp.exp(S - m)
    z = ex.sum(axis=1, keepdims=True)
    rows = xp.arange(b)
    loss = xp.log(z[:, 0]) - (S[rows, yb] - m[:, 0])
    correct = xp.argmax(S, axis=1) == yb
    G = ex / z
    G[rows, yb] -= 1
    G /= b  # ∂(mean CE)/∂s
    dF = (G @ U).reshape(b * L, d)
    dU = G.T @ F
    dV = xp.zeros_like(E)
    scatter_add(dV, Xb.reshape(-1), dF)
    if layernorm:  # VJP of φ, Lemma S: (g − mean g − φ (φ·g)/d)/σ
        dE = (dV - dV.mean(axis=1, keepdims=True) - V * (V * dV).sum(axis=1, keepdims=True) / d) / sig
    else:
        dE = dV
    return loss.sum(dtype=xp.float64), correct.sum(), dE, dU


def sgd_step(xp, E, U, Xb, yb, lr, lam_W, lam_U, layernorm, eps, scatter_add):
    """One SGD step on the minibatch (Xb, yb), E and U updated in place: w ← w − lr·(∂w + λ·w).

    Returns (summed cross-entropy, number correct) over the minibatch, before the update.
    """
    loss, correct, dE, dU = minibatch_grad(xp, E, U, Xb, yb, layernorm, eps, scatter_add)
    E -= lr * (dE + lam_W * E)
    U -= lr * (dU + lam_U * U)
    return loss, correct


def evaluate(xp, E, U, X, y, bsz, layernorm, eps):
    """(summed cross-entropy, number correct) of the network on (X, y), in batches of ``bsz``."""
    V = layernorm_rows(xp, E, eps)[0] if layernorm else E
    n, L = X.shape
    d = E.shape[1]
    loss = 0.0
    correct = 0
    for b0 in range(0, n, bsz):
        Xb = X[b0 : b0 + bsz]
        yb = y[b0 : b0 + bsz]
        S = V[Xb].reshape(Xb.shape[0], L * d) @ U.T
        m = S.max(axis=1, keepdims=True)
        z = xp.exp(S - m).sum(axis=1)
        rows = xp.arange(Xb.shape[0])
        loss += float((xp.log(z) - (S[rows, yb] - m[:, 0])).sum(dtype=xp.float64))
        correct += int((xp.argmax(S, axis=1) == yb).sum())
    return loss, correct
