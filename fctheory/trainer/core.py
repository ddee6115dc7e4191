"""``train``: minibatch SGD on the networks h and h* of section 2, as in the authors' notebooks.

Setup (derivations A.4–A.5): embedding W (d×n_w) ~ N(0,1)·init_scale, linear U (K×Ld) ~
U(−1/√(Ld), 1/√(Ld))·init_scale (PyTorch's defaults divided by 1000), optional parameter-free
LayerNorm φ (biased std, ``eps``), concatenation, bias-free linear map; cross-entropy averaged
over the minibatch; plain SGD, constant lr, weight decay λ_W, λ_U added to the gradient (a λ/2‖·‖²
penalty, so the objective is the regularised empirical risk of (2)–(3)).

Determinism: everything random derives from ``seed`` through independent streams —
``default_rng([seed, 1])`` draws the training sentences, ``[seed, 2]`` the test sentences,
``[seed, 3]`` the initial weights (in float64, then cast) and ``[seed, 4, e]`` the shuffle of
epoch e. Hence every backend sees the same data, shuffles and initialisation, and a resumed run
needs nothing but the weights: it continues bitwise identically.
"""
from __future__ import annotations

import json
import math
import os
import signal
import threading
import time
from dataclasses import asdict, dataclass, field, fields

import numpy as np

from .._errors import FCTheoryError
from .._validate import check_choice, check_int, fail, float_array
from ..task import Task

__all__ = ["TrainConfig", "TrainData", "TrainRun", "TrainingInterrupted", "train", "make_data", "init_weights",
           "epoch_permutation", "load_checkpoint", "resume"]

CHECKPOINT_VERSION = 1
# configuration entries that determine the trajectory: a resume must agree on all of them
_STATE_KEYS = ("n_spl", "d", "layernorm", "eps", "lr", "batch", "lam_W", "lam_U", "seed", "dtype", "init_scale",
               "n_test")


@dataclass(frozen=True)
class TrainConfig:
    """Hyper-parameters of a training run (see :func:`train`)."""

    n_spl: int
    d: int = 100
    layernorm: bool = False
    eps: float = 1e-5
    lr: float = 0.1
    batch: int = 100
    epochs: int = 100
    lam_W: float = 1e-3
    lam_U: float = 1e-3
    seed: int = 0
    backend: str = "numba"
    dtype: str = "float32"
    init_scale: float = 1e-3
    n_test: int = 5
    eval_every: int | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def _real(name, value, **kw) -> float:
    arr = float_array(name, value, **kw)
    if arr.ndim != 0:
        fail(name, value, "must be a scalar")
    return float(arr)


def _make_config(**kw) -> TrainConfig:
    c = dict(kw)
    c["n_spl"] = check_int("n_spl", c["n_spl"], min=1)
    c["d"] = check_int("d", c["d"], min=1)
    if not isinstance(c["layernorm"], (bool, np.bool_)):
        fail("layernorm", c["layernorm"], "must be True or False")
    c["layernorm"] = bool(c["layernorm"])
    c["eps"] = _real("eps", c["eps"], lo=0.0)
    c["lr"] = _real("lr", c["lr"], lo=0.0, lo_open=True)
    c["batch"] = check_int("batch", c["batch"], min=1)
    c["epochs"] = check_int("epochs", c["epochs"], min=0)
    c["lam_W"] = _real("lam_W", c["lam_W"], lo=0.0)
    c["lam_U"] = _real("lam_U", c["lam_U"], lo=0.0)
    c["seed"] = check_int("seed", c["seed"], min=0)
    check_choice("backend", c["backend"], {"numpy", "numba", "cupy"})
    c["dtype"] = str(np.dtype(c["dtype"])) if isinstance(c["dtype"], (type, np.dtype)) else c["dtype"]
    check_choice("dtype", c["dtype"], {"float32", "float64"})
    c["init_scale"] = _real("init_scale", c["init_scale"], lo=0.0, lo_open=True)
    c["n_test"] = check_int("n_test", c["n_test"], min=0)
    if c["eval_every"] is not None:
        c["eval_every"] = check_int("eval_every", c["eval_every"], min=1)
    if c["layernorm"] and c["eps"] == 0.0 and c["d"] == 1:
        fail("d", c["d"], "LayerNorm with eps=0 needs d >= 2 (φ of a scalar is undefined)")
    return TrainConfig(**c)


