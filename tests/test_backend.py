"""fctheory._backend: backend names to array modules, and host copies."""

import numpy as np
import pytest

import fctheory as fc
from fctheory._backend import array_namespace_of, get_namespace, to_numpy


def test_host_backends_are_numpy(host_backend):
    assert get_namespace(host_backend) is np


def test_unknown_backend_is_refused_naming_it():
    with pytest.raises(fc.FCTheoryError, match="backend='torch'"):
        get_namespace("torch")


def test_numpy_arrays_belong_to_numpy_and_copy_to_themselves():
    A = np.arange(6.0).reshape(2, 3)
    assert array_namespace_of(A) is np
    assert np.array_equal(to_numpy(A), A) and to_numpy([1, 2]).tolist() == [1, 2]
