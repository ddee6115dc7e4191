"""Batched training: many runs of the same shape trained as one computation.

R runs that share the task, ``n_spl``, ``d``, the network, the batch size, the number of epochs and
the dtype — and differ in ``seed``, ``lr``, ``lam_W``, ``lam_U`` — are stacked along a leading
run axis: E (R×n_w×d), U (R×K×Ld), the sentences X (R×N×L) and the shuffles (R×N), and trained by the
loop of :mod:`.loop` over one engine of :mod:`.engines` (the same loop and engines as :func:`fctheory.train`,
which is the case R = 1). On the GPU (``backend="cupy"``) one step costs the same ~25 kernel launches for R
runs as for one — a single fig3 run is launch-bound (about 1.3 ms per step on an H100), R runs are not; on the
host, ``backend="numba"`` runs the compiled epoch of every run of the batch in parallel (``prange`` over runs,
one BLAS thread each) instead of one run after another with threaded BLAS on small products.

Each run is its sequential twin: ``train(task, n_spl, d, seed=s, lr=…, …)`` with the same
configuration gives the same data (``default_rng([seed, 1])``), test sentences (``[seed, 2]``),
initial weights (``[seed, 3]``), shuffles (``[seed, 4, e]``) and arithmetic (bitwise, per run, on the
host backends).
"""

from __future__ import annotations

import time

import numpy as np

from .._budget import check_work
from .._validate import Array, Bool, Choice, Instance, Int, Real, fail, public
from ..task import Task
from ._reference import runs_sgd_step
from .core import TrainConfig, TrainRun, check_train_time, measure_weights
from .data import initial_weights, sample_data
from .engines import make_engine
from .loop import History, LoopState, run_epochs

__all__ = ["train_batched", "batch_key", "BATCH_AXES"]

#: configuration entries that may differ inside one batch (everything else must agree)
BATCH_AXES = ("seed", "lr", "lam_W", "lam_U")
#: the batched reference step (fctheory 1.0's name): :func:`._reference.runs_sgd_step`
batched_sgd_step = runs_sgd_step


def batch_key(config: dict) -> tuple:
    """The part of a training configuration that runs of one batch must share.

    Two configurations with equal keys (and the same task) can be trained as one batch.
    """
    return tuple(sorted((k, v) for k, v in config.items() if k not in BATCH_AXES))


def _per_run(name, value, R, conv):
    arr = np.atleast_1d(value)
    if arr.ndim != 1:
        fail(name, value, "must be a number or a 1-D sequence (one entry per run)")
    if arr.size not in (1, R):
        fail(name, value, f"has {arr.size} entries; the batch has {R} runs (give 1 or {R})")
    return [conv(v) for v in np.broadcast_to(arr, (R,))]


def _configs(seed, lr, lam_W, lam_U, shared):
    """One TrainConfig per run (R is the longest of the four per-run arguments), checked against the dtype."""
    R = max(np.size(v) for v in (seed, lr, lam_W, lam_U))
    seeds = _per_run("seed", seed, R, int)
    per_run = {
        "lr": _per_run("lr", lr, R, float),
        "lam_W": _per_run("lam_W", lam_W, R, float),
        "lam_U": _per_run("lam_U", lam_U, R, float),
    }
    dtype = shared["dtype"]
    big = float(np.finfo(dtype).max)
    for name, vals in (*per_run.items(), ("eps", [shared["eps"]])):
        for v in vals:
            if v > big:  # the working-dtype copy would overflow to inf
                fail(name, v, f"exceeds the {dtype} range (max {big:.4g}); use dtype='float64' or a smaller value")
    if shared["layernorm"] and shared["eps"] == 0.0 and shared["d"] == 1:
        fail("d", shared["d"], "LayerNorm with eps=0 needs d >= 2 (φ of a scalar is undefined)")
    return [TrainConfig(**shared, seed=seeds[r], **{k: v[r] for k, v in per_run.items()}) for r in range(R)]


