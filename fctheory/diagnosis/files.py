"""Task files, latent variables Z and word frequencies μ from files, and run directories.

Task file (JSON, written atomically by :func:`save_task`, read by :func:`load_task`)::

    {"format": "fctheory-task", "version": 1,
     "n_c": 3, "s_c": 2, "L": 2, "K": 9,
     "Z": "full" | [[0, 0], [0, 1], ...],        # "full": all n_c^L rows in lexicographic order
     "mu": "uniform" | "zipf" | [0.5, 0.5]}      # the same law in every concept

plus ``"allow_duplicates": true`` for a task whose rows may repeat (``Task.random(..., replace=True)``).

Floats are written with ``repr`` precision, so a saved task reads back bit for bit.

Run directory (``fctheory train --out DIR`` without a preset): ``weights.npz`` (``W`` d×n_w,
``U`` K×L·d, ``Z``, ``mu``; written by :func:`fctheory._files.write_npz`, kind ``"weights"``),
``task.json`` and ``config.json`` (the training configuration: ``lam_W``, ``lam_U``,
``layernorm``, ``eps``, ...). :func:`load_run` reads it, or a single weights file.
"""
from __future__ import annotations

import csv
import io
import json
import os
from dataclasses import dataclass, field

import numpy as np

from .._errors import FCTheoryError
from .._files import load_json, write_json
from .._validate import Anything, Array, Bool, Instance, Int, PathIn, PathOut, check_mu, fail, public, result_type
from ..task import Task, _digits

__all__ = ["load_task", "save_task", "task_to_dict", "task_from_dict", "load_latent", "load_frequencies",
           "load_run", "RunFiles", "TASK_FORMAT", "TASK_VERSION"]

TASK_FORMAT = "fctheory-task"
TASK_VERSION = 1
RUN_FORMAT = "fctheory-run"


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
    full = task.is_full and np.array_equal(task.Z, _digits(np.arange(task.K, dtype=np.int64), task.n_c, task.L))
    out = {"format": TASK_FORMAT, "version": TASK_VERSION, "n_c": task.n_c, "s_c": task.s_c, "L": task.L,
           "K": task.K, "Z": "full" if full else task.Z.tolist(), "mu": _mu_entry(task)}
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
    Z = _latent_array(Z, f"{name}:Z", n_c=n_c, L=L, distinct=not allow)
    if "K" in obj and obj["K"] != Z.shape[0]:
        fail(f"{name}:K", obj["K"], f"Z has {Z.shape[0]} rows")
    return _task(n_c, s_c, L, Z, mu, f"{name}:Z", allow)


def _task(n_c, s_c, L, Z, mu, zname, allow_duplicates=False):
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
def _latent_array(value, name, *, n_c=None, L=None, K=None, distinct=True):
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
    return _latent_array(data, "Z", n_c=n_c, L=L, K=K)


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


# ----------------------------------------------------------------------------- run directories
@result_type
@dataclass
class RunFiles:
    """What :func:`load_run` found: weights, and the task and configuration when the source holds them.

    Attributes
    ----------
    W : ndarray, shape (d, n_w)
    U : ndarray, shape (K, L·d)
    task : Task or None
        From ``task.json`` of a run directory, a trainer checkpoint, or ``Z``/``mu`` in an ``.npz``.
    config : dict
        ``lam_W``, ``lam_U``, ``layernorm``, ``eps``, ... when recorded (run directory, checkpoint).
    source : str
        ``"run-dir"``, ``"checkpoint"``, ``"npz"``, ``"safetensors"`` or ``"torch"``.
    path : str
    """

    W: np.ndarray
    U: np.ndarray
    task: Task | None
    config: dict = field(default_factory=dict)
    source: str = ""
    path: str = ""


def _exists(name, value):
    from .._validate import _as_path  # noqa: PLC0415

    p = _as_path(name, value)
    if not os.path.exists(p):
        fail(name, p, "does not exist (expected a weights file or a run directory)")
    return p


