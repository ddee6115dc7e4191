"""Diagnose a trained network's last-layer features against the regularised UFM optimum.

:func:`diagnose_features` takes the penultimate-layer features H (N × d), the labels, the last layer
(W, b) and the regularisation the network was trained with, and says which UFM result applies: for balanced
classes the closed form (cross-entropy: Zhu et al. 2021 Thm 3.1, review eq. (21); MSE: Tirer & Bruna 2022,
review eq. (28); with or without an unregularised bias), for any other class counts, absent classes included,
the certified optimum for the data's own counts (:func:`fctheory.ufm.ce` / :func:`fctheory.ufm.mse` with
``counts=``); why or why not (d ≥ the rank of the optimum, a regularised bias, the trivial-solution threshold),
the predicted optimum, the NC metrics (:mod:`fctheory.metrics` conventions, over the classes present), the
distances to the optimum and a one-line verdict.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace

import numpy as np

from .. import metrics as _m
from .._backend import asarray_like, to_numpy
from .._validate import Array, Bool, Choice, Int, PathOut, Real, fail, public, result_type
from .. import ufm as _ufm
from ..io import to_json
from .report import plot_feature_diagnosis, write_feature_report
from .statistics import FeatureStatistics, _refuse_overflow, feature_statistics, nc_metrics, ufm_distances, ufm_optimum

__all__ = ["FeatureDiagnosis", "UFMApplicability", "applicable_result", "diagnose_features"]

_SOURCES = {
    "ce": "Zhu et al. 2021 Thm 3.1 (review §2.4, eq. (21))",
    "mse": "Tirer & Bruna 2022 (review §2.5, eq. (28))",
    "counts": "the certified optimum for these class counts (docs/ufm.md, 'Any class counts'; review eqs. (21), (28))",
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
        True when every condition of the result holds (for given counts: also that its optimum is certified).
    reasons : list of str
        Why it does not apply exactly (empty when it does).
    notes : list of str
        What the result predicts here (the threshold, the frame, the bias).
    n_spl : int
        Samples per class of the closed form (N/K rounded when the classes are unbalanced; the optimum of
        given counts carries its own N).
    optimum : fctheory.ufm.UFMOptimum
        The closed form for balanced counts, else a :class:`fctheory.ufm.CertifiedUFMOptimum`.
    source : str
    """

    model: str
    applies: bool
    reasons: list
    notes: list
    n_spl: int
    optimum: object
    source: str


def _conditions(loss, K, d, opt, lam_b, bias):
    """Why the optimum does not describe the network exactly (an empty list when it does)."""
    reasons = []
    certified = getattr(opt, "certified", True)
    if not certified:
        reasons.append(f"the optimum for these class counts was not certified ({opt.message})")
    width = getattr(opt, "width", None)
    if width is not None:  # the optimum of given counts: its rank is the dimension it needs
        if d < width:
            reasons.append(f"the feature dimension d = {d} is below the rank {width} of the optimum for these counts")
    else:
        need = K if (loss == "mse" and not bias) else K - 1
        if d < need:
            reasons.append(
                f"the feature dimension d = {d} is below {'K' if need == K else 'K-1'} = {need}, which the "
                f"{'orthogonal frame' if need == K else 'simplex ETF'} of the optimum needs"
            )
    b_star = opt.bias is not None and np.any(np.isfinite(opt.bias) & (opt.bias != 0))
    if bias and lam_b > 0 and (loss == "mse" or b_star):
        reasons.append(
            f"the bias is regularised (lam_b = {lam_b:g}); the optimum has an unregularised bias "
            f"({'b* = 1/K' if width is None else 'b* != 0 for these counts'}), which a penalty shrinks"
        )
    return reasons


def _threshold_note(opt, K, n, counts):
    Kq = opt.extras.get("Kq")
    what = f"K*sqrt(n*lam_W*lam_H) = {Kq:.4g} with n = {n}" if Kq is not None else ""
    if not what:
        what = f"K*sqrt(n*lam_W*lam_H) = exp({math.log(K) + opt.extras['log_q']:.4g}) with n = {n}"
    if getattr(opt, "width", None) is not None:
        what = f"lambda/lambda_0 = {Kq:.4g} (lambda = sqrt(N*lam_W*lam_H); K*sqrt(n*lam_W*lam_H) when balanced)"
    return what + (
        ": at or above the threshold 1, the trivial solution W = H = 0 is optimal"
        if opt.trivial
        else ": below the threshold 1, the optimum is a collapsed, non-zero configuration"
    )


