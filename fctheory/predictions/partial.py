"""What the library predicts on a partial task (K < n_c^L), and where each number comes from (its provenance).

Network h with uniform μ: Lemma B's closed form where the latent set satisfies it, else the certified optimum in
the collapsed coordinates (:func:`fctheory.collapsed_optimum`), else (over the budget) Theorem 1's numbers
labelled as an approximation. Network h with any μ: the certified optimum by enumeration (:func:`predict_exact`).
Network h*: the best feature-collapsed h* (:func:`fctheory.collapsed_optimum_star`).
"""

from __future__ import annotations

import json
import math
import weakref
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._validate import result_type
from .._errors import FCTheoryError
from ..assumptions import lemma_B_properties
from .._budget import get_budget
from ..io.tasks import task_fingerprint
from ..network import U_hat
from ..optima import optimum, sample_average_optimum
from ..optima.collapsed import collapsed_optimum, collapsed_optimum_star
from ..risk.enumeration import check_budget, estimate
from ..partial import lemma_b_scale
from ..theorems import PredictionBase, predict_type1

# ============================================================================= partial tasks (K < n_c^L)
#: provenance of a partial task's prediction: the certified global minimiser of (5) (collapsed problem for
#: uniform μ, the exact engine's enumeration for any μ)
EXACT = "exact (certified optimum)"
#: provenance: t* of fctheory.lemma_b_scale (uniform μ, a latent set satisfying Lemma B)
LEMMA_B = "closed form under Lemma B"
#: provenance: Theorem 1's formulas at this K (its counts (39) assume Assumption A, which no partial set meets)
APPROXIMATION = "approximation (Theorem 1's K-only tau), error unknown"
#: provenance: non-uniform μ beyond the exact engine, the population optimum estimated by the certified optima of
#: fresh samples (fctheory.optima.sample_average_optimum), with its statistical error
SAMPLE_AVERAGE = "sample-average approximation (certified optima of fresh samples), statistical error stated"


@result_type
@dataclass(frozen=True)
class PartialPrediction(PredictionBase):
    """What the library predicts for network h on a partial task (K < n_c^L), and where the numbers come from.

    Attributes
    ----------
    provenance : str
        :data:`EXACT` (the certified global minimiser of (5): for uniform μ
        :func:`fctheory.collapsed_optimum`, any K; for any μ :func:`fctheory.optimum` by enumeration, where the
        exact engine enumerates the task within the budget), :data:`LEMMA_B` (the closed form t* of
        :func:`fctheory.lemma_b_scale`, uniform μ and a latent set satisfying Lemma B) or
        :data:`APPROXIMATION` (Theorem 1's τ at this K, whose counts (39) need Assumption A; only where the
        budget refuses the collapsed problem's K × K work).
    n_c, n_w, L, K, lam
        The setting (λ of the reduced problem (5)).
    tau
        ‖W‖² = ‖X‖_* of the predicted point (t*, τ, or the optimum's nuclear norm).
    w_norms : ndarray, shape (n_w,)
        Predicted ‖w_(α,β)‖ per word, index α·s_c + β (equal for type I; the optimum's columns of W for EXACT).
    c
        Mean word norm.
    norm_W, norm_U
        ‖W‖_F and ‖U‖_F (equal: every minimiser of (5) is balanced).
    risk, ce
        R at the predicted point and its unregularised cross-entropy.
    lambda_bound
        λ above which the prediction is the origin: λ₀,Z (LEMMA_B), λ₀ of Theorem 1 (APPROXIMATION), ‖∇f_c(0)‖₂
        (EXACT, uniform μ), None (EXACT by enumeration, non-uniform μ).
    trivial
        The predicted point is (W, U) = (0, 0).
    gap
        The certified gap R − (lower bound on min R) for EXACT, else None.
    theorem1_c
        Theorem 1's word norm √(τ/n_w) at this K (the large-K idealisation), for comparison; None for
        non-uniform μ.
    error
        :data:`SAMPLE_AVERAGE`: the stated relative error of the word norms (statistical noise, and the SAA's
        bias as its bracket of min R shows it); None otherwise (EXACT: the certified gap says it all).
    w_norms_se
        :data:`SAMPLE_AVERAGE`: the standard error of each predicted word norm (over the replicates), else None.
    risk_bracket
        :data:`SAMPLE_AVERAGE`: a statistical interval for min R, two standard errors below the replicates' mean
        minimum (a lower bound in expectation) to two above a validation sample's R̂ at their average optimum (an
        upper bound in expectation); else None.
    """

    provenance: str
    n_c: int
    n_w: int
    L: int
    K: int
    lam: float
    tau: float
    w_norms: np.ndarray
    c: float
    norm_W: float
    norm_U: float
    risk: float
    ce: float
    lambda_bound: float | None
    trivial: bool
    gap: float | None
    theorem1_c: float | None
    error: float | None = None
    w_norms_se: np.ndarray | None = None
    risk_bracket: tuple | None = None


