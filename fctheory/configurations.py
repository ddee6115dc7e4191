"""Collapse configurations of Definitions 1–3, with the constants of Theorems 1–3 by default.

* type I   (Def. 1): w_(α,β) = c f_α,        u_{k,ℓ} = c′ f_{z_kℓ}   (f equiangular)
* type II  (Def. 2): φ(w_(α,β)) = √d f_α,    u_{k,ℓ} = c f_{z_kℓ}    (f mean-zero equiangular)
* type III (Def. 3): w_(α,β) = r_β f_α,      u_{k,ℓ} = c f_{z_kℓ}    (f equiangular)
"""

from __future__ import annotations

import numpy as np

from ._budget import check_work
from ._validate import Array, Instance, Int, Real, Seed, fail, public
from .frames import equiangular_frame, is_equiangular
from .network import U_from_hat
from .task import Task
from .tau import tau
from .tau_star import tau_star
from .type3 import solve_type3

_LAM = Real(lo=0, lo_open=True).or_none()
_C = Real(lo=0).or_none()

__all__ = ["type1_configuration", "type2_configuration", "type3_configuration"]


def _task(task, d):
    """Budget of the (W, U) pair: W is d×n_w and U is K×(L·d) (plus the frame and a copy)."""
    check_work(
        "d",
        d,
        bytes=8 * d * (2 * task.n_w + 2 * task.K * task.L + 3 * task.n_c),
        what=f"a configuration for {task!r} with d={d}",
    )
    return task


def _frame(task: Task, d: int, frame, seed, mean_zero: bool):
    if frame is None:
        return equiangular_frame(task.n_c, d, mean_zero=mean_zero, seed=seed)
    F = frame
    if F.shape != (d, task.n_c):
        fail("frame", frame, f"must have shape (d, n_c) = ({d}, {task.n_c}), got {F.shape}")
    if not is_equiangular(F, mean_zero=mean_zero, atol=1e-10):
        kind = "mean-zero equiangular" if mean_zero else "equiangular"
        fail("frame", frame, f"columns must be {kind} (equation (4){', 1ᵀf = 0' if mean_zero else ''})")
    return F


def _finite(name, value, W):
    if not np.all(np.isfinite(W)):
        fail(name, value, "the configuration's entries overflow the float64 range")
    return W


def _U(task: Task, F, c):
    """U with u_{k,ℓ} = c f_{z_kℓ} (Û = c F Z)."""
    return U_from_hat(c * F[:, task.Z.ravel()], L=task.L)


@public(
    task=Instance(Task),
    d=Int(min=1),
    lam=_LAM,
    c=_C,
    c_prime=_C,
    frame=Array(ndim=2).or_none(),
    seed=Seed(),
    legacy_positional=("d", "lam"),
)
def type1_configuration(task, *, d, lam=None, c=None, c_prime=None, frame=None, seed=None):
    """(W, U) in a type-I collapse configuration (Definition 1).

    Parameters
    ----------
    task : Task
    d : int
        Embedding dimension, d ≥ n_c − 1.
    lam : float, optional
        If given (and ``c`` is not), use Theorem 1's constants c = √(τ/n_w), c′ = √(τ/(KL)).
    c, c_prime : float, optional
        Explicit constants; ``c_prime`` defaults to c√(n_w/(KL)) (the balanced choice of Ω_c^I,
        for which ‖W‖_F = ‖Û‖_F).
    frame : array_like (d, n_c), optional
        Equiangular vectors f_α; by default :func:`equiangular_frame` (rotated by ``seed``).

    Returns
    -------
    W : ndarray (d, n_w)
    U : ndarray (K, L·d)
    """
    task = _task(task, d)
    if c is None:
        if lam is None:
            fail("c", c, "give either lam (Theorem 1's constants) or c")

        t = tau(n_c=task.n_c, n_w=task.n_w, L=task.L, K=task.K, lam=lam)
        c = float(np.sqrt(t / task.n_w))
        if c_prime is None:
            c_prime = float(np.sqrt(t / (task.K * task.L)))
    if c_prime is None:
        with np.errstate(over="ignore"):
            c_prime = c * np.sqrt(task.n_w / (task.K * task.L))
        if not np.isfinite(c_prime):
            fail("c", c, "the balanced c_prime = c*sqrt(n_w/(K L)) overflows the float64 range")
    F = _frame(task, d, frame, seed, mean_zero=False)
    W = c * F[:, task.word_concept]
    return W, _U(task, F, c_prime)


