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
import zipfile
from dataclasses import asdict, dataclass, field

import numpy as np

from .._budget import check_work
from .._errors import FCTheoryError
from .._files import load_npz, write_npz
from .._validate import (Anything, Array, Bool, Choice, Instance, Int, PathIn, PathOut, Real, Seed, check_output_path,
                         fail, public, public_class, result_type)
from ..task import Task

__all__ = ["TrainConfig", "TrainData", "TrainRun", "TrainingInterrupted", "train", "make_data", "init_weights",
           "epoch_permutation", "load_checkpoint", "resume"]

#: version of the checkpoint layout; 1 = files written before format headers (still read and verified)
CHECKPOINT_VERSION = 2
CHECKPOINT_KIND = "fctheory.trainer.checkpoint"
# configuration entries that determine the trajectory: a resume must agree on all of them
_STATE_KEYS = ("n_spl", "d", "layernorm", "eps", "lr", "batch", "lam_W", "lam_U", "seed", "dtype", "init_scale",
               "n_test")


class _DType(Choice):
    """"float32" or "float64" (numpy dtypes and scalar types such as ``np.float32`` are accepted too)."""

    def __call__(self, name, value):
        if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
            value = str(np.dtype(value))
        return super().__call__(name, value)


_SEED_INT = Int(min=0, max=2**63 - 1)
#: kinds of the hyper-parameters (TrainConfig's fields and train()'s arguments of the same name)
CONFIG_KINDS = dict(
    n_spl=Int(min=1, max=10**12), d=Int(min=1, max=2**31), layernorm=Bool(), eps=Real(lo=0.0),
    lr=Real(lo=0.0, lo_open=True), batch=Int(min=1, max=2**40), epochs=Int(min=0, max=10**12), lam_W=Real(lo=0.0),
    lam_U=Real(lo=0.0), seed=_SEED_INT, backend=Choice("numba", "numpy", "cupy"), dtype=_DType("float32", "float64"),
    init_scale=Real(lo=0.0, lo_open=True, hi=1e6), n_test=Int(min=0, max=10**12), eval_every=Int(min=1).or_none(),
)


@dataclass(frozen=True)
class TrainConfig:
    """Hyper-parameters of a training run (see :func:`train` for their meaning).

    Every field is checked on construction (:class:`~fctheory.FCTheoryError` naming it); ``seed``
    is a concrete integer in [0, 2**63 − 1] (it is what a checkpoint records).
    """

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

    def __post_init__(self):
        if self.layernorm and self.eps == 0.0 and self.d == 1:
            fail("d", self.d, "LayerNorm with eps=0 needs d >= 2 (φ of a scalar is undefined)")

    @public()
    def to_dict(self) -> dict:
        """The fields as a JSON-ready dict."""
        return asdict(self)


TrainConfig.__init__ = public(**CONFIG_KINDS)(TrainConfig.__init__)
public_class(TrainConfig)


def _int_seed(seed) -> int:
    """A concrete seed in [0, 2**63 − 1]: None draws one from fresh entropy, a Generator draws one from itself."""
    if seed is None:
        return int(np.random.SeedSequence().entropy % (2**63 - 1))
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, 2**63 - 1))
    return int(seed)


def _make_config(**kw) -> TrainConfig:
    return TrainConfig(**kw)


@dataclass(frozen=True)
class TrainData:
    """Training and test sentences (word indices, class-major as in the notebooks).

    ``X_train`` (N×L) and ``X_test`` (N_t×L) hold word indices ≥ 0, ``y_train``/``y_test`` class
    labels ≥ 0 (stored as int64 copies). Against a task they must also satisfy x < n_w, y < K and
    L columns; :func:`measure` and :func:`train` check that.
    """

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray

    def __post_init__(self):
        for X, y, nx, ny in ((self.X_train, self.y_train, "X_train", "y_train"),
                             (self.X_test, self.y_test, "X_test", "y_test")):
            if X.shape[0] != y.shape[0]:
                fail(ny, y, f"must have one label per row of {nx} ({X.shape[0]} rows), got {y.shape[0]}")
        if self.X_test.shape[1] != self.X_train.shape[1]:
            fail("X_test", self.X_test, f"must have L = {self.X_train.shape[1]} columns like X_train, "
                 f"got {self.X_test.shape[1]}")


