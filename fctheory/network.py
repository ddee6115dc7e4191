"""The networks h and h* of section 2 and the weight-layout conventions.

h_{W,U}(x)  = U · concat(w_{x_1}, …, w_{x_L})            (no bias, no nonlinearity)
h*_{W,U}(x) = U · concat(φ(w_{x_1}), …, φ(w_{x_L}))      (φ: LayerNorm without parameters)

W is d×n_w; U is K×(L·d) with u_{k,ℓ} = U[k, ℓd:(ℓ+1)d]; the paper's Û ∈ R^{d×KL} has column
k·L+ℓ equal to u_{k,ℓ}.
"""
from __future__ import annotations

import numpy as np

from ._backend import array_namespace_of
from ._validate import fail

__all__ = ["phi", "phi_jacobian_vjp", "U_hat", "U_from_hat", "scores", "check_weights"]


def phi(W, eps: float = 0.0):
    """Column-wise LayerNorm without affine parameters: (v − mean(v)1)/σ(v).

    σ is the *biased* standard deviation, σ² = mean((v − mean v)²); with ``eps`` > 0 it is
    √(σ² + eps) as in ``torch.nn.LayerNorm`` (eps = 1e-5 there); ``eps=0`` is the paper's φ.
    Works on NumPy or CuPy arrays.
    """
    xp = array_namespace_of(W)
    mean = W.mean(axis=0, keepdims=True)
    C = W - mean
    var = (C * C).mean(axis=0, keepdims=True)
    if eps == 0.0 and bool(xp.any(var == 0)):
        fail("W", "a column with zero variance", "φ (LayerNorm with eps=0) is undefined for constant columns")
    return C / xp.sqrt(var + eps)


def phi_jacobian_vjp(W, G, eps: float = 0.0):
    """Back-propagate G = ∂f/∂φ(W) to ∂f/∂W through the column-wise LayerNorm.

    J_φ(w) = (1/σ)(I − 11ᵀ/d − φφᵀ/d) (Lemma S), applied column by column.
    """
    xp = array_namespace_of(W)
    d = W.shape[0]
    C = W - W.mean(axis=0, keepdims=True)
    sig = xp.sqrt((C * C).mean(axis=0, keepdims=True) + eps)
    Y = C / sig
    return (G - G.mean(axis=0, keepdims=True) - Y * (Y * G).sum(axis=0, keepdims=True) / d) / sig


def U_hat(U, L: int):
    """Û ∈ R^{d×KL} from U ∈ R^{K×Ld} (column k·L+ℓ is u_{k,ℓ})."""
    K, Ld = U.shape
    d = Ld // L
    return U.reshape(K * L, d).T


def U_from_hat(Uh, L: int):
    """Inverse of :func:`U_hat`."""
    d, KL = Uh.shape
    return Uh.T.reshape(KL // L, L * d)


def check_weights(task, W, U, *, name_W: str = "W", name_U: str = "U"):
    """Validate shapes and finiteness of (W, U) for ``task``; return d."""
    if W.ndim != 2 or W.shape[1] != task.n_w:
        fail(name_W, W, f"must have shape (d, n_w) = (d, {task.n_w}), got {tuple(W.shape)}")
    d = W.shape[0]
    if U.ndim != 2 or U.shape != (task.K, task.L * d):
        fail(name_U, U, f"must have shape (K, L*d) = ({task.K}, {task.L * d}), got {tuple(U.shape)}")
    xp = array_namespace_of(W)
    if not bool(xp.all(xp.isfinite(W))):
        fail(name_W, W, "must be finite")
    if not bool(xp.all(xp.isfinite(U))):
        fail(name_U, U, "must be finite")
    return d


def scores(W, U, X, layernorm: bool = False, eps: float = 0.0):
    """Class scores h(x) (or h*(x)) for word-index sentences X (n×L) → n×K."""
    xp = array_namespace_of(W)
    X = xp.asarray(X)
    if X.ndim != 2:
        fail("X", X, "must be a 2-D array of word indices (sentences × positions)")
    V = phi(W, eps) if layernorm else W
    n, L = X.shape
    feats = V.T[X].reshape(n, L * V.shape[0])  # concat(w_{x_1}, …, w_{x_L}), position-major
    return feats @ U.T


