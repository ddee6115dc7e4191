"""``fctheory.sweep(spec)``: run every point of a spec, resumably, on a process pool or a Dask cluster."""

from __future__ import annotations

import math
import sys
from dataclasses import replace

from .._validate import Anything, Bool, Choice, Int, PathOut, public
from .executors import make_executor
from .spec import load_spec, point_id
from .table import ResultStore, _pd
from .targets import derived_seed, seed_needed, train_batch_key

__all__ = ["sweep", "plan_points"]


def plan_points(spec) -> list:
    """``(point_id, params)`` of every point of a loaded spec, in spec order, duplicates removed.

    A point whose target takes a seed it does not set gets one derived from its id.
    """
    seen = set()
    out = []
    need_seed = seed_needed(spec.target)
    for p in spec.points():
        pid = point_id(spec.target, p)
        if pid in seen:
            continue
        seen.add(pid)
        if need_seed and "seed" not in p:
            p = {**p, "seed": derived_seed(pid)}
        out.append((pid, p))
    return out


_CHEAP = {
    "tau",
    "tau_star",
    "lambda_trivial",
    "H",
    "H_prime",
    "H_star",
    "H_star_prime",
    "predict_type1",
    "predict_type2",
    "predict_type3",
    "solve_type3",
    "lambda_max_type3",
    "predict",
}


def _units(spec, todo: list, nworkers: int) -> list:
    """Work units: batches of compatible ``train`` points, or chunks of points."""
    if not todo:
        return []
    if spec.target == "train" and spec.batch:
        groups: dict = {}
        for item in todo:
            groups.setdefault(train_batch_key(item[1]), []).append(item)
        units = []
        for items in groups.values():
            # at least one batch per worker when the group is large enough, at most max_batch runs each
            n = max(math.ceil(len(items) / spec.max_batch), min(nworkers, len(items)))
            size = math.ceil(len(items) / n)
            units += [("batch", items[i : i + size]) for i in range(0, len(items), size)]
        return units
    # closed-form predictors take about a millisecond a point: chunks of >= 256 (a process start costs seconds)
    least = 256 if spec.target in _CHEAP else 1
    size = spec.chunk or max(least, min(max(64, least), math.ceil(len(todo) / (4 * nworkers))))
    return [("points", todo[i : i + size]) for i in range(0, len(todo), size)]


def _overridden(s, executor, workers, address):
    """The spec with the call's executor, workers and scheduler address, where given."""
    if address is not None:
        s = replace(s, executor="dask", address=address)
    if executor is not None:
        s = replace(s, executor=executor)
    if workers is not None:
        s = replace(s, workers=workers)
    return s


def _todo(store, pts: list, order: dict, retry_errors: bool) -> list:
    """The points not yet in the output (points whose row records an error count as done unless retried)."""
    old = store.existing()
    done = set()
    if len(old):
        ok = old["status"].isin(["ok"] if retry_errors else ["ok", "error"])
        done = set(old.loc[ok, "point_id"]) & set(order)
    return [(pid, p) for pid, p in pts if pid not in done]


def _progress_bar(show: bool, s, n_points: int, n_todo: int):
    """A tqdm bar over the sweep's points (those already done counted as done), or None."""
    if not (show and n_todo):
        return None
    from tqdm.auto import tqdm  # noqa: PLC0415 - optional progress bar, loaded when shown

    return tqdm(total=n_points, initial=n_points - n_todo, unit="point", desc=s.name or s.target, dynamic_ncols=True)


def _table(s, store, new_rows: list):
    """Every finished row: the consolidated output folder, or this call's rows without an output."""
    if s.output is None:
        return _pd().DataFrame(new_rows)
    every = store.existing()
    if len(every):  # an empty results.parquet has no point_id column: the folder could not be resumed
        store.consolidate(every)
    return store.existing()


@public(
    spec=Anything("a TOML path, a dict or a SweepSpec"),
    executor=Choice("local", "dask").or_none(),
    workers=Int(min=1, max=4096).or_none(),
    address=Anything("a dask scheduler address or None"),
    client=Anything("a dask.distributed Client or None"),
    output=PathOut(dir=True).or_none(),
    max_points=Int(min=0, max=10**7).or_none(),
    progress=Bool().or_none(),
    retry_errors=Bool(),
)
def sweep(
    spec,
    *,
    executor=None,
    workers=None,
    address=None,
    client=None,
    output=None,
    max_points=None,
    progress=None,
    retry_errors=False,
):
    """Run a sweep: every point of ``spec``, skipping those already in its output; return the table.

    Parameters
    ----------
    spec : str, dict or SweepSpec
        A TOML file or dict (see :mod:`fctheory.sweep.spec`): target, fixed parameters, grid and
        random axes, seeds, executor, output folder.
    executor : {"local", "dask"} or None
        Overrides the spec: a process pool (``workers`` = 1 runs in this process) or dask.distributed
        (a LocalCluster of ``workers``, the scheduler at ``address``, or ``client``).
    workers : int or None
        Overrides the spec's worker count (default: the number of cores).
    address : str or None
        Dask scheduler address (implies ``executor="dask"``).
    client : dask.distributed.Client or None
        Run on this client (implies ``executor="dask"``).
    output : str or None
        Overrides the spec's output folder. Without any output nothing is written (no resume).
    max_points : int or None
        Stop after this many newly finished points (what a kill midway leaves; a later call
        finishes the rest).
    progress : bool or None
        A tqdm bar (None: when stderr is a terminal).
    retry_errors : bool
        Recompute points whose row records an error (otherwise they count as finished).

    Returns
    -------
    pandas.DataFrame
        One row per point of the spec that is finished, in spec order: ``point_id``, the inputs,
        the outputs, ``status`` ("ok" or "error"), ``error``, ``wall_time`` (s; a batched run's share),
        ``batch_size``, ``versions``. ``table.attrs["complete"]`` tells whether every point is
        there; ``table.attrs["ran"]`` how many ran in this call.
    """
    _pd()  # pandas is needed for the table: refused before any work
    s = _overridden(load_spec(spec, output=output), executor, workers, address)
    pts = plan_points(s)
    order = {pid: i for i, (pid, _) in enumerate(pts)}
    store = ResultStore(s.output)
    store.write_spec(s.to_dict())
    todo = _todo(store, pts, order, retry_errors)
    new_rows: list = []
    bar = _progress_bar(sys.stderr.isatty() if progress is None else progress, s, len(pts), len(todo))
    ex = make_executor(s, client)
    try:
        if todo and (max_points is None or max_points > 0):
            units = _units(s, todo, ex.planned_workers())
            with ex.sized(len(units)):
                for rows in ex.map_units(s.target, units):
                    new_rows.extend(rows)
                    store.add(rows)
                    if bar is not None:
                        bar.update(len(rows))
                    if max_points is not None and len(new_rows) >= max_points:
                        break
    finally:
        store.flush()  # whatever finished is on disk, also on Ctrl-C
        if bar is not None:
            bar.close()
    table = _table(s, store, new_rows)
    if len(table):
        table = table[table["point_id"].isin(order)].copy()
        table["_order"] = table["point_id"].map(order)
        table = table.sort_values("_order").drop(columns="_order").reset_index(drop=True)
    table.attrs["complete"] = len(table) == len(pts)
    table.attrs["ran"] = len(new_rows)
    table.attrs["points"] = len(pts)
    return table
