"""The training-set optimum: the certified global minimiser of the training objective of network h.

**The problem.** For sentences S (N × L word indices) with labels y, the objective SGD with weight decay
minimises is

    R̂(W, U) = f̂(ÛᵀW) + (λ/2)(‖W‖² + ‖U‖²),   f̂(X) = (1/N) Σ_i CE(s_i, y_i),   s_i(j) = Σ_ℓ X[(j, ℓ), S[i, ℓ]],

the true risk (5) with the law of class k's sentences replaced by the empirical law of its training sentences.
f̂ is again a sum of cross entropies of linear maps of X = ÛᵀW, so Claim G's argument ((159)–(167)) holds
verbatim: R̂(W, U) ≥ g(ÛᵀW), g = f̂ + λ‖·‖_*, with equality at balanced factors, so over every width
d ≥ rank X* the minimum of R̂ is the minimum of the convex g, for any word frequencies, latent set and sample.
And the Fenchel certificate of :mod:`fctheory._nuclear` holds verbatim (its proof only uses that f is a
non-negative combination of CE_k(A_x X)):

    min R̂ ≥ LB(X) = s·E(X),   E = f̂ − ⟨∇f̂, X⟩ = (1/N) Σ_i H(p_i),   s = min(1, λ/‖∇f̂(X)‖₂).

**The solve.** At the paper's scale X is K·L × n_w = 15000 × 1200: no SVD of it is ever formed. The problem is
solved in factored form X = ÛᵀW (:func:`fctheory._nuclear.solve_lowrank`): L-BFGS on R̂ at a fixed width,
rebalancing through an r × r core, and growth along the top singular pairs of −∇f̂ off the span of X (Claim I)
found by Lanczos (ARPACK); f̂ and ∇f̂ cost N·K·L gathers and scatters (:mod:`fctheory.optima.sample`, on the
``backend``), the factored gradients two GEMMs.

**The certificate's ‖∇f̂‖₂.** A Lanczos value is a Ritz value: a *lower* bound of ‖∇f̂‖₂, which would make s,
hence the bound, too large. The certificate never uses it as the norm: it takes γ ≥ ‖∇f̂‖₂ from a float64
Cholesky factorisation of γ²·I − ∇f̂∇f̂ᵀ (the n_w × n_w Gram matrix), with the a-priori rounding terms of the
factorisation and of the Gram matrix added (:func:`fctheory._nuclear.spectral_norm_bound`); the Lanczos value
only chooses where the search for γ starts. ``precision="interval"`` redoes everything in ball arithmetic
(:func:`fctheory.optima.certificates.certify_optimality_empirical`) where N·K is small.

**Width.** The result has width rank X* (the smallest width attaining min R̂). A user's d ≥ rank X* pads it
with zero rows; for d < rank X*, min over width d may exceed min g: the result then holds a width-d local
minimiser (L-BFGS from the balanced factors of X* truncated to their top d directions), its R̂, the certified
lower bound (valid for width d too), and ``R_convex`` = min g, both numbers stated in the message.
"""

from __future__ import annotations

import logging
import math
import time

import numpy as np

from .._budget import check_work
from .._nuclear import (
    LowRankState,
    polish_factored,
    rebalance,
    relative_gap,
    solve_lowrank,
    spectral_norm_bound,
    top_singular,
)
from .._validate import fail
from ..configurations import type1_configuration
from ..risk.empirical import check_data, empirical_risk
from .certificates import INTERVAL_MAX_PAIRS, certify_optimality_empirical
from .result import OptimumResult
from .sample import SampleF, factors_to_network, from_table, network_to_factors
from .sample_blocks import BlockSample, as_client

__all__ = ["SampleOracle", "optimum_empirical", "sample_problem"]

#: the solver's rounds (width, value, gap) at INFO level: logging.getLogger("fctheory.optima.empirical")
LOG = logging.getLogger(__name__)


