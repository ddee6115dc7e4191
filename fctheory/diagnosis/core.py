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
  across concepts;
* with the training sentences (``data=``), the certificate of the network's own training objective
  (:mod:`fctheory.diagnosis.certificate`): "within X% of the global optimum of its own training objective".

Unequal weight decays are reduced to the theorems exactly (W = aW′, U = U′/a with
a = (λ_U/λ_W)^{1/4} turns the penalty into that of (5) at λ = √(λ_Wλ_U)); the theorem, its
prediction and the reduction come from :func:`fctheory.predictions.applicable_theorem`, the
library's one dispatcher, and the geometry from :mod:`fctheory.metrics.geometry`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np

from .._backend import to_numpy
from .._budget import get_budget
from .._errors import FCTheoryError
from .._validate import Array, Bool, Choice, Instance, Int, PathOut, Real, Seed, fail, public, result_type
from ..io import task_to_dict, to_json, versions
from ..metrics.geometry import collapse_distances, norms_by_rank, weight_geometry
from ..network import check_weights, phi
from ..predictions import TheoryVerdict, applicable_theorem
from ..risk import estimate_cost, evaluate_risk
from ..risk.montecarlo import check_magnitude, monte_carlo_risk, penalty_terms, safe_norm
from ..task import Task, task_first
from ..risk.empirical import check_data
from .certificate import TrainingData, training_certificate
from .report import plot_diagnosis, write_report

__all__ = ["diagnose", "Diagnosis", "applicable_theorem", "TheoryVerdict"]


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
    ``matches_theorem`` and ``verdict`` (one line); ``certificate`` (with ``data``: the certificate of the
    training objective as a dict, :func:`fctheory.diagnosis.certificate.training_certificate`; else None);
    ``W``, ``U`` (the weights, float64).
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
    certificate: dict | None = None

    # ----------------------------------------------------------------- views
    def comparison(self) -> list:
        """Rows (quantity, observed, predicted or None) for the quantities the theory predicts."""
        p = self.theory.predicted
        ln = self.network == "h*"
        rows = [
            ("true risk R", self.R, p.get("R")),
            ("unregularised risk R0", self.R0, p.get("R0")),
            ("‖∇R‖_F", self.grad_norm, 0.0 if self.theory.theorem else None),
            ("‖∇R‖/(‖∇R0‖+‖∇pen‖)", self.grad_rel, 0.0 if self.theory.theorem else None),
        ]
        wn = self.phiW_norms if ln else self.W_norms
        rows.append(("mean ‖φ(w)‖" if ln else "mean ‖w‖", float(wn.mean()), p.get("w_norm")))
        rows.append(
            (
                "std ‖φ(w)‖" if ln else "std ‖w‖",
                float(wn.std()),
                0.0 if (p.get("w_norm") is not None and self.theory.configuration != "III") else None,
            )
        )
        rows.append(("mean ‖u_kℓ‖", float(self.U_norms.mean()), p.get("u_norm")))
        rows.append(("std ‖u_kℓ‖", float(self.U_norms.std()), 0.0 if p.get("u_norm") is not None else None))
        nz = self.task.n_c - 1
        for name, obs, key in (("φ(W)" if ln else "W", self.pca_W, "pca_W"), ("u_kℓ", self.pca_U, "pca_U")):
            pv = p.get(key)
            for i in range(min(nz + 1, len(obs))):
                pred = None if pv is None else (pv[i] if i < nz else 0.0)
                rows.append((f"PCA σ{i + 1} of {name}", float(obs[i]), pred))
        rows += [
            ("cos within concept (words)", self.cos_W_within, p.get("cos_within")),
            ("cos across concepts (words)", self.cos_W_across, p.get("cos_across")),
            ("cos within concept (u_kℓ)", self.cos_U_within, p.get("cos_within")),
            ("cos across concepts (u_kℓ)", self.cos_U_across, p.get("cos_across")),
        ]
        for k, v in self.distances.items():
            if v is not None:
                conf = self.theory.configuration
                # type I is the special case r_β ≡ c of type III
                rows.append((f"distance to type {k}", v, 0.0 if k == conf or (k, conf) == ("III", "I") else None))
        return rows

    def to_dict(self) -> dict:
        """JSON-ready dict (numbers as numbers, NaN/inf as None, the task as an object, package versions)."""
        t = task_to_dict(self.task)
        if self.task.K * self.task.L > 200_000:
            t["Z"] = f"omitted ({self.task.K} x {self.task.L})"
        th = self.theory
        out = {
            "task": t,
            "network": self.network,
            "d": self.d,
            "lam_W": self.lam_W,
            "lam_U": self.lam_U,
            "eps": self.eps,
            "method": self.method,
            "R": self.R,
            "R0": self.R0,
            "penalty": self.penalty,
            "R_ci": list(self.R_ci) if self.R_ci is not None else None,
            "R_stderr": self.R_stderr,
            "confidence": self.confidence,
            "n_samples_per_class": self.n_samples,
            "exact_cost": self.exact_cost,
            "grad_norm": self.grad_norm,
            "grad_R0_norm": self.grad_R0_norm,
            "grad_penalty_norm": self.grad_penalty_norm,
            "grad_rel": self.grad_rel,
            "critical": self.critical,
            "theory": {
                "theorem": th.theorem,
                "configuration": th.configuration,
                "statement": th.statement,
                "applies": th.applies,
                "reasons": th.reasons,
                "notes": th.notes,
                "lam": th.lam,
                "scale": th.scale,
                "predicted": th.predicted,
                "assumption_A": th.assumption_A,
                "assumption_B": th.assumption_B,
            },
            "distances": self.distances,
            "distance_notes": self.distance_notes,
            "fitted": self.fitted,
            "W_norm_mean": float(self.W_norms.mean()),
            "W_norm_std": float(self.W_norms.std()),
            "phiW_norm_mean": None if self.phiW_norms is None else float(self.phiW_norms.mean()),
            "W_norm_by_rank": self.W_norm_by_rank,
            "W_norm_by_rank_std": self.W_norm_by_rank_std,
            "U_norm_mean": float(self.U_norms.mean()),
            "U_norm_std": float(self.U_norms.std()),
            "pca_W": self.pca_W,
            "pca_U": self.pca_U,
            "cos_W_within": self.cos_W_within,
            "cos_W_across": self.cos_W_across,
            "cos_U_within": self.cos_U_within,
            "cos_U_across": self.cos_U_across,
            "comparison": [{"quantity": q, "observed": o, "predicted": p} for q, o, p in self.comparison()],
            "matches_theorem": self.matches_theorem,
            "verdict": self.verdict,
            "certificate": self.certificate,
            "rtol": self.rtol,
            "seconds": self.seconds,
            "versions": versions(),
        }
        return to_json(out)

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
        return plot_diagnosis(self, out)

    @public(out=PathOut(dir=True))
    def report(self, out):
        """Write ``report.md`` (theory side by side, figures) and ``diagnosis.json`` into ``out``.

        Returns the report's path.
        """
        return write_report(self, out)


