"""Proximal gradient for g(X) = f(X) + λ‖X‖_* with a certified Fenchel bound: the machinery of the convex
problems min_X f(X) + λ‖X‖_* that the true risk (5) reduces to (Claim G, (159)–(167)).

Two callers: :mod:`fctheory.risk.convex` (f from the exact engine's enumeration, any word frequencies) and
:mod:`fctheory.collapsed` (f of the feature-collapsed problem, uniform word frequencies, any K). ``fx(X)``
returns ``(f(X), ∇f(X))``; the certificate needs only that f is convex and a sum of cross-entropies of linear
maps of X (the entropy term E below).

The bound (the module docstring of :mod:`fctheory.risk.convex` proves it):

    min g ≥ LB(X) = s·E(X),   E = f(X) − ⟨∇f(X), X⟩ = Σ_x c_x H(p_x) ≥ 0,   s = min(1, λ/‖∇f(X)‖₂).
"""

from __future__ import annotations

import math
import time

import numpy as np

from scipy.linalg import LinAlgError, cholesky, eigh
from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh, svds

from ._lbfgs import lbfgs_iterate

__all__ = [
    "svt",
    "relative_gap",
    "fenchel_bound",
    "fista",
    "ray_step",
    "balanced_svd",
    "nuclear_norm",
    "polish",
    "solve",
    "gram",
    "spectral_norm_bound",
    "top_singular",
]

#: relative size below which a singular value counts as zero when choosing the width
RANK_RTOL = 1e-9


def nuclear_norm(X) -> float:
    """‖X‖_* (the sum of the singular values)."""
    return float(np.sum(np.linalg.svd(X, compute_uv=False))) if X.size else 0.0


def svt(Y, tau):
    """The proximal map of τ‖·‖_* at Y (singular-value soft-thresholding) and the kept singular values."""
    A, s, Bt = np.linalg.svd(Y, full_matrices=False)
    s = np.maximum(s - tau, 0.0)
    k = int(np.count_nonzero(s))
    return (A[:, :k] * s[:k]) @ Bt[:k], s[:k]


def relative_gap(gap, R):
    """gap/|R|, and 0 for a zero gap at R = 0 (a single class: CE = 0 at the origin)."""
    return gap / abs(R) if R != 0 else (0.0 if gap <= 0 else math.inf)


def fenchel_bound(f, G, X, lam, nuc, *, gop=None, E=None, inner=None):
    """(LB, ρ, align, g) at X with f(X), ∇f(X) = G, ‖X‖_* = nuc: the lower bound s·E on min g, ρ = ‖G‖₂/λ,
    align = (⟨G, X⟩ + λ‖X‖_*)/(λ‖X‖_*) (0 at the optimum, Claim H) and g(X).

    ``gop`` (an upper bound of ‖G‖₂, e.g. :func:`spectral_norm_bound`'s), ``E`` (the entropy term computed
    sentence by sentence) and ``inner`` (⟨G, X⟩) replace what is otherwise computed here from G and X (a full
    SVD for ‖G‖₂; E = f − ⟨G, X⟩); G and X may then be None. The bound needs gop ≥ ‖G‖₂: an underestimate
    makes s too large and the bound unsound."""
    if gop is None:
        gop = float(np.linalg.norm(G, 2)) if G.size else 0.0
    if inner is None:
        inner = float(np.sum(G * X))
    if E is None:
        E = f - inner  # Σ c_x H(p_x) ≥ 0
    s = 1.0 if gop <= lam else lam / gop
    align = (inner + lam * nuc) / (lam * nuc) if nuc > 0 else 0.0
    return s * max(E, 0.0), gop / lam, align, f + lam * nuc


# ----------------------------------------------------------------------------- ‖∇f‖₂ without a full SVD
#: unit roundoff of float64
UNIT = 2.0**-53
#: the Gram size up to which the norm bound starts from a dense symmetric eigensolver (LAPACK, O(n³)) over ARPACK
DENSE_EIG_MAX = 4096


def _gamma(k) -> float:
    """γ_k = k·u/(1 − k·u): the relative error bound of a length-k dot product or Cholesky step (Higham, §3.1)."""
    return k * UNIT / (1.0 - k * UNIT)


def gram(G):
    """(M, m, ‖G‖_F²) with M = GGᵀ or GᵀG, whichever is smaller (n × n, n = min(G.shape)), formed in float64
    from inner products of length m = max(G.shape): the input of :func:`spectral_norm_bound`."""
    G = np.asarray(G, dtype=np.float64)
    M = G @ G.T if G.shape[0] <= G.shape[1] else G.T @ G
    return M, max(G.shape), float(np.sum(G * G))


