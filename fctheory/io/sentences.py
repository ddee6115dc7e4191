"""Sentence files: a training set (S, y) on disk, and the trainer's training set of a seed.

A sentence file is an ``.npz`` written by :func:`save_sentences` (header kind :data:`SENTENCES_KIND`) with

* ``S`` — N × L word indices α·s_c + β (int64; the ``X`` of :mod:`fctheory.finite_sample`, what
  :meth:`fctheory.Task.sample` returns), ``y`` — the N class labels;
* optionally the task they come from: ``Z`` (K × L), ``mu`` (n_c × s_c), ``shape`` = [n_c, s_c, L];
* optionally how they were drawn: ``n_spl`` (sentences per class) and ``seed``.

A plain ``np.savez(path, S=S, y=y)`` is read too (without a task). ``fctheory data`` writes these files,
``fctheory certify --data``, ``fctheory optimum --data`` and ``fctheory diagnose --data`` read them.

:func:`training_sentences` is the one home of the trainer's training set: the n_spl sentences per class of
:meth:`fctheory.Task.sample` drawn from ``default_rng([seed, 1])`` (:mod:`fctheory.trainer.data`), so a run's
training objective is known from its task and configuration alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._budget import check_work
from .._files import load_npz, write_npz
from .._validate import Anything, Array, Instance, Int, PathIn, PathOut, fail, public, result_type
from ..task import Task
from .tasks import check_latent, make_task

__all__ = [
    "SENTENCES_KIND", "Sentences", "save_sentences", "load_sentences", "training_sentences", "check_sentences",
    "draw_training",
]  # fmt: skip

SENTENCES_KIND = "sentences"
_INDICES = Array(ndim=2, integer=True, min=0)
_LABELS = Array(ndim=1, integer=True, min=0)


@result_type
@dataclass
class Sentences:
    """What :func:`load_sentences` read.

    Attributes
    ----------
    S : ndarray of int64, shape (N, L)
    y : ndarray of int64, shape (N,)
    task : Task or None
        The task recorded in the file (``Z``, ``mu``, ``shape``), None when it holds none.
    n_spl, seed : int or None
        How the sentences were drawn, when recorded (``fctheory data``).
    path : str
    """

    S: np.ndarray
    y: np.ndarray
    task: Task | None
    n_spl: int | None = None
    seed: int | None = None
    path: str = ""

    @property
    def data(self) -> tuple:
        """(S, y), the ``data=`` of :func:`fctheory.optimum` and :func:`fctheory.certify`."""
        return self.S, self.y


@public(
    path=PathOut(),
    S=_INDICES,
    y=_LABELS,
    task=Instance(Task).or_none(),
    n_spl=Int(min=1, max=10**12).or_none(),
    seed=Int(min=0, max=2**63 - 1).or_none(),
)
def save_sentences(path, S, y, *, task=None, n_spl=None, seed=None) -> str:
    """Write sentences S (N × L word indices) and labels y (N,) to an ``.npz`` sentence file (atomically).

    With ``task`` the file also records the task (so readers need no task options); its sentences must then
    come from it (L columns, words < n_w, labels < K, each word in its class's concept). ``n_spl`` and
    ``seed`` record how the sentences were drawn. Returns the path written.
    """
    if y.shape[0] != S.shape[0]:
        fail("y", y, f"must have one label per sentence ({S.shape[0]}), got {y.shape[0]}")
    if task is not None:
        check_sentences(task, S, y, name="S", name_y="y")
    arrays = {"S": S, "y": y}
    if task is not None:
        arrays.update(Z=task.Z, mu=task.mu, shape=np.array([task.n_c, task.s_c, task.L]))
    for key, v in (("n_spl", n_spl), ("seed", seed)):
        if v is not None:
            arrays[key] = np.array(v, dtype=np.int64)
    return write_npz(path, arrays, kind=SENTENCES_KIND)


@public(path=Anything("an existing sentence file (checked in the body, naming `name`)"), task=Instance(Task).or_none(),
        name=Instance(str))  # fmt: skip
def load_sentences(path, *, task=None, name="path") -> Sentences:
    """Read a sentence file (:func:`save_sentences`, or a plain ``.npz`` with arrays ``S`` and ``y``).

    With ``task``, the sentences are checked against it (and against the file's own task, when it records one);
    refusals name ``name`` (the option or parameter the path came from).

    Returns
    -------
    Sentences
    """
    path = PathIn()(name, path)
    data = load_npz(path, name=name)
    if not {"S", "y"} <= set(data):
        found = sorted(data)
        fail(name, path, f"a sentence file holds arrays 'S' (N x L word indices) and 'y' (N labels); found {found}")
    S, y = _INDICES(name, data["S"]), _LABELS(name, data["y"])
    if y.shape[0] != S.shape[0]:
        fail(name, path, f"holds {S.shape[0]} sentences but {y.shape[0]} labels")
    own = _file_task(data, name, path)
    if task is not None and own is not None and not _same_task(task, own):
        fail(name, path, "records a different task (Z or mu) than the one given")
    if own is not None or task is not None:
        check_sentences(task if task is not None else own, S, y, name=name, name_y=name)
    n_spl = int(data["n_spl"]) if "n_spl" in data else None
    seed = int(data["seed"]) if "seed" in data else None
    return Sentences(S, y, own, n_spl, seed, str(path))


def _file_task(data, name, path):
    if "Z" not in data:
        return None
    Z = check_latent(data["Z"], name)
    if "shape" in data:
        n_c, s_c, L = (int(v) for v in np.asarray(data["shape"]).ravel()[:3])
    else:
        n_c = int(Z.max()) + 1
        if data["S"].size == 0:
            fail(name, path, "records Z without its shape")
        s_c, L = None, Z.shape[1]
    mu = np.asarray(data["mu"], dtype=np.float64) if "mu" in data else "uniform"
    if s_c is None:
        if isinstance(mu, str):
            fail(name, path, "records Z without mu or shape: the words per concept are unknown")
        s_c = mu.shape[-1]
    return make_task(n_c, s_c, L, Z, mu, name)


def _same_task(a: Task, b: Task) -> bool:
    return (a.n_c, a.s_c, a.L) == (b.n_c, b.s_c, b.L) and np.array_equal(a.Z, b.Z) and np.allclose(a.mu, b.mu)


def check_sentences(task: Task, S, y=None, *, name="S", name_y="y") -> None:
    """The sentences belong to ``task``: L columns, words < n_w, labels < K, each word in its class's concept
    (errors name the parameters ``name`` and ``name_y``; ``y=None`` checks the words only)."""
    if S.shape[1] != task.L:
        fail(name, S, f"must have L = {task.L} columns (one word per position), got {S.shape[1]}")
    if S.shape[0] == 0:
        fail(name, S, "must contain at least one sentence")
    if S.max() >= task.n_w:
        fail(name, S, f"word indices must be < n_w = {task.n_w}")
    if y is None:
        return
    if y.shape[0] != S.shape[0]:
        fail(name_y, y, f"must have one label per sentence ({S.shape[0]}), got {y.shape[0]}")
    if y.max() >= task.K:
        fail(name_y, y, f"labels must be < K = {task.K}")
    bad = (S // task.s_c) != task.Z[y]
    if bad.any():
        i, l = np.argwhere(bad)[0]
        fail(name, S, f"sentence {i} (class {y[i]}) has word {S[i, l]} of concept {S[i, l] // task.s_c} at "
                      f"position {l}, but z_(k,l) = {task.Z[y[i], l]} (sentences must come from the task)")  # fmt: skip


@public(task=Instance(Task), n_spl=Int(min=1, max=10**12), seed=Int(min=0, max=2**63 - 1))
def training_sentences(task: Task, *, n_spl: int, seed) -> tuple:
    """The training set of :func:`fctheory.train` with this ``n_spl`` and ``seed``: (S, y), K·n_spl sentences.

    The trainer draws it from ``default_rng([seed, 1])`` (:mod:`fctheory.trainer.data`), so a run's training
    objective follows from its task and its configuration (``n_spl``, ``seed``) without the run's data.
    """
    n = task.K * n_spl
    check_work("n_spl", n_spl, items=n * task.L, bytes=8 * n * (task.L + 1), what=f"{n} training sentences")
    return draw_training(task, n_spl, seed)


def draw_training(task: Task, n_spl: int, seed) -> tuple:
    """:func:`training_sentences` for arguments already checked and budgeted (the trainer's configuration)."""
    return task.sample(n_spl, seed=np.random.default_rng([seed, 1]))
