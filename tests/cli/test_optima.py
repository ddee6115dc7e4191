"""fctheory.cli._optima: the flat summaries of certified optima that ``fctheory optimum`` and the main job print,
against the weights measured here with numpy alone."""

from __future__ import annotations

import numpy as np
import pytest

import fctheory as fc
from fctheory.cli._optima import CERTIFICATE, certificate, summary_h, summary_h_star, summary_star


def _centred_singular_values(M):
    return np.linalg.svd(M - M.mean(axis=0), compute_uv=False)


def test_summary_h_measures_the_weights_of_the_optimum():
    task = fc.Task.random(3, 2, 3, 7, mu="zipf", seed=2)
    lam = 0.03
    res = fc.optimum(task, lam=lam)
    out = summary_h(task, res, lam)
    assert {k: out[k] for k in CERTIFICATE} == certificate(res)
    assert out["R"] == res.R and out["certified"] is bool(res.certified) and out["width"] == res.width
    w = np.linalg.norm(res.W, axis=0)
    np.testing.assert_allclose(out["word_norms"], w, rtol=1e-13)
    np.testing.assert_allclose(out["concept_norms"], w.reshape(3, 2).mean(axis=1), rtol=1e-13)
    np.testing.assert_allclose(out["norms_by_rank"], w.reshape(3, 2).mean(axis=0), rtol=1e-13)
    u = res.U.reshape(task.K * task.L, -1)
    assert out["u_norm_mean"] == pytest.approx(np.linalg.norm(u, axis=1).mean(), rel=1e-13)
    assert out["u_norm_std"] == pytest.approx(np.linalg.norm(u, axis=1).std(), rel=1e-12)
    np.testing.assert_allclose(out["pca_W"], _centred_singular_values(res.W.T)[:3], rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(out["pca_U"], _centred_singular_values(u)[:3], rtol=1e-10, atol=1e-13)
    # balanced weights: R = CE + lambda |W|^2, and the CE part is R minus the penalty
    assert out["ce"] == pytest.approx(res.R - lam * np.sum(res.W**2), rel=1e-13)
    assert 0 < out["ce"] < out["R"]


def test_summary_h_star_penalises_u_only():
    task = fc.Task.random(2, 1, 2, 3, seed=0)
    lam = 0.05
    res = fc.optimum(task, lam=lam, network="h*", d=3)
    out = summary_h_star(task, res, lam)
    assert out["ce"] == pytest.approx(res.R - 0.5 * lam * np.sum(res.U**2), rel=1e-13)
    phi = fc.phi(res.W)
    np.testing.assert_allclose(out["pca_phiW"], _centred_singular_values(phi.T)[:3], rtol=1e-10, atol=1e-12)
    assert "word_norms" not in out  # the scale of W is free under LayerNorm: no word norms to report


def test_summary_star_reads_the_collapsed_h_star():
    task = fc.Task.random(3, 2, 3, 9, seed=0)
    res = fc.collapsed_optimum_star(task, lam=0.01, d=8)
    out = summary_star(task, res)
    U = res.U.reshape(task.K * task.L, -1)
    assert out["R"] == res.R and out["ce"] == res.ce and out["tau"] == pytest.approx(np.linalg.norm(U), rel=1e-13)
    assert out["u_norm_mean"] == pytest.approx(np.linalg.norm(U, axis=1).mean(), rel=1e-13)
    np.testing.assert_allclose(out["pca_U"], _centred_singular_values(U)[:3], rtol=1e-10, atol=1e-13)
    F = np.repeat(res.phi, task.s_c, axis=0)  # every word carries its concept's feature
    np.testing.assert_allclose(out["pca_phiW"], _centred_singular_values(F)[:3], rtol=1e-10, atol=1e-12)
    assert np.array_equal(out["feature_cosines"], res.cosines)
