"""Unbiased Monte-Carlo estimate of the true risk (5)/(10) and of its gradient norm.

For tasks whose exact enumeration (K·s_c^L sentences) is beyond the budget. Every class is
sampled: n sentences x ∼ D_{z_k} for each k, so

    R̂₀ = (1/K) Σ_k (1/n) Σ_i CE(h(x_{k,i}), k)

is unbiased for R₀ (45), with variance (1/K²) Σ_k σ_k²/n estimated from the per-class sample
variances; the interval R̂₀ ± z_{(1+level)/2}·SE is the normal (CLT) interval at the stated level
(clipped at 0, since R₀ ≥ 0). The penalty is exact. For the gradient the samples of each class are
split into two halves giving independent unbiased estimates ĝ¹, ĝ² of ∇R; ⟨ĝ¹, ĝ²⟩ is then an
unbiased estimate of ‖∇R‖² (it can be negative when the gradient is small next to the noise).

Scores use G = ÛᵀV (V = W, or φ(W) for h*) stored as (L, n_w, K), so a sentence costs L·K
additions instead of an L·d·K product; the gradient with respect to G is scattered with sparse
one-hot products and pulled back as in Lemma S (∂V = Û ∂G, ∂Û = V ∂Gᵀ, through φ for h*).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
from scipy.sparse import csr_matrix

from .._budget import check_work
from .._numerics import safe_norm
from .._validate import Array, Bool, Instance, Int, Real, Seed, fail, public, result_type
from ..network import U_from_hat, U_hat, check_weights, phi, phi_jacobian_vjp
from ..task import Task

__all__ = ["MonteCarloRisk", "monte_carlo_risk", "check_magnitude", "penalty_terms", "safe_norm"]

_SECONDS_PER_ENTRY = 4e-9  # calibrated on this project's CI machine: score gather + softmax per (sentence, class)


@result_type
@dataclass(frozen=True)
class MonteCarloRisk:
    """Monte-Carlo estimate of the true risk (see the module docstring).

    Attributes
    ----------
    R, R0 : float
        Estimates of R (5)/(10) and of its unregularised part R₀ (45); unbiased.
    penalty : float
        (λ_W/2)‖W‖² + (λ_U/2)‖U‖² (exact).
    stderr : float
        Estimated standard error of R̂₀ (and of R̂).
    ci : (float, float)
        Normal interval for R at level ``confidence``.
    confidence : float
    n_samples : int
        Sentences per class (K·n_samples in all).
    grad_norm : float or None
        √max(0, ⟨ĝ¹, ĝ²⟩), an estimate of ‖∇R‖_F (None without ``grad``).
    grad_norm_sq : float or None
        ⟨ĝ¹, ĝ²⟩, unbiased for ‖∇R‖_F².
    grad_R0_norm_sq : float or None
        The same for ‖∇R₀‖_F².
    grad_W, grad_U : ndarray or None
        (ĝ¹ + ĝ²)/2, the unbiased gradient estimate (∂R/∂W d×n_w, ∂R/∂U K×L·d).
    seed : int or None
    seconds : float
    """

    R: float
    R0: float
    penalty: float
    stderr: float
    ci: tuple
    confidence: float
    n_samples: int
    grad_norm: float | None
    grad_norm_sq: float | None
    grad_R0_norm_sq: float | None
    grad_W: np.ndarray | None
    grad_U: np.ndarray | None
    seed: object
    seconds: float


def check_magnitude(W, U, layernorm, lam_W=0.0) -> None:
    """Refuse weights whose Frobenius norm exceeds 1e150 (W only for h): the scores, the penalty and the
    gradient would overflow float64 (‖W‖‖U‖ bounds every score)."""
    for name, A in (("W", W), ("U", U)):
        if name == "W" and layernorm and lam_W == 0:
            continue  # φ(W) has norm √d per column whatever W's scale, and W is not penalised
        norm = safe_norm(A)  # exactly rescaled: no overflow in the squares
        if norm > 1e150:
            fail(name, A, f"has Frobenius norm {norm:.3g} > 1e150: the risk, its penalty and gradient overflow float64")


def penalty_terms(W, U, lam_W, lam_U):
    """(penalty, λ_W·W, λ_U·U, ‖(λ_W W, λ_U U)‖), refusing a λ whose term overflows float64 (naming it)."""
    with np.errstate(over="ignore"):
        pW, pU = lam_W * W, lam_U * U
        terms = []
        for name, lam, A, P in (("lam_W", lam_W, W, pW), ("lam_U", lam_U, U, pU)):
            # λ = 0: no term whatever ‖A‖ (h* without decay on W takes any scale of W); squared as a NumPy
            # float, which overflows to inf (refused below) where a Python float raises OverflowError
            term = 0.5 * lam * np.float64(safe_norm(A)) ** 2 if lam else 0.0
            if not (np.isfinite(term) and np.all(np.isfinite(P))):
                fail(
                    name, lam, "the weight-decay penalty (λ/2)‖·‖² or its gradient overflows float64 for these weights"
                )
            terms.append(term)
        penalty = float(terms[0] + terms[1])
        if not np.isfinite(penalty):
            fail("lam_W", lam_W, "the weight-decay penalty overflows float64 for these weights")
    return penalty, pW, pU, safe_norm(pW, pU)


def _ce_rows(S, y):
    """Cross-entropies of score rows S (B×K) with targets y, accurate also when tiny.

    CE = log(1 + Σ_{j≠y} e^{S_j − S_y}) = logaddexp(0, LSE_{j≠y}(S_j − S_y)); the target term is
    excluded rather than subtracted, so a CE of 1e-12 keeps all its digits.
    """
    B, K = S.shape
    rows = np.arange(B)
    T = S - S[rows, y][:, None]
    T[rows, y] = -np.inf
    m = T.max(axis=1)
    with np.errstate(under="ignore"):
        lse = m + np.log(np.exp(T - m[:, None]).sum(axis=1))
    ce = np.logaddexp(0.0, lse)
    # softmax p_j = e^{S_j} / Σ e^{S} for the gradient
    with np.errstate(under="ignore"):
        P = np.exp(S - S.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    return ce, P


def _sample(task, Gt, rng, n, grad):
    """Per-class sampled cross-entropies (K × n) and, with ``grad``, ∂CE/∂G summed over each half of the samples."""
    K, L, n_w, s_c = task.K, task.L, task.n_w, task.s_c
    ce_all = np.empty((K, n))
    half = n // 2
    acc = [np.zeros((L, n_w, K)), np.zeros((L, n_w, K))] if grad else None
    # classes in blocks of about 4096 sentences: bounded memory, BLAS-free inner loop
    kb = max(1, 4096 // n)
    for k0 in range(0, K, kb):
        ks = np.arange(k0, min(K, k0 + kb))
        beta = rng.choice(s_c, size=(ks.size, n, L), p=task.mu)
        X = (task.Z[ks][:, None, :] * s_c + beta).reshape(-1, L)
        y = np.repeat(ks, n)
        S = Gt[0, X[:, 0], :].copy()
        for ell in range(1, L):
            S += Gt[ell, X[:, ell], :]
        ce, P = _ce_rows(S, y)
        ce_all[ks] = ce.reshape(ks.size, n)
        if grad:
            P[np.arange(y.size), y] -= 1.0  # ∂CE/∂scores = p − e_y
            first = np.tile(np.arange(n) < half, ks.size)
            for h, sel in enumerate((first, ~first)):
                Ph, Xh = P[sel], X[sel]
                m = Ph.shape[0]
                for ell in range(L):
                    oh = csr_matrix((np.ones(m), (Xh[:, ell], np.arange(m))), shape=(n_w, m))
                    acc[h][ell] += oh @ Ph
    return ce_all, acc


def _grad_R0(task, W, V, Uh, acc, cnt, layernorm, eps):
    """(∂R₀/∂W, ∂R₀/∂U) estimated from one half: (1/K) Σ_k (1/cnt) Σ_i, pulled back as in Lemma S."""
    K, L, n_w = task.K, task.L, task.n_w
    dG = (acc / (K * cnt)).transpose(2, 0, 1).reshape(K * L, n_w)  # laid out as Ĝ (KL × n_w)
    dV = Uh @ dG
    dW0 = phi_jacobian_vjp(W, dV, eps) if layernorm else dV
    return dW0, U_from_hat(V @ dG.T, L=L)


def _grad_estimates(a, b, pW, pU, lam_W, lam_U):
    """(⟨a, b⟩, ⟨a + p, b + p⟩, ∇R_W, ∇R_U) from two independent half-sample gradients a, b of R₀ and the penalty p."""
    (a_W, a_U), (b_W, b_U) = a, b
    g0n2 = float(np.sum(a_W * b_W) + np.sum(a_U * b_U))
    # ⟨a + p, b + p⟩ scaled by the largest entry, so the products cannot overflow
    sc = max(safe_norm(a_W, a_U, b_W, b_U, pW, pU), 1e-300)
    dot = np.sum(((a_W + pW) / sc) * ((b_W + pW) / sc)) + np.sum(((a_U + pU) / sc) * ((b_U + pU) / sc))
    gn2 = sc * sc * float(dot)
    if not np.isfinite(gn2):
        fail("lam_W" if lam_W >= lam_U else "lam_U", max(lam_W, lam_U), "the squared gradient norm overflows float64")
    return g0n2, gn2, (a_W + b_W) / 2 + pW, (a_U + b_U) / 2 + pU


@public(
    task=Instance(Task),
    W=Array(ndim=2),
    U=Array(ndim=2),
    lam_W=Real(lo=0),
    lam_U=Real(lo=0),
    layernorm=Bool(),
    eps=Real(lo=0),
    n_samples=Int(min=2, max=10**9),
    seed=Seed(),
    confidence=Real(lo=0, hi=1 - 1e-12, lo_open=True),
    grad=Bool(),
    legacy_positional=("lam_W", "lam_U", "layernorm"),
)
def monte_carlo_risk(
    task, W, U, *, lam_W=0.0, lam_U=0.0, layernorm=False, eps=0.0, n_samples=1000, seed=None, confidence=0.95, grad=True
):
    """Unbiased Monte-Carlo estimate of R (5) — or (10) with ``layernorm`` — with a confidence interval.

    Parameters
    ----------
    task : Task
    W : array_like, shape (d, n_w)
    U : array_like, shape (K, L·d)
    lam_W, lam_U : float
        Weight decays: penalty (λ_W/2)‖W‖² + (λ_U/2)‖U‖² ((10) is λ_W = 0 with ``layernorm``).
    layernorm : bool
        Network h* (φ on the embeddings).
    eps : float
        LayerNorm ε (0: the paper's φ).
    n_samples : int
        Sentences drawn per class (≥ 2; every class is sampled).
    seed : int, Generator or None
    confidence : float
        Level of the normal interval, in (0, 1).
    grad : bool
        Also estimate the gradient and (unbiasedly) its squared norm.

    Returns
    -------
    MonteCarloRisk
    """
    t0 = time.perf_counter()
    check_weights(task, W, U)
    check_magnitude(W, U, layernorm, lam_W)
    K, L, n_w = task.K, task.L, task.n_w
    n = n_samples
    check_work(
        "n_samples",
        n,
        items=K * n * K,
        seconds=K * n * K * L * _SECONDS_PER_ENTRY,
        bytes=8 * (L * n_w * K * (3 if grad else 1) + K * n),
        what="the Monte-Carlo estimate",
    )
    V = phi(W, eps=eps) if layernorm else W
    Uh = U_hat(U, L=L)  # d × KL
    Gt = np.ascontiguousarray((Uh.T @ V).reshape(K, L, n_w).transpose(1, 2, 0))  # [ℓ, w, j] = ⟨u_{j,ℓ}, v_w⟩
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    ce_all, acc = _sample(task, Gt, rng, n, grad)
    R0 = float(ce_all.mean(axis=1).mean())
    var = ce_all.var(axis=1, ddof=1)
    stderr = float(math.sqrt(max(var.sum(), 0.0) / n) / K)
    penalty, pW, pU, _ = penalty_terms(W, U, lam_W, lam_U)
    z = NormalDist().inv_cdf(0.5 + confidence / 2)  # the standard library: scipy.stats is slow to import
    R = R0 + penalty
    ci = (max(R0 - z * stderr, 0.0) + penalty, R0 + z * stderr + penalty)
    gW = gU = gn = gn2 = g0n2 = None
    if grad:
        halves = [_grad_R0(task, W, V, Uh, acc[h], cnt, layernorm, eps) for h, cnt in ((0, n // 2), (1, n - n // 2))]
        g0n2, gn2, gW, gU = _grad_estimates(*halves, pW, pU, lam_W, lam_U)
        gn = math.sqrt(max(gn2, 0.0))
    if not (math.isfinite(R) and math.isfinite(stderr)):
        fail("W", "weights", "the sampled cross-entropies are not finite (weights too large for float64)")
    return MonteCarloRisk(
        R=R,
        R0=R0,
        penalty=penalty,
        stderr=stderr,
        ci=ci,
        confidence=confidence,
        n_samples=n,
        grad_norm=gn,
        grad_norm_sq=gn2,
        grad_R0_norm_sq=g0n2,
        grad_W=gW,
        grad_U=gU,
        seed=None if isinstance(seed, np.random.Generator) else seed,
        seconds=time.perf_counter() - t0,
    )
