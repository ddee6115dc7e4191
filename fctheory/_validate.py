"""Input checks shared by every public function.

Every check raises :class:`~fctheory.FCTheoryError` with a message of the form
``"<name>=<value> is invalid: <rule>"`` so a user sees which argument broke which rule.
"""
from __future__ import annotations

import numbers

import numpy as np

from ._errors import FCTheoryError

__all__ = [
    "fail",
    "check_int",
    "int_array",
    "float_array",
    "check_mu",
    "check_choice",
    "check_latent_size",
]


def _show(value) -> str:
    if isinstance(value, np.ndarray):
        if value.size > 6:
            return f"array(shape={value.shape}, dtype={value.dtype})"
        return repr(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
        if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
            value = int(value)
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def fail(name: str, value, rule: str):
    """Raise the project error for parameter ``name`` with ``value`` breaking ``rule``."""
    raise FCTheoryError(f"{name}={_show(value)} is invalid: {rule}")


def _first_bad(arr: np.ndarray, bad: np.ndarray):
    idx = np.argwhere(bad)[0]
    return arr[tuple(idx)], tuple(int(i) for i in idx)


def check_int(name: str, value, *, min: int | None = None, max: int | None = None) -> int:
    """Return ``value`` as a Python int, accepting integral floats; raise otherwise."""
    if isinstance(value, (bool, np.bool_)):
        fail(name, value, "must be an integer, not a boolean")
    if isinstance(value, numbers.Integral):
        out = int(value)
    elif isinstance(value, numbers.Real):
        if not np.isfinite(value) or float(value) != int(value):
            fail(name, value, "must be an integer")
        out = int(value)
    else:
        fail(name, value, f"must be an integer, got {type(value).__name__}")
    if min is not None and out < min:
        fail(name, value, f"must be >= {min}")
    if max is not None and out > max:
        fail(name, value, f"must be <= {max}")
    return out


def _as_real_array(name: str, value) -> np.ndarray:
    if isinstance(value, str):
        fail(name, value, "must be a number or an array of numbers, not a string")
    try:
        arr = np.asarray(value)
    except Exception:  # ragged input and the like
        fail(name, value, "must be a number or a rectangular array of numbers")
    if arr.dtype == object:
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            fail(name, value, "must be a number or an array of numbers")
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        fail(name, value, f"must be real numbers, got dtype {arr.dtype}")
    if arr.size == 0:
        fail(name, value, "must not be empty")
    return arr


def int_array(name: str, value, *, min: float | None = None) -> np.ndarray:
    """Integer-valued parameter(s) as a float64 array (so K up to 1e300 fits)."""
    arr = _as_real_array(name, value).astype(np.float64)
    bad = ~np.isfinite(arr)
    if bad.any():
        v, i = _first_bad(arr, bad)
        fail(name, v, f"must be finite (entry {i})")
    bad = arr != np.floor(arr)
    if bad.any():
        v, i = _first_bad(arr, bad)
        fail(name, v, f"must be an integer (entry {i})")
    if min is not None:
        bad = arr < min
        if bad.any():
            v, i = _first_bad(arr, bad)
            fail(name, v, f"must be >= {min} (entry {i})")
    return arr


def float_array(
    name: str,
    value,
    *,
    lo: float | None = None,
    hi: float | None = None,
    lo_open: bool = False,
    hi_open: bool = False,
) -> np.ndarray:
    """Finite real parameter(s) as a float64 array, checked against [lo, hi]."""
    arr = _as_real_array(name, value).astype(np.float64)
    bad = ~np.isfinite(arr)
    if bad.any():
        v, i = _first_bad(arr, bad)
        fail(name, v, f"must be finite (entry {i})")
    if lo is not None:
        bad = arr <= lo if lo_open else arr < lo
        if bad.any():
            v, i = _first_bad(arr, bad)
            fail(name, v, f"must be {'>' if lo_open else '>='} {lo} (entry {i})")
    if hi is not None:
        bad = arr >= hi if hi_open else arr > hi
        if bad.any():
            v, i = _first_bad(arr, bad)
            fail(name, v, f"must be {'<' if hi_open else '<='} {hi} (entry {i})")
    return arr


def check_choice(name: str, value, choices):
    if value not in choices:
        fail(name, value, f"must be one of {sorted(choices)!r}")
    return value


def check_mu(mu, s_c: int | None = None, *, name: str = "mu", rtol: float = 1e-12) -> np.ndarray:
    """Word frequencies μ_β: ``"uniform"``, ``"zipf"`` (μ_β ∝ 1/β) or an array.

    Arrays must be positive, finite and sum to 1 within ``rtol`` (they are returned as
    given, not renormalised, so a user's numbers are never silently changed). The last
    axis indexes words β; leading axes are a batch.
    """
    if isinstance(mu, str):
        if s_c is None:
            fail(name, mu, "a named distribution needs s_c (words per concept)")
        if mu == "uniform":
            return np.full(s_c, 1.0 / s_c)
        if mu == "zipf":
            w = 1.0 / np.arange(1, s_c + 1, dtype=np.float64)
            return w / w.sum()
        fail(name, mu, "must be 'uniform', 'zipf' or an array of positive frequencies summing to 1")
    arr = float_array(name, mu)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if s_c is not None and arr.shape[-1] != s_c:
        fail(name, mu, f"must have s_c={s_c} entries on its last axis, got {arr.shape[-1]}")
    bad = arr <= 0
    if bad.any():
        v, i = _first_bad(arr, bad)
        fail(name, v, f"frequencies must be strictly positive (entry {i} of {name})")
    total = arr.sum(axis=-1)
    bad = np.abs(total - 1.0) > rtol * max(1, arr.shape[-1]) ** 0.5 + 4 * np.finfo(float).eps * arr.shape[-1]
    if np.any(bad):
        fail(name, mu, f"frequencies must sum to 1 (sum is {np.atleast_1d(total)[np.argmax(np.atleast_1d(bad))]!r})")
    return arr


def check_latent_size(n_c: np.ndarray, L: np.ndarray, K: np.ndarray, *, name: str = "K") -> None:
    """Check 1 <= K <= n_c**L elementwise without forming n_c**L (it may overflow)."""
    logN = L * np.log(n_c)
    # exact comparison where n_c**L is small enough to be an exact float
    small = logN < 52 * np.log(2.0)
    with np.errstate(over="ignore"):
        N = np.where(small, np.power(n_c, np.where(small, L, 0.0)), np.inf)
    bad = np.where(small, K > N, np.log(K) > logN * (1 + 1e-15) + 1e-300)
    if np.any(bad):
        b = np.broadcast_to(bad, np.broadcast(n_c, L, K).shape)
        idx = tuple(int(i) for i in np.argwhere(b)[0])
        Kb = np.broadcast_to(K, b.shape)[idx]
        ncb = np.broadcast_to(n_c, b.shape)[idx]
        Lb = np.broadcast_to(L, b.shape)[idx]
        fail(name, Kb, f"must be <= n_c**L = {int(ncb)}**{int(Lb)} (the number of latent variables)")


def broadcast_shape(**arrays) -> tuple:
    """The common broadcast shape of the named arrays, or the project error naming them."""
    try:
        return np.broadcast_shapes(*(np.shape(a) for a in arrays.values()))
    except ValueError:
        desc = ", ".join(f"{k}{np.shape(v)}" for k, v in arrays.items())
        fail("shape", desc, "array arguments must broadcast to a common shape")


def broadcast_flat(**arrays):
    """Broadcast the named arrays together and flatten them: ``(shape, [flat arrays])``.

    The predictors solve elementwise on 1-D arrays and reshape at the end; a shape mismatch is
    reported as the project error naming the arguments.
    """
    shape = broadcast_shape(**arrays)
    return shape, [np.broadcast_to(a, shape).ravel() for a in arrays.values()]
