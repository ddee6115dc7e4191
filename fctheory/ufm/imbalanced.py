"""The regularised CE and MSE UFM for any class counts, certified (docs/ufm.md, "Any class counts").

Class k has n_k ≥ 0 samples (N = Σ n_k, π_k = n_k/N; an absent class, n_k = 0, keeps its classifier row, so
its logit is in every softmax). Objective (review eqs. (21), (28), the loss averaged over the N samples):

    (1/N) Σ_k Σ_{i ≤ n_k} ℓ(W h_{k,i} + b, e_k) + (λ_W/2)‖W‖² + (λ_H/2)‖H‖².

**Reduction.** For fixed (W, b) the samples' terms are separate and strictly convex in h_{k,i}, so at every
minimiser the features of a class coincide (NC1). With X = W H̄ diag(√π) ∈ R^{K×K_p} (columns: the present
classes) min over the factorisations of the penalty is λ‖X‖_*, λ = √(Nλ_Wλ_H) (the variational form of the
nuclear norm, d ≥ rank X), so min = min_{X, b} Σ_k π_k ℓ(X_k/√π_k + b, e_k) + λ‖X‖_*, convex. Classes of equal
count are exchangeable: averaging a minimiser over the permutations inside the count groups gives an invariant
minimiser, parametrised by (M, t) (:mod:`fctheory.ufm.groups`); the CE problem in those coordinates is
:class:`fctheory.ufm._reduced.ReducedCE`, solved by :func:`fctheory._nuclear.solve` and certified by
Fenchel duality (:func:`fctheory.ufm._reduced.certify_ce`). Within a group b of m_b ≥ 2 classes the classifiers
and features coincide (t_b = 0) **iff π_b ≤ λ²**, i.e. n_b ≤ N²λ_Wλ_H: ∂f/∂t_b = −√π_b at t_b = 0 for every
(M, c) (minority collapse, :mod:`fctheory.ufm.minority`).

**MSE.** With a bias the loss is ½‖(X − T)P‖², T = diag(√π), P = I − √π√πᵀ, and X may be taken with X√π = 0:
the minimiser is the singular-value soft-thresholding of TP at λ (without a bias: of T, so X* =
diag((√π_k − λ)₊)); the certificate is the dual point Λ = A − X* of the proximal problem.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from .._budget import check_work, get_budget
from .._nuclear import nuclear_norm, relative_gap, solve
from .._validate import fail, result_type
from ..metrics import pairs as _pairs
from ._common import UFMOptimum, single_thread_blas
from ._newton import newton_polish
from ._reduced import ReducedCE, certify_ce
from .groups import CountGroups, count_groups, group_gram, lift, psd_sqrt

__all__ = ["CertifiedUFMOptimum", "check_counts", "ce_counts", "mse_counts", "control_lambda"]

_SRC = "group-reduced convex program (docs/ufm.md, 'Any class counts'), certified by Fenchel duality"

#: the range of λ = √(Nλ_Wλ_H) in which the certified solver is run (outside: refused, naming λ_W)
LAM_RANGE = (1e-8, 1e8)


@result_type
@dataclass(frozen=True)
class CertifiedUFMOptimum(UFMOptimum):
    """Certified optimum of the regularised UFM for given class counts (a :class:`UFMOptimum` with more fields).

    The inherited fields keep their meaning (``W_gram`` = W Wᵀ, ``means_gram`` = H̄ᵀH̄ with zero rows and
    columns for absent classes, ``bias`` (−inf for an absent class under CE with a bias: the infimum is
    approached as it goes to −∞), ``threshold`` = 1 on the control parameter ``extras["Kq"]`` = λ/λ₀, the
    balanced K·√(nλ_Wλ_H)); ``closed_form`` is True for the MSE and for balanced counts.

    Attributes
    ----------
    counts : ndarray of int64 (K,)
    N : int
    lower_bound : float
        A certified lower bound on the minimum over all (W, H, b) of every width (the value is that of the
        returned point, an upper bound).
    gap, rel_gap : float
        value − lower_bound and gap/|value|.
    certified : bool
        rel_gap ≤ ``tol`` (or the gap is at f's float64 resolution).
    width : int
        rank X: the smallest feature dimension d that attains the minimum.
    W : ndarray (K, width) or None
        Balanced classifier (below :data:`fctheory.metrics.pairs.LARGE_K` classes).
    means : ndarray (width, K) or None
        Class means h_k in the same basis (0 for an absent class), W·means = the logits' X-part.
    collapsed : ndarray of bool (K,)
        Classes whose count group has collapsed (m_b ≥ 2 classes of one count with equal classifiers and
        features: π_b ≤ λ²); False for singletons.
    message : str
    nit, nfev : int
    seconds : float
    reduced : dict
        The solution in the group coordinates: ``groups`` (:class:`fctheory.ufm.groups.CountGroups`), ``M``,
        ``t``, ``c``, ``lam``.
    """

    counts: np.ndarray | None = None
    N: int = 0
    lower_bound: float = math.nan
    gap: float = math.nan
    rel_gap: float = math.nan
    certified: bool = False
    width: int = 0
    W: np.ndarray | None = field(default=None, repr=False)
    means: np.ndarray | None = field(default=None, repr=False)
    collapsed: np.ndarray | None = field(default=None, repr=False)
    message: str = ""
    nit: int = 0
    nfev: int = 0
    seconds: float = 0.0
    reduced: dict = field(default_factory=dict, repr=False)


def check_counts(counts, K=None) -> CountGroups:
    """The count groups of ``counts`` (non-negative integers, K ≥ 2 entries, some positive; K must match)."""
    counts = np.asarray(counts)
    if counts.ndim != 1 or counts.size < 2:
        fail("counts", counts, "must be a 1-D array with one count per class (K >= 2 entries)")
    if K is not None and counts.size != K:
        fail("counts", counts, f"must have K = {K} entries, got {counts.size}")
    if int(counts.max()) <= 0:
        fail("counts", counts, "must have at least one positive count (no samples at all)")
    if int(counts.sum()) > 2**53:
        fail("counts", counts, "the total N must be at most 2**53 (exact in float64)")
    groups = count_groups(counts)
    # a few G×G work arrays (the logits, probabilities, Hessian and SVD of the reduced problem) and the K-vectors
    check_work("counts", counts, bytes=8 * (12 * groups.G * groups.G + 8 * groups.K), what="the reduced UFM")
    return groups


def control_lambda(groups: CountGroups, lam_W: float, lam_H: float) -> float:
    """λ = √(Nλ_Wλ_H), refused (naming lam_W) outside :data:`LAM_RANGE`."""
    log_lam = 0.5 * (math.log(groups.N) + math.log(lam_W) + math.log(lam_H))
    lo, hi = LAM_RANGE
    if not math.log(lo) <= log_lam <= math.log(hi):
        fail("lam_W", lam_W, f"sqrt(N*lam_W*lam_H) must lie in [{lo:g}, {hi:g}] for the counts solver, got "
             f"exp({log_lam:.4g})")  # fmt: skip
    return math.exp(log_lam)


# ============================================================================== cross-entropy
def _lambda0_ce(red: ReducedCE) -> float:
    """λ₀: the origin X = 0 is optimal iff λ ≥ λ₀ = max(‖∇_M f(0)‖₂, max √π_b over groups of ≥ 2 classes)."""
    M0 = np.zeros((red.G, red.Gp))
    t0 = np.zeros(red.Gp)
    c0 = red.solve_c(M0, np.zeros(red.G))[0] if red.bias else np.zeros(red.G)
    _, P, omo, _ = red.evaluate(M0, t0, c0)
    gop = float(np.linalg.norm(red.grad_M(P, omo), 2))
    return max(gop, float(np.max(red.sq[red.multi], initial=0.0)))


#: the relative gap to which the first-order solver is run (its polish stops 100× below) before Newton takes over
NEWTON_FROM = 1e-2


def _solve_ce(red: ReducedCE, tol: float, deadline: float, maxiter: int):
    """(M, t, c, nit): :func:`fctheory._nuclear.solve` (f's Hessian in M is ≤ 1 in norm: diag(P) − qqᵀ), to
    NEWTON_FROM first where Newton's method (:func:`fctheory.ufm._newton.newton_polish`) may finish the job (no bias:
    it needs the optimum to have full rank, the small-λ regime where the first-order solver crawls), then to tol
    from where it left off."""
    M = np.zeros((red.G, red.Gp))
    nit = 0
    stages = [max(tol, NEWTON_FROM), tol] if not red.bias else [tol]
    for k, goal in enumerate(stages):
        with np.errstate(under="ignore"):
            M, _, _, _, it = solve(red, red.lam, M, lipschitz=0.5, tol=goal, maxiter=maxiter, deadline=deadline,
                                   floor=red.floor)  # fmt: skip
        nit += it
        t, c = red.inner(M)
        g, lb, _, _ = certify_ce(red, M, t, c)
        if g - lb <= tol * abs(g) or time.perf_counter() > deadline:
            break
        if k == 0 and not red.bias:  # f is evaluated to relative accuracy: worth it even below the ulp floor
            Mn, gn, lbn = newton_polish(red, M, tol=tol, deadline=deadline)
            if gn - lbn < g - lb:
                M, g, lb = Mn, gn, lbn
            if g - lb <= tol * abs(g):
                break
    t, c = red.inner(M)
    return M, t, c, nit


def ce_counts(groups: CountGroups, *, lam_W, lam_H, bias, tol, maxiter, max_seconds) -> CertifiedUFMOptimum:
    """The certified optimum of the CE UFM for the counts of ``groups`` (module docstring)."""
    t0 = time.perf_counter()
    lam = control_lambda(groups, lam_W, lam_H)
    if bias and groups.Gp == 1 and groups.sizes[0] == 1:  # one class present: its bias alone gives CE → 0
        return _single_present_with_bias(groups, lam, lam_W, lam_H, t0)
    sec = max_seconds if max_seconds is not None else get_budget().max_seconds
    deadline = t0 + (sec if sec is not None and math.isfinite(sec) else math.inf)
    with single_thread_blas():
        red = ReducedCE(groups, lam, bias)
        lam0 = _lambda0_ce(red)
        if lam >= lam0:
            M, t, c, nit = np.zeros((red.G, red.Gp)), np.zeros(red.Gp), np.zeros(red.G), 0
            if bias:
                c = red.solve_c(M, c)[0]
        else:
            M, t, c, nit = _solve_ce(red, tol, deadline, maxiter)
        g, lb, rho, align = certify_ce(red, M, t, c)
        out = _outputs(groups, M, t, lam, lam_W, lam_H, rows=red.G)
    gap = g - lb
    ok = gap <= tol * abs(g) or gap <= red.floor() or gap <= 0.0
    bvec = _ce_bias(groups, c) if bias else None
    msg = (
        f"certified: gap {gap:.2e} (relative {relative_gap(gap, g):.1e}) at width {out['width']}"
        if ok
        else f"not certified: gap {gap:.2e} above tol*|value| (raise maxiter or max_seconds)"
    )
    extras = _extras(groups, lam, lam0, rho, align, out)
    return CertifiedUFMOptimum(
        model="ce+bias" if bias else "ce", value=float(g), W_norm_sq=out["W_norm_sq"], H_norm_sq=out["H_norm_sq"],
        W_gram=out["W_gram"], means_gram=out["means_gram"], bias=bvec, threshold=1.0, trivial=out["width"] == 0,
        closed_form=False, conditions=f"d >= {out['width']} (the rank of the optimum); lambda = sqrt(N*lam_W*lam_H)",
        source=_SRC, extras=extras, counts=groups.counts, N=groups.N, lower_bound=float(lb), gap=float(gap),
        rel_gap=relative_gap(gap, g), certified=bool(ok), width=out["width"], W=out["W"], means=out["means"],
        collapsed=out["collapsed"], message=msg, nit=nit, nfev=red.nfev, seconds=time.perf_counter() - t0,
        reduced=dict(groups=groups, M=M, t=t, c=c, lam=lam),
    )  # fmt: skip


def _single_present_with_bias(groups, lam, lam_W, lam_H, t0):
    """CE with a bias and one present class: the bias makes every sample certain (infimum 0, X = 0)."""
    K = groups.K
    b = np.where(groups.present, 0.0, -np.inf)
    Z = np.zeros((K, K))
    return CertifiedUFMOptimum(
        model="ce+bias", value=0.0, W_norm_sq=0.0, H_norm_sq=0.0, W_gram=group_gram(np.zeros(K, int), Z[:1, :1],
        np.zeros(1)), means_gram=group_gram(np.zeros(K, int), Z[:1, :1], np.zeros(1)), bias=b, threshold=1.0,
        trivial=True, closed_form=True, conditions="one class present: the infimum 0 is approached as the other "
        "biases go to -inf", source=_SRC, extras={"lam": lam, "lambda0": 0.0, "Kq": math.inf}, counts=groups.counts,
        N=groups.N, lower_bound=0.0, gap=0.0, rel_gap=0.0, certified=True, width=0, W=None, means=None,
        collapsed=np.zeros(K, bool), message="one class present: CE -> 0 through the bias",
        seconds=time.perf_counter() - t0,
        reduced=dict(groups=groups, lam=lam),
    )  # fmt: skip


def _ce_bias(groups: CountGroups, c):
    """The class biases: c of each class's group, centred over the present classes; −inf for an absent class."""
    b = np.full(groups.K, -np.inf)
    pres = groups.present
    b[pres] = c[groups.label[pres]]
    b[pres] -= float(np.mean(b[pres]))
    return b


# ============================================================================== outputs
def _outputs(groups: CountGroups, M, t, lam, lam_W, lam_H, *, rows):
    """‖W‖², ‖H‖², the Grams (group Grams), the width, and for K < LARGE_K the balanced factors (W, class means).

    A balanced factorisation of √N·X = W·H' (H' = H̄ diag(√n)) has W Wᵀ = √N√(λ_H/λ_W)(XXᵀ)^{1/2},
    H'ᵀH' = √N√(λ_W/λ_H)(XᵀX)^{1/2} and ‖W‖² = √N√(λ_H/λ_W)‖X‖_*, Σ n_k‖h_k‖² = √N√(λ_W/λ_H)‖X‖_*.
    """
    G, Gp = groups.G, groups.Gp
    m = groups.sizes.astype(np.float64)
    beta = np.zeros(G)
    multi = groups.sizes[:Gp] >= 2
    beta[:Gp][multi] = t[multi] / (groups.sizes[:Gp][multi] - 1)
    Mf = np.zeros((G, Gp))
    Mf[:rows] = M
    nuc = nuclear_norm(Mf) + float(np.sum(np.abs(t)))
    cw = math.sqrt(groups.N) * math.sqrt(lam_H / lam_W)
    ch = math.sqrt(groups.N) * math.sqrt(lam_W / lam_H)
    Rw, Rh = psd_sqrt(Mf)
    ab = np.abs(beta)
    Cw = cw * (Rw / np.sqrt(np.outer(m, m)) - np.diag(ab / m))
    pi = groups.values.astype(np.float64) / groups.N
    Ch = np.zeros((G, G))
    mp, pp = m[:Gp], pi[:Gp]
    Ch[:Gp, :Gp] = (
        (ch / groups.N) * (Rh / np.sqrt(np.outer(mp, mp)) - np.diag(ab[:Gp] / mp)) / np.sqrt(np.outer(pp, pp))
    )
    dh = np.zeros(G)
    dh[:Gp] = (ch / groups.N) * ab[:Gp] / pp
    tol_rank = 1e-9 * max(float(np.max(np.abs(Mf), initial=0.0)), float(np.max(ab, initial=0.0)), 1e-300)
    sv = np.linalg.svd(Mf, compute_uv=False)
    width = int(np.count_nonzero(sv > tol_rank)) + int(np.sum((groups.sizes - 1)[ab > tol_rank]))
    out = dict(
        W_norm_sq=cw * nuc, H_norm_sq=ch * nuc, W_gram=group_gram(groups.label, Cw, cw * ab),
        means_gram=group_gram(groups.label, Ch, dh), width=width, W=None, means=None,
        collapsed=np.zeros(groups.K, bool),
    )  # fmt: skip
    coll = np.zeros(G, bool)
    coll[:Gp] = (groups.sizes[:Gp] >= 2) & (ab[:Gp] <= tol_rank)
    out["collapsed"] = coll[groups.label]
    if groups.K < _pairs.LARGE_K:
        out["W"], out["means"] = _factors(groups, Mf, beta, cw, ch, width)
    return out


def _factors(groups: CountGroups, M, beta, cw, ch, width):
    """Balanced W (K × width) and class means (width × K) of the lifted X (dense, K < LARGE_K)."""
    X = lift(groups, M, beta[: groups.Gp])
    A, s, Bt = np.linalg.svd(X, full_matrices=False)
    r = max(width, 0)
    root = np.sqrt(s[:r])
    W = math.sqrt(cw) * A[:, :r] * root[None, :]
    Hp = math.sqrt(ch) * root[:, None] * Bt[:r]  # columns √n_k h_k of the present classes
    means = np.zeros((r, groups.K))
    pres = np.flatnonzero(groups.present)
    means[:, pres] = Hp / np.sqrt(groups.counts[pres].astype(np.float64))[None, :]
    return W, means


def _extras(groups, lam, lam0, rho, align, out):
    return {
        "lam": float(lam),
        "lambda0": float(lam0),
        "Kq": float(lam / lam0) if lam0 > 0 else math.inf,
        "rho": float(rho),
        "align": float(align),
        "groups": int(groups.G),
        "present": int(np.count_nonzero(groups.present)),
    }


# ============================================================================== MSE
def mse_counts(groups: CountGroups, *, lam_W, lam_H, bias) -> CertifiedUFMOptimum:
    """The MSE UFM for the counts of ``groups``: singular-value soft-thresholding, certified (module docstring)."""
    t0 = time.perf_counter()
    lam = control_lambda(groups, lam_W, lam_H)
    G, Gp = groups.G, groups.Gp
    m = groups.sizes.astype(np.float64)
    pi = groups.values[:Gp].astype(np.float64) / groups.N
    A = np.zeros((G, Gp))
    A[np.arange(Gp), np.arange(Gp)] = np.sqrt(pi)  # T = diag(√π) in the group coordinates
    if bias:
        v = np.sqrt(m[:Gp] * pi)  # √π of the classes, normalised: the bias direction
        A -= np.outer(np.sqrt(m) * np.concatenate([pi, np.zeros(G - Gp)]), v)
    with single_thread_blas():
        U, s, Vt = np.linalg.svd(A, full_matrices=False)
        sh = np.maximum(s - lam, 0.0)
        M = (U * sh) @ Vt
        within = np.sqrt(pi)  # the within-group singular value of T (and of TP: P acts on group means only)
        tw = np.maximum(within - lam, 0.0) * (m[:Gp] - 1.0)
        value, lb = mse_certificate(A, M, within, tw, m[:Gp], lam)
        out = _outputs(groups, M, tw, lam, lam_W, lam_H, rows=G)
    lam0 = max(float(s[0]) if s.size else 0.0, float(np.max(within[m[:Gp] >= 2], initial=0.0)))
    gap = value - lb
    bvec = None
    if bias:  # b* = (T − X)√π: (X√π)_j = (M v)_a/√m_a and (T√π)_j = π_j for a class j of group a
        prior = np.concatenate([pi, np.zeros(G - Gp)])
        bvec = (prior - M @ v / np.sqrt(m))[groups.label]
    return CertifiedUFMOptimum(
        model="mse+bias" if bias else "mse", value=float(value), W_norm_sq=out["W_norm_sq"],
        H_norm_sq=out["H_norm_sq"], W_gram=out["W_gram"], means_gram=out["means_gram"], bias=bvec, threshold=1.0,
        trivial=out["width"] == 0, closed_form=True, conditions=f"d >= {out['width']}; lambda = sqrt(N*lam_W*lam_H)",
        source="singular-value soft-thresholding of diag(sqrt(pi)) (centred with a bias); docs/ufm.md",
        extras={"lam": lam, "lambda0": lam0, "Kq": lam / lam0 if lam0 > 0 else math.inf}, counts=groups.counts,
        N=groups.N, lower_bound=float(lb), gap=float(gap), rel_gap=relative_gap(gap, value), certified=True,
        width=out["width"], W=out["W"], means=out["means"], collapsed=out["collapsed"],
        message=f"closed form (certified gap {gap:.1e})", seconds=time.perf_counter() - t0,
        reduced=dict(groups=groups, M=M, t=tw, lam=lam),
    )  # fmt: skip


def mse_certificate(A, M, within, tw, mp, lam):
    """(value, lower bound) of ½‖X − A‖² + λ‖X‖_* over the group means (X ↔ M) and the within-group parts
    (t_b = (m_b − 1)β_b against the within-group singular value of A, √π_b): the primal at the given point, and the
    dual ⟨Λ, A⟩ − ½‖Λ‖² at Λ = A − M scaled into ‖Λ‖₂ ≤ λ (weak duality; scalar parts alike)."""
    R = A - M
    value = 0.5 * float(np.sum(R * R)) + lam * float(np.sum(np.linalg.svd(M, compute_uv=False)))
    Lam = R * min(1.0, lam / max(float(np.linalg.norm(R, 2)) if R.size else 0.0, 1e-300))
    lb = float(np.sum(Lam * A)) - 0.5 * float(np.sum(Lam * Lam))
    k = mp - 1.0  # multiplicity of each group's within-group singular value
    bw = tw / np.where(k > 0, k, 1.0)
    rw = within - bw
    value += float(np.sum(k * (0.5 * rw * rw + lam * np.abs(bw))))
    lw = np.clip(rw, -lam, lam)  # the scalar dual point, |Λ| ≤ λ
    lb += float(np.sum(k * (lw * within - 0.5 * lw * lw)))
    return value, lb
