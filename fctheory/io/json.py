"""The one Python → JSON converter of fctheory: :func:`to_json`.

Every file and every ``--json`` output fctheory writes goes through it, so a rule (booleans, NaN,
mpmath numbers, dictionary keys) is decided here once.
"""

from __future__ import annotations

import math
from dataclasses import fields, is_dataclass

import mpmath
import numpy as np

from .._validate import Anything, Instance, Int, public

__all__ = ["to_json", "mp_str", "is_mpf"]


def is_mpf(v) -> bool:
    """True for an mpmath real number (``mpmath.mpf`` of any context), without an ``isinstance`` on a context class."""
    return type(v).__module__.startswith("mpmath") and hasattr(v, "_mpf_")


def mp_str(v, dps: int) -> str:
    """An mpmath number as a decimal string with ``dps`` significant digits (its full working precision).

    Non-finite values are written as mpmath writes them (``"nan"``, ``"+inf"``, ``"-inf"``).
    """
    return mpmath.nstr(v, dps, min_fixed=-mpmath.inf, max_fixed=mpmath.inf) if math.isfinite(v) else str(v)


def _float(v: float, notes: list | None, path: str):
    if math.isfinite(v):
        return v
    if notes is not None:
        notes.append(f"{path or 'value'}: {'NaN' if math.isnan(v) else ('inf' if v > 0 else '-inf')} written as null")
    return None


@public(v=Anything("any value"), notes=Instance(list).or_none(), path=Instance(str), dps=Int(min=1, max=10**6))
def to_json(v, notes: list | None = None, path: str = "", *, dps: int = 50):
    """``v`` as plain JSON values (``json.dumps(..., allow_nan=False)`` accepts the result).

    The rules, in the order they are tried:

    * ``None`` and ``str`` unchanged; ``bool`` and ``numpy.bool_`` → ``bool`` (before the integer rule,
      so ``True`` never becomes ``1``);
    * ``int`` and numpy integers → ``int``;
    * ``float`` and numpy floats → ``float``; NaN and ±inf → ``None``, and when ``notes`` is a list a line
      ``"<path>: NaN written as null"`` (``inf``, ``-inf``) is appended to it;
    * mpmath numbers → decimal strings with ``dps`` significant digits (:func:`mp_str`): a JSON number
      would be read back as a double and lose the digits;
    * ``dict`` → object whose keys are ``str(key)``; numpy arrays (0-d: the scalar), ``list`` and
      ``tuple`` → lists, converted element by element;
    * dataclass instances → object of their fields;
    * anything else (paths, enums, sets, ...) → ``str(v)``.

    Parameters
    ----------
    v : object
    notes : list of str, optional
        Receives one line per NaN/inf replaced by ``None`` (omitted: replaced silently).
    path : str
        Where ``v`` sits in the enclosing object (``"results.R"``, ``"x[3]"``); names the field in notes.
    dps : int
        Significant digits of mpmath numbers.
    """
    return _convert(v, notes, path, dps)


def _convert(v, notes, path, dps):
    if v is None or isinstance(v, (str, bool)):
        return v
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return _float(float(v), notes, path)
    if is_mpf(v):
        return mp_str(v, dps)
    if isinstance(v, dict):
        return {str(k): _convert(x, notes, f"{path}.{k}" if path else str(k), dps) for k, x in v.items()}
    if isinstance(v, np.ndarray):
        if v.ndim == 0:
            return _convert(v[()], notes, path, dps)
        return [_convert(x, notes, f"{path}[{i}]", dps) for i, x in enumerate(v)]
    if isinstance(v, (list, tuple)):
        return [_convert(x, notes, f"{path}[{i}]", dps) for i, x in enumerate(v)]
    if is_dataclass(v) and not isinstance(v, type):
        return _convert({f.name: getattr(v, f.name) for f in fields(v)}, notes, path, dps)
    return str(v)
