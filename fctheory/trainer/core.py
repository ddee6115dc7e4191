"""``train``: minibatch SGD on the networks h and h* of section 2, as in the authors' notebooks.

Setup (derivations A.4–A.5): embedding W (d×n_w) ~ N(0,1)·init_scale, linear U (K×Ld) ~
U(−1/√(Ld), 1/√(Ld))·init_scale (PyTorch's defaults divided by 1000), optional parameter-free
LayerNorm φ (biased std, ``eps``), concatenation, bias-free linear map; cross-entropy averaged
over the minibatch; plain SGD, constant lr, weight decay λ_W, λ_U added to the gradient (a λ/2‖·‖²
penalty, so the objective is the regularised empirical risk of (2)–(3)).

Determinism: everything random derives from ``seed`` (see :mod:`.data`), so every backend sees the same
data, shuffles and initialisation, and a resumed run continues bitwise identically.

This module is the orchestration of one run: configuration, resume, budget, then the shared loop of
:mod:`.loop` over an engine of :mod:`.engines` with R = 1, then checkpoint and measurements. The
configuration and data live in :mod:`.data`, the checkpoint format in :mod:`fctheory.io.checkpoint`; their
names stay importable from here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from .._budget import check_work, estimate_seconds
from .._errors import FCTheoryError
from .._validate import Anything, Bool, Instance, Int, PathIn, PathOut, Seed, fail, public, result_type
from ..io.checkpoint import CHECKPOINT_KIND as CHECKPOINT_KIND
from ..io.checkpoint import CHECKPOINT_VERSION as CHECKPOINT_VERSION
from ..io.checkpoint import HISTORY_KEYS, STATE_KEYS, read_checkpoint
from ..io.checkpoint import save_checkpoint as save_checkpoint
from ..task import Task
from .data import (
    CONFIG_KINDS,
    TrainConfig,
    TrainData,
    epoch_permutation,
    init_weights,
    initial_weights,
    int_seed,
    jsonable,
    make_data,
    sample_data,
    task_dict,
)
from .data import check_data as check_data
from .engines import make_engine
from .loop import History, LoopState, SigintFlag, eval_period, run_epochs, scheduled
from .measure import measure as measure_weights

__all__ = [
    "TrainConfig",
    "TrainData",
    "TrainRun",
    "TrainingInterrupted",
    "train",
    "make_data",
    "init_weights",
    "epoch_permutation",
    "load_checkpoint",
    "resume",
]

# names of fctheory 1.0 kept importable from here (their homes are .data, .loop and fctheory.io.checkpoint)
_HIST_KEYS = HISTORY_KEYS
_STATE_KEYS = STATE_KEYS
_SigintFlag = SigintFlag
_int_seed = int_seed
_jsonable = jsonable
_task_dict = task_dict
_make_data = sample_data
_init_weights = initial_weights


@result_type
class TrainingInterrupted(KeyboardInterrupt):
    """Raised after Ctrl-C once the current epoch finished and a checkpoint was written.

    Attributes ``checkpoint`` (path) and ``run`` (the partial :class:`TrainRun`).
    """

    def __init__(self, checkpoint, run):
        where = f"checkpoint saved to {checkpoint}" if checkpoint is not None else "no checkpoint could be written"
        super().__init__(f"training interrupted at epoch {run.epochs_done}; {where}")
        self.checkpoint = checkpoint
        self.run = run


@result_type
@dataclass
class TrainRun:
    """Result of :func:`train`.

    Attributes
    ----------
    task : Task
    config : TrainConfig
    W : ndarray, shape (d, n_w)
        Final word embeddings (columns), in the working dtype.
    U : ndarray, shape (K, L·d)
        Final linear layer; u_{k,ℓ} = U[k, ℓd:(ℓ+1)d].
    history : dict of ndarray
        Per epoch: ``epoch`` (1-based), ``loss`` (mean unregularised minibatch cross-entropy over the
        epoch, as the notebooks log it), ``train_acc`` (fraction of correct minibatch predictions during
        the epoch), ``test_acc`` and ``test_loss`` (NaN where not evaluated), ``time`` (seconds since start).
    measurements : Measurements or None
        See :func:`fctheory.trainer.measure`; includes the theory's predictions.
    snapshots : list of (int, Measurements)
        Measurements during training (``measure_every``).
    epochs_done : int
    wall_time : float
        Seconds spent training (accumulated over resumes).
    """

    task: Task
    config: TrainConfig
    W: np.ndarray
    U: np.ndarray
    history: dict
    epochs_done: int
    wall_time: float
    measurements: object = None
    data: TrainData | None = field(default=None, repr=False)
    snapshots: list = field(default_factory=list, repr=False)

    @property
    def final_test_acc(self) -> float:
        t = self.history["test_acc"]
        ok = ~np.isnan(t)
        return float(t[ok][-1]) if ok.any() else float("nan")

    @public()
    def summary(self) -> dict:
        """JSON-ready summary: configuration, last history row, measurements and predictions."""
        out = {
            "task": task_dict(self.task),
            "config": self.config.to_dict(),
            "epochs_done": self.epochs_done,
            "wall_time_s": self.wall_time,
        }
        if self.epochs_done:
            out["last_epoch"] = {k: jsonable(v[-1]) for k, v in self.history.items()}
        if self.measurements is not None:
            out["measurements"] = self.measurements.to_dict()
        return out


@public(path=PathIn())
def load_checkpoint(path) -> dict:
    """Read and verify a checkpoint written by :func:`train`.

    Returns a dict with ``task``, ``config`` (:class:`TrainConfig`), ``E`` (n_w×d), ``U`` (K×L·d),
    ``history``, ``epochs_done`` and ``wall_time``.

    Everything is checked against the recorded configuration before it is returned: the task
    (Z, μ), E and U shapes (n_w×d, K×L·d) and dtype (the configured float32/float64), finite
    weights, ``0 ≤ epochs_done ≤ epochs``, one history row per finished epoch numbered 1…epochs_done,
    finite non-negative losses and accuracies in [0, 1]. Damaged, truncated, foreign or newer files
    raise :class:`~fctheory.FCTheoryError` naming ``path``. Checkpoints of format version 1 (written
    before files carried a format header) are read and verified the same way
    (:func:`fctheory.io.checkpoint.read_checkpoint`).
    """
    return open_checkpoint(path, "path")


def _config_from_dict(raw: dict) -> TrainConfig:
    return TrainConfig(**raw)


def open_checkpoint(path, name: str = "path") -> dict:
    """:func:`load_checkpoint` with the parameter named ``name`` in its errors (``config`` a :class:`TrainConfig`)."""
    return read_checkpoint(path, name, _config_from_dict)


_load_checkpoint = open_checkpoint


class _PathOutAsGiven(PathOut):
    """PathOut that hands the caller's own object back (a pathlib.Path stays a Path in messages and results)."""

    def __call__(self, name, value):
        super().__call__(name, value)
        return value


