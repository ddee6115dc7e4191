"""Batched training: many runs of the same shape trained as one computation.

R runs that share the task, ``n_spl``, ``d``, the network, the batch size, the number of epochs and
the dtype — and differ in ``seed``, ``lr``, ``lam_W``, ``lam_U`` — are stacked along a leading
run axis: E (R×n_w×d), U (R×K×Ld), the sentences X (R×N×L) and the shuffles (R×N). Every step is
the reference step of :mod:`._reference` written once against the array namespace ``xp`` with
the run axis in front (batched gemm for the three products, one scatter-add for all runs), so

* on the GPU (``backend="cupy"``) one step costs the same ~25 kernel launches for R runs as for
  one — a single fig3 run is launch-bound (about 1.3 ms per step on an H100), R runs are not;
* on the host, ``backend="numpy"`` runs the same code with NumPy (what the tests compare), and
  ``backend="numba"`` runs the compiled epoch of :mod:`._numba_kernels` for every run of the batch
  in parallel (``prange`` over runs, one BLAS thread each) instead of one run after another with
  threaded BLAS on small products.

Each run is its sequential twin: ``train(task, n_spl, d, seed=s, lr=…, …)`` with the same
configuration gives the same data (``default_rng([seed, 1])``), test sentences (``[seed, 2]``),
initial weights (``[seed, 3]``), shuffles (``[seed, 4, e]``) and arithmetic (float64 agreement to
1e-12 is tested; the numba backend is bitwise identical per run).
"""
from __future__ import annotations

import math
import time

import numpy as np

from .._errors import FCTheoryError
from .._validate import Array, Bool, Choice, Instance, Int, Real, fail, public
from ..task import Task
from .core import TrainConfig, TrainRun, epoch_permutation, init_weights, make_data

__all__ = ["train_batched", "batch_key", "BATCH_AXES"]

#: configuration entries that may differ inside one batch (everything else must agree)
BATCH_AXES = ("seed", "lr", "lam_W", "lam_U")
_HIST_KEYS = ("epoch", "loss", "train_acc", "test_acc", "test_loss", "time")


def batch_key(config: dict) -> tuple:
    """The part of a training configuration that runs of one batch must share.

    Two configurations with equal keys (and the same task) can be trained as one batch.
    """
    return tuple(sorted((k, v) for k, v in config.items() if k not in BATCH_AXES))


# ----------------------------------------------------------------------------- the batched step (xp)
def _layernorm_runs(xp, E, eps):
    """φ of every word embedding of every run (last axis): (φ(E), σ)."""
    C = E - E.mean(axis=-1, keepdims=True)
    sig = xp.sqrt((C * C).mean(axis=-1, keepdims=True) + eps)
    return C / sig, sig


def batched_sgd_step(xp, E, U, Xb, yb, lr, lam_W, lam_U, layernorm, eps, scatter_add):
    """One SGD step of R runs at once; E (R×n_w×d) and U (R×K×Ld) are updated in place.

    ``Xb`` (R×b×L) and ``yb`` (R×b) are each run's minibatch; ``lr``, ``lam_W``, ``lam_U`` are
    R×1×1 arrays in the working dtype. The arithmetic per run is :func:`._reference.sgd_step`
    (same operations, same order): the gradient of the minibatch-mean cross-entropy, plus λ·w.

    Returns (summed cross-entropy per run (R,), float64; number correct per run (R,)).
    """
    R, b, L = Xb.shape
    n_w, d = E.shape[1], E.shape[2]
    V, sig = _layernorm_runs(xp, E, eps) if layernorm else (E, None)
    F = V[xp.arange(R)[:, None, None], Xb].reshape(R, b, L * d)  # concat(φ(w_{x_1}), …) per run
    S = F @ xp.swapaxes(U, 1, 2)  # R × b × K: batched gemm
    m = S.max(axis=2, keepdims=True)
    ex = xp.exp(S - m)
    z = ex.sum(axis=2, keepdims=True)
    rr = xp.arange(R)[:, None]
    rows = xp.arange(b)[None, :]
    loss = xp.log(z[:, :, 0]) - (S[rr, rows, yb] - m[:, :, 0])
    correct = xp.argmax(S, axis=2) == yb
    G = ex / z
    G[rr, rows, yb] -= 1
    G /= b  # ∂(mean CE)/∂s
    dF = (G @ U).reshape(R * b * L, d)
    dU = xp.swapaxes(G, 1, 2) @ F
    dV = xp.zeros_like(E)
    # one scatter-add for all runs: word w of run r is row r·n_w + w of the stacked tables
    idx = (xp.arange(R)[:, None] * n_w + Xb.reshape(R, b * L)).reshape(-1)
    scatter_add(dV.reshape(R * n_w, d), idx, dF)
    if layernorm:  # VJP of φ (Lemma S), per word of every run
        dE = (dV - dV.mean(axis=2, keepdims=True) - V * (V * dV).sum(axis=2, keepdims=True) / d) / sig
    else:
        dE = dV
    if xp is np:
        E -= lr * (dE + lam_W * E)
        U -= lr * (dU + lam_U * U)
    else:  # one fused pass over the weights instead of four (U is R·K·Ld: the largest array)
        _fused_update(xp)(lr, lam_W, dE, E)
        _fused_update(xp)(lr, lam_U, dU, U)
    return loss.sum(axis=1, dtype=xp.float64), correct.sum(axis=1)


