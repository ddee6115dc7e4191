"""How far is a trained network from the global optimum of its own objective? :func:`certify`.

For network h with weights (W, U) and X = ÛᵀW, the objective is R(W, U) = f(X) + (λ/2)(‖W‖² + ‖U‖²) with f the
training average f̂ (``data=(S, y)``: what SGD minimised, :mod:`fctheory.optima.empirical`) or the true risk (5)
(``data=None``, by the exact engine's enumeration). Its global minimum over every width is min g,
g = f + λ‖·‖_* (Claim G, (159)–(167)), and the Fenchel bound of :mod:`fctheory._nuclear` holds at **any** point
X′, not only at an optimum:

    min R ≥ LB(X′) = s′·E(X′),   E = f − ⟨∇f, X′⟩,   s′ = min(1, λ/‖∇f(X′)‖₂).

:func:`certify` takes it at the network's own X (no solve: the certificate of the weights as they are) and, with
``solve=True`` (default), also at the solved optimum (started from the network's own balanced factors), keeping
the larger. The gap R(W, U) − LB is then a rigorous upper bound of the network's excess R(W, U) − min R (up to
the float64 rounding of f and ∇f; ``precision="interval"`` removes that too, in ball arithmetic, where the
sample or the enumeration is small). ‖∇f‖₂ is never a Lanczos value: an upper bound from a Cholesky test
(:func:`fctheory._nuclear.spectral_norm_bound`), or an SVD on small population tasks.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from .._nuclear import LowRankState, certify_state, fenchel_bound, nuclear_norm, rebalance, relative_gap, solve_lowrank
from .._validate import Anything, Array, Bool, Choice, Instance, Int, Real, fail, public, result_type
from ..network import U_hat
from ..risk.empirical import check_weights
from ..risk.evaluation import evaluate
from ..risk.plan import LIMIT, resolve_budget
from ..task import Task
from .api import Sample, optimum
from .certificates import INTERVAL_MAX_PAIRS, certify_optimality, certify_optimality_empirical
from .empirical import LOG, deadline_of, sample_problem
from .population import EnumeratedF
from .sample import SAMPLE_BACKENDS, network_to_factors

__all__ = ["Certificate", "certify"]


@result_type
@dataclass
class Certificate:
    """Outcome of :func:`certify`: a network's objective, a certified lower bound on the global minimum, the gap.

    Attributes
    ----------
    R : float
        The network's objective R(W, U): R̂ of the sample (``data=``) or the true risk (5).
    lower_bound : float
        A certified lower bound on min R over all weights of every width: the larger of ``lower_bound_network``
        and ``lower_bound_optimum``.
    gap, rel_gap : float
        R − lower_bound ≥ R − min R (the network's excess, bounded from above) and gap/|R|.
    lower_bound_network : float
        The Fenchel bound s·E at the network's own X = ÛᵀW.
    lower_bound_optimum, R_optimum : float
        The same bound at the solved optimum, and R there (nan without ``solve``).
    rho : float
        ‖∇f(X)‖₂/λ at the network's X, from above (≤ 1 and ``align`` = 0 exactly at a global minimiser, Claim H).
    align : float
        (⟨∇f, X⟩ + λ‖X‖_*)/(λ‖X‖_*) at the network's X; ‖X‖_* ≤ (‖W‖² + ‖U‖²)/2 (Claim G).
    width, rank : int
        The network's width d and rank X (above, the network carries redundant directions).
    objective : str
        ``"training"`` (R̂ of ``data``) or ``"population"`` (the true risk (5)).
    message : str
        One sentence: how close to the global optimum of its own objective the network is.
    seconds : float
    interval : dict or None
        ``precision="interval"``: rigorous float64 bounds {"R": (lo, hi), "lower_bound": lo, "gap": hi} from ball
        arithmetic (at the network's weights, and at the solved optimum's when that bound is larger).
    """

    R: float
    lower_bound: float
    gap: float
    rel_gap: float
    lower_bound_network: float
    lower_bound_optimum: float
    R_optimum: float
    rho: float
    align: float
    width: int
    rank: int
    objective: str
    message: str
    seconds: float
    interval: dict | None = None


@public(
    task=Instance(Task),
    W=Array(ndim=2),
    U=Array(ndim=2),
    lam=Real(lo=1e-12, hi=1e12),
    data=Sample(),
    solve=Bool(),
    precision=Choice("float", "interval"),
    tol=Real(lo=0.0, lo_open=True, hi=1.0),
    backend=Choice(*SAMPLE_BACKENDS),
    client=Anything("None, a dask.distributed Client or a scheduler address (data= only)"),
    blocks=Int(min=1, max=10**7).or_none(),
    max_seconds=LIMIT,
    max_bytes=LIMIT,
)
def certify(
    task: Task,
    W,
    U,
    *,
    lam,
    data=None,
    solve: bool = True,
    precision: str = "float",
    tol: float = 1e-10,
    backend: str = "numba",
    client=None,
    blocks: int | None = None,
    max_seconds=None,
    max_bytes=None,
) -> Certificate:
    """A certificate of how far the network h with weights (W, U) is from the global optimum of its objective.

    The objective is R(W, U) = f(ÛᵀW) + (λ/2)(‖W‖² + ‖U‖²) with f the training average of ``data`` (what the
    network was trained on) or, for ``data=None``, the true risk (5) by the exact engine's enumeration. The
    lower bound on min R is the Fenchel bound s·E ((159)–(167), Claims G and H; module docstring) at the
    network's own X = ÛᵀW and, with ``solve``, at the certified optimum (:func:`fctheory.optimum`), whichever is
    larger. Both hold over every width, so ``gap`` bounds R(W, U) − min R from above whatever the network's d.

    Parameters
    ----------
    task : Task
    W : array_like, shape (d, n_w)
    U : array_like, shape (K, L·d)
    lam : float
        λ of both weight decays, 1e-12 ≤ λ ≤ 1e12.
    data : (S, y) or None
        The training sentences (N × L word indices) and labels; None: the true risk (5), where the engine
        enumerates the task (R(W, U) itself needs the enumeration).
    solve : bool
        Also solve for the optimum (from the network's balanced factors for ``data``) and take the bound there
        (default). ``False``: the bound at the network's X only (one evaluation and one norm bound).
    precision : {"float", "interval"}
        ``"interval"``: rigorous bounds in ball arithmetic (python-flint), for N·K (data) or the enumerated
        (sentence, class) pairs up to :data:`~fctheory.optima.certificates.INTERVAL_MAX_PAIRS`.
    tol : float
        Relative gap the solve aims at (default 1e-10).
    backend, client, blocks
        ``data=`` only: where f̂ and ∇f̂ run (as :func:`fctheory.optimum`: backend, Dask cluster, sentence blocks).
    max_seconds, max_bytes : float or None
        Budget of the solve and of each evaluation (None: the budget in force).

    Returns
    -------
    Certificate

    Raises
    ------
    FCTheoryError
        Bad input or shapes, a task or sample above the budget, or ``precision="interval"`` above its size limit.

    Examples
    --------
    >>> import fctheory as fc
    >>> task = fc.Task.random(3, 2, 2, 4, seed=0)
    >>> S, y = task.sample(3, seed=1)
    >>> W, U, _ = fc.finite_sample.minimize_empirical_risk(task, S, y, d=4, lam=0.05, seed=0, maxiter=5)
    >>> c = certify(task, W, U, lam=0.05, data=(S, y))
    >>> bool(c.lower_bound <= c.R and c.gap > 0)
    True
    """
    check_weights(task, W, U)
    _check_scale(task, W, U, lam)
    t0 = time.perf_counter()
    sec, _ = resolve_budget(max_seconds, max_bytes)
    deadline = deadline_of(sec, t0)
    if data is not None:
        out = _certify_sample(task, W, U, lam, data, solve, tol, (backend, client, blocks), deadline)
    else:
        out = _certify_population(task, W, U, lam, solve, tol, max_seconds, max_bytes)
    if precision == "interval":
        out.interval = _interval(task, W, U, lam, data, out)
    out.message = _message(out)
    out.seconds = time.perf_counter() - t0
    return out


def _certify_sample(task, W, U, lam, data, solve, tol, where, deadline) -> Certificate:
    """The bound at the network's X (no solve), then optionally at the optimum solved from its balanced factors."""
    S, y = data
    _, oracle = sample_problem(task, S, y, *where)
    Wf, Uc = network_to_factors(W, U, task.K, task.L)
    f, E, _, _, inner = oracle.factored(Wf, Uc)
    own = LowRankState(Wf, Uc, f, E, inner, lam)
    lb_net, rho, _, _ = certify_state(oracle, own)
    nuc, r = _nuclear_and_rank(Wf, Uc)
    align = (inner + lam * nuc) / (lam * nuc) if nuc > 0 else 0.0
    lb_opt = R_opt = math.nan
    if solve:
        Wb, Ub, _ = rebalance(Wf, Uc)
        st, cert, _, _ = solve_lowrank(oracle, lam, Wb, Ub, tol=tol, maxiter=20000, deadline=deadline,
                                       lipschitz=task.L / 2.0, log=LOG.info)  # fmt: skip
        lb_opt, R_opt = cert[0], st.psi
    return _result(own.psi, lb_net, lb_opt, R_opt, rho, align, W.shape[0], r, "training")


def _certify_population(task, W, U, lam, solve, tol, max_seconds, max_bytes) -> Certificate:
    """The true risk (5): R(W, U) and ∇f at the network's X by the enumeration, the optimum by fc.optimum."""
    res = evaluate(task, W, U, lam, False, progress=False, max_seconds=max_seconds, max_bytes=max_bytes)
    X = U_hat(U, L=task.L).T @ W
    f, G = EnumeratedF(task, 1, max_seconds, max_bytes)(X)
    nuc = nuclear_norm(X)
    lb_net, rho, align, _ = fenchel_bound(f, G, X, lam, nuc)
    r = int(np.linalg.matrix_rank(X)) if X.size else 0
    lb_opt = R_opt = math.nan
    if solve:
        opt = optimum(task, lam=lam, tol=tol, max_seconds=max_seconds, max_bytes=max_bytes)
        lb_opt, R_opt = opt.lower_bound, opt.R
    return _result(float(res.R), lb_net, lb_opt, R_opt, rho, align, W.shape[0], r, "population")


def _check_scale(task, W, U, lam):
    """Refuse weights whose scores (sums of d·L products) or penalty leave float64."""
    with np.errstate(over="ignore"):
        wmax, umax = float(np.max(np.abs(W))), float(np.max(np.abs(U)))
        score = wmax * umax * W.shape[0] * task.L
        pen = lam * (wmax * wmax * W.size + umax * umax * U.size)
    if not (score <= 1e300 and pen <= 1e300):
        fail("W", W, "the scores or the penalty (lam/2)(|W|^2 + |U|^2) overflow float64; use smaller weights")


def _nuclear_and_rank(W, U):
    """‖WᵀU‖_* and its rank from the r × r core of the factors (no SVD of the large X)."""
    if W.shape[0] == 0:
        return 0.0, 0
    _, _, s = rebalance(W, U, drop=0.0)
    return float(np.sum(s)), int(np.count_nonzero(s > 1e-9 * s[0])) if s[0] > 0 else 0


def _result(R, lb_net, lb_opt, R_opt, rho, align, width, rank, objective) -> Certificate:
    lb = lb_net if not lb_opt > lb_net else lb_opt
    gap = R - lb
    return Certificate(
        R=float(R), lower_bound=float(lb), gap=float(gap), rel_gap=relative_gap(gap, R),
        lower_bound_network=float(lb_net), lower_bound_optimum=float(lb_opt), R_optimum=float(R_opt),
        rho=float(rho), align=float(align), width=int(width), rank=int(rank), objective=objective, message="",
        seconds=0.0,
    )  # fmt: skip


def _interval(task, W, U, lam, data, out):
    """Ball-arithmetic bounds at the network's weights (and the solved optimum's lower bound, re-done in balls)."""
    if data is not None:
        S, y = data
        if S.shape[0] * task.K > INTERVAL_MAX_PAIRS:
            fail("precision", "interval", f"ball arithmetic needs N*K <= {INTERVAL_MAX_PAIRS} (sentence, class) pairs")
        iv = certify_optimality_empirical(task, W, U, lam, S, y)
    else:
        iv = certify_optimality(task, W, U, lam)
    if math.isfinite(out.lower_bound_optimum) and out.lower_bound_optimum > iv["lower_bound"]:
        opt = (optimum(task, lam=lam, data=data, precision="interval") if data is not None
               else optimum(task, lam=lam, precision="interval"))  # fmt: skip
        if opt.interval["lower_bound"] > iv["lower_bound"]:
            lb = opt.interval["lower_bound"]
            iv = dict(iv, lower_bound=lb, gap=math.nextafter(iv["R"][1] - lb, math.inf))  # rounded up
    return iv


def _message(c: Certificate) -> str:
    what = "its own training objective" if c.objective == "training" else "the true risk (5)"
    if c.rel_gap <= 1e-9:
        return f"this network is a global minimiser of {what} (certified gap {c.gap:.2e}, relative {c.rel_gap:.1e})"
    return (f"this network is within {100 * c.rel_gap:.3g}% of the global optimum of {what} "
            f"(R = {c.R:.10g}, certified lower bound {c.lower_bound:.10g}, gap {c.gap:.3e})")  # fmt: skip
