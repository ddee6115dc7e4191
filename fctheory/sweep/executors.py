"""Where work units run: ``local`` (a process pool, or this process with one worker) and ``dask``.

A unit is a list of points run by :func:`run_unit` (a plain top-level function, so it pickles to
a process pool or a dask worker alike): one point per row for most targets, one batched training
for a group of compatible ``train`` points. Units finish in any order; the table is ordered and
seeded by point, so the order does not show in the results.
"""

from __future__ import annotations

import os
import time

from .._validate import fail
from ..io import versions as io_versions
from .targets import run_point, run_train_batch

__all__ = ["run_unit", "LocalExecutor", "DaskExecutor", "make_executor", "versions"]


def versions() -> str:
    """The ``versions`` column of a sweep table: ``"fctheory X; numpy Y; python Z"`` (:func:`fctheory.io.versions`)."""
    v = io_versions()
    return f"fctheory {v['fctheory']}; numpy {v['numpy']}; python {v['python']}"


def run_unit(target: str, kind: str, points: list) -> list:
    """Run a unit of ``(point_id, params)`` points; returns one row (dict) per point.

    ``kind`` is ``"points"`` (each point on its own) or ``"batch"`` (``train`` points trained as
    one batch). Errors of a point are recorded in its row (``status="error"``, ``error``), not raised.
    """
    ver = versions()
    rows = []
    if kind == "batch":
        t0 = time.perf_counter()
        try:
            outs = run_train_batch([p for _, p in points])
        except Exception as exc:  # noqa: BLE001 - the whole batch failed: record it on every point
            outs = [exc] * len(points)
        share = (time.perf_counter() - t0) / len(points)
        for (pid, p), out in zip(points, outs):
            rows.append(_row(pid, p, out, share, len(points), ver))
        return rows
    for pid, p in points:
        t0 = time.perf_counter()
        try:
            out = run_point(target, p)
        except Exception as exc:  # noqa: BLE001 - recorded per point
            out = exc
        rows.append(_row(pid, p, out, time.perf_counter() - t0, 1, ver))
    return rows


def _row(pid, p, out, wall, bsz, ver) -> dict:
    row = {"point_id": pid}
    row.update(p)
    if isinstance(out, BaseException):
        row.update(status="error", error=f"{type(out).__name__}: {out}")
    else:
        for k, v in out.items():
            if k in p and _same(v, p[k]):
                continue  # an input echoed in the result (e.g. a prediction's own parameters)
            row[k if k not in p and k != "point_id" else f"out.{k}"] = v
        row.update(status="ok", error=None)
    row.update(wall_time=float(wall), batch_size=int(bsz), versions=ver)
    return row


def _same(a, b) -> bool:
    try:
        return bool(a == b) and type(a) is not list
    except Exception:  # noqa: BLE001
        return False


class LocalExecutor:
    """A process pool (``workers`` > 1) or this process (``workers`` = 1)."""

    def __init__(self, workers: int | None):
        self.workers = workers or os.cpu_count() or 1
        self.pool = None

    def planned_workers(self) -> int:
        return self.workers

    def sized(self, n_units: int):
        """Never more processes than units; one unit (or one worker) runs in this process."""
        self.workers = max(1, min(self.workers, n_units))
        return self

    def __enter__(self):
        if self.workers > 1:
            import multiprocessing as mp  # noqa: PLC0415
            from concurrent.futures import ProcessPoolExecutor  # noqa: PLC0415

            # spawn: safe with threads in the parent (a dask client, BLAS pools)
            self.pool = ProcessPoolExecutor(self.workers, mp_context=mp.get_context("spawn"))
        return self

    def __exit__(self, *exc):
        if self.pool is not None:
            self.pool.shutdown(wait=exc[0] is None, cancel_futures=True)
        return False

    def map_units(self, target, units):
        """Yield the rows of every unit as units finish."""
        if self.pool is None:
            for kind, pts in units:
                yield run_unit(target, kind, pts)
            return
        from concurrent.futures import as_completed  # noqa: PLC0415

        from concurrent.futures.process import BrokenProcessPool  # noqa: PLC0415

        futs = [self.pool.submit(run_unit, target, kind, pts) for kind, pts in units]
        try:
            for f in as_completed(futs):
                try:
                    rows = f.result()
                except BrokenProcessPool as exc:
                    fail(
                        "workers",
                        self.workers,
                        f"the process pool broke ({exc}); a worker died (out of memory?) "
                        "or the calling script lacks `if __name__ == '__main__':` (processes are spawned); "
                        "finished points are saved: run again to resume, or use workers = 1",
                    )
                yield rows
        finally:
            for f in futs:
                f.cancel()


class DaskExecutor:
    """dask.distributed: a given Client, a scheduler ``address``, or a LocalCluster of ``workers``."""

    def __init__(self, workers: int | None, address: str | None = None, client=None):
        self.workers, self.address, self.client = workers, address, client
        self._own = []

    def planned_workers(self) -> int:
        if self.client is not None:
            return max(1, len(self.client.scheduler_info().get("workers", {})))
        return self.workers or os.cpu_count() or 1

    def sized(self, n_units: int):
        """A LocalCluster gets no more workers than there are units."""
        if self.client is None and self.address is None:
            self.workers = max(1, min(self.workers or os.cpu_count() or 1, n_units))
        return self

    def __enter__(self):
        try:
            from distributed import Client, LocalCluster  # noqa: PLC0415
        except ImportError as exc:  # pragma: no cover - optional dependency
            fail("executor", "dask", f"needs dask.distributed (pip install 'fctheory[sweep]'): {exc}")
        if self.client is None:
            if self.address is not None:
                try:
                    self.client = Client(self.address, timeout=30)
                except (OSError, TimeoutError, ValueError) as exc:
                    fail("address", self.address, f"cannot connect to the dask scheduler ({exc})")
            else:
                cluster = LocalCluster(
                    n_workers=self.workers or os.cpu_count() or 1, threads_per_worker=1, dashboard_address=None
                )
                self.client = Client(cluster)
                self._own = [self.client, cluster]
        return self

    def __exit__(self, *exc):
        for obj in self._own:
            obj.close()
        return False

    def map_units(self, target, units):
        from distributed import as_completed  # noqa: PLC0415

        futs = [self.client.submit(run_unit, target, kind, pts, pure=False) for kind, pts in units]
        try:
            for f in as_completed(futs):
                yield f.result()
        finally:
            for f in futs:
                if not f.done():
                    f.cancel()


def make_executor(spec, client=None):
    if spec.executor == "dask" or client is not None:
        return DaskExecutor(spec.workers, spec.address, client)
    return LocalExecutor(spec.workers)
