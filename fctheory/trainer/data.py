"""What a training run starts from: its configuration, its sentences, its initial weights and its shuffles.

Determinism: everything random derives from ``seed`` through independent streams —
``default_rng([seed, 1])`` draws the training sentences, ``[seed, 2]`` the test sentences,
``[seed, 3]`` the initial weights (in float64, then cast) and ``[seed, 4, e]`` the shuffle of
epoch e. Hence every backend sees the same data, shuffles and initialisation, and a resumed run
needs nothing but the weights: it continues bitwise identically.

The public functions (:func:`make_data`, :func:`init_weights`, :func:`epoch_permutation`) validate and
budget their arguments; the trainer, whose configuration is already checked and budgeted, calls their
unchecked twins (:func:`sample_data`, :func:`initial_weights`, :func:`permutation`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from .._budget import check_work
from .._validate import Array, Bool, Choice, Instance, Int, Real, Seed, fail, public, public_class
from ..io import task_object, to_json
from ..io.sentences import draw_training
from ..task import Task

__all__ = [
    "TrainConfig",
    "TrainData",
    "CONFIG_KINDS",
    "check_data",
    "make_data",
    "init_weights",
    "epoch_permutation",
    "sample_data",
    "initial_weights",
    "permutation",
    "int_seed",
    "jsonable",
    "task_dict",
]


class _DType(Choice):
    """ "float32" or "float64" (numpy dtypes and scalar types such as ``np.float32`` are accepted too)."""

    def __call__(self, name, value):
        if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
            value = str(np.dtype(value))
        return super().__call__(name, value)


_SEED_INT = Int(min=0, max=2**63 - 1)
#: kinds of the hyper-parameters (TrainConfig's fields and train()'s arguments of the same name)
CONFIG_KINDS = dict(
    n_spl=Int(min=1, max=10**12),
    d=Int(min=1, max=2**31),
    layernorm=Bool(),
    eps=Real(lo=0.0),
    lr=Real(lo=0.0, lo_open=True),
    batch=Int(min=1, max=2**40),
    epochs=Int(min=0, max=10**12),
    lam_W=Real(lo=0.0),
    lam_U=Real(lo=0.0),
    seed=_SEED_INT,
    backend=Choice("numba", "numpy", "cupy"),
    dtype=_DType("float32", "float64"),
    init_scale=Real(lo=0.0, lo_open=True, hi=1e6),
    n_test=Int(min=0, max=10**12),
    eval_every=Int(min=1).or_none(),
)


@dataclass(frozen=True)
class TrainConfig:
    """Hyper-parameters of a training run (see :func:`fctheory.train` for their meaning).

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


def int_seed(seed) -> int:
    """A concrete seed in [0, 2**63 − 1]: None draws one from fresh entropy, a Generator draws one from itself."""
    if seed is None:
        return int(np.random.SeedSequence().entropy % (2**63 - 1))
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, 2**63 - 1))
    return int(seed)


@dataclass(frozen=True)
class TrainData:
    """Training and test sentences (word indices, class-major as in the notebooks).

    ``X_train`` (N×L) and ``X_test`` (N_t×L) hold word indices ≥ 0, ``y_train``/``y_test`` class
    labels ≥ 0 (stored as int64 copies). Against a task they must also satisfy x < n_w, y < K and
    L columns; :func:`fctheory.trainer.measure` and :func:`fctheory.train` check that.
    """

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray

    def __post_init__(self):
        for X, y, nx, ny in (
            (self.X_train, self.y_train, "X_train", "y_train"),
            (self.X_test, self.y_test, "X_test", "y_test"),
        ):
            if X.shape[0] != y.shape[0]:
                fail(ny, y, f"must have one label per row of {nx} ({X.shape[0]} rows), got {y.shape[0]}")
        if self.X_test.shape[1] != self.X_train.shape[1]:
            fail(
                "X_test",
                self.X_test,
                f"must have L = {self.X_train.shape[1]} columns like X_train, got {self.X_test.shape[1]}",
            )