#: exact Assumption A/B and Lemma B checks for K < n_c^L only up to this K (they grow like K²)
ASSUMPTION_K_MAX = 400


def pca_sigmas(A, n, a):
    """The n largest singular values of A's columns centred on their mean, × a (the PCA σ of docs/reproduction.md)."""
    C = A - A.mean(axis=1, keepdims=True)
    s = np.linalg.svd(C, compute_uv=False)
    return [float(a * v) for v in np.concatenate([s, np.zeros(n)])[:n]]


def _lemma_b_holds(task) -> bool:
    """Lemma B's properties, checked exactly for uniform μ and K ≤ 400 (cost K²); (ii) needs n_c | K."""
    if not task.is_uniform or task.K > ASSUMPTION_K_MAX or task.K % task.n_c:
        return False
    try:
        return bool(lemma_B_properties(task).holds)
    except FCTheoryError:  # refused by the work budget: no closed form claimed
        return False


def partial_parts(task, lam, p1, a=1.0):
    """(the collapsed optimum or None, prediction). Network h on a partial task, uniform μ, from the theory
    layer: Lemma B's closed form when the latent set satisfies it, else the certified optimum in the collapsed
    coordinates (:func:`fctheory.collapsed_optimum`, exact for uniform μ), else (over the budget, or not
    certified in time) Theorem 1's numbers ``p1`` labelled as an approximation. W norms × a, U norms ÷ a."""
    base = dict(n_c=task.n_c, n_w=task.n_w, L=task.L, K=task.K, lam=float(lam), theorem1_c=a * p1.c)
    if _lemma_b_holds(task):
        b = lemma_b_scale(task, lam=lam)
        t, c, lam_b, R, ce, prov = b.t_star, b.word_norm, b.lambda0, b.risk, b.ce, LEMMA_B
    else:
        opt = _collapsed_or_none(task, lam)
        if opt is not None:
            return opt, PartialPrediction(
                provenance=EXACT, tau=opt.tau, w_norms=a * opt.w_norms, c=float(a * np.mean(opt.w_norms)),
                norm_W=float(a * np.sqrt(opt.tau)), norm_U=float(np.sqrt(opt.tau) / a), risk=opt.R, ce=opt.ce,
                lambda_bound=opt.lambda0, trivial=opt.width == 0, gap=opt.gap, **base,
            )  # fmt: skip
        t, c, lam_b, R, ce, prov = p1.tau, p1.c, p1.lambda_trivial, p1.risk, p1.ce, APPROXIMATION
    return None, PartialPrediction(
        provenance=prov, tau=float(t), w_norms=np.full(task.n_w, a * c), c=float(a * c),
        norm_W=float(a * np.sqrt(t)), norm_U=float(np.sqrt(t) / a), risk=float(R), ce=float(ce),
        lambda_bound=float(lam_b), trivial=bool(t == 0), gap=None, **base,
    )  # fmt: skip


#: certified collapsed optima per task (a Task is immutable and hashed by identity) and λ: the trainer's
#: measurements and the CLI ask the dispatcher for the same (task, λ) again and again
_COLLAPSED = weakref.WeakKeyDictionary()
_COLLAPSED_PER_TASK = 16


def _remembered(cache, task, key, solve):
    """``solve()`` once per (task, key): the certified result, or None when the budget refuses it or it is not
    certified (neither is remembered: a later call, e.g. under a larger budget, tries again)."""
    known = cache.setdefault(task, {})
    if key in known:
        return known[key]
    try:
        opt = solve()
    except FCTheoryError:  # over the memory or time budget: the approximation, labelled as such (not kept)
        return None
    if not opt.certified:
        return None
    if len(known) >= _COLLAPSED_PER_TASK:
        known.pop(next(iter(known)))
    known[key] = opt
    return opt


