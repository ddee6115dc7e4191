"""Prediction objects: everything Theorems 1–3 say a trained network should look like.

Each ``predict_type*`` returns a frozen dataclass whose fields broadcast like the inputs, with
``to_dict()`` for JSON. Norms are Frobenius norms; PCA singular values are those of the centred
data matrix (what ``sklearn.decomposition.PCA.singular_values_`` reports) at exact collapse,
assuming each concept occurs equally often among the u_{k,ℓ} (true under Assumption 1).

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
import weakref
from dataclasses import dataclass, field, fields

import numpy as np

from ._budget import check_work
from ._latent import LatentSum
from ._validate import Bool, Choice, Instance, Int, Real, fail, float_array, public, result_type
from ._errors import FCTheoryError
from .assumptions import check_assumption_A, check_assumption_B, lemma_B_properties
from .collapsed import collapsed_optimum, collapsed_optimum_star
from .partial import lemma_b_scale
from .network import U_hat
from .task import Task
from .tau import H as _H
from .tau import KK, LAM, LEN, N_C, N_W
from .tau import _log_eta, _params as _params1, lambda_trivial, tau
from .tau_star import D_EMB
from .tau_star import H_star as _H_star
from .tau_star import _log_eta_star, _params as _params3, tau_star
from .type3 import MU, S_C, lambda_max_type3, solve_type3

__all__ = [
    "TypeIPrediction",
    "TypeIIPrediction",
    "TypeIIIPrediction",
    "predict_type1",
    "predict_type2",
    "predict_type3",
    "predict",
    "applicable_theorem",
    "TheoryVerdict",
    "PartialPrediction",
    "PartialStarPrediction",
    "COLLAPSED_STAR",
    "EXACT",
    "LEMMA_B",
    "APPROXIMATION",
]


def _s(x):
    x = np.asarray(x, dtype=np.float64)
    return float(x) if x.ndim == 0 else x


class _Pred:
    @public()
    def to_dict(self) -> dict:
        """Plain-Python dict (lists for arrays), suitable for ``json.dumps``."""
        out = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, np.ndarray):
                v = v.tolist()
            elif isinstance(v, np.generic):
                v = v.item()
            out[f.name] = v
        return out


@result_type
@dataclass(frozen=True)
class TypeIPrediction(_Pred):
    """Theorem 1: the global minimiser of (5) is type-I with c = √(τ/n_w), c′ = √(τ/(KL)).

    Attributes
    ----------
    n_c, n_w, L, K, lam
        The setting (as given, broadcast): concepts, vocabulary size, sentence length, classes, λ.
    tau
        τ = argmin H.
    c
        Word-embedding norm ‖w_(α,β)‖ = √(τ/n_w).
    c_prime
        ‖u_{k,ℓ}‖ = √(τ/(KL)).
    eta
        η of Theorem 1.
    lambda_trivial
        λ₀; τ = 0 iff λ ≥ λ₀.
    trivial
        Whether τ = 0.
    risk
        R at the optimum = H(τ) (Lemma K).
    ce
        Unregularised cross-entropy H(τ) − λτ.
    H0
        H(0) = log(K + 1 − K/n_c^L), the risk at (W, U) = (0, 0) (≈ log K).
    norm_W, norm_U
        ‖W‖_F = ‖U‖_F = √τ.
    pca_sigma
        The n_c − 1 equal nonzero PCA singular values of W and of {u_{k,ℓ}}: √(τ/(n_c−1)).
    margin_per_position
        Score margin h_k(x) − h_j(x) per position where z_k and z_j differ: ητ.
    """

    n_c: object
    n_w: object
    L: object
    K: object
    lam: object
    tau: object
    c: object
    c_prime: object
    eta: object
    lambda_trivial: object
    trivial: object
    risk: object
    ce: object
    H0: object
    norm_W: object
    norm_U: object
    pca_sigma: object
    margin_per_position: object

    @public()
    def pca_W(self):
        """Full vector of PCA singular values of W (scalar inputs only): n_c − 1 copies."""
        if np.ndim(self.n_c) or np.ndim(self.pca_sigma):
            fail("self", self, "pca_W needs a prediction made from scalar inputs (use pca_sigma for arrays)")
        check_work("n_c", self.n_c, bytes=8 * self.n_c, what="pca_W (n_c - 1 singular values)")
        return np.full(int(self.n_c) - 1, self.pca_sigma)

    pca_U = pca_W


@result_type
@dataclass(frozen=True)
class TypeIIPrediction(_Pred):
    """Theorem 3: the global minimiser of (10) is type-II with c = τ*/√(KL).

    Attributes
    ----------
    n_c, L, K, d, lam, n_w
        The setting (as given, broadcast): concepts, sentence length, classes, embedding dimension, λ, and
        the vocabulary size (None when not given).
    tau_star
        τ* = argmin H*.
    c
        ‖u_{k,ℓ}‖ = τ*/√(KL).
    eta_star
        η* of Theorem 3.
    risk
        R* at the optimum = H*(τ*) (Lemma R).
    ce
        H*(τ*) − λτ*²/2.
    H0
        H*(0).
    norm_U
        ‖U‖_F = τ*.
    phi_norm
        ‖φ(w)‖ = √d for every word.
    pca_sigma_U
        τ*/√(n_c−1) (n_c − 1 copies).
    pca_sigma_phiW
        √(n_w d/(n_c−1)) (needs n_w; None when n_w is not given, like ``n_w``).
    margin_per_position
        c√d·κ = η*τ*.
    """

    n_c: object
    L: object
    K: object
    d: object
    lam: object
    n_w: object
    tau_star: object
    c: object
    eta_star: object
    risk: object
    ce: object
    H0: object
    norm_U: object
    phi_norm: object
    pca_sigma_U: object
    pca_sigma_phiW: object
    margin_per_position: object


@result_type
@dataclass(frozen=True)
class TypeIIIPrediction(_Pred):
    """Theorem 2: the type-III critical point of (5) (K = n_c^L), constants from (7)–(8).

    Attributes
    ----------
    mu, n_c, L, K, lam
        The setting: word frequencies μ_β, concepts, sentence length, classes (K = n_c^L), λ.
    c
        ‖u_{k,ℓ}‖.
    r
        ‖w_(α,β)‖ = r_β per word rank β (order of ``mu``).
    lam_max
        Bound of (9).
    residual_7, residual_8
        Relative residuals of (7), (8).
    ce
        Unregularised risk L Σ_β μ_β log(1 + (n_c−1)e^{−κ c r_β}) (the softmax factorises over positions
        when K = n_c^L, Proposition C).
    risk
        ce + (λ/2)(n_c Σ r_β² + KLc²).
    H0
        log K (risk at the origin).
    norm_W
        √(n_c Σ r²).
    norm_U
        c√(KL) (= norm_W by (8)).
    pca_sigma_W
        √(n_c Σ r²/(n_c−1)).
    pca_sigma_U
        c√(KL/(n_c−1)).
    margins_per_position
        κ c r_β, the margin contributed by a position holding word rank β.
    """

    mu: object
    n_c: object
    L: object
    K: object
    lam: object
    c: object
    r: object
    lam_max: object
    residual_7: object
    residual_8: object
    ce: object
    risk: object
    H0: object
    norm_W: object
    norm_U: object
    pca_sigma_W: object
    pca_sigma_U: object
    margins_per_position: object


@public(n_c=N_C, n_w=N_W, L=LEN, K=KK, lam=LAM, legacy_positional=("n_c", "n_w", "L", "K", "lam"))
def predict_type1(*, n_c, n_w, L, K, lam) -> TypeIPrediction:
    """Predictions of Theorem 1 (uniform word frequencies, network h, risk (5)).

    All arguments broadcast (see :func:`fctheory.tau`); every field is finite for valid input
    (λ down to 5e-324, K up to 1e300, L up to 10**4).

    Examples
    --------
    >>> p = predict_type1(n_c=3, n_w=1200, L=15, K=1000, lam=1e-3)
    >>> round(p.c, 5), round(p.pca_sigma, 3)
    (1.42214, 34.835)
    """
    lam_a = float_array("lam", lam, lo=0, lo_open=True)
    n_c_a, n_w_a, L_a, K_a = _params1(n_c, n_w, L, K)
    t = np.asarray(tau(n_c=n_c_a, n_w=n_w_a, L=L_a, K=K_a, lam=lam_a))
    log_eta = _log_eta(n_c_a, n_w_a, L_a, K_a)
    eta = np.exp(log_eta)
    risk = np.asarray(_H(t, n_c=n_c_a, n_w=n_w_a, L=L_a, K=K_a, lam=lam_a))
    H0 = np.asarray(LatentSum(n_c_a, L_a, K_a).log_Kom)
    # ratios in logs: K·L and n_w may be near 1e300 (their product overflows)
    log_t = np.log(np.where(t > 0, t, 1.0))

    def root(log_den):  # √(τ/den), 0 where τ = 0
        return np.where(t > 0, np.exp(0.5 * (log_t - log_den)), 0.0)

    return TypeIPrediction(
        n_c=_s(n_c_a),
        n_w=_s(n_w_a),
        L=_s(L_a),
        K=_s(K_a),
        lam=_s(lam_a),
        tau=_s(t),
        c=_s(root(np.log(n_w_a))),
        c_prime=_s(root(np.log(K_a) + np.log(L_a))),
        eta=_s(eta),
        lambda_trivial=_s(lambda_trivial(n_c=n_c_a, n_w=n_w_a, L=L_a, K=K_a)),
        trivial=(t == 0).item() if t.ndim == 0 else (t == 0),
        risk=_s(risk),
        ce=_s(risk - lam_a * t),
        H0=_s(H0),
        norm_W=_s(np.sqrt(t)),
        norm_U=_s(np.sqrt(t)),
        pca_sigma=_s(np.sqrt(t / (n_c_a - 1))),
        margin_per_position=_s(np.where(t > 0, np.exp(log_eta + log_t), 0.0)),
    )


@public(
    n_c=N_C, L=LEN, K=KK, d=D_EMB, lam=LAM, n_w=N_W.or_none(), legacy_positional=("n_c", "L", "K", "d", "lam", "n_w")
)
def predict_type2(*, n_c, L, K, d, lam, n_w=None) -> TypeIIPrediction:
    """Predictions of Theorem 3 (network h* with LayerNorm, risk (10), any μ > 0).

    The type-II configuration needs a mean-zero equiangular frame, hence d ≥ n_c (as
    :func:`fctheory.type2_configuration`); smaller d is refused. Without ``n_w`` the fields
    ``n_w`` and ``pca_sigma_phiW`` are None.

    Examples
    --------
    >>> p = predict_type2(n_c=3, L=15, K=1000, d=100, lam=1e-3, n_w=1200)
    >>> round(p.tau_star, 5), round(p.c, 5)
    (11.94703, 0.09755)
    """
    lam_a = float_array("lam", lam, lo=0, lo_open=True)
    n_c_a, L_a, K_a, d_a = _params3(n_c, L, K, d)
    bad = np.broadcast_to(d_a < n_c_a, np.broadcast(d_a, n_c_a).shape)
    if bad.any():
        i = tuple(np.argwhere(bad)[0])
        n_c_i = np.broadcast_to(n_c_a, bad.shape)[i]
        fail(
            "d",
            np.broadcast_to(d_a, bad.shape)[i],
            f"the type-II configuration needs a mean-zero equiangular frame, so d >= n_c = {n_c_i:g}",
        )
    n_w_a = None if n_w is None else _params1(n_c_a, n_w, L_a, K_a)[1]
    ts = np.asarray(tau_star(n_c=n_c_a, L=L_a, K=K_a, d=d_a, lam=lam_a))
    log_eta = _log_eta_star(n_c_a, L_a, K_a, d_a)
    risk = np.asarray(_H_star(ts, n_c=n_c_a, L=L_a, K=K_a, d=d_a, lam=lam_a))
    phi_w = None if n_w_a is None else _s(np.exp(0.5 * (np.log(n_w_a) + np.log(d_a) - np.log(n_c_a - 1))) + 0 * ts)
    with np.errstate(divide="ignore"):  # tau* = 0 past the threshold: log 0 = -inf gives c = 0 and margin 0
        log_ts = np.log(ts)
    return TypeIIPrediction(
        n_c=_s(n_c_a),
        L=_s(L_a),
        K=_s(K_a),
        d=_s(d_a),
        lam=_s(lam_a),
        n_w=None if n_w_a is None else _s(n_w_a),
        tau_star=_s(ts),
        c=_s(np.exp(log_ts - 0.5 * (np.log(K_a) + np.log(L_a)))),
        eta_star=_s(np.exp(log_eta)),
        risk=_s(risk),
        ce=_s(risk - 0.5 * lam_a * ts * ts),
        H0=_s(LatentSum(n_c_a, L_a, K_a).log_Kom),
        norm_U=_s(ts),
        phi_norm=_s(np.sqrt(d_a) + 0 * ts),
        pca_sigma_U=_s(ts / np.sqrt(n_c_a - 1)),
        pca_sigma_phiW=phi_w,
        margin_per_position=_s(np.exp(log_eta + log_ts)),
    )


@public(mu=MU, n_c=N_C, L=LEN, lam=LAM, s_c=S_C, legacy_positional=("mu", "n_c", "L", "lam"))
def predict_type3(*, mu, n_c, L, lam, s_c=None) -> TypeIIIPrediction:
    """Predictions of Theorem 2 (network h, K = n_c^L, non-uniform μ allowed).

    Raises the project error when λ violates (9) (see :func:`solve_type3`). Norms are formed in
    logs, so they stay finite when n_c^L overflows; the field ``K`` = n_c^L itself is inf where it
    exceeds the float64 range (n_c^L > 1.8e308, e.g. n_c = 3, L ≥ 647, reachable only for λ below
    λ_max ≈ 1e-300). ``mu`` may be "uniform"/"zipf" together with ``s_c`` (as :func:`solve_type3`).
    """
    sol = solve_type3(mu=mu, n_c=n_c, L=L, lam=lam, s_c=s_c)
    n_c_a = np.asarray(sol.n_c, dtype=float)
    L_a = np.asarray(sol.L, dtype=float)
    lam_a = np.asarray(sol.lam, dtype=float)
    c = np.asarray(sol.c, dtype=float)
    r = np.asarray(sol.r, dtype=float)
    mu = np.asarray(sol.mu, dtype=float)
    log_nc = np.log(n_c_a)
    log_kappa = log_nc - np.log(n_c_a - 1)
    logK = L_a * log_nc
    with np.errstate(over="ignore"):
        # exact n_c**L where it is an exact float (< 2**53), exp(log) beyond; inf past the float range (documented)
        K = np.where(
            logK < 53 * np.log(2.0), np.power(n_c_a, np.where(logK < 53 * np.log(2.0), L_a, 0.0)), np.exp(logK)
        )
    log_c = np.log(c)
    log_r = np.log(r)
    x = np.exp(log_kappa[..., None] + log_c[..., None] + log_r)
    ce = L_a * np.sum(mu * np.log1p((n_c_a[..., None] - 1) * np.exp(-x)), axis=-1)
    # log Σ r² (r² alone overflows for L ≳ 1290); by (8), n_c Σ r² = K L c², so ‖W‖ = ‖U‖
    m = log_r.max(axis=-1)
    log_sum_r2 = 2 * m + np.log(np.sum(np.exp(2 * (log_r - m[..., None])), axis=-1))
    log_norm_W2 = log_nc + log_sum_r2
    log_norm_U2 = 2 * log_c + logK + np.log(L_a)
    reg = 0.5 * (np.exp(np.log(lam_a) + log_norm_W2) + np.exp(np.log(lam_a) + log_norm_U2))
    log_nc1 = np.log(n_c_a - 1)
    return TypeIIIPrediction(
        mu=mu,
        n_c=_s(n_c_a),
        L=_s(L_a),
        K=_s(K),
        lam=_s(lam_a),
        c=_s(c),
        r=r,
        lam_max=_s(sol.lam_max),
        residual_7=_s(sol.residual_7),
        residual_8=_s(sol.residual_8),
        ce=_s(ce),
        risk=_s(ce + reg),
        H0=_s(L_a * log_nc),
        norm_W=_s(np.exp(0.5 * log_norm_W2)),
        norm_U=_s(np.exp(0.5 * log_norm_U2)),
        pca_sigma_W=_s(np.exp(0.5 * (log_norm_W2 - log_nc1))),
        pca_sigma_U=_s(np.exp(0.5 * (log_norm_U2 - log_nc1))),
        margins_per_position=x,
    )


# ============================================================================= partial tasks (K < n_c^L)
#: provenance of a partial task's prediction: the certified optimum (fctheory.risk.predict_exact)
EXACT = "exact (certified optimum)"
#: provenance: t* of fctheory.lemma_b_scale (uniform μ, a latent set satisfying Lemma B)
LEMMA_B = "closed form under Lemma B"
#: provenance: Theorem 1's formulas at this K (its counts (39) assume Assumption A, which no partial set meets)
APPROXIMATION = "approximation (Theorem 1's K-only tau), error unknown"


@result_type
@dataclass(frozen=True)
class PartialPrediction(_Pred):
    """What the library predicts for network h on a partial task (K < n_c^L), and where the numbers come from.

    Attributes
    ----------
    provenance : str
        :data:`EXACT` (the certified global minimiser of (5): for uniform μ
        :func:`fctheory.collapsed_optimum`, any K; for any μ :func:`fctheory.risk.optimum` through
        :func:`fctheory.risk.predict_exact`), :data:`LEMMA_B` (the closed form t* of
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
        (EXACT, uniform μ), None (EXACT, non-uniform μ).
    trivial
        The predicted point is (W, U) = (0, 0).
    gap
        The certified gap R − (lower bound on min R) for EXACT, else None.
    theorem1_c
        Theorem 1's word norm √(τ/n_w) at this K (the large-K idealisation), for comparison; None for
        non-uniform μ.
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


def _lemma_b_holds(task) -> bool:
    """Lemma B's properties, checked exactly for uniform μ and K ≤ 400 (cost K²); (ii) needs n_c | K."""
    if not task.is_uniform or task.K > _ASSUMPTION_K_MAX or task.K % task.n_c:
        return False
    try:
        return bool(lemma_B_properties(task).holds)
    except FCTheoryError:  # refused by the work budget: no closed form claimed
        return False


def partial_prediction(task, lam, p1, a=1.0) -> PartialPrediction:
    """:func:`_partial_parts`' prediction."""
    return _partial_parts(task, lam, p1, a)[1]


def _partial_parts(task, lam, p1, a=1.0):
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
class PartialStarPrediction(_Pred):
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


def _star_partial(task, d, lam_U, pred, notes, p):
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
        pca_W=_pca_sigmas(words, task.n_c - 1, 1.0), pca_U=_pca_sigmas(opt.U.reshape(-1, opt.phi.shape[1]).T,
                                                                        task.n_c - 1, 1.0),
    )  # fmt: skip
    pp = PartialStarPrediction(
        provenance=COLLAPSED_STAR, n_c=task.n_c, L=task.L, K=task.K, d=int(d), lam=float(lam_U), tau=opt.tau,
        u_norms=opt.u_norms, c=opt.c, phi_norm=math.sqrt(d), cosines=opt.cosines, risk=opt.R, ce=opt.ce,
        gap=opt.gap, theorem3_c=float(p.c),
    )  # fmt: skip
    return pp, COLLAPSED_STAR


