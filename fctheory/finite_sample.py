"""Finite-sample theory: each word's embedding norm (and each ‖u_{k,ℓ}‖) in a trained network h.

The theorems of *Feature Collapse* describe the minimiser of the true risk (5) (n_spl → ∞). A network
trained on n_spl sentences per class minimises the empirical risk

    R̂(W, U) = (1/N) Σ_i CE(h_{W,U}(x_i), y_i) + (λ/2)(‖W‖² + ‖U‖²),   N = K·n_spl,

whose minimiser differs from the theory's by O(1/√n_spl): words that occur more often get larger
norms. This module predicts that spread from the task and the actual training sentences
(docs/finite-sample.md has the derivations and the validation):

* :func:`predict_plugin` — (a) the type-III system (7)–(8) of Theorem 2 with every word's *empirical*
  frequency in place of μ_β (generalised to K < n_c^L by the mean-field weight of Theorem 1's H);
* :func:`predict_perturbation` — (b) first-order perturbation of the type-I optimum of Theorem 1 by
  ∇(R̂ − R), through the true risk's Hessian, reduced by symmetry to one closed form per word;
* :func:`perturbation_full` — (b) in the full (W, U) space for enumerable tasks: Newton step with
  Hessian-vector products of the exact-risk engine (the test oracle of (b));
* :func:`predict_training_optimum` — the certified global minimiser of the training objective R̂ itself
  (:func:`fctheory.optimum` with ``data=``): every statistic of a network trained to its optimum (balancedness:
  WᵀW = (X*ᵀX*)^(1/2)), with no ansatz;
* :func:`predict_reduced` — (c) the empirical risk minimised exactly inside the collapse ansatz
  w_(α,β) = r_(α,β) f_α, u_{k,ℓ} = c_{k,ℓ} f_{z_kℓ} (n_w + KL scalars instead of d(n_w + KL));
* :func:`empirical_risk_grad`, :func:`minimize_empirical_risk`, :func:`word_counts`, :func:`norms` — the
  empirical risk, its minimiser by L-BFGS and the statistics compared (home: :mod:`fctheory.risk.empirical`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
from scipy.optimize import brentq
from scipy.sparse.linalg import LinearOperator, minres

from ._budget import check_work
from ._errors import FCTheoryError
from ._validate import Array, Instance, Int, Real, fail, public, result_type
from .optima import collapsed_optimum
from .frames import equiangular_frame
from .risk import true_risk_grad
from .optima import optimum as _population_optimum
from .task import Task
from .tau import tau
from .type3 import solve_type3

__all__ = [
    "FiniteSamplePrediction",
    "word_counts",
    "norms",
    "empirical_risk_grad",
    "minimize_empirical_risk",
    "predict_plugin",
    "predict_perturbation",
    "perturbation_full",
    "predict_reduced",
    "predict_on_optimum",
    "predict_training_optimum",
]

from .risk.empirical import (
    LABELS,
    LAM,
    SENTENCES,
    check_data,
    check_size,
    check_weights,
    empirical_risk,
    empirical_risk_grad,
    lbfgs,
    minimize_empirical_risk,
    norms,
    word_counts,
)


@result_type
@dataclass
class FiniteSamplePrediction:
    """Predicted norms of a network trained on given sentences.

    Attributes
    ----------
    method : str
        "plugin", "perturbation", "perturbation_full", "reduced" or "optimum".
    word_norm : ndarray, shape (n_w,)
        Predicted ‖w_(α,β)‖, word index α·s_c + β.
    u_norm : ndarray, shape (K, L)
        Predicted ‖u_{k,ℓ}‖.
    theory_word_norm, theory_u_norm : float
        The n_spl → ∞ values (Theorem 1, or Theorem 2 averaged) the prediction perturbs (0 where
        the theory's optimum is trivial; for ``perturbation_full`` the mean norms of θ*).
    info : dict
        Method-specific quantities (c, weights, Hessian diagonal, convergence, ...).
    """

    method: str
    word_norm: np.ndarray
    u_norm: np.ndarray
    theory_word_norm: float = float("nan")
    theory_u_norm: float = float("nan")
    info: dict = field(default_factory=dict, repr=False)


# ----------------------------------------------------------------------------- the symmetric optimum
def _log_p(task):
    """log(K/n_c^L), the density of the latent set."""
    return math.log(task.K) - task.L * math.log(task.n_c)


def _type1_point(task, lam):
    """(r̄, c̄, s* = κ r̄ c̄) of Theorem 1 (uniform words)."""

    t = float(tau(n_c=task.n_c, n_w=task.n_w, L=task.L, K=task.K, lam=lam))
    if t == 0.0:
        fail("lam", lam, "is at or above the trivial threshold λ₀ (Theorem 1: τ = 0, all norms 0)")
    r, c = math.sqrt(t / task.n_w), math.sqrt(t / (task.K * task.L))
    return r, c, task.n_c / (task.n_c - 1) * r * c


def _qbar(task, s):
    """q = pΠ/(1 − p + pΠ), Π = (1 + (n_c−1)e^{−s})^L: the weight of H's log-sum (1 for the full task)."""
    lp = _log_p(task)
    if lp >= 0:
        return 1.0
    log_pi = task.L * math.log1p((task.n_c - 1) * math.exp(-s))
    a = lp + log_pi  # log(pΠ); q = 1/(1 + (1 − p)e^{−a})
    return 1.0 / (1.0 + (-math.expm1(lp)) * math.exp(-a))


def _x_of(b, n_c, iters=80):
    """x ≥ 0 solving x(n_c − 1 + e^x) = b (b ≥ 0), Newton on log x (vectorised; x = 0 where b = 0)."""
    b = np.asarray(b, dtype=float)
    out = np.zeros_like(b)
    pos = b > 0
    if not pos.any():
        return out
    Y = np.log(b[pos])
    c1 = math.log(n_c - 1)
    big = Y > math.log(n_c) + 1
    Yc = np.where(big, Y, 2.0)
    y = np.where(big, np.log(np.maximum(Yc - np.log(Yc), 1e-300)), Y - math.log(n_c))
    for _ in range(iters):
        x = np.exp(y)
        f = y + np.logaddexp(c1, x) - Y
        fp = 1 + x / (1 + (n_c - 1) * np.exp(-x))
        step = f / fp
        y = y - step
        if np.all(np.abs(step) <= 1e-15 * np.maximum(1, np.abs(y))):
            break
    out[pos] = np.exp(y)
    return out


def _plugin_theory(task: Task, lam, full: bool) -> tuple:
    """(r, c) of the theorem that applies at infinite sample size, and the frozen weight q̄ of the plug-in."""
    if full:
        if task.is_uniform:
            theory_r, theory_c, _ = _type1_point(task, lam)
            return theory_r, theory_c, 1.0
        sol = solve_type3(mu=task.mu, n_c=task.n_c, L=task.L, lam=lam)
        return float(np.sqrt(np.mean(sol.r**2))), float(sol.c), 1.0
    if not task.is_uniform:
        fail("task", task, "K < n_c^L needs uniform words (no theorem for non-uniform words, K < n_c^L)")
    theory_r, theory_c, s = _type1_point(task, lam)
    return theory_r, theory_c, _qbar(task, s)


@public(task=Instance(Task), X=SENTENCES, lam=LAM)
def predict_plugin(task: Task, X, lam) -> FiniteSamplePrediction:
    """(a) Plug-in: Theorem 2's type-III system (7)–(8) with each word's empirical frequency.

    Each word gets its own norm r_w (w = (α, β)) and every u_{k,ℓ} the common norm c, solving

        (7̂)  λ r_w (n_c − 1 + e^{κ c r_w}) = (n_c − 1) κ c q̄ ν_w,   ν_w = N_w / N,
        (8̂)  Σ_w r_w² = K L c²   (balancedness ‖W‖ = ‖U‖ of every critical point),

    where N_w counts the occurrences of w in the N sentences (all positions). For the full task
    (K = n_c^L) q̄ = 1 and ν_w = L μ̂_w/n_c, so (7̂)–(8̂) is exactly (7)–(8) with μ_β replaced by
    each word's empirical frequency μ̂_(α,β) = n_c N_(α,β)/(N L) (concept-wise; (8) counts KL = L n_c^L).
    For K < n_c^L (uniform words) the per-sentence loss is the mean-field log(1 − p + pΠ_ℓ(1 +
    (n_c−1)e^{−κ c r_{x_ℓ}})) of Theorem 1's H (p = K/n_c^L); its derivative carries the weight
    q = pΠ/(1 − p + pΠ), frozen at its value q̄ at Theorem 1's optimum. With ν_w all equal to L/n_w
    the solution is Theorem 1's c = √(τ/n_w), c′ = √(τ/(KL)) (checked in the tests).

    Assumptions: directional collapse (w ∝ f_α, u ∝ f_z) survives sampling; a word's pull per
    occurrence depends only on its own margin (exact for the full task, where the softmax factorises
    over positions — Proposition C); q frozen at q̄ (K < n_c^L); non-uniform μ needs K = n_c^L.
    Words that never occur get r_w = 0 (weight decay alone acts on them).

    Parameters
    ----------
    task : Task
    X : array_like of int, shape (N, L)
        The training sentences.
    lam : float
        λ > 0 (weight decay of W and U).

    Returns
    -------
    FiniteSamplePrediction
    """
    check_data(task, X)
    n_c, K, L = task.n_c, task.K, task.L
    kappa = n_c / (n_c - 1)
    full = _log_p(task) >= -1e-12
    theory_r, theory_c, qbar = _plugin_theory(task, lam, full)
    nu = np.bincount(X.ravel(), minlength=task.n_w) / X.shape[0]
    a = (n_c - 1) * kappa**2 * qbar * nu / lam  # x_w(n_c − 1 + e^{x_w}) = a_w s,  s = c²
    target = math.log(kappa**2 * K * L)

    def F(sig):  # log Σ x_w(s)² − 2 log s − log(κ²KL): decreasing in σ = log s
        x = _x_of(a * math.exp(sig), n_c)
        return math.log(np.sum(x * x)) - 2 * sig - target

    # s → 0: x ≈ a s/n_c, so F(−∞) = log(Σa²/n_c²) − target; a root exists iff this is > 0 ((9))
    F0 = math.log(np.sum(a * a)) - 2 * math.log(n_c) - target
    if not F0 > 0:
        fail(
            "lam",
            lam,
            "is too large: the plug-in system has only the trivial solution c = 0 (condition (9) "
            "with the empirical frequencies)",
        )

    # bracket in σ: at s = e^σ with F(σ) small, then expand upward
    lo = math.log(F0) - math.log(np.sum(a * a * a) / np.sum(a * a)) - 5.0
    while F(lo) <= 0:
        lo -= 5.0
    hi = lo + 1.0
    while F(hi) > 0:
        hi += 2.0
    sig = brentq(F, lo, hi, xtol=1e-14, rtol=1e-15, maxiter=500)
    s = math.exp(sig)
    c = math.sqrt(s)
    x = _x_of(a * s, n_c)
    r = x / (kappa * c)
    return FiniteSamplePrediction(
        "plugin", r, np.full((K, L), c), theory_r, theory_c, dict(c=c, qbar=qbar, nu=nu, full=full)
    )


# ----------------------------------------------------------------------------- (b) perturbation, reduced
def _class_softmax(task, s):
    """p^{(k)}_j = softmax_j(−s·dist(z_k, z_j)) at Theorem 1's point (every sentence of class k)."""
    D = task.hamming().astype(float)
    A = -s * D
    A -= A.max(axis=1, keepdims=True)
    P = np.exp(A)
    return P / P.sum(axis=1, keepdims=True)


def _pi(task, P):
    """π_{k,ℓ} = Σ_j p^{(k)}_j 1{z_jℓ ≠ z_kℓ}: probability mass on classes differing at ℓ."""
    K, L = task.K, task.L
    pi = np.empty((K, L))
    for l in range(L):
        same = task.Z[:, l][:, None] == task.Z[:, l][None, :]
        pi[:, l] = 1.0 - np.sum(P * same, axis=1)
    return pi


@public(task=Instance(Task), X=SENTENCES, y=LABELS, lam=LAM)
def predict_perturbation(task: Task, X, y, lam) -> FiniteSamplePrediction:
    """(b) First-order perturbation of Theorem 1's optimum by ∇(R̂ − R), reduced by symmetry.

    At the type-I optimum θ* (w = r̄ f_α, u_{k,ℓ} = c̄ f_{z_kℓ}, r̄ = √(τ/n_w), c̄ = √(τ/(KL))) every
    sentence of class k has the same softmax p^{(k)} = softmax(−s·dist(z_k, ·)), s = κ r̄ c̄. In the
    collapse coordinates (r_w, c_{k,ℓ}) the gradient of R̂ at θ* is

        ∂R̂/∂r_w = λ r̄ − (c̄ κ / N) Σ_{(i,ℓ): x_iℓ = w} π_{y_i, ℓ},   ∂R̂/∂c_{k,ℓ} = ∂R/∂c_{k,ℓ},

    π_{k,ℓ} = Σ_j p^{(k)}_j 1{z_jℓ ≠ z_kℓ}: sampling moves only the words. The true Hessian maps the
    within-concept deviations δr′ (Σ_β δr′_(α,β) = 0) to themselves, diagonally:

        h_α = λ + (c̄² κ² / (K s_c)) Σ_{(k,ℓ): z_kℓ = α} π_{k,ℓ}(1 − π_{k,ℓ}),

    (the variance over words of ½E[δhᵀ(diag p − ppᵀ)δh]); the concept means and the c_{k,ℓ} are
    not moved at first order (their empirical gradient equals the true one). Hence

        r_w ≈ r̄ − (∂R̂/∂r_w − mean_{β} ∂R̂/∂r_(α,β)) / h_α,       ‖u_{k,ℓ}‖ ≈ c̄.

    Assumptions: uniform words; θ* is Theorem 1's point (exact under Assumption A; for a random
    latent set its residual gradient is ignored); directional perturbations do not feed back into
    the norms at first order. Error O(1/n_spl) relative; sampling gives no first-order spread of
    ‖u_{k,ℓ}‖ (the observed one is a second-order effect, see docs/finite-sample.md).

    Parameters
    ----------
    task : Task
        Uniform word frequencies.
    X, y : the training sentences and labels.
    lam : float
        λ > 0.

    Returns
    -------
    FiniteSamplePrediction
        ``info``: r̄, c̄, s, ``grad`` (∂R̂/∂r_w), ``h`` (per concept), ``pi`` (K×L).
    """
    if not task.is_uniform:
        fail("task", task, "predict_perturbation needs uniform words (Theorem 1's optimum)")
    check_data(task, X, y)
    check_work(
        "task",
        task,
        items=task.K * task.K * task.L,
        bytes=8 * 4 * task.K * task.K,
        what="predict_perturbation (K×K softmax of every class)",
    )
    n_c, s_c, K, L, N = task.n_c, task.s_c, task.K, task.L, X.shape[0]
    kappa = n_c / (n_c - 1)
    r0, c0, s = _type1_point(task, lam)
    P = _class_softmax(task, s)
    pi = _pi(task, P)
    # ∂R̂/∂r_w: π-weighted occurrence counts
    wsum = np.bincount(X.ravel(), weights=pi[y].ravel(), minlength=task.n_w)
    grad = lam * r0 - c0 * kappa * wsum / N
    gc = grad.reshape(n_c, s_c)
    dev = gc - gc.mean(axis=1, keepdims=True)
    h = np.empty(n_c)
    for a in range(n_c):
        m = task.Z == a
        h[a] = lam + c0**2 * kappa**2 * np.sum(pi[m] * (1 - pi[m])) / (K * s_c)
    r = r0 - (dev / h[:, None]).ravel()
    return FiniteSamplePrediction(
        "perturbation", r, np.full((K, L), c0), r0, c0, dict(r_bar=r0, c_bar=c0, s=s, grad=grad, h=h, pi=pi)
    )


# ----------------------------------------------------------------------------- (c) reduced empirical minimiser
def _reduced_fg(task, F, X, y, lam):
    """R̂ and its gradient in the collapse coordinates (r ∈ R^{n_w}, c ∈ R^{K×L})."""
    n_w, K, L, s_c = task.n_w, task.K, task.L, task.s_c
    Fw = F[:, np.arange(n_w) // s_c]  # f_α for every word (d×n_w)
    Fz = F[:, task.Z]  # f_{z_kℓ}: d×K×L

    def fg(x):
        r, c = x[:n_w], x[n_w:].reshape(K, L)
        W = Fw * r
        U = (Fz * c).transpose(1, 2, 0).reshape(K, L * F.shape[0])
        R, dW, dU = empirical_risk(task, W, U, X, y, lam)
        gr = np.sum(Fw * dW, axis=0)
        gc = np.sum(Fz * dU.reshape(K, L, -1).transpose(2, 0, 1), axis=0)
        return R, np.concatenate([gr, gc.ravel()]), None

    return fg


@public(
    task=Instance(Task),
    X=SENTENCES,
    y=LABELS,
    lam=LAM,
    gtol=Real(lo=0.0, lo_open=True),
    maxiter=Int(min=1, max=10**7),
    r0=Array(ndim=1).or_none(),
    c0=Array(ndim=2).or_none(),
)
def predict_reduced(
    task: Task, X, y, lam, *, gtol: float = 1e-9, maxiter: int = 20000, r0=None, c0=None
) -> FiniteSamplePrediction:
    """(c) The empirical risk minimised exactly inside the collapse ansatz.

    With an equiangular frame f_α (Definition D, d = n_c − 1), w_(α,β) = r_(α,β) f_α and
    u_{k,ℓ} = c_{k,ℓ} f_{z_kℓ}, the scores are h_j(x) = Σ_ℓ c_{j,ℓ} r_{x_ℓ} (n_c δ(z_jℓ, α_ℓ) − 1)/(n_c − 1)
    and the penalty (λ/2)(Σ r² + Σ c²); this function minimises R̂ over the n_w + KL scalars by L-BFGS
    (exact gradients) from Theorem 1's / 2's point. Every word has its own norm and every (k, ℓ) its
    own ‖u_{k,ℓ}‖: the prediction keeps the actual sentences and latent variables, and drops only the
    directional deviations from collapse (it is exact when the empirical minimiser is collapsed).

    Parameters
    ----------
    task : Task
    X, y : the training sentences and labels.
    lam : float
        λ > 0.
    gtol : float
        Stop at ‖∇‖ ≤ gtol in the reduced coordinates.
    maxiter : int
    r0, c0 : array_like, optional
        Start (n_w,) and (K, L); default: the plug-in prediction.

    Returns
    -------
    FiniteSamplePrediction
        ``info``: R (reduced empirical risk), grad_norm, nit, message.
    """
    check_data(task, X, y)
    n_c, n_w, K, L = task.n_c, task.n_w, task.K, task.L
    check_size(task, X.shape[0], n_c - 1, "predict_reduced")
    F = equiangular_frame(n_c, n_c - 1)
    if r0 is None or c0 is None:
        try:
            start = predict_plugin(task, X, lam)
            r_s, c_s = start.word_norm, start.u_norm
            tr, tc = start.theory_word_norm, start.theory_u_norm
        except Exception:  # noqa: BLE001  (no non-trivial plug-in point: start small)
            r_s, c_s, tr, tc = np.full(n_w, 0.1), np.full((K, L), 0.1), 0.0, 0.0
    else:
        tr = tc = 0.0
    r_s = r0 if r0 is not None else r_s
    c_s = c0 if c0 is not None else c_s
    if r_s.shape != (n_w,):
        fail("r0", r_s, f"must have shape (n_w,) = ({n_w},)")
    if c_s.shape != (K, L):
        fail("c0", c_s, f"must have shape (K, L) = ({K}, {L})")
    fg0 = _reduced_fg(task, F, X, y, lam)

    def fg(x):
        with np.errstate(over="ignore", invalid="ignore"):
            R, g, _ = fg0(x)
        if not np.isfinite(R):
            return np.inf, np.full_like(x, np.inf), None
        return R, g, None

    x, f, gn, it, msg = lbfgs(fg, np.concatenate([r_s, c_s.ravel()]), gtol, maxiter)
    if not np.isfinite(f):
        fail("r0", r_s, "the minimisation left float64 (start too large)")
    r, c = x[:n_w], x[n_w:].reshape(K, L)
    # a norm is |r|: a sign flip of r_w (or c) is the same point reflected through the frame
    return FiniteSamplePrediction(
        "reduced", np.abs(r), np.abs(c), tr, tc, dict(R=f, grad_norm=gn, nit=it, message=msg, r=r, c=c)
    )


# ----------------------------------------------------------------------------- (d) on the population optimum
#: where :func:`predict_on_optimum` takes the words' directions from
DIRECTIONS_EXACT = "the certified population optimum"
DIRECTIONS_UNIFORM = (
    "the certified collapsed optimum of the same latent set with uniform mu (non-uniform mu beyond the exact "
    "engine: each concept's words share their concept's direction, as type III has them on full tasks; an "
    "approximation of the population optimum's directions)"
)


def _directions_of(task, lam):
    """(θ*, where it comes from): the population optimum; for non-uniform μ where the exact engine refuses the
    enumeration, the collapsed optimum of the uniform-μ task on the same latent set."""
    try:
        return _population_optimum(task, lam=lam), DIRECTIONS_EXACT
    except FCTheoryError:
        if task.is_uniform:  # the collapsed problem itself was refused: nothing cheaper to offer
            raise
    return collapsed_optimum(replace(task, mu="uniform"), lam=lam), DIRECTIONS_UNIFORM


@public(
    task=Instance(Task),
    X=SENTENCES,
    y=LABELS,
    lam=LAM,
    gtol=Real(lo=0.0, lo_open=True),
    maxiter=Int(min=1, max=10**7),
)
def predict_on_optimum(task: Task, X, y, lam, *, gtol: float = 1e-9, maxiter: int = 20000) -> FiniteSamplePrediction:
    """(d) The empirical risk minimised on top of the population optimum: each word keeps the direction it has
    at the certified global minimiser of the true risk (5), its norm and the classifier are fitted to the sentences.

    θ* is :func:`fctheory.risk.optimum` (uniform μ: the collapsed optimum, any latent set and any K,
    :func:`fctheory.collapsed_optimum`; otherwise the enumerated one), of width r. For non-uniform μ beyond the
    exact engine (the paper's Zipf tasks, K = 1000 of 3^15) θ* is the collapsed optimum of the same latent set
    with uniform μ: every word keeps its concept's direction there (type III on full tasks has that shape) and
    the fitted norms ρ carry the frequencies; ``info["directions"]`` says which source was used. With
    D_w = w*_w/‖w*_w‖ (for uniform μ one direction per concept), w = ρ_w D_w and U ∈ R^(K×Lr) free, R̂(ρ, U)
    is minimised by L-BFGS (exact gradients) from (‖w*‖, U*). Unlike (c) (:func:`predict_reduced`) nothing
    assumes Theorem 1's geometry: on a partial task the optimum's concept directions are not equiangular, its
    concept norms differ and u_(k,ℓ) is not collinear with f_(z_kℓ); and the population optimum itself is a
    point of the ansatz, so with every sentence once (R̂ = R for uniform μ) the prediction is θ*. What it drops:
    the words' directional
    deviations from θ* (the small singular values of a trained W).

    Parameters
    ----------
    task : Task
    X, y : the training sentences and labels.
    lam : float
        λ > 0 (both decays).
    gtol : float
        Stop at ‖∇‖ ≤ gtol in (ρ, U).
    maxiter : int

    Returns
    -------
    FiniteSamplePrediction
        ``theory_word_norm``/``theory_u_norm``: the population optimum's mean norms; ``info``: R (empirical risk of
        the prediction), grad_norm, nit, message, rho, width, R_population (min R of (5)), population_gap, and
        the fitted weights W (r × n_w) and U (K × L·r).
    """
    check_data(task, X, y)
    n_w, K, L = task.n_w, task.K, task.L
    opt, source = _directions_of(task, lam)
    r = opt.W.shape[0]
    check_size(task, X.shape[0], r, "predict_on_optimum")
    rho0 = np.linalg.norm(opt.W, axis=0)
    # a word at the origin of θ* keeps some direction (the first axis): weight decay alone acts on it there
    D = np.where(rho0 > 0, opt.W / np.where(rho0 > 0, rho0, 1.0), np.eye(r, 1))

    def fg(x):
        with np.errstate(over="ignore", invalid="ignore"):
            R, dW, dU = empirical_risk(task, D * x[:n_w], x[n_w:].reshape(K, L * r), X, y, lam)
        if not np.isfinite(R):
            return np.inf, np.full_like(x, np.inf), None
        return R, np.concatenate([np.sum(D * dW, axis=0), dU.ravel()]), None

    x, f, gn, it, msg = lbfgs(fg, np.concatenate([rho0, opt.U.ravel()]), gtol, maxiter)
    rho, U = x[:n_w], x[n_w:].reshape(K, L * r)
    u = np.linalg.norm(U.reshape(K, L, r), axis=2)
    info = dict(R=f, grad_norm=gn, nit=it, message=msg, rho=rho, width=r, R_population=opt.R,
                population_gap=opt.gap, W=D * rho, U=U, directions=source)  # fmt: skip
    # a norm is |ρ|: a sign flip of ρ_w is the same word reflected through the origin
    return FiniteSamplePrediction(
        "optimum",
        np.abs(rho),
        u,
        float(np.mean(rho0)),
        float(np.mean(np.linalg.norm(opt.U.reshape(K, L, r), axis=2))),
        info,
    )


# ----------------------------------------------------------------------------- (b) full space, enumerable
@public(
    task=Instance(Task),
    X=SENTENCES,
    y=LABELS,
    lam=LAM,
    W=Array(ndim=2),
    U=Array(ndim=2),
    h=Real(lo=0.0, lo_open=True, hi=0.1),
    tol=Real(lo=0.0, lo_open=True),
    maxiter=Int(min=1, max=10**6),
)
def perturbation_full(
    task: Task, X, y, lam, W, U, *, h: float = 1e-5, tol: float = 1e-10, maxiter: int = 2000
) -> FiniteSamplePrediction:
    """(b) in the full weight space: θ̂ ≈ θ* − H⁻¹ ∇R̂(θ*) with the exact true risk's Hessian.

    (W, U) must be a minimiser θ* of the true risk (5) (e.g. :func:`fctheory.minimize_true_risk`);
    since ∇R(θ*) = 0, ∇(R̂ − R)(θ*) = ∇R̂(θ*). Hessian-vector products are central differences
    (step h·‖θ*‖/‖v‖) of the exact gradient :func:`fctheory.true_risk_grad`, and H δ = −∇R̂ is solved
    by MINRES (H is singular along the rotations θ ↦ (QW, UQᵀ), to which ∇R̂ is orthogonal since R̂
    is rotation-invariant too). Norms to first order: ‖w + δw‖ ≈ ‖w‖ + ⟨w, δw⟩/‖w‖.

    Assumptions: the task is enumerable by the exact-risk engine (its budget applies); θ* is a
    strict minimum modulo rotations. Error O(‖∇R̂(θ*)‖²).

    Parameters
    ----------
    task : Task
    X, y : the training sentences and labels.
    lam : float
    W, U : a true-risk minimiser (d×n_w, K×L·d).
    h : float
        Relative finite-difference step of the Hessian-vector products.
    tol : float
        MINRES relative tolerance.
    maxiter : int

    Returns
    -------
    FiniteSamplePrediction
        ``info``: dW, dU (the first-order displacement), grad (∇R̂(θ*)), minres info.
    """

    check_weights(task, W, U)
    check_data(task, X, y)
    d, n_w, K, L = W.shape[0], task.n_w, task.K, task.L
    nW = d * n_w
    _, gW, gU = empirical_risk_grad(task, W, U, X, y, lam)
    g = np.concatenate([gW.ravel(), gU.ravel()])
    x0 = np.concatenate([W.ravel(), U.ravel()])
    scale = h * max(1.0, float(np.linalg.norm(x0)))

    def grad(x):
        _, a, b = true_risk_grad(task, x[:nW].reshape(d, n_w), x[nW:].reshape(K, L * d), lam)
        return np.concatenate([np.asarray(a).ravel(), np.asarray(b).ravel()])

    def hvp(v):
        nv = float(np.linalg.norm(v))
        if nv == 0.0:
            return np.zeros_like(v)
        e = scale / nv
        return (grad(x0 + e * v) - grad(x0 - e * v)) / (2 * e)

    op = LinearOperator((x0.size, x0.size), matvec=hvp, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        delta, info = minres(op, -g, rtol=tol, maxiter=maxiter)
    if not np.all(np.isfinite(delta)):
        fail("W", W, "the Newton step left float64: (W, U) is not a true-risk minimiser at this λ")
    dW, dU = delta[:nW].reshape(d, n_w), delta[nW:].reshape(K, L * d)
    wn, un = norms(task, W, U)
    dwn = np.sum(W * dW, axis=0) / np.where(wn > 0, wn, 1)
    U3, dU3 = U.reshape(K, L, d), dU.reshape(K, L, d)
    dun = np.sum(U3 * dU3, axis=2) / np.where(un > 0, un, 1)
    return FiniteSamplePrediction(
        "perturbation_full",
        wn + dwn,
        un + dun,
        float(np.mean(wn)),
        float(np.mean(un)),
        dict(dW=dW, dU=dU, grad=g, minres_info=int(info), d_word_norm=dwn, d_u_norm=dun),
    )


@public(
    task=Instance(Task),
    X=SENTENCES,
    y=LABELS,
    lam=LAM,
    d=Int(min=1, max=2**20).or_none(),
    tol=Real(lo=0.0, lo_open=True, hi=1.0),
    max_seconds=Real(lo=0.0, lo_open=True, inf_ok=True).or_none(),
)
def predict_training_optimum(
    task: Task, X, y, lam, *, d: int | None = None, tol: float = 1e-8, max_seconds=None
) -> FiniteSamplePrediction:
    """A network h trained on (X, y), predicted from the certified global minimiser of its training objective.

    R̂(W, U) = (1/N) Σ_i CE(h(x_i), y_i) + (λ/2)(‖W‖² + ‖U‖²) has, over every width d ≥ rank X*, the minimum of the
    convex min_X f̂(X) + λ‖X‖_* (X = ÛᵀW; Claim G with the empirical average for the expectation), which
    :func:`fctheory.optimum` with ``data=(X, y)`` certifies. Every global minimiser of R̂ is a balanced factorisation
    of X*: WᵀW = (X*ᵀX*)^(1/2) and ÛÛᵀ = (X*X*ᵀ)^(1/2), so each word norm ‖w_(α,β)‖, the singular values of W
    (√σ_i(X*): the collapse directions and the memorisation directions alike), ‖u_(k,ℓ)‖ and the train
    cross-entropy f̂(X*) are the same for every minimiser, whatever its rotation: they are what a network trained
    to the optimum shows. Where the network's width d is below rank X*, the width-d objective's minimum lies above
    the convex one: the prediction is then the width-d local minimiser started from the truncated optimum
    (``info["status"] == "width-limited"``), and the convex optimum is a certified lower bound of it.

    Parameters
    ----------
    task : Task
    X, y : the training sentences (N × L word indices) and labels.
    lam : float
        λ > 0 (both decays).
    d : int, optional
        The trained network's width (default: any width, the convex optimum).
    tol : float
        Relative certified gap of the solve (default 1e-8).
    max_seconds : float, optional
        Time limit of the solve (default: the budget in force).

    Returns
    -------
    FiniteSamplePrediction
        ``method`` "training optimum"; ``word_norm`` (n_w,), ``u_norm`` (K, L); ``info``: ``sigma_W`` (the
        singular values of W, decreasing), ``pca_W`` (those of W's columns centred on their mean, as
        docs/reproduction.md's PCA), ``ce`` (f̂ at the prediction: the train cross-entropy), ``R``,
        ``R_convex`` (min R̂ over every width), ``lower_bound``, ``gap``, ``rel_gap``, ``certified``, ``status``,
        ``rank`` (rank X*), ``width``, ``message``, ``W``, ``U``.
    """
    check_data(task, X, y)
    res = _population_optimum(task, lam=lam, data=(X, y), d=d, tol=tol, max_seconds=max_seconds)
    W, U = res.W, res.U
    w, u = norms(task, W, U)
    ce = float(res.R - 0.5 * lam * (float(np.sum(W * W)) + float(np.sum(U * U))))
    C = W - W.mean(axis=1, keepdims=True)
    info = dict(
        sigma_W=np.linalg.svd(W, compute_uv=False), pca_W=np.linalg.svd(C, compute_uv=False), ce=ce, R=res.R,
        R_convex=res.R_convex, lower_bound=res.lower_bound, gap=res.gap, rel_gap=res.rel_gap,
        certified=res.certified, status=res.status, rank=res.width, width=int(W.shape[0]), message=res.message,
        W=W, U=U,
    )  # fmt: skip
    return FiniteSamplePrediction("training optimum", w, u, info=info)