def _collapsed_or_none(task, lam):
    """The certified collapsed optimum (uniform μ), or None when the budget refuses it or it is not certified."""
    if not task.is_uniform or not 1e-12 <= lam <= 1e12:
        return None
    return _remembered(_COLLAPSED, task, float(lam), lambda: collapsed_optimum(task, lam=lam))


#: provenance of an h* partial task's prediction: fctheory.collapsed_optimum_star
COLLAPSED_STAR = "best feature-collapsed network (certified among collapsed networks)"


@result_type
@dataclass(frozen=True)
class PartialStarPrediction(PredictionBase):
    """What the library predicts for network h* (LayerNorm, risk (10)) on a partial task (K < n_c^L).

    The best feature-collapsed h* of the latent set (:func:`fctheory.collapsed_optimum_star`): certified among
    networks whose words share their concept's feature (a convex problem in the features' Gram and the scores),
    for any word frequencies (collapsed features do not depend on them). That collapse itself is optimal is
    Theorem 3 on full tasks and an assumption here (provenance :data:`COLLAPSED_STAR`).

    Attributes
    ----------
    provenance : str
    n_c, L, K, d, lam
        The setting (λ = λ_U of (10)).
    tau : float
        ‖U‖_F (τ* on a full task).
    u_norms : ndarray, shape (K, L)
        Predicted ‖u_(k,ℓ)‖.
    c : float
        Their mean (Theorem 3's c = τ*/√(KL) on a full task).
    phi_norm : float
        ‖φ(w)‖ = √d (ε = 0).
    cosines : ndarray, shape (n_c, n_c)
        Cosines between the concepts' features.
    risk, ce : float
        R* of (10) and its cross-entropy part.
    gap : float
        Certified gap among collapsed networks.
    theorem3_c : float
        Theorem 3's c at this K (the large-K idealisation), for comparison.
    """

    provenance: str
    n_c: int
    L: int
    K: int
    d: int
    lam: float
    tau: float
    u_norms: np.ndarray
    c: float
    phi_norm: float
    cosines: np.ndarray
    risk: float
    ce: float
    gap: float
    theorem3_c: float


_COLLAPSED_STAR = weakref.WeakKeyDictionary()


def _collapsed_star_or_none(task, lam, d):
    """The certified best collapsed h* (cached per task, λ and d), or None when refused or not certified."""
    if not 1e-12 <= lam <= 1e12 or d < task.n_c:
        return None
    return _remembered(_COLLAPSED_STAR, task, (float(lam), int(d)), lambda: collapsed_optimum_star(task, lam=lam, d=d))


def star_partial(task, d, lam_U, pred, notes, p):
    """(prediction object, provenance) of h* on a partial task: the best collapsed h* where it is certified
    (``pred`` updated in place), else Theorem 3's numbers ``p``."""
    opt = _collapsed_star_or_none(task, lam_U, d)
    if opt is None:
        return p, ""
    notes.append(
        "partial latent set: the best feature-collapsed h* (fctheory.collapsed_optimum_star, certified gap "
        f"{opt.gap:.1e} among collapsed networks) replaces Theorem 3's K-only τ*"
    )
    off = ~np.eye(task.n_c, dtype=bool)
    words = np.repeat(opt.phi, task.s_c, axis=0).T
    pred.update(
        R=opt.R, R0=opt.ce, tau=opt.tau, u_norm=opt.c, cos_across=float(np.mean(opt.cosines[off])),
        pca_W=pca_sigmas(words, task.n_c - 1, 1.0), pca_U=pca_sigmas(opt.U.reshape(-1, opt.phi.shape[1]).T,
                                                                        task.n_c - 1, 1.0),
    )  # fmt: skip
    pp = PartialStarPrediction(
        provenance=COLLAPSED_STAR, n_c=task.n_c, L=task.L, K=task.K, d=int(d), lam=float(lam_U), tau=opt.tau,
        u_norms=opt.u_norms, c=opt.c, phi_norm=math.sqrt(d), cosines=opt.cosines, risk=opt.R, ce=opt.ce,
        gap=opt.gap, theorem3_c=float(p.c),
    )  # fmt: skip
    return pp, COLLAPSED_STAR


