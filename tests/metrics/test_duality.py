"""NC3 and NC4 (fctheory.metrics.duality): from features and from class statistics, the per-sample cosine."""

import math

import numpy as np
import pytest

from fctheory import FCTheoryError
from fctheory.metrics import (
    class_statistics,
    nc3,
    nc3_from_statistics,
)
from .test_nc import TOL, simplex_etf
from .test_variability import DATA, RTOL


@pytest.mark.parametrize("variant", ["duality", "duality_squared", "etf"])
@pytest.mark.parametrize("global_mean", ["class_means", "samples"])
def test_nc3_from_statistics_equals_nc3_of_the_features(variant, global_mean):
    for i, (H, y, W) in enumerate(DATA):
        got = nc3_from_statistics(W, class_statistics(H, y), variant=variant, global_mean=global_mean)
        want = nc3(W, H, y, variant=variant, global_mean=global_mean)
        assert math.isclose(got, want, rel_tol=RTOL, abs_tol=1e-15), i


def test_the_per_sample_cosine_nc3_is_not_offered_from_statistics():
    H, y, W = DATA[0]
    with pytest.raises(FCTheoryError, match="variant"):
        nc3_from_statistics(W, class_statistics(H, y), variant="cosine")


def test_nc3_cosine_vanishes_on_centred_collapse():
    rng = np.random.default_rng(1)
    V = simplex_etf(4, 6, rng)
    y = np.repeat(np.arange(4), 3)
    assert nc3(2.0 * V, 0.5 * V[y], y, variant="cosine") <= TOL