@dataclass(frozen=True)
class TrainData:
    """Training and test sentences (word indices, class-major as in the notebooks)."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray


def make_data(task: Task, n_spl: int, seed: int, n_test: int = 5) -> TrainData:
    """n_spl training and n_test fresh test sentences per class (the same K latent variables)."""
    X, y = task.sample(n_spl, np.random.default_rng([seed, 1]))
    if n_test > 0:
        Xt, yt = task.sample(n_test, np.random.default_rng([seed, 2]))
    else:
        Xt, yt = np.zeros((0, task.L), np.int64), np.zeros(0, np.int64)
    return TrainData(X, y, Xt, yt)


def init_weights(task: Task, d: int, seed: int, init_scale: float = 1e-3, dtype="float64"):
    """Initial (E = Wᵀ, U) as in the notebooks: N(0,1)·s and U(−1/√(Ld), 1/√(Ld))·s, s = init_scale.

    Drawn in float64 from ``default_rng([seed, 3])`` and then cast, so float32 and float64 runs
    start from the same point (up to the cast).
    """
    rng = np.random.default_rng([seed, 3])
    E = rng.standard_normal((task.n_w, d)) * init_scale
    bound = 1.0 / math.sqrt(task.L * d)
    U = rng.uniform(-bound, bound, size=(task.K, task.L * d)) * init_scale
    return E.astype(dtype), U.astype(dtype)


def epoch_permutation(seed: int, epoch: int, n: int) -> np.ndarray:
    """The shuffle of epoch ``epoch`` (0-based): a function of (seed, epoch) only."""
    return np.random.default_rng([seed, 4, epoch]).permutation(n)


class TrainingInterrupted(KeyboardInterrupt):
    """Raised after Ctrl-C once the current epoch finished and a checkpoint was written.

    Attributes ``checkpoint`` (path) and ``run`` (the partial :class:`TrainRun`).
    """

    def __init__(self, checkpoint, run):
        super().__init__(f"training interrupted at epoch {run.epochs_done}; checkpoint saved to {checkpoint}")
        self.checkpoint = checkpoint
        self.run = run


_HIST_KEYS = ("epoch", "loss", "train_acc", "test_acc", "test_loss", "time")


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

    def summary(self) -> dict:
        """JSON-ready summary: configuration, last history row, measurements and predictions."""
        out = {"task": _task_dict(self.task), "config": self.config.to_dict(), "epochs_done": self.epochs_done,
               "wall_time_s": self.wall_time}
        if self.epochs_done:
            out["last_epoch"] = {k: _jsonable(v[-1]) for k, v in self.history.items()}
        if self.measurements is not None:
            out["measurements"] = self.measurements.to_dict()
        return out


def _jsonable(v):
    if isinstance(v, (np.floating, float)):
        return None if not np.isfinite(v) else float(v)
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.ndarray):
        return [_jsonable(x) for x in v.tolist()] if v.ndim else _jsonable(v.item())
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items()}
    return v


def _task_dict(task: Task) -> dict:
    return {"n_c": task.n_c, "s_c": task.s_c, "L": task.L, "K": task.K, "n_w": task.n_w,
            "uniform": bool(task.is_uniform)}


# ----------------------------------------------------------------------------- checkpoints
def save_checkpoint(path, task, cfg, E, U, history, epochs_done, wall_time):
    """Write a checkpoint atomically (temporary file in the same folder, then ``os.replace``)."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    tmp = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}.tmp")
    arrays = {f"hist_{k}": np.asarray(v) for k, v in history.items()}
    with open(tmp, "wb") as fh:
        np.savez(
            fh, version=CHECKPOINT_VERSION, E=E, U=U, epochs_done=epochs_done, wall_time=wall_time,
            config=json.dumps(cfg.to_dict()), Z=task.Z, mu=task.mu, shape=np.array([task.n_c, task.s_c, task.L]),
            **arrays,
        )
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    return path


def load_checkpoint(path) -> dict:
    """Read a checkpoint written by :func:`train`: dict with task, config, E, U, history, epochs_done."""
    try:
        with np.load(os.fspath(path), allow_pickle=False) as z:
            if int(z["version"]) != CHECKPOINT_VERSION:
                fail("resume", path, f"checkpoint format {int(z['version'])} is not {CHECKPOINT_VERSION}")
            n_c, s_c, L = (int(v) for v in z["shape"])
            task = Task(n_c, s_c, L, z["Z"], z["mu"])
            cfg = TrainConfig(**json.loads(str(z["config"])))
            hist = {k: z[f"hist_{k}"].copy() for k in _HIST_KEYS}
            return {"task": task, "config": cfg, "E": z["E"].copy(), "U": z["U"].copy(), "history": hist,
                    "epochs_done": int(z["epochs_done"]), "wall_time": float(z["wall_time"])}
    except FCTheoryError:
        raise
    except (OSError, KeyError, ValueError) as exc:
        fail("resume", os.fspath(path), f"not a readable fctheory checkpoint ({exc})")