# ============================================================================= partial tasks, any word frequencies
#: engine evaluations the enumerated optimum's solve takes, at most in practice (FISTA to a coarse gap, one L-BFGS
#: polish, the certificate): the dispatcher solves by enumeration only when this many fit the time budget
ENUMERATION_EVALS = 400

_ENUMERATED = weakref.WeakKeyDictionary()


def _enumerated_or_none(task, lam):
    """The certified optimum of (5) by enumeration (any μ), or None where its solve would not fit the budget in
    force (ENUMERATION_EVALS engine evaluations), the budget refuses it, or it is not certified."""
    if not 1e-12 <= lam <= 1e12:
        return None
    limits = get_budget()
    try:  # checked before the memo, so that the answer under a budget does not depend on earlier calls
        est = estimate(task, task.n_w, True, "numpy", limits.max_bytes, 1)
        check_budget(est, limits.max_seconds, limits.max_bytes, task)
    except FCTheoryError:
        return None
    if limits.max_seconds is not None and est.seconds * ENUMERATION_EVALS > limits.max_seconds:
        return None
    return _remembered(_ENUMERATED, task, float(lam), lambda: optimum(task, lam=lam, symmetry=False))


def optimum_prediction(task, lam, res, provenance, a=1.0) -> PartialPrediction:
    """The :class:`PartialPrediction` of a certified optimum ``res`` of (5) (an :class:`fctheory.OptimumResult`):
    per-word norms ‖w_(α,β)‖ from its balanced W (the same for every minimiser: WᵀW = (XᵀX)^(1/2)), ‖W‖² = ‖X‖_*,
    R, its cross-entropy and certified gap; W norms × a, U norms ÷ a (the decay reduction)."""
    w = np.linalg.norm(res.W, axis=0)
    t = float(np.sum(w * w))
    u2 = float(np.sum(res.U * res.U))
    c1 = None
    if task.is_uniform and task.n_c >= 2:
        c1 = float(a * predict_type1(n_c=task.n_c, n_w=task.n_w, L=task.L, K=task.K, lam=lam).c)
    return PartialPrediction(
        provenance=provenance, n_c=task.n_c, n_w=task.n_w, L=task.L, K=task.K, lam=float(lam), tau=t,
        w_norms=a * w, c=float(a * w.mean()), norm_W=float(a * np.sqrt(t)), norm_U=float(np.sqrt(u2) / a),
        risk=float(res.R), ce=float(res.R - 0.5 * lam * (t + u2)), lambda_bound=None, trivial=bool(t == 0),
        gap=float(res.gap), theorem1_c=c1,
    )  # fmt: skip


def nonuniform_parts(task, lam, a=1.0):
    """(optimum or sample-average summary, prediction) for network h on a partial task with non-uniform μ: the
    certified optimum by enumeration where it fits the budget (provenance :data:`EXACT`), else the sample-average
    approximation (:data:`SAMPLE_AVERAGE`: stored for the task, or computed where it fits the budget), else
    (None, None)."""
    opt = _enumerated_or_none(task, lam)
    if opt is not None:
        return opt, optimum_prediction(task, lam, opt, EXACT, a)
    summary = _sampled_or_none(task, lam)
    if summary is None:
        return None, None
    return summary, sample_average_prediction(task, lam, summary, a)


def exact_prediction_or_none(task, lam):
    """The :data:`EXACT` prediction of network h on a partial task, whatever the latent set: the certified collapsed
    optimum (uniform μ) or the enumerated one (any μ), where it fits the budget in force; else None."""
    opt = _collapsed_or_none(task, lam) if task.is_uniform else _enumerated_or_none(task, lam)
    return None if opt is None else optimum_prediction(task, lam, opt, EXACT)


# ============================================================================= the sample-average approximation
#: the dispatcher's sample average: sentences per class of each sample, and independent samples
SAA_N_SPL = 100
SAA_REPLICATES = 3
#: f̂ + ∇f̂ evaluations of one training-set optimum's solve, and seconds per (sentence, class, position) term of one
#: evaluation (a lower bound, as the budget's other rates: docs/performance.md, the training-set optimum)
SAA_EVALS = 300
SAA_TERM_SECONDS = 2e-10
#: sample averages stored for the tasks people ask about (the paper's Zipf latent set), by task fingerprint and λ:
#: written by ``python -m proofs_check.training_sets --store``
STORED_SAMPLE_AVERAGES = Path(__file__).with_name("sample_averages.json")

