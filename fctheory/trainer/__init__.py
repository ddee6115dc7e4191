"""Reference trainer for the networks h and h* of *Feature Collapse*, and the paper's experiments.

Layout: this package is ``fctheory.trainer``; ``fctheory.train`` (the attribute) is the function
:func:`train` re-exported, so ``fctheory.train(task, n_spl, ...)`` trains while the sub-modules are
imported as ``fctheory.trainer.<module>``:

* :mod:`.core` — :func:`train`, :class:`TrainRun`, :func:`resume`; :mod:`.batched` — ``train_batched``;
* :mod:`.data` — :class:`TrainConfig`, :class:`TrainData`, sentences, initial weights and shuffles;
* :mod:`.loop` — the one SGD loop (history, evaluation schedule, divergence, Ctrl-C, progress bar) that
  ``train`` (one run) and ``train_batched`` (R runs) share;
* :mod:`.engines` — one engine per backend (numpy, numba, cupy), each for R ≥ 1 runs;
  :mod:`._reference` — the readable NumPy/CuPy step; :mod:`._numba_kernels` — compiled epochs;
* checkpoints: :mod:`fctheory.io.checkpoint` (format) and :func:`load_checkpoint`;
* :mod:`.measure` — measurements next to the predictions of Theorems 1–3;
* :mod:`.figures` — PCA scatter plots (figures 3, 4) and norm against frequency rank;
* :mod:`.presets`, :mod:`.reproduce` — fig3/fig4a/fig4b/fig4c/k50 and the markdown report.
"""

from .core import (
    TrainConfig,
    TrainData,
    TrainingInterrupted,
    TrainRun,
    epoch_permutation,
    init_weights,
    load_checkpoint,
    make_data,
    resume,
    train,
)
from .measure import Measurements, measure, theory_prediction
from .presets import PRESETS, Preset, get_preset

__all__ = [
    "train",
    "resume",
    "TrainRun",
    "TrainConfig",
    "TrainData",
    "TrainingInterrupted",
    "load_checkpoint",
    "make_data",
    "init_weights",
    "epoch_permutation",
    "Measurements",
    "measure",
    "theory_prediction",
    "Preset",
    "PRESETS",
    "get_preset",
]