# ----------------------------------------------------------------------------- cost of the exact value
def _exact_cost(task: Task, d: int, backend: str) -> dict:
    log10_pairs = math.log10(task.K) * 2 + task.L * math.log10(task.s_c)
    if log10_pairs <= 17:
        est = estimate_cost(task, d=d, grad=True, backend=backend, max_bytes=int(get_budget().max_bytes))
        return {
            "pairs": int(est.pairs),
            "seconds": float(est.seconds),
            "bytes": int(est.bytes),
            "log10_pairs": log10_pairs,
            "log10_seconds": math.log10(max(est.seconds, 1e-300)),
        }
    # beyond any budget: report orders of magnitude only (pairs K·s_c^L·K at ≥ 3e-8 s each)
    return {
        "pairs": None,
        "seconds": None,
        "bytes": None,
        "log10_pairs": log10_pairs,
        "log10_seconds": log10_pairs + math.log10(3e-8),
    }


# ----------------------------------------------------------------------------- geometry
def _geometry(task, W, U, layernorm, eps, want_distances):
    """Norms, spectra, cosines and collapse distances (:mod:`fctheory.metrics.geometry`)."""
    g = weight_geometry(task, W, U, layernorm=layernorm, eps=eps, k=min(10, W.shape[0]))
    shown = g["phiW_norms"] if layernorm else g["W_norms"]
    g["W_norm_by_rank"], g["W_norm_by_rank_std"] = norms_by_rank(task, shown)
    dist, notes, fitted = collapse_distances(task, W, U, layernorm=layernorm, compute=want_distances)
    return g, dist, notes, fitted


# ----------------------------------------------------------------------------- risk and gradient
# ``o`` below is the namespace of diagnose's arguments (task, W, U, lam_W, ..., distances)
def _exact_risk(o, pW, pU):
    """R₀, ‖∇R₀‖, ‖∇R‖ and the (empty) Monte-Carlo fields, by enumeration (:func:`fctheory.evaluate_risk`)."""
    ms = o.max_seconds if o.method == "exact" and o.max_seconds is not None else None
    if o.method != "auto" and ms is None:
        ms = get_budget().max_seconds
    kw = dict(layernorm=o.layernorm, grad=True, eps=o.eps, backend=o.backend, max_seconds=ms)
    res = evaluate_risk(o.task, o.W, o.U, 0.0, max_bytes=int(get_budget().max_bytes), **kw)
    gW0, gU0 = to_numpy(res.grad_W), to_numpy(res.grad_U)
    mc_fields = dict(R_ci=None, R_stderr=None, confidence=None, n_samples=None)
    return float(res.R0), safe_norm(gW0, gU0), safe_norm(gW0 + pW, gU0 + pU), mc_fields