_IDX = dict(integer=True, min=0, max=2**62)
TrainData.__init__ = public(X_train=Array(ndim=2, **_IDX), y_train=Array(ndim=1, **_IDX),
                            X_test=Array(ndim=2, min_size=0, **_IDX), y_test=Array(ndim=1, min_size=0, **_IDX),
                            )(TrainData.__init__)
public_class(TrainData)


def check_data(task: Task, data: TrainData, name: str = "data") -> None:
    """Refuse sentences that do not belong to ``task``: L columns, words in [0, n_w), labels in [0, K)."""
    for X, y in ((data.X_train, data.y_train), (data.X_test, data.y_test)):
        if X.shape[1] != task.L:
            fail(name, data, f"sentences must have L = {task.L} words, got {X.shape[1]} columns")
        if X.size and int(X.max()) >= task.n_w:
            fail(name, data, f"word indices must be < n_w = {task.n_w}, got {int(X.max())}")
        if y.size and int(y.max()) >= task.K:
            fail(name, data, f"labels must be < K = {task.K}, got {int(y.max())}")


@public(task=Instance(Task), n_spl=Int(min=1, max=10**12), seed=Seed(), n_test=Int(min=0, max=10**12),
        legacy_positional=("n_spl", "seed", "n_test"))
def make_data(task: Task, *, n_spl: int, seed, n_test: int = 5) -> TrainData:
    """n_spl training and n_test fresh test sentences per class (the same K latent variables).

    ``seed`` (an int; None or a Generator supply one) fixes both sets: training sentences come
    from ``default_rng([seed, 1])``, test sentences from ``default_rng([seed, 2])``. The K·(n_spl +
    n_test)·L word indices must fit the memory budget (checked before drawing).
    """
    seed = _int_seed(seed)
    n = task.K * (n_spl + n_test)
    check_work("n_spl", n_spl, items=n * task.L, bytes=8 * n * (3 * task.L + 2),
               what=f"make_data ({n} sentences of {task.L} words)")
    return _make_data(task, n_spl, seed, n_test)


def _make_data(task, n_spl, seed, n_test):
    X, y = task.sample(n_spl, seed=np.random.default_rng([seed, 1]))
    if n_test > 0:
        Xt, yt = task.sample(n_test, seed=np.random.default_rng([seed, 2]))
    else:
        Xt, yt = np.zeros((0, task.L), np.int64), np.zeros(0, np.int64)
    return TrainData(X, y, Xt, yt)


@public(task=Instance(Task), d=Int(min=1, max=2**31), seed=Seed(), init_scale=CONFIG_KINDS["init_scale"],
        dtype=CONFIG_KINDS["dtype"], legacy_positional=("d", "seed", "init_scale", "dtype"))
def init_weights(task: Task, *, d: int, seed, init_scale: float = 0.001, dtype="float64"):
    """Initial (E = Wᵀ, U) as in the notebooks: N(0,1)·s and U(−1/√(Ld), 1/√(Ld))·s, s = init_scale.

    Drawn in float64 from ``default_rng([seed, 3])`` and then cast, so float32 and float64 runs
    start from the same point (up to the cast). ``init_scale`` ≤ 1e6.
    """
    seed = _int_seed(seed)
    check_work("d", d, items=d * (task.n_w + task.K * task.L), bytes=16 * d * (task.n_w + task.K * task.L),
               what="init_weights (E and U)")
    return _init_weights(task, d, seed, init_scale, dtype)


def _init_weights(task, d, seed, init_scale=1e-3, dtype="float64"):
    rng = np.random.default_rng([seed, 3])
    E = rng.standard_normal((task.n_w, d)) * init_scale
    bound = 1.0 / math.sqrt(task.L * d)
    U = rng.uniform(-bound, bound, size=(task.K, task.L * d)) * init_scale
    return E.astype(dtype), U.astype(dtype)


