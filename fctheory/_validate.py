"""Input checks shared by every public function.

Every check raises :class:`~fctheory.FCTheoryError` with a message of the form
``"<name>=<value> is invalid: <rule>"`` so a user sees which argument broke which rule.
"""

from __future__ import annotations

import functools as _functools
import inspect as _inspect
import numbers
import os as _os

import math

import numpy as np

from ._compat import LegacyCalls
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


_FLOAT_MAX_INT = int(np.finfo(np.float64).max)


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
    if len(text) <= 80:
        return text
    if isinstance(value, str) and ("/" in value or "\\" in value):
        return text[:24] + "..." + text[-53:]  # a path: its file name is the informative end
    return text[:77] + "..."


def fail(name: str, value, rule: str):
    """Raise the project error for parameter ``name`` with ``value`` breaking ``rule``."""
    raise FCTheoryError(f"{name}={_show(value)} is invalid: {rule}")


def _entry(i) -> str:
    return f" (entry {i})" if i else ""


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
        try:
            f = float(value)
        except (OverflowError, TypeError, ValueError):
            fail(name, value, "must be an integer")
        if not np.isfinite(f) or not f.is_integer():
            fail(name, value, "must be an integer")
        out = int(f)
    else:
        fail(name, value, f"must be an integer, got {type(value).__name__}")
    if min is not None and out < min:
        fail(name, value, f"must be >= {min}")
    if max is not None and out > max:
        fail(name, value, f"must be <= {max}")
    return out


def _as_real_array(name: str, value) -> np.ndarray:
    if isinstance(value, (str, bytes)):
        fail(name, value, "must be a number or an array of numbers, not a string")
    if isinstance(value, (bool, np.bool_)):
        fail(name, value, "must be a number, not a boolean")
    if isinstance(value, int) and abs(value) > _FLOAT_MAX_INT:
        # 10**400 would overflow in the float conversion below: refuse it by exact integer comparison
        fail(name, value, "is beyond the float64 range (|value| <= 1.8e308)")
    if isinstance(value, complex) or isinstance(value, np.complexfloating):
        fail(name, value, "must be real, not complex")
    try:
        arr = np.asarray(value)
    except Exception:  # ragged input and the like
        fail(name, value, "must be a number or a rectangular array of numbers")
    if arr.dtype == object:
        flat = arr.ravel()
        for v in flat:
            if isinstance(v, (bool, np.bool_, str, bytes)) or not isinstance(v, numbers.Real):
                fail(name, value, "must be a number or an array of numbers")
            if isinstance(v, int) and abs(v) > _FLOAT_MAX_INT:
                fail(name, value, "has an entry beyond the float64 range (|value| <= 1.8e308)")
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError, OverflowError):
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
        fail(name, v, f"must be finite{_entry(i)}")
    bad = arr != np.floor(arr)
    if bad.any():
        v, i = _first_bad(arr, bad)
        fail(name, v, f"must be an integer{_entry(i)}")
    if min is not None:
        bad = arr < min
        if bad.any():
            v, i = _first_bad(arr, bad)
            fail(name, v, f"must be >= {min}{_entry(i)}")
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
        fail(name, v, f"must be finite{_entry(i)}")
    if lo is not None:
        bad = arr <= lo if lo_open else arr < lo
        if bad.any():
            v, i = _first_bad(arr, bad)
            fail(name, v, f"must be {'>' if lo_open else '>='} {lo}{_entry(i)}")
    if hi is not None:
        bad = arr >= hi if hi_open else arr > hi
        if bad.any():
            v, i = _first_bad(arr, bad)
            fail(name, v, f"must be {'<' if hi_open else '<='} {hi}{_entry(i)}")
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
    # rtol as documented, plus the rounding of numpy's pairwise sum itself (~ε·log2(s_c), taken 2×)
    bad = np.abs(total - 1.0) > rtol + 2 * np.finfo(float).eps * max(1.0, math.log2(arr.shape[-1]))
    if np.any(bad):
        fail(
            name,
            mu,
            f"frequencies must sum to 1 (sum is {float(np.atleast_1d(total)[np.argmax(np.atleast_1d(bad))])!r})",
        )
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


