"""Expected margins (Definition A averaged over D_{z_k}) in closed form."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._budget import check_work
from .._validate import Array, Bool, Instance, Real, fail, public, result_type
from ..network import check_weights, phi
from ..task import Task

__all__ = ["ExpectedMargins", "expected_margins"]


@result_type
@dataclass(frozen=True)
class ExpectedMargins:
    """Per-class expected scores and margins.

    Attributes
    ----------
    scores : ndarray, shape (K, K)
        ȳ[k, j] = E_{x∼D_{z_k}}[y_j(x)] = ⟨Û_j, V Qᵀ Z_k⟩_F (V = W, or φ(W) for h*).
    matrix : ndarray, shape (K, K)
        M̄[k, j] = E_{x∼D_{z_k}}[𝔐(x, j)] = ȳ[k, k] − ȳ[k, j] (Definition A; 0 on the diagonal).
    by_distance : ndarray, shape (L+1,)
        Average of M̄[k, j] over the pairs with dist(z_k, z_j) = r — the averaged margin 𝔐(r)
        of (53); NaN where no pair is at distance r (entry 0 is always 0).
    pairs_at_distance : ndarray of int, shape (L+1,)
        Number of ordered pairs (k, j) at each distance.
    alignment : float
        ⟨Û, V QᵀZ⟩_F = Σ_k ȳ[k, k], the quantity in Theorem D and Lemma E.
    """

    scores: np.ndarray
    matrix: np.ndarray
    by_distance: np.ndarray
    pairs_at_distance: np.ndarray
    alignment: float


@public(
    task=Instance(Task),
    W=Array(ndim=2),
    U=Array(ndim=2),
    layernorm=Bool(),
    eps=Real(lo=0.0),
    legacy_positional=("layernorm",),
)
def expected_margins(task: Task, W, U, *, layernorm: bool = False, eps: float = 0.0) -> ExpectedMargins:
    """Expected margins E_{x∼D_{z_k}} 𝔐_{W,U}(x, j) of Definition A, exactly (no enumeration).

    Scores are linear in the one-hot sentence, so E_{D_{z_k}}[W ζ(x)] = W QᵀZ_k (63) and the
    expected margin is ⟨Û_k − Û_j, W QᵀZ_k⟩_F. Cost O(K·L·d·n_c + K²·L).

    Parameters
    ----------
    task : Task
    W : array_like, shape (d, n_w)
    U : array_like, shape (K, L·d)
    layernorm : bool
        Margins of h* (φ(W) in place of W).
    eps : float
        LayerNorm ε.

    Returns
    -------
    ExpectedMargins

    Raises
    ------
    FCTheoryError
        Invalid input, W/U shapes not those of the task, K×K matrices over the memory budget, or
        scores that overflow float64.
    """
    d = check_weights(task, W, U)
    K, L = task.K, task.L
    if layernorm and eps == 0.0 and d == 1:
        fail("W", W, "LayerNorm with eps=0 needs d >= 2 rows (φ of a scalar is undefined)")
    # the K×K scores, margins and Hamming distances (and the K×L×n_c table) are held at once
    check_work(
        "task",
        task,
        bytes=8 * (4 * K * K + K * L * (d + task.n_c)),
        items=K * K,
        what="expected_margins (K×K matrices)",
    )
    V = phi(W, eps=eps) if layernorm else W
    with np.errstate(over="ignore", invalid="ignore"):
        Vbar = V @ task.Q.T  # d × n_c: column α is Σ_β μ_β v_{(α,β)}
        C = np.einsum("jld,dc->jlc", U.reshape(K, L, d), Vbar)  # ⟨u_{j,ℓ}, v̄_c⟩
        # ȳ[k, j] = Σ_ℓ C[j, ℓ, z_{k,ℓ}]
        ybar = C[:, np.arange(L)[None, :], task.Z].sum(axis=-1).T
        M = np.diag(ybar)[:, None] - ybar
    if not (np.all(np.isfinite(ybar)) and np.all(np.isfinite(M))):
        big = "U" if np.max(np.abs(U)) > np.max(np.abs(V)) else "W"
        fail(big, U if big == "U" else W, "the expected scores overflow float64; use smaller weights")
    H = task.hamming()
    counts = np.bincount(H.ravel(), minlength=L + 1)
    sums = np.bincount(H.ravel(), weights=M.ravel(), minlength=L + 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        by_r = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    return ExpectedMargins(
        scores=ybar, matrix=M, by_distance=by_r, pairs_at_distance=counts, alignment=float(np.trace(ybar))
    )
