"""Task files, latent variables Z and word frequencies μ from files, and the task objects of results.

Task file (JSON, written atomically by :func:`save_task`, read by :func:`load_task`)::

    {"format": "fctheory-task", "version": 1,
     "n_c": 3, "s_c": 2, "L": 2, "K": 9,
     "Z": "full" | [[0, 0], [0, 1], ...],        # "full": all n_c^L rows in lexicographic order
     "mu": "uniform" | "zipf" | [0.5, 0.5]}      # the same law in every concept

plus ``"allow_duplicates": true`` for a task whose rows may repeat (``Task.random(..., replace=True)``).
Floats are written with ``repr`` precision, so a saved task reads back bit for bit.

Latent variables (:func:`load_latent`) and frequencies (:func:`load_frequencies`): ``.npy`` (no
pickles), ``.csv``/``.txt``/``.tsv`` (one row per line, a header line skipped) or ``.json`` (a list,
or an object with a ``"Z"``/``"mu"`` entry).

The task object of a result (:func:`task_object`, the ``task`` field of every ``--json`` output) is a
task file without ``format``/``version``, plus ``n_w``; a Z of more than 10 000 entries is replaced
by ``Z_sha256``. :func:`task_from_sizes` builds the task that sizes describe (command-line options, a
sweep point's parameters).
"""

from __future__ import annotations

import csv
import hashlib
import io
import math

import numpy as np

from .._errors import FCTheoryError
from .._files import load_json, write_json
from .._validate import Anything, Bool, Instance, Int, PathIn, PathOut, Seed, check_mu, fail, public
from ..task import Task, digits

__all__ = [
    "load_task",
    "save_task",
    "task_to_dict",
    "task_from_dict",
    "load_latent",
    "load_frequencies",
    "task_object",
    "task_from_sizes",
    "task_fingerprint",
    "TASK_FORMAT",
    "TASK_VERSION",
    "Z_MAX_ENTRIES",
]

TASK_FORMAT = "fctheory-task"
TASK_VERSION = 1
#: Z is written out in a task object up to this many entries (K·L); beyond, only its SHA-256
Z_MAX_ENTRIES = 10_000
#: a full task has n_c^L rows; beyond this many, K must be given (a full task that large is never built)
_FULL_MAX = 10**7


# ----------------------------------------------------------------------------- task files
def _mu_entry(task: Task):
    s = task.s_c
    if np.array_equal(task.mu, check_mu("uniform", s)):
        return "uniform"
    if np.array_equal(task.mu, check_mu("zipf", s)):
        return "zipf"
    return [float(v) for v in task.mu]


@public(task=Instance(Task))
def task_to_dict(task):
    """The JSON object of a task file (see the module docstring); exact (floats by ``repr``)."""
    full = task.is_full and np.array_equal(task.Z, digits(np.arange(task.K, dtype=np.int64), task.n_c, task.L))
    out = {
        "format": TASK_FORMAT,
        "version": TASK_VERSION,
        "n_c": task.n_c,
        "s_c": task.s_c,
        "L": task.L,
        "K": task.K,
        "Z": "full" if full else task.Z.tolist(),
        "mu": _mu_entry(task),
    }
    if task.allow_duplicates:  # Task.random(replace=True): written only when set, so older readers see no change
        out["allow_duplicates"] = True
    return out


def _int_field(obj, key, name, min_):
    if key not in obj:
        fail(name, f"missing {key!r}", f"a task needs {key!r}")
    v = obj[key]
    if isinstance(v, bool) or not isinstance(v, int):
        fail(f"{name}:{key}", v, "must be an integer")
    if v < min_:
        fail(f"{name}:{key}", v, f"must be >= {min_}")
    return v