#: kinds of train()'s arguments (the hyper-parameters share TrainConfig's)
TRAIN_KINDS = dict(
    task=Instance(Task),
    **{k: v for k, v in CONFIG_KINDS.items() if k != "seed"},
    seed=Seed(),
    checkpoint=_PathOutAsGiven().or_none(),
    checkpoint_every=Int(min=1).or_none(),
    resume=PathIn().or_none(),
    progress=Bool(),
    callback=Anything("callable(epoch, info) or None"),
    measure=Bool(),
    measure_every=Int(min=1).or_none(),
    keep_data=Bool(),
)


def check_train_time(
    task, cfg, start_epoch: int = 0, *, runs: int = 1, seeds: int = 0, measure: bool = False, what: str = "train"
) -> None:
    """Refuse runs whose estimated time (:func:`fctheory._budget.estimate_seconds`) exceeds the budget.

    ``runs`` runs of configuration ``cfg`` from ``start_epoch``; ``seeds`` distinct seeds' sentences drawn
    and, with ``measure``, every run measured at the end.
    """
    K, L, N = task.K, task.L, task.K * cfg.n_spl
    epochs = cfg.epochs - start_epoch
    seconds = estimate_seconds(
        backend=cfg.backend,
        runs=runs,
        epochs=epochs,
        n_train=N,
        n_test=K * cfg.n_test,
        batch=cfg.batch,
        L=L,
        d=cfg.d,
        K=K,
        measured=K * (cfg.n_spl + cfg.n_test) * measure,
        sampled_words=seeds * K * (cfg.n_spl + cfg.n_test) * L,
    )
    check_work(
        "epochs",
        cfg.epochs,
        seconds=seconds,
        what=f"{what} ({epochs} epochs of {runs * N} sentences; a lower-bound estimate)",
    )


