"""Prediction objects: everything Theorems 1–3 say a trained network should look like.

Each ``predict_type*`` returns a frozen dataclass whose fields broadcast like the inputs, with
``to_dict()`` for JSON. Norms are Frobenius norms; PCA singular values are those of the centred
data matrix (what ``sklearn.decomposition.PCA.singular_values_`` reports) at exact collapse,
assuming each concept occurs equally often among the u_{k,ℓ} (true under Assumption 1).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields

import numpy as np

from ._latent import LatentSum
from ._validate import check_choice, fail, float_array
from .task import Task
from .tau import H as _H
from .tau import _log_eta, _params as _params1, lambda_trivial, tau
from .tau_star import H_star as _H_star
from .tau_star import _log_eta_star, _params as _params3, tau_star
from .type3 import solve_type3

__all__ = [
    "TypeIPrediction",
    "TypeIIPrediction",
    "TypeIIIPrediction",
    "predict_type1",
    "predict_type2",
    "predict_type3",
    "predict",
]


def _s(x):
    x = np.asarray(x, dtype=np.float64)
    return float(x) if x.ndim == 0 else x


class _Pred:
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


@dataclass(frozen=True)
class TypeIPrediction(_Pred):
    """Theorem 1: the global minimiser of (5) is type-I with c = √(τ/n_w), c′ = √(τ/(KL)).

    Attributes
    ----------
    tau : τ = argmin H.            c : word-embedding norm ‖w_(α,β)‖ = √(τ/n_w).
    c_prime : ‖u_{k,ℓ}‖ = √(τ/(KL)).   eta : η of Theorem 1.
    lambda_trivial : λ₀; τ = 0 iff λ ≥ λ₀.   trivial : whether τ = 0.
    risk : R at the optimum = H(τ) (Lemma K).   ce : unregularised cross-entropy H(τ) − λτ.
    H0 : H(0) = log(K + 1 − K/n_c^L), the risk at (W, U) = (0, 0) (≈ log K).
    norm_W, norm_U : ‖W‖_F = ‖U‖_F = √τ.
    pca_sigma : the n_c − 1 equal nonzero PCA singular values of W and of {u_{k,ℓ}}: √(τ/(n_c−1)).
    margin_per_position : score margin h_k(x) − h_j(x) per position where z_k and z_j differ: ητ.
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

    def pca_W(self):
        """Full vector of PCA singular values of W (scalar inputs only): n_c − 1 copies."""
        return np.full(int(self.n_c) - 1, self.pca_sigma)

    pca_U = pca_W


@dataclass(frozen=True)
class TypeIIPrediction(_Pred):
    """Theorem 3: the global minimiser of (10) is type-II with c = τ*/√(KL).

    Attributes
    ----------
    tau_star : τ* = argmin H*.   c : ‖u_{k,ℓ}‖ = τ*/√(KL).   eta_star : η* of Theorem 3.
    risk : R* at the optimum = H*(τ*) (Lemma R).   ce : H*(τ*) − λτ*²/2.   H0 : H*(0).
    norm_U : ‖U‖_F = τ*.   phi_norm : ‖φ(w)‖ = √d for every word.
    pca_sigma_U : τ*/√(n_c−1) (n_c − 1 copies).
    pca_sigma_phiW : √(n_w d/(n_c−1)) (needs n_w; NaN when not given).
    margin_per_position : c√d·κ = η*τ*.
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


@dataclass(frozen=True)
class TypeIIIPrediction(_Pred):
    """Theorem 2: the type-III critical point of (5) (K = n_c^L), constants from (7)–(8).

    Attributes
    ----------
    c : ‖u_{k,ℓ}‖.   r : ‖w_(α,β)‖ = r_β per word rank β (order of ``mu``).
    lam_max : bound of (9).   residual_7, residual_8 : relative residuals of (7), (8).
    ce : unregularised risk L Σ_β μ_β log(1 + (n_c−1)e^{−κ c r_β}) (the softmax factorises over
    positions when K = n_c^L, Proposition C).   risk : ce + (λ/2)(n_c Σ r_β² + KLc²).
    H0 : log K (risk at the origin).   norm_W : √(n_c Σ r²).   norm_U : c√(KL) (= norm_W by (8)).
    pca_sigma_W : √(n_c Σ r²/(n_c−1)).   pca_sigma_U : c√(KL/(n_c−1)).
    margins_per_position : κ c r_β, the margin contributed by a position holding word rank β.
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


def predict_type1(n_c, n_w, L, K, lam) -> TypeIPrediction:
    """Predictions of Theorem 1 (uniform word frequencies, network h, risk (5)).

    All arguments broadcast (see :func:`fctheory.tau`).

    Examples
    --------
    >>> p = predict_type1(3, 1200, 15, 1000, 1e-3)
    >>> round(p.c, 5), round(p.pca_sigma, 3)
    (1.42214, 34.835)
    """
    lam_a = float_array("lam", lam, lo=0, lo_open=True)
    n_c_a, n_w_a, L_a, K_a = _params1(n_c, n_w, L, K)
    t = np.asarray(tau(n_c_a, n_w_a, L_a, K_a, lam_a))
    eta = np.exp(_log_eta(n_c_a, n_w_a, L_a, K_a))
    risk = np.asarray(_H(t, n_c_a, n_w_a, L_a, K_a, lam_a))
    H0 = np.asarray(LatentSum(n_c_a, L_a, K_a).log_Kom)
    return TypeIPrediction(
        n_c=_s(n_c_a), n_w=_s(n_w_a), L=_s(L_a), K=_s(K_a), lam=_s(lam_a),
        tau=_s(t),
        c=_s(np.sqrt(t / n_w_a)),
        c_prime=_s(np.sqrt(t / (K_a * L_a))),
        eta=_s(eta),
        lambda_trivial=_s(lambda_trivial(n_c_a, n_w_a, L_a, K_a)),
        trivial=(t == 0).item() if t.ndim == 0 else (t == 0),
        risk=_s(risk),
        ce=_s(risk - lam_a * t),
        H0=_s(H0),
        norm_W=_s(np.sqrt(t)),
        norm_U=_s(np.sqrt(t)),
        pca_sigma=_s(np.sqrt(t / (n_c_a - 1))),
        margin_per_position=_s(eta * t),
    )


