"""Equiangular frames (equation (4), Definitions D and F of the appendix)."""

from __future__ import annotations

import numpy as np

from ._budget import check_work
from ._validate import Array, Bool, Int, Real, Seed, fail, public

__all__ = ["equiangular_frame", "equiangular_gram", "is_equiangular"]


@public(n_c=Int(min=2))
def equiangular_gram(n_c: int) -> np.ndarray:
    """The Gram matrix κI − 11ᵀ/(n_c−1) of n_c equiangular unit vectors (κ = n_c/(n_c−1)), equation (4)."""
    check_work("n_c", n_c, bytes=24 * n_c * n_c, what="equiangular_gram (an n_c×n_c matrix)")
    return (n_c * np.eye(n_c) - np.ones((n_c, n_c))) / (n_c - 1)


def simplex_coords(n_c: int) -> np.ndarray:
    """(n_c−1)×n_c coordinates of a centred regular simplex with unit vertices.

    Built from a Helmert basis of 1^⊥ in R^{n_c} so the Gram matrix is exact to rounding.
    """
    # rows of H are an orthonormal basis of 1^⊥ (Helmert): h_j ∝ (1,…,1,−j,0,…)
    H = np.zeros((n_c - 1, n_c))
    for j in range(1, n_c):
        H[j - 1, :j] = 1.0
        H[j - 1, j] = -float(j)
        H[j - 1] /= np.sqrt(j * (j + 1.0))
    # columns of H are the projections of e_α onto 1^⊥, each of norm √((n_c−1)/n_c)
    return H * np.sqrt(n_c / (n_c - 1.0))


def _orthonormal_columns(d: int, m: int, *, mean_zero: bool, rng) -> np.ndarray:
    """d×m matrix with orthonormal columns (orthogonal to 1_d when ``mean_zero``)."""
    if rng is None:
        if not mean_zero:
            return np.eye(d, m)
        # Helmert basis of 1_d^⊥ in R^d: deterministic and exact to rounding
        Q = np.zeros((d, m))
        for j in range(1, m + 1):
            Q[:j, j - 1] = 1.0
            Q[j, j - 1] = -float(j)
            Q[:, j - 1] /= np.sqrt(j * (j + 1.0))
        return Q
    G = rng.standard_normal((d, m))
    if mean_zero:
        G -= G.mean(axis=0, keepdims=True)
    Q, R = np.linalg.qr(G)
    return Q * np.sign(np.diag(R))  # Haar-distributed


@public(n_c=Int(min=2), d=Int(min=1), mean_zero=Bool(), seed=Seed(), legacy_positional=("mean_zero", "seed"))
def equiangular_frame(n_c: int, d: int, *, mean_zero: bool = False, seed=None) -> np.ndarray:
    """n_c equiangular unit vectors in R^d, as the columns of a d×n_c matrix F.

    Satisfies (4): ``F @ 1 = 0`` and ``F.T @ F = κI − 11ᵀ/(n_c−1)`` (unit norms, pairwise
    cosine −1/(n_c−1)); with ``mean_zero=True`` also ``1_dᵀ F = 0`` (Definition F).

    Parameters
    ----------
    n_c : int
        Number of vectors (≥ 2).
    d : int
        Ambient dimension; needs d ≥ n_c − 1, or d ≥ n_c when ``mean_zero``.
    mean_zero : bool
        Also make every vector orthogonal to 1_d (needed for LayerNorm outputs, Definition 2).
    seed : None, int or numpy Generator
        ``None`` gives a fixed deterministic frame; otherwise a Haar-random rotation of it.
    """
    need = n_c if mean_zero else n_c - 1
    if d < need:
        rule = "mean-zero equiangular frames need d >= n_c" if mean_zero else "equiangular frames need d >= n_c - 1"
        fail("d", d, f"{rule} = {need}")
    # S is (n_c−1)×n_c, Q is d×(n_c−1) (a random one: a QR of a d×(n_c−1) Gaussian), F is d×n_c
    check_work("d", d, bytes=8 * (3 * n_c * n_c + 4 * d * n_c), what=f"equiangular_frame(n_c={n_c}, d={d})")
    check_work(
        "n_c",
        n_c,
        seconds=(n_c * n_c + (d * n_c * n_c if seed is not None else 0)) // 10**9,
        what=f"equiangular_frame(n_c={n_c}, d={d})",
    )
    rng = None if seed is None else (seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed))
    S = simplex_coords(n_c)
    Q = _orthonormal_columns(d, n_c - 1, mean_zero=mean_zero, rng=rng)
    F = Q @ S
    return F


@public(F=Array(finite=False), mean_zero=Bool(), atol=Real(lo=0))
def is_equiangular(F, *, mean_zero: bool = False, atol: float = 1e-12) -> bool:
    """True when the columns of F satisfy (4) (and 1ᵀF = 0 if ``mean_zero``) within ``atol``.

    Anything else (not 2-D, fewer than two columns, non-finite entries) is simply not equiangular.
    """
    if F.ndim != 2 or F.shape[1] < 2 or not np.all(np.isfinite(F)):
        return False
    n_c = F.shape[1]
    with np.errstate(over="ignore", invalid="ignore"):  # huge entries: F.T @ F overflows, then not equiangular
        return _is_equiangular(F, n_c, mean_zero, atol)


def _is_equiangular(F, n_c, mean_zero, atol):
    check_work(
        "F",
        F,
        bytes=24 * n_c * n_c,
        seconds=F.shape[0] * n_c * n_c / 1e9,
        what="is_equiangular (the n_c×n_c Gram matrix)",
    )
    ok = np.allclose(F.T @ F, equiangular_gram(n_c), rtol=0, atol=atol) and np.allclose(F.sum(1), 0, atol=atol)
    if mean_zero:
        ok = ok and np.allclose(F.sum(0), 0, atol=atol)
    return bool(ok)
