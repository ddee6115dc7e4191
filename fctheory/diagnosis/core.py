"""``diagnose``: a user's trained (W, U) against the theory of *Feature Collapse*.

For weights of the network h (eq. (2)) or h* (eq. (3)) on a task (K latent variables Z, word
frequencies μ) and weight decays (λ_W, λ_U), :func:`diagnose` reports

* the true risk R (5) — or (10) for h*, plus (λ_W/2)‖W‖² when λ_W > 0 — and R₀ (45): exact by
  enumeration when the cost estimate fits ``max_seconds``, otherwise an unbiased Monte-Carlo
  estimate with a normal confidence interval and the estimate of what the exact value would cost;
* ‖∇R‖_F and the dimensionless ‖∇R‖/(‖∇R₀‖ + ‖∇penalty‖) ∈ [0, 1] (0 at a critical point, where
  the two gradients cancel; 1 when they are aligned);
* the applicable theorem (1, 2 or 3), its prediction, and every hypothesis that fails (Assumption A
  for this Z, condition (9), K < n_c^L, λ_W ≠ λ_U, d too small for a frame, ...), with the
  Assumption A/B diagnostics of Z (:func:`applicable_theorem`);
* relative distances to the nearest type-I/III (h) or type-II (h*) configuration
  (:mod:`fctheory.metrics.collapse`), word norms against frequency rank with the type-I constant or
  type-III curve, ‖u_{k,ℓ}‖, PCA spectra of W (φ(W) for h*) and of the u_{k,ℓ}, cosines within and
  across concepts.

Unequal weight decays are reduced to the theorems exactly: with a = (λ_U/λ_W)^{1/4} the change of
variables W = aW′, U = U′/a leaves every score unchanged and turns the penalty into
(√(λ_Wλ_U)/2)(‖W′‖² + ‖U′‖²), so Theorems 1–2 apply with λ = √(λ_Wλ_U) and the predicted word norms
scaled by a, classifier norms by 1/a.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from .._budget import get_budget
from .._errors import FCTheoryError
from .._validate import Array, Bool, Choice, Instance, Int, PathOut, Real, Seed, fail, public, result_type
from ..network import U_hat, check_weights, phi
from ..task import Task, task_first

__all__ = ["diagnose", "Diagnosis", "applicable_theorem", "TheoryVerdict"]

_ASSUMPTION_K_MAX = 400  # exact Assumption A/B checks for K < n_c^L only up to this K (they grow like K²)


# ============================================================================= theory side
@result_type
@dataclass
class TheoryVerdict:
    """Which theorem speaks about this setting, whether its hypotheses hold, and what it predicts.

    Attributes
    ----------
    theorem : str or None
        ``"Theorem 1"`` (h, uniform μ: type I is globally optimal), ``"Theorem 2"`` (h, non-uniform μ,
        K = n_c^L: type III with (7)–(8) is critical), ``"Theorem 3"`` (h*: type II is globally
        optimal), or None when no theorem gives a prediction.
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
        ``R``, ``R0``, ``tau``, ``w_norm`` (‖w‖ for h, ‖φ(w)‖ for h*), ``w_norm_by_rank`` (s_c values:
        the type-I constant or the type-III curve r_β), ``u_norm``, ``pca_W``, ``pca_U`` (the n_c − 1
        nonzero singular values), ``cos_within``, ``cos_across``; ``lambda_bound`` (λ₀ of Theorem 1 or
        λ_max of (9)). Empty when no prediction exists.
    assumption_A, assumption_B : dict
        ``holds`` (bool or None when not computed), ``reason``, and ``n_violations`` / ``dim``.
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