class SampleOracle:
    """What :func:`fctheory._nuclear.solve_lowrank` asks of f̂: factored evaluations, products with the last
    ∇f̂ (Lanczos, Ritz estimates) and the guarded bound of its spectral norm. ``sf``: a :class:`SampleF` or the
    same interface on a cluster (:class:`fctheory.optima.sample_blocks.BlockSample`)."""

    def __init__(self, sf):
        self.sf = sf

    @property
    def nfev(self) -> int:
        return self.sf.nfev

    def factored(self, W, U):
        return self.sf.factored(W, U)

    def matvec(self, v):
        return self.sf.matvec(v)

    def rmatvec(self, u):
        return self.sf.rmatvec(u)

    def rmatmat(self, Q):
        return self.sf.rmatmat(Q)

    def top(self, k, *, tol=1e-10, start=None, maxiter=None):
        return top_singular(self.matvec, self.rmatvec, self.sf.shape, k, tol=tol, start=start, maxiter=maxiter)

    def norm_bound(self, estimate=None) -> float:
        M, m, fro2 = self.sf.gram()
        return spectral_norm_bound(M, m, fro2, estimate)


def sample_problem(task, S, y, backend="numba", client=None, blocks=None):
    """(SampleF or BlockSample, SampleOracle) of the sentences (S, y), after the checks of the data and of the
    budget; with a Dask ``client`` or ``blocks``, the sentences split into blocks (:mod:`.sample_blocks`)."""
    check_data(task, S, y, name="data", name_y="data")
    N, KL, n_w = S.shape[0], task.K * task.L, task.n_w
    # the score table, ∇f̂ and its Gram, the softmax table P (N × K), the factors
    check_work("data", f"{N} sentences", bytes=8 * (3 * KL * n_w + min(KL, n_w) ** 2 + 2 * N * task.K),
               what="the training-set optimum")  # fmt: skip
    if client is not None or blocks is not None:
        cl = as_client(client)
        nb = blocks or 4 * max(len(cl.scheduler_info().get("workers", {})), 1)
        sf = BlockSample(task, S, y, blocks=nb, client=cl, backend=backend)
    else:
        sf = SampleF(task, S, y, backend)
    return sf, SampleOracle(sf)


def optimum_empirical(task, lam, data, d, tol, maxiter, precision, where, deadline, t0) -> OptimumResult:
    """:func:`fctheory.optimum` with ``data=(S, y)``: the certified global minimiser of R̂ (module docstring);
    ``where`` = (backend, Dask client or None, blocks or None)."""
    S, y = data
    if precision == "interval" and S.shape[0] * task.K > INTERVAL_MAX_PAIRS:
        fail("precision", precision, f"ball arithmetic needs N*K <= {INTERVAL_MAX_PAIRS} (sentence, class) pairs")
    sf, oracle = sample_problem(task, S, y, *where)
    n_w, LK = task.n_w, task.L * task.K
    # ‖∇²f̂‖₂ ≤ L/2 (each score sums L entries, the CE's Hessian is ≤ 1/2): the growth step's first trial
    st, cert, rounds, its = solve_lowrank(
        oracle, lam, np.zeros((0, n_w)), np.zeros((0, LK)), tol=tol, maxiter=maxiter, deadline=deadline,
        lipschitz=task.L / 2.0, log=LOG.info,
    )  # fmt: skip
    W, Uc, _ = rebalance(st.W, st.U)
    r = W.shape[0]
    f, E, dW, dU, inner = oracle.factored(W, Uc)
    st = LowRankState(W, Uc, f, E, inner, lam)
    lb, rho, align, R = cert
    R = st.psi  # the balanced point's R̂ (= g(X*)); cert was taken at the same factors before the last rebalance
    lb = min(lb, R) if R - lb < 0 else lb
    R_convex, info = R, {}
    if d is not None and d < r:
        st, info = _width_limited(oracle, st, d, tol, maxiter, deadline)
        f, E, dW, dU, inner = oracle.factored(st.W, st.U)
        R = st.psi
    Wn, Un = factors_to_network(st.W, st.U, task.K, task.L)
    if d is not None and d > Wn.shape[0]:
        Wn = np.vstack([Wn, np.zeros((d - Wn.shape[0], n_w))])
        Un = factors_to_network(*network_to_factors(Wn, _pad_u(Un, task, d), task.K, task.L), task.K, task.L)[1]
    gap = R - lb
    ok = bool(gap <= tol * abs(R) or gap <= 0.0)
    grad_norm = float(np.sqrt(np.sum((dW + lam * st.W) ** 2) + np.sum((dU + lam * st.U) ** 2)))
    out = OptimumResult(
        X=from_table(st.W.T @ st.U, task.K, task.L) if st.W.shape[0] else np.zeros((task.K * task.L, n_w)),
        W=Wn if Wn.shape[0] else np.zeros((1, n_w)), U=Un if Un.shape[1] else np.zeros((task.K, task.L)),
        width=r, R=float(R), lower_bound=float(lb), gap=float(gap), rel_gap=relative_gap(gap, R), rho=float(rho),
        align=float(align), grad_norm=grad_norm, R_type1=_type1_value(task, S, y, lam), R_type3=float("nan"),
        network="h", certified=ok, status="certified" if ok else ("width-limited" if info else "not certified"),
        message=_message(ok, gap, R, r, info, R_convex), nit=int(its), nfev=oracle.nfev, seconds=0.0,
        R_convex=float(R_convex),
    )  # fmt: skip
    if precision == "interval":
        out.interval = certify_optimality_empirical(task, out.W, out.U, lam, S, y)
    out.seconds = time.perf_counter() - t0
    return out


