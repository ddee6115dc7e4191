"""Collapse configurations of Definitions 1–3, with the constants of Theorems 1–3 by default.

* type I   (Def. 1): w_(α,β) = c f_α,        u_{k,ℓ} = c′ f_{z_kℓ}   (f equiangular)
* type II  (Def. 2): φ(w_(α,β)) = √d f_α,    u_{k,ℓ} = c f_{z_kℓ}    (f mean-zero equiangular)
* type III (Def. 3): w_(α,β) = r_β f_α,      u_{k,ℓ} = c f_{z_kℓ}    (f equiangular)
"""
from __future__ import annotations

import numpy as np

from .frames import equiangular_frame, is_equiangular
from .network import U_from_hat
from .task import Task
from ._validate import check_int, fail, float_array

__all__ = ["type1_configuration", "type2_configuration", "type3_configuration"]


def _task(task):
    if not isinstance(task, Task):
        fail("task", task, "must be a fctheory.Task")
    return task


def _frame(task: Task, d: int, frame, seed, mean_zero: bool):
    d = check_int("d", d, min=1)
    if frame is None:
        return equiangular_frame(task.n_c, d, mean_zero=mean_zero, seed=seed)
    F = np.asarray(frame, dtype=float)
    if F.shape != (d, task.n_c):
        fail("frame", frame, f"must have shape (d, n_c) = ({d}, {task.n_c}), got {F.shape}")
    if not is_equiangular(F, mean_zero=mean_zero, atol=1e-10):
        kind = "mean-zero equiangular" if mean_zero else "equiangular"
        fail("frame", frame, f"columns must be {kind} (equation (4){', 1ᵀf = 0' if mean_zero else ''})")
    return F


def _scalar(name, v):
    a = float_array(name, v, lo=0)
    if a.ndim != 0:
        fail(name, v, "must be a scalar")
    return float(a)


def _U(task: Task, F, c):
    """U with u_{k,ℓ} = c f_{z_kℓ} (Û = c F Z)."""
    return U_from_hat(c * F[:, task.Z.ravel()], task.L)


def type1_configuration(task, d, lam=None, *, c=None, c_prime=None, frame=None, seed=None):
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
    task = _task(task)
    if c is None:
        if lam is None:
            fail("c", c, "give either lam (Theorem 1's constants) or c")
        from .tau import tau

        t = tau(task.n_c, task.n_w, task.L, task.K, lam)
        c = np.sqrt(t / task.n_w)
        if c_prime is None:
            c_prime = np.sqrt(t / (task.K * task.L))
    c = _scalar("c", c)
    c_prime = c * np.sqrt(task.n_w / (task.K * task.L)) if c_prime is None else _scalar("c_prime", c_prime)
    F = _frame(task, d, frame, seed, mean_zero=False)
    W = c * F[:, task.word_concept]
    return W, _U(task, F, c_prime)


def type2_configuration(task, d, lam=None, *, c=None, frame=None, seed=None, scale=None, shift=None):
    """(W, U) in a type-II collapse configuration (Definition 2) for the network h*.

    φ(w_(α,β)) = √d f_α with f mean-zero equiangular (needs d ≥ n_c); u_{k,ℓ} = c f_{z_kℓ}.
    With ``lam`` (and no ``c``), c = τ*/√(KL) of Theorem 3.

    Because φ is invariant to positive rescaling and shifts of each column, W = √d F P·diag(scale)
    + shift·1ᵀ is type II for any positive ``scale`` (length n_w) and any ``shift`` (length n_w);
    by default scale = 1, shift = 0 (so W = φ(W)).
    """
    task = _task(task)
    if c is None:
        if lam is None:
            fail("c", c, "give either lam (Theorem 3's constant) or c")
        from .tau_star import tau_star

        c = tau_star(task.n_c, task.L, task.K, d, lam) / np.sqrt(task.K * task.L)
    c = _scalar("c", c)
    F = _frame(task, d, frame, seed, mean_zero=True)
    W = np.sqrt(F.shape[0]) * F[:, task.word_concept]
    if scale is not None:
        sc = float_array("scale", scale, lo=0, lo_open=True)
        W = W * np.broadcast_to(sc, (task.n_w,))
    if shift is not None:
        W = W + np.broadcast_to(float_array("shift", shift), (task.n_w,))
    return W, _U(task, F, c)


def type3_configuration(task, d, lam=None, *, c=None, r=None, frame=None, seed=None):
    """(W, U) in a type-III collapse configuration (Definition 3).

    w_(α,β) = r_β f_α, u_{k,ℓ} = c f_{z_kℓ}. With ``lam`` (and no ``c``/``r``) the constants solve
    (7)–(8) (:func:`solve_type3`), which needs the full latent set K = n_c^L (Theorem 2).
    """
    task = _task(task)
    if c is None or r is None:
        if lam is None:
            fail("c", c, "give either lam (Theorem 2's constants, K = n_c^L) or both c and r")
        if not task.is_full:
            fail("task", task, "Theorem 2's constants need the full latent set (K = n_c**L)")
        from .type3 import solve_type3

        sol = solve_type3(task.mu, task.n_c, task.L, lam)
        c, r = sol.c, sol.r
    c = _scalar("c", c)
    r = float_array("r", r, lo=0)
    if r.shape != (task.s_c,):
        fail("r", r, f"must have s_c = {task.s_c} entries")
    F = _frame(task, d, frame, seed, mean_zero=False)
    W = F[:, task.word_concept] * r[task.word_rank]
    return W, _U(task, F, c)