def _assumptions(task: Task) -> tuple[dict, dict]:
    N = task.n_latent
    if task.is_full:
        return ({"holds": True, "reason": "K = n_c^L: Z is all of C^L, so (35) holds by (30)-(31)",
                 "n_violations": 0},
                {"holds": True, "reason": "K = n_c^L: Lemma C", "dim": 2})
    why = (f"K = {task.K} < n_c^L = {N}: the right-hand side K/n_c^L of (35) at r = 0 is not an integer, "
           "so Assumption A cannot hold for any Z")
    A = {"holds": False, "reason": why, "n_violations": None}
    B = {"holds": None, "reason": f"not computed (K > {_ASSUMPTION_K_MAX}; call fctheory.check_assumption_B)",
         "dim": None}
    if task.K <= _ASSUMPTION_K_MAX:
        from ..assumptions import check_assumption_A, check_assumption_B  # noqa: PLC0415

        A["n_violations"] = len(check_assumption_A(task).violations)
        b = check_assumption_B(task, sdp=False)
        B = {"holds": bool(b.holds), "dim": int(b.dim),
             "reason": "the PSD solutions of (44) are span{I, 11ᵀ}" if b.holds else
             f"(44) has a {b.dim}-dimensional solution space (> 2): the converses of Theorems 1 and 3 are not covered"}
    return A, B


@public(task=Instance(Task), d=Int(min=1), lam_W=Real(lo=0), lam_U=Real(lo=0), layernorm=Bool(), eps=Real(lo=0),
        assumptions=Bool(), legacy_positional=("d", "lam_W", "lam_U"))
