"""The engines that run SGD epochs: one per backend, each for R ≥ 1 runs stacked along a leading run axis.

Every engine holds the working copies of E = Wᵀ (R×n_w×d) and U (R×K×Ld) and the runs' sentences, and
speaks one protocol (:class:`Engine`):

* ``epoch(perms)`` — one epoch of every run (``perms``: R×N shuffles); returns (summed cross-entropy (R,),
  number correct (R,)) on the host;
* ``evaluate(r, which="test")`` — (summed cross-entropy, number correct) of run r on its test (or train) set;
* ``finite()`` — per run, whether every weight is finite (R bools);
* ``weights(r)`` — host copies (E, U) of run r in the working dtype;
* ``threads()`` — the BLAS-thread context the epochs run in.

The backends differ only in arithmetic: ``numpy`` runs the readable reference step of :mod:`._reference`
(batched gemm over the run axis), ``cupy`` the same step on the GPU (one step costs the same kernel launches
for R runs as for one), ``numba`` the compiled epoch of :mod:`._numba_kernels` for each run (runs in parallel
threads, one BLAS thread each, when R > 1). A run's arithmetic never depends on the other runs of its batch,
so each run of a batch is bitwise its single-run twin on the host backends.
"""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np

from .._backend import get_namespace, to_numpy
from .._threads import blas_threads
from . import _reference as ref

__all__ = ["Engine", "NumpyEngine", "CupyEngine", "NumbaEngine", "ENGINES", "make_engine"]


class Engine:
    """R runs of one shape: E (R×n_w×d), U (R×K×Ld), sentences X (R×N×L), labels y (R×N).

    ``tests`` is one (X_test, y_test) pair per run; ``cfgs`` one configuration per run (they share
    ``layernorm``, ``batch`` and ``dtype``; ``lr``, ``lam_W``, ``lam_U``, ``eps`` are read per run).
    The engine copies E and U: it never writes into the caller's arrays.
    """

    xp = np

    def __init__(self, E, U, X, y, tests, cfgs):
        c = cfgs[0]
        self.dtype = np.dtype(c.dtype)
        self.layernorm = c.layernorm
        # a batch beyond N is the whole set: never allocate more rows than there are sentences
        self.bsz = max(1, min(c.batch, X.shape[1]))
        self.R = len(cfgs)
        self.params = np.array([[k.lr, k.lam_W, k.lam_U, k.eps] for k in cfgs], dtype=self.dtype)
        self._setup(np.array(E, self.dtype, order="C"), np.array(U, self.dtype, order="C"), X, y, tests)

    def finite(self) -> np.ndarray:
        """Per run: True while every weight is finite (checked once per epoch: a cheap pass)."""
        xp = self.xp
        return to_numpy(xp.isfinite(self.E).all(axis=(1, 2)) & xp.isfinite(self.U).all(axis=(1, 2)))

    def weights(self, r: int = 0):
        """Host copies (E, U) of run r in the working dtype."""
        return to_numpy(self.E[r]).copy(), to_numpy(self.U[r]).copy()

    def threads(self):
        """The context the epochs run in (BLAS threads)."""
        return nullcontext()


