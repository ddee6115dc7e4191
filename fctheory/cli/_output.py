"""The one output format of every ``fctheory`` command: JSON envelope, CSV rows, 100-column tables.

Every command's ``--json`` prints one object (docs/cli.md, "Output formats")::

    {"schema": "fctheory/1", "command": "risk", "fctheory_version": "1.0.0",
     "versions": {"python": ..., "numpy": ..., "scipy": ..., "numba": ..., "mpmath": ...},
     "task": {"n_c": 3, "s_c": 2, "L": 2, "K": 9, "n_w": 6, "mu": "uniform", "Z": "full"} | null,
     "parameters": {...}, "results": {...}, "notes": [...]}

Numbers are JSON numbers, never strings, except values computed with ``--precision mp``, which are
decimal strings (a JSON number is read back as a double and would lose the digits). A NaN or an
infinity becomes ``null`` and a line in ``notes`` says which field held what. Arrays are lists.
"""

from __future__ import annotations

import csv
import io
import json
import sys
import textwrap

import numpy as np

from .._version import __version__
from ..io import Z_MAX_ENTRIES, task_object, to_json
from ..io import versions as io_versions
from ..io.json import is_mpf, mp_str

SCHEMA = "fctheory/1"
#: widest table line the commands print (the tests hold every command to it)
WIDTH = 100


def versions() -> dict:
    """Python and the installed versions of the packages fctheory uses (the envelope's ``versions``: fctheory's
    own version is its ``fctheory_version`` field). See :func:`fctheory.io.versions`."""
    return io_versions(include_fctheory=False)


def setting_object(*, n_c, L, K, n_w=None, s_c=None, mu="uniform") -> dict:
    """The task object of a setting given by its sizes only (the predictors): no Z, K may be a float."""
    if s_c is None and n_w is not None:
        s_c = n_w // n_c
    if n_w is None and s_c is not None:
        n_w = n_c * s_c
    return {"n_c": n_c, "s_c": s_c, "L": L, "K": K, "n_w": n_w, "mu": mu}


#: the converter of every output (the old name of :func:`fctheory.io.to_json`)
jsonable = to_json


def envelope(command: str, *, task=None, parameters=None, results=None, notes=None, dps: int = 50) -> dict:
    """The ``fctheory/1`` object of one command's output (see the module docstring)."""
    notes = list(notes or [])
    if task is not None and not isinstance(task, dict):
        task = task_object(task)
    out = {
        "schema": SCHEMA,
        "command": command,
        "fctheory_version": __version__,
        "versions": versions(),
        "task": None if task is None else to_json(task, notes, "task", dps=dps),
        "parameters": to_json(dict(parameters or {}), notes, "parameters", dps=dps),
        "results": to_json(results if results is not None else {}, notes, "results", dps=dps),
    }
    out["notes"] = notes
    return out


def print_json(command: str, **kw) -> None:
    """Print the envelope on one line (strict JSON: ``allow_nan=False``, every NaN/inf was turned into null)."""
    print(json.dumps(envelope(command, **kw), allow_nan=False))


def say(text: str, indent: str = "    ") -> None:
    """Print a line of prose wrapped at :data:`WIDTH` columns (continuation lines indented)."""
    print(
        textwrap.fill(text, WIDTH, subsequent_indent=indent, break_on_hyphens=False, break_long_words=False)
        if len(text) > WIDTH
        else text,
        flush=True,
    )


# ----------------------------------------------------------------------------- CSV
def _csv_cell(v, dps: int = 50) -> str:
    if v is None:
        return ""
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return repr(float(v))  # shortest round-trip text: nan, inf as Python writes them
    if is_mpf(v):
        return mp_str(v, dps)
    if isinstance(v, (list, tuple, np.ndarray)):
        return ";".join(_csv_cell(x, dps) for x in np.ravel(np.asarray(v, dtype=object)))
    return str(v)


def csv_text(rows, headers=None, *, dps: int = 50) -> str:
    """One header row, then one row per item. ``rows`` are dicts (headers: their keys in first-seen order)
    or sequences with ``headers`` given. Floats at full double precision; lists joined with ``;``."""
    rows = list(rows)
    if headers is None:
        headers = []
        for r in rows:
            headers += [k for k in r if k not in headers]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(headers)
    for r in rows:
        vals = [r.get(h) for h in headers] if isinstance(r, dict) else list(r)
        w.writerow([_csv_cell(v, dps) for v in vals])
    return buf.getvalue()


def print_csv(rows, headers=None, *, dps: int = 50) -> None:
    sys.stdout.write(csv_text(rows, headers, dps=dps))


def add_format_options(p, *, csv_ok: bool, json_help: str = "machine-readable output (the fctheory/1 JSON object)"):
    """--json (and --csv where the output is rows) as mutually exclusive options."""
    g = p.add_mutually_exclusive_group()
    g.add_argument("--json", action="store_true", help=json_help)
    if csv_ok:
        g.add_argument("--csv", action="store_true", help="CSV: one header row, one row per item")
    return g


__all__ = [
    "SCHEMA",
    "WIDTH",
    "Z_MAX_ENTRIES",
    "versions",
    "task_object",
    "setting_object",
    "mp_str",
    "jsonable",
    "envelope",
    "print_json",
    "say",
    "csv_text",
    "print_csv",
    "add_format_options",
]