def top_singular(matvec, rmatvec, shape, k=1, *, tol=1e-10, start=None, seed=0, maxiter=None):
    """The top ``k`` singular triplets (u, σ, vᵀ; σ decreasing) of the operator G (``matvec``: v ↦ Gv,
    ``rmatvec``: u ↦ Gᵀu) by ARPACK's Lanczos (scipy.sparse.linalg.svds): never a full SVD. ``start``: a
    previous (u, v) pair of vectors to start from (a warm start when G changed little); ``maxiter``: ARPACK
    restarts at most (default max(20k, 400); a small value gives a cheap estimate). A Ritz value is a
    *lower* bound of σ₁ (it may sit inside a cluster of nearly equal top singular values); the certificate
    therefore never uses it as ‖G‖₂ (:func:`spectral_norm_bound`). On ARPACK's non-convergence the Ritz values
    reached are returned."""
    m, n = shape
    k = max(1, min(k, min(m, n) - 1))
    if min(m, n) <= 2:  # too small for ARPACK: the operator's dense matrix
        D = np.column_stack([matvec(e) for e in np.eye(n)])
        A, s, Bt = np.linalg.svd(D, full_matrices=False)
        return A[:, :k], s[:k], Bt[:k]
    op = LinearOperator((m, n), matvec=matvec, rmatvec=rmatvec, dtype=np.float64)
    if start is not None:  # svds iterates on the smaller Gram: start from that side's vector
        v0 = np.asarray(start[0] if m < n else start[1], dtype=np.float64)
    else:
        v0 = np.random.default_rng(seed).standard_normal(min(m, n))
    try:
        A, s, Bt = svds(op, k=k, tol=tol, v0=v0, maxiter=maxiter or max(20 * k, 400))
    except ArpackNoConvergence as exc:  # a tight cluster at the top: Ritz pairs of what was reached
        vecs = exc.eigenvectors
        if vecs is None or not np.size(vecs):  # nothing converged: a few block power steps from v0
            vecs = np.column_stack([v0, np.random.default_rng(seed).standard_normal((min(m, n), k))])
            for _ in range(3):
                vecs = np.linalg.qr(op.rmatmat(op.matmat(vecs)) if n <= m else op.matmat(op.rmatmat(vecs)))[0]
        A, s, Bt = _ritz_triplets(op, vecs, n <= m)
        A, s, Bt = A[:, :k], s[:k], Bt[:k]
    o = np.argsort(s)[::-1]
    return A[:, o], s[o], Bt[o]


def _ritz_triplets(op, vecs, right):
    """Singular triplets from the Ritz vectors of ARPACK's GᵀG (``right``) or GGᵀ."""
    Q, _ = np.linalg.qr(vecs)
    if right:
        GQ = op.matmat(Q)
        A, s, Ct = np.linalg.svd(GQ, full_matrices=False)
        return A, s, Ct @ Q.T
    GtQ = op.rmatmat(Q)
    B, s, Ct = np.linalg.svd(GtQ, full_matrices=False)
    return Q @ Ct.T, s, B.T


def spectral_norm_bound(M, m, fro2, estimate=None) -> float:
    """An upper bound of ‖G‖₂, guarded against an underestimated Lanczos value and against rounding.

    ``M`` = fl(GGᵀ) (or fl(GᵀG): n × n, the smaller Gram, :func:`gram`) formed in float64 from length-``m``
    inner products, ``fro2`` = ‖G‖_F². Starting from t = ``estimate``² (a Lanczos value, a lower bound: see
    :func:`top_singular`), t grows until the float64 Cholesky factorisation of B = t·I − M succeeds. Then
    (Higham, Thm 10.5: the computed R has RᵀR = B + ΔB with |ΔB| ≤ γ_(n+1)|Rᵀ||R|, so B ⪰ −γ_(n+1)‖R‖_F² I
    and ‖R‖_F² ≤ tr B/(1 − γ_(n+1)); Rump, BIT 46 (2006) 433)

        ‖G‖₂² ≤ t + γ_(n+1)/(1 − γ_(n+1))·tr B + u·max_i |b_ii| + γ_m·‖G‖_F²,

    the last two terms for the rounding of t − m_ii and of the Gram itself (|fl(GGᵀ) − GGᵀ| ≤ γ_m|G||G|ᵀ and
    ‖|G||G|ᵀ‖₂ ≤ ‖G‖_F²). So the bound holds whatever value Lanczos returned; a low value only costs more
    factorisations. Relative excess over ‖G‖₂: about n²·u/2 (1e-10 at n = 1200). No SVD is computed.
    """
    M = np.asarray(M, dtype=np.float64)
    n = M.shape[0]
    if n == 0 or not fro2 > 0:
        return 0.0
    if estimate is None:  # only where the search starts: a dense solver up to a few thousand (ARPACK crawls on
        # the cluster of ≈ λ values at the top of ∇f's spectrum near an optimum), a loose Lanczos beyond
        theta = (
            float(eigh(M, eigvals_only=True, subset_by_index=[n - 1, n - 1], check_finite=False)[0])
            if n <= DENSE_EIG_MAX
            else float(eigsh(M, k=1, which="LA", tol=1e-6, return_eigenvectors=False)[0])
        )
    else:
        theta = float(estimate) ** 2
    dmax = float(np.max(np.diag(M)))
    theta = max(theta, dmax, 1e-300)  # λ_max ≥ every diagonal entry of M
    step = 8.0 * (n + 1) * UNIT
    lo, hi, delta = theta, None, step
    while hi is None and delta < 1e300:  # from the estimate up, doubling the relative step: a bracket
        t = theta * (1.0 + delta)
        if _cholesky_passes(M, t):
            hi = t
        else:
            lo, delta = t, 2.0 * delta
    if hi is None:
        raise ArithmeticError("no upper bound of the spectral norm found (non-finite Gram matrix?)")
    for _ in range(200):  # bisection down to the factorisation's own resolution (a low estimate costs this)
        if hi <= lo * (1.0 + 2.0 * step):
            break
        t = 0.5 * (lo + hi)
        if _cholesky_passes(M, t):
            hi = t
        else:
            lo = t
    gn = _gamma(n + 1)
    trB = n * hi * (1.0 + 2.0 * UNIT)  # ≥ tr(t·I − M): the diagonal of M is ≥ 0
    bound = hi + gn / (1.0 - gn) * trB + UNIT * hi + _gamma(m) * fro2 * (1.0 + _gamma(M.size))
    return math.sqrt(bound * (1.0 + 8.0 * UNIT)) * (1.0 + 4.0 * UNIT) + 1e-300