@public(seed=Seed(), epoch=Int(min=0, max=2**63 - 1), n=Int(min=0), legacy_positional=("seed", "epoch", "n"))
def epoch_permutation(*, seed, epoch: int, n: int) -> np.ndarray:
    """The shuffle of epoch ``epoch`` (0-based) of n rows: a function of (seed, epoch) only."""
    seed = _int_seed(seed)
    check_work("n", n, items=n, bytes=16 * n, what="epoch_permutation")
    return np.random.default_rng([seed, 4, epoch]).permutation(n)


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


_HIST_KEYS = ("epoch", "loss", "train_acc", "test_acc", "test_loss", "time")


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
    """Write a checkpoint atomically (temporary file in the same folder, then ``os.replace``).

    Layout (format version 2, with the ``__format__`` header of :func:`fctheory._files.write_npz`):
    ``version``, ``E`` (n_w×d) and ``U`` (K×L·d) in the run's dtype, ``epochs_done``, ``wall_time``,
    ``config`` (JSON of :class:`TrainConfig`), the task (``Z``, ``mu``, ``shape`` = [n_c, s_c, L]) and
    the per-epoch history ``hist_<key>``.
    """
    arrays = {f"hist_{k}": np.asarray(v, dtype=np.float64) for k, v in history.items()}
    return write_npz(os.fspath(path), dict(
        version=np.array(CHECKPOINT_VERSION), E=E, U=U, epochs_done=np.array(epochs_done),
        wall_time=np.array(wall_time), config=np.array(json.dumps(cfg.to_dict())), Z=task.Z, mu=task.mu,
        shape=np.array([task.n_c, task.s_c, task.L]), **arrays), kind=CHECKPOINT_KIND, name="checkpoint")


def _has_header(path) -> bool:
    try:
        with zipfile.ZipFile(path) as zf:
            return "__format__.npy" in zf.namelist()
    except Exception:  # noqa: BLE001 - damaged: let load_npz name the problem
        return True


