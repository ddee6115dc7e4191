"""Single-run view of the engines of :mod:`.engines` (the protocol of fctheory 1.0, kept for its callers).

``ENGINES[backend](E, U, data, cfg)`` is the engine of ``backend`` for one run (R = 1) with the methods
``epoch(perm)`` → (summed cross-entropy, number correct), ``evaluate("train" | "test")``, ``finite()`` → bool
and ``weights()`` → (E, U).
"""

from __future__ import annotations

import numpy as np

from .engines import make_engine

__all__ = ["ENGINES", "SingleRun"]


class SingleRun:
    """One run of an :class:`~.engines.Engine`, with scalar results."""

    def __init__(self, backend, E, U, data, cfg):
        self.cfg = cfg
        self.engine = make_engine(
            backend,
            np.asarray(E)[None],
            np.asarray(U)[None],
            data.X_train[None],
            data.y_train[None],
            [(data.X_test, data.y_test)],
            [cfg],
        )
        self.xp = self.engine.xp

    @property
    def E(self):
        return self.engine.E[0]

    @property
    def U(self):
        return self.engine.U[0]

    def epoch(self, perm):
        loss, correct = self.engine.epoch(perm[None])
        return float(loss[0]), int(correct[0])

    def evaluate(self, which="test"):
        return self.engine.evaluate(0, which)

    def finite(self) -> bool:
        return bool(self.engine.finite()[0])

    def weights(self):
        return self.engine.weights(0)


def _factory(backend):
    def build(E, U, data, cfg):
        return SingleRun(backend, E, U, data, cfg)

    build.__name__ = f"{backend.capitalize()}Engine"
    return build


ENGINES = {name: _factory(name) for name in ("numpy", "numba", "cupy")}