def _cholesky_passes(M, t) -> bool:
    """Whether LAPACK's float64 Cholesky factorisation of t·I − M runs to completion."""
    B = -M
    B[np.diag_indices(M.shape[0])] += t
    try:
        cholesky(B, lower=True, check_finite=False, overwrite_a=True)
    except LinAlgError:
        return False
    return True


def fista(fx, lam, X, *, lipschitz, rel_tol, maxiter, deadline, floor=None):
    """Accelerated proximal gradient on g = f + λ‖·‖_* from X (backtracking on the local Lipschitz constant,
    starting from ``lipschitz``; gradient-based adaptive restart of O'Donoghue & Candès). Stops when the
    certified relative gap at the current iterate is ≤ ``rel_tol`` (or the gap ≤ ``floor()``, the resolution of
    f in float64 where the caller knows it), after ``maxiter`` iterations or at the ``deadline`` (a
    time.perf_counter() value). Returns (X, f, G, nuc, iterations)."""
    f, G = fx(X)
    nuc = nuclear_norm(X)
    Lk = lipschitz
    Y, fY, GY, t = X, f, G, 1.0
    it = 0
    for it in range(1, maxiter + 1):
        lb, _, _, g = fenchel_bound(f, G, X, lam, nuc)
        if g - lb <= rel_tol * abs(g) or g - lb <= _floor(floor) or time.perf_counter() > deadline:
            break
        while True:
            Xn, sv = svt(Y - GY / Lk, lam / Lk)
            fn, Gn = fx(Xn)
            D = Xn - Y
            if fn <= fY + float(np.sum(GY * D)) + 0.5 * Lk * float(np.sum(D * D)) + 1e-15 * abs(fY):
                break
            Lk *= 2.0
        tn = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        if float(np.sum((Y - Xn) * (Xn - X))) > 0:  # the momentum points uphill: restart
            t, tn = 1.0, 1.0
        beta = (t - 1.0) / tn  # 0 right after a start or restart: then Y is the new iterate itself
        Y = Xn + beta * (Xn - X) if beta > 0 else Xn
        X, f, G, nuc, t = Xn, fn, Gn, float(np.sum(sv)), tn
        fY, GY = (f, G) if Y is Xn else fx(Y)
        Lk *= 0.9  # let the step grow again where the curvature is lower
    return X, f, G, nuc, it


def ray_step(fx, lam, X, f, G):
    """The best point t·X of the ray through X (Newton on the increasing slope ⟨∇f(tX), X⟩ + λ‖X‖_*, secant
    derivative); returns (X, f, G, nuc) there, or the input when no step lowers g."""
    nuc = nuclear_norm(X)
    if nuc == 0:
        return X, f, G, nuc
    best = (f + lam * nuc, X, f, G, nuc)
    t, slope = 1.0, float(np.sum(G * X)) + lam * nuc
    if abs(slope) <= 1e-15 * max(abs(f), lam * nuc):  # already the best scale to rounding
        return best[1:]
    h = 1e-6
    for _ in range(4):
        f2, G2 = fx((t + h) * X)
        curv = (float(np.sum(G2 * X)) + lam * nuc - slope) / h
        if not curv > 0:
            break
        t = t - slope / curv
        if not t > 0:  # ‖tX‖_* = |t|·‖X‖_*: the ray's minimum is at the origin side, not on this branch
            break
        fn, Gn = fx(t * X)
        slope = float(np.sum(Gn * X)) + lam * nuc
        gn = fn + lam * t * nuc
        if gn <= best[0]:
            best = (gn, t * X, fn, Gn, t * nuc)
        h = max(min(h, abs(slope / curv)), 1e-9)
    return best[1:]


