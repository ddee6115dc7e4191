"""NC2, equinorm, equiangularity (fctheory.metrics.simplex): frames, variants against their definitions,
reductions that cannot cancel, the cached Grams, magnitudes beyond float64."""

import numpy as np
import pytest

from fctheory import FCTheoryError
from fctheory.metrics import (
    equiangularity,
    equinorm,
    nc2,
)
from .test_nc import TOL, simplex_etf


def test_nc2_identity_vanishes_on_orthogonal_frames():
    rng = np.random.default_rng(2)
    Q, _ = np.linalg.qr(rng.standard_normal((7, 4)))
    assert nc2(3.0 * Q.T, variant="identity", center=False) <= TOL
    assert nc2(3.0 * Q.T, variant="etf") <= TOL  # centred orthogonal frame is an ETF
    assert nc2(3.0 * Q.T, variant="etf", center=False) > 0.1


def test_row_normalised_nc2_is_blind_to_unequal_norms():
    # the review's eq. (7) normalises rows: it cannot see equinorm violations, "etf" can
    rng = np.random.default_rng(4)
    V = simplex_etf(4, 3, rng)
    M = V * np.array([1.0, 2.0, 1.0, 1.0])[:, None]
    M = M - M.mean(0)
    scaled = V * np.array([1.0, 2.0, 1.0, 1.0])[:, None]
    assert nc2(scaled, variant="etf", center=False) > 0.05
    assert equinorm(scaled, center=False) > 0.1
    assert nc2(V * 3, variant="cosine", center=False) <= TOL


def test_equiangularity_reduction_cannot_cancel():
    # ±e1, ±e2 sum to zero, so their mean cosine is exactly −1/(K−1), yet they are far from a simplex:
    # the signed mean cancels, the max-angle statistic (mean |cos + 1/3|) gives (4·2/3 + 8·1/3)/12 = 4/9
    V = np.array([[1.0, 0, 0], [-1.0, 0, 0], [0, 1.0, 0], [0, -1.0, 0]])
    C = V @ V.T
    assert C[~np.eye(4, dtype=bool)].mean() == pytest.approx(-1 / 3, abs=1e-15)
    assert equiangularity(V, center=False) == pytest.approx(4 / 9, rel=1e-14)
    assert nc2(V) > 0.1


def test_the_cached_simplex_gram_and_masks_are_read_only_and_etf_gram_returns_a_copy():
    from fctheory.metrics import etf_gram
    from fctheory.metrics.simplex import _etf_gram, _offdiag

    for K in (4, 300):  # cached, and made on each call beyond the cached sizes
        assert not _etf_gram(K).flags.writeable and not _offdiag(K).flags.writeable
    E = etf_gram(4)
    E[0, 0] = 99.0  # the caller's copy
    assert _etf_gram(4)[0, 0] == 0.75 and etf_gram(4)[0, 0] == 0.75


def test_a_mean_norm_beyond_float64_is_refused_with_the_whole_message():
    M = np.array([[1.5e308, 1.5e308], [1.5e308, -1.5e308]])  # finite rows of norm 2.1e308
    msg = r"^M='array of shape \(2, 2\)' is invalid: the mean norm overflows float64 at this scale"
    with pytest.raises(FCTheoryError, match=msg):
        equinorm(M, center=False, reduction="mean")
    assert equinorm(M / 4, center=False, reduction="mean") == pytest.approx(1.5e308 / 4 * 2**0.5, rel=1e-15)


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("pairs", [False, True])
@pytest.mark.parametrize("reduction", ["cv", "mean"])
def test_equinorm_variants_equal_their_definitions(log, pairs, reduction):
    # x_k = ‖m̃_k‖ (or its log), reduced over the K values or over the pairwise differences x_i − x_j, i < j
    M = np.random.default_rng(9).standard_normal((5, 3)) * 3.0
    x = np.linalg.norm(M - M.mean(axis=0), axis=1)
    x = np.log(x) if log else x
    if pairs:
        i, j = np.triu_indices(5, 1)
        x = x[i] - x[j]
    ref = x.mean() if reduction == "mean" else x.std() / x.mean()
    assert equinorm(M, log=log, pairs=pairs, reduction=reduction) == pytest.approx(ref, rel=1e-12, abs=1e-15)
