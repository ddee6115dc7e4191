"""Assumption B: the linear system (44) over symmetric matrices, solved exactly, and a semidefinite certificate
(cvxpy) of a PSD solution outside 𝒜 = span{I, 11ᵀ} when one exists (appendix B)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._budget import check_work
from .._validate import Anything, Bool, Kind, fail, public, result_type
from ._common import _NC, _Z, _hamming, _latent, _onehot

__all__ = ["AssumptionBResult", "check_assumption_B"]


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
