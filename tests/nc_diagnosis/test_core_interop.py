"""diagnose_features on arrays of other libraries (PyTorch CPU/CUDA, CuPy): the same verdict and numbers as
for NumPy input, a NumPy result, and bad input refused naming the parameter."""

import math

import numpy as np
import pytest

from fctheory import FCTheoryError
from fctheory.nc_diagnosis import diagnose_features

K, D, N_PER = 4, 6, 5


def _features(collapsed, seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(K), N_PER)
    W = rng.standard_normal((K, D))
    means = 0.3 * W if collapsed else 2.0 * rng.standard_normal((K, D))
    H = means[y] + (0.0 if collapsed else 0.5) * rng.standard_normal((y.size, D))
    return H, y, W, rng.standard_normal(K)


def _same(got, want, what):
    assert got.keys() == want.keys(), what
    for k, w in want.items():
        g = got[k]
        assert type(g) is type(w), (what, k)
        if isinstance(w, float) and not math.isnan(w):
            assert math.isclose(g, w, rel_tol=1e-12, abs_tol=1e-15), (what, k, g, w)


@pytest.mark.parametrize("collapsed", [False, True])
@pytest.mark.parametrize("with_bias", [False, True])
def test_diagnosis_of_device_arrays_equals_the_diagnosis_of_numpy_arrays(array_backend, collapsed, with_bias):
    H, y, W, b = _features(collapsed)
    b = b if with_bias else None
    kw = dict(lam_W=1e-2, lam_H=1e-3, loss="ce", rtol=0.05)
    a = array_backend.asarray
    got = diagnose_features(a(H), a(y), a(W), None if b is None else a(b), **kw)
    want = diagnose_features(H, y, W, b, **kw)
    assert got.verdict == want.verdict and got.matches == want.matches
    assert (got.K, got.N, got.d) == (want.K, want.N, want.d) and np.array_equal(got.counts, want.counts)
    for what in ("metrics", "distances", "checks"):
        _same(getattr(got, what), getattr(want, what), what)
    # the result is a host object: NumPy arrays for the report and the figures
    assert isinstance(got.W, np.ndarray) and isinstance(got.statistics.sigma_W, np.ndarray)
    assert got.to_dict()["metrics"].keys() == want.to_dict()["metrics"].keys()


@pytest.mark.parametrize(
    ("change", "param"),
    [
        (lambda H, y, W: (H, y, W[:, 1:]), "W"),
        (lambda H, y, W: (H, y + 1, W), "y"),
        (lambda H, y, W: (H, y[1:], W), "y"),
        (lambda H, y, W: (np.where(H > 1.0, np.nan, H), y, W), "H"),
        (lambda H, y, W: (H, -y, W), "y"),
        (lambda H, y, W: (H * 1e300, y, W), "H"),  # ‖H‖² overflows float64: checked on the device
        (lambda H, y, W: (H, y, W * 1e300), "W"),
    ],
)
def test_bad_device_input_is_refused_naming_the_parameter(array_backend, change, param):
    H, y, W, _ = _features(False)
    args = [array_backend.asarray(x) for x in change(H, y, W)]
    with pytest.raises(FCTheoryError, match=rf"\b{param}\b"):
        diagnose_features(*args, lam_W=1e-2, lam_H=1e-3)
