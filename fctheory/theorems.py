"""Prediction objects of Theorems 1–3: everything each theorem says a trained network should look like.

Each ``predict_type*`` returns a frozen dataclass whose fields broadcast like the inputs, with
``to_dict()`` for JSON. Norms are Frobenius norms; PCA singular values are those of the centred
data matrix (what ``sklearn.decomposition.PCA.singular_values_`` reports) at exact collapse,
assuming each concept occurs equally often among the u_{k,ℓ} (true under Assumption 1).
Which theorem speaks about a setting is decided in :mod:`fctheory.predictions`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from ._budget import check_work
from ._latent import LatentSum
from ._validate import fail, float_array, public, result_type
from .tau import H as _H
from .tau import KK, LAM, LEN, N_C, N_W
from .tau import _log_eta, _params as _params1, lambda_trivial, tau
from .tau_star import D_EMB
from .tau_star import H_star as _H_star
from .tau_star import _log_eta_star, _params as _params3, tau_star
from .type3 import MU, S_C, solve_type3

__all__ = [
    "TypeIPrediction",
    "TypeIIPrediction",
    "TypeIIIPrediction",
    "predict_type1",
    "predict_type2",
    "predict_type3",
    "PredictionBase",
]


def _s(x):
    x = np.asarray(x, dtype=np.float64)
    return float(x) if x.ndim == 0 else x


class PredictionBase:
    """Base of the prediction objects: their ``to_dict``."""

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
class TypeIPrediction(PredictionBase):
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
class TypeIIPrediction(PredictionBase):
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
class TypeIIIPrediction(PredictionBase):
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
