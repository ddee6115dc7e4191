"""fctheory._threads: blas_threads limits the BLAS pool inside the block, nests, and restores it after."""

import pytest
from threadpoolctl import threadpool_info

import fctheory as fc
from fctheory._threads import blas_threads


def _blas_counts():
    return [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]


def test_limit_applies_inside_nested_blocks_and_is_restored():
    before = _blas_counts()
    with blas_threads(1):
        with blas_threads(1):
            assert all(n == 1 for n in _blas_counts())
        assert all(n == 1 for n in _blas_counts())
    assert _blas_counts() == before


@pytest.mark.parametrize("bad", [0, True, 1.5])
def test_non_positive_or_non_integer_counts_are_refused(bad):
    with pytest.raises(fc.FCTheoryError, match="n="):
        with blas_threads(bad):
            pass