_IDX = dict(integer=True, min=0, max=2**62)
TrainData.__init__ = public(
    X_train=Array(ndim=2, **_IDX),
    y_train=Array(ndim=1, **_IDX),
    X_test=Array(ndim=2, min_size=0, **_IDX),
    y_test=Array(ndim=1, min_size=0, **_IDX),
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


@public(
    task=Instance(Task),
    n_spl=Int(min=1, max=10**12),
    seed=Seed(),
    n_test=Int(min=0, max=10**12),
    legacy_positional=("n_spl", "seed", "n_test"),
)
def make_data(task: Task, *, n_spl: int, seed, n_test: int = 5) -> TrainData:
    """n_spl training and n_test fresh test sentences per class (the same K latent variables).

    ``seed`` (an int; None or a Generator supply one) fixes both sets: training sentences come
    from ``default_rng([seed, 1])``, test sentences from ``default_rng([seed, 2])``. The K·(n_spl +
    n_test)·L word indices must fit the memory budget (checked before drawing).
    """
    seed = int_seed(seed)
    n = task.K * (n_spl + n_test)
    check_work(
        "n_spl",
        n_spl,
        items=n * task.L,
        bytes=8 * n * (3 * task.L + 2),
        what=f"make_data ({n} sentences of {task.L} words)",
    )
    return sample_data(task, n_spl, seed, n_test)


def sample_data(task: Task, n_spl: int, seed: int, n_test: int) -> TrainData:
    """:func:`make_data` for arguments already checked and budgeted (the trainer's configuration)."""
    X, y = draw_training(task, n_spl, seed)  # the one home of the training stream (fctheory.io.sentences)
    if n_test > 0:
        Xt, yt = task.sample(n_test, seed=np.random.default_rng([seed, 2]))
    else:
        Xt, yt = np.zeros((0, task.L), np.int64), np.zeros(0, np.int64)
    return TrainData(X, y, Xt, yt)


@public(
    task=Instance(Task),
    d=Int(min=1, max=2**31),
    seed=Seed(),
    init_scale=CONFIG_KINDS["init_scale"],
    dtype=CONFIG_KINDS["dtype"],
    legacy_positional=("d", "seed", "init_scale", "dtype"),
)
def init_weights(task: Task, *, d: int, seed, init_scale: float = 0.001, dtype="float64"):
    """Initial (E = Wᵀ, U) as in the notebooks: N(0,1)·s and U(−1/√(Ld), 1/√(Ld))·s, s = init_scale.

    Drawn in float64 from ``default_rng([seed, 3])`` and then cast, so float32 and float64 runs
    start from the same point (up to the cast). ``init_scale`` ≤ 1e6.
    """
    seed = int_seed(seed)
    check_work(
        "d",
        d,
        items=d * (task.n_w + task.K * task.L),
        bytes=16 * d * (task.n_w + task.K * task.L),
        what="init_weights (E and U)",
    )
    return initial_weights(task, d, seed, init_scale, dtype)


def initial_weights(task: Task, d: int, seed: int, init_scale: float = 1e-3, dtype="float64"):
    """:func:`init_weights` for arguments already checked and budgeted."""
    rng = np.random.default_rng([seed, 3])
    E = rng.standard_normal((task.n_w, d)) * init_scale
    bound = 1.0 / math.sqrt(task.L * d)
    U = rng.uniform(-bound, bound, size=(task.K, task.L * d)) * init_scale
    return E.astype(dtype), U.astype(dtype)


@public(seed=Seed(), epoch=Int(min=0, max=2**63 - 1), n=Int(min=0), legacy_positional=("seed", "epoch", "n"))
def epoch_permutation(*, seed, epoch: int, n: int) -> np.ndarray:
    """The shuffle of epoch ``epoch`` (0-based) of n rows: a function of (seed, epoch) only."""
    seed = int_seed(seed)
    check_work("n", n, items=n, bytes=16 * n, what="epoch_permutation")
    return permutation(seed, epoch, n)


def permutation(seed: int, epoch: int, n: int) -> np.ndarray:
    """:func:`epoch_permutation` for arguments already checked and budgeted."""
    return np.random.default_rng([seed, 4, epoch]).permutation(n)


# one JSON codec and one task codec for the whole library (fctheory.io); the trainer's names stay importable
jsonable = to_json
task_dict = task_object  # the task as recorded in a run summary