@public(obj=Instance(dict, label="dict (the JSON object of a task file)"))
def task_from_dict(obj):
    """Build the :class:`~fctheory.Task` of a task-file object; refuses malformed entries naming them."""
    name = "task"
    fmt = obj.get("format", TASK_FORMAT)
    if fmt != TASK_FORMAT:
        fail(name, fmt, f"is not an fctheory task (format must be {TASK_FORMAT!r})")
    ver = obj.get("version", TASK_VERSION)
    if isinstance(ver, bool) or not isinstance(ver, int) or ver > TASK_VERSION or ver < 1:
        fail(f"{name}:version", ver, f"this fctheory reads task format versions 1..{TASK_VERSION}")
    n_c = _int_field(obj, "n_c", name, 2)
    s_c = _int_field(obj, "s_c", name, 1)
    L = _int_field(obj, "L", name, 1)
    mu = obj.get("mu", "uniform")
    if not isinstance(mu, str):
        if not isinstance(mu, list) or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in mu):
            fail(f"{name}:mu", mu, "must be 'uniform', 'zipf' or a list of numbers")
        mu = check_mu(np.array(mu, dtype=np.float64), s_c, name=f"{name}:mu")
    elif mu not in ("uniform", "zipf"):
        fail(f"{name}:mu", mu, "must be 'uniform', 'zipf' or a list of numbers")
    Z = obj.get("Z", "full")
    if isinstance(Z, str):
        if Z != "full":
            fail(f"{name}:Z", Z, "must be 'full' or a K x L list of concept indices")
        if "K" in obj and obj["K"] != n_c**L:
            fail(f"{name}:K", obj["K"], f"Z='full' has n_c**L = {n_c**L} rows")
        return Task.full(n_c, s_c, L, mu=mu)
    allow = obj.get("allow_duplicates", False)
    if not isinstance(allow, bool):
        fail(f"{name}:allow_duplicates", allow, "must be true or false")
    Z = check_latent(Z, f"{name}:Z", n_c=n_c, L=L, distinct=not allow)
    if "K" in obj and obj["K"] != Z.shape[0]:
        fail(f"{name}:K", obj["K"], f"Z has {Z.shape[0]} rows")
    return make_task(n_c, s_c, L, Z, mu, f"{name}:Z", allow)


def make_task(n_c, s_c, L, Z, mu, zname, allow_duplicates=False):
    """``Task(...)``, its refusals of Z renamed to ``zname`` (``task:Z``, ``--Z``) so they name the entry."""
    try:
        return Task(n_c, s_c, L, Z, mu, allow_duplicates=allow_duplicates)
    except FCTheoryError as exc:
        msg = str(exc)
        if msg.startswith("Z="):
            raise FCTheoryError(zname + msg[1:]) from None
        raise


@public(path=PathIn())
def load_task(path):
    """Read a task file (JSON, see the module docstring) written by :func:`save_task` or by hand.

    Raises :class:`~fctheory.FCTheoryError` naming the entry (``task:Z``, ``task:mu``, ...) for a
    damaged file, a newer format, missing fields, Z with the wrong shape, out-of-range or
    duplicated rows, or frequencies that are not a probability vector.
    """
    obj = load_json(path, name="task")
    if not isinstance(obj, dict):
        fail("task", path, "must hold a JSON object with n_c, s_c, L, Z, mu")
    return task_from_dict(obj)


@public(task=Instance(Task), path=PathOut())
def save_task(task, path):
    """Write ``task`` to ``path`` as a task file (JSON, atomic: temporary file then rename); returns path."""
    return write_json(path, task_to_dict(task), name="path")


# ----------------------------------------------------------------------------- Z and mu from files
def check_latent(value, name, *, n_c=None, L=None, K=None, distinct=True):
    """``value`` as a K×L int64 array of 0-based concept indices (distinct rows unless told); refusals name ``name``."""
    try:
        a = np.asarray(value)
    except Exception:
        fail(name, value, "must be a rectangular K x L array of concept indices")
    if a.dtype == object or a.dtype.kind not in "iuf":
        fail(name, value, "must be a rectangular K x L array of integer concept indices")
    if a.ndim != 2:
        fail(name, a, f"must be a 2-D array K x L, got shape {a.shape}")
    if a.size == 0:
        fail(name, a, "must contain at least one latent variable")
    if a.dtype.kind == "f":
        if not np.all(np.isfinite(a)) or np.any(a != np.round(a)):
            fail(name, a, "entries must be integer concept indices")
        a = a.astype(np.int64)
    a = a.astype(np.int64)
    if L is not None and a.shape[1] != L:
        fail(name, a, f"must have L = {L} columns, got shape {a.shape}")
    if K is not None and a.shape[0] != K:
        fail(name, a, f"must have K = {K} rows (one per class), got shape {a.shape}")
    if a.min() < 0:
        fail(name, a, "entries must be concept indices >= 0 (0-based)")
    if n_c is not None and a.max() >= n_c:
        fail(name, a, f"entries must be concept indices in [0, n_c-1] = [0, {n_c - 1}] (0-based)")
    if distinct and np.unique(a, axis=0).shape[0] != a.shape[0]:
        fail(name, a, "rows (latent variables) must be mutually distinct")
    return a