def applicable_theorem(task, *, d, lam_W, lam_U, layernorm=False, eps=0.0, assumptions=True):
    """The theorem that speaks about (task, network, d, λ_W, λ_U), its prediction and failed hypotheses.

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
    """
    from ..predictions import predict_type1, predict_type2, predict_type3  # noqa: PLC0415
    from ..type3 import lambda_max_type3  # noqa: PLC0415

    n_c, n_w, L, K, s_c = task.n_c, task.n_w, task.L, task.K, task.s_c
    A, B = _assumptions(task) if assumptions else ({"holds": None, "reason": "not checked", "n_violations": None},
                                                   {"holds": None, "reason": "not checked", "dim": None})
    reasons, notes = [], []
    kappa = -1.0 / (n_c - 1)
    if not task.is_full:
        reasons.append(A["reason"] + "; the theorem's prediction is its large-K idealisation")

    def sig(v):
        return [float(v)] * (n_c - 1)

    if not layernorm:
        if lam_W == 0 or lam_U == 0:
            why = ("λ_W = λ_U = 0: R₀ has no minimiser (its infimum 0 is approached as the weights grow)"
                   if lam_W == lam_U else
                   "λ_W = 0 or λ_U = 0: the regularised risk of h has no minimiser (W ↦ aW, U ↦ U/a keeps the "
                   "scores and drives the penalty to 0)")
            return TheoryVerdict(None, None, "", False, [why], notes, None, 1.0, {}, A, B)
        # in logs: λ_W·λ_U and λ_U/λ_W may overflow for extreme decays
        if lam_W == lam_U:  # the common case: exactly λ and a = 1 (exp(log λ) would round)
            lam, a = float(lam_W), 1.0
        else:
            lam = math.exp((math.log(lam_W) + math.log(lam_U)) / 2)
            a = math.exp((math.log(lam_U) - math.log(lam_W)) / 4)
        if lam_W != lam_U:
            notes.append(f"λ_W ≠ λ_U: reduced exactly to λ = √(λ_W λ_U) = {lam:.6g} by W = aW′, U = U′/a with "
                         f"a = (λ_U/λ_W)^(1/4) = {a:.6g}")
        if d < n_c - 1:
            reasons.append(f"d = {d} < n_c − 1 = {n_c - 1}: no equiangular frame (4) fits in R^d, so collapse "
                           "configurations do not exist")
        if task.is_uniform:
            p = predict_type1(n_c=n_c, n_w=n_w, L=L, K=K, lam=lam)
            if p.trivial:
                notes.append(f"λ = {lam:.6g} ≥ λ₀ = {p.lambda_trivial:.6g}: τ = 0, the minimiser is (W, U) = (0, 0)")
            pred = {"R": p.risk, "R0": p.ce, "tau": p.tau, "w_norm": a * p.c, "w_norm_by_rank": [a * p.c] * s_c,
                    "u_norm": p.c_prime / a, "pca_W": sig(a * p.pca_sigma), "pca_U": sig(p.pca_sigma / a),
                    "cos_within": None if p.trivial else 1.0, "cos_across": None if p.trivial else kappa,
                    "lambda_bound": p.lambda_trivial}
            return TheoryVerdict("Theorem 1", "I", "type-I collapse with c = √(τ/n_w), c′ = √(τ/(KL)) is a global "
                                 "minimiser of (5)", not reasons, reasons, notes, lam, a, pred, A, B)
        # non-uniform words: Theorem 2 (critical points of type III), only for the full latent set
        if not task.is_full:
            reasons = [f"K = {K} < n_c^L = {task.n_latent}: Theorem 2 (non-uniform μ) needs all n_c^L latent "
                       "variables; no theorem covers h with non-uniform word frequencies and K < n_c^L "
                       "(minimize_true_risk gives the exact optimum of small tasks)"]
            return TheoryVerdict(None, None, "", False, reasons, notes, lam, a, {}, A, B)
        lmax = float(lambda_max_type3(mu=task.mu, n_c=n_c, L=L))
        if lam >= lmax:
            reasons.append(f"λ = {lam:.6g} violates condition (9): λ < λ_max = {lmax:.6g}; then (7)-(8) has no "
                           "solution with c > 0 (the trivial point is the only type-III critical point)")
            return TheoryVerdict("Theorem 2", "III", "type-III collapse solving (7)-(8) is a critical point of (5)",
                                 False, reasons, notes, lam, a, {"lambda_bound": lmax}, A, B)
        p = predict_type3(mu=task.mu, n_c=n_c, L=L, lam=lam)
        r = np.asarray(p.r, dtype=np.float64)
        notes.append("Theorem 2 asserts a critical point; its global optimality is conjectured")
        pred = {"R": p.risk, "R0": p.ce, "tau": None, "w_norm": a * float(np.sqrt(np.mean(r**2))),
                "w_norm_by_rank": list(a * r), "u_norm": p.c / a, "pca_W": sig(a * p.pca_sigma_W),
                "pca_U": sig(p.pca_sigma_U / a), "cos_within": 1.0, "cos_across": kappa, "lambda_bound": lmax}
        return TheoryVerdict("Theorem 2", "III", "type-III collapse with (c, r_β) solving (7)-(8) is a critical "
                             "point of (5)", not reasons, reasons, notes, lam, a, pred, A, B)
    # h*: Theorem 3
    if lam_U == 0:
        return TheoryVerdict(None, None, "", False, ["λ_U = 0: R* of h* has no minimiser (scaling U up drives R₀ "
                             "towards 0)"], notes, None, 1.0, {}, A, B)
    if lam_W > 0:
        reasons.append(f"λ_W = {lam_W:.6g} > 0: Theorem 3 is about (10), which does not penalise W; the "
                       "prediction ignores the W penalty")
    if d < n_c:
        reasons.append(f"d = {d} < n_c = {n_c}: no mean-zero equiangular frame fits in R^d, so type-II "
                       "configurations do not exist")
    if eps > 0:
        notes.append(f"φ uses ε = {eps:g} (PyTorch's LayerNorm); Theorem 3's φ has ε = 0, so ‖φ(w)‖ = "
                     "√d·σ/√(σ²+ε) is slightly below √d")
    p = predict_type2(n_c=n_c, L=L, K=K, d=d, lam=lam_U, n_w=n_w)
    pred = {"R": p.risk, "R0": p.ce, "tau": p.tau_star, "w_norm": p.phi_norm, "w_norm_by_rank": [p.phi_norm] * s_c,
            "u_norm": p.c, "pca_W": sig(p.pca_sigma_phiW), "pca_U": sig(p.pca_sigma_U),
            "cos_within": 1.0, "cos_across": kappa}
    return TheoryVerdict("Theorem 3", "II", "type-II collapse with c = τ*/√(KL) is a global minimiser of (10)",
                         not reasons, reasons, notes, lam_U, 1.0, pred, A, B)