def _pad_u(U, task, d):
    """U (K × L·r) padded to width d with zero coordinates at every position."""
    r = U.shape[1] // task.L
    out = np.zeros((task.K, task.L, d))
    out[:, :, :r] = U.reshape(task.K, task.L, r)
    return out.reshape(task.K, task.L * d)


def _width_limited(oracle, st, d, tol, maxiter, deadline):
    """The width-d local minimiser from the top-d balanced directions of X* (min over width d may exceed min g)."""
    W, U = st.W[:d].copy(), st.U[:d].copy()  # rebalance sorted the directions by singular value
    f, E, _, _, inner = oracle.factored(W, U)
    start = LowRankState(W, U, f, E, inner, st.lam)
    # the width-d problem is non-convex: no certificate can close; L-BFGS to its stationary point
    out, _ = polish_factored(oracle, start, tol=0.0, maxiter=maxiter, deadline=deadline, patience=10**9,
                             grow_check=False)  # fmt: skip
    return out, {"d": d, "truncated": start.psi}


def _message(ok, gap, R, r, info, R_convex):
    if info:
        return (f"rank X* = {r} > d = {info['d']}: the convex optimum min g = {R_convex:.12g} (certified) is a lower "
                f"bound of the width-{info['d']} objective; a width-{info['d']} local minimiser from the truncated "
                f"balanced factors has R = {R:.12g} (gap {gap:.2e} to the bound)")  # fmt: skip
    if ok:
        return (f"global minimiser of the training objective: certified gap {gap:.2e} (relative "
                f"{relative_gap(gap, R):.1e}) at width {r}")  # fmt: skip
    return f"certified gap {gap:.2e} above tol*|R| (stopped early: raise maxiter or max_seconds)"


def _type1_value(task, S, y, lam):
    """R̂ at Theorem 1's type-I configuration (its population constants) on this sample; nan where it has none."""
    if task.n_c < 2:
        return float("nan")
    try:
        W, U = type1_configuration(task, d=task.n_c, lam=lam)
    except Exception:  # noqa: BLE001 - outside Theorem 1's range: nothing to compare
        return float("nan")
    with np.errstate(over="ignore", invalid="ignore"):
        return float(empirical_risk(task, W, U, S, y, lam, grad=False)[0])


def deadline_of(sec, t0):
    return t0 + (sec if sec is not None and math.isfinite(sec) else math.inf)