# =====================================================================================================
# Declarative parameter kinds and the @public decorator
#
# Every public entry point (function, class constructor, method, CLI command body) is wrapped by
# ``@public(name=Kind, ...)``, which declares the kind of *every* parameter and checks the arguments
# before the body runs.  The declaration is kept on the wrapper as ``__fc_params__`` so the fuzz suite
# (tests/fuzz/test_fuzz.py) can (a) refuse any public callable without one and (b) draw bad values per kind.
# Kinds check and convert cheap things (types, finiteness, ranges, overflow-safe integer bounds);
# cross-parameter rules (shapes tied to a Task, sizes against the budget) stay in the function body,
# written with the helpers above and in :mod:`fctheory._budget`.
# =====================================================================================================


class Kind:
    """A parameter kind: ``kind(name, value)`` returns the checked (possibly converted) value."""

    optional: bool = False

    def __call__(self, name: str, value):  # pragma: no cover - abstract
        raise NotImplementedError

    def or_none(self) -> "Kind":
        """The same kind, with ``None`` also accepted (and passed through)."""
        return Optional(self)

    def __repr__(self):
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if v is not None and k != "optional")
        return f"{type(self).__name__}({fields})"


class Optional(Kind):
    optional = True

    def __init__(self, inner: Kind):
        self.inner = inner

    def __call__(self, name, value):
        return None if value is None else self.inner(name, value)


class Int(Kind):
    """A Python integer (integral floats accepted), ``min <= value <= max``; compared exactly, never overflows.

    With ``array=True`` an int or array of ints is accepted and returned as float64 (broadcasting
    predictors: K up to 1e300 fits); Python ints beyond the float range are refused.
    """

    def __init__(self, min=None, max=None, *, array: bool = False):
        self.min, self.max, self.array = min, max, array

    def __call__(self, name, value):
        if self.array:
            arr = int_array(name, value, min=self.min)
            if self.max is not None and np.any(arr > self.max):
                v, i = _first_bad(arr, arr > self.max)
                fail(name, v, f"must be <= {self.max}{_entry(i)}")
            return (
                value
                if np.ndim(value) == 0 and isinstance(value, numbers.Integral)
                else arr
                if arr.ndim
                else float(arr)
            )
        return check_int(name, value, min=self.min, max=self.max)


class Real(Kind):
    """A finite real number (or array with ``array=True``) in [lo, hi] (open ends by flag).

    ``inf_ok=True`` also accepts ±inf where the function documents its meaning.
    """

    def __init__(self, lo=None, hi=None, *, lo_open=False, hi_open=False, array: bool = False, inf_ok: bool = False):
        self.lo, self.hi, self.lo_open, self.hi_open, self.array, self.inf_ok = lo, hi, lo_open, hi_open, array, inf_ok

    def __call__(self, name, value):
        if self.inf_ok and isinstance(value, (float, np.floating)) and np.isinf(value):
            arr = np.asarray(value, dtype=np.float64)
            if (self.lo is not None and value < self.lo) or (self.hi is not None and value > self.hi):
                fail(name, value, f"must lie in [{self.lo}, {self.hi}]")
            return float(value)
        arr = float_array(name, value, lo=self.lo, hi=self.hi, lo_open=self.lo_open, hi_open=self.hi_open)
        if self.array:
            return arr if arr.ndim else float(arr)
        if arr.ndim != 0:
            fail(name, value, "must be a single number, not an array")
        return float(arr)


class Bool(Kind):
    """``True``/``False`` (or numpy booleans); strings such as ``"False"`` and integers are refused."""

    def __call__(self, name, value):
        if isinstance(value, (bool, np.bool_)):
            return bool(value)
        fail(name, value, f"must be True or False, got {type(value).__name__}")


class Choice(Kind):
    """One of a fixed set of values (strings compared exactly)."""

    def __init__(self, *choices):
        self.choices = tuple(choices)

    def __call__(self, name, value):
        try:
            ok = any(value is c or (type(value) is type(c) and value == c) for c in self.choices)
        except Exception:  # arrays and the like
            ok = False
        if not ok:
            fail(name, value, f"must be one of {list(self.choices)!r}")
        return value


class Seed(Kind):
    """A random seed: ``None``, an integer in [0, 2**63 − 1], or a ``numpy.random.Generator``."""

    optional = True

    def __call__(self, name, value):
        if value is None or isinstance(value, np.random.Generator):
            return value
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
            fail(name, value, "must be None, a non-negative integer or a numpy.random.Generator")
        return check_int(name, value, min=0, max=2**63 - 1)