_SAMPLED = weakref.WeakKeyDictionary()


def stored_sample_average(task, lam) -> dict | None:
    """The stored sample-average summary of (task, λ), or None."""
    if not STORED_SAMPLE_AVERAGES.is_file():
        return None
    key = f"{task_fingerprint(task)}@{float(lam)!r}"
    entry = json.loads(STORED_SAMPLE_AVERAGES.read_text(encoding="utf-8"))["entries"].get(key)
    return None if entry is None else dict(entry, stored=True)


def sample_average_summary(task, s) -> dict:
    """What the dispatcher reads of a :class:`fctheory.optima.SampleAverageOptimum` (JSON-able, for the store)."""
    Uh = U_hat(s.U, L=task.L)
    words = s.W.reshape(s.W.shape[0], task.n_c, task.s_c).sum(axis=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        D = words / np.linalg.norm(words, axis=0)
    off = ~np.eye(task.n_c, dtype=bool)
    return dict(
        w_norms=[float(v) for v in s.w_norms], w_norms_se=[float(v) for v in s.w_norms_se], tau=s.tau,
        tau_se=s.tau_se, u_norm_mean=float(np.mean(s.u_norms)), u_norm_std=float(np.std(s.u_norms)),
        norm_U=float(np.sqrt(np.sum(s.u_norms**2))), R_lower=s.R_lower, R_lower_se=s.R_lower_se, R_upper=s.R_upper,
        R_upper_se=s.R_upper_se, pca_W=pca_sigmas(s.W, task.n_c - 1, 1.0), pca_U=pca_sigmas(Uh, task.n_c - 1, 1.0),
        cos_across=float(np.mean((D.T @ D)[off])), n_spl=s.n_spl, replicates=s.replicates,
        n_validation=s.n_validation, certified=s.certified, error=s.error, rel_gaps=[float(g) for g in s.rel_gaps],
    )  # fmt: skip


def _sampled_or_none(task, lam):
    """The stored sample average of (task, λ), else the dispatcher's own (SAA_REPLICATES samples of SAA_N_SPL
    sentences per class) where it fits the budget in force, else None."""
    if not 1e-12 <= lam <= 1e12:
        return None
    stored = stored_sample_average(task, lam)
    if stored is not None:
        return stored
    terms = SAA_REPLICATES * SAA_EVALS * task.K * SAA_N_SPL * task.K * task.L
    sec = get_budget().max_seconds
    if sec is not None and terms * SAA_TERM_SECONDS > sec:
        return None

    def solve():
        s = sample_average_optimum(task, lam=lam, n_spl=SAA_N_SPL, replicates=SAA_REPLICATES, seed=0)
        return _Certified(sample_average_summary(task, s), s.certified)

    out = _remembered(_SAMPLED, task, float(lam), solve)
    return None if out is None else out.summary


@dataclass(frozen=True)
class _Certified:
    summary: dict
    certified: bool


def sample_average_prediction(task, lam, m: dict, a=1.0) -> PartialPrediction:
    """The :class:`PartialPrediction` of a sample-average summary ``m`` (W norms × a, U norms ÷ a)."""
    w = np.asarray(m["w_norms"], dtype=float)
    prov = SAMPLE_AVERAGE + (
        f" [{m['replicates']} samples of {m['n_spl']} sentences per class" + (", stored]" if m.get("stored") else "]")
    )
    ce = m["R_upper"] - lam * m["tau"]
    return PartialPrediction(
        provenance=prov, n_c=task.n_c, n_w=task.n_w, L=task.L, K=task.K, lam=float(lam), tau=float(m["tau"]),
        w_norms=a * w, c=float(a * w.mean()), norm_W=float(a * np.sqrt(m["tau"])), norm_U=float(m["norm_U"] / a),
        risk=float(m["R_upper"]), ce=float(ce), lambda_bound=None, trivial=bool(m["tau"] == 0), gap=None,
        theorem1_c=None, error=float(m["error"]), w_norms_se=a * np.asarray(m["w_norms_se"], dtype=float),
        risk_bracket=(float(m["R_lower"] - 2 * m["R_lower_se"]), float(m["R_upper"] + 2 * m["R_upper_se"])),
    )  # fmt: skip
