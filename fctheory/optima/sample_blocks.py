"""f̂ of a large training sample split into blocks of sentences, on a Dask cluster (fig4a: 500,000 sentences).

f̂ and ∇f̂ are sums over sentences, so the sample is split into blocks (the pattern of
:mod:`fctheory.risk.distributed`, which splits the exact risk into class blocks). Each block is a
:class:`~fctheory.optima.sample.SampleF` of its sentences, weighted 1/N of the whole sample, held by a worker
(its sentences travel once). An evaluation sends only the factors (W, Uc), r × (n_w + L·K) numbers, and brings
back each block's Σ CE, Σ H and factored gradients Uc·G_bᵀ, W·G_b, summed on the driver in block order (a fixed
order: the single-process result to rounding). The block's share G_b of ∇f̂ stays on its worker as a future for
the products the solver asks of the last ∇f̂ (Lanczos and Ritz estimates: Gv = Σ_b G_b v); it is summed on the
driver only for the certificate's Gram matrix. ``client=None`` runs the blocks here, one after the other, each
within the memory of one block (the shares summed as they come).
"""

from __future__ import annotations

from operator import getitem

import numpy as np

from .._validate import fail
from .sample import SampleF

__all__ = ["BlockSample", "sentence_blocks", "as_client"]


def as_client(client):
    """None, a dask.distributed Client, or a scheduler address ("tcp://host:8786") connected to."""
    if client is None or (hasattr(client, "submit") and hasattr(client, "gather")):
        return client
    if not isinstance(client, str):
        fail("client", client, "must be None, a dask.distributed Client or a scheduler address")
    try:
        from distributed import Client  # noqa: PLC0415 - optional dependency (the sweep extra)
    except ImportError as exc:  # pragma: no cover - a test dependency
        fail("client", client, f"needs dask.distributed (pip install 'fctheory[sweep]'): {exc}")
    try:
        return Client(client, timeout=30)
    except (OSError, TimeoutError, ValueError) as exc:
        fail("client", client, f"cannot connect to the dask scheduler ({type(exc).__name__}: {exc})")


def sentence_blocks(N: int, blocks: int) -> list:
    """Contiguous index ranges (start, stop) splitting N sentences into ``blocks`` nearly equal blocks."""
    edges = np.linspace(0, N, min(blocks, N) + 1).round().astype(int)
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:]) if b > a]


def _evaluate(sf, W, Uc):
    """One block's (Σ-terms and factored gradients) and its share of ∇f̂ (host array)."""
    f, E, dW, dU, _ = sf.factored(W, Uc)
    return (f, E, dW, dU), sf.be.to_host(sf.last[1])


def _times(G, a):
    return G @ a


def _times_t(G, a):
    return G.T @ a


class BlockSample:
    """The :class:`~fctheory.optima.sample.SampleF` interface (``factored``, ``matvec``, ``rmatvec``,
    ``rmatmat``, ``gram``, ``shape``, ``nfev``) over blocks of sentences, on ``client`` (a dask.distributed
    Client) or here (``client=None``)."""

    def __init__(self, task, S, y, *, blocks: int, client=None, backend: str = "numba"):
        self.cl, N = client, int(S.shape[0])
        self.nfev, self.shape, self.G = 0, (task.n_w, task.L * task.K), None
        parts = sentence_blocks(N, blocks)
        make = [(task, S[a:b], y[a:b], backend) for a, b in parts]
        if client is None:
            self.sfs = [SampleF(*m, N_total=N) for m in make]
        else:
            self.sfs = [client.submit(SampleF, *m, N_total=N, pure=False) for m in make]

    def factored(self, W, Uc):
        self.nfev += 1
        if self.cl is None:
            parts, G = [], None
            for sf in self.sfs:
                small, Gb = _evaluate(sf, W, Uc)
                parts.append(small)
                G = Gb if G is None else G + Gb
            self.G = G
        else:
            outs = [self.cl.submit(_evaluate, sf, W, Uc, pure=False) for sf in self.sfs]
            self.G = [self.cl.submit(getitem, o, 1) for o in outs]  # the shares stay on the workers
            parts = self.cl.gather([self.cl.submit(getitem, o, 0) for o in outs])
        f = sum(p[0] for p in parts)
        E = sum(p[1] for p in parts)
        dW = np.sum([p[2] for p in parts], axis=0)
        dU = np.sum([p[3] for p in parts], axis=0)
        return f, E, dW, dU, float(np.sum(dU * Uc))

    def _apply(self, fn, a):
        if self.cl is None:
            return fn(self.G, a)
        return np.sum(self.cl.gather([self.cl.submit(fn, Gb, a) for Gb in self.G]), axis=0)

    def matvec(self, v):
        return self._apply(_times, v)

    def rmatvec(self, u):
        return self._apply(_times_t, u)

    def rmatmat(self, Q):
        return self._apply(_times_t, Q)

    def gram(self):
        G = self.G if self.cl is None else np.sum(self.cl.gather(self.G), axis=0)
        M = G @ G.T if G.shape[0] <= G.shape[1] else G.T @ G
        return M, max(G.shape), float(np.sum(G * G))