class Prob(Kind):
    """A probability vector: positive finite entries summing to 1 within 1e-12 (see :func:`check_mu`).

    ``named=True`` also accepts ``"uniform"``/``"zipf"`` (then the function builds it, given s_c).
    """

    def __init__(self, *, named: bool = True):
        self.named = named

    def __call__(self, name, value):
        if isinstance(value, str):
            if self.named and value in ("uniform", "zipf"):
                return value
            fail(name, value, "must be 'uniform', 'zipf' or an array of positive frequencies summing to 1")
        return check_mu(value, None, name=name)


class Array(Kind):
    """A real numeric array (lists accepted), finite unless ``finite=False``, with optional ``ndim``.

    Returns a float64 ndarray (a copy when the input was not already one, so callers never mutate
    the user's data). ``ndim`` may be an int or a tuple of allowed values; ``min_size`` checks size.
    ``integer=True`` demands integral entries (returned as int64) with ``min``/``max`` bounds.
    ``native=True``: PyTorch tensors are passed through unchanged too (like CuPy arrays), for functions
    that compute in the input's own namespace and check it themselves.
    """

    def __init__(
        self,
        ndim=None,
        *,
        finite: bool = True,
        integer: bool = False,
        min=None,
        max=None,
        min_size: int = 1,
        native: bool = False,
    ):
        self.ndim, self.finite, self.integer, self.min, self.max, self.min_size = (
            ndim,
            finite,
            integer,
            min,
            max,
            min_size,
        )
        self.native = native

    def __call__(self, name, value):
        if hasattr(value, "__cuda_array_interface__") or type(value).__module__.startswith("cupy"):
            return value  # device arrays are checked by the backend code
        if self.native and type(value).__module__.partition(".")[0] == "torch":
            return value  # checked by the function, which computes on the tensor's device
        arr = _real_ndarray(name, value)
        if self.ndim is not None:
            allowed = self.ndim if isinstance(self.ndim, tuple) else (self.ndim,)
            if arr.ndim not in allowed:
                fail(name, value, f"must have {' or '.join(map(str, allowed))} dimension(s), got shape {arr.shape}")
        if arr.size < self.min_size:
            fail(name, value, f"must have at least {self.min_size} entries, got shape {arr.shape}")
        if self.integer:
            return self._int64(name, arr)
        out = np.array(arr, dtype=np.float64)  # a copy: inputs are never mutated
        if self.finite:
            bad = ~np.isfinite(out)
            if bad.any():
                v, i = _first_bad(out, bad)
                fail(name, v, f"must be finite{_entry(i)}")
        return out

    def _int64(self, name, arr: np.ndarray) -> np.ndarray:
        """``arr`` (real dtype) as an int64 copy: integral entries within the int64 range and [min, max]."""
        if arr.dtype.kind == "f":
            bad = ~np.isfinite(arr) | (arr != np.round(arr))
            if bad.any():
                v, i = _first_bad(arr, bad)
                fail(name, v, f"must be integers{_entry(i)}")
        # int64 range first: an integral float such as 1e300 would wrap in the cast below
        lo64, hi64 = -(2**63), 2**63 - 1
        if arr.dtype.kind == "f" and arr.size and (arr.min() < lo64 or arr.max() >= 2.0**63):
            bad = (arr < lo64) | (arr >= 2.0**63)
            v, i = _first_bad(arr, bad)
            fail(name, v, f"must fit a 64-bit integer{_entry(i)}")
        if arr.dtype.kind == "u" and arr.size and arr.max() > hi64:
            v, i = _first_bad(arr, arr > hi64)
            fail(name, v, f"must fit a 64-bit integer{_entry(i)}")
        if self.min is not None and arr.size and arr.min() < self.min:
            v, i = _first_bad(arr, arr < self.min)
            fail(name, v, f"must be >= {self.min}{_entry(i)}")
        if self.max is not None and arr.size and arr.max() > self.max:
            v, i = _first_bad(arr, arr > self.max)
            fail(name, v, f"must be <= {self.max}{_entry(i)}")
        return np.array(arr, dtype=np.int64)


def _real_ndarray(name: str, value) -> np.ndarray:
    """``value`` as an ndarray of a real (int, uint or float) dtype, without copying or checking entries."""
    if isinstance(value, (str, bytes, bool, np.bool_)) or value is None:
        fail(name, value, "must be an array of real numbers")
    try:
        arr = np.asarray(value)
    except Exception:
        fail(name, value, "must be a rectangular array of real numbers")
    if arr.dtype == object:
        arr = _as_real_array(name, arr)
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        fail(name, value, f"must be real numbers, got dtype {arr.dtype}")
    return arr


