"""Checkers for the paper's assumptions on the latent variables (appendix B).

* :func:`check_assumption_A` — the latent-symmetry counts (35), in exact integer arithmetic,
  reporting every violated quadruple (k, r, ℓ, α);
* :func:`lemma_B_properties` — the three properties (i)–(iii) of Lemma B that the collapse proofs
  actually use, with θ_r and A_r recovered as exact rationals;
* :func:`check_assumption_B` — the linear system (44) over symmetric matrices, solved exactly, and a
  semidefinite certificate (cvxpy) of a PSD solution outside 𝒜 = span{I, 11ᵀ} when one exists;
* :func:`search_assumption_A` / :func:`search_lemma_B` — the existence question the paper leaves open:
  for which small (n_c, L, K < n_c^L) do latent sets satisfying Assumption A (resp. Lemma B) exist?

Every function accepts a :class:`~fctheory.Task` or a K×L integer array of latent variables
(then ``n_c`` is needed). Latent variables are rows z_k with 0-based concepts, as in ``Task.Z``.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from math import comb

import numpy as np

from ._budget import check_work, get_budget
from ._validate import Anything, Array, Bool, Choice, Int, Kind, fail, public, result_type
from .task import Task


class _LatentKind(Kind):
    """A :class:`~fctheory.Task` or a K×L integer array of latent variables (0-based concepts)."""

    _array = Array(ndim=2, integer=True, min=0, max=2**62)

    def __call__(self, name, value):
        if isinstance(value, Task):
            return value
        return self._array(name, value)


class _SolverKind(Kind):
    """None (cvxpy's default) or the name of an installed cvxpy solver."""

    optional = True

    def __call__(self, name, value):
        if value is None:
            return None
        if not isinstance(value, str):
            fail(name, value, f"must be None or a cvxpy solver name, got {type(value).__name__}")
        import cvxpy as cp  # noqa: PLC0415 - heavy (~1 s): loaded only when a solver is named

        names = cp.installed_solvers()
        if value.upper() not in names:
            fail(name, value, f"must be one of the installed cvxpy solvers {names}")
        return value.upper()


_Z = _LatentKind()
_NC = Int(min=2).or_none()

__all__ = [
    "AssumptionAViolation",
    "AssumptionAResult",
    "LemmaBResult",
    "AssumptionBResult",
    "ExistenceResult",
    "check_assumption_A",
    "lemma_B_properties",
    "check_assumption_B",
    "search_assumption_A",
    "search_lemma_B",
    "assumption_A_counts",
]


# ----------------------------------------------------------------------------------------- helpers
def _latent(Z, n_c=None):
    """(Z, n_c, L) from a Task or a K×L integer array; validated (distinct rows not required)."""
    if isinstance(Z, Task):
        if n_c is not None and n_c != Z.n_c:
            fail("n_c", n_c, f"must match the task's n_c = {Z.n_c}")
        return np.asarray(Z.Z, dtype=np.int64), Z.n_c, Z.L
    if n_c is None:
        fail("n_c", n_c, "is required when Z is an array (pass a Task or give n_c)")
    arr = _Z("Z", Z)
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        fail("Z", Z, f"must have shape (K, L) with K, L >= 1, got {arr.shape}")
    if arr.max() >= n_c:
        fail("Z", Z, f"entries must be concept indices in [0, n_c-1] = [0, {n_c - 1}]")
    return arr.astype(np.int64), n_c, int(arr.shape[1])


def _pair_budget(Z, n_c, L, *, what: str, per_pair_flops: float, per_pair_bytes: float = 0.0) -> None:
    """Refuse a K×K pairwise computation over the budget (K² (L + ...) bytes, K²·flops seconds)."""
    K = Z.shape[0]
    check_work(
        "Z",
        f"{K}×{L} latent variables",
        items=K * K,
        bytes=K * K * (L + 24 + per_pair_bytes) + 8 * K * L * n_c * 4,
        seconds=K * K * per_pair_flops // (2 * 10**8),
        what=what,
    )


def _hamming(Z):
    return (Z[:, None, :] != Z[None, :, :]).sum(-1)


def _onehot(Z, n_c):
    K, L = Z.shape
    O = np.zeros((K, L, n_c), dtype=np.int64)
    O[np.arange(K)[:, None], np.arange(L)[None, :], Z] = 1
    return O


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


# ----------------------------------------------------------------------------------------- Assumption A
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


# ----------------------------------------------------------------------------------------- Lemma B
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


# ----------------------------------------------------------------------------------------- Assumption B
@result_type
@dataclass
class AssumptionBResult:
    """Result of :func:`check_assumption_B`.

    Attributes
    ----------
    holds : bool
        True when every PSD solution of (44) lies in 𝒜 = {aI + b11ᵀ}.
    dim : int
        Dimension of the solution space of (44) over symmetric n_c×n_c matrices (always ≥ 2, since
        𝒜 solves (44): ⟨aI + b11ᵀ, Γ^{(j,k)}⟩ = a·dist(z_j, z_k)).
    basis : list of ndarray
        A basis of that solution space (exact rationals converted to float64), 𝒜's part first.
    n_equations : int
        Number of quadruplets (j, k, j', k') giving non-trivial equations (pairs per distance class
        minus one, summed over classes).
    certificate : ndarray or None
        When ``holds`` is False: a PSD solution of (44) outside 𝒜, found by the SDP
        (``sdp_status`` says how), verified by its eigenvalues, its residual and its distance to 𝒜.
    certificate_min_eig, certificate_residual, certificate_distance : float or None
        Checks of the certificate (None when there is none).
    analytic_certificate : ndarray or None
        I + B/(2‖B‖₂) for B ∈ (solution space) ⊥ 𝒜: positive definite by construction. Its existence
        shows that Assumption B fails exactly when ``dim`` > 2 (I is interior to the PSD cone).
    sdp_status : str
        cvxpy status of the SDP ("not needed" when dim = 2).
    """

    holds: bool
    dim: int
    basis: list
    n_equations: int
    certificate: np.ndarray | None
    certificate_min_eig: float | None
    certificate_residual: float | None
    certificate_distance: float | None
    analytic_certificate: np.ndarray | None
    sdp_status: str

    def __bool__(self) -> bool:
        return self.holds


def _sym_index(n):
    return [(a, b) for a in range(n) for b in range(a, n)]


def _gamma_vectors(O, rows, n_c):
    """v(Γ^{(j,k)}) for j in ``rows`` and all k, in the symmetric basis: ⟨A, Γ⟩ = v(Γ)·a for
    A = Σ a_(αβ) E^sym_(αβ). ``O`` is the K×L×n_c one-hot array."""
    Oj = O[rows]
    G = np.einsum("jla,jlb->jab", Oj, Oj)[:, None] - np.einsum("jla,klb->jkab", Oj, O)  # Z_j Z_jᵀ − Z_j Z_kᵀ
    cols = []
    for a, b in _sym_index(n_c):
        cols.append(G[..., a, b] if a == b else G[..., a, b] + G[..., b, a])
    return np.stack(cols, axis=-1)  # |rows|×K×m


def _assumption_B_gram(Z, n_c, block: int = 256):
    """Integer Gram matrix Σ (v_p − v_ref)(v_p − v_ref)ᵀ over all ordered pairs p of each distance class.

    Accumulated in blocks of rows j (memory O(block·K·n_c²)) from the per-class sums Σ v vᵀ, Σ v and counts:
    Σ (v − v₀)(v − v₀)ᵀ = Σ vvᵀ − s v₀ᵀ − v₀ sᵀ + N v₀v₀ᵀ, with v₀ the class's first pair.
    """
    K, L = Z.shape
    D = _hamming(Z)
    O = _onehot(Z, n_c)
    m = n_c * (n_c + 1) // 2
    VV = np.zeros((L + 1, m, m), dtype=np.int64)
    Sv = np.zeros((L + 1, m), dtype=np.int64)
    N = np.zeros(L + 1, dtype=np.int64)
    v0 = [None] * (L + 1)
    for start in range(0, K, block):
        rows = np.arange(start, min(K, start + block))
        V = _gamma_vectors(O, rows, n_c)
        Dr = D[rows]
        for r in range(1, L + 1):
            mask = Dr == r
            if not mask.any():
                continue
            Vr = V[mask]
            if v0[r] is None:
                v0[r] = Vr[0].copy()
            VV[r] += Vr.T @ Vr
            Sv[r] += Vr.sum(0)
            N[r] += len(Vr)
    Gm = np.zeros((m, m), dtype=object)
    n_eq = 0
    for r in range(1, L + 1):
        if N[r] < 2:
            continue
        a = v0[r].astype(object)
        G = VV[r].astype(object) - np.outer(Sv[r].astype(object), a) - np.outer(a, Sv[r].astype(object))
        Gm = Gm + G + int(N[r]) * np.outer(a, a)
        n_eq += int(N[r]) - 1
    return Gm, n_eq, m


@public(
    Z=_Z,
    n_c=_NC,
    sdp=Bool(),
    solver=_SolverKind(),
    A_space=Anything("list of n_c×n_c arrays; proofs_check self-test hook").or_none(),
    legacy_positional=("n_c",),
)
def check_assumption_B(Z, *, n_c=None, sdp: bool = True, solver: str | None = None, A_space=None) -> AssumptionBResult:
    """Check Assumption B: solve (44) exactly; if its solutions exceed 𝒜, certify with an SDP.

    Parameters
    ----------
    Z : Task or array_like of int, shape (K, L)
    n_c : int, optional
        Required when ``Z`` is an array.
    sdp : bool
        Solve the semidefinite program (cvxpy) for a certificate when the solution space is larger
        than 𝒜; with ``False`` only the analytic certificate is returned.
    solver : str, optional
        cvxpy solver name (default: cvxpy's choice, normally Clarabel).
    A_space : list of ndarray, optional
        Replaces 𝒜's basis {I, 11ᵀ} (for ``proofs_check --self-test`` only).

    Returns
    -------
    AssumptionBResult

    Notes
    -----
    (44) is linear in A: ⟨A, Γ^{(j,k)} − Γ^{(j',k')}⟩ = 0 whenever dist(z_j,z_k) = dist(z_j',z_k'),
    Γ^{(j,k)} = Z_j(Z_j − Z_k)ᵀ. It is solved in exact integer arithmetic (sympy null space of the
    Gram matrix of the equations). The SDP maximises ⟨A, B⟩ over PSD solutions with tr A = n_c, where
    B spans the solution space's component orthogonal to 𝒜; a positive optimum certifies a PSD
    solution outside 𝒜. Since I ∈ 𝒜 is interior to the PSD cone, such a solution exists iff the
    solution space is larger than 𝒜 (``analytic_certificate``); the SDP result is an independent check.
    """
    Z, n_c, L = _latent(Z, n_c)
    K = Z.shape[0]
    _check_assumption_B_work(K, L, n_c, sdp)
    A_space = _checked_A_space(A_space, n_c)
    Gm, n_eq, m = _assumption_B_gram(Z, n_c)
    idx = _sym_index(n_c)
    basis_null = _null_space(Gm, idx, n_c)
    dim = len(basis_null)
    calA = A_space if A_space is not None else [np.eye(n_c), np.ones((n_c, n_c))]
    # orthonormal basis of 𝒜 (Frobenius) and the part of the solution space orthogonal to it
    Qa = np.linalg.qr(np.stack([a.ravel() for a in calA], 1))[0]
    if dim:
        Nm = np.stack([b.ravel() for b in basis_null], 1)
        R = Nm - Qa @ (Qa.T @ Nm)
        U_, s_, _ = np.linalg.svd(R, full_matrices=False)
        extra = [U_[:, i].reshape(n_c, n_c) for i in range(len(s_)) if s_[i] > 1e-9 * max(1.0, s_[0])]
    else:
        extra = []
    eq_matrix = _equation_rows(Gm, idx, n_c)
    if not extra:
        return AssumptionBResult(True, dim, basis_null, n_eq, None, None, None, None, None, "not needed")
    Bx = 0.5 * (extra[0] + extra[0].T)
    analytic = np.eye(n_c) + Bx / (2 * np.linalg.norm(Bx, 2))
    cert, status = None, "skipped"
    if sdp:
        cert, status = _sdp_certificate(basis_null, extra, n_c, solver)
    use = cert if cert is not None else analytic

    def resid(A):
        a = np.array([A[i, j] for i, j in idx])
        return float(np.max(np.abs(eq_matrix @ a))) if eq_matrix.size else 0.0

    dist = float(np.linalg.norm(use.ravel() - Qa @ (Qa.T @ use.ravel())))
    return AssumptionBResult(
        False, dim, basis_null, n_eq, use, float(np.linalg.eigvalsh(use).min()), resid(use), dist, analytic, status
    )


def _check_assumption_B_work(K: int, L: int, n_c: int, sdp: bool) -> None:
    """The budget of :func:`check_assumption_B`, checked before any work."""
    m = n_c * (n_c + 1) // 2
    # the Gram accumulation: blocks of 256 rows × K × n_c² int64, K²·m² flops
    check_work(
        "Z",
        f"{K}×{L} latent variables",
        bytes=8 * min(K, 256) * K * (n_c * n_c + 2 * m) * 2 + 8 * (L + 1) * m * m,
        seconds=K * K * (m * m + L * n_c * n_c) // (2 * 10**8),
        what="check_assumption_B (the equations (44))",
    )
    # sympy's exact null space of the m×m Gram matrix costs ~m³ big-rational operations
    check_work(
        "n_c",
        n_c,
        seconds=m**3 // 50_000 + (m // 20 if sdp else 0),
        what=f"check_assumption_B (exact null space, {m}×{m})",
    )


def _checked_A_space(A_space, n_c: int):
    """``A_space`` as a list of finite n_c×n_c float arrays (None stays None)."""
    if A_space is None:
        return None
    try:
        A_space = [np.asarray(a, dtype=np.float64) for a in A_space]
    except (TypeError, ValueError):
        fail("A_space", A_space, "must be a list of n_c×n_c real arrays")
    if not A_space or any(a.shape != (n_c, n_c) or not np.all(np.isfinite(a)) for a in A_space):
        fail("A_space", A_space, f"must be a non-empty list of finite {n_c}×{n_c} arrays")
    return A_space


def _null_space(Gm, idx, n_c: int) -> list:
    """Exact (sympy) null space of the Gram matrix of (44), as symmetric n_c×n_c matrices."""
    import sympy as sp  # noqa: PLC0415 - heavy (~0.4 s): loaded only when Assumption B is checked

    basis = []
    for vec in sp.Matrix(Gm.tolist()).nullspace():
        A = np.zeros((n_c, n_c))
        for t, (a, b) in enumerate(idx):
            A[a, b] = A[b, a] = float(vec[t])
        basis.append(A)
    return basis


def _equation_rows(Gm, idx, n_c):
    """Float rows spanning the equations (from the Gram matrix), scaled to unit norm."""
    G = np.array(Gm.tolist(), dtype=float) if Gm.size else np.zeros((len(idx), len(idx)))
    w, V = np.linalg.eigh(G)
    keep = w > 1e-9 * max(1.0, w.max(initial=0.0))
    return V[:, keep].T


def _sdp_certificate(basis_null, extra, n_c, solver):
    import cvxpy as cp  # noqa: PLC0415 - heavy (~1 s): loaded only for the SDP certificate

    t = cp.Variable(len(basis_null))
    A = sum(t[i] * basis_null[i] for i in range(len(basis_null)))
    Bx = 0.5 * (extra[0] + extra[0].T)
    X = cp.Variable((n_c, n_c), symmetric=True)
    s = cp.Variable()
    # ⟨X, B⟩ = 1 keeps X off 𝒜 (B ⊥ 𝒜); maximising λ_min(X) ≥ s keeps the certificate strictly
    # inside the PSD cone, so solver tolerances cannot make it slightly indefinite
    cons = [X == A, X - s * np.eye(n_c) >> 0, cp.sum(cp.multiply(Bx, X)) == 1, cp.trace(X) == n_c]
    prob = cp.Problem(cp.Maximize(s), cons)
    try:
        prob.solve(solver=solver)
    except cp.error.SolverError as exc:  # pragma: no cover - depends on installed solvers
        return None, f"solver error: {exc}"
    if prob.status not in ("optimal", "optimal_inaccurate") or X.value is None or prob.value <= 1e-9:
        return None, str(prob.status)
    # rebuild from the coefficients: exactly in the (exact) solution space, whatever the solver's
    # equality tolerance; the eigenvalue margin s absorbs the difference
    Xv = sum(float(t.value[i]) * basis_null[i] for i in range(len(basis_null)))
    return Xv, str(prob.status)


# ----------------------------------------------------------------------------------------- existence
@result_type
@dataclass
class ExistenceResult:
    """Result of :func:`search_assumption_A` / :func:`search_lemma_B` for one (n_c, L).

    Attributes
    ----------
    n_c, L : int
    property : str
        "assumption A" or "lemma B".
    method : str
        "exhaustive" (every subset of 𝒵 of each size) or "integrality" (the divisibility argument).
    counts : dict
        K → number of latent sets (subsets of 𝒵 of size K) with the property.
    examples : dict
        K → one such latent set (K×L int array), for every K with counts[K] > 0.
    n_sets : int
        Number of subsets examined.
    """

    n_c: int
    L: int
    property: str
    method: str
    counts: dict
    examples: dict
    n_sets: int

    @public()
    def sizes(self):
        """The K < n_c^L for which a latent set with the property exists."""
        return sorted(k for k, v in self.counts.items() if v and k < self.n_c**self.L)


_MAX_EXHAUSTIVE = 2**16


def _all_latent(n_c, L):
    return np.array(list(itertools.product(range(n_c), repeat=L)), dtype=np.int64)


def _subsets_balanced(n_c, L, K, with_origin: bool = False, deadline=None):
    """Subsets of 𝒵 of size K, as index tuples, pruned by (37) (needed by A and by Lemma B(ii)).

    With ``with_origin`` only the subsets containing z = (0, …, 0) (index 0) are generated.
    """
    allz = _all_latent(n_c, L)
    N = len(allz)
    if K % n_c:
        return
    target = K // n_c
    # depth-first search keeping per-(ℓ, α) counts ≤ target
    cnt = np.zeros((L, n_c), dtype=np.int64)
    chosen = []
    pos = np.arange(L)
    if with_origin:
        chosen.append(0)
        cnt[pos, allz[0]] += 1

    def rec(start):
        if deadline is not None:
            deadline()
        if len(chosen) == K:
            yield tuple(chosen)
            return
        for i in range(start, N - (K - len(chosen)) + 1):
            z = allz[i]
            if np.any(cnt[pos, z] >= target):
                continue
            cnt[pos, z] += 1
            chosen.append(i)
            yield from rec(i + 1)
            chosen.pop()
            cnt[pos, z] -= 1

    yield from rec(1 if with_origin else 0)


class _Deadline:
    """The time budget of an exhaustive search, checked as it runs (its size is only bounded loosely
    up front): past ``max_seconds`` the search stops with the project error and the reason."""

    def __init__(self, name, value, what):
        self._clock = time.perf_counter
        self.t0 = self._clock()
        self.limit = get_budget().max_seconds
        self.name, self.value, self.what = name, value, what
        self.n = 0

    def tick(self, n_sets):
        self.n += 1
        if self.n % 64 == 0 and self._clock() - self.t0 > self.limit:
            fail(
                self.name,
                self.value,
                f"{self.what} stopped after {self._clock() - self.t0:.3g} s with {n_sets} sets examined: "
                f"over the budget max_seconds={self.limit:.3g} (give one K, or raise it with "
                "fctheory.set_budget(max_seconds=...))",
            )


def _search(n_c, L, prop, test, Ks, with_origin=False, deadline=None):
    allz = _all_latent(n_c, L)
    counts, examples, n_sets = {}, {}, 0
    for K in Ks:
        c = 0
        for sub in _subsets_balanced(n_c, L, K, with_origin, deadline=lambda: deadline.tick(n_sets)):
            n_sets += 1
            Zs = allz[list(sub)]
            if test(Zs):
                c += 1
                examples.setdefault(K, Zs)
        counts[K] = c
    return ExistenceResult(
        n_c, L, prop, "exhaustive (sets containing 0^L)" if with_origin else "exhaustive", counts, examples, n_sets
    )


def _check_search_args(n_c, L, K, limit):
    """Sizes checked in logs before n_c**L is formed (L may be huge)."""
    if L > 62 or L * math.log2(n_c) > 62:
        fail("L", L, f"n_c**L = {n_c}**{L} is far too many latent variables (limit n_c**L <= {limit})")
    N = n_c**L
    if K is not None and K > N:
        fail("K", K, f"must be <= n_c**L = {N}")
    return N, (list(range(1, N + 1)) if K is None else [K])


@public(
    n_c=Int(min=2),
    L=Int(min=1),
    K=Int(min=1).or_none(),
    method=Choice("exhaustive", "integrality"),
    legacy_positional=("n_c", "L", "K"),
)
def search_assumption_A(*, n_c: int, L: int, K: int | None = None, method: str = "exhaustive") -> ExistenceResult:
    """For which K ≤ n_c^L do latent sets of K distinct z ∈ 𝒵 satisfy Assumption A exactly?

    Parameters
    ----------
    n_c, L : int
    K : int, optional
        One size to examine (default: every K = 1..n_c^L).
    method : {"exhaustive", "integrality"}
        "exhaustive" runs :func:`check_assumption_A` on every subset of 𝒵 of size K that satisfies
        (37) (a consequence of A; n_c^L ≤ 16 only); "integrality" applies the divisibility
        argument: (35) at r = 1, z_{k,ℓ} ≠ α demands the integer K/n_c^L, so only
        K = n_c^L can work, and there 𝒵 itself is the only subset (it satisfies A by Lemma C's
        counting). With K omitted it reports every K = 1..n_c^L, so n_c^L is limited by the
        budget's ``max_items`` (and the example 𝒵 by ``max_bytes``).

    Returns
    -------
    ExistenceResult

    Raises
    ------
    FCTheoryError
        On invalid input, n_c^L > 16 for the exhaustive method, or a request over the budget
        (the exhaustive search also stops when it runs past ``max_seconds``).
    """
    if method == "integrality":
        N, _ = _check_search_args(n_c, L, K, "2**62")
        if K is None:
            check_work(
                "L",
                L,
                items=N,
                bytes=200 * N,
                what=f"search_assumption_A(method='integrality') over all K <= n_c**L = {N}",
            )
        if K is None or K == N:
            check_work("L", L, bytes=8 * N * (L + 1) * 4, what="the example latent set 𝒵 (n_c**L × L)")
        Ks = list(range(1, N + 1)) if K is None else [K]
        counts = {k: int(k % N == 0) for k in Ks}
        ex = {N: _all_latent(n_c, L)} if N in Ks else {}
        return ExistenceResult(n_c, L, "assumption A", "integrality", counts, ex, 0)
    N, Ks = _check_search_args(n_c, L, K, 16)
    if N > 16:
        fail("L", L, f"exhaustive search is limited to n_c**L <= 16, got {N} (use method='integrality')")
    return _search(
        n_c,
        L,
        "assumption A",
        lambda Zs: check_assumption_A(Zs, n_c=n_c).holds,
        Ks,
        deadline=_Deadline("K" if K is not None else "L", K if K is not None else L, "search_assumption_A"),
    )


@public(n_c=Int(min=2), L=Int(min=1), K=Int(min=1).or_none(), with_origin=Bool(), legacy_positional=("n_c", "L", "K"))
def search_lemma_B(*, n_c: int, L: int, K: int | None = None, with_origin: bool = False) -> ExistenceResult:
    """Exhaustively find the latent sets (subsets of 𝒵) satisfying Lemma B (i)–(iii).

    The collapse proofs only use Lemma B, so these sets (which exist for some K < n_c^L, unlike
    Assumption A) are the ones for which the appendix-C/D arguments go through.

    Parameters
    ----------
    n_c, L : int
    K : int, optional
        One size to examine (default: every K).
    with_origin : bool
        Only examine sets containing z = (0, …, 0). Lemma B is invariant under relabelling the concepts
        of each position separately, and these relabellings move any z to 0^L, so a Lemma-B set of size K
        exists iff one containing 0^L does (the count of such sets is the total times K/n_c^L). Allows
        n_c^L ≤ 27 (otherwise ≤ 16).

    Raises
    ------
    FCTheoryError
        On invalid input, n_c^L over the limit, or when the search runs past the budget's
        ``max_seconds`` (e.g. every K for n_c = 3, L = 3: give one K).
    """
    limit = 27 if with_origin else 16
    N, Ks = _check_search_args(n_c, L, K, limit)
    if N > limit:
        fail(
            "L",
            L,
            f"exhaustive search is limited to n_c**L <= {limit}, got {N}"
            + ("" if with_origin else " (27 with with_origin=True)"),
        )

    def test(Zs):
        D = _hamming(Zs)
        S = np.stack([(D == r).sum(1) for r in range(1, L + 1)], 1)
        return bool(np.all(S == S[0])) and lemma_B_properties(Zs, n_c=n_c).holds  # (i) first: cheap filter

    return _search(
        n_c,
        L,
        "lemma B",
        test,
        Ks,
        with_origin,
        deadline=_Deadline("K" if K is not None else "L", K if K is not None else L, "search_lemma_B"),
    )


# public names of the enumeration helpers, for the independent checks in proofs_check
all_latent = _all_latent
subsets_balanced = _subsets_balanced
