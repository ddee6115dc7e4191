"""The population optimum of (5) where nothing enumerates it: the sample-average approximation (SAA).

For non-uniform word frequencies on a partial latent set neither the exact engine (s_c^L sentences per class)
nor the collapsed problem (the words of a concept are not exchangeable) reaches the paper's scale. But
min R = min_X g(X), g(X) = E f̂_N(X) + λ‖X‖_* with f̂_N the cross-entropy of N sentences drawn from the task, and
the certified optimum of a sample, ĝ_N(X̂_N) = min ĝ_N (:func:`fctheory.optimum` with ``data=``), is a
consistent estimator of it as N grows. With R independent samples (replicates):

* every statistic of the optimum (the per-word norms ‖w_(α,β)‖, the ‖u_(k,ℓ)‖) is estimated by its mean over the
  replicates, with the standard error of that mean (sd/√R);
* min R is bracketed statistically (Mak, Morton & Wood 1999): E[min ĝ_N] ≤ min g (the minimum of an average
  is at most the average of the function), so the mean of the replicates' certified minima estimates a lower
  bound; and g(X̄) ≥ min g at any fixed point, here the average X̄ of the replicates' optima, estimated without
  bias by R̂ on an independent validation sample at X̄'s balanced factors (its standard error from batches).

The gap between the two estimates is the SAA's bias plus noise: it says how far N is from the population.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from .._budget import get_budget
from .._validate import Instance, Int, Real, Seed, public, result_type
from ..risk.empirical import empirical_risk, norms
from ..task import Task, as_rng
from .api import optimum
from .result import balanced_factors

__all__ = ["SampleAverageOptimum", "sample_average_optimum"]

#: validation batches of the upper estimate (its standard error is the spread of the batch means)
VALIDATION_BATCHES = 8


@result_type
@dataclass
class SampleAverageOptimum:
    """Outcome of :func:`sample_average_optimum`: the population optimum of (5) estimated from certified optima of
    independent samples.

    Attributes
    ----------
    w_norms, w_norms_se : ndarray, shape (n_w,)
        Mean over the replicates of the optimum's per-word norms ‖w_(α,β)‖, and its standard error.
    u_norms, u_norms_se : ndarray, shape (K, L)
        The same for ‖u_(k,ℓ)‖.
    tau, tau_se : float
        ‖W‖_F² = ‖X̂‖_* (mean, standard error).
    R_lower, R_lower_se : float
        Mean of the replicates' certified minima of R̂ (an estimate of a lower bound on min R) and its standard
        error.
    R_upper, R_upper_se : float
        R̂ of an independent validation sample at the balanced factors of X̄, the mean of the replicates' optima
        (an unbiased estimate of g(X̄) ≥ min R) and its standard error.
    n_spl, replicates, n_validation : int
        Sentences per class of each sample, number of samples, validation sentences per class.
    rel_gaps : ndarray, shape (replicates,)
        Certified relative gap of each replicate's optimum.
    certified : bool
        Every replicate's optimum certified (the statistical error is then the only error).
    W, U : ndarray
        Balanced factors of X̄ (width rank X̄).
    seconds : float
    """

    w_norms: np.ndarray
    w_norms_se: np.ndarray
    u_norms: np.ndarray
    u_norms_se: np.ndarray
    tau: float
    tau_se: float
    R_lower: float
    R_lower_se: float
    R_upper: float
    R_upper_se: float
    n_spl: int
    replicates: int
    n_validation: int
    rel_gaps: np.ndarray
    certified: bool
    W: np.ndarray
    U: np.ndarray
    seconds: float

    @property
    def error(self) -> float:
        """A relative error of the word norms that covers both the noise and the bias seen: the largest of
        2·(mean standard error / mean norm) and the relative width of the [R_lower, R_upper] bracket."""
        noise = 2.0 * float(np.mean(self.w_norms_se)) / max(float(np.mean(self.w_norms)), 1e-300)
        bracket = max(self.R_upper - self.R_lower, 0.0) / max(abs(self.R_upper), 1e-300)
        return max(noise, bracket)


def _se(a, axis=0):
    a = np.asarray(a, dtype=float)
    return np.std(a, axis=axis, ddof=1) / math.sqrt(a.shape[axis]) if a.shape[axis] > 1 else np.full_like(a[0], np.nan)


def _validation(task, lam, W, U, n_val, rng):
    """(R̂ of a fresh sample at (W, U), its standard error from VALIDATION_BATCHES batch means)."""
    per = max(1, -(-n_val // VALIDATION_BATCHES))
    vals = []
    for _ in range(VALIDATION_BATCHES):
        S, y = task.sample(per, seed=rng)
        vals.append(empirical_risk(task, W, U, S, y, lam, grad=False)[0])
    return float(np.mean(vals)), float(_se(vals))


@public(
    task=Instance(Task),
    lam=Real(lo=1e-12, hi=1e12),
    n_spl=Int(min=1, max=10**7),
    replicates=Int(min=2, max=1000),
    n_validation=Int(min=1, max=10**7).or_none(),
    seed=Seed(),
    tol=Real(lo=0.0, lo_open=True, hi=1.0),
    max_seconds=Real(lo=0.0, lo_open=True, inf_ok=True).or_none(),
)
def sample_average_optimum(
    task: Task,
    *,
    lam,
    n_spl: int,
    replicates: int = 3,
    n_validation: int | None = None,
    seed=0,
    tol: float = 1e-8,
    max_seconds=None,
) -> SampleAverageOptimum:
    """The population optimum of (5) estimated by the certified optima of ``replicates`` fresh samples.

    Each replicate draws ``n_spl`` sentences per class from ``task`` and solves its training objective to a
    certified relative gap ``tol`` (:func:`fctheory.optimum` with ``data=``); the statistics are averaged and their
    standard errors stated, and min R is bracketed by the replicates' minima (below, in expectation) and a
    validation sample's R̂ at the replicates' average optimum (above, in expectation); module docstring. Any word
    frequencies and any latent set; the answer of :func:`fctheory.predict` for non-uniform μ beyond the exact
    engine.

    Parameters
    ----------
    task : Task
    lam : float
        λ of (5) (both decays), 1e-12 ≤ λ ≤ 1e12.
    n_spl : int
        Sentences per class of each sample.
    replicates : int
        Independent samples (≥ 2: the standard errors need two).
    n_validation : int, optional
        Sentences per class of the validation sample (default ``n_spl``).
    seed : int, Generator or None
        Seed of the samples.
    tol : float
        Relative certified gap of each replicate's solve (default 1e-8).
    max_seconds : float, optional
        Time limit of each replicate's solve (default: the budget in force).

    Returns
    -------
    SampleAverageOptimum

    Examples
    --------
    >>> import fctheory as fc
    >>> s = sample_average_optimum(fc.Task.random(3, 2, 2, 4, seed=0, mu="zipf"), lam=0.02, n_spl=20)
    >>> s.certified, s.w_norms.shape, bool(s.R_lower <= s.R_upper + 4 * (s.R_lower_se + s.R_upper_se))
    (True, (6,), True)
    """
    t0 = time.perf_counter()
    rng = as_rng(seed)
    sec = max_seconds if max_seconds is not None else get_budget().max_seconds
    ws, us, taus, Rs, gaps, Xs = [], [], [], [], [], []
    for _ in range(replicates):
        S, y = task.sample(n_spl, seed=rng)
        res = optimum(task, lam=lam, data=(S, y), tol=tol, max_seconds=sec)
        w, u = norms(task, res.W, res.U)
        ws.append(w)
        us.append(u)
        taus.append(float(np.sum(res.W * res.W)))
        Rs.append(res.R)
        gaps.append(res.rel_gap)
        Xs.append(res.X)
    W, U, _ = balanced_factors(np.mean(Xs, axis=0), task.L)
    n_val = n_spl if n_validation is None else n_validation
    up, up_se = _validation(task, lam, W, U, n_val, rng)
    return SampleAverageOptimum(
        w_norms=np.mean(ws, axis=0), w_norms_se=_se(ws), u_norms=np.mean(us, axis=0), u_norms_se=_se(us),
        tau=float(np.mean(taus)), tau_se=float(_se(taus)), R_lower=float(np.mean(Rs)), R_lower_se=float(_se(Rs)),
        R_upper=up, R_upper_se=up_se, n_spl=int(n_spl), replicates=int(replicates), n_validation=int(n_val),
        rel_gaps=np.asarray(gaps), certified=bool(all(g <= tol for g in gaps)), W=W, U=U,
        seconds=time.perf_counter() - t0,
    )  # fmt: skip
