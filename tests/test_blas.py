"""fctheory._blas: the numba-callable gemm computes C ← α·op(A)·op(B) + β·C like NumPy, for every
transpose combination and both float dtypes."""

import threading
import time

import numpy as np
import pytest

from fctheory._blas import gemm


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-13), (np.float32, 1e-5)])
@pytest.mark.parametrize("trans_a, trans_b", [(False, False), (True, False), (False, True), (True, True)])
def test_gemm_equals_numpy(dtype, rtol, trans_a, trans_b):
    rng = np.random.default_rng(0)
    M, N, K = 5, 4, 3
    A = rng.normal(size=(K, M) if trans_a else (M, K)).astype(dtype)
    B = rng.normal(size=(N, K) if trans_b else (K, N)).astype(dtype)
    C = rng.normal(size=(M, N)).astype(dtype)
    ref = 0.7 * (A.T if trans_a else A).astype(np.float64) @ (B.T if trans_b else B).astype(
        np.float64
    ) - 0.25 * C.astype(np.float64)
    gemm(trans_a, trans_b, 0.7, np.ascontiguousarray(A), np.ascontiguousarray(B), -0.25, C)
    np.testing.assert_allclose(C, ref, rtol=rtol, atol=rtol)


def test_beta_zero_overwrites_c_even_when_it_holds_nan():
    A, B = np.eye(2), np.arange(4.0).reshape(2, 2)
    C = np.full((2, 2), np.nan)
    gemm(False, False, 1.0, A, B, 0.0, C)
    np.testing.assert_array_equal(C, B)


def test_gemm_called_from_python_releases_the_gil():
    """While one thread is inside gemm, another thread runs Python code: the exact-risk engine's workers overlap their
    gradient products only so. With the GIL held (SciPy's dgemm wrapper, or njit without nogil) no Python line of
    the other thread could run between the gemm's start and end; the middle half of one call is checked (the OS
    may deschedule the watcher on a loaded machine, so up to three calls are tried)."""
    rng = np.random.default_rng(0)
    n = 1200  # one product of 3.5 GFLOP: tens of milliseconds
    A, B = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    C = np.zeros((n, n))
    gemm(False, False, 1.0, A, B, 0.0, C)  # compiled before timing
    for _ in range(3):
        span, stamps, done = [], [], threading.Event()

        def work():
            t0 = time.perf_counter()
            gemm(False, False, 1.0, A, B, 1.0, C)
            span.extend((t0, time.perf_counter()))
            done.set()

        th = threading.Thread(target=work)
        th.start()
        while not done.is_set():
            stamps.append(time.perf_counter())
        th.join()
        t0, t1 = span
        q = (t1 - t0) / 4
        if any(t0 + q < t < t1 - q for t in stamps):
            return
    pytest.fail("no Python line of the other thread ran while gemm did: it holds the GIL")