def _scalar(z, key, kind, name, path):
    a = z[key]
    if a.shape != () or a.dtype.kind not in kind:
        fail(name, path, f"is a damaged checkpoint: entry {key!r} must be a scalar, got shape {a.shape} "
             f"dtype {a.dtype}")
    return a.item()


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
    before files carried a format header) are read and verified the same way.
    """
    return _load_checkpoint(path, "path")


def _load_checkpoint(path, name) -> dict:
    path = os.fspath(path)
    required = ("version", "E", "U", "epochs_done", "wall_time", "config", "Z", "mu", "shape") + tuple(
        f"hist_{k}" for k in _HIST_KEYS)
    header = _has_header(path)
    z = load_npz(path, kind=CHECKPOINT_KIND if header else None, name=name, required=required)
    version = _scalar(z, "version", "iu", name, path)
    if version > CHECKPOINT_VERSION:
        fail(name, path, f"has checkpoint format {version}; this fctheory reads formats 1..{CHECKPOINT_VERSION}")
    if version < 1 or (version >= 2) != header:
        fail(name, path, f"is not an fctheory checkpoint (format {version}, header {'present' if header else 'absent'})")
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
    try:
        raw = json.loads(str(z["config"]))
        if not isinstance(raw, dict):
            raise ValueError("not a JSON object")
        cfg = TrainConfig(**raw)
    except (ValueError, TypeError) as exc:  # FCTheoryError is a ValueError
        fail(name, path, f"holds an invalid configuration ({exc})")
    E, U = z["E"], z["U"]
    want = {"E": (task.n_w, cfg.d), "U": (task.K, task.L * cfg.d)}
    for key, A in (("E", E), ("U", U)):
        if A.shape != want[key]:
            fail(name, path, f"does not match its configuration: {key} has shape {A.shape}, expected {want[key]} "
                 f"(n_w={task.n_w}, K={task.K}, L={task.L}, d={cfg.d})")
        if A.dtype != np.dtype(cfg.dtype):
            fail(name, path, f"does not match its configuration: {key} has dtype {A.dtype}, configured {cfg.dtype}")
        if not np.all(np.isfinite(A)):
            fail(name, path, f"is damaged: {key} has non-finite entries")
    epochs_done = _scalar(z, "epochs_done", "iu", name, path)
    if not 0 <= epochs_done <= cfg.epochs:
        fail(name, path, f"is damaged: epochs_done={epochs_done} is outside [0, epochs={cfg.epochs}]")
    wall = _scalar(z, "wall_time", "fiu", name, path)
    if not (math.isfinite(wall) and wall >= 0):
        fail(name, path, f"is damaged: wall_time={wall!r} must be finite and >= 0")
    hist = {}
    for k in _HIST_KEYS:
        h = z[f"hist_{k}"]
        if h.shape != (epochs_done,) or h.dtype.kind not in "fiu":
            fail(name, path, f"is damaged: history {k!r} must have one number per epoch ({epochs_done}), "
                 f"got shape {h.shape} dtype {h.dtype}")
        hist[k] = h.astype(np.float64)
    if not np.array_equal(hist["epoch"], np.arange(1, epochs_done + 1)):
        fail(name, path, "is damaged: the history's epoch numbers are not 1, 2, …, epochs_done")
    for k, lo, hi, nan_ok in (("loss", 0.0, np.inf, False), ("train_acc", 0.0, 1.0, False),
                              ("test_acc", 0.0, 1.0, True), ("test_loss", 0.0, np.inf, True),
                              ("time", 0.0, np.inf, False)):
        h = hist[k]
        ok = (h >= lo) & (h <= hi) & np.isfinite(h) | (np.isnan(h) if nan_ok else False)
        if not np.all(ok):
            fail(name, path, f"is damaged: history {k!r} has entries outside [{lo}, {hi}]")
    return {"task": task, "config": cfg, "E": E.copy(), "U": U.copy(), "history": hist,
            "epochs_done": int(epochs_done), "wall_time": float(wall)}


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


class _PathOutAsGiven(PathOut):
    """PathOut that hands the caller's own object back (a pathlib.Path stays a Path in messages and results)."""

    def __call__(self, name, value):
        super().__call__(name, value)
        return value


#: kinds of train()'s arguments (the hyper-parameters share TrainConfig's)
TRAIN_KINDS = dict(
    task=Instance(Task), **{k: v for k, v in CONFIG_KINDS.items() if k != "seed"}, seed=Seed(),
    checkpoint=_PathOutAsGiven().or_none(), checkpoint_every=Int(min=1).or_none(), resume=PathIn().or_none(),
    progress=Bool(), callback=Anything("callable(epoch, info) or None"), measure=Bool(),
    measure_every=Int(min=1).or_none(), keep_data=Bool(),
)

# optimistic cost model of one epoch (a lower bound on purpose: the budget refuses only absurd requests)
_SEC_PER_FLOP = {"numba": 1e-11, "numpy": 1e-11, "cupy": 1e-13}
_SEC_PER_STEP = {"numba": 3e-7, "numpy": 1e-5, "cupy": 2e-5}
_SEC_PER_EPOCH = 1e-6


