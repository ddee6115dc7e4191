"""Public entry points of the exact true risk (5)/(10)."""

from __future__ import annotations

from .._validate import public
from .evaluation import RISK_KINDS, evaluate

__all__ = ["true_risk", "true_risk_grad", "unregularized_risk"]

_KINDS = {k: v for k, v in RISK_KINDS.items() if k not in ("grad", "jit", "workers")}


@public(**_KINDS, legacy_positional=("layernorm",))
def true_risk(
    task,
    W,
    U,
    lam,
    *,
    layernorm: bool = False,
    eps: float = 0.0,
    backend: str = "numpy",
    progress=None,
    max_seconds=None,
    max_bytes=None,
) -> float:
    """Exact true risk R(W, U) of (5), or R*(W, U) of (10) with ``layernorm=True``.

    (5):  R  = (1/K) Σ_k E_{x∼D_{z_k}} CE(h_{W,U}(x), k) + (λ/2)(‖W‖_F² + ‖U‖_F²)
    (10): R* = (1/K) Σ_k E_{x∼D_{z_k}} CE(h*_{W,U}(x), k) + (λ/2)‖U‖_F²

    Every sentence of every class is enumerated (implicitly, by half-split normalizer matrices;
    see :func:`fctheory.risk.evaluate_risk` and docs/risk.md); nothing is sampled.

    Parameters
    ----------
    task : Task
    W : array_like, shape (d, n_w)
    U : array_like, shape (K, L·d)
    lam : float
        λ ≥ 0.
    layernorm : bool
        Network h* and risk (10) (W not penalized). Must be a real boolean (``"False"`` is refused).
    eps, backend, progress, max_seconds, max_bytes
        See :func:`fctheory.risk.evaluate_risk` (None budgets: the budget in force; inf: no limit).

    Returns
    -------
    float

    Raises
    ------
    FCTheoryError
        Invalid input, or an estimated cost above the budget (the message gives the estimate).
    """
    return evaluate(
        task,
        W,
        U,
        lam,
        layernorm,
        grad=False,
        eps=eps,
        backend=backend,
        progress=progress,
        max_seconds=max_seconds,
        max_bytes=max_bytes,
    ).R


@public(**_KINDS, legacy_positional=("layernorm",))
def true_risk_grad(
    task,
    W,
    U,
    lam,
    *,
    layernorm: bool = False,
    eps: float = 0.0,
    backend: str = "numpy",
    progress=None,
    max_seconds=None,
    max_bytes=None,
):
    """Exact (R, ∂R/∂W, ∂R/∂U) of (5), or of (10) with ``layernorm=True``.

    The gradient is Lemma S: ∂R₀/∂u_{k,ℓ} = (1/K) Σ_j E_{D_{z_j}}[(p_k − δ_{jk}) v_{x_ℓ}],
    ∂R₀/∂w_{(α,β)} = (1/K) Σ_j E_{D_{z_j}}[Σ_ℓ 1{x_ℓ=(α,β)} Σ_k (p_k − δ_{jk}) u_{k,ℓ}], pulled
    back through φ for h*; plus λW (h only) and λU. Parameters as in :func:`true_risk`.

    Returns
    -------
    R : float
    dW : ndarray, shape (d, n_w)
    dU : ndarray, shape (K, L·d)
    """
    r = evaluate(
        task,
        W,
        U,
        lam,
        layernorm,
        grad=True,
        eps=eps,
        backend=backend,
        progress=progress,
        max_seconds=max_seconds,
        max_bytes=max_bytes,
    )
    return r.R, r.grad_W, r.grad_U


@public(**{k: v for k, v in _KINDS.items() if k != "lam"}, legacy_positional=("layernorm",))
def unregularized_risk(
    task,
    W,
    U,
    *,
    layernorm: bool = False,
    eps: float = 0.0,
    backend: str = "numpy",
    progress=None,
    max_seconds=None,
    max_bytes=None,
) -> float:
    """R₀(W, U) of (45): the true risk without weight decay (with φ(W) when ``layernorm``).

    Parameters as in :func:`true_risk` (no λ).
    """
    return evaluate(
        task,
        W,
        U,
        0.0,
        layernorm,
        grad=False,
        eps=eps,
        backend=backend,
        progress=progress,
        max_seconds=max_seconds,
        max_bytes=max_bytes,
    ).R0
