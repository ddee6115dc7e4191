"""Array-namespace selection: the math is written once against ``xp``.

``backend="numpy"`` (default) or ``backend="cupy"``; CuPy is imported only when asked for,
so the package never needs it installed.

Functions that take arrays dispatch on the input instead (:func:`array_namespace_of`): NumPy arrays
(and lists, scalars) use NumPy itself, CuPy arrays CuPy, and PyTorch tensors (CPU or CUDA) the
array-API namespace of array-api-compat, so the computation stays on the tensor's device. Neither
CuPy nor PyTorch is ever imported here: an input of theirs means the library is already loaded.
"""

from __future__ import annotations

import array_api_compat
import numpy as np

from ._validate import fail

__all__ = [
    "get_namespace",
    "to_numpy",
    "BACKENDS",
    "array_namespace_of",
    "as_native",
    "asarray_like",
    "copy_of",
    "dtype_kind",
    "is_torch",
]

BACKENDS = ("numpy", "numba", "cupy")


def get_namespace(backend: str = "numpy"):
    """Return the array module for ``backend`` ("numpy", "numba" -> numpy, or "cupy")."""
    if backend in ("numpy", "numba"):
        return np
    if backend == "cupy":
        try:
            import cupy  # noqa: PLC0415 - lazy on purpose
        except ImportError as exc:  # pragma: no cover - depends on the machine
            fail("backend", backend, f"CuPy is not importable here ({exc}); install fctheory[gpu] on a CUDA machine")
        try:
            cupy.cuda.runtime.getDeviceCount()
        except Exception as exc:  # pragma: no cover
            fail("backend", backend, f"no usable CUDA device ({exc})")
        return cupy
    fail("backend", backend, f"must be one of {list(BACKENDS)}")


def _library(x) -> str:
    """The top-level package of ``x``'s type ("numpy", "cupy", "torch", "builtins", ...)."""
    t = type(x)
    lib = _LIBRARIES.get(t)
    if lib is None:  # once per type: every metric asks this of each argument, often many times
        lib = _LIBRARIES[t] = t.__module__.partition(".")[0]
    return lib


_LIBRARIES: dict = {}


def is_torch(x) -> bool:
    """Whether ``x`` is a PyTorch tensor (checked by module name: torch is never imported here)."""
    return _library(x) == "torch"


def array_namespace_of(x):
    """The array namespace that owns ``x``.

    NumPy arrays, lists and scalars: ``numpy`` itself; CuPy arrays: ``cupy``; PyTorch tensors: the
    array-API namespace ``array_api_compat.array_namespace(x)`` (the compat torch namespace). Neither
    CuPy nor torch is imported unless ``x`` is one of theirs.
    """
    lib = _library(x)
    if lib == "cupy":
        import cupy  # noqa: PLC0415 - only loaded when the input is a CuPy array

        return cupy
    if lib == "torch":
        return array_api_compat.array_namespace(x)
    return np


def as_native(x):
    """(xp, x as an array of xp): lists become NumPy arrays, tensors are detached from autograd."""
    xp = array_namespace_of(x)
    if is_torch(x):
        return xp, x.detach()
    return xp, xp.asarray(x)


def to_numpy(x):
    """Host copy of an array from any backend (a PyTorch tensor is detached and copied to the CPU)."""
    lib = _library(x)
    if lib == "cupy":
        return x.get()
    if lib == "torch":
        return x.detach().cpu().numpy()
    return np.asarray(x)


def asarray_like(a, like, dtype=None):
    """``a`` (host data or an array of any library) as an array of ``like``'s namespace, on its device.

    Used to bring small host arrays (counts, indices, weights) next to the features, and to move
    the arguments of a metric (a classifier W, a bias) to the features' namespace.
    """
    lib = _library(like)
    if lib == "torch":
        xp = array_namespace_of(like)
        if not is_torch(a):
            a = to_numpy(a)
        else:
            a = a.detach()
        return xp.asarray(a, dtype=dtype, device=like.device)
    if lib == "cupy":
        xp = array_namespace_of(like)
        return xp.asarray(to_numpy(a) if is_torch(a) else a, dtype=dtype)
    return np.asarray(to_numpy(a), dtype=dtype)


def copy_of(x):
    """A copy of array ``x`` in its own namespace and device."""
    return x.clone() if is_torch(x) else x.copy()


def dtype_kind(x) -> str:
    """NumPy's dtype kind of array ``x`` ("b", "i", "u", "f", "c", ...), for PyTorch tensors too."""
    if not is_torch(x):
        return x.dtype.kind
    dt = x.dtype
    if dt.is_complex:
        return "c"
    if dt.is_floating_point:
        return "f"
    if str(dt) == "torch.bool":
        return "b"
    return "i" if dt.is_signed else "u"
