"""The one entry point of the certified optima: :func:`optimum` dispatches on the network, the word frequencies
and the data to the module that solves that problem (:mod:`~fctheory.optima.population`,
:mod:`~fctheory.optima.collapsed`, :mod:`~fctheory.optima.star`, :mod:`~fctheory.optima.empirical`)."""

from __future__ import annotations

import time

from .._validate import Anything, Bool, Choice, Instance, Int, Kind, Real, Seed, fail, public
from ..risk.empirical import LABELS, SENTENCES
from ..risk.plan import LIMIT, resolve_budget
from ..task import Task
from .empirical import deadline_of, optimum_empirical
from .population import optimum_collapsed, optimum_enumerated
from .result import OptimumResult
from .sample import SAMPLE_BACKENDS
from .star import optimum_star

__all__ = ["optimum", "Sample"]


class Sample(Kind):
    """None, or a training sample (S, y): sentences (N × L word indices, int) and their labels (N,)."""

    optional = True

    def __call__(self, name, value):
        if value is None:
            return None
        if not isinstance(value, (tuple, list)) or len(value) != 2:
            fail(name, value, "must be None or a pair (S, y): sentences (N x L word indices) and labels (N,)")
        return SENTENCES(name, value[0]), LABELS(name, value[1])


@public(
    task=Instance(Task),
    lam=Real(lo=1e-12, hi=1e12),
    network=Choice("h", "h*"),
    d=Int(min=1, max=2**20).or_none(),
    precision=Choice("float", "interval"),
    tol=Real(lo=0.0, lo_open=True, hi=1.0),
    maxiter=Int(min=1, max=10**7),
    n_starts=Int(min=1, max=1000),
    seed=Seed(),
    workers=Int(min=1, max=1024).or_none(),
    max_seconds=LIMIT,
    max_bytes=LIMIT,
    symmetry=Bool(),
    data=Sample(),
    backend=Choice(*SAMPLE_BACKENDS),
    client=Anything("None, a dask.distributed Client or a scheduler address (data= only)"),
    blocks=Int(min=1, max=10**7).or_none(),
)
def optimum(
    task: Task,
    *,
    lam,
    network: str = "h",
    d: int | None = None,
    precision: str = "float",
    tol: float = 1e-10,
    maxiter: int = 20000,
    n_starts: int = 4,
    seed=0,
    workers: int | None = 1,
    max_seconds=None,
    max_bytes=None,
    symmetry: bool = True,
    data=None,
    backend: str = "numba",
    client=None,
    blocks: int | None = None,
) -> OptimumResult:
    """The certified global minimiser of the true risk (5) of ``task``, or a bounded local one of (10).

    Network h: min_X f(X) + λ‖X‖_* (X = ÛᵀW, (159)–(167)) by FISTA with singular-value thresholding on the
    exact engine's ∇f, balanced (W, U) of the smallest width, an L-BFGS polish and the duality-gap
    certificate of :mod:`fctheory.risk.convex`; uniform μ: the same problem in the collapsed coordinates
    (:func:`fctheory.collapsed_optimum`, any K). Network h*: the best of ``n_starts`` L-BFGS runs on (10)
    with a certified lower bound on min R* from a convex relaxation (docs/optimum.md).

    Parameters
    ----------
    task : Task
        Any latent set and word frequencies the exact engine can enumerate.
    lam : float
        λ of (5)/(10), 1e-12 ≤ λ ≤ 1e12 (below, the minimiser's scale log K/λ leaves what the solver resolves).
    network : {"h", "h*"}
    d : int, optional
        Width of the returned weights. h: default the rank of the optimum (the smallest width attaining
        min R); a larger d pads with zero rows; a smaller d is refused (min R over that width may exceed
        the convex optimum). h*: the width to optimise over (default n_c + 1; d ≥ 2).
    precision : {"float", "interval"}
        ``"interval"``: rigorous bounds (python-flint) on R, min R and the gap at the returned weights (h).
    tol : float
        Relative certified gap at which h's result counts as certified (default 1e-10).
    maxiter : int
        Proximal-gradient iterations at most, in all; also the L-BFGS iterations of each polish (at most 2000).
    n_starts, seed : int, int or Generator or None
        h*: random starts of the local search and their seed.
    workers : int or None
        Threads of each engine evaluation (default 1: the evaluations are small).
    max_seconds, max_bytes : float or None
        Budget of each evaluation (None: the budget in force) and, for max_seconds, of the whole solve.
    symmetry : bool
        h, uniform μ: the collapsed problem (default); ``False`` enumerates as for any μ (a cross-check).
    data : (S, y) or None
        A training sample (sentences N × L, labels N): the optimum of the training objective R̂ instead of (5),
        any μ and K, in factored form, certified with a guarded ‖∇f̂‖₂ (:mod:`fctheory.optima.empirical`);
        a ``d`` below its rank gives a width-d local minimiser and both values (status "width-limited").
    backend : {"numba", "numpy", "torch", "cupy"}
        ``data=`` only: where f̂ and ∇f̂ run (torch: CUDA when available).
    client, blocks : dask Client or address, int, optional
        ``data=`` only: the sentences split into ``blocks`` (on the Dask cluster; default 4 per worker).

    Returns
    -------
    OptimumResult

    Raises
    ------
    FCTheoryError
        Bad input, a task the engine refuses within the budget, ``precision="interval"`` without
        python-flint or for h*, or (population) a ``d`` below the rank of h's optimum.

    Examples
    --------
    >>> import fctheory as fc
    >>> optimum(fc.Task.random(2, 2, 3, 3, seed=0), lam=0.05).certified
    True
    """
    return _dispatch(task, lam, network, data, d, tol, maxiter, precision, n_starts, seed, workers, max_seconds,
                     max_bytes, symmetry, (backend, client, blocks))  # fmt: skip


def _dispatch(task, lam, network, data, d, tol, maxiter, precision, n_starts, seed, workers, max_seconds, max_bytes,
              symmetry, where) -> OptimumResult:  # fmt: skip
    """The module that solves (network, μ, data)."""
    if data is not None:
        if network != "h":
            fail("network", network, "the training-set optimum (data=) is certified for network h only")
        sec, _ = resolve_budget(max_seconds, max_bytes)
        t0 = time.perf_counter()
        return optimum_empirical(task, lam, data, d, tol, maxiter, precision, where, deadline_of(sec, t0), t0)
    if network == "h*":
        if precision == "interval":
            fail("precision", precision, "the interval option certifies network h only (R* is not convex)")
        return optimum_star(task, lam, d, tol, n_starts, seed, workers, max_seconds, max_bytes)
    t0 = time.perf_counter()
    sec, _ = resolve_budget(max_seconds, max_bytes)
    if symmetry and task.is_uniform:
        return optimum_collapsed(task, lam, d, tol, maxiter, precision, sec, t0)
    return optimum_enumerated(task, lam, d, tol, maxiter, precision, workers, (max_seconds, max_bytes, sec, t0))
