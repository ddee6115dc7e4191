"""The certified optima as the command line shows them: one flat dict of numbers per result (``fctheory optimum``,
``fctheory predict --paper``), each field a JSON number, list or string.

:func:`summary_h` reads a certified minimiser of (5) (:func:`fctheory.optimum`'s ``OptimumResult`` or
:func:`fctheory.collapsed_optimum`'s result) and measures its weights with the project's one geometry module
(:func:`fctheory.metrics.geometry.weight_geometry`: centred PCA, norms); :func:`summary_star` reads the best
feature-collapsed network h* (:func:`fctheory.collapsed_optimum_star`).
"""

from __future__ import annotations

import numpy as np

from ..metrics.geometry import norms_by_rank, pca_spectrum, weight_geometry

__all__ = ["certificate", "summary_h", "summary_h_star", "summary_star"]

#: the certificate's fields, in the order the tables print them
CERTIFICATE = ("R", "lower_bound", "gap", "rel_gap", "certified")


def certificate(res) -> dict:
    """R, the certified lower bound on the minimum, R minus it, relative to |R|, and whether it meets the tolerance."""
    return {k: (bool(getattr(res, k)) if k == "certified" else float(getattr(res, k))) for k in CERTIFICATE}


def summary_h(task, res, lam: float) -> dict:
    """The certificate and the geometry of a minimiser of (5) with balanced weights ``res.W`` (d×n_w), ``res.U``.

    ``concept_norms`` is the mean word norm of each concept (equal within a concept for uniform μ),
    ``norms_by_rank`` the mean over the concepts of the norm of the β-th most frequent word; ``ce`` = R − λ‖W‖²
    (the cross-entropy part: ‖W‖² = ‖U‖² = ‖X‖_* at a balanced minimiser).
    """
    g = weight_geometry(task, res.W, res.U, layernorm=False, k=3)
    w = np.asarray(g["W_norms"])
    by_rank, _ = norms_by_rank(task, w)
    u = np.asarray(g["U_norms"])
    return {
        **certificate(res),
        "ce": float(res.R - lam * float(np.sum(res.W * res.W))),
        "width": int(res.width),
        "word_norms": w,
        "concept_norms": w.reshape(task.n_c, task.s_c).mean(axis=1),
        "norms_by_rank": by_rank,
        "word_norm_mean": float(w.mean()),
        "u_norm_mean": float(u.mean()),
        "u_norm_std": float(u.std()),
        "pca_W": np.asarray(g["pca_W"]),
        "pca_U": np.asarray(g["pca_U"]),
        "message": str(res.message),
        "seconds": float(res.seconds),
    }


def summary_h_star(task, res, lam: float) -> dict:
    """The certificate and the geometry of network h*'s best local minimiser (:func:`fctheory.optimum` with
    ``network="h*"``): R* of (10) has no decay on W (LayerNorm makes its scale free), so ``ce`` = R − (λ/2)‖U‖²
    and the spectra are of the words' features φ(w) and of the u_(k,ℓ)."""
    g = weight_geometry(task, res.W, res.U, layernorm=True, eps=0.0, k=3)
    u = np.asarray(g["U_norms"])
    return {
        **certificate(res),
        "ce": float(res.R - 0.5 * lam * float(np.sum(res.U * res.U))),
        "width": int(res.width),
        "u_norm_mean": float(u.mean()),
        "u_norm_std": float(u.std()),
        "pca_U": np.asarray(g["pca_U"]),
        "pca_phiW": np.asarray(g["pca_W"]),
        "message": str(res.message),
        "seconds": float(res.seconds),
    }


def summary_star(task, res) -> dict:
    """The certificate and the geometry of the best feature-collapsed network h* (``collapsed_optimum_star``).

    ``tau`` is ‖U‖_F (Theorem 3's τ* on a full task), ``u_norm_mean`` the mean ‖u_(k,ℓ)‖ (its c); the PCA spectra
    are centred, as for a trained network: of the u_(k,ℓ) and of the words' features φ(w) (each word carries its
    concept's φ_α).
    """
    U = np.asarray(res.U).reshape(task.K * task.L, -1)
    return {
        **certificate(res),
        "ce": float(res.ce),
        "tau": float(res.tau),
        "u_norm_mean": float(res.c),
        "u_norm_std": float(np.std(res.u_norms)),
        "feature_cosines": np.asarray(res.cosines),
        "pca_U": pca_spectrum(U, 3, "U"),
        "pca_phiW": pca_spectrum(np.repeat(res.phi, task.s_c, axis=0), 3, "W"),
        "message": str(res.message),
        "seconds": float(res.seconds),
    }
