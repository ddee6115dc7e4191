"""Set the thread count of the OpenBLAS libraries loaded in this process (Linux, ctypes).

The exact-risk engine runs many small matrix products from several worker threads; OpenBLAS's
own threads on such products (and on an oversubscribed machine) are slower than one thread per
worker by two orders of magnitude, so the engine pins BLAS to 1 thread while it runs. Without
OpenBLAS (or off Linux) this is a no-op.
"""
from __future__ import annotations

import ctypes
import threading
from contextlib import contextmanager

__all__ = ["blas_threads"]

_SET = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads", "openblas_set_num_threads64_",
        "openblas_set_num_threads")
_GET = ("scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads", "openblas_get_num_threads64_",
        "openblas_get_num_threads")
_libs = None
_lock = threading.Lock()
_depth = 0
_saved: list = []


def _find():
    global _libs
    if _libs is not None:
        return _libs
    found = []
    try:
        with open("/proc/self/maps") as fh:
            paths = sorted({ln.split()[-1] for ln in fh
                            if "openblas" in ln.split()[-1].lower() and ".so" in ln.split()[-1]})
    except OSError:
        paths = []
    for p in paths:
        try:
            lib = ctypes.CDLL(p)
        except OSError:
            continue
        setter = next((getattr(lib, n) for n in _SET if hasattr(lib, n)), None)
        getter = next((getattr(lib, n) for n in _GET if hasattr(lib, n)), None)
        if setter is not None and getter is not None:
            setter.argtypes = [ctypes.c_int]
            setter.restype = None
            getter.restype = ctypes.c_int
            found.append((setter, getter))
    _libs = found
    return found


@contextmanager
def blas_threads(n: int):
    """Run the block with every loaded OpenBLAS limited to ``n`` threads (restored after)."""
    global _depth, _saved
    import numpy  # noqa: F401 - make sure NumPy's BLAS is loaded before looking for it

    with _lock:
        if _depth == 0:
            libs = _find()
            _saved = [(s, g, g()) for s, g in libs]
            for s, _, _ in _saved:
                s(n)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                for s, _, old in _saved:
                    s(old)
                _saved = []
