"""Run directories: the folder ``fctheory train --out DIR`` writes, and single weights files read as runs.

Run directory: ``weights.npz`` (``W`` d×n_w, ``U`` K×L·d, ``Z``, ``mu``; written by
:func:`fctheory._files.write_npz`, kind ``"weights"``), ``task.json`` (a task file, see
:mod:`fctheory.io.tasks`) and ``config.json`` (``{"format": "fctheory-run", "version": 1, ...}`` and the
training configuration: ``lam_W``, ``lam_U``, ``layernorm``, ``eps``, ...). :func:`save_run` writes
one, :func:`load_run` reads it, or a single weights file (:func:`~fctheory.io.load_weights`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from .._files import load_json, write_json, write_npz
from .._validate import Anything, Array, Bool, Instance, PathOut, Real, as_path, fail, public, result_type
from ..task import Task
from .checkpoint import read_checkpoint
from .tasks import check_latent, load_task, make_task, save_task
from .weights import load_weights

__all__ = ["load_run", "save_run", "RunFiles", "RUN_FORMAT"]

RUN_FORMAT = "fctheory-run"


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
    p = as_path(name, value)
    if not os.path.exists(p):
        fail(name, p, "does not exist (expected a weights file or a run directory)")
    return p


@public(path=Anything("an existing weights file or run directory (checked in the body)"), allow_pickle=Bool())
def load_run(path, *, allow_pickle=False):
    """Weights, task and configuration from a run directory or a single weights file.

    * a folder written by ``fctheory train --out DIR``: ``weights.npz``, ``task.json``, ``config.json``;
    * a trainer checkpoint (``*.ckpt.npz``): weights, task and configuration inside;
    * an ``.npz`` with ``W``/``U`` (task when it holds ``Z``, with ``mu`` or uniform; the configuration's
      ``lam_W``, ``lam_U``, ``layernorm`` when it holds them, as ``fctheory optimum --out`` writes) or a state_dict
      (``.npz``, ``.safetensors``, PyTorch) — see :func:`~fctheory.io.load_weights`.

    ``allow_pickle=True`` also reads a fully pickled ``nn.Module`` — this executes code from the file.
    """
    path = _exists("path", path)
    if os.path.isdir(path):
        wp = os.path.join(path, "weights.npz")
        if not os.path.isfile(wp):
            fail(
                "path",
                path,
                "is a folder without weights.npz (expected a run directory written by fctheory train --out DIR)",
            )
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
    if "config" in extra and "shape" in extra:  # a trainer checkpoint: read through its verified reader
        source = "checkpoint"
        ck = read_checkpoint(path, name="path")
        task, config = ck["task"], ck["config"]
    elif "Z" in extra:
        Z = check_latent(extra["Z"], "Z")
        L = Z.shape[1]
        n_w = W.shape[1]
        n_c = int(extra["n_c"]) if "n_c" in extra else int(Z.max()) + 1
        if n_c < 2 or n_w % n_c:
            fail(
                "Z", Z, f"the file's Z implies n_c = {n_c}, which does not divide n_w = {n_w}; pass the task explicitly"
            )
        mu = np.asarray(extra["mu"], dtype=np.float64) if "mu" in extra else "uniform"
        task = make_task(n_c, n_w // n_c, L, Z, mu, "Z")
        config = _recorded_decays(extra)
    return _checked(RunFiles(W, U, task, config, source, path))


def _recorded_decays(extra: dict) -> dict:
    """The decays and the network an ``.npz`` of weights records (``fctheory optimum --out`` writes them)."""
    config = {}
    for key in ("lam_W", "lam_U"):
        if key in extra:
            config[key] = Real(lo=0.0)(key, extra[key].item() if np.ndim(extra[key]) == 0 else extra[key])
    if "layernorm" in extra:
        config["layernorm"] = Bool()("layernorm", extra["layernorm"].item() if np.ndim(extra["layernorm"]) == 0
                                     else extra["layernorm"])  # fmt: skip
    return config


def _checked(run: RunFiles) -> RunFiles:
    if run.task is not None:
        t = run.task
        if run.W.shape[1] != t.n_w:
            fail("W", run.W, f"has {run.W.shape[1]} columns but the recorded task has n_w = {t.n_w} words")
        if run.U.shape != (t.K, t.L * run.W.shape[0]):
            fail(
                "U",
                run.U,
                f"must have shape (K, L*d) = ({t.K}, {t.L * run.W.shape[0]}) for the recorded task, got {run.U.shape}",
            )
    return run


@public(path=PathOut(dir=True), task=Instance(Task), W=Array(ndim=2), U=Array(ndim=2), config=Instance(dict))
def save_run(path, task, W, U, config):
    """Write a run directory (``weights.npz``, ``task.json``, ``config.json``) readable by :func:`load_run`."""
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
