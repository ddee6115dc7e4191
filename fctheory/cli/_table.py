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


def table(rows, headers, width: int = 100) -> str:
    """Plain-text table at most ``width`` columns wide: the widest columns are narrowed (never below 8) and
    their cells wrapped onto continuation lines, so long statements or reasons stay readable in full."""
    import textwrap

    cells = [[fmt(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    sep = 2
    while sum(widths) + sep * (len(widths) - 1) > width and max(widths) > 8:
        widths[widths.index(max(widths))] -= 1  # one column at a time: the widest ones end up equal

    def lines(row):
        wrapped = [textwrap.wrap(c, w, break_long_words=True, break_on_hyphens=False) or [""]
                   if len(c) > w else [c] for c, w in zip(row, widths)]
        return ["  ".join((col[j] if j < len(col) else "").ljust(w) for col, w in zip(wrapped, widths)).rstrip()
                for j in range(max(len(col) for col in wrapped))]

    out = lines(list(headers)) + ["  ".join("-" * w for w in widths)]
    for r in cells:
        out += lines(r)
    return "\n".join(out)


def _default(o):
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, np.generic):
        return o.item()
    raise TypeError(type(o).__name__)


def dumps(obj) -> str:
    return json.dumps(obj, indent=2, default=_default, allow_nan=True)


# ----------------------------------------------------------------------------- option types
# argparse calls these on the option's text; an ArgumentTypeError becomes one clear line
# ("fctheory risk: error: argument --nc: must be an integer >= 2, got 'x'") and exit status 2.
def integer(min: int | None = None, max: int | None = None):
    """argparse ``type=`` for an integer option in [min, max] (exact: no float rounding)."""
    import argparse

    def parse(text: str) -> int:
        rng = " and ".join(s for s in (f">= {min}" if min is not None else "",
                                       f"<= {max}" if max is not None else "") if s)
        want = f"must be an integer{' ' + rng if rng else ''}, got {text!r}"
        try:
            value = int(text.strip().replace("_", ""), 10)
        except (ValueError, AttributeError):
            raise argparse.ArgumentTypeError(want) from None
        if (min is not None and value < min) or (max is not None and value > max):
            raise argparse.ArgumentTypeError(want)
        return value

    parse.__name__ = "integer"
    return parse


def real(lo: float | None = None, hi: float | None = None, *, lo_open: bool = False, inf_ok: bool = False):
    """argparse ``type=`` for a finite real option in [lo, hi] (``lo_open``: > lo; ``inf_ok``: "inf" allowed)."""
    import argparse
    import math

    def parse(text: str) -> float:
        parts = []
        if lo is not None:
            parts.append(f"{'>' if lo_open else '>='} {lo:g}")
        if hi is not None:
            parts.append(f"<= {hi:g}")
        want = f"must be a {'' if inf_ok else 'finite '}number{' ' + ' and '.join(parts) if parts else ''}, got {text!r}"
        try:
            value = float(text)
        except (ValueError, TypeError):
            raise argparse.ArgumentTypeError(want) from None
        # only the word "inf" means no limit: 1e400 overflowing to inf is a typo, not a request
        explicit_inf = text.strip().lower().lstrip("+") in ("inf", "infinity")
        if math.isnan(value) or (math.isinf(value) and not (inf_ok and explicit_inf)):
            raise argparse.ArgumentTypeError(want)
        if lo is not None and (value < lo or (lo_open and value == lo)):
            raise argparse.ArgumentTypeError(want)
        if hi is not None and value > hi:
            raise argparse.ArgumentTypeError(want)
        return value

    parse.__name__ = "real"
    return parse
