"""The trainer's checkpoint file: layout, writing, reading and verification (format versions 1 and 2).

A checkpoint is an ``.npz`` written atomically by :func:`fctheory._files.write_npz` with a ``__format__``
header of kind :data:`CHECKPOINT_KIND` (format 2; format 1 files, written before headers existed, are read
and verified the same way). Entries:

* ``version`` — the format version;
* ``E`` (n_w×d) and ``U`` (K×L·d) — the weights in the run's dtype (E = Wᵀ, word-major);
* ``epochs_done``, ``wall_time`` — progress and the seconds spent training;
* ``config`` — the JSON of the training configuration (a dict; the trainer's ``TrainConfig.to_dict()``);
* ``Z``, ``mu``, ``shape`` = [n_c, s_c, L] — the task of section 2;
* ``hist_<key>`` for every key of :data:`HISTORY_KEYS` — one number per finished epoch.

This module sits below the trainer: configurations travel as dicts, and the caller passes the function that
validates one (the trainer passes its ``TrainConfig``).
"""

from __future__ import annotations

import json
import math
import os
import zipfile

import numpy as np

from .._errors import FCTheoryError
from .._files import load_npz, write_npz
from .._validate import fail
from ..task import Task

__all__ = ["CHECKPOINT_VERSION", "CHECKPOINT_KIND", "HISTORY_KEYS", "STATE_KEYS", "save_checkpoint", "read_checkpoint"]

#: version of the checkpoint layout; 1 = files written before format headers (still read and verified)
CHECKPOINT_VERSION = 2
CHECKPOINT_KIND = "fctheory.trainer.checkpoint"
#: the per-epoch history a checkpoint stores (and :class:`fctheory.trainer.TrainRun` reports)
HISTORY_KEYS = ("epoch", "loss", "train_acc", "test_acc", "test_loss", "time")
#: configuration entries that determine the trajectory: a resume must agree on all of them
STATE_KEYS = (
    "n_spl",
    "d",
    "layernorm",
    "eps",
    "lr",
    "batch",
    "lam_W",
    "lam_U",
    "seed",
    "dtype",
    "init_scale",
    "n_test",
)
_REQUIRED = ("version", "E", "U", "epochs_done", "wall_time", "config", "Z", "mu", "shape") + tuple(
    f"hist_{k}" for k in HISTORY_KEYS
)
# (key, lowest, highest, NaN allowed): what a finished epoch's history row may hold
_HISTORY_RANGES = (
    ("loss", 0.0, np.inf, False),
    ("train_acc", 0.0, 1.0, False),
    ("test_acc", 0.0, 1.0, True),
    ("test_loss", 0.0, np.inf, True),
    ("time", 0.0, np.inf, False),
)


def save_checkpoint(path, task: Task, config: dict, E, U, history: dict, epochs_done: int, wall_time: float) -> str:
    """Write a checkpoint atomically (temporary file in the same folder, then ``os.replace``).

    ``config`` is the configuration as a JSON-ready dict (an object with ``to_dict()`` is accepted too).
    Returns the path written.
    """
    if not isinstance(config, dict):
        config = config.to_dict()
    arrays = {f"hist_{k}": np.asarray(v, dtype=np.float64) for k, v in history.items()}
    return write_npz(
        os.fspath(path),
        dict(
            version=np.array(CHECKPOINT_VERSION),
            E=E,
            U=U,
            epochs_done=np.array(epochs_done),
            wall_time=np.array(wall_time),
            config=np.array(json.dumps(config)),
            Z=task.Z,
            mu=task.mu,
            shape=np.array([task.n_c, task.s_c, task.L]),
            **arrays,
        ),
        kind=CHECKPOINT_KIND,
        name="checkpoint",
    )


def _has_header(path) -> bool:
    try:
        with zipfile.ZipFile(path) as zf:
            return "__format__.npy" in zf.namelist()
    except Exception:  # noqa: BLE001 - damaged: let load_npz name the problem
        return True


def _scalar(z, key, kind, name, path):
    a = z[key]
    if a.shape != () or a.dtype.kind not in kind:
        fail(
            name, path, f"is a damaged checkpoint: entry {key!r} must be a scalar, got shape {a.shape} dtype {a.dtype}"
        )
    return a.item()


def _read_task(z, name, path) -> Task:
    shape = z["shape"]
    if shape.shape != (3,) or shape.dtype.kind not in "iu":
        fail(name, path, f"is a damaged checkpoint: 'shape' must be [n_c, s_c, L], got {shape!r}")
    try:
        # duplicated rows can only come from a task built with allow_duplicates (Task.random(replace=True))
        task = Task(*(int(v) for v in shape), z["Z"], z["mu"], allow_duplicates=True)
        if task.n_distinct == task.K:
            task = Task._trusted(task.n_c, task.s_c, task.L, task.Z, task.mu)
    except FCTheoryError as exc:
        fail(name, path, f"holds an invalid task ({exc})")
    return task