def check_train_budget(task, cfg, start_epoch: int) -> None:
    """Refuse a run whose data, weights or estimated time exceed the budget, before anything is built."""
    K, L, d = task.K, task.L, cfg.d
    N = K * cfg.n_spl
    n_all = K * (cfg.n_spl + cfg.n_test)
    b = min(cfg.batch, N)
    item = 4 if cfg.dtype == "float32" else 8
    params = d * (task.n_w + K * L)
    check_work(
        "n_spl",
        cfg.n_spl,
        items=n_all * L,
        bytes=8 * n_all * (3 * L + 2) + 16 * N + 8 * params * 3 + item * (params * 3 + b * (2 * L * d + 2 * K)),
        what=f"train ({n_all} sentences of {L} words, {params} weights)",
    )
    check_train_time(task, cfg, start_epoch)


_check_train_budget = check_train_budget


def _resumed(task, cfg, resume):
    """(E0, U0, history, start epoch, wall time) of the checkpoint ``resume``, verified against the run."""
    ck = open_checkpoint(resume, "resume")
    old, new = ck["config"].to_dict(), cfg.to_dict()
    for key in STATE_KEYS:
        if old[key] != new[key]:
            fail(key, new[key], f"differs from the checkpoint being resumed ({key}={old[key]!r})")
    if not (
        np.array_equal(ck["task"].Z, task.Z)
        and np.array_equal(ck["task"].mu, task.mu)
        and ck["task"].s_c == task.s_c
        and ck["task"].n_c == task.n_c
    ):
        fail("task", task, "is not the task of the checkpoint being resumed")
    if ck["epochs_done"] > cfg.epochs:
        fail("epochs", cfg.epochs, f"must be >= the {ck['epochs_done']} epochs already in the checkpoint")
    history = History(ck["history"])
    start = ck["epochs_done"]
    if start and not scheduled(start, eval_period(cfg.eval_every, cfg.epochs), cfg.epochs):
        # the checkpointed run evaluated its last epoch because it stopped there; an uninterrupted
        # run would not have, so drop it to keep the resumed history identical
        history.forget_last_evaluation()
    return ck["E"], ck["U"], history, start, ck["wall_time"]


class _OneRun:
    """The single-run extras around the loop: snapshots, callback, periodic and Ctrl-C checkpoints."""

    def __init__(self, task, cfg, engine, data, history, opt):
        self.task, self.cfg, self.engine, self.data, self.history = task, cfg, engine, data, history
        self.checkpoint, self.checkpoint_every, self.callback = opt.checkpoint, opt.checkpoint_every, opt.callback
        self.measure_every, self.keep_data = opt.measure_every, opt.keep_data
        self.snapshots = []

    def run(self, epochs_done, elapsed) -> TrainRun:
        E, U = self.engine.weights(0)
        return TrainRun(
            self.task,
            self.cfg,
            np.ascontiguousarray(E.T),
            U,
            self.history.arrays(),
            epochs_done,
            elapsed,
            None,
            self.data if self.keep_data else None,
        )

    def save(self, path, epochs_done, elapsed):
        E, U = self.engine.weights(0)
        save_checkpoint(path, self.task, self.cfg.to_dict(), E, U, self.history.rows, epochs_done, elapsed)

    def after_epoch(self, e1, elapsed):
        cfg = self.cfg
        if self.measure_every and e1 % self.measure_every == 0:
            E, U = self.engine.weights(0)
            self.snapshots.append(
                (
                    e1,
                    measure_weights(
                        self.task,
                        E.T,
                        U,
                        layernorm=cfg.layernorm,
                        eps=cfg.eps,
                        data=self.data,
                        lam_W=cfg.lam_W,
                        lam_U=cfg.lam_U,
                        distances=False,
                    ),
                )
            )
        if self.callback is not None:
            row = self.history.last()
            self.callback(e1, {"loss": row["loss"], "train_acc": row["train_acc"], "test_acc": row["test_acc"]})
        if (
            self.checkpoint is not None
            and self.checkpoint_every
            and e1 % self.checkpoint_every == 0
            and e1 < cfg.epochs
        ):
            self.save(self.checkpoint, e1, elapsed)

    def on_interrupt(self, e1, elapsed):
        run = self.run(e1, elapsed)
        path = (
            self.checkpoint
            if self.checkpoint is not None
            else os.path.abspath(f"fctheory-train-seed{self.cfg.seed}-interrupted.npz")
        )
        try:
            self.save(path, e1, elapsed)
        except (OSError, FCTheoryError):  # nowhere to save: still stop, keep the run in memory
            path = None
        raise TrainingInterrupted(path, run)


