"""Tiny plain-text table and JSON helpers shared by the sub-commands."""
from __future__ import annotations

import json

import numpy as np


def fmt(v, digits: int = 10) -> str:
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        v = float(v)
        if v == 0 or (1e-4 <= abs(v) < 1e7):
            return f"{v:.{digits}g}"
        return f"{v:.{digits - 1}e}"
    if isinstance(v, (list, tuple, np.ndarray)):
        return "[" + ", ".join(fmt(x, digits) for x in np.ravel(v)) + "]"
    return "" if v is None else str(v)


def table(rows, headers) -> str:
    cells = [[fmt(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in cells]
    return "\n".join(out)


def _default(o):
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, np.generic):
        return o.item()
    raise TypeError(type(o).__name__)


def dumps(obj) -> str:
    return json.dumps(obj, indent=2, default=_default, allow_nan=True)
