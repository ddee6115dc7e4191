"""Lemma B (i)–(iii), the properties of the latent set that the collapse proofs use, with θ_r and A_r recovered
as exact rationals (appendix B)."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .._budget import check_work
from .._validate import public, result_type
from ._common import _NC, _Z, _hamming, _latent, _onehot, _pair_budget

__all__ = ["LemmaBResult", "lemma_B_properties"]


@result_type
@dataclass
class LemmaBResult:
    """Result of :func:`lemma_B_properties` (Lemma B (i)–(iii), all in exact arithmetic).

    Attributes
    ----------
    holds : bool
        (i) and (ii) and (iii).
    i_holds : bool
        |S_r(k)| independent of k for every r ∈ [L].
    S_r : ndarray of int, shape (K, L+1)
        |S_r(k)| for r = 0..L.
    ii_holds : bool
        Σ_k Z_k = (K/n_c) 11ᵀ and ZZᵀ = (KL/n_c) I.
    column_sums : ndarray of int, shape (n_c, L)
        Σ_k Z_k (entry (α, ℓ) = |{k : z_{k,ℓ} = α}|).
    iii_holds : bool
        For every r with S_r ≠ ∅ there are θ_r > 0 and A_r ∈ R^{n_c×L} with
        Z_k − mean_{j∈S_r(k)} Z_j = θ_r Z_k + A_r for all k (vacuous for empty S_r).
    theta : list
        θ_r (Fraction) for r = 1..L (index r−1); None where S_r is empty or θ_r is not determined.
    A : list
        A_r as an n_c×L list of Fractions, or None (as ``theta``).
    messages : list of str
        Why a property fails (first few reasons).
    """

    holds: bool
    i_holds: bool
    S_r: np.ndarray
    ii_holds: bool
    column_sums: np.ndarray
    iii_holds: bool
    theta: list
    A: list
    messages: list

    def __bool__(self) -> bool:
        return self.holds


@public(Z=_Z, n_c=_NC, legacy_positional=("n_c",))
def lemma_B_properties(Z, *, n_c=None) -> LemmaBResult:
    """Check the three properties of Lemma B exactly and recover θ_r, A_r.

    Parameters
    ----------
    Z : Task or array_like of int, shape (K, L)
    n_c : int, optional
        Required when ``Z`` is an array.

    Returns
    -------
    LemmaBResult

    Notes
    -----
    Under Assumption A, Lemma B gives |S_r| = (K/n_c^L)·C(L,r)(n_c−1)^r (39), θ_r = n_c r/((n_c−1)L)
    and A_r = −r/((n_c−1)L)·11ᵀ. This function does not assume A: it tests (i)–(iii) directly, so
    it also recognises latent sets with K < n_c^L that satisfy Lemma B without Assumption A.
    (iii) is decided exactly: with s = |S_r| and M_k = Σ_{j∈S_r(k)} Z_j (integer), (iii) says
    M_k = a Z_k + B for a constant a = s(1−θ_r) and matrix B = −s A_r.
    """
    Z, n_c, L = _latent(Z, n_c)
    K = Z.shape[0]
    _pair_budget(Z, n_c, L, what="lemma_B_properties", per_pair_flops=L * (L * n_c + 2), per_pair_bytes=8)
    check_work("n_c", n_c, bytes=8 * n_c * n_c * 3 + 8 * K * L * n_c * 4, what="lemma_B_properties (ZZᵀ, n_c×n_c)")
    D = _hamming(Z)
    S = np.stack([(D == r).sum(1) for r in range(L + 1)], axis=1)
    msgs = []
    i_holds = bool(np.all(S[:, 1:] == S[:1, 1:]))
    if not i_holds:
        r = int(np.argwhere(np.any(S[:, 1:] != S[:1, 1:], axis=0))[0, 0]) + 1
        msgs.append(f"(i) fails: |S_{r}(k)| takes the values {sorted(set(S[:, r].tolist()))}")
    O = _onehot(Z, n_c)  # K×L×n_c
    colsum = O.sum(0).T  # n_c×L
    ii_a = bool(np.all(colsum * n_c == K))
    ZZt = np.einsum("kla,klb->ab", O, O)
    ii_b = bool(np.all(ZZt * n_c == K * L * np.eye(n_c, dtype=np.int64)))
    ii_holds = ii_a and ii_b
    if not ii_a:
        msgs.append(f"(ii) fails: Σ_k Z_k != (K/n_c) 11ᵀ (column counts {colsum.tolist()})")
    if ii_a and not ii_b:  # pragma: no cover - (37) implies ZZᵀ = (KL/n_c) I
        msgs.append("(ii) fails: ZZᵀ != (KL/n_c) I")
    thetas, As = [], []
    iii_holds = True
    Of = O.reshape(K, L * n_c)
    for r in range(1, L + 1):
        mask = (D == r).astype(np.int64)
        if not np.any(mask):
            thetas.append(None)
            As.append(None)
            continue
        if not i_holds and len(set(S[:, r].tolist())) > 1:
            iii_holds = False
            thetas.append(None)
            As.append(None)
            continue
        s = int(S[0, r])
        M = mask @ Of  # K×(L·n_c), M_k = Σ_{j∈S_r(k)} Z_j (entries (ℓ, α))
        ok, a, B = _affine_fit(M, Of)
        if not ok:
            iii_holds = False
            msgs.append(f"(iii) fails at r={r}: Σ_(j∈S_r(k)) Z_j is not a Z_k + B")
            thetas.append(None)
            As.append(None)
            continue
        if a is None:  # all Z_k equal on the support: θ_r undetermined (K = 1)
            thetas.append(None)
            As.append(None)
            continue
        theta = 1 - Fraction(a, 1) / s
        A_r = [[-Fraction(B[ell * n_c + al]) / s for ell in range(L)] for al in range(n_c)]
        if theta <= 0:
            iii_holds = False
            msgs.append(f"(iii) fails at r={r}: θ_r = {theta} is not > 0")
        thetas.append(theta)
        As.append(A_r)
    holds = i_holds and ii_holds and iii_holds
    return LemmaBResult(holds, i_holds, S, ii_holds, colsum, iii_holds, thetas, As, msgs)


def _affine_fit(M: np.ndarray, O: np.ndarray):
    """Exact test of M_k = a·O_k + B for all rows k (integer M, 0/1 O); returns (ok, a, B)."""
    K = M.shape[0]
    a = None
    for k in range(1, K):
        diffO = O[k] - O[0]
        nz = np.flatnonzero(diffO)
        if nz.size:
            i = nz[0]
            a = Fraction(int(M[k, i] - M[0, i]), int(diffO[i]))
            break
    if a is None:
        return bool(np.all(M == M[0])), None, None
    # B = M_0 − a O_0 must fit every row: (M_k − M_0)·den == a.num·(O_k − O_0)
    lhs = (M - M[0]) * a.denominator
    rhs = (O - O[0]) * a.numerator
    if not np.array_equal(lhs, rhs):
        return False, a, None
    B = [Fraction(int(M[0, i])) - a * int(O[0, i]) for i in range(M.shape[1])]
    return True, a, B
