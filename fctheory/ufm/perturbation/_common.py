"""What the modules of the perturbation paper's UFM share: the parameter kinds, the shape checks of W and H,
and the overflow-safe helpers (exact power-of-two rescaling, dense-matrix budgets, solves that report a singular
matrix as the project error)."""

from __future__ import annotations

import math

import numpy as np

from ..._budget import check_work
from ..._numerics import pow2_exponent
from ..._validate import Array, Int, Real, fail
from .._common import seconds_of

# parameter kinds
_MAT = Array(ndim=2)
_K = Int(min=2)
_N = Int(min=1)
_LW = Real(lo=0.0, lo_open=True)
_L0 = Real(lo=0.0)
_LOG_MAX = math.log(np.finfo(np.float64).max)


# ----------------------------------------------------------------------------- helpers
def _KN(H, K, name="H"):
    H = np.asarray(H, dtype=np.float64)
    if H.ndim != 2 or H.shape[1] % K:
        fail(name, H, f"must be d x N with N a multiple of K = {K}, got shape {H.shape}")
    if not np.all(np.isfinite(H)):
        fail(name, H, "must be finite")
    return H, K, H.shape[1] // K


def _check_W(W, K, d):
    W = np.asarray(W, dtype=np.float64)
    if W.shape != (K, d):
        fail("W", W, f"must have shape (K, d) = ({K}, {d}) to match H, got {W.shape}")
    return W


def _Y(K, n):
    return np.repeat(np.eye(K), n, axis=1)


def _exponent(A) -> int:
    return pow2_exponent(A)


def _finite(name, value, *arrays, what="the result"):
    for A in arrays:
        if A is not None and not np.all(np.isfinite(A)):
            fail(name, value, f"{what} overflows float64 for this input")


def _show(A):
    return f"array of shape {np.shape(A)}"


def _solve(A, B, name, value, what):
    """A⁻¹B, with a singular A reported as the project error (never numpy's LinAlgError)."""
    try:
        X = np.linalg.solve(A, B)
    except np.linalg.LinAlgError as exc:
        fail(name, value, f"{what} is singular to working precision ({exc})")
    _finite(name, value, X, what=f"the solve with {what}")
    return X


def _dense_budget(name, value, *, floats, flops=0, what):
    # exact integer sizes (d, n may be 10**400): nanoseconds at ~1 GFLOP/s, never a float overflow
    check_work(name, value, bytes=8 * floats, seconds=seconds_of(flops), what=what)


def _class_means(H, K, n):
    return H.reshape(H.shape[0], K, n).mean(axis=2)


def _sqrt_prod(x, y):
    """√(x·y) for positive x, y of any magnitude (through logs when the product leaves the normal range)."""
    p = x * y
    if 1e-300 < p < 1e300:
        return math.sqrt(p)
    return math.exp(0.5 * (math.log(x) + math.log(y)))


def _exp_or_fail(name, value, lg, what):
    if lg > _LOG_MAX:
        fail(name, value, f"{what} = e^{lg:.6g} is beyond the float64 range")
    return math.exp(lg)