# ----------------------------------------------------------------------------- training
class _SigintFlag:
    """Turn the first Ctrl-C into a flag checked between epochs (a second one interrupts at once)."""

    def __init__(self):
        self.hit = False
        self._old = None

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self._old = signal.getsignal(signal.SIGINT)

            def handler(signum, frame):
                self.hit = True
                signal.signal(signal.SIGINT, self._old)  # a second Ctrl-C acts normally

            signal.signal(signal.SIGINT, handler)
        return self

    def __exit__(self, *exc):
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)
        return False


def train(
    task: Task,
    n_spl: int,
    d: int = 100,
    *,
    layernorm: bool = False,
    eps: float = 1e-5,
    lr: float = 0.1,
    batch: int = 100,
    epochs: int = 100,
    lam_W: float = 1e-3,
    lam_U: float = 1e-3,
    seed: int = 0,
    backend: str = "numba",
    dtype: str = "float32",
    init_scale: float = 1e-3,
    n_test: int = 5,
    eval_every: int | None = None,
    checkpoint=None,
    checkpoint_every: int | None = None,
    resume=None,
    progress: bool = False,
    callback=None,
    measure: bool = True,
    measure_every: int | None = None,
    keep_data: bool = False,
) -> TrainRun:
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
    seed : int
        Fixes the training/test sentences, the initialisation and every shuffle, on every backend.
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
        Where checkpoints go (every ``checkpoint_every`` epochs, at the end, and on Ctrl-C).
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
        Invalid parameters or a checkpoint that does not match.
    TrainingInterrupted
        On Ctrl-C (after finishing the current epoch and writing a checkpoint).
    """
    if not isinstance(task, Task):
        fail("task", task, "must be a fctheory.Task")
    cfg = _make_config(n_spl=n_spl, d=d, layernorm=layernorm, eps=eps, lr=lr, batch=batch, epochs=epochs,
                       lam_W=lam_W, lam_U=lam_U, seed=seed, backend=backend, dtype=dtype, init_scale=init_scale,
                       n_test=n_test, eval_every=eval_every)
    if checkpoint_every is not None:
        checkpoint_every = check_int("checkpoint_every", checkpoint_every, min=1)
        if checkpoint is None:
            fail("checkpoint_every", checkpoint_every, "needs checkpoint= (a file path)")
    if callback is not None and not callable(callback):
        fail("callback", callback, "must be callable")
    if measure_every is not None:
        measure_every = check_int("measure_every", measure_every, min=1)
    snapshots = []

    history = {k: [] for k in _HIST_KEYS}
    start_epoch = 0
    wall0 = 0.0
    if resume is not None:
        ck = load_checkpoint(resume)
        old = ck["config"].to_dict()
        new = cfg.to_dict()
        for key in _STATE_KEYS:
            if old[key] != new[key]:
                fail(key, new[key], f"differs from the checkpoint being resumed ({key}={old[key]!r})")
        if not (np.array_equal(ck["task"].Z, task.Z) and np.array_equal(ck["task"].mu, task.mu)
                and ck["task"].s_c == task.s_c and ck["task"].n_c == task.n_c):
            fail("task", task, "is not the task of the checkpoint being resumed")
        if ck["epochs_done"] > cfg.epochs:
            fail("epochs", cfg.epochs, f"must be >= the {ck['epochs_done']} epochs already in the checkpoint")
        E0, U0 = ck["E"], ck["U"]
        history = {k: list(v) for k, v in ck["history"].items()}
        start_epoch = ck["epochs_done"]
        wall0 = ck["wall_time"]
    else:
        E0, U0 = init_weights(task, cfg.d, cfg.seed, cfg.init_scale)

    data = make_data(task, cfg.n_spl, cfg.seed, cfg.n_test)
    from ._engines import ENGINES  # noqa: PLC0415

    engine = ENGINES[cfg.backend](E0, U0, data, cfg)
    N = data.X_train.shape[0]
    n_test_total = data.X_test.shape[0]
    eval_every = cfg.eval_every or max(1, cfg.epochs // 20)

    def scheduled(e1):
        return e1 % eval_every == 0 or e1 == 1 or e1 == cfg.epochs

    if start_epoch and not scheduled(start_epoch):
        # the checkpointed run evaluated its last epoch because it stopped there; an uninterrupted
        # run would not have, so drop it to keep the resumed history identical
        history["test_acc"][-1] = history["test_loss"][-1] = float("nan")

    bar = None
    if progress:
        from tqdm.auto import tqdm  # noqa: PLC0415

        bar = tqdm(total=cfg.epochs, initial=start_epoch, unit="epoch", dynamic_ncols=True, leave=True)

    def snapshot(epochs_done, elapsed):
        E, U = engine.weights()
        return TrainRun(task, cfg, np.ascontiguousarray(E.T), U, {k: np.asarray(v, dtype=np.float64)
                        for k, v in history.items()}, epochs_done, elapsed, None, data if keep_data else None)

    t0 = time.perf_counter()
    epoch = start_epoch
    try:
        with _SigintFlag() as flag:
            for epoch in range(start_epoch, cfg.epochs):
                loss_sum, correct = engine.epoch(epoch_permutation(cfg.seed, epoch, N))
                e1 = epoch + 1
                test_acc = test_loss = float("nan")
                if n_test_total and scheduled(e1):
                    tl, tc = engine.evaluate("test")
                    test_acc, test_loss = tc / n_test_total, tl / n_test_total
                loss = loss_sum / N
                if not (math.isfinite(loss) and engine.finite()):
                    fail("lr", cfg.lr, f"training diverged (non-finite loss at epoch {e1}); use a smaller lr")
                history["epoch"].append(e1)
                history["loss"].append(loss)
                history["train_acc"].append(correct / N)
                history["test_acc"].append(test_acc)
                history["test_loss"].append(test_loss)
                history["time"].append(wall0 + time.perf_counter() - t0)
                if bar is not None:
                    post = {"loss": f"{loss:.4g}", "train": f"{100 * correct / N:.1f}%"}
                    if not math.isnan(test_acc):
                        bar.last_test = f"{100 * test_acc:.1f}%"
                    if getattr(bar, "last_test", None):
                        post["test"] = bar.last_test
                    bar.set_postfix(post, refresh=False)
                    bar.update(1)
                if measure_every and e1 % measure_every == 0:
                    from .measure import measure as _measure  # noqa: PLC0415

                    E, U = engine.weights()
                    snapshots.append((e1, _measure(task, E.T, U, layernorm=cfg.layernorm, eps=cfg.eps, data=data,
                                                   lam_W=cfg.lam_W, lam_U=cfg.lam_U, distances=False)))
                if callback is not None:
                    callback(e1, {"loss": loss, "train_acc": correct / N, "test_acc": test_acc})
                elapsed = wall0 + time.perf_counter() - t0
                if checkpoint is not None and checkpoint_every and e1 % checkpoint_every == 0 and e1 < cfg.epochs:
                    E, U = engine.weights()
                    save_checkpoint(checkpoint, task, cfg, E, U, history, e1, elapsed)
                if flag.hit and e1 < cfg.epochs:
                    run = snapshot(e1, elapsed)
                    path = checkpoint if checkpoint is not None else os.path.abspath(
                        f"fctheory-train-seed{cfg.seed}-interrupted.npz")
                    E, U = engine.weights()
                    save_checkpoint(path, task, cfg, E, U, history, e1, elapsed)
                    raise TrainingInterrupted(path, run)
    finally:
        if bar is not None:
            bar.close()

    elapsed = wall0 + time.perf_counter() - t0
    run = snapshot(cfg.epochs, elapsed)
    run.snapshots = snapshots
    if checkpoint is not None:
        E, U = engine.weights()
        save_checkpoint(checkpoint, task, cfg, E, U, history, cfg.epochs, elapsed)
    if measure:
        from .measure import measure as _measure  # noqa: PLC0415

        run.measurements = _measure(task, run.W, run.U, layernorm=cfg.layernorm, eps=cfg.eps, data=data,
                                    lam_W=cfg.lam_W, lam_U=cfg.lam_U, d=cfg.d, n_spl=cfg.n_spl)
    return run


def resume(path, epochs: int | None = None, **kw) -> TrainRun:
    """Continue the run saved in checkpoint ``path`` (to ``epochs`` total, default: its configured epochs)."""
    ck = load_checkpoint(path)
    c = ck["config"].to_dict()
    if epochs is not None:
        c["epochs"] = epochs
    for k in ("backend", "eval_every"):
        if k in kw:
            c[k] = kw.pop(k)
    n_spl = c.pop("n_spl")
    d = c.pop("d")
    return train(ck["task"], n_spl, d, resume=path, **c, **kw)
