"""Minority collapse (Fang et al. 2021) in the regularised UFM, exactly, and the SELI geometry it leaves as λ → 0
(Thrampoulidis et al. 2022); docs/ufm.md, "Minority collapse".

**The collapse condition.** In the count-group coordinates (:mod:`fctheory.ufm.imbalanced`) the m_b ≥ 2 classes
of one count n_b have a common within-group singular value β_b; their classifiers (and features) coincide iff
β_b = 0. At β_b = 0 the own logit and the other logits of the group are equal, so ∂f/∂t_b = −√π_b (t_b =
(m_b − 1)β_b) whatever the rest of the point, and f is strictly convex in t_b: the group collapses **iff
√π_b ≤ λ**, i.e.

    n_b/N ≤ N λ_W λ_H,      λ = √(Nλ_Wλ_H),

for CE and for MSE, with or without a bias (the bias is constant on a group). Balanced counts (one group of K):
1/K ≤ λ², the trivial threshold K√(nλ_Wλ_H) ≥ 1.

**Fang et al.'s setting.** K_maj classes of n_maj samples, K_min of n_min = n_maj/r (n_maj, λ_W, λ_H fixed). With
x = 1/r and Q = n_maj λ_W λ_H the minority collapses iff x ≤ Q(K_maj + K_min x)², a quadratic in x with roots
x₋ ≤ x₊ (real iff a = Q K_maj K_min ≤ 1/4):

    r_ib = 1/x₋ = ((1 − 2a) + √(1 − 4a)) / (2 Q K_maj²),

collapse for r ≥ r_ib (and, near the trivial regime, also for r ≤ 1/x₊ when x₊ ≤ 1); a > 1/4: collapsed at every r.

**SELI.** The simplex-encoded labels Ẑ = (I − 11ᵀ/K)Y (Y the K × N one-hot labels) with SVD Ẑ = VΛUᵀ define the
SELI geometry W Wᵀ = VΛVᵀ = (ẐẐᵀ)^{1/2}, HᵀH = UΛUᵀ = (ẐᵀẐ)^{1/2}, W H = Ẑ. In the coordinates X = Z̄ diag(√π) it
is X_S = (I − 11ᵀ/K) diag(√π), the minimum-nuclear-norm X with every margin x_kk − x_jk ≥ √π_k (the UF-SVM; every
margin is tight), which the regularised optimum approaches in direction as λ → 0 (at the rate 1/log(1/λ)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._files import atomic_path
from .._plot import pyplot
from .._validate import Array, Bool, Choice, Int, PathOut, Real, fail, public, result_type
from ..metrics import pairs as _pairs
from ._common import KIND_LAM
from .groups import count_groups, lift, psd_sqrt
from .imbalanced import ce_counts, check_counts, control_lambda, mse_counts

__all__ = [
    "MinorityThreshold",
    "minority_collapse_threshold",
    "collapsed_classes",
    "SELIGeometry",
    "seli_geometry",
    "within_group_spread",
    "PhaseDiagram",
    "minority_phase_diagram",
]


@result_type
@dataclass(frozen=True)
class MinorityThreshold:
    """Where the K_min minority classifiers of Fang et al.'s setting collapse (module docstring).

    Attributes
    ----------
    r_ib : float
        The minority classifiers coincide for every imbalance ratio r = n_maj/n_min ≥ r_ib (inf: never;
        1.0: already at balance).
    r_low : float or None
        Near the trivial regime they also coincide for 1 ≤ r ≤ r_low (None when not).
    always : bool
        Collapsed at every r ≥ 1 (a = Q·K_maj·K_min > 1/4).
    a, Q : float
        Q = n_maj·λ_W·λ_H and a = Q·K_maj·K_min.
    condition : str
        The condition in words.
    """

    r_ib: float
    r_low: float | None
    always: bool
    a: float
    Q: float
    condition: str

    @public(r=Real(lo=1.0))
    def collapsed(self, r) -> bool:
        """Whether the minority classifiers coincide at imbalance ratio ``r`` (≥ 1)."""
        if self.always:
            return True
        return bool(r >= self.r_ib or (self.r_low is not None and r <= self.r_low))


_THRESHOLD_LAM = Real(lo=1e-100, hi=1e12)


@public(
    K_maj=Int(min=1, max=2**31),
    K_min=Int(min=2, max=2**31),
    n_maj=Int(min=1, max=10**12),
    lam_W=_THRESHOLD_LAM,
    lam_H=_THRESHOLD_LAM,
)
def minority_collapse_threshold(*, K_maj: int, K_min: int, n_maj: int, lam_W: float, lam_H: float) -> MinorityThreshold:
    """The imbalance ratio r_ib = n_maj/n_min from which the minority classifiers collapse (Fang et al. 2021),
    in closed form, for the regularised CE or MSE UFM (the same threshold, bias or not).

    Parameters
    ----------
    K_maj, K_min : int
        Majority classes (1 ≤ K_maj ≤ 2³¹) and minority classes (2 ≤ K_min ≤ 2³¹), n_maj and n_min = n_maj/r
        samples each.
    n_maj : int
        Samples of each majority class (held fixed as r varies), at most 10¹².
    lam_W, lam_H : float
        The UFM's weight decay and feature penalty (review eqs. (21), (28)), in [1e-100, 1e12].

    Returns
    -------
    MinorityThreshold
        r_ib = ((1 − 2a) + √(1 − 4a))/(2QK_maj²), Q = n_maj·λ_W·λ_H, a = Q·K_maj·K_min: the smaller root x₋ of
        x = Q(K_maj + K_min·x)² in x = 1/r (module docstring: a group collapses iff its share n_b/N ≤ Nλ_Wλ_H).
    """
    Q = n_maj * lam_W * lam_H
    a = Q * K_maj * K_min
    cond = f"n_min/N <= N*lam_W*lam_H with N = {K_maj}*n_maj + {K_min}*n_min, n_maj = {n_maj}"
    if 4.0 * a >= 1.0:
        return MinorityThreshold(1.0, None, True, a, Q, cond + ": holds at every ratio (a >= 1/4)")
    root = (1.0 - 2.0 * a) + math.sqrt(1.0 - 4.0 * a)
    x_minus = 2.0 * Q * K_maj * K_maj / root
    x_plus = root / (2.0 * Q * K_min * K_min)
    if x_minus >= 1.0:  # already collapsed at balance (r = 1)
        return MinorityThreshold(1.0, None, True, a, Q, cond + ": holds at every ratio r >= 1")
    r_low = 1.0 / x_plus if x_plus <= 1.0 else None
    return MinorityThreshold(1.0 / x_minus, r_low, False, a, Q, cond)


@public(counts=Array(ndim=1, integer=True, min=0), lam_W=KIND_LAM, lam_H=KIND_LAM)
def collapsed_classes(counts, *, lam_W: float, lam_H: float) -> np.ndarray:
    """The classes whose count group collapses at the optimum (CE or MSE, bias or not): at least two classes of
    count n_b > 0 with n_b/N ≤ Nλ_Wλ_H (module docstring). Returns a boolean array (K,)."""
    groups = check_counts(counts)
    lam = control_lambda(groups, lam_W, lam_H)
    pi = groups.values / groups.N
    coll = (groups.values > 0) & (groups.sizes >= 2) & (np.sqrt(pi) <= lam)
    return coll[groups.label]


# ============================================================================== SELI
@result_type
@dataclass(frozen=True)
class SELIGeometry:
    """The SELI geometry of Thrampoulidis et al. (2022) for class counts (module docstring), normalised.

    Attributes
    ----------
    X : ndarray (K, K_p)
        X_S = (I − 11ᵀ/K) diag(√π): the class-level logits Ẑ scaled by √π, columns the present classes.
    W_gram : ndarray (K, K)
        (ẐẐᵀ)^{1/2} divided by its trace.
    means_gram : ndarray (K, K)
        The class-mean block of (ẐᵀẐ)^{1/2} (zero rows for absent classes), divided by the trace of W_gram's
        unnormalised matrix times √N (the same scaling as the UFM's: H̄ᵀH̄ = D^{-1/2}(XᵀX)^{1/2}D^{-1/2}/√N).
    nuclear_norm : float
        ‖X_S‖_*, the UF-SVM's minimum.
    """

    X: np.ndarray
    W_gram: np.ndarray
    means_gram: np.ndarray
    nuclear_norm: float


@public(counts=Array(ndim=1, integer=True, min=0))
def seli_geometry(counts) -> SELIGeometry:
    """The SELI geometry (simplex-encoded-labels interpolation, Thrampoulidis et al. 2022) for ``counts``: from
    the SVD of Ẑ = (I − 11ᵀ/K)Y, W Wᵀ = (ẐẐᵀ)^{1/2} and HᵀH = (ẐᵀẐ)^{1/2}, computed at the class level
    (ẐẐᵀ = N·X_S X_Sᵀ, X_S = (I − 11ᵀ/K)diag(√π)); below pairs.LARGE_K classes (dense K × K)."""
    groups = check_counts(counts)
    K = groups.K
    if K >= _pairs.LARGE_K:
        fail("counts", counts, f"the SELI Grams are dense K x K matrices: K must be below {_pairs.LARGE_K}")
    pres = np.flatnonzero(groups.present)
    pi = groups.counts[pres] / groups.N
    X = np.full((K, pres.size), -1.0 / K) * np.sqrt(pi)[None, :]
    X[pres, np.arange(pres.size)] += np.sqrt(pi)
    L, R = psd_sqrt(X)
    tr = float(np.trace(L))
    means = np.zeros((K, K))
    means[np.ix_(pres, pres)] = R / np.sqrt(np.outer(pi, pi)) / groups.N
    return SELIGeometry(X, L / tr, means / tr, float(np.sum(np.linalg.svd(X, compute_uv=False))))


# ============================================================================== spread and phase diagram
@public(
    counts=Array(ndim=1, integer=True, min=0),
    lam_W=KIND_LAM,
    lam_H=KIND_LAM,
    loss=Choice("ce", "mse"),
    bias=Bool(),
    exchangeable=Bool(),
)
def within_group_spread(counts, *, lam_W: float, lam_H: float, loss: str = "ce", bias: bool = False,
                        exchangeable: bool = True) -> dict:  # fmt: skip
    """{count: spread} for every count shared by ≥ 2 present classes: max_i ‖w_i − w̄‖/‖W‖_F over those
    classes' classifiers at the certified optimum (0 when they coincide). With ``exchangeable=False`` every class
    is solved as its own group (the symmetry reduction, which forces t_b = 0 below the threshold, is not used:
    the spread then comes out of the certified optimisation itself). Raises if the optimum is not certified."""
    groups = count_groups(check_counts(counts).counts, exchangeable=exchangeable)
    if loss == "ce":
        kw = dict(tol=1e-10, maxiter=20000, max_seconds=None)
        r = ce_counts(groups, lam_W=lam_W, lam_H=lam_H, bias=bias, **kw)
    else:
        r = mse_counts(groups, lam_W=lam_W, lam_H=lam_H, bias=bias)
    if not r.certified:  # pragma: no cover - the solver's budget
        fail("counts", counts, f"the optimum was not certified ({r.message})")
    W = _classifiers(r)
    scale = max(float(np.linalg.norm(W)), 1e-300)
    out = {}
    for value in np.unique(groups.counts):
        rows = W[groups.counts == value]
        if value > 0 and rows.shape[0] >= 2:
            out[int(value)] = float(np.max(np.linalg.norm(rows - rows.mean(axis=0), axis=1))) / scale
    return out


def _classifiers(r):
    """The balanced classifier W (K × width) of a certified result (from its reduced solution if not stored)."""
    if r.W is not None:
        return r.W
    red = r.reduced
    groups = red["groups"]
    m = groups.sizes[: groups.Gp]
    beta = np.where(m > 1, red["t"] / np.maximum(m - 1, 1), 0.0)
    M = np.zeros((groups.G, groups.Gp))
    M[: red["M"].shape[0]] = red["M"]
    X = lift(groups, M, beta)
    A, s, _ = np.linalg.svd(X, full_matrices=False)
    return A * np.sqrt(s)[None, :]


@result_type
@dataclass(frozen=True)
class PhaseDiagram:
    """Certified optima over a grid of imbalance ratios r and penalties λ (λ_W = λ_H = λ): the minority
    spread (0 = collapsed), the closed-form threshold r_ib(λ) and the trivial region."""

    ratios: np.ndarray
    lams: np.ndarray
    spread: np.ndarray  # (len(lams), len(ratios))
    trivial: np.ndarray
    r_ib: np.ndarray  # (len(lams),)
    K_maj: int
    K_min: int
    n_maj: int
    loss: str

    @public(out=PathOut())
    def plot(self, out) -> str:
        """Write the phase diagram (PNG) to ``out``; returns the path."""
        return _plot_phase_diagram(self, out)


@public(
    K_maj=Int(min=1, max=64),
    K_min=Int(min=2, max=64),
    n_maj=Int(min=1, max=10**9),
    ratios=Array(ndim=1, min_size=2),
    lams=Array(ndim=1, min_size=2),
    loss=Choice("ce", "mse"),
)
def minority_phase_diagram(*, K_maj: int, K_min: int, n_maj: int, ratios, lams, loss: str = "ce") -> PhaseDiagram:
    """The phase diagram of minority collapse: at every (r, λ) of the grid (λ_W = λ_H = λ, n_min =
    round(n_maj/r) ≥ 1) the certified optimum's minority spread (:func:`within_group_spread`) and whether it is
    trivial, with the closed-form threshold :func:`minority_collapse_threshold` for each λ. ``ratios`` (each in
    [1, 1e6]) and ``lams`` (each in [1e-6, 1]): 2 to 200 values each."""
    for name, arr, lo, hi in (("ratios", ratios, 1.0, 1e6), ("lams", lams, 1e-6, 1.0)):
        if arr.size > 200 or not (np.all(arr >= lo) and np.all(arr <= hi)):
            fail(name, arr, f"must have at most 200 entries, each in [{lo:g}, {hi:g}]")
    spread = np.zeros((lams.size, ratios.size))
    trivial = np.zeros((lams.size, ratios.size), bool)
    r_ib = np.zeros(lams.size)
    for i, lam in enumerate(lams):
        th = minority_collapse_threshold(K_maj=K_maj, K_min=K_min, n_maj=n_maj, lam_W=lam, lam_H=lam)
        r_ib[i] = th.r_ib if not th.always else 1.0
        for j, r in enumerate(ratios):
            n_min = max(1, int(round(n_maj / r)))
            counts = np.array([n_maj] * K_maj + [n_min] * K_min)
            fn = ce_counts if loss == "ce" else mse_counts
            kw = dict(tol=1e-10, maxiter=20000, max_seconds=None) if loss == "ce" else {}
            res = fn(count_groups(counts), lam_W=lam, lam_H=lam, bias=False, **kw)
            trivial[i, j] = res.trivial
            W = _classifiers(res)
            rows = W[K_maj:]
            spread[i, j] = float(np.max(np.linalg.norm(rows - rows.mean(axis=0), axis=1))) / max(
                float(np.linalg.norm(W)), 1e-300
            )
    return PhaseDiagram(ratios, lams, spread, trivial, r_ib, K_maj, K_min, n_maj, loss)


def _plot_phase_diagram(D: PhaseDiagram, out) -> str:
    """The minority spread over (r, λ) as a colour map (white: collapsed, grey: trivial), the closed-form r_ib(λ)
    as a line."""
    plt = pyplot("out", out)
    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    collapsed = D.spread <= 1e-9
    S = np.where(D.trivial | collapsed, np.nan, D.spread)
    vmax = float(np.nanmax(S)) if np.any(np.isfinite(S)) else 1.0
    ax.set_facecolor("#dfe7fd")  # the NaN cells: collapsed minority (the trivial region is drawn over it)
    mesh = ax.pcolormesh(D.ratios, D.lams, S, shading="nearest", cmap="viridis", vmin=0.0, vmax=vmax)
    ax.contourf(D.ratios, D.lams, D.trivial.astype(float), levels=[0.5, 1.5], colors=["0.75"])
    ok = np.isfinite(D.r_ib) & (D.r_ib > 1.0) & (D.r_ib <= D.ratios.max())
    ax.plot(D.r_ib[ok], D.lams[ok], "r--", lw=1.6, label="closed-form threshold $r_{ib}(\\lambda)$")
    ax.text(0.97, 0.52, "minority collapsed", transform=ax.transAxes, ha="right", fontsize=8)
    ax.text(0.97, 0.9, "trivial: W = H = 0", transform=ax.transAxes, ha="right", fontsize=8)
    ax.text(0.03, 0.06, "distinct minority classifiers", transform=ax.transAxes, fontsize=8, color="w")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("imbalance ratio $r = n_{maj}/n_{min}$")
    ax.set_ylabel("$\\lambda_W = \\lambda_H$")
    ax.set_title(
        f"minority collapse, {D.loss.upper()} UFM: $K_{{maj}}$ = {D.K_maj}, $K_{{min}}$ = {D.K_min}, "
        f"$n_{{maj}}$ = {D.n_maj}",
        fontsize=9,
    )
    fig.colorbar(mesh, ax=ax, label="minority classifier spread (0: collapsed)")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    with atomic_path(out, name="out") as tmp:
        fig.savefig(tmp, dpi=120, format="png")
    plt.close(fig)
    return str(out)
