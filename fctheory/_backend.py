"""Array-namespace selection: the math is written once against ``xp``.

``backend="numpy"`` (default) or ``backend="cupy"``; CuPy is imported only when asked for,
so the package never needs it installed.
"""

from __future__ import annotations

import numpy as np

from ._validate import fail

__all__ = ["get_namespace", "to_numpy", "BACKENDS", "array_namespace_of"]

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


def array_namespace_of(x):
    """numpy or cupy, whichever owns ``x`` (without importing cupy if it is not loaded)."""
    mod = type(x).__module__
    if mod.startswith("cupy"):
        import cupy  # noqa: PLC0415

        return cupy
    return np


def to_numpy(x):
    """Host copy of an array from any backend."""
    if type(x).__module__.startswith("cupy"):
        return x.get()
    return np.asarray(x)