_FUSED = {}


def _fused_update(xp):
    """CuPy kernel w ← w − lr·(g + λ·w), the reference update's operations in the same order."""
    if "k" not in _FUSED:
        _FUSED["k"] = xp.ElementwiseKernel("T lr, T lam, T g", "T w", "w = w - lr * (g + lam * w)",
                                           "fctheory_sgd_update")
    return _FUSED["k"]


class _XPBatch:
    """The batched reference step on NumPy or CuPy arrays."""

    def __init__(self, xp, E, U, X, y, tests, cfgs, dtype):
        from . import _reference as ref  # noqa: PLC0415

        self.xp, self.ref = xp, ref
        self.E, self.U = xp.asarray(E), xp.asarray(U)
        self.X, self.y = xp.asarray(X), xp.asarray(y)
        self.tests = [(xp.asarray(a), xp.asarray(b)) for a, b in tests]
        t = np.dtype(dtype).type
        col = lambda key: xp.asarray(np.array([getattr(c, key) for c in cfgs], dtype=dtype)[:, None, None])  # noqa: E731
        self.lr, self.lam_W, self.lam_U = col("lr"), col("lam_W"), col("lam_U")
        self.eps = t(cfgs[0].eps)
        self.layernorm, self.bsz = cfgs[0].layernorm, cfgs[0].batch
        self.scatter_add = ref.scatter_add_for(xp)

    def epoch(self, perms):
        xp = self.xp
        perms = xp.asarray(perms)
        R, N = perms.shape
        rr = xp.arange(R)[:, None]
        loss = xp.zeros(R, dtype=xp.float64)
        correct = xp.zeros(R, dtype=xp.int64)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            for b0 in range(0, N, self.bsz):
                rows = perms[:, b0 : b0 + self.bsz]
                ls, c = batched_sgd_step(xp, self.E, self.U, self.X[rr, rows], self.y[rr, rows], self.lr,
                                         self.lam_W, self.lam_U, self.layernorm, self.eps, self.scatter_add)
                loss += ls
                correct += c
        from .._backend import to_numpy  # noqa: PLC0415

        return to_numpy(loss), to_numpy(correct)

    def evaluate(self, r):
        X, y = self.tests[r]
        with np.errstate(over="ignore", invalid="ignore"):
            return self.ref.evaluate(self.xp, self.E[r], self.U[r], X, y, 500, self.layernorm, self.eps)

    def finite(self):
        from .._backend import to_numpy  # noqa: PLC0415

        xp = self.xp
        return to_numpy(xp.isfinite(self.E).all(axis=(1, 2)) & xp.isfinite(self.U).all(axis=(1, 2)))

    def weights(self, r):
        from .._backend import to_numpy  # noqa: PLC0415

        return to_numpy(self.E[r]).copy(), to_numpy(self.U[r]).copy()


