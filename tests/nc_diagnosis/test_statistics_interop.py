"""The class statistics, the metrics from them and the UFM distances on arrays of other libraries (PyTorch
CPU/CUDA, CuPy): statistics on the input's device, the same numbers as NumPy's."""

import math

import numpy as np
import pytest

from fctheory.nc_diagnosis import feature_statistics, nc_metrics, statistics_from_moments, ufm_distances, ufm_optimum

RTOL = 1e-12
K, D = 5, 7


def _data(seed=0, N=60):
    rng = np.random.default_rng(seed)
    y = np.concatenate([np.arange(K), rng.integers(0, K, N - K)])
    H = 20.0 + 3.0 * rng.standard_normal((K, D))[y] + rng.standard_normal((N, D))
    return H, y, rng.standard_normal((K, D)), rng.standard_normal(K)


def _same_dict(got, want):
    assert got.keys() == want.keys()
    for k, w in want.items():
        assert type(got[k]) is float, k
        assert (math.isnan(w) and math.isnan(got[k])) or math.isclose(got[k], w, rel_tol=RTOL, abs_tol=1e-15), k


def test_feature_statistics_stay_on_the_inputs_device(array_backend):
    H, y, _, _ = _data()
    st = feature_statistics(array_backend.asarray(H), array_backend.asarray(y))
    want = feature_statistics(H, y)
    assert isinstance(st.counts, np.ndarray) and np.array_equal(st.counts, want.counts)
    for k in ("means", "sigma_W", "class_var"):
        assert array_backend.owns(getattr(st, k)), k
    assert math.isclose(st.H_norm_sq, want.H_norm_sq, rel_tol=RTOL) and st.balanced is want.balanced


def test_nc_metrics_of_device_statistics_equal_numpys(array_backend):
    H, y, W, _ = _data(1)
    st = feature_statistics(array_backend.asarray(H), array_backend.asarray(y))
    _same_dict(nc_metrics(st, array_backend.asarray(W)), nc_metrics(feature_statistics(H, y), W))


def test_statistics_from_device_moments_equal_numpys(array_backend):
    H, y, _, _ = _data(2)
    shift = H[[int(np.nonzero(y == k)[0][0]) for k in range(K)]]
    Dv = H - shift[y]
    sums = np.stack([Dv[y == k].sum(axis=0) for k in range(K)])
    sq = np.array([np.sum(Dv[y == k] ** 2) for k in range(K)])
    moments = (np.bincount(y, minlength=K), sums, Dv.T @ Dv, sq, shift)
    st = statistics_from_moments(*map(array_backend.asarray, moments))
    want = statistics_from_moments(*moments)
    assert array_backend.owns(st.sigma_W) and array_backend.owns(st.means)
    _same_dict(nc_metrics(st), nc_metrics(want))


@pytest.mark.parametrize("bias", [False, True])
def test_ufm_distances_of_device_arrays_equal_numpys(array_backend, bias):
    H, y, W, b = _data(3)
    opt = ufm_optimum(loss="ce", K=K, n_spl=12, lam_W=1e-2, lam_H=1e-3, bias=bias)
    st = feature_statistics(array_backend.asarray(H), array_backend.asarray(y))
    bb = array_backend.asarray(b) if bias else None
    got = ufm_distances(st, array_backend.asarray(W), bb, opt, n_spl=12)
    _same_dict(got, ufm_distances(feature_statistics(H, y), W, b if bias else None, opt, n_spl=12))