class NumpyEngine(Engine):
    """The reference step of :mod:`._reference` on NumPy arrays (``xp`` = numpy)."""

    def _setup(self, E, U, X, y, tests):
        xp = self.xp
        self.E, self.U = xp.asarray(E), xp.asarray(U)
        self.X, self.y = xp.asarray(X), xp.asarray(y)
        self.tests = [(xp.asarray(a), xp.asarray(b)) for a, b in tests]
        self.scatter_add = ref.scatter_add_for(xp)
        # per-run scalars in the working dtype (R×1×1) so float32 stays float32 on every backend
        col = [xp.asarray(self.params[:, j, None, None]) for j in range(3)]
        self.lr, self.lam_W, self.lam_U = col
        t = self.dtype.type
        self.scalars = tuple(t(v) for v in self.params[0, :3])  # one run: lr, λ_W, λ_U as dtype scalars
        self.eps = self.dtype.type(self.params[0, 3])

    def epoch(self, perms):
        xp = self.xp
        perms = xp.asarray(perms)
        R, N = perms.shape
        runs = xp.arange(R)[:, None]
        E, U, X, y, coef = self.E, self.U, self.X, self.y, (self.lr, self.lam_W, self.lam_U)
        if R == 1:  # one run: plain 2-D products on the run's own arrays
            E, U, X, y, coef = E[0], U[0], X[0], y[0], self.scalars
            perms = perms[0]
        # accumulate on the device: no host synchronisation per step on the CuPy path
        loss = xp.zeros(R, dtype=xp.float64)
        correct = xp.zeros(R, dtype=xp.int64)
        # overflow in a diverging run is reported once per epoch by the loop (finite check), not as warnings
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            for b0 in range(0, N, self.bsz):
                rows = perms[..., b0 : b0 + self.bsz]
                Xb, yb = (X[rows], y[rows]) if R == 1 else (X[runs, rows], y[runs, rows])
                ls, c = ref.runs_sgd_step(xp, E, U, Xb, yb, *coef, self.layernorm, self.eps, self.scatter_add)
                loss += ls
                correct += c
        return to_numpy(loss), to_numpy(correct)

    def evaluate(self, r: int = 0, which: str = "test"):
        X, y = self.tests[r] if which == "test" else (self.X[r], self.y[r])
        with np.errstate(over="ignore", invalid="ignore"):
            return ref.evaluate(self.xp, self.E[r], self.U[r], X, y, 500, self.layernorm, self.eps)


class CupyEngine(NumpyEngine):
    """The reference step on CuPy arrays (same code, ``xp`` = cupy)."""

    def _setup(self, E, U, X, y, tests):
        self.xp = get_namespace("cupy")
        super()._setup(E, U, X, y, tests)


class NumbaEngine(Engine):
    """Each run's compiled epoch (:func:`._numba_kernels.train_epoch`); R > 1 runs in parallel threads."""

    def _setup(self, E, U, X, y, tests):
        from . import _numba_kernels as nk  # noqa: PLC0415 - compile/load the numba kernels only when used

        self.nk = nk
        self.E, self.U = E, U
        self.X, self.y = np.ascontiguousarray(X), np.ascontiguousarray(y)
        self.tests = [(np.ascontiguousarray(a), np.ascontiguousarray(b)) for a, b in tests]

    def epoch(self, perms):
        perms = np.ascontiguousarray(perms, np.int64)
        if self.R == 1:  # one run: the kernel itself, with threaded BLAS
            ls, c = self.nk.train_epoch(
                self.E[0], self.U[0], self.X[0], self.y[0], perms[0], self.bsz, self.params[0], self.layernorm
            )
            return np.array([ls]), np.array([c], np.int64)
        loss = np.zeros(self.R)
        correct = np.zeros(self.R, np.int64)
        self.nk.train_epochs(
            self.E, self.U, self.X, self.y, perms, self.bsz, self.params, self.layernorm, loss, correct
        )
        return loss, correct

    def evaluate(self, r: int = 0, which: str = "test"):
        X, y = self.tests[r] if which == "test" else (self.X[r], self.y[r])
        ls, c = self.nk.evaluate(self.E[r], self.U[r], X, y, 500, self.params[r], self.layernorm)
        return float(ls), int(c)

    def threads(self):
        # R > 1: one BLAS thread per run, the runs are the parallelism (threaded BLAS on these small products,
        # several at once, oversubscribes the cores); set once around the training, not per epoch (it costs ms)
        return blas_threads(1) if self.R > 1 else nullcontext()


ENGINES = {"numpy": NumpyEngine, "numba": NumbaEngine, "cupy": CupyEngine}


def make_engine(backend: str, E, U, X, y, tests, cfgs) -> Engine:
    """The engine of ``backend`` for the runs ``cfgs`` (see :class:`Engine` for the arguments)."""
    return ENGINES[backend](E, U, X, y, tests, cfgs)
