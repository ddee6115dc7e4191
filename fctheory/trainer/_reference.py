"""The readable reference step, written once against the array namespace ``xp`` (NumPy or CuPy).

One SGD step on a minibatch, exactly as PyTorch's ``SGD(weight_decay=λ)`` does it on the
authors' model: the gradient of the minibatch-mean cross-entropy plus λ·w, then w ← w − lr·(that).
The embedding table is word-major, E = Wᵀ (n_w×d), as ``nn.Embedding`` stores it.
"""

from __future__ import annotations

import numpy as np


def layernorm_rows(xp, E, eps):
    """φ applied to every word embedding (last axis of E, with or without a leading run axis).

    Returns (φ(E), σ) with σ = √(var + eps) (biased variance, as :func:`fctheory.network.phi`).
    """
    C = E - E.mean(axis=-1, keepdims=True)
    sig = xp.sqrt((C * C).mean(axis=-1, keepdims=True) + eps)
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


def _flat_words(xp, Xb, n_w):
    """Row of every word of Xb in the (run-stacked) table: Xb[r, i, ℓ] of run r is row r·n_w + Xb[r, i, ℓ]."""
    if Xb.ndim == 2 or Xb.shape[0] == 1:
        return Xb.reshape(-1)
    R = Xb.shape[0]
    return (xp.arange(R)[:, None] * n_w + Xb.reshape(R, -1)).reshape(-1)


def _mT(xp, A):
    """The transpose of the last two axes (``.T`` of a matrix: no function-call overhead on one run's step)."""
    return A.T if A.ndim == 2 else xp.swapaxes(A, -1, -2)


def runs_grad(xp, E, U, Xb, yb, layernorm, eps, scatter_add):
    """Gradient of the minibatch-mean cross-entropy (no weight decay) with respect to E and U.

    One run — E (n_w×d), U (K×Ld), Xb (b×L), yb (b,) — or R runs at once with a leading run axis —
    E (R×n_w×d), U (R×K×Ld), Xb (R×b×L), yb (R×b). The same operations serve both: the three products
    are (batched) gemm, the scatter-add is one call for all runs (word w of run r is row r·n_w + w of the
    stacked tables), so a run's arithmetic does not depend on the other runs of the batch.

    Returns (summed cross-entropy (per run) in float64, number correct (per run), ∂E, ∂U).
    """
    b, L = Xb.shape[-2:]
    n_w, d = E.shape[-2:]
    K = U.shape[-2]
    runs = Xb.shape[:-2]  # () or (R,)
    V, sig = layernorm_rows(xp, E, eps) if layernorm else (E, None)
    idx = _flat_words(xp, Xb, n_w)
    # concat(φ(w_{x_1}), …, φ(w_{x_L})) (per run); take is a plain gather, several times faster than V[Xb]
    F = V.reshape(-1, d).take(idx, axis=0).reshape(*runs, b, L * d)
    S = F @ _mT(xp, U)  # (R ×) b × K
    m = S.max(axis=-1, keepdims=True)
    ex = xp.exp(S - m)
    z = ex.sum(axis=-1, keepdims=True)
    at = (xp.arange(yb.size), yb.reshape(-1))  # the true class of every sentence, in the (R·b)×K view
    loss = xp.log(z[..., 0]) - (S.reshape(-1, K)[at].reshape(yb.shape) - m[..., 0])
    correct = xp.argmax(S, axis=-1) == yb
    G = ex / z
    G.reshape(-1, K)[at] -= 1
    G /= b  # ∂(mean CE)/∂s
    dF = (G @ U).reshape(-1, d)
    dU = _mT(xp, G) @ F
    dV = xp.zeros_like(E)
    scatter_add(dV.reshape(-1, d), idx, dF)
    if layernorm:  # VJP of φ, Lemma S: (g − mean g − φ (φ·g)/d)/σ, per word (of every run)
        dE = (dV - dV.mean(axis=-1, keepdims=True) - V * (V * dV).sum(axis=-1, keepdims=True) / d) / sig
    else:
        dE = dV
    return loss.sum(axis=-1, dtype=xp.float64), correct.sum(axis=-1), dE, dU


def runs_sgd_step(xp, E, U, Xb, yb, lr, lam_W, lam_U, layernorm, eps, scatter_add):
    """One SGD step (one run, or R runs: the shapes of :func:`runs_grad`), E and U updated in place:
    w ← w − lr·(∂w + λ·w), as PyTorch's ``SGD(weight_decay=λ)``.

    ``lr``, ``lam_W``, ``lam_U`` are scalars or (R×1×1) arrays in the working dtype.
    Returns (summed cross-entropy, number correct) (per run) over the minibatch, before the update.
    """
    loss, correct, dE, dU = runs_grad(xp, E, U, Xb, yb, layernorm, eps, scatter_add)
    if xp is np:
        E -= lr * (dE + lam_W * E)
        U -= lr * (dU + lam_U * U)
    else:  # one fused pass over the weights instead of four (U is R·K·Ld: the largest array)
        _fused_update(xp)(lr, lam_W, dE, E)
        _fused_update(xp)(lr, lam_U, dU, U)
    return loss, correct


_FUSED = {}


def _fused_update(xp):
    """CuPy kernel w ← w − lr·(g + λ·w), the reference update's operations in the same order."""
    if "k" not in _FUSED:
        _FUSED["k"] = xp.ElementwiseKernel(
            "T lr, T lam, T g", "T w", "w = w - lr * (g + lam * w)", "fctheory_sgd_update"
        )
    return _FUSED["k"]


#: one run's gradient and step: :func:`runs_grad` and :func:`runs_sgd_step` on arrays without a run axis
minibatch_grad = runs_grad
sgd_step = runs_sgd_step


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
