"""Backends that run epochs: NumPy (reference), numba (fast CPU) and CuPy (GPU).

All three receive the same host data (sentences, shuffles, initial weights), so a seed
fixes the run on every backend; only the arithmetic engine differs.
"""
from __future__ import annotations

import numpy as np

from .._backend import get_namespace, to_numpy
from . import _reference as ref


class _Engine:
    """Holds the working copies of E = Wᵀ (n_w×d) and U (K×Ld) and runs epochs on them."""

    def __init__(self, E, U, data, cfg):
        self.cfg = cfg
        self.dtype = np.dtype(cfg.dtype)
        # private copies: an engine never writes into the caller's arrays
        self._setup(np.array(E, self.dtype, order="C"), np.array(U, self.dtype, order="C"), data)

    def finite(self) -> bool:
        """True while every weight is finite (checked once per epoch: a cheap pass)."""
        xp = getattr(self, "xp", np)
        return bool(xp.isfinite(self.E).all()) and bool(xp.isfinite(self.U).all())

    def weights(self):
        """Host copies (E, U) in the working dtype."""
        return to_numpy(self.E).copy(), to_numpy(self.U).copy()


class NumpyEngine(_Engine):
    xp = np

    def _setup(self, E, U, data):
        xp = self.xp
        self.E = xp.asarray(E)
        self.U = xp.asarray(U)
        self.X = xp.asarray(data.X_train)
        self.y = xp.asarray(data.y_train)
        self.sets = {
            "train": (self.X, self.y),
            "test": (xp.asarray(data.X_test), xp.asarray(data.y_test)),
        }
        self.scatter_add = ref.scatter_add_for(xp)
        t = self.dtype.type
        c = self.cfg
        # scalars in the working dtype so float32 stays float32 on every backend
        self.lr, self.lam_W, self.lam_U, self.eps = t(c.lr), t(c.lam_W), t(c.lam_U), t(c.eps)

    def epoch(self, perm):
        xp = self.xp
        perm = xp.asarray(perm)
        bsz = min(self.cfg.batch, perm.shape[0]) or 1  # a batch beyond N is the whole set
        # accumulate on the device: no host synchronisation per step on the CuPy path
        loss = xp.zeros((), dtype=xp.float64)
        correct = xp.zeros((), dtype=xp.int64)
        # overflow in a diverging run is reported once per epoch by train() (finite check), not as warnings
        with np.errstate(over="ignore", invalid="ignore"):
            for b0 in range(0, perm.shape[0], bsz):
                rows = perm[b0 : b0 + bsz]
                ls, c = ref.sgd_step(
                    xp, self.E, self.U, self.X[rows], self.y[rows], self.lr, self.lam_W, self.lam_U,
                    self.cfg.layernorm, self.eps, self.scatter_add,
                )
                loss += ls
                correct += c
        return float(loss), int(correct)

    def evaluate(self, which):
        X, y = self.sets[which]
        with np.errstate(over="ignore", invalid="ignore"):
            return ref.evaluate(self.xp, self.E, self.U, X, y, 500, self.cfg.layernorm, self.eps)


class CupyEngine(NumpyEngine):
    """The reference step on CuPy arrays (same code, ``xp = cupy``)."""

    def _setup(self, E, U, data):
        self.xp = get_namespace("cupy")
        super()._setup(E, U, data)


class NumbaEngine(_Engine):
    def _setup(self, E, U, data):
        from . import _numba_kernels as nk  # noqa: PLC0415 - compile/load the kernels only when used

        self.nk = nk
        self.E, self.U = E, U
        self.sets = {
            "train": (np.ascontiguousarray(data.X_train), np.ascontiguousarray(data.y_train)),
            "test": (np.ascontiguousarray(data.X_test), np.ascontiguousarray(data.y_test)),
        }
        c = self.cfg
        self.params = np.array([c.lr, c.lam_W, c.lam_U, c.eps], dtype=self.dtype)

    def epoch(self, perm):
        X, y = self.sets["train"]
        ls, c = self.nk.train_epoch(
            # a batch beyond N is the whole set: never allocate more rows than there are sentences
            self.E, self.U, X, y, np.ascontiguousarray(perm, np.int64), max(1, min(self.cfg.batch, perm.shape[0])),
            self.params,
            self.cfg.layernorm,
        )
        return float(ls), int(c)

    def evaluate(self, which):
        X, y = self.sets[which]
        ls, c = self.nk.evaluate(self.E, self.U, X, y, 500, self.params, self.cfg.layernorm)
        return float(ls), int(c)


ENGINES = {"numpy": NumpyEngine, "numba": NumbaEngine, "cupy": CupyEngine}
