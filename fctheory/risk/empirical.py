"""The empirical risk of network h on a finite set of sentences: what SGD with weight decay minimises.

R̂(W, U) = (1/N) Σ_i CE(h_{W,U}(x_i), y_i) + (λ/2)(‖W‖² + ‖U‖²): the true risk (5) with the law D_{z_k} of
class k's sentences replaced by the empirical law of its training sentences. The training sentences are an
N × L array S of word indices α·s_c + β (the ``X`` of :func:`fctheory.Task.sample`), with labels y.

* :func:`check_data` — the sentences against the task (every word of its class's concept);
* :func:`word_counts`, :func:`norms` — the statistics the finite-sample predictors compare;
* :func:`empirical_risk_grad` — R̂ and its gradient; :func:`minimize_empirical_risk` — its minimiser by L-BFGS
  (a local minimiser of a non-convex function of (W, U); the certified global one is
  :func:`fctheory.optimum` with ``data=``).
"""

from __future__ import annotations

import numpy as np

from .._budget import check_work
from .._validate import Array, Instance, Int, Real, Seed, fail, public
from ..task import Task, as_rng
from .minimize import lbfgs_iterate, safe_norm

__all__ = [
    "SENTENCES",
    "LABELS",
    "LAM",
    "check_data",
    "check_weights",
    "check_size",
    "word_counts",
    "norms",
    "colnorm",
    "empirical_risk",
    "empirical_risk_grad",
    "lbfgs",
    "minimize_empirical_risk",
]

SENTENCES = Array(ndim=2, integer=True, min=0)
LABELS = Array(ndim=1, integer=True, min=0)
#: λ of the predictors: the solves are scaled for weight decays of practice (the paper's is 1e-3)
LAM = Real(lo=1e-12, hi=1e6)