def _read_table(path, name):
    """Numbers from .npy, .csv/.txt/.tsv or .json (list, or object with one array entry)."""
    low = path.lower()
    if low.endswith(".npy"):
        try:
            return np.load(path, allow_pickle=False)
        except Exception as exc:  # noqa: BLE001 - any failure to parse is a bad file
            fail(name, path, f"is not a readable .npy file without pickles ({type(exc).__name__}: {exc})")
    if low.endswith(".json"):
        return load_json(path, name=name)
    if low.endswith((".csv", ".txt", ".tsv")):
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError) as exc:
            fail(name, path, f"could not be read ({type(exc).__name__}: {exc})")
        delim = "\t" if low.endswith(".tsv") else ","
        rows = []
        for i, row in enumerate(csv.reader(io.StringIO(text), delimiter=delim)):
            cells = [c.strip() for c in (row if delim != "," or len(row) > 1 else row[0].split())] if row else []
            cells = [c for c in cells if c != ""]
            if not cells or cells[0].startswith("#"):
                continue
            try:
                rows.append([float(c) for c in cells])
            except ValueError:
                if i == 0 and not rows:  # a header line
                    continue
                fail(name, path, f"line {i + 1} is not a row of numbers: {row!r}")
        if not rows:
            fail(name, path, "holds no numbers")
        if len({len(r) for r in rows}) != 1:
            fail(name, path, "rows have different lengths")
        return np.array(rows)
    fail(name, path, "must be a .npy, .csv, .txt, .tsv or .json file")


@public(path=PathIn(), n_c=Int(min=2).or_none(), L=Int(min=1).or_none(), K=Int(min=1).or_none())
def load_latent(path, *, n_c=None, L=None, K=None):
    """Latent variables Z (K×L, 0-based concept indices, distinct rows) from ``.npy``, ``.csv`` or ``.json``.

    CSV: one latent variable per line, comma- or space-separated (a header line is skipped).
    JSON: a list of lists, or an object with a ``"Z"`` entry (a task file works too).
    ``n_c``, ``L``, ``K`` are checked when given. Refusals name ``Z``.
    """
    data = _read_table(path, "Z")
    if isinstance(data, dict):
        if "Z" not in data:
            fail("Z", path, "a JSON object must have a 'Z' entry")
        data = data["Z"]
    return check_latent(data, "Z", n_c=n_c, L=L, K=K)


