"""proofs_check._deps: each library function a check uses is looked up in its home module."""

import pytest

import fctheory as fc
from proofs_check._deps import _HOME, lead


@pytest.mark.parametrize("name", sorted(_HOME))
def test_lead_returns_the_public_function_of_that_name(name):
    fn = lead(name)
    assert callable(fn) and fn.__name__ == name
    if hasattr(fc, name):
        assert getattr(fc, name) is fn
