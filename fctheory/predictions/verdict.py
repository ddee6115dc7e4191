"""The one dispatcher: which theorem (or certified optimum) speaks about a setting, and what it predicts.

:func:`applicable_theorem` is the one place that decides which theorem speaks about a setting
(task, network h or h*, d, λ_W, λ_U) and what it predicts (:class:`TheoryVerdict`); :func:`predict`,
the trainer's measurements, :func:`fctheory.diagnose`, the command line, sweeps and
:mod:`fctheory.testing` all read their theorem and numbers from it.

Unequal weight decays are reduced to the theorems exactly: with a = (λ_U/λ_W)^{1/4} the change of
variables W = aW′, U = U′/a leaves every score of h (bilinear in W and U) unchanged and turns the
penalty (λ_W/2)‖W‖² + (λ_U/2)‖U‖² into (√(λ_Wλ_U)/2)(‖W′‖² + ‖U′‖²), the penalty of (5) with
λ = √(λ_Wλ_U). So Theorems 1–2 apply at that λ, with the predicted word norms multiplied by a and
the classifier norms divided by a; risks, τ and cosines are those of the reduced problem.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._budget import budget
from .._validate import Bool, Choice, Instance, Int, Real, fail, public, result_type
from ..assumptions import check_assumption_A, check_assumption_B
from ..network import U_hat
from ..task import Task
from ..tau import LAM
from ..risk.plan import LIMIT
from ..theorems import predict_type1, predict_type2, predict_type3
from ..type3 import lambda_max_type3
from .partial import (
    EXACT,
    exact_prediction_or_none,
    nonuniform_parts,
    ASSUMPTION_K_MAX,
    LEMMA_B,
    partial_parts,
    pca_sigmas,
    star_partial,
)

# ============================================================================= the one dispatcher
THEOREM_CONFIGURATION = {"Theorem 1": "I", "Theorem 2": "III", "Theorem 3": "II"}
_STATEMENT = {
    "Theorem 1": "type-I collapse with c = √(τ/n_w), c′ = √(τ/(KL)) is a global minimiser of (5)",
    "Theorem 2": "type-III collapse with (c, r_β) solving (7)-(8) is a critical point of (5)",
    "Theorem 3": "type-II collapse with c = τ*/√(KL) is a global minimiser of (10)",
}


@result_type
@dataclass
class TheoryVerdict:
    """Which theorem speaks about this setting, whether its hypotheses hold, and what it predicts.

    Attributes
    ----------
    theorem : str or None
        ``"Theorem 1"`` (h, uniform μ: type I is globally optimal), ``"Theorem 2"`` (h, non-uniform μ,
        K = n_c^L: type III with (7)–(8) is critical), ``"Theorem 3"`` (h*: type II is globally
        optimal), or None when no theorem gives a prediction. The one vocabulary of the library.
    configuration : str or None
        ``"I"``, ``"II"`` or ``"III"``.
    statement : str
        What the theorem asserts about its configuration.
    applies : bool
        Every hypothesis of the theorem holds (then ``reasons`` is empty).
    reasons : list of str
        The hypotheses that fail (the prediction, when given, is then an approximation).
    notes : list of str
    lam : float or None
        The λ the theorem is evaluated at (√(λ_Wλ_U) for h, λ_U for h*).
    scale : float
        a = (λ_U/λ_W)^{1/4} (h; 1 for h*): predicted W norms are multiplied by a, U norms divided.
    predicted : dict
        ``R`` (the regularised risk at the predicted point), ``R0`` (its unregularised
        cross-entropy), ``tau`` (τ or τ*; None for type III), ``w_norm`` (the mean word norm ‖w‖ for
        h, ‖φ(w)‖ for h*), ``w_norm_by_rank`` (s_c values: the type-I constant or the type-III curve
        r_β), ``u_norm``, ``pca_W``, ``pca_U`` (the n_c − 1 nonzero singular values), ``cos_within``,
        ``cos_across``; ``lambda_bound`` (λ₀ of Theorem 1 or λ_max of (9)). Empty when no
        prediction exists (``{"lambda_bound": λ_max}`` alone when λ violates (9)).
    assumption_A, assumption_B : dict
        ``holds`` (bool or None when not computed), ``reason``, and ``n_violations`` / ``dim``.
    prediction : TypeIPrediction, TypeIIPrediction, TypeIIIPrediction, PartialPrediction or None
        The full prediction object of the (reduced) problem, as :func:`predict` returns it
        (:class:`PartialPrediction` for network h on a partial task with uniform μ).
    provenance : str
        For network h on a partial task (K < n_c^L): where ``predicted``'s numbers come from,
        :data:`LEMMA_B`, :data:`EXACT` (the collapsed optimum, uniform μ) or :data:`APPROXIMATION` (over the
        budget); "" otherwise (the theorem's own statement).
    """

    theorem: str | None
    configuration: str | None
    statement: str
    applies: bool
    reasons: list
    notes: list
    lam: float | None
    scale: float
    predicted: dict
    assumption_A: dict
    assumption_B: dict
    prediction: object = field(default=None, repr=False)
    provenance: str = ""


def _none(reasons, notes, A, B, lam=None, a=1.0):
    """The verdict when no theorem gives a prediction."""
    return TheoryVerdict(None, None, "", False, reasons, notes, lam, a, {}, A, B)


def _theorem(name, reasons, notes, lam, a, predicted, A, B, prediction=None, provenance=""):
    return TheoryVerdict(
        name,
        THEOREM_CONFIGURATION[name],
        _STATEMENT[name],
        not reasons,
        reasons,
        notes,
        lam,
        a,
        predicted,
        A,
        B,
        prediction,
        provenance,
    )


def _assumptions(task: Task, check: bool) -> tuple[dict, dict]:
    """Assumption A (35) and B (44) on Z: exact for the full set, counted for K < n_c^L when K ≤ 400."""
    if not check:
        return (
            {"holds": None, "reason": "not checked", "n_violations": None},
            {"holds": None, "reason": "not checked", "dim": None},
        )
    if task.is_full:
        return (
            {"holds": True, "reason": "K = n_c^L: Z is all of C^L, so (35) holds by (30)-(31)", "n_violations": 0},
            {"holds": True, "reason": "K = n_c^L: Lemma C", "dim": 2},
        )
    why = (
        f"K = {task.K} < n_c^L = {task.n_latent}: the right-hand side K/n_c^L of (35) at r = 0 is not an "
        "integer, so Assumption A cannot hold for any Z"
    )
    A = {"holds": False, "reason": why, "n_violations": None}
    B = {
        "holds": None,
        "reason": f"not computed (K > {ASSUMPTION_K_MAX}; call fctheory.check_assumption_B)",
        "dim": None,
    }
    if task.K <= ASSUMPTION_K_MAX:
        A["n_violations"] = len(check_assumption_A(task).violations)
        b = check_assumption_B(task, sdp=False)
        B = {
            "holds": bool(b.holds),
            "dim": int(b.dim),
            "reason": "the PSD solutions of (44) are span{I, 11ᵀ}"
            if b.holds
            else f"(44) has a {b.dim}-dimensional solution space (> 2): the converses of Theorems 1 and 3 are "
            "not covered",
        }
    return A, B


def equal_decay_reduction(lam_W: float, lam_U: float) -> tuple[float, float]:
    """(λ, a) = (√(λ_Wλ_U), (λ_U/λ_W)^{1/4}): W = aW′, U = U′/a turns the penalty into that of (5) at λ.

    Both decays must be > 0. Formed in logs (λ_Wλ_U and λ_U/λ_W may overflow for extreme decays);
    equal decays give exactly (λ_W, 1.0).
    """
    if lam_W == lam_U:
        return float(lam_W), 1.0
    return (math.exp((math.log(lam_W) + math.log(lam_U)) / 2), math.exp((math.log(lam_U) - math.log(lam_W)) / 4))


def _frame_sigmas(task, v):
    return [float(v)] * (task.n_c - 1)


def _type1_verdict(task, lam, a, reasons, notes, A, B):
    p = predict_type1(n_c=task.n_c, n_w=task.n_w, L=task.L, K=task.K, lam=lam)
    if p.trivial:
        notes.append(f"λ = {lam:.6g} ≥ λ₀ = {p.lambda_trivial:.6g}: τ = 0, the minimiser is (W, U) = (0, 0)")
    pred = {
        "R": p.risk,
        "R0": p.ce,
        "tau": p.tau,
        "w_norm": a * p.c,
        "w_norm_by_rank": [a * p.c] * task.s_c,
        "u_norm": p.c_prime / a,
        "pca_W": _frame_sigmas(task, a * p.pca_sigma),
        "pca_U": _frame_sigmas(task, p.pca_sigma / a),
        "cos_within": None if p.trivial else 1.0,
        "cos_across": None if p.trivial else -1.0 / (task.n_c - 1),
        "lambda_bound": p.lambda_trivial,
    }
    if task.is_full:
        return _theorem("Theorem 1", reasons, notes, lam, a, pred, A, B, p)
    opt, pp = partial_parts(task, lam, p, a)
    if opt is not None:
        notes.append(
            "uniform word frequencies: the certified global minimiser of (5) in the collapsed coordinates "
            f"(fctheory.collapsed_optimum, gap {opt.gap:.1e}) replaces Theorem 1's K-only τ"
        )
        off = ~np.eye(task.n_c, dtype=bool)
        pred.update(
            R=opt.R, R0=opt.ce, tau=opt.tau, w_norm=pp.c, w_norm_by_rank=[pp.c] * task.s_c,
            u_norm=float(np.mean(opt.u_norms)) / a, lambda_bound=opt.lambda0,
            pca_W=pca_sigmas(opt.W, task.n_c - 1, a), pca_U=pca_sigmas(U_hat(opt.U, L=task.L), task.n_c - 1, 1 / a),
            cos_within=None if pp.trivial else 1.0,
            cos_across=None if pp.trivial else float(np.mean(opt.cosines[off])),
        )  # fmt: skip
    elif pp.provenance == LEMMA_B:
        notes.append(
            f"the latent set satisfies Lemma B: type I at the closed-form scale t* = {pp.tau:.6g} "
            "(fctheory.lemma_b_scale) replaces Theorem 1's K-only τ"
        )
        t = pp.tau
        pred.update(
            R=pp.risk, R0=pp.ce, tau=t, w_norm=pp.c, w_norm_by_rank=[pp.c] * task.s_c,
            u_norm=float(np.sqrt(t / (task.K * task.L))) / a, lambda_bound=pp.lambda_bound,
            pca_W=_frame_sigmas(task, a * np.sqrt(t / (task.n_c - 1))),
            pca_U=_frame_sigmas(task, np.sqrt(t / (task.n_c - 1)) / a),
            cos_within=None if pp.trivial else 1.0, cos_across=None if pp.trivial else -1.0 / (task.n_c - 1),
        )  # fmt: skip
    return _theorem("Theorem 1", reasons, notes, lam, a, pred, A, B, pp, pp.provenance)


def _type3_verdict(task, lam, a, reasons, notes, A, B):
    if not task.is_full:  # Theorem 2 needs the full latent set: the certified optimum answers instead, where it can
        return _nonuniform_partial_verdict(task, lam, a, notes, A, B)
    lmax = float(lambda_max_type3(mu=task.mu, n_c=task.n_c, L=task.L))
    if lam >= lmax:
        reasons.append(
            f"λ = {lam:.6g} violates condition (9): λ < λ_max = {lmax:.6g}; then (7)-(8) has no "
            "solution with c > 0 (the trivial point is the only type-III critical point)"
        )
        return _theorem("Theorem 2", reasons, notes, lam, a, {"lambda_bound": lmax}, A, B)  # applies: False
    p = predict_type3(mu=task.mu, n_c=task.n_c, L=task.L, lam=lam)
    r = a * np.asarray(p.r, dtype=np.float64)
    notes.append("Theorem 2 asserts a critical point; its global optimality is conjectured")
    # every concept holds every rank once, so the mean word norm is the mean of r_β
    pred = {
        "R": p.risk,
        "R0": p.ce,
        "tau": None,
        "w_norm": float(np.mean(r)),
        "w_norm_by_rank": [float(x) for x in r],
        "u_norm": p.c / a,
        "pca_W": _frame_sigmas(task, a * p.pca_sigma_W),
        "pca_U": _frame_sigmas(task, p.pca_sigma_U / a),
        "cos_within": 1.0,
        "cos_across": -1.0 / (task.n_c - 1),
        "lambda_bound": lmax,
    }
    return _theorem("Theorem 2", reasons, notes, lam, a, pred, A, B, p)


def _nonuniform_partial_verdict(task, lam, a, notes, A, B):
    """Network h, non-uniform μ, K < n_c^L: no theorem; the certified optimum of (5) where it can be computed by
    enumeration, else its sample-average approximation (a statistical estimate, its error stated)."""
    reasons = [
        f"K = {task.K} < n_c^L = {task.n_latent}: Theorem 2 (non-uniform μ) needs all n_c^L latent "
        "variables; no theorem covers h with non-uniform word frequencies and K < n_c^L"
    ]
    opt, pp = nonuniform_parts(task, lam, a)
    if pp is None:
        reasons[-1] += (
            " (and neither its certified optimum by enumeration nor its sample-average approximation fits the "
            "budget in force)"
        )
        return _none(reasons, notes, A, B, lam, a)
    if pp.provenance == EXACT:
        notes.append(
            f"the certified global minimiser of (5) ({pp.provenance}, gap {pp.gap:.1e}) is the prediction: "
            "per-word norms from its balanced W"
        )
        u_norm, pca_W, pca_U, cos = _geometry_of(task, opt.W, opt.U, a)
    else:
        notes.append(
            f"the population optimum estimated from certified optima of fresh samples ({pp.provenance}): "
            f"relative error {pp.error:.1e} on the word norms, min R in [{pp.risk_bracket[0]:.6g}, "
            f"{pp.risk_bracket[1]:.6g}] (statistical estimates)"
        )
        u_norm, cos = opt["u_norm_mean"] / a, opt["cos_across"]
        pca_W, pca_U = [a * v for v in opt["pca_W"]], [v / a for v in opt["pca_U"]]
    pred = {
        "R": pp.risk,
        "R0": pp.ce,
        "tau": pp.tau,
        "w_norm": pp.c,
        "w_norm_by_rank": [float(x) for x in pp.w_norms.reshape(task.n_c, task.s_c).mean(axis=0)],
        "u_norm": u_norm,
        "pca_W": pca_W,
        "pca_U": pca_U,
        "cos_within": None,
        "cos_across": None if pp.trivial else cos,
        "lambda_bound": None,
    }
    return TheoryVerdict(None, None, "", False, reasons, notes, lam, a, pred, A, B, pp, pp.provenance)


def _geometry_of(task, W, U, a):
    """(mean ‖u_(k,ℓ)‖ ÷ a, PCA σ of W × a and of Û ÷ a, mean cosine across the concepts' summed directions)."""
    concept_dirs = W.reshape(W.shape[0], task.n_c, task.s_c).sum(axis=2)
    off = ~np.eye(task.n_c, dtype=bool)
    with np.errstate(invalid="ignore", divide="ignore"):
        D = concept_dirs / np.linalg.norm(concept_dirs, axis=0)
        cos = float(np.mean((D.T @ D)[off]))
    u_norm = float(np.mean(np.linalg.norm(U.reshape(task.K, task.L, -1), axis=2))) / a
    return u_norm, pca_sigmas(W, task.n_c - 1, a), pca_sigmas(U_hat(U, L=task.L), task.n_c - 1, 1 / a), cos


def _verdict_h(task, d, lam_W, lam_U, reasons, notes, A, B):
    """Network h: Theorem 1 (uniform μ) or 2 (non-uniform μ, K = n_c^L), after the decay reduction."""
    if lam_W == 0 or lam_U == 0:
        why = (
            "λ_W = λ_U = 0: R₀ has no minimiser (its infimum 0 is approached as the weights grow)"
            if lam_W == lam_U
            else "λ_W = 0 or λ_U = 0: the regularised risk of h has no minimiser (W ↦ aW, U ↦ U/a keeps the "
            "scores and drives the penalty to 0)"
        )
        return _none([why], notes, A, B)
    lam, a = equal_decay_reduction(lam_W, lam_U)
    if lam_W != lam_U:
        notes.append(
            f"λ_W ≠ λ_U: reduced exactly to λ = √(λ_W λ_U) = {lam:.6g} by W = aW′, U = U′/a with "
            f"a = (λ_U/λ_W)^(1/4) = {a:.6g}"
        )
    if d is not None and d < task.n_c - 1:
        reasons.append(
            f"d = {d} < n_c − 1 = {task.n_c - 1}: no equiangular frame (4) fits in R^d, so collapse "
            "configurations do not exist"
        )
    if task.is_uniform:
        return _type1_verdict(task, lam, a, reasons, notes, A, B)
    return _type3_verdict(task, lam, a, reasons, notes, A, B)


def _verdict_h_star(task, d, lam_W, lam_U, eps, reasons, notes, A, B):
    """Network h* (LayerNorm): Theorem 3 at λ = λ_U, for any word frequencies."""
    if lam_U == 0:
        return _none(["λ_U = 0: R* of h* has no minimiser (scaling U up drives R₀ towards 0)"], notes, A, B)
    if lam_W > 0:
        reasons.append(
            f"λ_W = {lam_W:.6g} > 0: Theorem 3 is about (10), which does not penalise W; the "
            "prediction ignores the W penalty"
        )
    if eps > 0:
        notes.append(
            f"φ uses ε = {eps:g} (PyTorch's LayerNorm); Theorem 3's φ has ε = 0, so ‖φ(w)‖ = "
            "√d·σ/√(σ²+ε) is slightly below √d"
        )
    if d < task.n_c:
        return _none(
            reasons
            + [
                f"d = {d} < n_c = {task.n_c}: no mean-zero equiangular frame fits in R^d, so "
                "type-II configurations do not exist"
            ],
            notes,
            A,
            B,
            lam_U,
        )
    p = predict_type2(n_c=task.n_c, L=task.L, K=task.K, d=d, lam=lam_U, n_w=task.n_w)
    pred = {
        "R": p.risk,
        "R0": p.ce,
        "tau": p.tau_star,
        "w_norm": p.phi_norm,
        "w_norm_by_rank": [p.phi_norm] * task.s_c,
        "u_norm": p.c,
        "pca_W": _frame_sigmas(task, p.pca_sigma_phiW),
        "pca_U": _frame_sigmas(task, p.pca_sigma_U),
        "cos_within": 1.0,
        "cos_across": -1.0 / (task.n_c - 1),
    }
    if not task.is_full:
        pp, prov = star_partial(task, d, lam_U, pred, notes, p)
        return _theorem("Theorem 3", reasons, notes, lam_U, 1.0, pred, A, B, pp, prov)
    return _theorem("Theorem 3", reasons, notes, lam_U, 1.0, pred, A, B, p)


def verdict(task, d, lam_W, lam_U, layernorm=False, eps=0.0, assumptions=True) -> TheoryVerdict:
    """:func:`applicable_theorem` without the argument checks (``d`` may be None for h)."""
    A, B = _assumptions(task, assumptions)
    reasons, notes = [], []
    if not task.is_full:
        reasons.append(
            A["reason"]
            if assumptions
            else f"K = {task.K} < n_c^L = {task.n_latent}: Assumption A cannot hold for any Z"
        )
        reasons[-1] += "; the theorem's prediction is its large-K idealisation"
    if layernorm:
        return _verdict_h_star(task, d, lam_W, lam_U, eps, reasons, notes, A, B)
    return _verdict_h(task, d, lam_W, lam_U, reasons, notes, A, B)


@public(
    task=Instance(Task),
    d=Int(min=1),
    lam_W=Real(lo=0),
    lam_U=Real(lo=0),
    layernorm=Bool(),
    eps=Real(lo=0),
    assumptions=Bool(),
    legacy_positional=("d", "lam_W", "lam_U"),
)
def applicable_theorem(task, *, d, lam_W, lam_U, layernorm=False, eps=0.0, assumptions=True) -> TheoryVerdict:
    """The theorem that speaks about (task, network, d, λ_W, λ_U), its prediction and failed hypotheses.

    The one dispatcher of the library (see the module docstring for the reduction of λ_W ≠ λ_U):

    * network h, uniform μ: Theorem 1 (type I) at λ = √(λ_Wλ_U);
    * network h, non-uniform μ, K = n_c^L: Theorem 2 (type III), when λ satisfies (9);
    * network h* (``layernorm``): Theorem 3 (type II) at λ = λ_U, for any μ (needs d ≥ n_c).

    Parameters
    ----------
    task : Task
    d : int
        Embedding dimension.
    lam_W, lam_U : float
        Weight decays on W and U ((5) has λ_W = λ_U = λ; (10) has λ_W = 0).
    layernorm : bool
        Network h* (Theorem 3) instead of h (Theorems 1, 2).
    eps : float
        LayerNorm ε; Theorem 3 is stated for φ with ε = 0 (a note is added otherwise).
    assumptions : bool
        Check Assumption A (35) and B (44) on Z (exact; for K < n_c^L only when K ≤ 400).

    Returns
    -------
    TheoryVerdict

    Examples
    --------
    >>> v = applicable_theorem(Task.full(3, 2, 2), d=4, lam_W=0.01, lam_U=0.04)
    >>> v.theorem, round(v.lam, 12), round(v.scale ** 4, 12)
    ('Theorem 1', 0.02, 4.0)
    """
    return verdict(task, d, lam_W, lam_U, layernorm=layernorm, eps=eps, assumptions=assumptions)


@public(
    task=Instance(Task),
    lam=LAM,
    network=Choice("h", "h*"),
    d=Int(min=1).or_none(),
    legacy_positional=("lam", "network", "d"),
)
def predict(task, *, lam, network: str = "h", d=None):
    """The applicable theorem's prediction for ``task`` (the prediction object of :func:`applicable_theorem`).

    * network "h*" (LayerNorm): Theorem 3 (needs ``d`` ≥ n_c) on full tasks; on a partial task a
      :class:`PartialStarPrediction`: the best feature-collapsed h* (:func:`fctheory.collapsed_optimum_star`,
      provenance :data:`COLLAPSED_STAR`), or Theorem 3's numbers where the budget refuses its K × K work;
    * network "h", uniform μ, K = n_c^L: Theorem 1;
    * network "h", uniform μ, K < n_c^L: a :class:`PartialPrediction` labelled with its provenance:
      :data:`LEMMA_B` (type I at t* of :func:`fctheory.lemma_b_scale`) when the latent set satisfies
      Lemma B (checked exactly for K ≤ 400), else :data:`EXACT`: the certified global minimiser of (5) in the
      collapsed coordinates (:func:`fctheory.collapsed_optimum`; K²L work, exact by the within-concept
      symmetry of uniform μ); :data:`APPROXIMATION` (Theorem 1's numbers at this K) only where the budget
      refuses that work or the solve is not certified in time;
    * network "h", non-uniform μ, K < n_c^L: no theorem; the certified global minimiser of (5) by enumeration
      (provenance :data:`EXACT`) wherever the exact engine enumerates the task within the budget in force
      (:func:`predict_exact` takes a budget of its own); the
      certified optimum (:data:`EXACT`) wherever the exact engine can enumerate the task;
    * network "h", non-uniform μ, K = n_c^L: Theorem 2 (type III).

    With network "h", ``d`` is optional (the predictions do not depend on it); when given it must
    admit the predicted configuration's equiangular frame, d ≥ n_c − 1. λ is both decays for h
    (λ_W = λ_U = λ, risk (5)) and λ_U for h* (risk (10), λ_W = 0).

    Raises the project error when no theorem covers the case (h, non-uniform μ, K < n_c^L) or λ
    violates condition (9) of Theorem 2.
    """
    if network == "h*":
        if d is None:
            fail("d", d, "Theorem 3's prediction depends on the embedding dimension d")
        if d < task.n_c:
            fail("d", d, f"the type-II configuration needs a mean-zero equiangular frame, so d >= n_c = {task.n_c}")
    elif d is not None and d < task.n_c - 1:
        fail("d", d, f"type-I/III configurations need an equiangular frame, so d >= n_c - 1 = {task.n_c - 1}")
    ln = network == "h*"
    v = verdict(task, d, 0.0 if ln else lam, lam, layernorm=ln, assumptions=False)
    if v.prediction is not None:
        return v.prediction
    if v.theorem == "Theorem 2":  # λ violates (9)
        fail("lam", lam, v.reasons[-1])
    fail(
        "task",
        task,
        "no theorem covers network h with non-uniform word frequencies and K < n_c**L (Theorem 2 needs the full "
        "latent set), and its certified optimum by enumeration does not fit the budget in force (fctheory.budget)",
    )


@public(
    task=Instance(Task),
    lam=Real(lo=1e-12, hi=1e12),
    network=Choice("h", "h*"),
    d=Int(min=1).or_none(),
    max_seconds=LIMIT,
    max_bytes=LIMIT,
)
def predict_exact(task: Task, *, lam, network: str = "h", d: int | None = None, max_seconds=None, max_bytes=None):
    """:func:`predict` under a budget of its own: the certified optimum wherever the engine enumerates the task.

    :func:`predict` answers partial tasks (K < n_c^L) of network h with the certified global minimiser of (5)
    wherever it fits the budget in force: for uniform μ in the collapsed coordinates (any K), for any μ by the
    exact engine's enumeration (a :class:`~fctheory.predictions.PartialPrediction` with provenance
    ``"exact (certified optimum)"``, per-word norms ‖w_(α,β)‖ from the optimum's W, ‖W‖² = ‖X‖_*, R and its
    certified gap), except on latent sets satisfying Lemma B, where it gives Lemma B's closed form (the same point).
    This function gives the certified optimum itself there too, with ``max_seconds`` / ``max_bytes`` in force
    during its solve; elsewhere (full tasks, network h*, or a refused budget) :func:`predict`'s answer.

    Parameters
    ----------
    task : Task
    lam : float
        λ of (5) (both decays), or λ_U of (10) for h*; 1e-12 ≤ λ ≤ 1e12 (:func:`optimum`'s range).
    network : {"h", "h*"}
    d : int, optional
        As the dispatcher :func:`predict` (h: the predictions do not depend on it; d ≥ n_c − 1 when given).
    max_seconds, max_bytes : float or None
        Budget of each engine evaluation and, for max_seconds, of the whole solve (None: the budget in force).

    Returns
    -------
    PartialPrediction, TypeIPrediction, TypeIIPrediction or TypeIIIPrediction

    Raises
    ------
    FCTheoryError
        Bad input, or (non-uniform μ, K < n_c^L) a task whose certified optimum does not fit the budget.

    Examples
    --------
    >>> import fctheory as fc
    >>> p = predict_exact(fc.Task.random(3, 2, 2, 4, seed=0, mu="zipf"), lam=0.02)
    >>> p.provenance, p.w_norms.shape
    ('exact (certified optimum)', (6,))
    """
    if network == "h" and not task.is_full:
        if d is not None and d < task.n_c - 1:
            fail("d", d, f"type-I/III configurations need an equiangular frame, so d >= n_c - 1 = {task.n_c - 1}")
        with budget(max_seconds=max_seconds, max_bytes=max_bytes):  # the budget of the exact solve only
            p = exact_prediction_or_none(task, lam)
        if p is not None:
            return p
        if not task.is_uniform:  # no closed form to fall back on: the refusal is the answer
            fail(
                "task",
                task,
                "no theorem covers network h with non-uniform word frequencies and K < n_c**L, and its certified "
                f"optimum by enumeration does not fit the budget (max_seconds={max_seconds}, max_bytes={max_bytes})",
            )
    return predict(task, lam=lam, network=network, d=d)