def _counts_notes(opt, counts, loss, bias):
    """What the optimum of given counts predicts (absent classes, collapsed groups, its rank and certificate)."""
    present = counts > 0
    notes = [
        f"class counts from {int(counts[present].min())} to {int(counts.max())}"
        + ("" if present.all() else f", {int(np.count_nonzero(~present))} of {counts.size} classes absent")
        + f": the optimum for these counts (certified, relative gap {opt.rel_gap:.1e}) has rank {opt.width}, "
        f"‖W‖² = {opt.W_norm_sq:.6g}, ‖H‖² = {opt.H_norm_sq:.6g}; every feature equals its class mean"
    ]
    if not present.all():
        notes.append(
            "an absent class keeps its classifier row in every softmax (pushed away from the features)"
            if not bias or loss == "mse"
            else "an absent class drops out: its optimal bias is -inf and its classifier row 0"
        )
    coll = np.unique(counts[opt.collapsed]) if opt.collapsed is not None else []
    if len(coll):
        notes.append(
            f"minority collapse: the classes of count(s) {', '.join(str(int(c)) for c in coll)} have equal "
            "classifiers and features (n_b/N <= N*lam_W*lam_H; fctheory.ufm.minority)"
        )
    return notes


@public(
    loss=Choice("ce", "mse"),
    K=Int(min=2),
    d=Int(min=1),
    counts=Array(ndim=1, integer=True, min=0),
    lam_W=Real(lo=0.0, lo_open=True),
    lam_H=Real(lo=0.0, lo_open=True),
    lam_b=Real(lo=0.0),
    bias=Bool(),
    tol=Real(lo=1e-15, hi=1.0),
    max_seconds=Real(lo=0.0, lo_open=True).or_none(),
)
def applicable_result(
    *,
    loss: str,
    K: int,
    d: int,
    counts,
    lam_W: float,
    lam_H: float,
    lam_b: float = 0.0,
    bias: bool = False,
    tol: float = 1e-10,
    max_seconds: float | None = None,
) -> UFMApplicability:
    """The UFM result for a network with K classes of ``counts`` samples, feature dimension d, weight
    decay lam_W on the last layer, feature penalty lam_H (the UFM's λ_H‖H‖²/2 over all N samples),
    ``bias`` (with penalty lam_b) and ``loss``; see :class:`UFMApplicability`.

    Balanced counts (all equal) give the closed form (:func:`fctheory.ufm.ce` / :func:`fctheory.ufm.mse` with
    n_spl); any other counts, zeros (absent classes) included, the certified optimum for those counts
    (``ufm.ce(counts=...)``, within relative gap ``tol``, stopped after ``max_seconds``; not certified: the result
    does not apply). ``n_spl`` of the result is N/K rounded (the closed forms' n; the optimum of given counts
    carries its own N).
    """
    if counts.shape != (K,):
        fail("counts", counts, f"must have one entry per class (K = {K})")
    N = int(counts.sum())
    if N < 1:
        fail("counts", counts, "must have at least one sample")
    n = max(1, int(round(N / K)))
    balanced = bool(np.all(counts == counts[0]))
    if balanced:
        opt = ufm_optimum(loss=loss, K=K, n_spl=int(counts[0]), lam_W=lam_W, lam_H=lam_H, bias=bool(bias))
    else:
        fn = _ufm.ce if loss == "ce" else _ufm.mse
        kw = dict(tol=tol, max_seconds=max_seconds) if loss == "ce" else {}
        opt = fn(counts=counts, lam_W=lam_W, lam_H=lam_H, bias=bool(bias), **kw)
    notes = [_threshold_note(opt, K, n, counts)]
    if balanced and not opt.trivial:
        frame = "orthogonal frame (W Wᵀ ∝ I)" if opt.model == "mse" else "simplex ETF (W Wᵀ ∝ I − 11ᵀ/K)"
        hw = math.exp(0.5 * (math.log(lam_W) - math.log(n) - math.log(lam_H)))
        notes.append(
            f"predicted: every feature equals its class mean, h_k = {hw:.4g}·w_k; W is a {frame} with "
            f"‖W‖² = {opt.W_norm_sq:.6g}, ‖H‖² = {opt.H_norm_sq:.6g}"
        )
    elif not balanced:
        notes += _counts_notes(opt, counts, loss, bias)
    if bias and balanced:
        notes.append(
            "optimal bias b* = "
            + ("0 (a constant bias does not change the CE loss)" if loss == "ce" else f"1/K = {1.0 / K:.4g}")
        )
    reasons = _conditions(loss, K, d, opt, lam_b, bias)
    source = _SOURCES[loss] if balanced else _SOURCES["counts"]
    return UFMApplicability(opt.model, not reasons, reasons, notes, n, opt, source)