@public(
    task=Instance(Task),
    d=Int(min=1),
    lam=_LAM,
    c=_C,
    frame=Array(ndim=2).or_none(),
    seed=Seed(),
    scale=Real(lo=0, lo_open=True, array=True).or_none(),
    shift=Real(array=True).or_none(),
    legacy_positional=("d", "lam"),
)
def type2_configuration(task, *, d, lam=None, c=None, frame=None, seed=None, scale=None, shift=None):
    """(W, U) in a type-II collapse configuration (Definition 2) for the network h*.

    φ(w_(α,β)) = √d f_α with f mean-zero equiangular (needs d ≥ n_c); u_{k,ℓ} = c f_{z_kℓ}.
    With ``lam`` (and no ``c``), c = τ*/√(KL) of Theorem 3.

    Because φ is invariant to positive rescaling and shifts of each column, W = √d F P·diag(scale)
    + shift·1ᵀ is type II for any positive ``scale`` (length n_w) and any ``shift`` (length n_w);
    by default scale = 1, shift = 0 (so W = φ(W)).
    """
    task = _task(task, d)
    for name, v in (("scale", scale), ("shift", shift)):
        if v is not None and np.ndim(v) != 0 and np.shape(v) != (task.n_w,):
            fail(name, v, f"must be a number or a vector of n_w = {task.n_w} entries (one per word)")
    F = _frame(task, d, frame, seed, mean_zero=True)
    if c is None:
        if lam is None:
            fail("c", c, "give either lam (Theorem 3's constant) or c")

        c = float(tau_star(n_c=task.n_c, L=task.L, K=task.K, d=d, lam=lam) / np.sqrt(task.K * task.L))
    W = np.sqrt(F.shape[0]) * F[:, task.word_concept]
    with np.errstate(over="ignore", invalid="ignore"):
        if scale is not None:
            W = _finite("scale", scale, W * scale)
        if shift is not None:
            W = _finite("shift", shift, W + shift)
    return W, _U(task, F, c)


@public(
    task=Instance(Task),
    d=Int(min=1),
    lam=_LAM,
    c=_C,
    r=Real(lo=0, array=True).or_none(),
    frame=Array(ndim=2).or_none(),
    seed=Seed(),
    legacy_positional=("d", "lam"),
)
def type3_configuration(task, *, d, lam=None, c=None, r=None, frame=None, seed=None):
    """(W, U) in a type-III collapse configuration (Definition 3).

    w_(α,β) = r_β f_α, u_{k,ℓ} = c f_{z_kℓ}. With ``lam`` (and no ``c``/``r``) the constants solve
    (7)–(8) (:func:`solve_type3`), which needs the full latent set K = n_c^L (Theorem 2).
    """
    task = _task(task, d)
    if (c is None) != (r is None):
        name = "r" if r is None else "c"
        fail(name, None, "give both c and r (explicit constants), or neither (then lam gives Theorem 2's constants)")
    if c is None:
        if lam is None:
            fail("c", c, "give either lam (Theorem 2's constants, K = n_c^L) or both c and r")
        if not task.is_full:
            fail("task", task, "Theorem 2's constants need the full latent set (K = n_c**L)")

        sol = solve_type3(mu=task.mu, n_c=task.n_c, L=task.L, lam=lam)
        c, r = float(sol.c), sol.r
    r = np.asarray(r, dtype=np.float64)
    if r.shape != (task.s_c,):
        fail("r", r, f"must have s_c = {task.s_c} entries")
    F = _frame(task, d, frame, seed, mean_zero=False)
    W = F[:, task.word_concept] * r[task.word_rank]
    return W, _U(task, F, c)
