"""Feature-collapse metrics for the weights (W, U) of h and h* (Definitions 1–3 of the paper).

* :func:`within_concept_spread` — how far the embeddings w_(α,β) (or φ(w_(α,β))) of the words of
  one concept are from their concept centre;
* :func:`frame_alignment` — how far the concept centres are from a (scaled) equiangular frame (4);
* :func:`distance_to_type1`, :func:`distance_to_type2`, :func:`distance_to_type3` — relative
  Frobenius distance to the nearest type-I / type-II / type-III collapse configuration.

The nearest configuration is found by alternating minimisation over the equiangular frame
F = Q·S (S the fixed (n_c−1)×n_c simplex coordinates with SᵀS = κI − 11ᵀ/(n_c−1), Q a d×(n_c−1)
matrix with orthonormal columns, so F ranges over *all* equiangular frames) and the constants:
for fixed constants the optimal Q is an orthogonal Procrustes solution (polar factor); for fixed Q
the optimal constants are non-negative least-squares scalars in closed form. Every step decreases
the objective, and on an exact configuration the first Procrustes step already returns its frame.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._backend import to_numpy
from .._budget import check_work
from .._numerics import column_exponents, pow2_exponent, pow2_scale, pow2_unscale
from .._validate import Array, Bool, Instance, Int, Real, fail, public, result_type
from ..frames import simplex_coords
from ..network import U_from_hat, U_hat, phi
from ..task import Task

__all__ = [
    "CollapseDistance",
    "WithinConceptSpread",
    "FrameAlignment",
    "within_concept_spread",
    "frame_alignment",
    "distance_to_type1",
    "distance_to_type2",
    "distance_to_type3",
]


# ----------------------------------------------------------------------------- result objects
@result_type
@dataclass(frozen=True)
class CollapseDistance:
    """Distance of (W, U) to the nearest collapse configuration of one type.

    Attributes
    ----------
    kind : {"I", "II", "III"}
    distance : float
        ‖(W, Û) − (W*, Û*)‖_F / ‖(W, Û)‖_F (type II: φ(W) in place of W and √d·F·P in place
        of W*); 0 for (W, Û) = 0.
    frame : ndarray, shape (d, n_c)
        The fitted equiangular frame F (mean-zero for type II).
    c : float
        Type I: the word constant c (w = c f_α); types II and III: the classifier constant c
        (u_{k,ℓ} = c f_{z_kℓ}).
    c_prime : float or None
        Type I only: the classifier constant c′.
    r : ndarray of shape (s_c,) or None
        Type III only: the per-rank magnitudes r_β (w_(α,β) = r_β f_α).
    W_star, U_star : ndarray
        The nearest configuration in the layouts of W (d×n_w) and U (K×L·d). For type II,
        W_star = √d·F·P, a representative with φ(W_star) = W_star.
    n_iter : int
        Alternating steps taken by the best start.
    converged : bool
        Whether the relative objective decrease fell below the tolerance.
    """

    kind: str
    distance: float
    frame: np.ndarray
    c: float
    c_prime: float | None
    r: np.ndarray | None
    W_star: np.ndarray
    U_star: np.ndarray
    n_iter: int
    converged: bool


@result_type
@dataclass(frozen=True)
class WithinConceptSpread:
    """Within-concept spread of word vectors v_(α,β) (w or φ(w)).

    Attributes
    ----------
    spread : float
        Σ_{α,β} ‖v_(α,β) − v̄_α‖² / Σ_{α,β} ‖v_(α,β)‖² ∈ [0, 1] (v̄_α the unweighted mean over β);
        0 exactly for type-I and type-II collapse, scale- and rotation-invariant.
    angular_spread : float
        The same statistic computed on the unit vectors v/‖v‖: 0 also for type-III collapse,
        where only the magnitudes depend on β.
    per_concept : ndarray, shape (n_c,)
        Σ_β ‖v_(α,β) − v̄_α‖² / Σ_β ‖v_(α,β)‖² for each concept.
    centres : ndarray, shape (d, n_c)
        The concept centres v̄_α.
    """

    spread: float
    angular_spread: float
    per_concept: np.ndarray
    centres: np.ndarray


@result_type
@dataclass(frozen=True)
class FrameAlignment:
    """Alignment of the concept centres v̄_α with an equiangular frame (4).

    Attributes
    ----------
    distance : float
        min over c ≥ 0 and equiangular F of ‖M − c F‖_F / ‖M‖_F, M = [v̄_1 … v̄_{n_c}]
        (F mean-zero when ``layernorm``); 0 exactly for collapsed configurations.
    c : float
        The fitted scale.
    frame : ndarray, shape (d, n_c)
        The fitted frame F.
    cosines : ndarray, shape (n_c, n_c)
        Cosine matrix of the centres (an equiangular frame has −1/(n_c−1) off the diagonal).
    max_cosine_error : float
        max_{α≠α′} |cos(v̄_α, v̄_α′) + 1/(n_c−1)|.
    norm_cv : float
        Coefficient of variation std/mean of the centre norms ‖v̄_α‖ (0 for equinorm centres).
    """

    distance: float
    c: float
    frame: np.ndarray
    cosines: np.ndarray
    max_cosine_error: float
    norm_cv: float


# ----------------------------------------------------------------------------- helpers
def _as_host(name, A):
    A = np.asarray(to_numpy(A), dtype=np.float64)
    if A.ndim != 2:
        fail(name, A, "must be a 2-D array")
    if not np.all(np.isfinite(A)):
        fail(name, A, "must be finite")
    return A


def _check_W(task, W):
    W = _as_host("W", W)
    if W.shape[1] != task.n_w:
        fail("W", W, f"must have shape (d, n_w) = (d, {task.n_w}), got {W.shape}")
    return W


def _check_WU(task, W, U):
    W = _check_W(task, W)
    U = _as_host("U", U)
    d = W.shape[0]
    if U.shape != (task.K, task.L * d):
        fail("U", U, f"must have shape (K, L*d) = ({task.K}, {task.L * d}), got {U.shape}")
    return W, U, d


def _exponent(A) -> int:
    """e with max|A|·2^-e in [0.5, 1) (0 for A = 0): dividing by 2^e is exact and never overflows."""
    return pow2_exponent(A)


def _scaled(A, e):
    return pow2_scale(A, e)


def _unscaled(name, value, A, e, what):
    """A·2^e; refuse (naming the input) when the result is beyond the float64 range."""
    if e == 0 or A is None:
        return A
    out = pow2_unscale(np.asarray(A, dtype=np.float64), e)
    if not np.all(np.isfinite(out)):
        fail(name, value, f"{what} overflows float64 at this scale (entries up to 2^{e})")
    return float(out) if np.ndim(A) == 0 else out


def _unit_columns(A):
    """Each column divided exactly by a power of two bringing its largest entry into [0.5, 1)."""
    e = column_exponents(A)
    with np.errstate(under="ignore"):
        return np.ldexp(A, -e[None, :])


def _phi(W):
    # φ is column-wise scale invariant: bring each column to unit scale first, so columns of any
    # magnitude (1e300, 1e-300) neither overflow nor underflow in the variance
    return phi(_unit_columns(W))


def _word_vectors(task, W, layernorm):
    """(V, e): the word vectors (W, or φ(W) when ``layernorm``) divided exactly by 2^e (e = 0 for φ)."""
    W = _check_W(task, W)
    if layernorm:
        return _phi(W), 0
    e = _exponent(W)
    return _scaled(W, e), e


def _householder(d: int) -> np.ndarray:
    """The unit vector v of the reflection I − 2vvᵀ mapping 1/√d to e_d. Its first d−1 columns are an
    orthonormal basis B of 1_d^⊥ (exact to rounding); it is applied in O(d) memory, never formed."""
    v = np.full(d, 1.0 / np.sqrt(d))
    v[-1] -= 1.0
    return v / np.linalg.norm(v)


def _svd(A):
    try:
        return np.linalg.svd(A, full_matrices=False)
    except np.linalg.LinAlgError:  # pragma: no cover - LAPACK non-convergence on finite input
        # the gesdd driver can fail where the slower, more robust gesvd converges
        import scipy.linalg  # noqa: PLC0415

        try:
            return scipy.linalg.svd(A, full_matrices=False, lapack_driver="gesvd")
        except (np.linalg.LinAlgError, ValueError) as exc:
            fail("W", f"array of shape {A.shape}", f"the SVD of the frame fit did not converge ({exc})")


def _polar(M: np.ndarray, v: np.ndarray | None) -> np.ndarray:
    """argmax_Q tr(QᵀM) over matrices with orthonormal columns (inside 1^⊥ when the Householder
    vector ``v`` of :func:`_householder` is given: Q = B·polar(BᵀM) with B = (I − 2vvᵀ)[:, :d−1])."""
    if v is not None:
        BtM = (M - 2.0 * np.outer(v, v @ M))[:-1]
        Uo, _, Vt = _svd(BtM)
        Y = Uo @ Vt
        Q = np.vstack([Y, np.zeros((1, Y.shape[1]))])
        return Q - 2.0 * np.outer(v, v @ Q)
    Uo, _, Vt = _svd(M)
    return Uo @ Vt


class _Block:
    """One term ‖X − F·B·diag(s[g])‖² of the fitting objective, B one-hot (column j ↦ concept a_j).

    X: d×m data, ``concept``: a_j, ``groups``: g_j (which constant scales column j), ``fixed``: the
    scales are not fitted (type II's √d). All iterations work on the per-(group, concept) sums
    S_{g,α} = Σ_{j: g_j=g, a_j=α} X_j and counts, so one step costs O(d·n_c·#groups) whatever m is;
    since every f_α has unit norm, ‖F B_j‖ = 1.
    """

    def __init__(self, X, concept, groups, n_groups, n_c, fixed=None):
        self.X = X
        self.a = np.asarray(concept, dtype=np.intp)
        self.g = np.asarray(groups, dtype=np.intp)
        self.ng = n_groups
        self.fixed = fixed
        self.scales = None
        key = self.g * n_c + self.a
        d = X.shape[0]
        S = np.zeros((d, n_groups * n_c))
        np.add.at(S.T, key, X.T)
        self.S = S.reshape(d, n_groups, n_c)  # S[:, g, α]
        self.cnt = np.bincount(key, minlength=n_groups * n_c).reshape(n_groups, n_c).astype(float)
        self.sq = np.bincount(self.g, weights=np.einsum("ij,ij->j", X, X), minlength=n_groups)
        self.total = float(self.sq.sum())

    def fit_scales(self, F):
        if self.fixed is not None:
            self.scales = np.full(self.ng, float(self.fixed))
            return
        num = np.einsum("igc,ic->g", self.S, F)
        den = self.cnt.sum(axis=1)
        s = np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)
        self.scales = np.maximum(s, 0.0)  # the constants of Definitions 1–3 are ≥ 0

    def init_scales(self):
        # magnitude-matched start: s_g = ‖X_g‖ / ‖F B_g‖ = ‖X_g‖ / √(#columns of g)
        if self.fixed is not None:
            self.scales = np.full(self.ng, float(self.fixed))
            return
        den = self.cnt.sum(axis=1)
        self.scales = np.sqrt(self.sq / np.where(den > 0, den, 1.0))

    def cross(self, Sx):
        # contribution X·D·Bᵀ·Sxᵀ to the Procrustes matrix
        return np.einsum("igc,g->ic", self.S, self.scales) @ Sx.T

    def objective(self, F):
        # ‖X‖² − 2Σ_g s_g⟨S_g, F⟩ + Σ_g s_g²·#g (rounding ~eps·‖X‖²: used only to monitor progress)
        num = np.einsum("igc,ic->g", self.S, F)
        return self.total - 2.0 * float(self.scales @ num) + float(self.scales**2 @ self.cnt.sum(axis=1))

    def target(self, F):
        return F[:, self.a] * self.scales[self.g][None, :]

    def residual(self, F):
        R = self.X - self.target(F)
        return float(np.einsum("ij,ij->", R, R))


def _fit(blocks, n_c, d, mean_zero, max_iter, tol):
    """Alternating Procrustes / closed-form constants; several starts, best kept."""
    S = simplex_coords(n_c)
    B = _householder(d) if mean_zero else None
    total = sum(b.total for b in blocks)
    # starts: all blocks at magnitude-matched scales; the blocks' Procrustes matrices normalised to
    # unit norm (well conditioned when one block is tiny next to another: its orientation is then
    # below the objective's rounding but still fixes the frame exactly); each block alone
    starts = ["matched", "normalised"] + (list(range(len(blocks))) if len(blocks) > 1 else [])
    best = None

    def consider(F, it, converged):
        nonlocal best
        # the exact residual (no cancellation) decides between candidates and gives the distance
        exact = sum(b.residual(F) for b in blocks)
        if best is None or exact <= best[0]:
            best = (exact, F, [b.scales.copy() for b in blocks], it, converged)

    for start in starts:
        for i, b in enumerate(blocks):
            b.init_scales()
            if isinstance(start, int) and i != start and b.fixed is None:
                b.scales = np.zeros(b.ng)
        parts = [b.cross(S) for b in blocks]
        if start == "normalised":
            parts = [P / np.linalg.norm(P) for P in parts if np.linalg.norm(P) > 0] or parts
        M = sum(parts)
        prev = np.inf
        converged = False
        it = 0
        for it in range(1, max_iter + 1):
            Q = _polar(M, B)
            F = Q @ S
            for b in blocks:
                b.fit_scales(F)
            if it == 1:
                consider(F, it, False)
            obj = sum(b.objective(F) for b in blocks)
            if prev - obj <= tol * max(total, np.finfo(float).tiny):
                converged = True
                break
            prev = obj
            M = sum(b.cross(S) for b in blocks)
        consider(F, it, converged)
    return best, total


def _distance(obj, total):
    if total == 0.0:
        return 0.0
    return float(np.sqrt(max(obj, 0.0) / total))


def _check_d(d, n_c, mean_zero, kind):
    need = n_c if mean_zero else n_c - 1
    if d < need:
        what = "mean-zero equiangular frames" if mean_zero else "equiangular frames"
        fail("W", f"d={d}", f"type-{kind} configurations need {what}, which exist only for d >= {need}")


# ----------------------------------------------------------------------------- public API
_ITER = Int(min=1, max=10**7)
_TOL = Real(lo=0.0)


def _fit_budget(name, value, d, n_c, groups, columns, max_iter, n_blocks):
    """Size one alternating fit before it runs: each step costs a d×(n_c−1) SVD and O(d·n_c·groups)."""
    starts = 2 + (n_blocks if n_blocks > 1 else 0)
    flops = d * n_c * (n_c + groups + 4)
    check_work(
        name,
        value,
        bytes=8 * (3 * d * (columns + n_c * (groups + 2))),
        seconds=starts * max_iter * (2e-4 + 4e-9 * flops),
        what="the equiangular-frame fit",
    )


@public(task=Instance(Task), W=Array(ndim=2), layernorm=Bool())
def within_concept_spread(task, W, layernorm: bool = False) -> WithinConceptSpread:
    """Within-concept spread of the word embeddings (or of φ(W) when ``layernorm``).

    Parameters
    ----------
    task : Task
    W : array_like, shape (d, n_w)
        Word embeddings (NumPy or CuPy); column α·s_c+β is w_(α,β).
    layernorm : bool
        Measure φ(w_(α,β)) (the representations of h*) instead of w_(α,β).

    Returns
    -------
    WithinConceptSpread
        ``.spread`` = Σ‖v − v̄_α‖²/Σ‖v‖² is 0 exactly under condition (i) of Definitions 1–2,
        ``.angular_spread`` is 0 also under Definition 3 (i). Both are scale invariant: W is rescaled
        exactly by a power of two first (each column for φ), so W·1e300 and W·1e-300 give the
        values of W. W = 0 gives 0 for both.
    """
    V, e = _word_vectors(task, W, layernorm)
    d = V.shape[0]
    Vc = V.reshape(d, task.n_c, task.s_c)  # [:, α, β]; word index α·s_c+β
    centres = Vc.mean(axis=2)
    dev = Vc - centres[:, :, None]
    num_a = np.einsum("iab,iab->a", dev, dev)
    den_a = np.einsum("iab,iab->a", Vc, Vc)
    total = float(den_a.sum())
    spread = float(num_a.sum() / total) if total > 0 else 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        per = np.where(den_a > 0, num_a / np.where(den_a > 0, den_a, 1.0), 0.0)
    # unit vectors from per-column unit-scaled copies: a word 1e-200 times smaller than the largest
    # still has an exact direction (its squared norm would underflow at the common scale)
    Vu = _unit_columns(V).reshape(d, task.n_c, task.s_c)
    norms = np.sqrt(np.einsum("iab,iab->ab", Vu, Vu))
    Un = Vu / np.where(norms > 0, norms, 1.0)[None]
    Uc = Un - Un.mean(axis=2, keepdims=True)
    n_nonzero = float(np.count_nonzero(norms))
    ang = float(np.einsum("iab,iab->", Uc, Uc) / n_nonzero) if n_nonzero else 0.0
    return WithinConceptSpread(
        spread=spread,
        angular_spread=ang,
        per_concept=per,
        centres=_unscaled("W", f"array of shape {np.shape(W)}", centres, e, "the concept centres"),
    )


@public(task=Instance(Task), W=Array(ndim=2), layernorm=Bool(), max_iter=_ITER, tol=_TOL)
def frame_alignment(task, W, layernorm: bool = False, *, max_iter: int = 200, tol: float = 1e-15) -> FrameAlignment:
    """Distance of the concept centres v̄_α to the nearest scaled equiangular frame c·F.

    Parameters
    ----------
    task : Task
    W : array_like, shape (d, n_w)
    layernorm : bool
        Use φ(W) and mean-zero frames (Definition 2) instead of W and frames (4).
    max_iter : int
        Alternating steps per start (≥ 1).
    tol : float
        Stop when the objective decreases by less than ``tol`` relative to ‖M‖² (≥ 0).

    Returns
    -------
    FrameAlignment
        ``.distance`` = min_{c≥0, F} ‖M − cF‖_F/‖M‖_F with M the centres; 0 exactly when the
        centres form a scaled (mean-zero) equiangular frame. The distance, frame, cosines and
        ``norm_cv`` are scale invariant (W is rescaled exactly first); ``c`` scales with W.
    """
    V, e = _word_vectors(task, W, layernorm)
    d = V.shape[0]
    _check_d(d, task.n_c, layernorm, "II" if layernorm else "I")
    _fit_budget("max_iter", max_iter, d, task.n_c, 1, task.n_c, max_iter, 1)
    M = V.reshape(d, task.n_c, task.s_c).mean(axis=2)
    blk = _Block(M, np.arange(task.n_c), np.zeros(task.n_c, dtype=np.intp), 1, task.n_c)
    (obj, F, scales, _, _), total = _fit([blk], task.n_c, d, layernorm, max_iter, tol)
    Mu = _unit_columns(M)  # cosines from unit-scaled columns: no underflow for tiny centres
    nrm_u = np.linalg.norm(Mu, axis=0)
    safe = np.where(nrm_u > 0, nrm_u, 1.0)
    Mn = Mu / safe[None, :]
    cos = Mn.T @ Mn
    off = ~np.eye(task.n_c, dtype=bool)
    err = float(np.max(np.abs(cos[off] + 1.0 / (task.n_c - 1))))
    nrm = np.linalg.norm(M, axis=0)
    cv = float(nrm.std() / nrm.mean()) if nrm.mean() > 0 else 0.0
    c = _unscaled("W", f"array of shape {np.shape(W)}", float(scales[0][0]), e, "the fitted scale c")
    return FrameAlignment(distance=_distance(obj, total), c=c, frame=F, cosines=cos, max_cosine_error=err, norm_cv=cv)


def _U_blocks(task, U, d):
    Uh = U_hat(U, L=task.L)  # d×KL, column k·L+ℓ = u_{k,ℓ}
    return _Block(Uh, task.Z.ravel(), np.zeros(task.K * task.L, dtype=np.intp), 1, task.n_c)


def _U_star(task, F, c):
    return U_from_hat(c * (F[:, task.Z.ravel()]), L=task.L)


def _joint_scale(*arrays):
    """One exact power-of-two scale for several blocks: the distance is invariant under a common scale."""
    return max(_exponent(A) for A in arrays)


_WU_KINDS = dict(task=Instance(Task), W=Array(ndim=2), U=Array(ndim=2), max_iter=_ITER, tol=_TOL)


@public(**_WU_KINDS)
def distance_to_type1(task, W, U, *, max_iter: int = 500, tol: float = 1e-15) -> CollapseDistance:
    """Relative distance from (W, U) to the nearest type-I collapse configuration (Definition 1).

    min over equiangular F and c, c′ ≥ 0 of ‖(W, Û) − (c·F·P, c′·F·Z)‖_F / ‖(W, Û)‖_F, where
    P (n_c×n_w) maps word (α,β) to e_α and Z (n_c×KL) is the one-hot concept matrix.

    Parameters
    ----------
    task : Task
    W : array_like, shape (d, n_w)
    U : array_like, shape (K, L·d)
    max_iter, tol : alternating-minimisation controls (relative objective decrease); max_iter ≥ 1.

    Returns
    -------
    CollapseDistance
        ``.distance``, ``.c``, ``.c_prime``, ``.frame`` and the nearest configuration. The distance is
        invariant under (W, U) → s(W, U) (both are rescaled exactly by a common power of two first).
    """
    W, U, d = _check_WU(task, W, U)
    _check_d(d, task.n_c, False, "I")
    _fit_budget("max_iter", max_iter, d, task.n_c, 1, task.n_w + task.K * task.L, max_iter, 2)
    e = _joint_scale(W, U)
    W, U = _scaled(W, e), _scaled(U, e)
    bw = _Block(W, task.word_concept, np.zeros(task.n_w, dtype=np.intp), 1, task.n_c)
    bu = _U_blocks(task, U, d)
    (obj, F, scales, it, conv), total = _fit([bw, bu], task.n_c, d, False, max_iter, tol)
    c, cp = float(scales[0][0]), float(scales[1][0])
    show = "(W, U) of this magnitude"
    return CollapseDistance(
        kind="I",
        distance=_distance(obj, total),
        frame=F,
        c=_unscaled("W", show, c, e, "c"),
        c_prime=_unscaled("U", show, cp, e, "c'"),
        r=None,
        W_star=_unscaled("W", show, c * F[:, task.word_concept], e, "W*"),
        U_star=_unscaled("U", show, _U_star(task, F, cp), e, "U*"),
        n_iter=it,
        converged=conv,
    )


@public(**_WU_KINDS)
def distance_to_type2(task, W, U, *, max_iter: int = 500, tol: float = 1e-15) -> CollapseDistance:
    """Relative distance from (φ(W), U) to the nearest type-II configuration (Definition 2).

    min over mean-zero equiangular F and c ≥ 0 of ‖(φ(W), Û) − (√d·F·P, c·F·Z)‖_F / ‖(φ(W), Û)‖_F.
    Needs d ≥ n_c (mean-zero frames) and no constant column of W (φ undefined). φ(W) is computed
    from exactly rescaled columns and the fit from (φ(W), U) rescaled by a common power of two, so no
    magnitude of W or U overflows.
    """
    W, U, d = _check_WU(task, W, U)
    _check_d(d, task.n_c, True, "II")
    _fit_budget("max_iter", max_iter, d, task.n_c, 1, task.n_w + task.K * task.L, max_iter, 2)
    P = _phi(W)
    e = _joint_scale(P, U)
    bw = _Block(
        _scaled(P, e),
        task.word_concept,
        np.zeros(task.n_w, dtype=np.intp),
        1,
        task.n_c,
        fixed=float(np.ldexp(np.sqrt(d), -e)),
    )
    bu = _U_blocks(task, _scaled(U, e), d)
    (obj, F, scales, it, conv), total = _fit([bw, bu], task.n_c, d, True, max_iter, tol)
    c = float(scales[1][0])
    show = "U of this magnitude"
    return CollapseDistance(
        kind="II",
        distance=_distance(obj, total),
        frame=F,
        c=_unscaled("U", show, c, e, "c"),
        c_prime=None,
        r=None,
        W_star=np.sqrt(d) * F[:, task.word_concept],
        U_star=_unscaled("U", show, _U_star(task, F, c), e, "U*"),
        n_iter=it,
        converged=conv,
    )


@public(**_WU_KINDS)
def distance_to_type3(task, W, U, *, max_iter: int = 500, tol: float = 1e-15) -> CollapseDistance:
    """Relative distance from (W, U) to the nearest type-III configuration (Definition 3).

    min over equiangular F, r_β ≥ 0 (one per word rank β) and c ≥ 0 of
    ‖(W, Û) − (F·P·diag(r_{β(j)}), c·F·Z)‖_F / ‖(W, Û)‖_F. Type I is the case r_β ≡ c, so this
    distance never exceeds :func:`distance_to_type1`'s (up to the local-search tolerance).
    Invariant under (W, U) → s(W, U) (a common exact rescaling is applied first).
    """
    W, U, d = _check_WU(task, W, U)
    _check_d(d, task.n_c, False, "III")
    _fit_budget("max_iter", max_iter, d, task.n_c, task.s_c, task.n_w + task.K * task.L, max_iter, 2)
    e = _joint_scale(W, U)
    W, U = _scaled(W, e), _scaled(U, e)
    bw = _Block(W, task.word_concept, task.word_rank.astype(np.intp), task.s_c, task.n_c)
    bu = _U_blocks(task, U, d)
    (obj, F, scales, it, conv), total = _fit([bw, bu], task.n_c, d, False, max_iter, tol)
    r, c = scales[0], float(scales[1][0])
    show = "(W, U) of this magnitude"
    return CollapseDistance(
        kind="III",
        distance=_distance(obj, total),
        frame=F,
        c=_unscaled("U", show, c, e, "c"),
        c_prime=None,
        r=_unscaled("W", show, r, e, "r"),
        W_star=_unscaled("W", show, F[:, task.word_concept] * r[task.word_rank][None, :], e, "W*"),
        U_star=_unscaled("U", show, _U_star(task, F, c), e, "U*"),
        n_iter=it,
        converged=conv,
    )