def balanced_svd(X, *, width: int | None = None):
    """(Wt, Uh, r): X = Uhᵀ·Wt with ‖Wt‖_F² = ‖Uh‖_F² = ‖X‖_* (Claim G), Wt = Σ^(1/2)Bᵀ, Uh = Σ^(1/2)Aᵀ for the
    SVD X = AΣBᵀ, of height r = rank X (singular values above RANK_RTOL·σ₁), or ``width`` padded with zero rows."""
    A, s, Bt = np.linalg.svd(X, full_matrices=False)
    r = int(np.count_nonzero(s > RANK_RTOL * s[0])) if s.size and s[0] > 0 else 0
    d = max(r, 1) if width is None else width
    root = np.sqrt(s[:r])
    Wt = np.zeros((d, X.shape[1]))
    Uh = np.zeros((d, X.shape[0]))
    Wt[:r] = root[:, None] * Bt[:r]
    Uh[:r] = root[:, None] * A[:, :r].T
    return Wt, Uh, r


#: the rank-revealing FISTA stage stops at this relative certified gap (the rank is settled long before the
#: value: measured on a sample of the type1-partial grid); the polish at that rank takes it further
COARSE_GAP = 0.3
#: gradient norm the L-BFGS polish at the fixed width aims at (the ray step then settles the scale)
POLISH_GTOL = 1e-13
#: proximal-gradient iterations of one round of :func:`solve` at most (then the polish, then the next round)
ROUND_ITER = 2000
#: L-BFGS iterations of the polish without the certified gap shrinking by STALL_FACTOR before it stops
POLISH_PATIENCE = 100
#: L-BFGS iterations of the fixed-rank polish between two certificate checks
POLISH_CHECK_EVERY = 5
#: a round of :func:`solve` that leaves the certified gap above this fraction of the best so far is a stall
STALL_FACTOR = 0.9
#: the polish stops once an iterate's certified relative gap is below this fraction of ``tol`` (1e-12 for the
#: default tol 1e-10: the value is then within 1e-12 of the minimum, e.g. of H(τ) on full tasks)
STOP_FRACTION = 0.01


class _Certified(Exception):
    """Raised by the polish's callback once the iterate is certified (stops the L-BFGS iteration)."""


class _Stalled(Exception):
    """Raised by the polish's callback when the certified gap has not shrunk for POLISH_PATIENCE iterations."""


def polish(fx, lam, X, *, deadline, tol, maxiter, floor=None):
    """L-BFGS on the factored problem f(UhᵀWt) + (λ/2)(‖Wt‖² + ‖Uh‖²) at width r = rank X from the balanced
    factors of X (∂/∂Wt = Uh∇f + λWt, ∂/∂Uh = Wt∇fᵀ + λUh; its value is g at balanced points, Claim G),
    stopped as soon as the certified gap of an iterate is below STOP_FRACTION·tol (or at ‖∇‖ ≤ POLISH_GTOL),
    then the ray step when the scale is left off. Returns (X, f, ∇f, ‖X‖_*) there."""
    Wt0, Uh0, r = balanced_svd(X)
    n, m = X.shape[1], X.shape[0]
    last = {}

    def fg(x):
        Wt, Uh = x[: r * n].reshape(r, n), x[r * n :].reshape(r, m)
        Xc = Uh.T @ Wt
        f, G = fx(Xc)
        last["x"] = (x, Xc, f, G)
        g = np.concatenate([(Uh @ G + lam * Wt).ravel(), (Wt @ G.T + lam * Uh).ravel()])
        return f + 0.5 * lam * float(x @ x), g, f

    best = {"gap": math.inf, "it": 0}

    def certified(it, R, gn):  # the last evaluation is the accepted point of the line search, or close to it
        # the check costs two dense SVDs (‖X‖_*, ‖∇f‖₂), often more than the iteration: every POLISH_CHECK_EVERY
        # iterations (and at the deadline); it only decides when to stop, the caller certifies what is returned
        if it % POLISH_CHECK_EVERY and time.perf_counter() <= deadline:
            return
        _, Xc, f, G = last["x"]
        lb, _, _, g = fenchel_bound(f, G, Xc, lam, nuclear_norm(Xc))
        if g - lb <= STOP_FRACTION * tol * abs(g) or g - lb <= _floor(floor):
            raise _Certified
        if g - lb < STALL_FACTOR * best["gap"]:
            best.update(gap=g - lb, it=it)
        elif it - best["it"] >= POLISH_PATIENCE:  # the certified gap has stopped shrinking: L-BFGS is done here
            raise _Stalled

    x = np.concatenate([Wt0.ravel(), Uh0.ravel()])
    R, g, _ = fg(x)
    left = max(deadline - time.perf_counter(), 1.0) if math.isfinite(deadline) else None
    done = False
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            out = lbfgs_iterate(fg, x, R, g, [R], "", POLISH_GTOL, maxiter, 20, left, time.perf_counter(), certified)
        if not np.array_equal(last["x"][0], out[1]):
            fg(out[1])
    except _Certified:
        done = True
    except _Stalled:
        pass
    _, Xp, f, G = last["x"]
    nuc = nuclear_norm(Xp)
    if not done and abs(fenchel_bound(f, G, Xp, lam, nuc)[2]) > 1e-12:  # the scale left off: settle it on the ray
        Xp, f, G, nuc = ray_step(fx, lam, Xp, f, G)
    return Xp, f, G, nuc


