"""A cacheable BLAS ``gemm`` callable from numba ``@njit`` code and from Python threads (row-major, alpha, beta).

numba's own ``np.dot`` cannot accumulate into an existing matrix (``beta``), and the SGD update of U
is exactly ``U ← (1 − lr·λ_U)·U − lr·GᵀF`` — one gemm with beta = 1 − lr·λ_U — which saves a full
pass over the K×Ld matrix per step. We call numba's own C helper ``numba_xxgemm`` (the one behind
``np.dot``, which forwards to SciPy's BLAS) through an ``ExternalFunction`` so the kernels stay
cacheable (``cache=True``): a ctypes function pointer would not be.

Called from Python, :func:`gemm` releases the GIL (``nogil``) for the whole product, which SciPy's own
``scipy.linalg.blas.dgemm`` wrapper does not: the exact-risk engine's worker threads accumulate their
gradient products with it in parallel (with SciPy's wrapper two threads reached 1.25× one thread's rate).
"""

from __future__ import annotations

import numba as nb
import numpy as np
from numba import types
from numba.np.linalg import ensure_blas

ensure_blas()  # imports scipy.linalg.cython_blas, which registers the BLAS symbols numba links to

_xxgemm = types.ExternalFunction(
    "numba_xxgemm",
    types.intc(
        types.char,  # kind: 's' | 'd'
        types.char,  # transa
        types.char,  # transb
        types.intp,  # m
        types.intp,  # n
        types.intp,  # k
        types.voidptr,  # alpha
        types.voidptr,  # a
        types.intp,  # lda
        types.voidptr,  # b
        types.intp,  # ldb
        types.voidptr,  # beta
        types.voidptr,  # c
        types.intp,  # ldc
    ),
)

_N, _T, _S, _D = ord("n"), ord("t"), ord("s"), ord("d")


@nb.njit(cache=True, nogil=True)
def gemm(trans_a, trans_b, alpha, A, B, beta, C):
    """C ← alpha·op(A)·op(B) + beta·C for C-contiguous row-major float32/float64 matrices.

    BLAS is column-major: a row-major M×N matrix is its column-major transpose, so we compute
    Cᵀ = op(B)ᵀ·op(A)ᵀ with the operands swapped and the transpose flags passed through. A, B and C must be
    C-contiguous (a row range of a C-contiguous matrix is): the leading dimensions are taken from the shapes.
    """
    M, N = C.shape
    kdim = A.shape[0] if trans_a else A.shape[1]
    sc = np.empty(2, C.dtype)
    sc[0] = alpha
    sc[1] = beta
    kind = _S if C.itemsize == 4 else _D
    _xxgemm(
        kind,
        _T if trans_b else _N,
        _T if trans_a else _N,
        N,
        M,
        kdim,
        sc[0:].ctypes,
        B.ctypes,
        B.shape[1],
        A.ctypes,
        A.shape[1],
        sc[1:].ctypes,
        C.ctypes,
        N,
    )
