"""The empirical objective f̂ of a training sample and its gradient, on the engine's backends.

f̂(X) = (1/N) Σ_i CE(s_i, y_i),   s_i(j) = Σ_ℓ X[(j, ℓ), S[i, ℓ]],   ∇f̂(X) = (1/N) Σ_i A_iᵀ(p_i − e_(y_i)),

with X = ÛᵀW ∈ R^(KL×n_w) (row j·L + ℓ, as in :mod:`fctheory.optima.population`) and A_i : X ↦ s_i. Both cost
N·K·L gathers and scatters, whatever the word frequencies: no enumeration. The solver keeps X in the
*score-table layout* Xt ∈ R^(n_w × L·K), Xt[w, ℓ·K + j] = X[(j, ℓ), w], so that

* Xt = Wᵀ·Uc for the factors W (r × n_w) and Uc (r × L·K), Uc[:, ℓ·K + j] = u_(j,ℓ): one GEMM;
* Xt viewed as (n_w·L) × K has row w·L + ℓ = the K scores word w contributes at position ℓ, so sentence i's
  scores are a sum of L contiguous rows (the gather) and ∇f̂ is the transposed sum (the scatter);
* the factored gradients are ∂f̂/∂W = Uc·Gtᵀ and ∂f̂/∂Uc = W·Gt (Gt = ∇f̂ in the same layout): two GEMMs.

The math is written once against an array namespace ``xp``; the backends only supply the gather and the
scatter: ``"numba"`` (default: fused numba kernels, :mod:`._sample_kernels`), ``"numpy"`` (SciPy sparse
products: the reference), ``"torch"`` (sparse CSR products on the tensors' device, CUDA when available) and
``"cupy"`` (cupyx sparse); PyTorch and CuPy are imported only when asked for. Besides f̂ and ∇f̂ the evaluation
returns the mean entropy E = (1/N) Σ_i H(p_i) = f̂(X) − ⟨∇f̂(X), X⟩ of the Fenchel certificate
(:mod:`fctheory._nuclear`), computed sentence by sentence (no cancellation between f̂ and ⟨∇f̂, X⟩).
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp

from .._backend import get_namespace
from .._validate import fail
from . import _sample_kernels

__all__ = ["SAMPLE_BACKENDS", "SampleF", "to_table", "from_table", "factors_to_network", "network_to_factors"]

#: backends of the sample objective (``"numba"``: the default, host kernels)
SAMPLE_BACKENDS = ("numba", "numpy", "torch", "cupy")


# ----------------------------------------------------------------------------- layouts
def to_table(X, K: int, L: int):
    """Xt (n_w × L·K) from X (K·L × n_w): Xt[w, ℓ·K + j] = X[(j, ℓ), w]."""
    n_w = X.shape[1]
    return np.ascontiguousarray(X.reshape(K, L, n_w).transpose(2, 1, 0).reshape(n_w, L * K))


def from_table(Xt, K: int, L: int):
    """X (K·L × n_w) from the score table Xt (the inverse of :func:`to_table`)."""
    n_w = Xt.shape[0]
    return np.ascontiguousarray(Xt.reshape(n_w, L, K).transpose(2, 1, 0).reshape(K * L, n_w))


def factors_to_network(W, Uc, K: int, L: int):
    """(W, U) of network h from the factors (W, Uc): U (K × L·r) with U[j, ℓ·r:(ℓ+1)·r] = u_(j,ℓ)."""
    r = W.shape[0]
    return W, np.ascontiguousarray(Uc.reshape(r, L, K).transpose(2, 1, 0).reshape(K, L * r))


def network_to_factors(W, U, K: int, L: int):
    """(W, Uc) from network weights W (d × n_w), U (K × L·d): the inverse of :func:`factors_to_network`."""
    d = W.shape[0]
    return W, np.ascontiguousarray(U.reshape(K, L, d).transpose(2, 1, 0).reshape(d, L * K))


# ----------------------------------------------------------------------------- backends
def _host_gather_matrices(S, n_w: int, L: int):
    """The gather as CSR matrices: B (N × n_w·L) with B[i, S[i, ℓ]·L + ℓ] = 1, and Bᵀ."""
    N = S.shape[0]
    cols = (S * L + np.arange(L)[None, :]).ravel()
    B = sp.csr_matrix((np.ones(N * L), (np.repeat(np.arange(N), L), cols)), shape=(N, n_w * L))
    return B, B.T.tocsr()


class _Backend:
    """xp, device arrays of the sample, and the two sparse products (gather, scatter)."""

    name = "numpy"

    def __init__(self, S, y, n_w: int, L: int):
        self.xp = np
        self.B, self.BT = _host_gather_matrices(S, n_w, L)
        self.y = y
        self.rows = np.arange(S.shape[0])

    def asarray(self, a):
        return np.asarray(a, dtype=np.float64)

    def to_host(self, a):
        return np.asarray(a)

    def gather(self, Xt2):
        return self.B @ Xt2

    def scatter(self, P):
        return self.BT @ P

    def terms(self, Xt2, N: int):
        """(Σ CE_i, Σ H_i, P = (p_i − e_(y_i))/N), written once against xp."""
        xp = self.xp
        Sc = self.gather(Xt2)
        Z = Sc - xp.max(Sc, axis=1, keepdims=True)
        e = xp.exp(Z)
        z = xp.sum(e, axis=1, keepdims=True)
        lz = xp.log(z)[:, 0]
        P = e / z
        ce = lz - Z[self.rows, self.y]
        ent = lz - xp.sum(P * Z, axis=1)
        P[self.rows, self.y] -= 1.0
        return float(xp.sum(ce)), float(xp.sum(ent)), P / N


class _Numba(_Backend):
    """Host numba kernels: the gather fused with the softmax, the scatter by output rows (no write conflicts)."""

    name = "numba"

    def __init__(self, S, y, n_w: int, L: int):
        self.k = _sample_kernels  # compiled (or loaded from numba's cache) on the first call
        self.xp, self.S, self.y, self.L = np, np.ascontiguousarray(S), np.ascontiguousarray(y), L
        slots = (self.S * L + np.arange(L)[None, :]).ravel()
        self.idx = np.ascontiguousarray(np.argsort(slots, kind="stable") // L)
        self.ptr = np.zeros(n_w * L + 1, np.int64)
        np.cumsum(np.bincount(slots, minlength=n_w * L), out=self.ptr[1:])

    def terms(self, Xt2, N: int):
        ce, ent, P = self.k.scores_softmax(Xt2, self.S, self.y, self.L)
        return float(np.sum(ce)), float(np.sum(ent)), P

    def scatter(self, P):
        return self.k.scatter_rows(P, self.ptr, self.idx, self.inv_n)


class _Torch(_Backend):
    name = "torch"

    def __init__(self, S, y, n_w: int, L: int):
        try:
            import torch  # noqa: PLC0415 - optional backend
        except ImportError as exc:
            fail("backend", "torch", f"PyTorch is not importable here ({exc}); pip install 'fctheory[torch]'")
        from array_api_compat import array_namespace  # noqa: PLC0415 - only with torch

        self.torch = torch
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        B, BT = _host_gather_matrices(S, n_w, L)
        self.B, self.BT = (self._csr(M) for M in (B, BT))
        self.y = torch.as_tensor(y, device=self.device)
        self.rows = torch.arange(S.shape[0], device=self.device)
        self.xp = array_namespace(self.y)

    def _csr(self, M):
        t = self.torch
        with warnings.catch_warnings():  # "sparse CSR support is in beta": the products used here are stable
            warnings.simplefilter("ignore", UserWarning)
            return t.sparse_csr_tensor(
                t.as_tensor(M.indptr, dtype=t.int64),
                t.as_tensor(M.indices, dtype=t.int64),
                t.as_tensor(M.data, dtype=t.float64),
                size=M.shape,
                device=self.device,
                check_invariants=False,
            )

    def asarray(self, a):
        return self.torch.as_tensor(np.asarray(a, dtype=np.float64), device=self.device)

    def to_host(self, a):
        return a.detach().cpu().numpy()

    def gather(self, Xt2):
        return self.B @ Xt2

    def scatter(self, P):
        return self.BT @ P


class _Cupy(_Backend):  # pragma: no cover - needs a CUDA device
    name = "cupy"

    def __init__(self, S, y, n_w: int, L: int):
        cp = get_namespace("cupy")  # the lazy CuPy import, with its error message
        import cupyx.scipy.sparse as csp  # noqa: PLC0415 - optional backend

        B, BT = _host_gather_matrices(S, n_w, L)
        self.xp, self.B, self.BT = cp, csp.csr_matrix(B), csp.csr_matrix(BT)
        self.y, self.rows = cp.asarray(y), cp.arange(S.shape[0])

    def asarray(self, a):
        return self.xp.asarray(a, dtype=np.float64)

    def to_host(self, a):
        return self.xp.asnumpy(a)


_BACKENDS = {"numba": _Numba, "numpy": _Backend, "torch": _Torch, "cupy": _Cupy}


# ----------------------------------------------------------------------------- the objective
class SampleF:
    """f̂, ∇f̂ and E of the sample (S, y) in the score-table layout, on one backend.

    ``SampleF(task, S, y)(Xt)`` returns (f̂, E, Gt) for Xt (n_w × L·K) in the backend's namespace (with
    ``N_total``: the sentences' share of a sample of N_total, each term weighted 1/N_total);
    :meth:`factored` evaluates at Xt = Wᵀ·Uc and returns the factored gradients (host arrays) too. ``nfev``
    counts evaluations; the last (Xt, Gt) are kept (:attr:`last`) for the certificate's spectral norm.
    """

    def __init__(self, task, S, y, backend: str = "numba", *, N_total: int | None = None):
        if backend not in _BACKENDS:
            fail("backend", backend, f"must be one of {list(SAMPLE_BACKENDS)}")
        # a block of a larger sample (N_total sentences in all) averages its terms over the whole sample
        self.K, self.L, self.n_w, self.N = task.K, task.L, task.n_w, int(N_total or S.shape[0])
        self.be = _BACKENDS[backend](np.asarray(S, np.int64), np.asarray(y, np.int64), task.n_w, task.L)
        self.be.inv_n = 1.0 / self.N
        self.backend, self.nfev, self.last = backend, 0, None

    @property
    def shape(self):
        return (self.n_w, self.L * self.K)

    def __call__(self, Xt):
        self.nfev += 1
        be = self.be
        Xt2 = be.xp.reshape(Xt, (self.n_w * self.L, self.K)) if be.name in ("torch", "cupy") else Xt.reshape(-1, self.K)
        ce, ent, P = be.terms(Xt2, self.N)
        Gt = (
            be.xp.reshape(be.scatter(P), self.shape)
            if be.name in ("torch", "cupy")
            else be.scatter(P).reshape(self.shape)
        )
        self.last = (Xt, Gt)
        return ce / self.N, ent / self.N, Gt

    def factored(self, W, Uc):
        """(f̂, E, ∂f̂/∂W = Uc·Gtᵀ, ∂f̂/∂Uc = W·Gt, ⟨Gt, Xt⟩) at Xt = Wᵀ·Uc; host arrays in and out."""
        be = self.be
        Wd, Ud = be.asarray(W), be.asarray(Uc)
        f, E, Gt = self(Wd.T @ Ud)
        dW = be.to_host(Ud @ Gt.T)
        dU = be.to_host(Wd @ Gt)
        return f, E, dW, dU, float(np.sum(dU * Uc))

    # products with the last ∇f̂ (host vectors in and out): Lanczos, the Ritz estimates and the norm bound
    def matvec(self, v):
        return self.be.to_host(self.last[1] @ self.be.asarray(v))

    def rmatvec(self, u):
        return self.be.to_host(self.last[1].T @ self.be.asarray(u))

    def rmatmat(self, Q):
        return self.be.to_host(self.last[1].T @ self.be.asarray(Q))

    def gram(self):
        """(M, m, ‖∇f̂‖_F²): the smaller Gram matrix of the last ∇f̂ (host), its inner length (the input of
        :func:`fctheory._nuclear.spectral_norm_bound`)."""
        G = self.last[1]
        M = G @ G.T if G.shape[0] <= G.shape[1] else G.T @ G
        return self.be.to_host(M), max(G.shape), float(self.be.xp.sum(G * G))