@public(**TRAIN_KINDS, legacy_positional=("n_spl", "d"))
def train(task: Task, *, n_spl: int, d: int = 100, layernorm: bool = False, eps: float = 1e-05, lr: float = 0.1,
          batch: int = 100, epochs: int = 100, lam_W: float = 0.001, lam_U: float = 0.001, seed: int = 0,
          backend: str = "numba", dtype: str = "float32", init_scale: float = 0.001, n_test: int = 5,
          eval_every: int | None = None, checkpoint=None, checkpoint_every: int | None = None, resume=None,
          progress: bool = False, callback=None, measure: bool = True, measure_every: int | None = None,
          keep_data: bool = False) -> TrainRun:  # fmt: skip
    """Train h (``layernorm=False``) or h* (``layernorm=True``) with minibatch SGD.

    Parameters
    ----------
    task : Task
        The data model of section 2 (K latent variables, word frequencies μ).
    n_spl : int
        Training sentences per class (the training set has K·n_spl sentences).
    d : int
        Embedding dimension.
    layernorm : bool
        Use φ (parameter-free LayerNorm, biased std) on the embeddings: the network h*.
    eps : float
        LayerNorm ε: σ = √(var + ε). 1e-5 as PyTorch (the notebooks); 0 is the paper's φ.
    lr, batch, epochs : float, int, int
        Constant SGD learning rate, minibatch size, number of passes over the shuffled training set.
    lam_W, lam_U : float
        Weight decays: the gradient gets λ·w added, i.e. a λ/2‖·‖² penalty, eq. (2)–(3).
    seed : int, Generator or None
        Fixes the training/test sentences, the initialisation and every shuffle, on every backend
        (an int in [0, 2**63 − 1]; None or a Generator draw one, recorded in ``run.config.seed``).
    backend : {"numba", "numpy", "cupy"}
        numba: compiled epochs with BLAS products (fast CPU); numpy: the readable reference;
        cupy: the reference step on the GPU.
    dtype : {"float32", "float64"}
    init_scale : float
        Initial weights are PyTorch's defaults times this (1e-3 in the notebooks).
    n_test : int
        Fresh test sentences per class from the same latent variables (5 in the notebooks).
    eval_every : int, optional
        Evaluate test accuracy every this many epochs (and at the first and last); default epochs//20.
    checkpoint : path, optional
        Where checkpoints go (every ``checkpoint_every`` epochs, at the end, and on Ctrl-C); written
        atomically with a format header. The path is checked writable before training starts.
    checkpoint_every : int, optional
    resume : path, optional
        Continue from this checkpoint; the configuration must match except ``epochs``, ``backend``,
        ``eval_every``. The continuation is bitwise identical to an uninterrupted run on the same backend.
    progress : bool
        Show a tqdm bar with loss and accuracy.
    callback : callable, optional
        ``callback(epoch, run_so_far_info: dict)`` after every epoch.
    measure : bool
        Compute :class:`~fctheory.trainer.measure.Measurements` (with the theory's predictions) at the end.
    measure_every : int, optional
        Also measure during training, every this many epochs (without the collapse distances), into
        ``run.snapshots`` as (epoch, Measurements) pairs.
    keep_data : bool
        Keep the training/test sentences in ``run.data``.

    Returns
    -------
    TrainRun

    Raises
    ------
    FCTheoryError
        Invalid parameters, an unwritable ``checkpoint`` path, a damaged checkpoint or one that does
        not match, a run over the budget (memory; time estimated from a lower-bound cost model — raise
        it with :func:`fctheory.set_budget` or ``with fctheory.budget(max_seconds=...)``), or a run that
        diverges (non-finite loss or weights: the message says at which epoch; use a smaller lr or
        init_scale). NaN weights are never returned.
    TrainingInterrupted
        On Ctrl-C (after finishing the current epoch and writing a checkpoint).
    """
    cfg = TrainConfig(n_spl=n_spl, d=d, layernorm=layernorm, eps=eps, lr=lr, batch=batch, epochs=epochs,
                      lam_W=lam_W, lam_U=lam_U, seed=int_seed(seed), backend=backend, dtype=dtype,
                      init_scale=init_scale, n_test=n_test, eval_every=eval_every)  # fmt: skip
    options = _Options(checkpoint, checkpoint_every, resume, progress, callback, measure, measure_every, keep_data)
    return _train_one(task, cfg, options)


