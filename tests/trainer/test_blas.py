"""fctheory.trainer._blas: the numba-callable gemm computes C ← α·op(A)·op(B) + β·C like NumPy, for every
transpose combination and both float dtypes."""

import numpy as np
import pytest

from fctheory.trainer._blas import gemm


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