def solve(fx, lam, X0, *, lipschitz, tol, maxiter, deadline, floor=None):
    """min_X f(X) + λ‖X‖_* from X0: FISTA to the coarse gap, :func:`polish` at width rank X (and a ray step);
    back to FISTA with a 1000× smaller target while not certified (the rank was not settled yet). ``floor``
    (optional, a callable): the gap below which f's rounding hides any further progress (:func:`reached`).

    Returns (X, f, ∇f, ‖X‖_*, proximal iterations); the certificate is :func:`fenchel_bound` at X.
    """
    X = X0
    nit = 0
    rel = max(COARSE_GAP, tol)
    prev, stalls = math.inf, 0
    for _ in range(8):
        # each round's proximal stage is capped: where f is nearly flat (tiny λ: the optimum lies far out, at
        # margins ~ log(1/λ)) FISTA crawls, and the fixed-rank polish is what gets there
        cap = min(maxiter - nit, ROUND_ITER)
        X, f, G, nuc, it = fista(
            fx, lam, X, lipschitz=lipschitz, rel_tol=rel, maxiter=cap, deadline=deadline, floor=floor
        )
        nit += it
        lb, _, _, g = fenchel_bound(f, G, X, lam, nuc)
        if reached(g - lb, g, tol, floor) or nit >= maxiter or time.perf_counter() > deadline:
            break
        rel = max(rel * 1e-3, tol)
        if nuc == 0:  # nothing to polish yet: the proximal iteration has not left the origin
            continue
        Xp, fp, Gp, nucp = polish(fx, lam, X, deadline=deadline, tol=tol, maxiter=min(maxiter, 2000), floor=floor)
        lbp, _, _, gp = fenchel_bound(fp, Gp, Xp, lam, nucp)
        if gp - lbp < g - lb:
            X, f, G, nuc = Xp, fp, Gp, nucp
            if reached(gp - lbp, gp, tol, floor):
                break
        # a round that does not shrink the certified gap by STALL_FACTOR twice in a row ends the solve: the
        # gradient and the certificate disagree (a wrong ∇f) or rounding has the last word; not certified
        gap = min(g - lb, gp - lbp)
        stalls = stalls + 1 if gap > STALL_FACTOR * prev else 0
        if stalls >= 2:
            break
        prev = min(prev, gap)
    return X, f, G, nuc, nit


def _floor(floor) -> float:
    return 0.0 if floor is None else float(floor())


def reached(gap, g, tol, floor=None) -> bool:
    """Whether a certified gap meets the target: gap ≤ tol·|g|, or gap ≤ ``floor()`` (f's float64 resolution:
    below it the gap measures rounding, not distance to the optimum)."""
    return gap <= tol * abs(g) or gap <= _floor(floor)


# ============================================================================= low-rank (factored) solver
# For problems whose X is too large for a full SVD per iteration (the training-set optimum: X is K·L × n_w,
# 15000 × 1200 at the paper's scale), min f + λ‖·‖_* is solved in factored form X = Wᵀ·U (W r × n, U r × m),
# Burer–Monteiro style: ψ(W, U) = f(WᵀU) + (λ/2)(‖W‖² + ‖U‖²) has g(WᵀU) ≤ ψ with equality at balanced
# factors (Claim G), and a stationary point of ψ is the global minimiser of g iff ‖∇f‖₂ ≤ λ (Claim H). The
# rank grows along the top singular pairs of −∇f outside the span of X (the directions Claim I says lower ψ),
# found by Lanczos; the certificate is the same Fenchel bound, with ‖∇f‖₂ from spectral_norm_bound.

#: directions added to the factors per growth step at most (Lanczos block of the growth step)
GROW_BLOCK = 32
#: L-BFGS iterations between two estimates of the certified gap during a factored polish
CHECK_EVERY = 10
#: singular values of X below this fraction of σ₁ are dropped when the factors are rebalanced
DROP_RTOL = 1e-10
#: warm-started power steps of the polish's estimates of σ₁(∇f) (full and off the span of X)
POWER_STEPS = 3
#: damping of the polish's scaled variables, relative to σ₁(X): (σ_i + ε·σ₁)^(−1/2)
PRECOND_EPS = 1e-2
#: L-BFGS iterations of one factored polish at most: then the factors are rebalanced, vanished directions
#: dropped and the scaled variables recomputed (the preconditioner is frozen within a polish)
LOWRANK_ROUND_ITER = 60


class LowRankState:
    """The factored iterate and what the last evaluation at it gave: W (r × n), U (r × m), f, E (the entropy
    term), ⟨∇f, X⟩, and the oracle (whose last evaluation holds ∇f for Lanczos and the norm bound)."""

    def __init__(self, W, U, f, E, inner, lam):
        self.W, self.U, self.f, self.E, self.inner, self.lam = W, U, f, E, inner, lam

    @property
    def rank(self) -> int:
        return self.W.shape[0]

    @property
    def psi(self) -> float:
        """ψ(W, U) = f + (λ/2)(‖W‖² + ‖U‖²) ≥ g(WᵀU), = g at balanced factors."""
        return self.f + 0.5 * self.lam * (float(np.sum(self.W * self.W)) + float(np.sum(self.U * self.U)))