def _check_train_budget(task, cfg, start_epoch):
    """Refuse a run whose data, weights or estimated time exceed the budget, before anything is built."""
    K, L, d = task.K, task.L, cfg.d
    N = K * cfg.n_spl
    n_all = K * (cfg.n_spl + cfg.n_test)
    b = min(cfg.batch, N)
    item = 4 if cfg.dtype == "float32" else 8
    params = d * (task.n_w + K * L)
    check_work("n_spl", cfg.n_spl, items=n_all * L,
               bytes=8 * n_all * (3 * L + 2) + 16 * N + 8 * params * 3 + item * (params * 3 + b * (2 * L * d + 2 * K)),
               what=f"train ({n_all} sentences of {L} words, {params} weights)")
    steps = -(-N // b)
    flops = 6 * N * L * d * K + 2 * K * cfg.n_test * L * d * K
    epochs = cfg.epochs - start_epoch
    check_work("epochs", cfg.epochs, seconds=epochs * (
        _SEC_PER_EPOCH + steps * _SEC_PER_STEP[cfg.backend] + flops * _SEC_PER_FLOP[cfg.backend]),
        what=f"train ({epochs} epochs of {N} sentences; a lower-bound estimate)")


@public(**TRAIN_KINDS, legacy_positional=("n_spl", "d"))
def train(task: Task, *, n_spl: int, d: int = 100, layernorm: bool = False, eps: float = 1e-05,
    lr: float = 0.1, batch: int = 100, epochs: int = 100, lam_W: float = 0.001, lam_U: float = 0.001,
    seed: int = 0, backend: str = "numba", dtype: str = "float32", init_scale: float = 0.001,
    n_test: int = 5, eval_every: int | None = None, checkpoint=None, checkpoint_every: int | None = None,
    resume=None, progress: bool = False, callback=None, measure: bool = True,
    measure_every: int | None = None, keep_data: bool = False) -> TrainRun:
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
    seed = _int_seed(seed)
    cfg = _make_config(n_spl=n_spl, d=d, layernorm=layernorm, eps=eps, lr=lr, batch=batch, epochs=epochs,
                       lam_W=lam_W, lam_U=lam_U, seed=seed, backend=backend, dtype=dtype, init_scale=init_scale,
                       n_test=n_test, eval_every=eval_every)
    if checkpoint_every is not None and checkpoint is None:
        fail("checkpoint_every", checkpoint_every, "needs checkpoint= (a file path)")
    if callback is not None and not callable(callback):
        fail("callback", callback, "must be callable")
    snapshots = []

    history = {k: [] for k in _HIST_KEYS}
    start_epoch = 0
    wall0 = 0.0
    if resume is not None:
        ck = _load_checkpoint(resume, "resume")
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
        _check_train_budget(task, cfg, start_epoch)
    else:
        _check_train_budget(task, cfg, 0)
        E0, U0 = _init_weights(task, cfg.d, cfg.seed, cfg.init_scale)

    data = _make_data(task, cfg.n_spl, cfg.seed, cfg.n_test)
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
                loss_sum, correct = engine.epoch(epoch_permutation(seed=cfg.seed, epoch=epoch, n=N))
                e1 = epoch + 1
                test_acc = test_loss = float("nan")
                if n_test_total and scheduled(e1):
                    tl, tc = engine.evaluate("test")
                    test_acc, test_loss = tc / n_test_total, tl / n_test_total
                loss = loss_sum / N
                if not (math.isfinite(loss) and engine.finite()):
                    fail("lr", cfg.lr, f"training diverged (non-finite loss or weights at epoch {e1}); "
                         f"use a smaller lr (or init_scale={cfg.init_scale:g})")
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
                    try:
                        save_checkpoint(path, task, cfg, E, U, history, e1, elapsed)
                    except (OSError, FCTheoryError):  # nowhere to save: still stop, keep the run in memory
                        path = None
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


_RESUME_OPTIONS = ("backend", "eval_every", "checkpoint", "checkpoint_every", "progress", "callback", "measure",
                   "measure_every", "keep_data")


@public(path=PathIn(), epochs=Int(min=0, max=10**12).or_none(), legacy_positional=("epochs",))
def resume(path, *, epochs: int | None = None, **kw) -> TrainRun:
    """Continue the run saved in checkpoint ``path`` (to ``epochs`` total, default: its configured epochs).

    Other keyword arguments (checked by :func:`train`) may be any of ``backend``, ``eval_every``,
    ``checkpoint``, ``checkpoint_every``, ``progress``, ``callback``, ``measure``, ``measure_every``,
    ``keep_data``; everything else comes from the checkpoint (which is verified first).
    """
    for k in kw:
        if k not in _RESUME_OPTIONS:
            fail(k, kw[k], f"is not an option of resume (allowed: {', '.join(_RESUME_OPTIONS)}); the rest of the "
                 "configuration comes from the checkpoint")
    ck = _load_checkpoint(path, "path")
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
