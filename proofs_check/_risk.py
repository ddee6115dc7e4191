"""An independent, enumeration-based true risk for small tasks, written for the checks.

f(X) is the unregularised true risk (45) as a function of X = ÛᵀW ∈ R^{KL×n_w} (Theorem G, (159)):
row k·L+ℓ of X holds ⟨u_{k,ℓ}, w_·⟩, so the score of class j on sentence x is y_j(x) = Σ_ℓ X[jL+ℓ, x_ℓ].
Every sentence of every class is enumerated (K·s_c^L of them) with its probability D_{z_k}(x) =
Π_ℓ μ_{β_ℓ}. Kept separate from ``fctheory.risk`` on purpose: the checks cross-check the two.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from ._oracle import frame as _frame
from ._oracle import phi


def U_hat(U: np.ndarray, L: int) -> np.ndarray:
    """Û ∈ R^{d×KL} (column k·L+ℓ is u_{k,ℓ} = U[k, ℓd:(ℓ+1)d]), written here, not taken from fctheory."""
    K, Ld = U.shape
    return U.reshape(K * L, Ld // L).T


def U_from_hat(Uh: np.ndarray, L: int) -> np.ndarray:
    d, KL = Uh.shape
    return Uh.T.reshape(KL // L, L * d)


@dataclass(frozen=True)
class Sentences:
    """All sentences of a task: word indices (N×L), class labels (N,), probabilities D(x) (N,)."""

    words: np.ndarray
    label: np.ndarray
    weight: np.ndarray
    K: int
    L: int
    n_w: int


def enumerate_sentences(task) -> Sentences:
    s_c, L, K = task.s_c, task.L, task.K
    betas = np.array(list(itertools.product(range(s_c), repeat=L)), dtype=np.int64)  # s_c^L × L
    w_beta = np.prod(task.mu[betas], axis=1)
    words = (task.Z[:, None, :] * s_c + betas[None, :, :]).reshape(-1, L)
    label = np.repeat(np.arange(K), len(betas))
    weight = np.tile(w_beta, K)
    return Sentences(words, label, weight, K, L, task.n_w)


def _scores(S: Sentences, X: np.ndarray) -> np.ndarray:
    X3 = X.reshape(S.K, S.L, S.n_w)
    Y = np.zeros((len(S.words), S.K))
    for ell in range(S.L):
        Y += X3[:, ell, S.words[:, ell]].T
    return Y


def f_value(S: Sentences, X: np.ndarray) -> float:
    """f(X) = (1/K) Σ_k Σ_x D_{z_k}(x) CE(y(x), k)."""
    Y = _scores(S, X)
    ce = logsumexp(Y, axis=1) - Y[np.arange(len(Y)), S.label]
    return float(np.dot(S.weight, ce) / S.K)


def f_grad(S: Sentences, X: np.ndarray):
    """(f(X), ∇f(X)) with ∇f(X) ∈ R^{KL×n_w} (Lemma S in the X variables)."""
    Y = _scores(S, X)
    lse = logsumexp(Y, axis=1)
    ce = lse - Y[np.arange(len(Y)), S.label]
    P = np.exp(Y - lse[:, None])
    P[np.arange(len(Y)), S.label] -= 1.0
    P *= (S.weight / S.K)[:, None]  # N×K: ∂f/∂y_j(x)
    G = np.zeros((S.K, S.L, S.n_w))
    for ell in range(S.L):
        # ∂y_j(x)/∂X[jL+ℓ, w] = 1{x_ℓ = w}
        Gl = np.zeros((S.n_w, S.K))
        np.add.at(Gl, S.words[:, ell], P)
        G[:, ell, :] = Gl.T
    return float(np.dot(S.weight, ce) / S.K), G.reshape(S.K * S.L, S.n_w)


def X_of(W: np.ndarray, U: np.ndarray, L: int, layernorm: bool = False) -> np.ndarray:
    """X = ÛᵀW (or Ûᵀφ(W) for h*)."""
    V = phi(W) if layernorm else W
    return U_hat(U, L).T @ V


def risk(task, W, U, lam: float, layernorm: bool = False, S: Sentences | None = None) -> float:
    """R(W,U) = R_0 + (λ/2)(‖W‖² + ‖U‖²), or R* = R_0(φ(W),U) + (λ/2)‖U‖² with ``layernorm``."""
    S = S or enumerate_sentences(task)
    reg = lam / 2 * (np.sum(U * U) + (0.0 if layernorm else np.sum(W * W)))
    return f_value(S, X_of(W, U, task.L, layernorm)) + reg


def risk_grad(task, W, U, lam: float, S: Sentences | None = None):
    """(R, ∂R/∂W, ∂R/∂U) for the network h (no LayerNorm)."""
    S = S or enumerate_sentences(task)
    Uh = U_hat(U, task.L)
    f, G = f_grad(S, Uh.T @ W)
    gW = Uh @ G + lam * W
    gUh = W @ G.T + lam * Uh
    gU = gUh.T.reshape(task.K, task.L * W.shape[0])
    return f + lam / 2 * (np.sum(W * W) + np.sum(U * U)), gW, gU


def type1_point(task, c: float, d: int, F=None):
    """W = cFP, Û = c√(n_w/(KL)) FZ (the set Ω_c^I of (64)/(93)), F equiangular d×n_c."""
    F = _frame(task.n_c, d) if F is None else F
    W = c * F @ task.P
    Uh = c * np.sqrt(task.n_w / (task.K * task.L)) * F @ task.Z_onehot
    return W, U_from_hat(Uh, task.L)


def type2_point(task, c: float, d: int, F=None, scales=None):
    """φ(W) = √d FP (any positive rescaling/shift of the columns), Û = cFZ, F mean-zero equiangular."""
    F = _frame(task.n_c, d, mean_zero=True) if F is None else F
    W = np.sqrt(d) * F @ task.P
    if scales is not None:  # φ is invariant under w ↦ a w + b 1 with a > 0
        W = W * scales[0][None, :] + scales[1][None, :]
    Uh = c * F @ task.Z_onehot
    return W, U_from_hat(Uh, task.L)


def type3_point(task, c: float, r: np.ndarray, d: int, F=None):
    """w_{(α,β)} = r_β f_α, u_{k,ℓ} = c f_{z_{kℓ}} (Theorem 2), F equiangular d×n_c."""
    F = _frame(task.n_c, d) if F is None else F
    W = F[:, task.word_concept] * np.asarray(r)[task.word_rank][None, :]
    Uh = c * F @ task.Z_onehot
    return W, U_from_hat(Uh, task.L)