class Instance(Kind):
    """An instance of the given class(es) (e.g. :class:`~fctheory.Task`)."""

    def __init__(self, *classes, label: str | None = None):
        self.classes, self.label = classes, label

    def __call__(self, name, value):
        if not isinstance(value, self.classes):
            want = self.label or " or ".join(c.__name__ for c in self.classes)
            fail(name, value, f"must be a {want}, got {type(value).__name__}")
        return value


class PathIn(Kind):
    """An existing file (``dir=False``) or folder path (str or os.PathLike)."""

    def __init__(self, *, dir: bool = False):
        self.dir = dir

    def __call__(self, name, value):
        path = _as_path(name, value)
        if self.dir and not _os.path.isdir(path):
            fail(name, value, "must be an existing folder")
        if not self.dir and not _os.path.isfile(path):
            fail(
                name, value, "must be an existing file" if not _os.path.isdir(path) else "must be a file, not a folder"
            )
        return path


class PathOut(Kind):
    """A path to be written: its parent folder must exist (or be creatable) and be writable.

    Checked *before* any work starts, so a long run never fails at the end on a bad path.
    """

    def __init__(self, *, dir: bool = False):
        self.dir = dir

    def __call__(self, name, value):
        path = _as_path(name, value)
        check_output_path(name, path, dir=self.dir)
        return path


class Anything(Kind):
    """Explicitly unchecked (callbacks, opaque user objects); documents that nothing is checked."""

    def __init__(self, why: str = ""):
        self.why = why

    def __call__(self, name, value):
        return value


def as_path(name, value) -> str:
    """``value`` as a non-empty ``str`` path (``str`` or ``os.PathLike``); refuses anything else naming ``name``."""
    if isinstance(value, (bytes, bool)) or not isinstance(value, (str, _os.PathLike)):
        fail(name, value, "must be a path (str or os.PathLike)")
    path = _os.fspath(value)
    if not isinstance(path, str) or path == "" or "\x00" in path:
        fail(name, value, "must be a non-empty path without NUL characters")
    return path


_as_path = as_path  # the former private name, still used inside this module


def check_output_path(name: str, path, *, dir: bool = False) -> str:
    """Refuse an output path that cannot be written, before any work is done.

    ``dir=True``: the path is a folder to create or reuse; otherwise a file whose parent folder must
    exist (or be creatable) and which must not be an existing folder.
    """
    path = _as_path(name, path)
    if dir:
        if _os.path.exists(path) and not _os.path.isdir(path):
            fail(name, path, "must be a folder, but a file of that name exists")
        probe = path if _os.path.isdir(path) else _nearest_existing(path)
    else:
        if _os.path.isdir(path):
            fail(name, path, "must be a file path, but it is an existing folder")
        probe = _nearest_existing(_os.path.dirname(_os.path.abspath(path)))
    if not _os.path.isdir(probe):
        fail(name, path, f"cannot be created: {probe!r} is not a folder")
    if not _os.access(probe, _os.W_OK | _os.X_OK):
        fail(name, path, f"is not writable (no write permission in {probe!r})")
    return path


def _nearest_existing(path: str) -> str:
    path = _os.path.abspath(path)
    while not _os.path.exists(path):
        parent = _os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return path


def public(*, renamed: dict | None = None, legacy_positional: tuple = (), **kinds):
    """Declare and check the kind of every parameter of a public entry point.

    Every parameter of the wrapped callable (``self``/``cls`` aside) must be named in ``kinds``;
    forgetting one is an error at import time, so a new function cannot skip validation. Arguments
    are checked (and converted: ints to int, reals to float, arrays to fresh float64 arrays) before
    the body runs; defaults are trusted. A call with wrong or missing arguments raises
    :class:`~fctheory.FCTheoryError` naming the function, instead of a bare ``TypeError``.

    API evolution (see CHANGELOG.md): ``renamed={"old": "new"}`` still accepts the old keyword with a
    ``DeprecationWarning``; ``legacy_positional=("a", "b", ...)`` still accepts, with a
    ``DeprecationWarning``, positional arguments for parameters that became keyword-only (they are
    mapped, in that order, after the remaining positional parameters). Both are handled by
    :class:`fctheory._compat.LegacyCalls`.
    """

    def deco(fn):
        sig = _inspect.signature(fn)
        _check_declared(fn, sig, kinds)
        legacy = LegacyCalls(fn, sig, renamed, legacy_positional)
        adapt = renamed or legacy_positional

        binder = _Binder(sig)

        @_functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if adapt:
                args, kwargs = legacy.adapt(args, kwargs)
            call = binder.bind(args, kwargs)
            if call is not None:  # the common call forms: checked in parameter order, as sig.bind orders them
                values, keywords = call
                for name, value in keywords.items():
                    kind = kinds.get(name)
                    if kind is not None:
                        keywords[name] = kind(name, value)
                return fn(*[keywords.pop(name) for name in values], **keywords)
            try:
                bound = sig.bind(*args, **kwargs)
            except TypeError as exc:
                raise FCTheoryError(f"{fn.__qualname__}(): {exc}") from None
            arguments = bound.arguments
            for name, value in arguments.items():
                kind = kinds.get(name)
                if kind is not None:
                    arguments[name] = kind(name, value)
            return fn(*bound.args, **bound.kwargs)

        wrapper.__fc_params__ = dict(kinds)
        wrapper.__fc_renamed__ = dict(legacy.renamed)
        return wrapper

    return deco


