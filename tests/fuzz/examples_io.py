"""Valid, fast examples for the public callables of fctheory.io that no other area covers (the task codec,
weights and run folders are the objects of fctheory.diagnosis and fctheory.risk: their examples are in
examples_diagnose.py).
"""

from __future__ import annotations

import os

import numpy as np

import fctheory as fc

from .harness import scratch_dir


def _sentence_task():
    return fc.Task.random(3, 2, 2, 4, seed=0)


def _sentence_file():
    task = _sentence_task()
    S, y = fc.io.training_sentences(task, n_spl=2, seed=0)
    return fc.io.save_sentences(os.path.join(scratch_dir("sentences-"), "s.npz"), S, y, task=task, n_spl=2, seed=0)


EXAMPLES = {
    "fctheory.io.to_json": lambda: dict(
        v={"R": np.float64(0.5), "ok": np.bool_(True), "x": np.arange(3)}, notes=[], path="results", dps=20
    ),
    "fctheory.io.versions": lambda: dict(include_fctheory=False),
    "fctheory.io.task_object": lambda: dict(task=fc.Task.random(3, 2, 2, 4, seed=0), z_max_entries=100),
    "fctheory.io.task_fingerprint": lambda: dict(task=fc.Task.random(3, 2, 2, 4, seed=0)),
    "fctheory.io.task_from_sizes": lambda: dict(
        n_c=3, s_c=2, L=2, K=4, mu="zipf", seed=0, random_Z=True, names={"K": "--K"}, hint=""
    ),
    "fctheory.io.training_sentences": lambda: dict(task=_sentence_task(), n_spl=2, seed=0),
    "fctheory.io.save_sentences": lambda: dict(
        path=os.path.join(scratch_dir("sentences-"), "s.npz"),
        S=fc.io.training_sentences(_sentence_task(), n_spl=2, seed=0)[0],
        y=fc.io.training_sentences(_sentence_task(), n_spl=2, seed=0)[1],
        task=_sentence_task(),
        n_spl=2,
        seed=0,
    ),
    "fctheory.io.load_sentences": lambda: dict(path=_sentence_file(), task=_sentence_task(), name="--data"),
}

SKIP = {}

ALLOW_NONFINITE = {}