# ============================================================================= the diagnosis
@result_type
@dataclass
class Diagnosis:
    """Everything :func:`diagnose` measured, next to the theory (see the module docstring).

    Main attributes: ``task``, ``network`` ("h"/"h*"), ``d``, ``lam_W``, ``lam_U``, ``eps``;
    ``method`` ("exact" or "monte-carlo"), ``R``, ``R0``, ``penalty``, ``R_ci`` (interval, Monte Carlo),
    ``R_stderr``, ``confidence``, ``n_samples``, ``exact_cost`` (dict: ``pairs``, ``seconds``,
    ``bytes``, or their base-10 logs when astronomically large); ``grad_norm``, ``grad_R0_norm``,
    ``grad_penalty_norm``, ``grad_rel`` and ``critical`` (None for Monte Carlo); ``theory``
    (:class:`TheoryVerdict`); ``distances`` ({"I"/"II"/"III": relative distance or None}),
    ``distance_notes``, ``fitted`` (constants of the nearest configurations); ``W_norms``,
    ``phiW_norms`` (h*), ``W_norm_by_rank``, ``W_norm_by_rank_std``, ``U_norms`` (K×L),
    ``pca_W``, ``pca_U``, ``cos_W_within``, ``cos_W_across``, ``cos_U_within``, ``cos_U_across``;
    ``matches_theorem`` and ``verdict`` (one line); ``W``, ``U`` (the weights, float64).
    """

    task: Task
    network: str
    d: int
    lam_W: float
    lam_U: float
    eps: float
    method: str
    R: float
    R0: float
    penalty: float
    R_ci: tuple | None
    R_stderr: float | None
    confidence: float | None
    n_samples: int | None
    exact_cost: dict
    grad_norm: float
    grad_R0_norm: float
    grad_penalty_norm: float
    grad_rel: float
    critical: bool | None
    theory: TheoryVerdict
    distances: dict
    distance_notes: dict
    fitted: dict
    W_norms: np.ndarray
    phiW_norms: np.ndarray | None
    W_norm_by_rank: np.ndarray
    W_norm_by_rank_std: np.ndarray
    U_norms: np.ndarray
    pca_W: np.ndarray
    pca_U: np.ndarray
    cos_W_within: float
    cos_W_across: float
    cos_U_within: float
    cos_U_across: float
    matches_theorem: bool | None
    verdict: str
    rtol: float
    seconds: float
    W: np.ndarray = field(repr=False)
    U: np.ndarray = field(repr=False)

    # ----------------------------------------------------------------- views
    def comparison(self) -> list:
        """Rows (quantity, observed, predicted or None) for the quantities the theory predicts."""
        p = self.theory.predicted
        ln = self.network == "h*"
        rows = [("true risk R", self.R, p.get("R")), ("unregularised risk R0", self.R0, p.get("R0")),
                ("‖∇R‖_F", self.grad_norm, 0.0 if self.theory.theorem else None),
                ("‖∇R‖/(‖∇R0‖+‖∇pen‖)", self.grad_rel, 0.0 if self.theory.theorem else None)]
        wn = self.phiW_norms if ln else self.W_norms
        rows.append(("mean ‖φ(w)‖" if ln else "mean ‖w‖", float(wn.mean()), p.get("w_norm")))
        rows.append(("std ‖φ(w)‖" if ln else "std ‖w‖", float(wn.std()),
                     0.0 if (p.get("w_norm") is not None and self.theory.configuration != "III") else None))
        rows.append(("mean ‖u_kℓ‖", float(self.U_norms.mean()), p.get("u_norm")))
        rows.append(("std ‖u_kℓ‖", float(self.U_norms.std()), 0.0 if p.get("u_norm") is not None else None))
        nz = self.task.n_c - 1
        for name, obs, key in (("φ(W)" if ln else "W", self.pca_W, "pca_W"), ("u_kℓ", self.pca_U, "pca_U")):
            pv = p.get(key)
            for i in range(min(nz + 1, len(obs))):
                pred = None if pv is None else (pv[i] if i < nz else 0.0)
                rows.append((f"PCA σ{i + 1} of {name}", float(obs[i]), pred))
        rows += [("cos within concept (words)", self.cos_W_within, p.get("cos_within")),
                 ("cos across concepts (words)", self.cos_W_across, p.get("cos_across")),
                 ("cos within concept (u_kℓ)", self.cos_U_within, p.get("cos_within")),
                 ("cos across concepts (u_kℓ)", self.cos_U_across, p.get("cos_across"))]
        for k, v in self.distances.items():
            if v is not None:
                conf = self.theory.configuration
                # type I is the special case r_β ≡ c of type III
                rows.append((f"distance to type {k}", v, 0.0 if k == conf or (k, conf) == ("III", "I") else None))
        return rows

    def to_dict(self) -> dict:
        """JSON-ready dict (numbers as numbers, NaN/inf as None, the task as an object, package versions)."""
        from .files import task_to_dict  # noqa: PLC0415

        t = task_to_dict(self.task)
        if self.task.K * self.task.L > 200_000:
            t["Z"] = f"omitted ({self.task.K} x {self.task.L})"
        th = self.theory
        out = {
            "task": t, "network": self.network, "d": self.d, "lam_W": self.lam_W, "lam_U": self.lam_U, "eps": self.eps,
            "method": self.method, "R": self.R, "R0": self.R0, "penalty": self.penalty,
            "R_ci": list(self.R_ci) if self.R_ci is not None else None, "R_stderr": self.R_stderr,
            "confidence": self.confidence, "n_samples_per_class": self.n_samples, "exact_cost": self.exact_cost,
            "grad_norm": self.grad_norm, "grad_R0_norm": self.grad_R0_norm,
            "grad_penalty_norm": self.grad_penalty_norm, "grad_rel": self.grad_rel, "critical": self.critical,
            "theory": {"theorem": th.theorem, "configuration": th.configuration, "statement": th.statement,
                       "applies": th.applies, "reasons": th.reasons, "notes": th.notes, "lam": th.lam,
                       "scale": th.scale, "predicted": th.predicted, "assumption_A": th.assumption_A,
                       "assumption_B": th.assumption_B},
            "distances": self.distances, "distance_notes": self.distance_notes, "fitted": self.fitted,
            "W_norm_mean": float(self.W_norms.mean()), "W_norm_std": float(self.W_norms.std()),
            "phiW_norm_mean": None if self.phiW_norms is None else float(self.phiW_norms.mean()),
            "W_norm_by_rank": self.W_norm_by_rank, "W_norm_by_rank_std": self.W_norm_by_rank_std,
            "U_norm_mean": float(self.U_norms.mean()), "U_norm_std": float(self.U_norms.std()),
            "pca_W": self.pca_W, "pca_U": self.pca_U,
            "cos_W_within": self.cos_W_within, "cos_W_across": self.cos_W_across,
            "cos_U_within": self.cos_U_within, "cos_U_across": self.cos_U_across,
            "comparison": [{"quantity": q, "observed": o, "predicted": p} for q, o, p in self.comparison()],
            "matches_theorem": self.matches_theorem, "verdict": self.verdict, "rtol": self.rtol,
            "seconds": self.seconds, "versions": _versions(),
        }
        return _jsonable(out)

    def to_frame(self):
        """pandas DataFrame: one row per compared quantity (observed, predicted, relative difference)."""
        try:
            import pandas as pd  # noqa: PLC0415
        except ImportError:  # pragma: no cover - depends on the install
            fail("to_frame", "pandas", "needs pandas (pip install pandas)")
        rows = []
        for q, o, p in self.comparison():
            diff = None
            if p is not None and o is not None and np.isfinite(o):
                diff = (o - p) / abs(p) if p != 0 else o - p
            rows.append({"quantity": q, "observed": o, "predicted": p, "relative_difference": diff})
        return pd.DataFrame(rows, columns=["quantity", "observed", "predicted", "relative_difference"])

    @public(out=PathOut(dir=True))
    def plot(self, out):
        """Write the PNG figures into folder ``out``; returns {name: path}. See :mod:`fctheory.diagnosis.report`."""
        from .report import plot_diagnosis  # noqa: PLC0415

        return plot_diagnosis(self, out)

    @public(out=PathOut(dir=True))
    def report(self, out):
        """Write ``report.md`` (theory side by side, figures) and ``diagnosis.json`` into ``out``; returns the report path."""
        from .report import write_report  # noqa: PLC0415

        return write_report(self, out)


