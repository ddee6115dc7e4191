"""fctheory.metrics.geometry: norms, PCA spectra, concept cosines, collapse distances, 2-D PCA."""

from __future__ import annotations

import math

import numpy as np
import pytest

import fctheory as fc
from fctheory.metrics import geometry as G


def _centred_sv(M):
    """Independent oracle: singular values of the explicitly centred matrix, via the eigenvalues of its Gram."""
    C = M - M.mean(axis=0)
    ev = np.linalg.eigvalsh(C.T @ C)[::-1]
    return np.sqrt(np.clip(ev, 0, None))


def test_pca_singular_values_equal_the_centred_gram_spectrum():
    M = np.random.default_rng(0).standard_normal((12, 5))
    np.testing.assert_allclose(G.pca_singular_values(M, k=4), _centred_sv(M)[:4], rtol=1e-12)


def test_pca_singular_values_scale_exactly_at_the_float_limits():
    M = np.random.default_rng(1).standard_normal((8, 3))
    base = G.pca_singular_values(M, k=3)
    assert np.array_equal(G.pca_singular_values(np.ldexp(M, 990), k=3), np.ldexp(base, 990))
    assert np.array_equal(G.pca_singular_values(np.ldexp(M, -990), k=3), np.ldexp(base, -990))


def test_pca_singular_values_of_zero_are_zero():
    assert np.array_equal(G.pca_singular_values(np.zeros((4, 3)), k=5), np.zeros(3))


def test_concept_cosines_equal_the_pairwise_means():
    rng = np.random.default_rng(2)
    V, lab = rng.standard_normal((9, 4)), np.array([0, 0, 1, 1, 1, 2, 2, 0, 1])
    U = V / np.linalg.norm(V, axis=1, keepdims=True)
    C = U @ U.T
    same = (lab[:, None] == lab[None, :]) & ~np.eye(9, dtype=bool)
    diff = lab[:, None] != lab[None, :]
    w, a = G.concept_cosines(V, lab, n_c=3)
    assert w == pytest.approx(C[same].mean(), rel=1e-13) and a == pytest.approx(C[diff].mean(), rel=1e-13)


def test_concept_cosines_refuse_a_concept_out_of_range():
    with pytest.raises(fc.FCTheoryError, match="concept"):
        G.concept_cosines(np.ones((2, 2)), np.array([0, 3]), n_c=2)


def test_vector_norms_refuse_an_overflow_naming_the_input():
    with pytest.raises(fc.FCTheoryError, match="^U"):
        G.vector_norms(np.full((3, 2), 1.5e308), 0, "U")


def test_rescaled_std_equals_numpy_where_numpy_does_not_overflow():
    x = np.random.default_rng(3).standard_normal(7)
    assert G.rescaled_std(x) == pytest.approx(np.std(x), rel=1e-15)
    assert G.rescaled_std(x * 1e300) == pytest.approx(np.std(x) * 1e300, rel=1e-15)


def test_weight_geometry_of_a_type1_configuration_is_the_collapse_geometry():
    task, lam = fc.Task.full(3, 2, 2), 0.02
    W, U = fc.type1_configuration(task, d=4, lam=lam, seed=0)
    p = fc.predict_type1(n_c=3, n_w=6, L=2, K=9, lam=lam)
    g = G.weight_geometry(task, W, U, layernorm=False)
    np.testing.assert_allclose(g["W_norms"], p.c, rtol=1e-13)
    np.testing.assert_allclose(g["U_norms"], p.c_prime, rtol=1e-13)
    np.testing.assert_allclose(g["pca_W"][:2], p.pca_sigma, rtol=1e-12)
    assert g["pca_W"][2] < 1e-12 * p.pca_sigma and g["phiW_norms"] is None
    assert g["cos_W_within"] == pytest.approx(1.0, abs=1e-14) and g["cos_W_across"] == pytest.approx(-0.5, abs=1e-14)
    assert g["cos_U_within"] == pytest.approx(1.0, abs=1e-14) and g["cos_U_across"] == pytest.approx(-0.5, abs=1e-14)


def test_weight_geometry_of_h_star_measures_phi_of_w():
    task = fc.Task.full(3, 2, 2)
    W, U = fc.type2_configuration(task, d=4, lam=0.02, seed=0)
    g = G.weight_geometry(task, W * 7.0, U, layernorm=True)
    np.testing.assert_allclose(g["phiW_norms"], 2.0, rtol=1e-14)  # ‖φ(w)‖ = √d
    np.testing.assert_allclose(g["W_norms"], 7.0 * np.linalg.norm(W, axis=0), rtol=1e-14)


def test_norms_by_rank_averages_over_concepts():
    task = fc.Task.full(2, 3, 1)
    mean, std = G.norms_by_rank(task, np.array([1.0, 2.0, 3.0, 3.0, 2.0, 1.0]))
    np.testing.assert_allclose(mean, [2.0, 2.0, 2.0])
    np.testing.assert_allclose(std, [1.0, 0.0, 1.0])


def test_collapse_distances_fit_only_the_kinds_of_the_network():
    task = fc.Task.full(3, 2, 2)
    W, U = fc.type1_configuration(task, d=4, lam=0.02, seed=0)
    dist, notes, fitted = G.collapse_distances(task, W, U, layernorm=False)
    assert dist["I"] < 1e-12 and dist["III"] < 1e-12 and dist["II"] is None and "h*" in notes["II"]
    assert fitted["I"]["c"] == pytest.approx(np.linalg.norm(W[:, 0]), rel=1e-12)
    dist, notes, _ = G.collapse_distances(task, W, U, layernorm=False, compute=False)
    assert all(v is None for v in dist.values()) and all("not computed" in n for n in notes.values())


def test_pca2_keeps_the_distances_of_planar_points():
    rng = np.random.default_rng(4)
    basis = np.linalg.qr(rng.standard_normal((5, 2)))[0]
    X = rng.standard_normal((10, 2)) @ basis.T + 3.0  # points on a plane in R^5
    P, s = G.pca2(X)
    dX = np.linalg.norm(X[:, None] - X[None], axis=-1)
    dP = np.linalg.norm(P[:, None] - P[None], axis=-1)
    np.testing.assert_allclose(dP, dX, atol=1e-12)
    assert s[2] < 1e-12 and P.shape == (10, 2)


def test_pca2_pads_a_single_feature_to_two_coordinates():
    P, _ = G.pca2(np.arange(4.0)[:, None])
    assert P.shape == (4, 2) and np.all(P[:, 1] == 0) and math.isclose(abs(P[0, 0]), 1.5)
