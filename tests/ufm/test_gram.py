"""FrameGram (fctheory/ufm/gram.py): the UFM optimum's K×K Grams a·(I − 11ᵀ/K) and a·I held as three numbers,
their distances to a matrix's Gram without forming it (against long-double sums), and the array they stand for."""

import numpy as np
import pytest

import fctheory as fc
from fctheory import FCTheoryError, metrics
from fctheory.metrics import pairs
from fctheory.ufm.gram import FrameGram, frame_gram, gram_distance


@pytest.mark.parametrize("kind", ["etf", "identity"])
@pytest.mark.parametrize("offset", [0.0, 30.0])
def test_frame_gram_distances_against_long_double(kind, offset):
    rng = np.random.default_rng(4)
    K, d = 90, 7
    A = rng.normal(size=(K, d)) + offset
    for a in (0.0, 0.3, 50.0):
        G = FrameGram(K, a, kind)
        Al = A.astype(np.longdouble)
        E = np.eye(K, dtype=np.longdouble) - (1 / np.longdouble(K) if kind == "etf" else 0)
        ref = float(np.sqrt(((Al @ Al.T - a * E) ** 2).sum()))
        assert gram_distance(A, G) == pytest.approx(ref, rel=1e-12)
        assert gram_distance(A, np.asarray(G)) == pytest.approx(ref, rel=1e-12)


def test_identity_distance_near_the_identity_is_recomputed_in_tiles():
    # rows of an orthogonal frame (d ≥ K): AAᵀ = I, so ‖AAᵀ − I‖ cancels completely in the expansion
    K = 40
    A = np.linalg.qr(np.random.default_rng(5).normal(size=(60, K)))[0].T  # orthonormal rows
    fit = pairs.frame_fit(A - A.mean(axis=0), 0, A.mean(axis=0))[0]
    _, factor = fit.identity_distance(1.0)
    assert factor > 1e3
    from fctheory.ufm.gram import gram_distance_from_fit

    got = gram_distance_from_fit(fit, FrameGram(K, 1.0, "identity"), A)
    assert got == pytest.approx(np.linalg.norm(A @ A.T - np.eye(K)), abs=1e-13)
    with pytest.raises(FCTheoryError, match="the rows are needed"):
        gram_distance_from_fit(fit, FrameGram(K, 1.0, "identity"))


def test_frame_gram_behaves_as_its_array():
    G = FrameGram(5, 2.0, "etf")
    E = metrics.etf_gram(5)
    assert np.array_equal(np.asarray(G), 2.0 * E) and G.tolist() == (2.0 * E).tolist()
    assert G[1, 1] == 2.0 * E[1, 1] and G[0, 3] == 2.0 * E[0, 3] and np.array_equal(G[0], 2.0 * E[0])
    assert G.norm() == pytest.approx(np.linalg.norm(2.0 * E), rel=1e-15) and G.trace() == pytest.approx(8.0)
    assert (3 * G).scale == 6.0 and G.shape == (5, 5)
    assert isinstance(frame_gram(5, 1.0, "identity"), np.ndarray)
    with pytest.raises(FCTheoryError, match="kind='x' is invalid"):
        frame_gram(5, 1.0, "x")


def test_the_ufm_optimum_of_a_large_K_keeps_its_grams_as_frames():
    opt = fc.ufm.ce(K=pairs.LARGE_K, n_spl=2, lam_W=1e-4, lam_H=1e-4)
    assert isinstance(opt.W_gram, FrameGram) and isinstance(opt.means_gram, FrameGram)
    small = fc.ufm.ce(K=4, n_spl=2, lam_W=1e-4, lam_H=1e-4)
    assert type(small.W_gram) is np.ndarray
    mse = fc.ufm.mse(K=pairs.LARGE_K, n_spl=2, lam_W=1e-4, lam_H=1e-4)
    assert mse.W_gram.kind == "identity" and mse.W_gram.trace() == pytest.approx(mse.W_norm_sq, rel=1e-12)