def rebalance(W, U, *, drop=DROP_RTOL):
    """Balanced factors of X = WᵀU (Claim G: ‖W′‖² = ‖U′‖² = ‖X‖_*) from the SVD of an r × r core (QR of both
    factors; no SVD of X), dropping singular values ≤ ``drop``·σ₁. Returns (W′, U′, σ(X))."""
    if W.shape[0] == 0:
        return W, U, np.zeros(0)
    Qw, Rw = np.linalg.qr(W.T)
    Qu, Ru = np.linalg.qr(U.T)
    A, s, Bt = np.linalg.svd(Rw @ Ru.T, full_matrices=False)
    keep = s > drop * s[0] if s.size and s[0] > 0 else np.zeros(s.size, bool)
    root = np.sqrt(s[keep])
    return (Qw @ (A[:, keep] * root)).T, root[:, None] * (Bt[keep] @ Qu.T), s


def _off_span_ops(oracle, W, U):
    """(v ↦ Gv, u ↦ Gᵀu) for (I − P_W)·G·(I − P_U), G = ∇f at the oracle's last evaluation (n × m, the
    orientation of WᵀU; P the projections onto the row spaces of W and U)."""
    Qw = np.linalg.qr(W.T)[0] if W.shape[0] else np.zeros((W.shape[1], 0))
    Qu = np.linalg.qr(U.T)[0] if U.shape[0] else np.zeros((U.shape[1], 0))

    def mv(v):
        v = v - Qu @ (Qu.T @ v)
        w = oracle.matvec(v)
        return w - Qw @ (Qw.T @ w)

    def rmv(w):
        w = w - Qw @ (Qw.T @ w)
        v = oracle.rmatvec(w)
        return v - Qu @ (Qu.T @ v)

    return mv, rmv


def _off_span(oracle, W, U, k, tol, start=None, maxiter=None):
    """Top-k singular triplets of the part of ∇f off the span of X = WᵀU (:func:`_off_span_ops`): the
    directions Claim I says lower ψ when σ > λ, without the ones X already has."""
    mv, rmv = _off_span_ops(oracle, W, U)
    return top_singular(mv, rmv, (W.shape[1], U.shape[1]), k, tol=tol, start=start, maxiter=maxiter)


def subspace_sigma(oracle, W, extra=()):
    """A Ritz estimate (≤ σ₁) of ‖∇f‖₂ on the span of X's columns (the rows of W) and the vectors ``extra``:
    σ₁(QᵀG) for Q an orthonormal basis of them. Near a stationary point the top of ∇f's spectrum is a cluster
    of r values ≈ λ, one per direction of X, which Lanczos or power steps from one vector sample at random; this
    estimate sees the largest of them (about r matrix-vector products)."""
    cols = [W.T] + [np.asarray(e, dtype=np.float64)[:, None] for e in extra]
    Q = np.linalg.qr(np.hstack(cols))[0] if sum(c.shape[1] for c in cols) else np.zeros((W.shape[1], 0))
    if Q.shape[1] == 0:
        return 0.0
    B = oracle.rmatmat(Q)  # Gᵀ Q, m × q
    return float(np.sqrt(max(np.linalg.eigvalsh(B.T @ B)[-1], 0.0)))


def _power(mv, rmv, v, steps):
    """``steps`` warm-started power steps on GᵀG from v: (‖Gv‖ ≤ σ₁(G), the new v). A cheap *estimate*."""
    for _ in range(steps):
        w = rmv(mv(v))
        nw = float(np.linalg.norm(w))
        if not nw > 0:
            return 0.0, v
        v = w / nw
    return float(np.linalg.norm(mv(v))), v


def grow(oracle, st, *, k=GROW_BLOCK, margin=1e-9, lipschitz=1.0, tol=1e-6, log=None):
    """Claim I's descent step: the top-k singular pairs (a_i, σ_i, b_i) of −∇f off the span of X with
    σ_i > λ(1 + margin) are appended as balanced rows √(c(σ_i − λ))·(a_i, −b_i) (a proximal-gradient step of
    length c restricted to them; the rows stay orthogonal to W, U, so ψ = g along the way), c by a bracketing
    secant search on dψ/dc from 1/``lipschitz``. Returns (the new state or ``st``, σ₁ off the span)."""
    lam = st.lam
    A, s, Bt = _off_span(oracle, st.W, st.U, k, tol, maxiter=30)
    add = s > lam * (1.0 + margin)
    if not add.any():
        return st, float(s[0]) if s.size else 0.0
    a, b, excess = A[:, add], Bt[add], s[add] - lam
    nr = int(add.sum())

    def at(c):
        root = np.sqrt(c * excess)
        W = np.vstack([st.W, (a * root).T])
        U = np.vstack([st.U, -root[:, None] * b])
        f, E, dW, dU, inner = oracle.factored(W, U)
        new = LowRankState(W, U, f, E, inner, lam)
        # dψ/dc: (1/c)⟨∂f/∂U_new, U_new⟩ + λΣ(σ_i − λ) (the new rows scale as √c)
        slope = float(np.sum(dU[-nr:] * U[-nr:])) / c + lam * float(np.sum(excess))
        return new, slope

    c_lo, c, best = 0.0, 1.0 / lipschitz, st
    slope_lo = -float(np.sum(excess * excess))  # at c = 0: −Σ σ_i(σ_i − λ) + λΣ(σ_i − λ)
    for _ in range(40):  # bracket: the slope changes sign between c_lo and c
        new, slope = at(c)
        if new.psi < best.psi:
            best = new
        if slope >= 0 or not math.isfinite(new.psi):
            break
        c_lo, slope_lo, c = c, slope, 4.0 * c
    c_hi, slope_hi = c, slope
    for _ in range(4):  # secant steps on the slope inside the bracket
        if not (math.isfinite(slope_hi) and slope_hi > slope_lo):
            break
        c = c_lo - slope_lo * (c_hi - c_lo) / (slope_hi - slope_lo)
        if not c_lo < c < c_hi:
            break
        new, slope = at(c)
        if new.psi < best.psi:
            best = new
        if slope < 0:
            c_lo, slope_lo = c, slope
        else:
            c_hi, slope_hi = c, slope
    if log is not None:
        log(f"  grow: {nr} directions (sigma/lam {s[0] / lam:.6g} .. {s[add][-1] / lam:.6g}), psi {best.psi:.15g}")
    return best, float(s[0])