def _versions() -> dict:
    import sys  # noqa: PLC0415

    from .. import __version__  # noqa: PLC0415

    v = {"fctheory": __version__, "python": sys.version.split()[0], "numpy": np.__version__}
    for mod in ("scipy", "torch", "safetensors", "pandas", "matplotlib"):
        m = sys.modules.get(mod)
        if m is not None and hasattr(m, "__version__"):
            v[mod] = str(m.__version__)
    return v


def _jsonable(v):
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return float(v) if np.isfinite(v) else None
    if isinstance(v, np.ndarray):
        return [_jsonable(x) for x in v.tolist()]
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    return v




# ----------------------------------------------------------------------------- cost of the exact value
def _exact_cost(task: Task, d: int, backend: str) -> dict:
    log10_pairs = math.log10(task.K) * 2 + task.L * math.log10(task.s_c)
    if log10_pairs <= 17:
        from ..risk import estimate_cost  # noqa: PLC0415

        est = estimate_cost(task, d=d, grad=True, backend=backend, max_bytes=int(get_budget().max_bytes))
        return {"pairs": int(est.pairs), "seconds": float(est.seconds), "bytes": int(est.bytes),
                "log10_pairs": log10_pairs, "log10_seconds": math.log10(max(est.seconds, 1e-300))}
    # beyond any budget: report orders of magnitude only (pairs K·s_c^L·K at ≥ 3e-8 s each)
    return {"pairs": None, "seconds": None, "bytes": None, "log10_pairs": log10_pairs,
            "log10_seconds": log10_pairs + math.log10(3e-8)}


