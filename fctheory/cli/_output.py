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
import hashlib
import io
import json
import math
import sys
from dataclasses import fields, is_dataclass

import numpy as np

SCHEMA = "fctheory/1"
#: widest table line the commands print (the tests hold every command to it)
WIDTH = 100
#: Z is written out in the task object up to this many entries (K·L); beyond, only its SHA-256
Z_MAX_ENTRIES = 10_000

_PACKAGES = ("numpy", "scipy", "numba", "mpmath", "pandas", "pyarrow", "hypothesis", "matplotlib", "torch",
             "safetensors", "dask", "cupy")


def versions() -> dict:
    """Python and the installed versions of the packages fctheory uses (from the package metadata: nothing
    is imported, so listing torch or cupy costs nothing)."""
    from importlib import metadata  # noqa: PLC0415

    out = {"python": sys.version.split()[0]}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            if name in ("numpy", "scipy", "numba", "mpmath"):  # required: always listed
                out[name] = None
    return out


def task_object(task) -> dict:
    """The task as a JSON object: a task file (``fctheory.diagnosis.task_from_dict`` reads it back) plus n_w.

    Z is ``"full"`` (all n_c^L rows in lexicographic order), the K×L list when K·L ≤ 10 000, else omitted
    and referenced by ``Z_sha256`` (SHA-256 of the int64 C-order bytes of Z).
    """
    from ..diagnosis.files import task_to_dict  # noqa: PLC0415

    t = task_to_dict(task)
    t.pop("format", None)
    t.pop("version", None)
    out = {"n_c": int(t["n_c"]), "s_c": int(t["s_c"]), "L": int(t["L"]), "K": int(t["K"]),
           "n_w": int(task.n_w), "mu": t["mu"]}
    if isinstance(t["Z"], str) or task.K * task.L <= Z_MAX_ENTRIES:
        out["Z"] = t["Z"]
    else:
        out["Z_sha256"] = hashlib.sha256(np.ascontiguousarray(task.Z, dtype=np.int64).tobytes()).hexdigest()
    return out


def setting_object(*, n_c, L, K, n_w=None, s_c=None, mu="uniform") -> dict:
    """The task object of a setting given by its sizes only (the predictors): no Z, K may be a float."""
    if s_c is None and n_w is not None:
        s_c = n_w // n_c
    if n_w is None and s_c is not None:
        n_w = n_c * s_c
    return {"n_c": n_c, "s_c": s_c, "L": L, "K": K, "n_w": n_w, "mu": mu}


def _is_mpf(v) -> bool:
    return type(v).__module__.startswith("mpmath") and hasattr(v, "_mpf_")


def mp_str(v, dps: int) -> str:
    """An mpmath number as a decimal string with ``dps`` significant digits (its full working precision)."""
    import mpmath  # noqa: PLC0415

    return mpmath.nstr(v, dps, min_fixed=-mpmath.inf, max_fixed=mpmath.inf) if math.isfinite(v) else str(v)


def jsonable(v, notes: list, path: str = "", *, dps: int = 50):
    """``v`` as JSON values: numpy → Python, arrays → lists, dataclasses → objects, mpf → strings,
    NaN/±inf → None with a note naming ``path``."""
    if v is None or isinstance(v, (str, bool)):
        return v
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        v = float(v)
        if math.isfinite(v):
            return v
        notes.append(f"{path or 'value'}: {'NaN' if math.isnan(v) else ('inf' if v > 0 else '-inf')} written as null")
        return None
    if _is_mpf(v):
        return mp_str(v, dps)
    if isinstance(v, dict):
        return {str(k): jsonable(x, notes, f"{path}.{k}" if path else str(k), dps=dps) for k, x in v.items()}
    if isinstance(v, np.ndarray):
        if v.ndim == 0:
            return jsonable(v[()], notes, path, dps=dps)
        return [jsonable(x, notes, f"{path}[{i}]", dps=dps) for i, x in enumerate(v)]
    if isinstance(v, (list, tuple)):
        return [jsonable(x, notes, f"{path}[{i}]", dps=dps) for i, x in enumerate(v)]
    if is_dataclass(v) and not isinstance(v, type):
        return jsonable({f.name: getattr(v, f.name) for f in fields(v)}, notes, path, dps=dps)
    if hasattr(v, "__fspath__"):
        return str(v)
    return str(v)


def envelope(command: str, *, task=None, parameters=None, results=None, notes=None, dps: int = 50) -> dict:
    """The ``fctheory/1`` object of one command's output (see the module docstring)."""
    from .. import __version__  # noqa: PLC0415

    notes = list(notes or [])
    if task is not None and not isinstance(task, dict):
        task = task_object(task)
    out = {"schema": SCHEMA, "command": command, "fctheory_version": __version__, "versions": versions(),
           "task": None if task is None else jsonable(task, notes, "task", dps=dps),
           "parameters": jsonable(dict(parameters or {}), notes, "parameters", dps=dps),
           "results": jsonable(results if results is not None else {}, notes, "results", dps=dps)}
    out["notes"] = notes
    return out


def print_json(command: str, **kw) -> None:
    """Print the envelope on one line (strict JSON: ``allow_nan=False``, every NaN/inf was turned into null)."""
    print(json.dumps(envelope(command, **kw), allow_nan=False))


def say(text: str, indent: str = "    ") -> None:
    """Print a line of prose wrapped at :data:`WIDTH` columns (continuation lines indented)."""
    import textwrap  # noqa: PLC0415

    print(textwrap.fill(text, WIDTH, subsequent_indent=indent, break_on_hyphens=False, break_long_words=False)
          if len(text) > WIDTH else text, flush=True)


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
    if _is_mpf(v):
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


__all__ = ["SCHEMA", "WIDTH", "versions", "task_object", "setting_object", "mp_str", "jsonable", "envelope",
           "print_json", "say", "csv_text", "print_csv", "add_format_options"]
