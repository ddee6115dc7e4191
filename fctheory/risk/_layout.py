"""What the exact engine needs of a task alone, and the order it works in: the split of the L positions into two
halves, the distinct prefix and suffix concept sequences (groups) with each class's group, the word probabilities
of the half-sentences, and the schedule of tiles, groups and class chunks per worker.

A task's :class:`_Layout` is kept while the task lives (:func:`_layout`), with the schedules of the plans met so
far: an optimiser evaluating one task thousands of times builds them once.
"""

from __future__ import annotations

import threading
import weakref

import numpy as np

from ..task import Task


def _split(L: int) -> int:
    # the first half is the larger one: it is grouped (gemm rows), the second is batched
    return (L + 1) // 2


def _groups(Z: np.ndarray, lo: int, hi: int):
    """Distinct concept sequences of positions lo..hi−1 and each class's group id."""
    part = Z[:, lo:hi]
    if part.shape[1] == 0:
        return np.zeros((1, 0), dtype=np.int64), np.zeros(Z.shape[0], dtype=np.int64)
    conc, inv = np.unique(part, axis=0, return_inverse=True)
    return conc, inv.reshape(-1).astype(np.int64)


def _word_probs(mu: np.ndarray, h: int) -> np.ndarray:
    """D over partial sentences of h positions: ⊗^h μ (index Σ β_i s^{h−1−i})."""
    p = np.ones(1)
    for _ in range(h):
        p = np.kron(p, mu)
    return p


class _Layout:
    """What the enumeration needs of a task alone: the prefix/suffix groups (concepts and each class's group id),
    the word probabilities of the two halves, and the tile schedules of the plans met so far.

    Kept per :class:`~fctheory.task.Task` (a frozen object with read-only arrays) by :func:`_layout`, so that an
    optimiser evaluating one task thousands of times does not rebuild them: O(K·L) integers, s^m + s^(L−m)
    floats and O(K) per schedule.
    """

    def __init__(self, task: Task):
        Z, L = task.Z, task.L
        self.m = _split(L)
        self.concA, self.gidA = _groups(Z, 0, self.m)
        self.concB, self.gidB = _groups(Z, self.m, L)
        self.mu, self.L = task.mu, L
        self._probs = None
        self.schedules = {}
        self.lock = threading.Lock()

    def probs(self):
        """(D over the prefixes, D over the suffixes), made on first use (s^m may be too many for a cost estimate)."""
        with self.lock:
            if self._probs is None:
                self._probs = (_word_probs(self.mu, self.m), _word_probs(self.mu, self.L - self.m))
            return self._probs


_LAYOUTS = weakref.WeakKeyDictionary()  # Task -> _Layout, dropped with the task
_LAYOUTS_LOCK = threading.Lock()


def _layout(task: Task) -> _Layout:
    """The task's :class:`_Layout`, made on first use."""
    with _LAYOUTS_LOCK:
        lay = _LAYOUTS.get(task)
        if lay is None:
            lay = _LAYOUTS[task] = _Layout(task)
        return lay


def _tiles(n, t):
    return [np.arange(i, min(i + t, n)) for i in range(0, n, t)]


def _units(sel, gidA, gidB, locA, locB, block: int, nTB: int) -> list:
    """The work of one (prefix tile, suffix tile) pair: per prefix group, its classes in chunks of ``block``.

    A unit is ``(group, [(classes, suffix ids, full?), ...])``; a group is one worker's (its prefix bases).
    """
    sel = sel[np.lexsort((gidB[sel], gidA[sel]))]
    la_sel = locA[gidA[sel]]
    cuts = np.nonzero(np.diff(la_sel))[0] + 1
    units = []
    for ks_g in np.split(sel, cuts):
        g = int(locA[gidA[ks_g[0]]])
        chunks = [ks_g[c0 : c0 + block] for c0 in range(0, ks_g.size, block)]
        units.append((g, [(c, locB[gidB[c]], c.size == nTB) for c in chunks]))
    return units


def _assign_units(units: list, workers: int) -> list:
    """Greedy load balancing: the biggest units first, each to the least-loaded of ``workers`` lists."""
    order = sorted(range(len(units)), key=lambda u: -sum(c[0].size for c in units[u][1]))
    load = [0] * workers
    assign = [[] for _ in range(workers)]
    for u in order:
        w = int(np.argmin(load))
        assign[w].append(units[u])
        load[w] += sum(c[0].size for c in units[u][1])
    return assign


def _schedule(lay, K: int, tiles: tuple, block: int, nw: int, classes=None) -> list:
    """The tile loop of :func:`_enumerate`: ``[(prefix tile, [(suffix tile, per-worker units), ...]), ...]``.

    It depends on the task and the plan only, so it is kept in the task's :class:`_Layout` (unless ``classes``
    restricts the targets, a block of :mod:`fctheory.risk.distributed`).
    """
    key = (tiles, block, nw)
    if classes is None:
        with lay.lock:
            hit = lay.schedules.get(key)
        if hit is not None:
            return hit
    nA, nB = lay.concA.shape[0], lay.concB.shape[0]
    gidA, gidB = lay.gidA, lay.gidB
    targets = np.isin(np.arange(K), classes) if classes is not None else True
    out = []
    for tileA in _tiles(nA, tiles[0]):
        if classes is not None and not np.isin(gidA[classes], tileA).any():
            continue  # no class of the block has its prefix group in this tile
        locA = np.full(nA, -1)
        locA[tileA] = np.arange(tileA.size)
        inA = (locA[gidA] >= 0) & targets
        steps = []
        for tileB in _tiles(nB, tiles[1]):
            locB = np.full(nB, -1)
            locB[tileB] = np.arange(tileB.size)
            sel = np.nonzero(inA & (locB[gidB] >= 0))[0]
            if sel.size:
                units = _units(sel, gidA, gidB, locA, locB, block, tileB.size)
                steps.append((tileB, _assign_units(units, min(nw, len(units)))))
        out.append((tileA, steps))
    if classes is None:
        with lay.lock:
            if len(lay.schedules) >= 8:  # a few plans per task (budgets, worker counts), not an unbounded set
                lay.schedules.clear()
            lay.schedules[key] = out
    return out