def predict_type2(n_c, L, K, d, lam, n_w=None) -> TypeIIPrediction:
    """Predictions of Theorem 3 (network h* with LayerNorm, risk (10), any μ > 0).

    Examples
    --------
    >>> p = predict_type2(3, 15, 1000, 100, 1e-3, n_w=1200)
    >>> round(p.tau_star, 5), round(p.c, 5)
    (11.94703, 0.09755)
    """
    lam_a = float_array("lam", lam, lo=0, lo_open=True)
    n_c_a, L_a, K_a, d_a = _params3(n_c, L, K, d)
    if n_w is None:
        n_w_a = np.nan
    else:
        n_w_a = _params1(n_c_a, n_w, L_a, K_a)[1]
    ts = np.asarray(tau_star(n_c_a, L_a, K_a, d_a, lam_a))
    eta = np.exp(_log_eta_star(n_c_a, L_a, K_a, d_a))
    risk = np.asarray(_H_star(ts, n_c_a, L_a, K_a, d_a, lam_a))
    return TypeIIPrediction(
        n_c=_s(n_c_a), L=_s(L_a), K=_s(K_a), d=_s(d_a), lam=_s(lam_a), n_w=_s(n_w_a),
        tau_star=_s(ts),
        c=_s(ts / np.sqrt(K_a * L_a)),
        eta_star=_s(eta),
        risk=_s(risk),
        ce=_s(risk - 0.5 * lam_a * ts * ts),
        H0=_s(LatentSum(n_c_a, L_a, K_a).log_Kom),
        norm_U=_s(ts),
        phi_norm=_s(np.sqrt(d_a) + 0 * ts),
        pca_sigma_U=_s(ts / np.sqrt(n_c_a - 1)),
        pca_sigma_phiW=_s(np.sqrt(n_w_a * d_a / (n_c_a - 1)) + 0 * ts),
        margin_per_position=_s(eta * ts),
    )


def predict_type3(mu, n_c, L, lam) -> TypeIIIPrediction:
    """Predictions of Theorem 2 (network h, K = n_c^L, non-uniform μ allowed).

    Raises the project error when λ violates (9) (see :func:`solve_type3`).
    """
    sol = solve_type3(mu, n_c, L, lam)
    n_c_a = np.asarray(sol.n_c, dtype=float)
    L_a = np.asarray(sol.L, dtype=float)
    lam_a = np.asarray(sol.lam, dtype=float)
    c = np.asarray(sol.c, dtype=float)
    r = np.asarray(sol.r, dtype=float)
    mu = np.asarray(sol.mu, dtype=float)
    kappa = n_c_a / (n_c_a - 1)
    K = np.power(n_c_a, L_a)
    x = kappa[..., None] * c[..., None] * r
    ce = L_a * np.sum(mu * np.log1p((n_c_a[..., None] - 1) * np.exp(-x)), axis=-1)
    sum_r2 = np.sum(r * r, axis=-1)
    reg = 0.5 * lam_a * (n_c_a * sum_r2 + K * L_a * c * c)
    return TypeIIIPrediction(
        mu=mu, n_c=_s(n_c_a), L=_s(L_a), K=_s(K), lam=_s(lam_a),
        c=_s(c), r=r, lam_max=_s(sol.lam_max), residual_7=_s(sol.residual_7), residual_8=_s(sol.residual_8),
        ce=_s(ce),
        risk=_s(ce + reg),
        H0=_s(L_a * np.log(n_c_a)),
        norm_W=_s(np.sqrt(n_c_a * sum_r2)),
        norm_U=_s(c * np.sqrt(K * L_a)),
        pca_sigma_W=_s(np.sqrt(n_c_a * sum_r2 / (n_c_a - 1))),
        pca_sigma_U=_s(c * np.sqrt(K * L_a / (n_c_a - 1))),
        margins_per_position=x,
    )


def predict(task, lam, network: str = "h", d=None):
    """The applicable theorem's prediction for ``task``.

    * network "h*" (LayerNorm): Theorem 3 (needs ``d``);
    * network "h", uniform μ: Theorem 1;
    * network "h", non-uniform μ, K = n_c^L: Theorem 2 (type III).

    Raises the project error when no theorem covers the case (h, non-uniform μ, K < n_c^L).
    """
    if not isinstance(task, Task):
        fail("task", task, "must be a fctheory.Task")
    check_choice("network", network, ("h", "h*"))
    if network == "h*":
        if d is None:
            fail("d", d, "Theorem 3's prediction depends on the embedding dimension d")
        return predict_type2(task.n_c, task.L, task.K, d, lam, n_w=task.n_w)
    if task.is_uniform:
        return predict_type1(task.n_c, task.n_w, task.L, task.K, lam)
    if task.is_full:
        return predict_type3(task.mu, task.n_c, task.L, lam)
    fail(
        "task",
        task,
        "no theorem covers network h with non-uniform word frequencies and K < n_c**L "
        "(Theorem 2 needs the full latent set); use minimize_true_risk for an exact optimum",
    )