class _Done(Exception):
    """Raised by the factored polish's callback to stop L-BFGS (the state is in the closure)."""


def polish_factored(
    oracle,
    st,
    *,
    tol,
    maxiter,
    deadline,
    every=CHECK_EVERY,
    patience=3,
    grow_check=True,
    scaled=True,
    log=None,
    gtol=0.0,
):
    """L-BFGS on ψ(W, U) at the width of ``st`` (no growth), checking every ``every`` iterations the gap
    estimate ψ − s·E (s from a warm-started power estimate of σ₁(∇f), a lower bound: an *estimate*; the
    caller certifies with :func:`spectral_norm_bound`). Stops when the estimate is below STOP_FRACTION·tol·ψ;
    with ``grow_check``, when the part of ∇f off the span of X has σ > λ and its share (1 − λ/σ)·E of the
    gap is at least half of it (the rank must grow first); when the estimate has not halved in ``patience``
    checks; when the gradient of ψ in the scaled variables has norm ≤ ``gtol`` (a stationary point: the
    width-limited problem, whose gap never closes); after ``maxiter`` iterations or at the ``deadline``. Returns
    (the last state at an accepted iterate, iterations)."""
    lam, r, n = st.lam, st.rank, st.W.shape[1]
    last, track = {}, {"best": math.inf, "since": 0, "v": None, "it": 0}

    # scaled variables (ScaledGD, Tong–Ma–Chi 2021): W = T·W̃, U = T·Ũ with T = diag((σ_i + ε)^(−1/2)) from the
    # row norms of the (balanced) start, so that L-BFGS sees the metric (UUᵀ)^(−1) of the factored problem and
    # its speed no longer depends on the spread of X's singular values (a small σ_i otherwise moves at rate σ_i)
    rn = np.sqrt(np.sum(st.W * st.W, axis=1) * np.sum(st.U * st.U, axis=1))  # σ_i at balanced factors
    T = 1.0 / np.sqrt(rn + PRECOND_EPS * (float(rn.max()) if rn.size else 0.0) + 1e-300) if scaled else np.ones(r)
    Tc = T[:, None]

    def fg(x, overflow="inf"):
        W, U = Tc * x[: r * n].reshape(r, n), Tc * x[r * n :].reshape(r, -1)
        f, E, dW, dU, inner = oracle.factored(W, U)
        last["st"] = LowRankState(W, U, f, E, inner, lam)
        gW, gU = Tc * (dW + lam * W), Tc * (dU + lam * U)
        psi = f + 0.5 * lam * (float(np.sum(W * W)) + float(np.sum(U * U)))
        return psi, np.concatenate([gW.ravel(), gU.ravel()]), None

    def check(it, R, gn):
        track["it"] = it
        if it % every and time.perf_counter() <= deadline:
            return
        cur = last["st"]
        if track["v"] is None:
            track["v"] = np.random.default_rng(it).standard_normal(cur.U.shape[1])
            track["voff"] = track["v"].copy()
        s_pow, track["v"] = _power(oracle.matvec, oracle.rmatvec, track["v"], POWER_STEPS)
        s_all = max(s_pow, subspace_sigma(oracle, cur.W, (oracle.matvec(track["v"]),)))
        gap = cur.psi - min(1.0, lam / max(s_all, 1e-300)) * cur.E
        if gap <= STOP_FRACTION * tol * abs(cur.psi) or time.perf_counter() > deadline:
            raise _Done
        if grow_check:  # is the gap the rank's? (−∇f off the span of X above λ: Claim I, grow now)
            mv, rmv = _off_span_ops(oracle, cur.W, cur.U)
            s_off, track["voff"] = _power(mv, rmv, track["voff"], POWER_STEPS)
            if log is not None:
                msg = f"    it {it}: psi {cur.psi:.15g}, gap ~{gap:.2e}, sigma/lam {s_all / lam:.9f}"
                log(f"{msg}, off the span {s_off / lam:.9f}")
            if s_off > lam and (1.0 - lam / s_off) * cur.E >= 0.5 * gap:
                raise _Done
        if gap < 0.5 * track["best"]:
            track.update(best=gap, since=0)
        else:
            track["since"] += 1
            if track["since"] >= patience:
                raise _Done

    x = np.concatenate([(st.W / Tc).ravel(), (st.U / Tc).ravel()])
    R, g, _ = fg(x)
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            out = lbfgs_iterate(fg, x, R, g, [R], "", gtol, maxiter, 20, None, time.perf_counter(), check)
        if not np.array_equal(last["st"].W.ravel(), (Tc * out[1][: r * n].reshape(r, n)).ravel()):
            fg(out[1])
        track["it"] = out[0]
    except _Done:
        pass
    return last["st"], track["it"]