@dataclass(frozen=True)
class _Options:
    """train()'s arguments beyond the configuration (what to save, show, call back and keep)."""

    checkpoint: object
    checkpoint_every: int | None
    resume: object
    progress: bool
    callback: object
    measure: bool
    measure_every: int | None
    keep_data: bool


def _train_one(task: Task, cfg: TrainConfig, opt: _Options) -> TrainRun:
    """:func:`train` after its arguments were checked: resume or start, train, checkpoint, measure."""
    if opt.checkpoint_every is not None and opt.checkpoint is None:
        fail("checkpoint_every", opt.checkpoint_every, "needs checkpoint= (a file path)")
    if opt.callback is not None and not callable(opt.callback):
        fail("callback", opt.callback, "must be callable")
    if opt.resume is not None:
        E0, U0, history, start, wall0 = _resumed(task, cfg, opt.resume)
        check_train_budget(task, cfg, start)
    else:
        check_train_budget(task, cfg, 0)
        E0, U0 = initial_weights(task, cfg.d, cfg.seed, cfg.init_scale)
        history, start, wall0 = History(), 0, 0.0
    data = sample_data(task, cfg.n_spl, cfg.seed, cfg.n_test)
    engine = make_engine(cfg.backend, E0[None], U0[None], data.X_train[None], data.y_train[None],
                         [(data.X_test, data.y_test)], [cfg])  # fmt: skip
    one = _OneRun(task, cfg, engine, data, history, opt)
    state = LoopState([cfg], [history], data.X_train.shape[0], data.X_test.shape[0], start, wall0)
    elapsed = run_epochs(engine, state, progress=opt.progress, after_epoch=one.after_epoch,
                         on_interrupt=one.on_interrupt)  # fmt: skip
    run = one.run(cfg.epochs, elapsed)
    run.snapshots = one.snapshots
    if opt.checkpoint is not None:
        one.save(opt.checkpoint, cfg.epochs, elapsed)
    if opt.measure:
        run.measurements = measure_weights(task, run.W, run.U, layernorm=cfg.layernorm, eps=cfg.eps, data=data,
                                           lam_W=cfg.lam_W, lam_U=cfg.lam_U, d=cfg.d, n_spl=cfg.n_spl)  # fmt: skip
    return run


_RESUME_OPTIONS = (
    "backend",
    "eval_every",
    "checkpoint",
    "checkpoint_every",
    "progress",
    "callback",
    "measure",
    "measure_every",
    "keep_data",
)


@public(path=PathIn(), epochs=Int(min=0, max=10**12).or_none(), legacy_positional=("epochs",))
def resume(path, *, epochs: int | None = None, **kw) -> TrainRun:
    """Continue the run saved in checkpoint ``path`` (to ``epochs`` total, default: its configured epochs).

    Other keyword arguments (checked by :func:`train`) may be any of ``backend``, ``eval_every``,
    ``checkpoint``, ``checkpoint_every``, ``progress``, ``callback``, ``measure``, ``measure_every``,
    ``keep_data``; everything else comes from the checkpoint (which is verified first).
    """
    for k in kw:
        if k not in _RESUME_OPTIONS:
            fail(
                k,
                kw[k],
                f"is not an option of resume (allowed: {', '.join(_RESUME_OPTIONS)}); the rest of the "
                "configuration comes from the checkpoint",
            )
    ck = open_checkpoint(path, "path")
    c = ck["config"].to_dict()
    if epochs is not None:
        if epochs < ck["epochs_done"]:
            fail("epochs", epochs, f"must be >= the {ck['epochs_done']} epochs already in the checkpoint")
        c["epochs"] = epochs
    for k in ("backend", "eval_every"):
        if k in kw:
            c[k] = kw.pop(k)
    n_spl = c.pop("n_spl")
    d = c.pop("d")
    return train(ck["task"], n_spl=n_spl, d=d, resume=path, **c, **kw)
