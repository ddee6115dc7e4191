"""fctheory._backend: backend names to array modules, and host copies."""

import subprocess
import sys

import array_api_compat
import numpy as np
import pytest

import fctheory as fc
from fctheory._backend import (
    array_namespace_of,
    as_native,
    asarray_like,
    copy_of,
    dtype_kind,
    get_namespace,
    to_numpy,
)


def test_host_backends_are_numpy(host_backend):
    assert get_namespace(host_backend) is np


def test_unknown_backend_is_refused_naming_it():
    with pytest.raises(fc.FCTheoryError, match="backend='torch'"):
        get_namespace("torch")


def test_numpy_arrays_belong_to_numpy_and_copy_to_themselves():
    A = np.arange(6.0).reshape(2, 3)
    assert array_namespace_of(A) is np
    assert np.array_equal(to_numpy(A), A) and to_numpy([1, 2]).tolist() == [1, 2]


def test_tensors_get_the_array_api_compat_namespace_and_host_copies():
    torch = pytest.importorskip("torch", reason="needs torch: pip install 'fctheory[torch]'")
    import array_api_compat

    t = torch.arange(6.0, dtype=torch.float64, requires_grad=True).reshape(2, 3)
    assert array_namespace_of(t) is array_api_compat.array_namespace(t)
    assert np.array_equal(to_numpy(t), np.arange(6.0).reshape(2, 3))  # detached from autograd first
    xp, a = as_native(t)
    assert a is not t and not a.requires_grad and xp is array_namespace_of(t)


def test_array_namespace_of_does_not_load_torch_or_cupy_for_numpy_input():
    code = (
        "import sys, numpy as np; from fctheory._backend import array_namespace_of;"
        "assert array_namespace_of(np.zeros(2)) is np and array_namespace_of([1.0]) is np;"
        "assert 'torch' not in sys.modules and 'cupy' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_asarray_like_puts_host_data_next_to_the_reference_array(array_backend):
    ref = array_backend.asarray(np.zeros((2, 2)))
    a = asarray_like(np.array([1, 2, 3]), ref)
    assert array_backend.owns(a) and to_numpy(a).tolist() == [1, 2, 3]
    assert str(asarray_like([1, 2], ref, dtype=array_namespace_of(ref).float64).dtype).endswith("float64")
    assert array_api_compat.device(a) == array_api_compat.device(ref)


def test_dtype_kind_reads_numpys_kind_for_every_library(array_backend):
    kinds = {np.float32: "f", np.float64: "f", np.int64: "i", np.uint8: "u", np.bool_: "b"}
    for dtype, kind in kinds.items():
        assert dtype_kind(array_backend.asarray(np.zeros(2, dtype=dtype))) == kind


def test_copy_of_is_an_independent_copy(array_backend):
    x = array_backend.asarray(np.arange(3.0))
    c = copy_of(x)
    c[0] = 7.0
    assert to_numpy(x).tolist() == [0.0, 1.0, 2.0] and array_backend.owns(c)