def certify_state(oracle, st, estimate=None):
    """(LB, ρ, align, ψ) at the state: the Fenchel bound s·E with s = min(1, λ/γ), γ the guarded upper bound
    of ‖∇f‖₂ (:func:`spectral_norm_bound` through ``oracle.norm_bound``), whatever ``estimate`` (a Lanczos
    value) says. ψ = g(WᵀU) at balanced factors, else an upper bound of it."""
    gop = oracle.norm_bound(estimate)
    nuc = 0.5 * (float(np.sum(st.W * st.W)) + float(np.sum(st.U * st.U)))
    lb, rho, align, _ = fenchel_bound(st.f, None, None, st.lam, nuc, gop=gop, E=st.E, inner=st.inner)
    return lb, rho, align, st.psi


def solve_lowrank(oracle, lam, W0, U0, *, tol, maxiter, deadline, lipschitz=1.0, log=None):
    """min_X f(X) + λ‖X‖_* in factored form X = WᵀU from (W0, U0) (any width, 0 included): rounds of a
    factored L-BFGS polish (:func:`polish_factored`), a rebalance that drops vanished directions, and a growth
    step along −∇f's top singular pairs off the span of X (:func:`grow`), until the Fenchel certificate with
    the guarded ‖∇f‖₂ (:func:`certify_state`) closes to ``tol`` relative, ``maxiter`` L-BFGS iterations in
    all, or the ``deadline``.

    ``oracle`` provides ``factored(W, U) → (f, E, ∂f/∂W, ∂f/∂U, ⟨∇f, X⟩)`` (and keeps ∇f of that
    evaluation), ``top(k, tol, start) → (A, σ, Bᵀ)``, ``matvec``/``rmatvec``/``rmatmat`` (products with that
    ∇f) and ``norm_bound(estimate) → γ ≥ ‖∇f‖₂``. Returns (state, (LB, ρ, align, ψ), rounds, L-BFGS iterations).
    """
    say = log or (lambda msg: None)
    f, E, _, _, inner = oracle.factored(W0, U0)
    st = LowRankState(W0, U0, f, E, inner, lam)
    its, best_gap, cert, rnd, stalls = 0, math.inf, None, 0, 0
    for rnd in range(1, 10**6):
        if st.rank:
            st, n_it = polish_factored(
                oracle, st, tol=tol, maxiter=max(1, min(LOWRANK_ROUND_ITER, maxiter - its)), deadline=deadline, log=log
            )
            its += n_it
            W, U, sv = rebalance(st.W, st.U)
            f, E, _, _, inner = oracle.factored(W, U)
            st = LowRankState(W, U, f, E, inner, lam)
        A, s, Bt = oracle.top(1, tol=1e-9, maxiter=30)
        s = [max(float(s[0]), subspace_sigma(oracle, st.W, (A[:, 0],)))]
        est_gap = st.psi - min(1.0, lam / float(s[0])) * st.E
        if est_gap <= tol * abs(st.psi):  # the estimate says certified: the guarded bound decides
            cert = certify_state(oracle, st, float(s[0]))
            say(f"round {rnd}: width {st.rank}, psi {st.psi:.15g}, certified gap {cert[3] - cert[0]:.3e}")
            if reached(cert[3] - cert[0], cert[3], tol):
                break
        say(
            f"round {rnd}: width {st.rank}, psi {st.psi:.15g}, estimated gap {est_gap:.3e}, sigma1/lam {s[0] / lam:.9f}"
        )
        if time.perf_counter() > deadline or its >= maxiter:
            break
        st, s_off = grow(oracle, st, lipschitz=lipschitz, log=log)
        # no direction to add and no progress in three rounds: rounding has the last word (or ∇f disagrees with f)
        stalls = stalls + 1 if est_gap >= STALL_FACTOR * best_gap and s_off <= lam else 0
        if stalls >= 3:
            break
        best_gap = min(best_gap, est_gap)
    if cert is None or cert[3] - cert[0] > tol * abs(cert[3]):
        A, s, Bt = oracle.top(1, tol=1e-9, maxiter=30)
        cert = certify_state(oracle, st, float(s[0]))
    return st, cert, rnd, its
