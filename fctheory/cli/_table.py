"""Tiny plain-text table and JSON helpers shared by the sub-commands."""

from __future__ import annotations

import shlex

import argparse
import json
import math
import textwrap

import numpy as np


#: a list entry that is no number (NaN): the list keeps its positions, the cell never says "nan"
MISSING_ENTRY = "n/a"


def fmt(v, digits: int = 10) -> str:
    """A table cell. A number that does not exist (None, NaN) is an empty cell, never ``nan``: the row that holds
    it says why elsewhere (``fctheory risk``'s ``no_prediction_because``); inside a list it is ``n/a``."""
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        v = float(v)
        if math.isnan(v):
            return ""
        if v == 0 or (1e-4 <= abs(v) < 1e7):
            return f"{v:.{digits}g}"
        return f"{v:.{digits - 1}e}"
    if isinstance(v, (list, tuple, np.ndarray)):
        return "[" + ", ".join(fmt(x, digits) or MISSING_ENTRY for x in np.ravel(np.asarray(v, dtype=object))) + "]"
    return "" if v is None else str(v)


def table(rows, headers, width: int = 100) -> str:
    """Plain-text table at most ``width`` columns wide; the first column (the row labels) is never wrapped.

    The widest of the other columns are narrowed (never below 8) and their cells wrapped onto continuation
    lines, so long statements or reasons stay readable in full. When the labels leave too little room for
    that, each label is printed on a line of its own, above its row of values (indented by two spaces).
    """
    cells = [[fmt(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    rest = widths[1:]
    if len(widths) == 1 or _narrow(rest, width - widths[0] - _SEP):
        return "\n".join(_rows([list(headers), None, *cells], widths[:1] + rest))
    rest = widths[1:]
    _narrow(rest, width - len(_LABEL_INDENT))
    out = [headers[0]] + [_LABEL_INDENT + line for line in _rows([list(headers[1:]), None], rest)]
    for r in cells:
        out += [r[0]] + [_LABEL_INDENT + line for line in _rows([r[1:]], rest)]
    return "\n".join(out)


_LABEL_INDENT = "  "
_SEP = 2  # spaces between columns


def _narrow(widths: list, width: int) -> bool:
    """Narrow ``widths`` in place, widest first and never below 8, to fit ``width``; whether they fit."""
    while sum(widths) + _SEP * (len(widths) - 1) > width and widths and max(widths) > 8:
        widths[widths.index(max(widths))] -= 1  # one column at a time: the widest ones end up equal
    return sum(widths) + _SEP * (len(widths) - 1) <= width


def _rows(rows: list, widths: list) -> list:
    """The lines of ``rows`` (lists of cells; ``None``: the dashes under the header) in columns of ``widths``.

    The first column is never wrapped (it was not narrowed); the others wrap at their width.
    """
    out = []
    for row in rows:
        if row is None:
            out.append((" " * _SEP).join("-" * w for w in widths))
            continue
        wrapped = [
            textwrap.wrap(c, w, break_long_words=True, break_on_hyphens=False) or [""] if len(c) > w else [c]
            for c, w in zip(row, widths)
        ]
        for j in range(max(len(col) for col in wrapped)):
            out.append(
                (" " * _SEP).join((col[j] if j < len(col) else "").ljust(w) for col, w in zip(wrapped, widths)).rstrip()
            )
    return out


def hint(label: str, text: str) -> str:
    """``label: text`` as one line that is never wrapped, however long: ``text`` is a command or a path the user
    copies, and a line break inside it would break the copy. The 100-column rule holds for tables and prose; the
    tests exempt exactly these lines (``label`` is lower-case words; ``text`` a ``fctheory`` command or one token:
    a path with spaces, as any folder may have, is shell-quoted so that it stays one token to copy).
    """
    if not text.startswith("fctheory "):
        text = shlex.quote(text)
    return f"{label}: {text}"


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

    def parse(text: str) -> int:
        rng = " and ".join(
            s for s in (f">= {min}" if min is not None else "", f"<= {max}" if max is not None else "") if s
        )
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

    def parse(text: str) -> float:
        parts = []
        if lo is not None:
            parts.append(f"{'>' if lo_open else '>='} {lo:g}")
        if hi is not None:
            parts.append(f"<= {hi:g}")
        want = (
            f"must be a {'' if inf_ok else 'finite '}number{' ' + ' and '.join(parts) if parts else ''}, got {text!r}"
        )
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
