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


def fenchel_bound(f, G, X, lam, nuc):
    """(LB, ρ, align, g) at X with f(X), ∇f(X) = G, ‖X‖_* = nuc: the lower bound s·E on min g, ρ = ‖G‖₂/λ,
    align = (⟨G, X⟩ + λ‖X‖_*)/(λ‖X‖_*) (0 at the optimum, Claim H) and g(X)."""
    gop = float(np.linalg.norm(G, 2)) if G.size else 0.0
    inner = float(np.sum(G * X))
    E = f - inner  # Σ c_x H(p_x) ≥ 0
    s = 1.0 if gop <= lam else lam / gop
    align = (inner + lam * nuc) / (lam * nuc) if nuc > 0 else 0.0
    return s * max(E, 0.0), gop / lam, align, f + lam * nuc


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