class _NumbaBatch:
    """Every run's compiled epoch (:func:`._numba_kernels.train_epoch`), runs in parallel threads."""

    def __init__(self, E, U, X, y, tests, cfgs, dtype):
        from . import _numba_kernels as nk  # noqa: PLC0415

        self.nk = nk
        self.E, self.U = np.ascontiguousarray(E), np.ascontiguousarray(U)
        self.X, self.y = np.ascontiguousarray(X), np.ascontiguousarray(y)
        self.tests = [(np.ascontiguousarray(a), np.ascontiguousarray(b)) for a, b in tests]
        self.params = np.array([[c.lr, c.lam_W, c.lam_U, c.eps] for c in cfgs], dtype=dtype)
        self.layernorm, self.bsz = cfgs[0].layernorm, cfgs[0].batch

    def epoch(self, perms):
        R = self.E.shape[0]
        loss = np.zeros(R)
        correct = np.zeros(R, np.int64)
        # BLAS is pinned to one thread around the whole training (train_batched)
        _numba_train_epochs()(self.E, self.U, self.X, self.y, np.ascontiguousarray(perms, np.int64),
                              self.bsz, self.params, self.layernorm, loss, correct)
        return loss, correct

    def evaluate(self, r):
        X, y = self.tests[r]
        ls, c = self.nk.evaluate(self.E[r], self.U[r], X, y, 500, self.params[r], self.layernorm)
        return float(ls), int(c)

    def finite(self):
        return np.isfinite(self.E).all(axis=(1, 2)) & np.isfinite(self.U).all(axis=(1, 2))

    def weights(self, r):
        return self.E[r].copy(), self.U[r].copy()


_KERNEL = []


def _numba_train_epochs():
    """The compiled ``prange`` over runs of :func:`._numba_kernels.train_epoch` (built on first use)."""
    if not _KERNEL:
        import numba as nb  # noqa: PLC0415

        from ._numba_kernels import train_epoch  # noqa: PLC0415

        @nb.njit(parallel=True, cache=True)
        def train_epochs(E, U, X, y, perms, bsz, params, layernorm, loss, correct):
            for r in nb.prange(E.shape[0]):  # each run: the sequential kernel, unchanged
                ls, c = train_epoch(E[r], U[r], X[r], y[r], perms[r], bsz, params[r], layernorm)
                loss[r] = ls
                correct[r] = c

        _KERNEL.append(train_epochs)
    return _KERNEL[0]


def _per_run(name, value, R, conv):
    arr = np.atleast_1d(value)
    if arr.ndim != 1:
        fail(name, value, "must be a number or a 1-D sequence (one entry per run)")
    if arr.size not in (1, R):
        fail(name, value, f"has {arr.size} entries; the batch has {R} runs (give 1 or {R})")
    return [conv(v) for v in np.broadcast_to(arr, (R,))]


@public(task=Instance(Task), n_spl=Int(min=1), d=Int(min=1),
        seed=Array(ndim=(0, 1), integer=True, min=0, max=2**62), lr=Real(lo=0, lo_open=True, array=True),
        lam_W=Real(lo=0, array=True), lam_U=Real(lo=0, array=True), layernorm=Bool(), eps=Real(lo=0),
        batch=Int(min=1), epochs=Int(min=0, max=10**7), backend=Choice("numba", "numpy", "cupy"),
        dtype=Choice("float32", "float64"), init_scale=Real(lo=0, lo_open=True), n_test=Int(min=0),
        eval_every=Int(min=1).or_none(), measure=Bool(), keep_data=Bool(), errors=Choice("raise", "return"),
        progress=Bool(), legacy_positional=("n_spl", "d"))