def _check_budget(task, cfgs, measure):
    c, R = cfgs[0], len(cfgs)
    itemsize = 4 if c.dtype == "float32" else 8
    per_run = itemsize * 3 * (task.n_w * c.d + task.K * task.L * c.d) + 8 * task.K * (c.n_spl + c.n_test) * task.L
    check_work("seed", f"{R} runs", bytes=R * per_run, what=f"batched training of {R} runs")
    check_train_time(task, c, runs=R, seeds=len({k.seed for k in cfgs}), measure=measure, what=f"training {R} runs")


def _start(task, cfgs):
    """Every run's sentences and the engine (runs sharing a seed share their data and initial weights)."""
    c, cache, datas, weights = cfgs[0], {}, [], []
    for k in cfgs:
        if k.seed not in cache:
            cache[k.seed] = (
                sample_data(task, c.n_spl, k.seed, c.n_test),
                initial_weights(task, c.d, k.seed, c.init_scale),
            )
        datas.append(cache[k.seed][0])
        weights.append(cache[k.seed][1])
    engine = make_engine(
        c.backend,
        np.stack([w[0] for w in weights]),
        np.stack([w[1] for w in weights]),
        np.stack([dt.X_train for dt in datas]),
        np.stack([dt.y_train for dt in datas]),
        [(dt.X_test, dt.y_test) for dt in datas],
        cfgs,
    )
    return datas, engine


def _finish(task, cfgs, engine, state, datas, elapsed, measure, keep_data):
    out = []
    for r, c in enumerate(cfgs):
        if state.failed[r] is not None:
            out.append(state.failed[r])
            continue
        E, U = engine.weights(r)
        run = TrainRun(
            task,
            c,
            np.ascontiguousarray(E.T),
            U,
            state.histories[r].arrays(),
            c.epochs,
            elapsed / len(cfgs),
            None,
            datas[r] if keep_data else None,
        )
        if measure:
            run.measurements = measure_weights(
                task,
                run.W,
                run.U,
                layernorm=c.layernorm,
                eps=c.eps,
                data=datas[r],
                lam_W=c.lam_W,
                lam_U=c.lam_U,
                d=c.d,
                n_spl=c.n_spl,
            )
        out.append(run)
    return out


@public(
    task=Instance(Task),
    n_spl=Int(min=1),
    d=Int(min=1),
    seed=Array(ndim=(0, 1), integer=True, min=0, max=2**62),
    lr=Real(lo=0, lo_open=True, array=True),
    lam_W=Real(lo=0, array=True),
    lam_U=Real(lo=0, array=True),
    layernorm=Bool(),
    eps=Real(lo=0),
    batch=Int(min=1),
    epochs=Int(min=0, max=10**7),
    backend=Choice("numba", "numpy", "cupy"),
    dtype=Choice("float32", "float64"),
    init_scale=Real(lo=0, lo_open=True),
    n_test=Int(min=0),
    eval_every=Int(min=1).or_none(),
    measure=Bool(),
    keep_data=Bool(),
    errors=Choice("raise", "return"),
    progress=Bool(),
    legacy_positional=("n_spl", "d"),
)
def train_batched(task, *, n_spl, d=100, seed=0, lr=0.1, lam_W=0.001, lam_U=0.001, layernorm=False, eps=1e-05,
                  batch=100, epochs=100, backend="numba", dtype="float32", init_scale=0.001, n_test=5,
                  eval_every=None, measure=True, keep_data=False, errors="raise", progress=False):  # fmt: skip
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
    cfgs = _configs(
        seed,
        lr,
        lam_W,
        lam_U,
        dict(
            n_spl=n_spl,
            d=d,
            layernorm=layernorm,
            eps=eps,
            batch=batch,
            epochs=epochs,
            backend=backend,
            dtype=dtype,
            init_scale=init_scale,
            n_test=n_test,
            eval_every=eval_every,
        ),
    )
    _check_budget(task, cfgs, measure)
    t0 = time.perf_counter()
    datas, engine = _start(task, cfgs)
    state = LoopState(
        cfgs,
        [History() for _ in cfgs],
        datas[0].X_train.shape[0],
        datas[0].X_test.shape[0],
        wall0=time.perf_counter() - t0,
        errors=errors,
    )
    elapsed = run_epochs(engine, state, progress=progress)
    return _finish(task, cfgs, engine, state, datas, elapsed, measure, keep_data)
