"""Diagnose a trained network's last-layer features against the regularised UFM optimum.

:func:`diagnose_features` takes the penultimate-layer features H (N × d), the labels, the last layer
(W, b) and the regularisation the network was trained with, and says which closed-form UFM result
applies (cross-entropy: Zhu et al. 2021 Thm 3.1, review eq. (21); MSE: Tirer & Bruna 2022, review
eq. (28); with or without an unregularised bias), why or why not (balanced classes, d ≥ K−1 or K,
regularised bias, the trivial-solution threshold K·√(nλ_Wλ_H) ≥ 1), the predicted optimum, the NC
metrics (:mod:`fctheory.metrics` conventions), the distances to the optimum and a one-line verdict.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace

import numpy as np

from .. import metrics as _m
from .._backend import to_numpy
from .._validate import Array, Bool, Choice, Int, PathOut, Real, fail, public, result_type
from ..io import to_json
from .report import plot_feature_diagnosis, write_feature_report
from .statistics import FeatureStatistics, _refuse_overflow, feature_statistics, nc_metrics, ufm_distances, ufm_optimum

__all__ = ["FeatureDiagnosis", "UFMApplicability", "applicable_result", "diagnose_features"]

_SOURCES = {
    "ce": "Zhu et al. 2021 Thm 3.1 (review §2.4, eq. (21))",
    "mse": "Tirer & Bruna 2022 (review §2.5, eq. (28))",
}


@result_type
@dataclass(frozen=True)
class UFMApplicability:
    """Which regularised UFM result describes a network, and whether its conditions hold.

    Attributes
    ----------
    model : str
        ``"ce"``, ``"ce+bias"``, ``"mse"`` or ``"mse+bias"`` (the :mod:`fctheory.ufm` problem compared with).
    applies : bool
        True when every condition of the closed form holds.
    reasons : list of str
        Why it does not apply exactly (empty when it does).
    notes : list of str
        What the result predicts here (the threshold, the frame, the bias).
    n_spl : int
        Samples per class used for the optimum (N/K rounded when the classes are unbalanced).
    optimum : fctheory.ufm.UFMOptimum
    source : str
    """

    model: str
    applies: bool
    reasons: list
    notes: list
    n_spl: int
    optimum: object
    source: str


def _conditions(loss, K, d, counts, lam_b, bias):
    reasons = []
    if not np.all(counts == counts[0]):
        reasons.append(
            f"the classes are unbalanced (n_k from {int(counts.min())} to {int(counts.max())}); the closed "
            "form is for n samples in every class (minority collapse, Fang et al. 2021, breaks it)"
        )
    need = K if (loss == "mse" and not bias) else K - 1
    if d < need:
        reasons.append(
            f"the feature dimension d = {d} is below {'K' if need == K else 'K-1'} = {need}, which the "
            f"{'orthogonal frame' if need == K else 'simplex ETF'} of the optimum needs"
        )
    if bias and lam_b > 0 and loss == "mse":
        reasons.append(
            f"the bias is regularised (lam_b = {lam_b:g}); the MSE closed form has an unregularised bias "
            "(b* = 1/K), which a penalty shrinks"
        )
    return reasons


@public(
    loss=Choice("ce", "mse"),
    K=Int(min=2),
    d=Int(min=1),
    counts=Array(ndim=1, integer=True, min=1),
    lam_W=Real(lo=0.0, lo_open=True),
    lam_H=Real(lo=0.0, lo_open=True),
    lam_b=Real(lo=0.0),
    bias=Bool(),
)
def applicable_result(
    *, loss: str, K: int, d: int, counts, lam_W: float, lam_H: float, lam_b: float = 0.0, bias: bool = False
) -> UFMApplicability:
    """The UFM result for a network with K classes of ``counts`` samples, feature dimension d, weight
    decay lam_W on the last layer, feature penalty lam_H (the UFM's λ_H‖H‖²/2 over all N samples),
    ``bias`` (with penalty lam_b) and ``loss``; see :class:`UFMApplicability`."""
    if counts.shape != (K,):
        fail("counts", counts, f"must have one entry per class (K = {K})")
    n = max(1, int(round(float(counts.sum()) / K)))
    opt = ufm_optimum(loss=loss, K=K, n_spl=n, lam_W=lam_W, lam_H=lam_H, bias=bool(bias))
    Kq = opt.extras.get("Kq")
    kq = f"{Kq:.4g}" if Kq is not None else f"exp({math.log(K) + opt.extras['log_q']:.4g})"
    notes = [
        f"K*sqrt(n*lam_W*lam_H) = {kq} with n = {n}: "
        + (
            "at or above the threshold 1, the trivial solution W = H = 0 is optimal"
            if opt.trivial
            else "below the threshold 1, the optimum is a collapsed, non-zero frame"
        )
    ]
    if not opt.trivial:
        frame = "orthogonal frame (W Wᵀ ∝ I)" if opt.model == "mse" else "simplex ETF (W Wᵀ ∝ I − 11ᵀ/K)"
        hw = math.exp(0.5 * (math.log(lam_W) - math.log(n) - math.log(lam_H)))
        notes.append(
            f"predicted: every feature equals its class mean, h_k = {hw:.4g}·w_k; W is a {frame} with "
            f"‖W‖² = {opt.W_norm_sq:.6g}, ‖H‖² = {opt.H_norm_sq:.6g}"
        )
    if bias:
        notes.append(
            "optimal bias b* = "
            + ("0 (a constant bias does not change the CE loss)" if loss == "ce" else f"1/K = {1.0 / K:.4g}")
        )
    reasons = _conditions(loss, K, d, counts, lam_b, bias)
    return UFMApplicability(opt.model, not reasons, reasons, notes, n, opt, _SOURCES[loss])


# ============================================================================= the diagnosis
@result_type
@dataclass
class FeatureDiagnosis:
    """What :func:`diagnose_features` measured, next to the UFM optimum.

    Attributes: ``K``, ``N``, ``d``, ``counts``, ``loss``, ``bias`` (whether the layer has one),
    ``lam_W``, ``lam_H``, ``lam_b``, ``rtol``; ``applicability`` (:class:`UFMApplicability`, with the
    optimum); ``metrics`` (NC1–NC4, CDNV, equinorm, cosines, norms); ``distances`` (to the optimum,
    see :func:`fctheory.nc_diagnosis.statistics.ufm_distances`); ``checks`` ({name: deviation} compared
    with ``rtol``); ``matches`` (True/False, None when the result does not apply); ``verdict`` (one
    line); ``statistics`` (:class:`~fctheory.nc_diagnosis.statistics.FeatureStatistics`), ``W``, ``b``.
    """

    K: int
    N: int
    d: int
    counts: np.ndarray
    loss: str
    bias: bool
    lam_W: float
    lam_H: float
    lam_b: float
    rtol: float
    applicability: UFMApplicability
    metrics: dict
    distances: dict
    checks: dict
    matches: bool | None
    verdict: str
    seconds: float
    statistics: FeatureStatistics = field(repr=False)
    W: np.ndarray = field(repr=False)
    b: np.ndarray | None = field(repr=False)

    def to_dict(self) -> dict:
        """JSON-ready dict (numbers as numbers; NaN/inf become None)."""
        a, o = self.applicability, self.applicability.optimum
        out = {
            "K": self.K,
            "N": self.N,
            "d": self.d,
            "counts": self.counts.tolist(),
            "loss": self.loss,
            "bias": self.bias,
            "lam_W": self.lam_W,
            "lam_H": self.lam_H,
            "lam_b": self.lam_b,
            "rtol": self.rtol,
            "result": {
                "model": a.model,
                "applies": a.applies,
                "reasons": a.reasons,
                "notes": a.notes,
                "n_spl": a.n_spl,
                "source": a.source,
            },
            "optimum": {
                "trivial": o.trivial,
                "value": o.value,
                "W_norm_sq": o.W_norm_sq,
                "H_norm_sq": o.H_norm_sq,
                "bias": None if o.bias is None else o.bias.tolist(),
                "W_gram": o.W_gram.tolist(),
                "means_gram": o.means_gram.tolist(),
                "extras": o.extras,
            },
            "metrics": self.metrics,
            "distances": self.distances,
            "checks": self.checks,
            "matches": self.matches,
            "verdict": self.verdict,
            "seconds": self.seconds,
        }
        return to_json(out)

    @public(out=PathOut(dir=True))
    def plot(self, out):
        """Write the PNG figures into folder ``out``; returns {name: path} (see :mod:`fctheory.nc_diagnosis.report`)."""
        return plot_feature_diagnosis(self, out)

    @public(out=PathOut(dir=True))
    def report(self, out):
        """Write ``report.md``, ``diagnosis.json`` and the figures into ``out``; returns the report path."""
        return write_feature_report(self, out)


def _checks(app, metrics, dist):
    """{quantity: deviation from the optimum} (each compared with rtol by the verdict)."""
    opt = app.optimum
    if opt.trivial:
        c = {"‖H‖²/N (optimum 0)": dist["H_norm_sq_per_sample"]}
        if "W_norm_sq" in metrics:
            c["‖W‖² (optimum 0)"] = metrics["W_norm_sq"]
        return c
    c = {
        "NC1 (tr Σ_W/tr Σ_B)": metrics["nc1_trace_ratio"],
        "class-mean Gram": dist["dist_means_gram"],
        "‖H‖² ratio − 1": abs(dist["H_norm_sq_ratio"] - 1.0),
    }
    if "dist_W_gram" in dist:
        c["W Gram"] = dist["dist_W_gram"]
        c["‖W‖² ratio − 1"] = abs(dist["W_norm_sq_ratio"] - 1.0)
    if "dist_bias" in dist and opt.bias is not None and np.any(opt.bias != 0):
        c["bias (relative)"] = dist["dist_bias"] / float(np.linalg.norm(opt.bias))
    return c


def _verdict(app, metrics, dist, checks, rtol, lam_W, lam_H):
    worst = max(checks, key=lambda k: checks[k] if math.isfinite(checks[k]) else math.inf)
    wv = checks[worst]
    name = f"{app.model} UFM optimum (lam_W={lam_W:g}, lam_H={lam_H:g})"
    if not app.applies:
        return (
            None,
            f"no UFM closed form applies exactly ({app.reasons[0]}); largest deviation from the {name}: "
            f"{worst} = {wv:.3g}",
        )
    if wv <= rtol:
        return True, f"matches the {name} within rtol={rtol:g} (largest deviation: {worst} = {wv:.3g})"
    text = f"does NOT match the {name}: {worst} = {wv:.3g} > rtol={rtol:g}"
    collapsed = metrics.get("nc1_trace_ratio", math.inf) <= rtol and metrics.get("nc2", math.inf) <= rtol
    hw = dist.get("h_over_w")
    if collapsed and hw is not None and math.isfinite(hw) and not app.optimum.trivial:
        implied, given = app.n_spl * hw**2, lam_W / lam_H
        text += f"; the geometry has collapsed (NC1 = {metrics['nc1_trace_ratio']:.2g}, NC2 = {metrics['nc2']:.2g}) "
        if abs(implied / given - 1.0) > rtol:
            text += (
                f"but the norms do not fit these lambdas: the features imply lam_W/lam_H ≈ {implied:.3g} "
                f"(given {given:.3g})"
            )
        else:
            text += "and ‖h‖/‖w‖ fits lam_W/lam_H, but the overall scale does not: check the loss and lam_W·lam_H"
    return False, text


def _host_statistics(st):
    """The statistics with their arrays copied to the host (NumPy), for the report and the figures."""
    arrays = ("means", "global_mean", "sigma_W", "sigma_B", "class_var")
    return replace(st, **{k: np.asarray(to_numpy(getattr(st, k)), dtype=np.float64) for k in arrays})


def _check_shapes(H, y, W, b):
    """(N, d, K) after checking that H (N × d), y (N,), W (K × d) and b (K,) fit together."""
    N, d = H.shape
    K = W.shape[0]
    if N == 0:
        fail("H", f"array of shape {tuple(H.shape)}", "must have at least one row (sample)")
    if W.shape[1] != d:
        fail("W", f"array of shape {tuple(W.shape)}", f"must have d = {d} columns like H (shape {tuple(H.shape)})")
    if tuple(y.shape) != (N,):
        fail("y", f"array of shape {tuple(y.shape)}", f"must have one label per row of H (N = {N})")
    if K < 2:
        fail("W", f"array of shape {tuple(W.shape)}", "must have K >= 2 rows (classes)")
    if int(y.max()) >= K:
        fail("y", int(y.max()), f"labels must be < K = {K} (the rows of W)")
    if b is not None and tuple(b.shape) != (K,):
        fail("b", f"array of shape {tuple(b.shape)}", f"must have K = {K} entries (the rows of W)")
    return N, d, K


@public(
    H=Array(ndim=2, native=True),
    y=Array(ndim=1, integer=True, min=0, native=True),
    W=Array(ndim=2, native=True),
    b=Array(ndim=1, native=True).or_none(),
    lam_W=Real(lo=0.0, lo_open=True),
    lam_H=Real(lo=0.0, lo_open=True),
    lam_b=Real(lo=0.0),
    loss=Choice("ce", "mse"),
    rtol=Real(lo=0.0, lo_open=True),
)
def diagnose_features(
    H, y, W, b=None, *, lam_W: float, lam_H: float, lam_b: float = 0.0, loss: str = "ce", rtol: float = 0.1
) -> FeatureDiagnosis:
    """Compare a network's penultimate-layer features and last layer with the regularised UFM optimum.

    Parameters
    ----------
    H : array_like, (N, d)
        Features (the penultimate layer's output, one sample per row), e.g. of the training set: a NumPy
        or CuPy array or a PyTorch tensor (CPU or CUDA). The class statistics and NC4 are computed on its
        device; only the K×d and d×d statistics come to the host for the comparison with the optimum.
    y : array_like of int, (N,)
        Labels in {0, …, K−1}, every class present (K = the rows of W).
    W : array_like, (K, d)
        The last layer's weight (logits = H Wᵀ + b).
    b : array_like, (K,), optional
        Its bias (None: a bias-free layer).
    lam_W : float
        Weight decay on W (the UFM's (λ_W/2)‖W‖²).
    lam_H : float
        The feature penalty λ_H of the UFM's (λ_H/2)‖H‖² over all N samples, with the loss averaged over
        the N samples (review eqs. (21), (28)).
    lam_b : float
        Penalty on the bias (0: unregularised, as in the closed forms).
    loss : {"ce", "mse"}
    rtol : float
        Tolerance of the verdict: every deviation in ``checks`` must be ≤ rtol to match.

    Returns
    -------
    FeatureDiagnosis
        ``verdict`` says in one line whether the features sit at the predicted optimum; a collapsed
        geometry whose norms do not fit the given lambdas (e.g. a wrong lam_H) is flagged with the
        ratio λ_W/λ_H the features imply (at the optimum ‖h‖/‖w‖ = √(λ_W/(nλ_H))).
    """
    t0 = time.perf_counter()
    N, d, K = _check_shapes(H, y, W, b)
    _refuse_overflow("H", H)
    st = feature_statistics(H, y, K=K)
    app = applicable_result(
        loss=loss, K=K, d=d, counts=st.counts, lam_W=lam_W, lam_H=lam_H, lam_b=lam_b, bias=b is not None
    )
    metrics = nc_metrics(st, W)
    metrics["nc4"] = float(_m.nc4(W, H, y, b=b, K=K))
    dist = ufm_distances(st, W, b, app.optimum, n_spl=app.n_spl)
    W = np.asarray(to_numpy(W), dtype=np.float64)
    b = None if b is None else np.asarray(to_numpy(b), dtype=np.float64)
    checks = _checks(app, metrics, dist)
    matches, verdict = _verdict(app, metrics, dist, checks, rtol, lam_W, lam_H)
    return FeatureDiagnosis(
        K,
        N,
        d,
        st.counts,
        loss,
        b is not None,
        lam_W,
        lam_H,
        lam_b,
        rtol,
        app,
        metrics,
        dist,
        checks,
        matches,
        verdict,
        time.perf_counter() - t0,
        _host_statistics(st),
        W,
        b,
    )