class _Binder:
    """What ``sig.bind`` gives for the usual call forms, without inspect's general machinery (which costs
    more than the checks of a small function).

    Handles signatures of positional-or-keyword and keyword-only parameters and at most a ``**kwargs``
    (no ``*args`` or positional-only ones) called with at most as many positions as there are positional
    parameters, keywords not given twice (without ``**kwargs``: known ones only), and every parameter
    without a default given. Anything else (including every wrong call) returns None and goes through
    ``sig.bind``, which words the error.
    """

    def __init__(self, sig: _inspect.Signature):
        P = _inspect.Parameter
        params = [p for p in sig.parameters.values() if p.kind is not P.VAR_KEYWORD]
        self.var_keyword = len(params) < len(sig.parameters)
        self.usable = all(p.kind in (P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY) for p in params)
        self.positional = tuple(p.name for p in params if p.kind is P.POSITIONAL_OR_KEYWORD)
        self.order = tuple(p.name for p in params)
        self.required = tuple(p.name for p in params if p.default is P.empty)

    def bind(self, args: tuple, kwargs: dict):
        """(names of the positional arguments, {name: value} of every passed argument in parameter order,
        then the ``**kwargs`` ones in the order given), or None."""
        n = len(args)
        if not self.usable or n > len(self.positional):
            return None
        names = self.positional[:n]
        passed = dict(zip(names, args))
        if kwargs:
            for name in self.order[n:]:
                if name in kwargs:
                    passed[name] = kwargs[name]
            if self.var_keyword:
                if any(name in kwargs for name in names):  # a positional one given again
                    return None
                for name, value in kwargs.items():
                    passed.setdefault(name, value)
            elif len(passed) != n + len(kwargs):  # an unknown keyword, or a positional one given again
                return None
        for name in self.required:
            if name not in passed:
                return None
        return names, passed


def _check_declared(fn, sig: _inspect.Signature, kinds: dict) -> None:
    """Every parameter of ``fn`` (``self``/``cls`` and ``*args``/``**kwargs`` aside) has a kind, and no other name."""
    params = [
        p
        for p in sig.parameters.values()
        if p.name not in ("self", "cls") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    missing = [p.name for p in params if p.name not in kinds]
    extra = [k for k in kinds if k not in sig.parameters]
    if missing or extra:
        raise TypeError(f"@public on {fn.__qualname__}: undeclared parameters {missing}, unknown names {extra}")


def public_class(cls):
    """Mark a class whose constructor is checked by ``@public`` on ``__init__`` (or validated in
    ``__post_init__``/``__new__``) — lets the fuzz suite find the declaration on the class."""
    init = cls.__dict__.get("__init__")
    spec = getattr(init, "__fc_params__", None) or getattr(cls, "__fc_params__", None)
    if spec is None:
        raise TypeError(f"public_class {cls.__qualname__}: declare its constructor with @public or __fc_params__")
    cls.__fc_params__ = spec
    return cls


def result_type(cls):
    """Mark a result object (returned by the library, not built by users): the fuzz suite skips it."""
    cls.__fc_result__ = True
    return cls


__all__ += [
    "Kind",
    "Optional",
    "Int",
    "Real",
    "Bool",
    "Choice",
    "Seed",
    "Prob",
    "Array",
    "Instance",
    "PathIn",
    "PathOut",
    "Anything",
    "public",
    "public_class",
    "result_type",
    "check_output_path",
    "broadcast_shape",
    "broadcast_flat",
]
