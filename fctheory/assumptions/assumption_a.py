"""Assumption A (35), the latent-symmetry counts, checked in exact integer arithmetic (appendix B)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from math import comb

import numpy as np

from .._budget import check_work
from .._validate import Anything, fail, public, result_type
from ._common import _NC, _Z, _hamming, _latent, _onehot, _pair_budget

__all__ = ["AssumptionAViolation", "AssumptionAResult", "assumption_A_counts", "check_assumption_A"]


@public(Z=_Z, n_c=_NC, legacy_positional=("n_c",))
def assumption_A_counts(Z, *, n_c=None) -> np.ndarray:
    """Counts N[k, r, ℓ, α] = |{j : dist(z_j, z_k) = r and z_{j,ℓ} = α}| for r = 0..L (exact int64).

    The left-hand side of (35); r = 0 is included for completeness (it counts z_k itself and
    any duplicates).
    """
    Z, n_c, L = _latent(Z, n_c)
    K = Z.shape[0]
    # the result alone holds K·(L+1)·L·n_c int64 counts; n_c may be a Python int beyond the float range,
    # so its size is compared in exact integers before any float estimate below is formed
    entries = K * (L + 1) * L * n_c
    if entries >= 2**60:
        fail(
            "n_c",
            n_c,
            f"is too large: the counts would fill a K×(L+1)×L×n_c array of about "
            f"10^{math.log10(entries):.4g} entries (the limit is 2**60)",
        )
    check_work("n_c", n_c, bytes=8 * entries, what="the counts of (35) (a K×(L+1)×L×n_c int64 array)")
    _pair_budget(Z, n_c, L, what="the counts of (35)", per_pair_flops=(L + 1) * (L * n_c + 1))
    check_work("Z", f"{K}×{L} latent variables", bytes=16 * K * (L + 1) * L * n_c, what="the counts of (35)")
    D = _hamming(Z)
    O = _onehot(Z, n_c).reshape(K, L * n_c)
    out = np.empty((K, L + 1, L * n_c), dtype=np.int64)
    for r in range(L + 1):
        out[:, r, :] = (D == r).astype(np.int64) @ O
    return out.reshape(K, L + 1, L, n_c)


@result_type
@dataclass(frozen=True)
class AssumptionAViolation:
    """One violated identity of (35): the count at (k, r, ℓ, α) and the value (35) requires."""

    k: int
    r: int
    ell: int
    alpha: int
    count: int
    expected: Fraction

    def __str__(self) -> str:
        return f"(k={self.k}, r={self.r}, ell={self.ell}, alpha={self.alpha}): count {self.count} != {self.expected}"


@result_type
@dataclass
class AssumptionAResult:
    """Result of :func:`check_assumption_A`.

    Attributes
    ----------
    holds : bool
        True when every identity (35) holds exactly.
    violations : list of AssumptionAViolation
        Every violated (k, r, ℓ, α), in lexicographic order (empty when ``holds``).
    n_identities : int
        Number of identities checked, K·L·L·n_c.
    integral : bool
        Whether all the right-hand sides of (35) are integers; when False (e.g. 1 ≤ K < n_c^L,
        where the r = 1, z_{k,ℓ} ≠ α value is K/n_c^L ∉ ℤ) Assumption A cannot hold for any latent set.
    counts : ndarray, shape (K, L+1, L, n_c)
        The exact counts (see :func:`assumption_A_counts`).
    """

    holds: bool
    violations: list
    n_identities: int
    integral: bool
    counts: np.ndarray = field(repr=False)

    def __bool__(self) -> bool:
        return self.holds


def _expected_35(K: int, n_c: int, L: int, r: int, same: bool) -> Fraction:
    """Right-hand side of (35) as an exact rational."""
    N = n_c**L
    if same:
        return Fraction(K * comb(L - 1, r) * (n_c - 1) ** r, N)
    return Fraction(K * comb(L - 1, r - 1) * (n_c - 1) ** (r - 1), N)


@public(
    Z=_Z,
    n_c=_NC,
    expected=Anything("callable (K, n_c, L, r, same) -> Fraction; proofs_check self-test hook").or_none(),
    legacy_positional=("n_c",),
)
def check_assumption_A(Z, *, n_c=None, expected=None) -> AssumptionAResult:
    """Check Assumption A (35) exactly, reporting every violated (k, r, ℓ, α).

    Parameters
    ----------
    Z : Task or array_like of int, shape (K, L)
        Latent variables z_1, …, z_K (0-based concepts).
    n_c : int, optional
        Number of concepts; required when ``Z`` is an array.
    expected : callable, optional
        ``expected(K, n_c, L, r, same) -> Fraction`` replacing the right-hand side of (35); used by
        ``proofs_check --self-test`` to run the checker against deliberately wrong statements.

    Returns
    -------
    AssumptionAResult

    Notes
    -----
    (35): for all k, r ∈ [L], ℓ, α,
    |{j : dist(z_j, z_k) = r, z_{j,ℓ} = α}| = (K/n_c^L)·C(L−1, r)(n_c−1)^r if z_{k,ℓ} = α and
    (K/n_c^L)·C(L−1, r−1)(n_c−1)^{r−1} otherwise. Counts are integers, and the r = 1, z_{k,ℓ} ≠ α
    right-hand side is K/n_c^L, so Assumption A forces n_c^L | K: no latent set with 1 ≤ K < n_c^L
    satisfies it (``integral`` is False then).
    """
    Z, n_c, L = _latent(Z, n_c)
    K = Z.shape[0]
    if expected is not None and not callable(expected):
        fail("expected", expected, "must be a callable (K, n_c, L, r, same) -> Fraction")
    # the violations list may hold one Python object (~300 bytes) per identity
    check_work(
        "Z", f"{K}×{L} latent variables", bytes=300 * K * L * L * n_c, what="check_assumption_A (the violations list)"
    )
    rhs = expected if expected is not None else _expected_35
    counts = assumption_A_counts(Z, n_c=n_c)
    same = _onehot(Z, n_c).astype(bool)  # same[k, ℓ, α] = (z_{k,ℓ} == α)
    violations = []
    integral = True
    for r in range(1, L + 1):
        e_same, e_diff = rhs(K, n_c, L, r, True), rhs(K, n_c, L, r, False)
        integral &= Fraction(e_same).denominator == 1 and Fraction(e_diff).denominator == 1
        # exact comparison count·den == num, in Python ints when int64 could overflow
        C = counts[:, r]
        for e, mask in ((Fraction(e_same), same), (Fraction(e_diff), ~same)):
            if e.denominator == 1 and abs(e.numerator) < 2**62:
                bad = mask & (C != e.numerator)
            else:
                bad = mask & (C.astype(object) * e.denominator != e.numerator).astype(bool)
            for k, ell, alpha in np.argwhere(bad):
                violations.append(AssumptionAViolation(int(k), r, int(ell), int(alpha), int(C[k, ell, alpha]), e))
    violations.sort(key=lambda v: (v.k, v.r, v.ell, v.alpha))
    return AssumptionAResult(not violations, violations, K * L * L * n_c, bool(integral), counts)