# ============================================================================= the diagnosis
@result_type
@dataclass
class FeatureDiagnosis:
    """What :func:`diagnose_features` measured, next to the UFM optimum.

    Attributes: ``K``, ``N``, ``d``, ``counts``, ``loss``, ``bias`` (whether the layer has one),
    ``lam_W``, ``lam_H``, ``lam_b``, ``rtol``; ``applicability`` (:class:`UFMApplicability`, with the
    optimum); ``metrics`` (NC1–NC4, CDNV, equinorm, cosines, norms, over the classes present:
    ``classes_present``); ``distances`` (to the optimum, see
    :func:`fctheory.nc_diagnosis.statistics.ufm_distances`, and ``dist_bias_relative``: ‖b − b*‖ over the
    bias's scale, centred for cross-entropy); ``checks`` ({name: deviation} compared with ``rtol``); ``matches``
    (True/False, None when the result does not apply); ``verdict`` (one line); ``statistics``
    (:class:`~fctheory.nc_diagnosis.statistics.FeatureStatistics`, all K classes), ``W``, ``b``.
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
    if dist.get("dist_bias_relative") is not None:
        c["bias (relative)"] = dist["dist_bias_relative"]
    return c


def _bias_check(opt, b, counts):
    """‖b − b*‖ relative to the bias's scale, as the verdict checks it, or None (no bias to compare, or none
    to scale by). MSE: ‖b − b*‖/‖b*‖. Cross-entropy, whose loss ignores b → b + c·1: both centred over the
    classes present with a finite b*, over max(‖b*‖, √m·(RMS of the optimum's centred logits)) (m compared
    classes): for nearly balanced counts b* is tiny and the logits are the scale a bias error acts on."""
    if b is None or opt.bias is None:
        return None
    bs = np.asarray(opt.bias, dtype=np.float64)
    keep = np.isfinite(bs) & (counts > 0)
    bb, bs = b[keep], bs[keep]
    scale = float(np.linalg.norm(bs))
    if opt.model.startswith("ce"):
        bb, bs = bb - bb.mean(), bs - bs.mean()
        scale = float(np.linalg.norm(bs))
        W, means = getattr(opt, "W", None), getattr(opt, "means", None)
        if W is not None and means is not None:
            Z = W @ means[:, counts > 0]  # the optimum's logits of every present class, without the bias
            Z = Z - Z.mean(axis=0)
            scale = max(scale, math.sqrt(keep.sum() * float(np.mean(Z * Z))))
    return float(np.linalg.norm(bb - bs)) / scale if scale > 0 else None


def _verdict(app, metrics, dist, checks, rtol, lam_W, lam_H):
    worst = max(checks, key=lambda k: checks[k] if math.isfinite(checks[k]) else math.inf)
    wv = checks[worst]
    name = f"{app.model} UFM optimum (lam_W={lam_W:g}, lam_H={lam_H:g})"
    if getattr(app.optimum, "width", None) is not None:
        name = f"{app.model} UFM optimum for these class counts (lam_W={lam_W:g}, lam_H={lam_H:g})"
    if not app.applies:
        return (
            None,
            f"the UFM result does not apply exactly ({app.reasons[0]}); largest deviation from the {name}: "
            f"{worst} = {wv:.3g}",
        )
    if wv <= rtol:
        return True, f"matches the {name} within rtol={rtol:g} (largest deviation: {worst} = {wv:.3g})"
    text = f"does NOT match the {name}: {worst} = {wv:.3g} > rtol={rtol:g}"
    collapsed = metrics.get("nc1_trace_ratio", math.inf) <= rtol and metrics.get("nc2", math.inf) <= rtol
    hw = dist.get("h_over_w")
    if collapsed and hw is not None and math.isfinite(hw) and not app.optimum.trivial:
        opt = app.optimum
        n_eff = opt.N / opt.counts.size if getattr(opt, "width", None) is not None else app.n_spl  # N/K
        implied, given = n_eff * hw**2, lam_W / lam_H
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
        Labels in {0, …, K−1} (K = the rows of W). A class may be absent: the metrics are over the classes
        present (``metrics["classes_present"]``), the optimum is that of the data's own counts, zeros included.
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
    counts = _counts_of(y, K)
    st, Wp, bp, yp, Kp = _present_classes(H, y, W, b, counts)
    app = applicable_result(
        loss=loss, K=K, d=d, counts=counts, lam_W=lam_W, lam_H=lam_H, lam_b=lam_b, bias=b is not None
    )
    metrics = nc_metrics(st, Wp)  # over the classes present
    metrics["nc4"] = float(_m.nc4(Wp, H, yp, b=bp, K=Kp))
    st = _with_absent(st, counts)
    dist = ufm_distances(st, W, b, app.optimum, n_spl=app.n_spl)
    W = np.asarray(to_numpy(W), dtype=np.float64)
    b = None if b is None else np.asarray(to_numpy(b), dtype=np.float64)
    bias_check = _bias_check(app.optimum, b, counts)
    if bias_check is not None:
        dist["dist_bias_relative"] = bias_check
    checks = _checks(app, metrics, dist)
    matches, verdict = _verdict(app, metrics, dist, checks, rtol, lam_W, lam_H)
    metrics["classes_present"] = Kp
    return FeatureDiagnosis(
        K,
        N,
        d,
        counts,
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


def _counts_of(y, K):
    """The class counts (K,) of labels y of any library (a host copy of y: it is small)."""
    yh = np.asarray(to_numpy(y))
    if yh.dtype.kind not in "iu":
        fail("y", f"array of dtype {yh.dtype}", "labels must be integers")
    if yh.size and int(yh.min()) < 0:
        fail("y", int(yh.min()), "labels must be >= 0")
    return np.bincount(yh.astype(np.int64), minlength=K)


def _present_classes(H, y, W, b, counts):
    """(statistics, W, b, labels, K_p) of the classes present: all of them, or the K_p ≥ 2 classes with samples
    relabelled 0..K_p−1 (the metrics are over the classes present; the UFM comparison keeps all K)."""
    present = np.flatnonzero(counts)
    K = counts.size
    if present.size == K:
        return feature_statistics(H, y, K=K), W, b, y, K
    if present.size < 2:
        fail("y", f"labels of {present.size} class", "at least two classes must have samples")
    remap = np.full(K, -1, dtype=np.int64)
    remap[present] = np.arange(present.size)
    yp = remap[np.asarray(to_numpy(y), dtype=np.int64)]
    idx = asarray_like(present, W)
    Wp = W[idx]
    bp = None if b is None else b[asarray_like(present, b)]
    return feature_statistics(H, yp, K=present.size), Wp, bp, yp, present.size


def _with_absent(st, counts):
    """The statistics of the present classes extended to all K (host arrays): an absent class has count 0 and
    mean 0 (it adds nothing to ‖H‖²; :func:`ufm_distances` leaves it out of the class-mean Gram)."""
    if st.K == counts.size:
        return st
    present = counts > 0
    means = np.zeros((counts.size, st.d))
    means[present] = np.asarray(to_numpy(st.means), dtype=np.float64)
    var = np.zeros(counts.size)
    var[present] = np.asarray(to_numpy(st.class_var), dtype=np.float64)
    host = lambda a: np.asarray(to_numpy(a), dtype=np.float64)  # noqa: E731
    return FeatureStatistics(
        means, host(st.global_mean), counts.astype(np.int64), host(st.sigma_W), host(st.sigma_B), var
    )