# ============================================================================= the one dispatcher
THEOREM_CONFIGURATION = {"Theorem 1": "I", "Theorem 2": "III", "Theorem 3": "II"}
_STATEMENT = {
    "Theorem 1": "type-I collapse with c = √(τ/n_w), c′ = √(τ/(KL)) is a global minimiser of (5)",
    "Theorem 2": "type-III collapse with (c, r_β) solving (7)-(8) is a critical point of (5)",
    "Theorem 3": "type-II collapse with c = τ*/√(KL) is a global minimiser of (10)",
}
_ASSUMPTION_K_MAX = 400  # exact Assumption A/B checks for K < n_c^L only up to this K (they grow like K²)


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
        "reason": f"not computed (K > {_ASSUMPTION_K_MAX}; call fctheory.check_assumption_B)",
        "dim": None,
    }
    if task.K <= _ASSUMPTION_K_MAX:
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


def _pca_sigmas(A, n, a):
    """The n largest singular values of A's columns centred on their mean, × a (the PCA σ of docs/reproduction.md)."""
    C = A - A.mean(axis=1, keepdims=True)
    s = np.linalg.svd(C, compute_uv=False)
    return [float(a * v) for v in np.concatenate([s, np.zeros(n)])[:n]]


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
    opt, pp = _partial_parts(task, lam, p, a)
    if opt is not None:
        notes.append(
            "uniform word frequencies: the certified global minimiser of (5) in the collapsed coordinates "
            f"(fctheory.collapsed_optimum, gap {opt.gap:.1e}) replaces Theorem 1's K-only τ"
        )
        off = ~np.eye(task.n_c, dtype=bool)
        pred.update(
            R=opt.R, R0=opt.ce, tau=opt.tau, w_norm=pp.c, w_norm_by_rank=[pp.c] * task.s_c,
            u_norm=float(np.mean(opt.u_norms)) / a, lambda_bound=opt.lambda0,
            pca_W=_pca_sigmas(opt.W, task.n_c - 1, a), pca_U=_pca_sigmas(U_hat(opt.U, L=task.L), task.n_c - 1, 1 / a),
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
    if not task.is_full:  # Theorem 2 needs the full latent set; nothing else covers h with non-uniform μ
        reasons = [
            f"K = {task.K} < n_c^L = {task.n_latent}: Theorem 2 (non-uniform μ) needs all n_c^L latent "
            "variables; no theorem covers h with non-uniform word frequencies and K < n_c^L "
            "(minimize_true_risk gives the exact optimum of small tasks)"
        ]
        return _none(reasons, notes, A, B, lam, a)
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
        pp, prov = _star_partial(task, d, lam_U, pred, notes, p)
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
    * network "h", non-uniform μ, K < n_c^L: no theorem; :func:`fctheory.risk.predict_exact` gives the
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
        "no theorem covers network h with non-uniform word frequencies and K < n_c**L "
        "(Theorem 2 needs the full latent set); use fctheory.risk.predict_exact for the certified optimum",
    )