def _mc_risk(o):
    """R₀, ‖∇R₀‖, ‖∇R‖ and the interval fields, by Monte Carlo (:func:`fctheory.risk.montecarlo.monte_carlo_risk`)."""
    K = o.task.K
    n = o.n_samples if o.n_samples is not None else int(min(1000, max(16, 5 * 10**7 // (K * K))))
    kw = dict(lam_W=o.lam_W, lam_U=o.lam_U, layernorm=o.layernorm, eps=o.eps, seed=o.seed, confidence=o.confidence)
    mc = monte_carlo_risk(o.task, o.W, o.U, n_samples=n, grad=True, **kw)
    mc_fields = dict(R_ci=tuple(mc.ci), R_stderr=mc.stderr, confidence=o.confidence, n_samples=n)
    return mc.R0, math.sqrt(max(mc.grad_R0_norm_sq, 0.0)), mc.grad_norm, mc_fields


def _use_exact(task, d, method, max_seconds, backend):
    """(exact?, cost estimate): "auto" enumerates when the estimate fits ``max_seconds`` and the memory budget."""
    cost = _exact_cost(task, d, backend)
    limit = max_seconds if max_seconds is not None else get_budget().max_seconds
    fits = cost["seconds"] is not None and cost["bytes"] <= get_budget().max_bytes
    if method == "exact" and not fits:
        fail(
            "method",
            method,
            f"exact enumeration needs about 10^{cost['log10_seconds']:.1f} s "
            f"(10^{cost['log10_pairs']:.1f} sentence-class pairs); use method='mc'",
        )
    return method == "exact" or (method == "auto" and fits and cost["seconds"] <= limit), cost


# ----------------------------------------------------------------------------- the verdict sentence
def verdict_sentence(theory, *, R, dist, exact, critical, grad_rel, ci, confidence, rtol, distances):
    """(matches_theorem, one-line verdict) of a diagnosis against its theorem's prediction.

    Matching (exact risk only): a critical point (``critical``), |R − R_pred| ≤ rtol·max(1, |R_pred|)
    and, when distances were fitted, the distance to the theorem's configuration ≤ rtol.
    """
    pr = theory.predicted.get("R")
    if theory.theorem is None or pr is None:
        why = theory.reasons[0] if theory.reasons else "no prediction"
        return None, f"no theorem predicts this setting: {why}"
    conf = theory.configuration
    dconf = dist.get(conf)
    r_ok = abs(R - pr) <= rtol * max(1.0, abs(pr))
    d_ok = (dconf is not None and dconf <= rtol) if distances else True
    matches = bool(critical and r_ok and d_ok) if exact else None
    parts = [f"{theory.theorem} (type {conf})" + ("" if theory.applies else ", hypotheses not all met")]
    if exact:
        parts.append(("critical point" if critical else "not a critical point") + f" (‖∇R‖ rel. {grad_rel:.2g})")
        parts.append(f"R − R_pred = {R - pr:.3g}")
    else:
        parts.append(f"R ∈ [{ci[0]:.6g}, {ci[1]:.6g}] at {confidence:.0%} vs R_pred = {pr:.6g}")
        parts.append(f"‖∇R‖ rel. ≈ {grad_rel:.2g} (Monte Carlo)")
    if dconf is not None:
        parts.append(f"distance to type {conf} = {dconf:.3g}")
    head = "matches" if matches else ("does not match" if matches is False else "compared with")
    return matches, f"{head} " + "; ".join(parts)


# ----------------------------------------------------------------------------- entry point
# 1.0 puts the task first, as the rest of the library (true_risk(task, W, U, ...)); the 0.x order
# diagnose(W, U, task, lam_W, lam_U) still works, with a DeprecationWarning
@task_first(deprecated=True)
@public(
    W=Array(ndim=2),
    U=Array(ndim=2),
    task=Instance(Task),
    lam_W=Real(lo=0),
    lam_U=Real(lo=0),
    layernorm=Bool(),
    eps=Real(lo=0),
    method=Choice("auto", "exact", "mc"),
    n_samples=Int(min=2, max=10**9).or_none(),
    seed=Seed(),
    confidence=Real(lo=0, hi=1 - 1e-12, lo_open=True),
    max_seconds=Real(lo=0, lo_open=True).or_none(),
    rtol=Real(lo=0),
    backend=Choice("numpy", "numba", "cupy"),
    assumptions=Bool(),
    distances=Bool(),
    data=TrainingData(),
    certificate=Choice("auto", "network", "optimum"),
    legacy_positional=("lam_W", "lam_U"),
)
def diagnose(
    task,
    W,
    U,
    *,
    lam_W,
    lam_U,
    layernorm=False,
    eps=0.0,
    method="auto",
    n_samples=None,
    seed=0,
    confidence=0.95,
    max_seconds=60.0,
    rtol=1e-6,
    backend="numpy",
    assumptions=True,
    distances=True,
    data=None,
    certificate="auto",
):
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
    data : (S, y), TrainData or None
        The training sentences (N × L word indices) and labels, or ``run.data`` of :func:`fctheory.train`:
        then ``certificate`` holds how far the network is from the global optimum of its own training objective
        (:func:`fctheory.certify`, network h, both decays positive; otherwise the reason it is not available).
    certificate : {"auto", "network", "optimum"}
        Where the certified lower bound is taken: at the network's own weights only (``"network"``: one
        evaluation, seconds at the paper's scale), also at the solved optimum (``"optimum"``), or the optimum
        too on small samples, N·K ≤ 20,000 (``"auto"``). The result says which bound was used.

    Returns
    -------
    Diagnosis

    Raises
    ------
    FCTheoryError
        Shapes that do not fit the task (naming W or U), non-finite weights, φ undefined (a constant
        column with ε = 0), ``method="exact"`` beyond the budget.
    """
    return _diagnose(SimpleNamespace(**locals()))  # every argument, by name, for the steps below


def _diagnose(o) -> Diagnosis:
    """The steps of :func:`diagnose`: checks, risk and gradient, theory, geometry, verdict."""
    t0 = time.perf_counter()
    task, W, U = o.task, o.W, o.U
    d = check_weights(task, W, U)
    check_magnitude(W, U, o.layernorm, o.lam_W)
    if o.layernorm:
        phi(W, eps=o.eps)  # refuses constant columns with eps = 0 (φ undefined), naming W
    exact, cost = _use_exact(task, d, o.method, o.max_seconds, o.backend)
    penalty, pW, pU, pen_norm = penalty_terms(W, U, o.lam_W, o.lam_U)
    R0, g0, gn, mc_fields = _exact_risk(o, pW, pU) if exact else _mc_risk(o)
    denom = g0 + pen_norm
    grad_rel = gn / denom if denom > 0 else 0.0
    critical = bool(grad_rel <= o.rtol) if exact else None
    kw = dict(lam_W=o.lam_W, lam_U=o.lam_U, layernorm=o.layernorm, eps=o.eps)
    theory = applicable_theorem(task, d=d, assumptions=o.assumptions, **kw)
    geo, dist, dnotes, fitted = _geometry(task, W, U, o.layernorm, o.eps, o.distances)
    R = R0 + penalty
    cert = _certificate(o) if o.data is not None else None
    ci, conf, rtol = mc_fields["R_ci"], o.confidence, o.rtol
    matches, verdict = verdict_sentence(
        theory,
        R=R,
        dist=dist,
        exact=exact,
        critical=critical,
        grad_rel=grad_rel,
        ci=ci,
        confidence=conf,
        rtol=rtol,
        distances=o.distances,
    )
    return Diagnosis(
        task=task,
        network="h*" if o.layernorm else "h",
        d=d,
        method="exact" if exact else "monte-carlo",
        R=R,
        R0=R0,
        penalty=penalty,
        **mc_fields,
        exact_cost=cost,
        grad_norm=gn,
        grad_R0_norm=g0,
        grad_penalty_norm=pen_norm,
        grad_rel=grad_rel,
        critical=critical,
        theory=theory,
        distances=dist,
        distance_notes=dnotes,
        fitted=fitted,
        **geo,
        matches_theorem=matches,
        verdict=verdict,
        rtol=rtol,
        seconds=time.perf_counter() - t0,
        W=W,
        U=U,
        certificate=cert,
        **{k: kw[k] for k in ("lam_W", "lam_U", "eps")},
    )


def _certificate(o) -> dict:
    """The training objective's certificate (its data checked here, naming ``data``); a refusal of the certificate
    itself (a budget, weights whose scores overflow) is reported as the reason it is not available."""
    S, y = o.data
    check_data(o.task, S, y, name="data", name_y="data")
    try:
        return training_certificate(o.task, o.W, o.U, lam_W=o.lam_W, lam_U=o.lam_U, layernorm=o.layernorm,
                                    data=(S, y), how=o.certificate)  # fmt: skip
    except FCTheoryError as exc:
        return {"available": False, "reason": str(exc)}
