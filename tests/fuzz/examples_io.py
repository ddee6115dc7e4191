"""Valid, fast examples for the public callables of fctheory.io that no other area covers (the task codec,
weights and run folders are the objects of fctheory.diagnosis and fctheory.risk: their examples are in
examples_diagnose.py).
"""

from __future__ import annotations

import numpy as np

import fctheory as fc

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
}

SKIP = {}

ALLOW_NONFINITE = {}