def train_batched(task, *, n_spl, d=100, seed=0, lr=0.1, lam_W=0.001, lam_U=0.001, layernorm=False, eps=1e-05,
    batch=100, epochs=100, backend="numba", dtype="float32", init_scale=0.001, n_test=5, eval_every=None,
    measure=True, keep_data=False, errors="raise", progress=False):
    """Train R runs of h (or h*) that differ in seed, lr and weight decays, as one computation.

    Every run equals :func:`fctheory.train` with the same arguments (its *sequential twin*): same
    data, shuffles and initialisation from its seed, same SGD steps (section 2, eqs. (2)–(3)).

    Parameters
    ----------
    task : Task
    n_spl, d : int
        Training sentences per class; embedding dimension (shared by all runs).
    seed : int or sequence of int
        One seed per run (a scalar is shared). The number of runs R is the longest of ``seed``,
        ``lr``, ``lam_W``, ``lam_U``; each has 1 or R entries.
    lr, lam_W, lam_U : float or sequence of float
        Per-run learning rate and weight decays (λ/2‖·‖² penalties of (2)–(3)).
    layernorm, eps, batch, epochs, dtype, init_scale, n_test, eval_every
        As in :func:`fctheory.train`, shared by all runs.
    backend : {"numba", "numpy", "cupy"}
        numba: every run's compiled epoch, runs in parallel threads; numpy: the batched reference
        step (run axis leading); cupy: the same batched step on the GPU.
    measure : bool
        Measurements (with the theory's predictions) of every run at the end (on the host).
    keep_data : bool
        Keep each run's sentences in ``run.data``.
    errors : {"raise", "return"}
        What to do with a diverging run (non-finite loss): raise its error (as :func:`fctheory.train`
        would), or put the :class:`~fctheory.FCTheoryError` in its place in the returned list and keep
        the other runs.
    progress : bool
        A tqdm bar over epochs.

    Returns
    -------
    list of TrainRun (or FCTheoryError with ``errors="return"``), one per run
        ``wall_time`` of each run is its share of the batch's time (total / R).
    """
    lens = [np.size(v) for v in (seed, lr, lam_W, lam_U)]
    R = max(lens)
    seeds = _per_run("seed", seed, R, int)
    lrs = _per_run("lr", lr, R, float)
    lws = _per_run("lam_W", lam_W, R, float)
    lus = _per_run("lam_U", lam_U, R, float)
    big = float(np.finfo(dtype).max)
    for name, vals in (("lr", lrs), ("lam_W", lws), ("lam_U", lus), ("eps", [eps])):
        for v in vals:
            if v > big:  # the working-dtype copy would overflow to inf
                fail(name, v, f"exceeds the {dtype} range (max {big:.4g}); use dtype='float64' or a smaller value")
    if layernorm and eps == 0.0 and d == 1:
        fail("d", d, "LayerNorm with eps=0 needs d >= 2 (φ of a scalar is undefined)")
    from .._budget import check_work  # noqa: PLC0415

    itemsize = 4 if dtype == "float32" else 8
    per_run = itemsize * 3 * (task.n_w * d + task.K * task.L * d) + 8 * task.K * (n_spl + n_test) * task.L
    check_work("seed", f"{R} runs", bytes=R * per_run, what=f"batched training of {R} runs")
    # time: the three products per step (6·b·L·d·K flops per sentence) plus a per-step overhead
    n_train = task.K * n_spl
    steps = epochs * -(-n_train // batch)
    if backend == "cupy":  # GPU: ~5 TFLOP/s reached at these shapes, ~1 ms of launches per batched step
        est_s = R * epochs * n_train * 6.0 * task.L * d * task.K * 2e-13 + steps * 1e-3
    else:
        est_s = R * (epochs * n_train * 6.0 * task.L * d * task.K * 1e-10 + steps * 2e-5)
    # test evaluations (first, every eval_every-th, last) and the final measurements, per sentence
    n_evals = 0 if epochs == 0 else min(epochs, 2 + epochs // (eval_every or max(1, epochs // 20)))
    # per sentence evaluated: the scores, plus ~6 µs of measurement bookkeeping (measured on the 2-core CI machine)
    per_sentence = 2.0 * task.L * d * task.K * 1e-10 + 6e-6
    est_s += R * (n_evals * task.K * n_test + (task.K * (n_spl + n_test) if measure else 0)) * per_sentence
    # drawing the sentences of each distinct seed (~5e-8 s per word, measured)
    est_s += len(set(seeds)) * task.K * (n_spl + n_test) * task.L * 5e-8
    check_work("epochs", epochs, seconds=est_s, what=f"training {R} runs for {epochs} epochs")
    cfgs = [TrainConfig(n_spl=n_spl, d=d, layernorm=layernorm, eps=eps, lr=lrs[r], batch=batch, epochs=epochs,
                        lam_W=lws[r], lam_U=lus[r], seed=seeds[r], backend=backend, dtype=dtype,
                        init_scale=init_scale, n_test=n_test, eval_every=eval_every) for r in range(R)]

    t0 = time.perf_counter()
    datas, cache = [], {}
    for s in seeds:  # runs sharing a seed share their data (and initial weights)
        if s not in cache:
            cache[s] = (make_data(task, n_spl=n_spl, seed=s, n_test=n_test), init_weights(task, d=d, seed=s, init_scale=init_scale))
        datas.append(cache[s])
    X = np.stack([dt.X_train for dt, _ in datas])
    y = np.stack([dt.y_train for dt, _ in datas])
    tests = [(dt.X_test, dt.y_test) for dt, _ in datas]
    E0 = np.stack([w[0] for _, w in datas]).astype(dtype)
    U0 = np.stack([w[1] for _, w in datas]).astype(dtype)
    if backend == "numba":
        eng = _NumbaBatch(E0, U0, X, y, tests, cfgs, dtype)
    else:
        from .._backend import get_namespace  # noqa: PLC0415

        eng = _XPBatch(get_namespace(backend), E0, U0, X, y, tests, cfgs, dtype)
    del E0, U0

    N = X.shape[1]
    n_test_total = tests[0][0].shape[0]
    every = eval_every or max(1, epochs // 20)
    hist = [{k: [] for k in _HIST_KEYS} for _ in range(R)]
    failed: list = [None] * R
    bar = None
    if progress:
        from tqdm.auto import tqdm  # noqa: PLC0415

        bar = tqdm(total=epochs, unit="epoch", desc=f"{R} runs", dynamic_ncols=True)
    from contextlib import nullcontext  # noqa: PLC0415

    from .._threads import blas_threads  # noqa: PLC0415

    # numba: one BLAS thread per run, the runs are the parallelism (threaded BLAS on these small
    # products, several at once, oversubscribes the cores); set once, not per epoch (it costs ms)
    pin = blas_threads(1) if backend == "numba" else nullcontext()
    try:
        pin.__enter__()
        for epoch in range(epochs):
            perms = np.stack([epoch_permutation(seed=s, epoch=epoch, n=N) for s in seeds])
            loss_sum, correct = eng.epoch(perms)
            e1 = epoch + 1
            sched = n_test_total and (e1 % every == 0 or e1 == 1 or e1 == epochs)
            fin = eng.finite()
            now = time.perf_counter() - t0
            for r in range(R):
                if failed[r] is not None:
                    continue
                loss = float(loss_sum[r]) / N
                if not (math.isfinite(loss) and fin[r]):
                    try:
                        fail("lr", lrs[r], f"training diverged (non-finite loss at epoch {e1}); use a smaller lr")
                    except FCTheoryError as exc:
                        if errors == "raise":
                            raise
                        failed[r] = exc
                    continue
                ta = tl = float("nan")
                if sched:
                    ls, c = eng.evaluate(r)
                    ta, tl = c / n_test_total, ls / n_test_total
                h = hist[r]
                h["epoch"].append(e1)
                h["loss"].append(loss)
                h["train_acc"].append(int(correct[r]) / N)
                h["test_acc"].append(ta)
                h["test_loss"].append(tl)
                h["time"].append(now)
            if bar is not None:
                bar.update(1)
    finally:
        pin.__exit__(None, None, None)
        if bar is not None:
            bar.close()
    elapsed = time.perf_counter() - t0
    out = []
    for r in range(R):
        if failed[r] is not None:
            out.append(failed[r])
            continue
        E, U = eng.weights(r)
        data = datas[r][0]
        run = TrainRun(task, cfgs[r], np.ascontiguousarray(E.T), U,
                       {k: np.asarray(v, dtype=np.float64) for k, v in hist[r].items()}, epochs, elapsed / R, None,
                       data if keep_data else None)
        if measure:
            from .measure import measure as _measure  # noqa: PLC0415

            c = cfgs[r]
            run.measurements = _measure(task, run.W, run.U, layernorm=c.layernorm, eps=c.eps, data=data,
                                        lam_W=c.lam_W, lam_U=c.lam_U, d=c.d, n_spl=c.n_spl)
        out.append(run)
    return out
