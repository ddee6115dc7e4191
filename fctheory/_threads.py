"""Limit BLAS threads while a block runs (process-wide, reentrant, restored afterwards).

The exact-risk engine and the UFM solvers run many small matrix products (from several worker
threads in the engine's case); a threaded OpenBLAS spends more time waking threads than computing
on such products — up to two orders of magnitude on a loaded 2-core machine — so they pin BLAS
to one thread while they run. Built on threadpoolctl, which finds every loaded BLAS.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

from ._validate import fail

__all__ = ["blas_threads"]

_lock = threading.Lock()
_depth = 0
_limiter = None
_controller = None  # threadpoolctl's library scan costs ~20 ms: do it once per process


@contextmanager
def blas_threads(n: int = 1):
    """Run the block with the loaded BLAS libraries limited to ``n`` threads.

    Reentrant and thread-safe: the first entrant sets the limit, the last one restores the
    original thread counts.
    """
    global _depth, _limiter, _controller
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        fail("n", n, "must be an integer >= 1 (BLAS threads)")
    from threadpoolctl import ThreadpoolController  # noqa: PLC0415 - loaded on first use

    with _lock:
        if _depth == 0:
            if _controller is None:
                _controller = ThreadpoolController()
            _limiter = _controller.limit(limits=n, user_api="blas")
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _limiter is not None:
                _limiter.restore_original_limits()
                _limiter = None