@public(path=Anything("an existing weights file or run directory (checked in the body)"), allow_pickle=Bool())
def load_run(path, *, allow_pickle=False):
    """Weights, task and configuration from a run directory or a single weights file.

    * a folder written by ``fctheory train --out DIR``: ``weights.npz``, ``task.json``, ``config.json``;
    * a trainer checkpoint (``*.ckpt.npz``): weights, task and configuration inside;
    * an ``.npz`` with ``W``/``U`` (task when it holds ``Z``, with ``mu`` or uniform) or a state_dict
      (``.npz``, ``.safetensors``, PyTorch) — see :func:`fctheory.risk.load_weights`.

    ``allow_pickle=True`` also reads a fully pickled ``nn.Module`` — this executes code from the file.
    """
    from ..risk.io import load_weights  # noqa: PLC0415

    path = _exists("path", path)
    if os.path.isdir(path):
        wp = os.path.join(path, "weights.npz")
        if not os.path.isfile(wp):
            fail("path", path, "is a folder without weights.npz (expected a run directory written by "
                 "fctheory train --out DIR)")
        W, U, _ = load_weights(wp)
        tp = os.path.join(path, "task.json")
        task = load_task(tp) if os.path.isfile(tp) else None
        cp = os.path.join(path, "config.json")
        config = {}
        if os.path.isfile(cp):
            config = load_json(cp, name="config")
            if not isinstance(config, dict):
                fail("config", cp, "must hold a JSON object")
        return _checked(RunFiles(W, U, task, config, "run-dir", path))
    W, U, extra = load_weights(path, allow_pickle=allow_pickle)
    low = path.lower()
    source = "npz" if low.endswith(".npz") else "safetensors" if low.endswith(".safetensors") else "torch"
    task, config = None, {}
    if "config" in extra and "shape" in extra:  # trainer checkpoint
        source = "checkpoint"
        try:
            config = json.loads(str(extra["config"]))
            n_c, s_c, L = (int(v) for v in np.asarray(extra["shape"]).ravel())
        except (ValueError, TypeError) as exc:
            fail("path", path, f"has a damaged checkpoint configuration ({exc})")
        task = _task(n_c, s_c, L, _latent_array(extra["Z"], "Z", n_c=n_c, L=L), extra["mu"], "Z")
    elif "Z" in extra:
        Z = _latent_array(extra["Z"], "Z")
        L = Z.shape[1]
        n_w = W.shape[1]
        n_c = int(extra["n_c"]) if "n_c" in extra else int(Z.max()) + 1
        if n_c < 2 or n_w % n_c:
            fail("Z", Z, f"the file's Z implies n_c = {n_c}, which does not divide n_w = {n_w}; "
                 "pass the task explicitly")
        mu = np.asarray(extra["mu"], dtype=np.float64) if "mu" in extra else "uniform"
        task = _task(n_c, n_w // n_c, L, Z, mu, "Z")
    return _checked(RunFiles(W, U, task, config, source, path))


def _checked(run: RunFiles) -> RunFiles:
    if run.task is not None:
        t = run.task
        if run.W.shape[1] != t.n_w:
            fail("W", run.W, f"has {run.W.shape[1]} columns but the recorded task has n_w = {t.n_w} words")
        if run.U.shape != (t.K, t.L * run.W.shape[0]):
            fail("U", run.U, f"must have shape (K, L*d) = ({t.K}, {t.L * run.W.shape[0]}) for the recorded task, "
                 f"got {run.U.shape}")
    return run


@public(path=PathOut(dir=True), task=Instance(Task), W=Array(ndim=2), U=Array(ndim=2), config=Instance(dict))
def save_run(path, task, W, U, config):
    """Write a run directory (``weights.npz``, ``task.json``, ``config.json``) readable by :func:`load_run`."""
    from .._files import write_npz  # noqa: PLC0415

    W = np.asarray(W, dtype=np.float64)
    U = np.asarray(U, dtype=np.float64)
    if W.ndim != 2 or W.shape[1] != task.n_w:
        fail("W", W, f"must have shape (d, n_w) = (d, {task.n_w})")
    if U.shape != (task.K, task.L * W.shape[0]):
        fail("U", U, f"must have shape (K, L*d) = ({task.K}, {task.L * W.shape[0]})")
    os.makedirs(path, exist_ok=True)
    write_npz(os.path.join(path, "weights.npz"), {"W": W, "U": U, "Z": task.Z, "mu": task.mu}, kind="weights")
    save_task(task, os.path.join(path, "task.json"))
    cfg = {"format": RUN_FORMAT, "version": 1, **config}
    write_json(os.path.join(path, "config.json"), cfg, name="config")
    return path


__all__ += ["save_run"]
