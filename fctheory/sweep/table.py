"""The sweep's tidy table on disk: a Parquet dataset folder written so that a kill loses nothing finished.

Layout of ``output/``::

    results.parquet        the consolidated table (one row per point), written at the end
    parts/part-*.parquet   rows finished since the last consolidation (one file per flush)
    spec.json              the spec of the last run (for the record)

Every file is written to a temporary name and renamed into place (``os.replace``), so a killed
sweep leaves whole part files only; the next run reads ``results.parquet`` and every part, skips
the points whose id is already there, and consolidates.
"""

from __future__ import annotations

import glob
import json
import os
import time
import uuid

import numpy as np

from .._files import atomic_path, write_json
from .._validate import PathIn, fail, public

__all__ = ["read_table", "ResultStore"]


def _pd():
    try:
        import pandas as pd  # noqa: PLC0415
    except ImportError as exc:  # pragma: no cover - optional dependency
        fail("output", None, f"sweeps need pandas and pyarrow (pip install 'fctheory[sweep]'): {exc}")
    return pd


def _sanitize(df):
    """Columns Parquet can hold: an object column mixing types becomes JSON text."""
    for c in df.columns:
        if df[c].dtype != object:
            continue
        kinds = {type(v) for v in df[c] if v is not None and not (isinstance(v, float) and np.isnan(v))}
        if len(kinds) <= 1 and not (kinds & {dict, tuple}):
            continue
        if kinds <= {int, float}:
            df[c] = df[c].astype(float)
            continue
        df[c] = [None if v is None else json.dumps(v, default=str) if not isinstance(v, str) else v for v in df[c]]
    return df


def _atomic_parquet(df, path):
    with atomic_path(path, name="output") as tmp:
        df.to_parquet(tmp, index=False)


class ResultStore:
    """Rows of one sweep: what is on disk, new rows buffered and flushed as part files."""

    def __init__(self, folder: str | None):
        self.folder = folder
        self.buffer: list = []
        self.last_flush = time.monotonic()
        self.parts_written: list = []
        if folder is not None:
            os.makedirs(os.path.join(folder, "parts"), exist_ok=True)

    def existing(self):
        """All rows already on disk (consolidated and parts; the latest row of a point wins)."""
        pd = _pd()
        if self.folder is None:
            return pd.DataFrame()
        frames = []
        main = os.path.join(self.folder, "results.parquet")
        files = ([main] if os.path.exists(main) else []) + sorted(
            glob.glob(os.path.join(self.folder, "parts", "part-*.parquet"))
        )
        for f in files:
            try:
                frames.append(pd.read_parquet(f))
            except Exception as exc:  # noqa: BLE001 - a damaged file is named, not silently skipped
                fail(
                    "output",
                    self.folder,
                    f"holds an unreadable table file {os.path.basename(f)} ({exc}); remove it to recompute its points",
                )
        if not frames:
            return pd.DataFrame()
        df = pd.concat(frames, ignore_index=True)
        if "point_id" not in df.columns:
            fail("output", self.folder, "holds Parquet files that are not an fctheory sweep table")
        return df.drop_duplicates("point_id", keep="last").reset_index(drop=True)

    def add(self, rows: list, *, every_s: float = 1.0, every_rows: int = 256):
        self.buffer.extend(rows)
        if len(self.buffer) >= every_rows or time.monotonic() - self.last_flush >= every_s:
            self.flush()

    def flush(self):
        if not self.buffer or self.folder is None:
            self.last_flush = time.monotonic()
            return
        pd = _pd()
        df = _sanitize(pd.DataFrame(self.buffer))
        path = os.path.join(self.folder, "parts", f"part-{time.time_ns():020d}-{uuid.uuid4().hex[:8]}.parquet")
        _atomic_parquet(df, path)
        self.parts_written.append(path)
        self.buffer = []
        self.last_flush = time.monotonic()

    def consolidate(self, table):
        """Write ``table`` as results.parquet, then remove the part files it includes."""
        if self.folder is None:
            return
        parts = sorted(glob.glob(os.path.join(self.folder, "parts", "part-*.parquet")))
        _atomic_parquet(_sanitize(table.copy()), os.path.join(self.folder, "results.parquet"))
        for p in parts:
            os.remove(p)

    def write_spec(self, spec_dict: dict):
        if self.folder is None:
            return

        write_json(os.path.join(self.folder, "spec.json"), spec_dict)


@public(path=PathIn(dir=True))
def read_table(path):
    """Read a sweep's table from its output folder (results.parquet plus unconsolidated parts).

    Parameters
    ----------
    path : str
        The sweep's output folder.

    Returns
    -------
    pandas.DataFrame
        One row per point (the latest row when a point was recomputed).
    """
    return ResultStore(path).existing()
