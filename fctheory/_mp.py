"""High-precision (mpmath) helpers: the reference paths used by the tests.

The mp paths evaluate the paper's formulas *as printed* (no log-space rewriting), so they are an
independent check of the float paths, which use reformulated equations.
"""

from __future__ import annotations

import mpmath
import numpy as np

from ._validate import fail

__all__ = ["mp_root", "mp_context", "mp_guard", "vectorize_mp"]

import contextlib

from ._errors import FCTheoryError


def mp_context(dps: int):
    if isinstance(dps, bool) or not isinstance(dps, int) or not 20 <= dps <= 1000:
        fail("dps", dps, "must be an integer in [20, 1000]")
    return mpmath.workdps(dps)


@contextlib.contextmanager
def mp_guard(dps: int):
    """Turn a failure of the mpmath reference (no convergence, singular Jacobian, ...) into the project
    error: the float path stays available, and a reference that cannot be computed is said so."""
    try:
        yield
    except FCTheoryError:
        raise
    except (ArithmeticError, ValueError) as exc:
        fail(
            "precision",
            "mp",
            f"the mpmath reference failed at dps={dps} for these inputs "
            f"({type(exc).__name__}: {exc}); use precision='float'",
        )


def mp_root(f, a, b, *, rel=None, maxiter: int = 5000):
    """Root of a continuous f on [a, b] with f(a)·f(b) ≤ 0 (Anderson–Björck with bisection guard).

    Bracketing, so it cannot wander; superlinear in practice, and a bisection step is forced
    whenever the bracket fails to halve over two iterations. ``rel`` defaults to
    10^(−dps+3) at the current mpmath precision.
    """
    a, b = mpmath.mpf(a), mpmath.mpf(b)
    fa, fb = f(a), f(b)
    if fa == 0:
        return a
    if fb == 0:
        return b
    if (fa > 0) == (fb > 0):
        raise ArithmeticError("mp_root: no sign change on the bracket")
    rel = mpmath.mpf(10) ** (-mpmath.mp.dps + 3) if rel is None else mpmath.mpf(rel)
    widths = [abs(b - a)] * 2
    for _ in range(maxiter):
        if abs(b - a) > widths[-2] / 2:
            c = (a + b) / 2  # guard: the bracket did not halve in two steps
        else:
            c = b - fb * (b - a) / (fb - fa)
            if not (min(a, b) < c < max(a, b)):
                c = (a + b) / 2
        fc = f(c)
        if fc == 0:
            return c
        if (fc > 0) != (fb > 0):
            a, fa = b, fb
        else:
            m = 1 - fc / fb
            fa = fa * (m if m > 0 else mpmath.mpf(0.5))
        b, fb = c, fc
        widths.append(abs(b - a))
        if abs(b - a) <= rel * max(abs(a), abs(b)) or abs(b - a) == 0:
            return b
    raise ArithmeticError("mp_root: no convergence")


def vectorize_mp(fun, *arrays, shape=None):
    """Apply a scalar mp function over broadcast arrays; returns a scalar or an object array
    (of ``shape`` when given, e.g. to restore the shape of flattened inputs)."""
    bc = np.broadcast(*arrays)
    out = np.empty(bc.shape, dtype=object)
    for i, vals in enumerate(bc):
        out.flat[i] = fun(*vals)
    if shape is not None:
        out = out.reshape(shape)
    return out[()] if out.ndim == 0 else out