def _read_config(z, name, path, validate):
    try:
        raw = json.loads(str(z["config"]))
        if not isinstance(raw, dict):
            raise ValueError("not a JSON object")
        return validate(raw)
    except (ValueError, TypeError) as exc:  # FCTheoryError is a ValueError
        fail(name, path, f"holds an invalid configuration ({exc})")


def _check_weights(z, task, c, name, path):
    want = {"E": (task.n_w, c["d"]), "U": (task.K, task.L * c["d"])}
    for key in ("E", "U"):
        A = z[key]
        if A.shape != want[key]:
            fail(
                name,
                path,
                f"does not match its configuration: {key} has shape {A.shape}, expected {want[key]} "
                f"(n_w={task.n_w}, K={task.K}, L={task.L}, d={c['d']})",
            )
        if A.dtype != np.dtype(c["dtype"]):
            fail(name, path, f"does not match its configuration: {key} has dtype {A.dtype}, configured {c['dtype']}")
        if not np.all(np.isfinite(A)):
            fail(name, path, f"is damaged: {key} has non-finite entries")


def _read_history(z, epochs_done, name, path) -> dict:
    hist = {}
    for k in HISTORY_KEYS:
        h = z[f"hist_{k}"]
        if h.shape != (epochs_done,) or h.dtype.kind not in "fiu":
            fail(
                name,
                path,
                f"is damaged: history {k!r} must have one number per epoch ({epochs_done}), "
                f"got shape {h.shape} dtype {h.dtype}",
            )
        hist[k] = h.astype(np.float64)
    if not np.array_equal(hist["epoch"], np.arange(1, epochs_done + 1)):
        fail(name, path, "is damaged: the history's epoch numbers are not 1, 2, …, epochs_done")
    for k, lo, hi, nan_ok in _HISTORY_RANGES:
        h = hist[k]
        ok = (h >= lo) & (h <= hi) & np.isfinite(h) | (np.isnan(h) if nan_ok else False)
        if not np.all(ok):
            fail(name, path, f"is damaged: history {k!r} has entries outside [{lo}, {hi}]")
    return hist


def read_checkpoint(path, name: str = "path", validate_config=dict) -> dict:
    """Read and verify a checkpoint: returns ``task``, ``config``, ``E``, ``U``, ``history``, ``epochs_done``,
    ``wall_time``.

    ``validate_config(raw_dict)`` checks the recorded configuration and returns it (``config`` is what it
    returns; it must have the dict entries ``d``, ``dtype`` and ``epochs`` or a ``to_dict()`` giving them).
    Everything is checked against that configuration: the task (Z, μ), E and U shapes (n_w×d, K×L·d) and
    dtype, finite weights, ``0 ≤ epochs_done ≤ epochs``, one history row per finished epoch numbered
    1…epochs_done, finite non-negative losses and accuracies in [0, 1]. Damaged, truncated, foreign or newer
    files raise :class:`~fctheory.FCTheoryError` naming parameter ``name``.
    """
    path = os.fspath(path)
    header = _has_header(path)
    z = load_npz(path, kind=CHECKPOINT_KIND if header else None, name=name, required=_REQUIRED)
    version = _scalar(z, "version", "iu", name, path)
    if version > CHECKPOINT_VERSION:
        fail(name, path, f"has checkpoint format {version}; this fctheory reads formats 1..{CHECKPOINT_VERSION}")
    if version < 1 or (version >= 2) != header:
        fail(
            name, path, f"is not an fctheory checkpoint (format {version}, header {'present' if header else 'absent'})"
        )
    task = _read_task(z, name, path)
    cfg = _read_config(z, name, path, validate_config)
    c = cfg if isinstance(cfg, dict) else cfg.to_dict()
    _check_weights(z, task, c, name, path)
    epochs_done = _scalar(z, "epochs_done", "iu", name, path)
    if not 0 <= epochs_done <= c["epochs"]:
        fail(name, path, f"is damaged: epochs_done={epochs_done} is outside [0, epochs={c['epochs']}]")
    wall = _scalar(z, "wall_time", "fiu", name, path)
    if not (math.isfinite(wall) and wall >= 0):
        fail(name, path, f"is damaged: wall_time={wall!r} must be finite and >= 0")
    return {
        "task": task,
        "config": cfg,
        "E": z["E"].copy(),
        "U": z["U"].copy(),
        "history": _read_history(z, epochs_done, name, path),
        "epochs_done": int(epochs_done),
        "wall_time": float(wall),
    }
