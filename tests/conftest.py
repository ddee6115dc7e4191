"""Shared test configuration: Hypothesis profiles.

``ci`` (default) keeps the suite inside the CI time budget; ``thorough`` (HYPOTHESIS_PROFILE=thorough)
runs many more examples for local verification.
"""
import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)
settings.register_profile(
    "thorough",
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# --- one backend fixture: a test that takes `backend` runs once per available backend --------------
import importlib.util  # noqa: E402

import pytest  # noqa: E402


def _cuda_available() -> bool:
    if importlib.util.find_spec("cupy") is None:
        return False
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # noqa: BLE001 - any CUDA failure means "no usable GPU"
        return False


BACKENDS = ["numpy", "numba", "cupy"]
_GPU = _cuda_available()


@pytest.fixture(
    params=[
        "numpy",
        "numba",
        pytest.param(
            "cupy", marks=[pytest.mark.gpu, pytest.mark.skipif(not _GPU, reason="needs CuPy and a CUDA device")]
        ),
    ]
)
def backend(request):
    """Every backend of the library: NumPy, numba kernels, and CuPy where a CUDA device is present."""
    return request.param


@pytest.fixture(params=["numpy", "numba"])
def host_backend(request):
    """The host backends only (NumPy and numba), for tests whose oracle needs host arrays."""
    return request.param