# ----------------------------------------------------------------------------- geometry
def _geometry(task, W, U, layernorm, eps, want_distances):
    from ..metrics import collapse  # noqa: PLC0415
    from ..trainer.measure import concept_cosines, pca_singular_values  # noqa: PLC0415

    d = W.shape[0]
    V = phi(W, eps=eps) if layernorm else W
    Uh = U_hat(U, L=task.L)  # d × KL, column k·L+ℓ is u_{k,ℓ}
    wn = np.linalg.norm(W, axis=0)
    pn = np.linalg.norm(V, axis=0) if layernorm else None
    shown = (pn if layernorm else wn).reshape(task.n_c, task.s_c)  # word (α, β) has index α·s_c + β
    un = np.linalg.norm(Uh, axis=0).reshape(task.K, task.L)
    k = min(10, d)
    g = {
        "W_norms": wn, "phiW_norms": pn, "W_norm_by_rank": shown.mean(axis=0), "W_norm_by_rank_std": shown.std(axis=0),
        "U_norms": un, "pca_W": pca_singular_values(V.T, k=k), "pca_U": pca_singular_values(Uh.T, k=k),
    }
    g["cos_W_within"], g["cos_W_across"] = concept_cosines(V.T, task.word_concept, n_c=task.n_c)
    g["cos_U_within"], g["cos_U_across"] = concept_cosines(Uh.T, task.Z.ravel(), n_c=task.n_c)
    dist, notes, fitted = {}, {}, {}
    kinds = ("I", "III", "II") if want_distances else ()
    funcs = {"I": collapse.distance_to_type1, "II": collapse.distance_to_type2, "III": collapse.distance_to_type3}
    for kind in ("I", "II", "III"):
        if kind not in kinds:
            dist[kind] = None
            notes[kind] = "not computed (distances=False)"
            continue
        if (kind == "II") != layernorm:
            dist[kind] = None
            notes[kind] = ("type II concerns φ(W), the network h*" if kind == "II" else
                           f"type {kind} concerns the network h (without LayerNorm)")
            continue
        try:
            res = funcs[kind](task, W, U)
        except FCTheoryError as exc:
            dist[kind] = None
            notes[kind] = str(exc)
            continue
        dist[kind] = float(res.distance)
        f = {"c": float(res.c)}
        if res.c_prime is not None:
            f["c_prime"] = float(res.c_prime)
        if res.r is not None:
            f["r"] = [float(x) for x in res.r]
        fitted[kind] = f
    return g, dist, notes, fitted