# ----------------------------------------------------------------------------- checks and statistics
def check_data(task: Task, X, y=None, *, need_y=True, name="X", name_y="y"):
    """Shapes of the sentences against the task; every word must belong to its class's concept (errors name
    the parameters ``name`` and ``name_y``)."""
    if X.shape[1] != task.L:
        fail(name, X, f"must have L = {task.L} columns (one word per position), got {X.shape[1]}")
    if X.shape[0] == 0:
        fail(name, X, "must contain at least one sentence")
    if X.max() >= task.n_w:
        fail(name, X, f"word indices must be < n_w = {task.n_w}")
    if y is None:
        return
    if y.shape[0] != X.shape[0]:
        fail(name_y, y, f"must have one label per sentence ({X.shape[0]}), got {y.shape[0]}")
    if y.max() >= task.K:
        fail(name_y, y, f"labels must be < K = {task.K}")
    bad = (X // task.s_c) != task.Z[y]
    if bad.any():
        i, l = np.argwhere(bad)[0]
        fail(
            name,
            X,
            f"sentence {i} (class {y[i]}) has word {X[i, l]} of concept {X[i, l] // task.s_c} at "
            f"position {l}, but z_(k,l) = {task.Z[y[i], l]} (sentences must come from the task)",
        )


@public(task=Instance(Task), X=SENTENCES)
def word_counts(task: Task, X) -> np.ndarray:
    """N_(α,β): how many times each word occurs in the sentences X (all positions).

    Parameters
    ----------
    task : Task
    X : array_like of int, shape (N, L)
        Word indices α·s_c + β (as :meth:`Task.sample` returns).

    Returns
    -------
    ndarray of int64, shape (n_w,)
    """
    check_data(task, X)
    return np.bincount(X.ravel(), minlength=task.n_w).astype(np.int64)


@public(task=Instance(Task), W=Array(ndim=2), U=Array(ndim=2))
def norms(task: Task, W, U):
    """(‖w_(α,β)‖ for every word, ‖u_{k,ℓ}‖ as a K×L array) of weights (W d×n_w, U K×(L·d)).

    Returns
    -------
    word_norm : ndarray, shape (n_w,)
    u_norm : ndarray, shape (K, L)
    """
    d = W.shape[0]
    if W.shape[1] != task.n_w:
        fail("W", W, f"must have shape (d, n_w) with n_w = {task.n_w}, got {W.shape}")
    if U.shape != (task.K, task.L * d):
        fail("U", U, f"must have shape (K, L*d) = ({task.K}, {task.L * d}), got {U.shape}")
    return colnorm(W, 0), colnorm(U.reshape(task.K, task.L, d), 2)


def colnorm(A, axis):
    """‖·‖₂ along ``axis`` without overflow/underflow of the squares (entries up to 1e308)."""
    m = np.max(np.abs(A), axis=axis, keepdims=True)
    safe = np.where(m > 0, m, 1.0)
    return np.squeeze(safe, axis=axis) * np.sqrt(np.sum((A / safe) ** 2, axis=axis))


# ----------------------------------------------------------------------------- the empirical risk
def empirical_risk(task, W, U, X, y, lam, grad=True):
    """R̂ (h network) and its gradient; W d×n_w, U K×Ld. Plain float64 NumPy."""
    d, N, L = W.shape[0], X.shape[0], task.L
    F = W.T[X].reshape(N, L * d)  # concat(w_{x_1}, ..., w_{x_L})
    S = F @ U.T
    m = S.max(axis=1, keepdims=True)
    ex = np.exp(S - m)
    z = ex.sum(axis=1, keepdims=True)
    rows = np.arange(N)
    ce = np.log(z[:, 0]) + m[:, 0] - S[rows, y]
    R = float(ce.mean()) + 0.5 * lam * (float(np.sum(W * W)) + float(np.sum(U * U)))
    if not grad:
        return R, None, None
    G = ex / z
    G[rows, y] -= 1.0
    G /= N
    dU = G.T @ F + lam * U
    dF = (G @ U).reshape(N * L, d)
    dW = np.zeros((task.n_w, d))
    np.add.at(dW, X.ravel(), dF)
    return R, dW.T + lam * W, dU


def check_weights(task, W, U):
    if W.shape[1] != task.n_w:
        fail("W", W, f"must have shape (d, n_w) with n_w = {task.n_w}, got {W.shape}")
    if U.shape != (task.K, task.L * W.shape[0]):
        fail("U", U, f"must have shape (K, L*d) = ({task.K}, {task.L * W.shape[0]}), got {U.shape}")


def check_size(task, N, d, what):
    check_work(
        "X",
        f"{N} sentences",
        items=N * task.K,
        bytes=8 * (3 * N * task.K + N * task.L * d + 3 * task.K * task.L * d + 3 * d * task.n_w),
        what=what,
    )


@public(task=Instance(Task), W=Array(ndim=2), U=Array(ndim=2), X=SENTENCES, y=LABELS, lam=Real(lo=0.0))
def empirical_risk_grad(task: Task, W, U, X, y, lam):
    """The empirical risk R̂ of the sentences (X, y) for network h (eq. (2)) and its gradient.

    R̂ = (1/N) Σ_i CE(h_{W,U}(x_i), y_i) + (λ/2)(‖W‖_F² + ‖U‖_F²): the true risk (5) with D_{z_k}
    replaced by the empirical law of class k's sentences (what SGD with weight decay λ minimises).

    Parameters
    ----------
    task : Task
    W : array_like, shape (d, n_w)
    U : array_like, shape (K, L·d)
    X : array_like of int, shape (N, L)
        Sentences (word indices); every word must belong to its class's concept.
    y : array_like of int, shape (N,)
        Labels.
    lam : float
        λ ≥ 0.

    Returns
    -------
    R : float
    dW : ndarray, shape (d, n_w)
    dU : ndarray, shape (K, L·d)
    """
    check_weights(task, W, U)
    check_data(task, X, y)
    check_size(task, X.shape[0], W.shape[0], "empirical_risk_grad")
    with np.errstate(over="ignore", invalid="ignore"):
        R, dW, dU = empirical_risk(task, W, U, X, y, lam)
    if not np.isfinite(R) or not (np.all(np.isfinite(dW)) and np.all(np.isfinite(dU))):
        fail("W", W, "the scores overflow float64 (weights too large)")
    return R, dW, dU


def lbfgs(fg, x0, gtol, maxiter, memory=20):
    """L-BFGS of the exact-risk minimiser (strong-Wolfe line search down to ‖∇‖ ≤ gtol)."""

    f, g = fg(x0)[:2]
    with np.errstate(over="ignore", invalid="ignore"):
        it, x, f, g, hist, msg = lbfgs_iterate(
            lambda x, overflow="inf": fg(x),
            x0,
            f,
            g,
            [f],
            "maximum number of iterations reached",
            gtol,
            maxiter,
            memory,
            None,
            0.0,
            None,
        )
    return x, f, safe_norm(g), it, msg


@public(
    task=Instance(Task),
    X=SENTENCES,
    y=LABELS,
    d=Int(min=1, max=2**20),
    lam=LAM,
    seed=Seed(),
    W0=Array(ndim=2).or_none(),
    U0=Array(ndim=2).or_none(),
    init_scale=Real(lo=0.0, lo_open=True, hi=1e3),
    gtol=Real(lo=0.0, lo_open=True),
    maxiter=Int(min=1, max=10**7),
)
def minimize_empirical_risk(
    task: Task,
    X,
    y,
    d: int,
    lam,
    *,
    seed=None,
    W0=None,
    U0=None,
    init_scale: float = 0.1,
    gtol: float = 1e-10,
    maxiter: int = 20000,
):
    """The exact minimiser of the empirical risk R̂ (L-BFGS with exact gradients, ‖∇R̂‖ ≤ gtol).

    Parameters
    ----------
    task : Task
    X, y : sentences and labels (see :func:`empirical_risk_grad`).
    d : int
    lam : float
        λ > 0.
    seed : int, Generator or None
        Random start N(0, init_scale²) when W0/U0 are not given.
    W0, U0 : array_like, optional
    init_scale, gtol, maxiter

    Returns
    -------
    W : ndarray (d, n_w)
    U : ndarray (K, L·d)
    info : dict
        ``R``, ``grad_norm``, ``nit``, ``message``, ``success`` (grad_norm ≤ gtol).
    """
    check_data(task, X, y)
    check_size(task, X.shape[0], d, "minimize_empirical_risk")
    n_w, K, L = task.n_w, task.K, task.L
    rng = as_rng(seed)
    W = W0 if W0 is not None else init_scale * rng.standard_normal((d, n_w))
    U = U0 if U0 is not None else init_scale * rng.standard_normal((K, L * d))
    if W.shape != (d, n_w):
        fail("W0", W, f"must have shape (d, n_w) = ({d}, {n_w})")
    if U.shape != (K, L * d):
        fail("U0", U, f"must have shape (K, L*d) = ({K}, {L * d})")
    nW = d * n_w

    def fg(x):
        with np.errstate(over="ignore", invalid="ignore"):
            R, dW, dU = empirical_risk(task, x[:nW].reshape(d, n_w), x[nW:].reshape(K, L * d), X, y, lam)
        if not np.isfinite(R):
            return np.inf, np.full_like(x, np.inf), None
        return R, np.concatenate([dW.ravel(), dU.ravel()]), None

    x, f, gn, it, msg = lbfgs(fg, np.concatenate([W.ravel(), U.ravel()]), gtol, maxiter)
    if not np.isfinite(f):
        fail("init_scale", init_scale, "the minimisation left float64 (start too large)")
    return (
        x[:nW].reshape(d, n_w).copy(),
        x[nW:].reshape(K, L * d).copy(),
        dict(R=f, grad_norm=gn, nit=it, message=msg, success=gn <= gtol),
    )