@public(path=PathIn(), s_c=Int(min=1).or_none(), normalize=Bool())
def load_frequencies(path, *, s_c=None, normalize=False):
    """Word frequencies μ (length s_c, positive) from ``.npy``, ``.csv`` or ``.json``.

    The numbers must sum to 1 (within 1e-12) unless ``normalize=True``, which divides them by their
    sum (counts are then accepted). JSON: a list, or an object with a ``"mu"`` entry. A text file
    holding only ``uniform`` or ``zipf`` is not accepted here: pass the name instead.
    """
    data = _read_table(path, "mu")
    if isinstance(data, dict):
        if "mu" not in data:
            fail("mu", path, "a JSON object must have a 'mu' entry")
        data = data["mu"]
    try:
        a = np.asarray(data, dtype=np.float64)
    except (TypeError, ValueError):
        fail("mu", path, "must hold a list of numbers")
    a = a.reshape(-1) if a.ndim == 2 and 1 in a.shape else a
    if a.ndim != 1:
        fail("mu", a, f"must be a vector of s_c frequencies, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        fail("mu", a, "must be finite")
    if normalize:
        if np.any(a <= 0):
            fail("mu", a, "frequencies (or counts) must be strictly positive")
        a = a / a.sum()
    return check_mu(a, s_c, name="mu")


# ----------------------------------------------------------------------------- the task of a result
@public(task=Instance(Task), z_max_entries=Int(min=0))
def task_object(task: Task, *, z_max_entries: int = Z_MAX_ENTRIES) -> dict:
    """The task as a JSON object: a task file (:func:`task_from_dict` reads it back) without ``format`` and
    ``version``, plus ``n_w``.

    Keys, in order: ``n_c``, ``s_c``, ``L``, ``K``, ``n_w``, ``mu`` (``"uniform"``, ``"zipf"`` or the list),
    then ``Z``: ``"full"`` (all n_c^L rows in lexicographic order) or the K×L list when K·L ≤ ``z_max_entries``,
    else ``Z_sha256`` (SHA-256 of the int64 C-order bytes of Z) instead; ``allow_duplicates`` is not written.
    """
    t = task_to_dict(task)
    out = {
        "n_c": int(t["n_c"]),
        "s_c": int(t["s_c"]),
        "L": int(t["L"]),
        "K": int(t["K"]),
        "n_w": int(task.n_w),
        "mu": t["mu"],
    }
    if isinstance(t["Z"], str) or task.K * task.L <= z_max_entries:
        out["Z"] = t["Z"]
    else:
        out["Z_sha256"] = hashlib.sha256(np.ascontiguousarray(task.Z, dtype=np.int64).tobytes()).hexdigest()
    return out


def _full_rows(n_c: int, L: int):
    """n_c^L, or None when it exceeds the size of a full task fctheory ever builds."""
    # L > 24 first: 2**24 > 10**7 already, and L * log(n_c) would overflow for an astronomically large L
    return None if L > 24 or L * math.log(n_c) > math.log(_FULL_MAX) else n_c**L


@public(
    n_c=Int(min=2),
    s_c=Int(min=1),
    L=Int(min=1),
    K=Int(min=1).or_none(),
    Z=Anything("K x L concept indices, or None (checked in the body)"),
    mu=Anything("'uniform', 'zipf' or s_c frequencies (checked by Task)"),
    seed=Seed(),
    random_Z=Bool(),
    names=Instance(dict).or_none(),
    hint=Instance(str),
)
def task_from_sizes(n_c, s_c, L, *, K=None, Z=None, mu="uniform", seed=None, random_Z=True, names=None, hint=""):
    """The task that sizes describe: the one builder behind command-line options and sweep points.

    * ``Z`` given: ``Task(n_c, s_c, L, Z, mu)``;
    * ``K`` omitted or equal to n_c^L: ``Task.full(n_c, s_c, L, mu=mu)``;
    * otherwise ``Task.random(n_c, s_c, L, K, mu=mu, seed=seed)`` when ``random_Z``; refused (naming Z,
      followed by ``hint``) when not, as a random Z would be a different task than the one meant.

    ``names`` maps ``"K"`` and ``"Z"`` to the names the refusals of the body use (``{"K": "--K"}`` on the
    command line, where the options were checked before the call); refusals are
    :class:`~fctheory.FCTheoryError`.
    """
    nm = {"K": "K", "Z": "Z"} | {k: str(v) for k, v in (names or {}).items()}
    if Z is not None:
        return make_task(n_c, s_c, L, Z, mu, nm["Z"])
    N = _full_rows(n_c, L)
    if K is None:
        if N is None:
            fail(nm["K"], None, f"is required: n_c^L = {n_c}^{L} latent variables are too many for a full task")
        K = N
    if N is not None and K > N:
        fail(nm["K"], K, f"must be <= n_c^L = {N} (the number of distinct latent variables)")
    if K == N:
        return Task.full(n_c, s_c, L, mu=mu)
    if not random_Z:
        fail(
            nm["Z"],
            None,
            f"the latent variables are needed: K = {K} < n_c^L = {n_c}^{L}, and a random Z would be "
            f"a different task{hint}",
        )
    return Task.random(n_c, s_c, L, K, mu=mu, seed=seed)


@public(task=Instance(Task))
def task_fingerprint(task: Task) -> str:
    """SHA-256 of a task: its sizes, latent variables (little-endian int64, C order) and word frequencies
    (little-endian float64). Two tasks with the same fingerprint are the same problem; a stored result (the main
    job's certified optima, the dispatcher's stored sample averages) names the task it is for by it.

    Parameters
    ----------
    task : Task

    Returns
    -------
    str
        64 hexadecimal digits.
    """
    head = f"{task.n_c},{task.s_c},{task.L},{task.K};".encode()
    body = np.ascontiguousarray(task.Z, dtype="<i8").tobytes() + np.ascontiguousarray(task.mu, dtype="<f8").tobytes()
    return hashlib.sha256(head + body).hexdigest()
