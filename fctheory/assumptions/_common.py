"""What every checker of the assumptions shares: the latent-set argument (a Task or a K×L array), its
validation, the pairwise budget, Hamming distances and the one-hot encoding of the latent variables."""

from __future__ import annotations

import numpy as np

from .._budget import check_work
from .._validate import Array, Int, Kind, fail
from ..task import Task


class _LatentKind(Kind):
    """A :class:`~fctheory.Task` or a K×L integer array of latent variables (0-based concepts)."""

    _array = Array(ndim=2, integer=True, min=0, max=2**62)

    def __call__(self, name, value):
        if isinstance(value, Task):
            return value
        return self._array(name, value)


_Z = _LatentKind()
_NC = Int(min=2).or_none()


def _latent(Z, n_c=None):
    """(Z, n_c, L) from a Task or a K×L integer array; validated (distinct rows not required)."""
    if isinstance(Z, Task):
        if n_c is not None and n_c != Z.n_c:
            fail("n_c", n_c, f"must match the task's n_c = {Z.n_c}")
        return np.asarray(Z.Z, dtype=np.int64), Z.n_c, Z.L
    if n_c is None:
        fail("n_c", n_c, "is required when Z is an array (pass a Task or give n_c)")
    arr = _Z("Z", Z)
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        fail("Z", Z, f"must have shape (K, L) with K, L >= 1, got {arr.shape}")
    if arr.max() >= n_c:
        fail("Z", Z, f"entries must be concept indices in [0, n_c-1] = [0, {n_c - 1}]")
    return arr.astype(np.int64), n_c, int(arr.shape[1])


def _pair_budget(Z, n_c, L, *, what: str, per_pair_flops: float, per_pair_bytes: float = 0.0) -> None:
    """Refuse a K×K pairwise computation over the budget (K² (L + ...) bytes, K²·flops seconds)."""
    K = Z.shape[0]
    check_work(
        "Z",
        f"{K}×{L} latent variables",
        items=K * K,
        bytes=K * K * (L + 24 + per_pair_bytes) + 8 * K * L * n_c * 4,
        seconds=K * K * per_pair_flops // (2 * 10**8),
        what=what,
    )


def _hamming(Z):
    return (Z[:, None, :] != Z[None, :, :]).sum(-1)


def _onehot(Z, n_c):
    K, L = Z.shape
    O = np.zeros((K, L, n_c), dtype=np.int64)
    O[np.arange(K)[:, None], np.arange(L)[None, :], Z] = 1
    return O