# ----------------------------------------------------------------------------- entry point
# 1.0 puts the task first, as the rest of the library (true_risk(task, W, U, ...)); the 0.x order
# diagnose(W, U, task, lam_W, lam_U) still works, with a DeprecationWarning
@task_first(deprecated=True)
@public(W=Array(ndim=2), U=Array(ndim=2), task=Instance(Task), lam_W=Real(lo=0), lam_U=Real(lo=0), layernorm=Bool(),
        eps=Real(lo=0), method=Choice("auto", "exact", "mc"), n_samples=Int(min=2, max=10**9).or_none(), seed=Seed(),
        confidence=Real(lo=0, hi=1 - 1e-12, lo_open=True), max_seconds=Real(lo=0, lo_open=True).or_none(),
        rtol=Real(lo=0), backend=Choice("numpy", "numba", "cupy"), assumptions=Bool(), distances=Bool(),
        legacy_positional=("lam_W", "lam_U"))
def diagnose(task, W, U, *, lam_W, lam_U, layernorm=False, eps=0.0, method="auto", n_samples=None, seed=0,
             confidence=0.95, max_seconds=60.0, rtol=1e-6, backend="numpy", assumptions=True, distances=True):
    """Diagnose trained weights (W, U) of h or h* against Theorems 1–3 (see the module docstring).

    Parameters
    ----------
    task : Task
        The task the network was trained on: its latent variables Z (in class order) and μ.
    W : array_like, shape (d, n_w)
        Word embeddings as columns (the transpose of ``nn.Embedding.weight``).
    U : array_like, shape (K, L·d)
        The bias-free linear layer; u_{k,ℓ} = U[k, ℓd:(ℓ+1)d].
    lam_W, lam_U : float
        Weight decays of the training (penalty (λ_W/2)‖W‖² + (λ_U/2)‖U‖²; eq. (5) has
        λ_W = λ_U, eq. (10) λ_W = 0).
    layernorm : bool
        Network h* (φ = LayerNorm without parameters on the embeddings).
    eps : float
        LayerNorm ε (0 is the paper's φ; PyTorch uses 1e-5).
    method : {"auto", "exact", "mc"}
        "auto": exact enumeration when its estimated cost is within ``max_seconds`` and the
        memory budget, otherwise Monte Carlo.
    n_samples : int, optional
        Monte-Carlo sentences per class (default: about 5·10⁷ score entries in all, 16 to 1000).
    seed : int, Generator or None
        Monte-Carlo seed.
    confidence : float
        Level of the Monte-Carlo interval.
    max_seconds : float or None
        Longest estimated exact enumeration accepted by "auto" (None: the budget's max_seconds).
    rtol : float
        Tolerance of the verdicts: critical when ‖∇R‖/(‖∇R₀‖+‖∇pen‖) ≤ rtol; matching when also
        |R − R_pred| ≤ rtol·max(1, |R_pred|) and the distance to the theorem's configuration ≤ rtol.
    backend : {"numpy", "numba", "cupy"}
        Backend of the exact risk.
    assumptions : bool
        Check Assumptions A and B on Z.
    distances : bool
        Fit the nearest collapse configurations.

    Returns
    -------
    Diagnosis

    Raises
    ------
    FCTheoryError
        Shapes that do not fit the task (naming W or U), non-finite weights, φ undefined (a constant
        column with ε = 0), ``method="exact"`` beyond the budget.
    """
    t0 = time.perf_counter()
    d = check_weights(task, W, U)
    from .montecarlo import check_magnitude  # noqa: PLC0415

    check_magnitude(W, U, layernorm, lam_W)
    if layernorm:
        phi(W, eps=eps)  # refuses constant columns with eps = 0 (φ undefined), naming W
    cost = _exact_cost(task, d, backend)
    limit = max_seconds if max_seconds is not None else get_budget().max_seconds
    fits = cost["seconds"] is not None and cost["bytes"] <= get_budget().max_bytes
    use_exact = method == "exact" or (method == "auto" and fits and cost["seconds"] <= limit)
    if method == "exact" and not fits:
        fail("method", method, f"exact enumeration needs about 10^{cost['log10_seconds']:.1f} s "
             f"(10^{cost['log10_pairs']:.1f} sentence-class pairs); use method='mc'")
    from .montecarlo import penalty_terms, safe_norm  # noqa: PLC0415

    penalty, pW, pU, pen_norm = penalty_terms(W, U, lam_W, lam_U)
    if use_exact:
        from .._backend import to_numpy  # noqa: PLC0415
        from ..risk import evaluate_risk  # noqa: PLC0415

        ms = max_seconds if method == "exact" and max_seconds is not None else (
            None if method == "auto" else get_budget().max_seconds)
        res = evaluate_risk(task, W, U, 0.0, layernorm=layernorm, grad=True, eps=eps, backend=backend, max_seconds=ms,
                            max_bytes=int(get_budget().max_bytes))
        gW0, gU0 = to_numpy(res.grad_W), to_numpy(res.grad_U)
        R0 = float(res.R0)
        g0 = safe_norm(gW0, gU0)
        gn = safe_norm(gW0 + pW, gU0 + pU)
        mc_fields = dict(R_ci=None, R_stderr=None, confidence=None, n_samples=None)
        meth = "exact"
    else:
        from .montecarlo import monte_carlo_risk  # noqa: PLC0415

        n = n_samples if n_samples is not None else int(min(1000, max(16, 5 * 10**7 // (task.K * task.K))))
        mc = monte_carlo_risk(task, W, U, lam_W=lam_W, lam_U=lam_U, layernorm=layernorm, eps=eps, n_samples=n, seed=seed,
                              confidence=confidence, grad=True)
        R0 = mc.R0
        g0 = math.sqrt(max(mc.grad_R0_norm_sq, 0.0))
        gn = mc.grad_norm
        mc_fields = dict(R_ci=tuple(mc.ci), R_stderr=mc.stderr, confidence=confidence, n_samples=n)
        meth = "monte-carlo"
    denom = g0 + pen_norm
    grad_rel = gn / denom if denom > 0 else 0.0
    critical = bool(grad_rel <= rtol) if meth == "exact" else None
    theory = applicable_theorem(task, d=d, lam_W=lam_W, lam_U=lam_U, layernorm=layernorm, eps=eps, assumptions=assumptions)
    geo, dist, dnotes, fitted = _geometry(task, W, U, layernorm, eps, distances)
    R = R0 + penalty
    # verdict
    matches = None
    pr = theory.predicted.get("R")
    if theory.theorem is None or pr is None:
        why = theory.reasons[0] if theory.reasons else "no prediction"
        verdict = f"no theorem predicts this setting: {why}"
    else:
        conf = theory.configuration
        dconf = dist.get(conf)
        r_ok = abs(R - pr) <= rtol * max(1.0, abs(pr))
        d_ok = (dconf is not None and dconf <= rtol) if distances else True
        if meth == "exact":
            matches = bool(critical and r_ok and d_ok)
        lo_hi = mc_fields["R_ci"]
        parts = [f"{theory.theorem} (type {conf})" + ("" if theory.applies else ", hypotheses not all met")]
        if meth == "exact":
            parts.append(("critical point" if critical else "not a critical point") + f" (‖∇R‖ rel. {grad_rel:.2g})")
            parts.append(f"R − R_pred = {R - pr:.3g}")
        else:
            parts.append(f"R ∈ [{lo_hi[0]:.6g}, {lo_hi[1]:.6g}] at {confidence:.0%} vs R_pred = {pr:.6g}")
            parts.append(f"‖∇R‖ rel. ≈ {grad_rel:.2g} (Monte Carlo)")
        if dconf is not None:
            parts.append(f"distance to type {conf} = {dconf:.3g}")
        head = "matches" if matches else ("does not match" if matches is False else "compared with")
        verdict = f"{head} " + "; ".join(parts)
    return Diagnosis(
        task=task, network="h*" if layernorm else "h", d=d, lam_W=lam_W, lam_U=lam_U, eps=eps, method=meth,
        R=R, R0=R0, penalty=penalty, **mc_fields, exact_cost=cost, grad_norm=gn, grad_R0_norm=g0,
        grad_penalty_norm=pen_norm, grad_rel=grad_rel, critical=critical, theory=theory, distances=dist,
        distance_notes=dnotes, fitted=fitted, **geo, matches_theorem=matches, verdict=verdict, rtol=rtol,
        seconds=time.perf_counter() - t0, W=W, U=U,
    )


