"""Figures of a trained network (PNG): the paper's figures 3 and 4 and norm against frequency rank.

* :func:`plot_pca_words` — PCA (components 1, 2) of the word embeddings (φ(W) for h*), coloured by
  concept, as in the notebooks (darkblue, darkred, darkgreen, …);
* :func:`plot_pca_classifier` — the same for all u_{k,ℓ}, coloured by the concept z_{k,ℓ};
* :func:`plot_norm_by_rank` — ‖w_(α,β)‖ against the frequency rank β, with the theory's curve
  (constant c for type I, r_β for type III) where a theorem applies.

matplotlib is imported lazily with the Agg backend (an optional dependency, ``fctheory[plot]``).
"""

from __future__ import annotations

import os

import numpy as np

from .._validate import check_output_path
from .._files import atomic_path
from .._plot import pyplot
from ..metrics.geometry import pca2, vector_norms
from ..network import phi

__all__ = ["plot_pca_words", "plot_pca_classifier", "plot_norm_by_rank", "save_figures"]

_COLOURS = ["darkblue", "darkred", "darkgreen", "darkorange", "purple", "teal", "olive", "brown"]


def _plt():
    return pyplot("figures", "matplotlib")


def _scatter(path, pts, labels, n_c, title):
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5, 5))
    for a in range(n_c):
        sel = labels == a
        ax.scatter(pts[sel, 0], pts[sel, 1], s=4, color=_COLOURS[a % len(_COLOURS)], label=f"concept {a}")
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, markerscale=3)
    fig.subplots_adjust(left=0.12, right=0.97, bottom=0.08, top=0.93)  # tight_layout is slow
    _save(fig, path)
    plt.close(fig)
    return path


def _save(fig, path):
    """Save a PNG atomically (temporary file beside it, then rename): never half a figure."""
    with atomic_path(os.fspath(path), name="path") as tmp:
        fig.savefig(tmp, dpi=110, format="png")


def plot_pca_words(run, path, eps=None):
    """PCA scatter of the word embeddings (φ(W) for h*) coloured by concept; returns ``path``."""
    W = np.asarray(run.W, dtype=np.float64)
    V = phi(W, eps=run.config.eps if eps is None else eps).T if run.config.layernorm else W.T
    pts, s = pca2(V)
    what = "φ(W)" if run.config.layernorm else "W"
    return _scatter(
        path,
        pts,
        run.task.word_concept,
        run.task.n_c,
        f"PCA of {what}: σ = {s[0]:.4g}, {s[1]:.4g}, {s[2] if len(s) > 2 else 0:.3g}",
    )


def plot_pca_classifier(run, path):
    """PCA scatter of all u_{k,ℓ} coloured by the concept z_{k,ℓ}; returns ``path``."""
    d = run.W.shape[0]
    Uh = np.asarray(run.U, dtype=np.float64).reshape(run.task.K * run.task.L, d)
    pts, s = pca2(Uh)
    return _scatter(
        path,
        pts,
        run.task.Z.ravel(),
        run.task.n_c,
        f"PCA of u_kℓ: σ = {s[0]:.4g}, {s[1]:.4g}, {s[2] if len(s) > 2 else 0:.3g}",
    )


def plot_norm_by_rank(run, path):
    """‖w_(α,β)‖ against β (log-scale rank), every word, with the predicted curve where it applies."""
    plt = _plt()
    task = run.task
    norms = vector_norms(run.W, 0, "W").reshape(task.n_c, task.s_c)
    ranks = np.arange(1, task.s_c + 1)
    fig, ax = plt.subplots(figsize=(6, 4))
    for a in range(task.n_c):
        ax.plot(ranks, norms[a], ".", ms=3, color=_COLOURS[a % len(_COLOURS)], label=f"concept {a}")
    m = run.measurements
    pred = m.predicted if m is not None else {}
    if "r" in pred:
        ax.plot(ranks, pred["r"], "k-", lw=1.5, label="type III: r_β (Thm 2)")
    elif "w_norm" in pred and not run.config.layernorm:
        ax.axhline(pred["w_norm"], color="k", lw=1.5, label=f"type I: c = {pred['w_norm']:.5g} (Thm 1)")
    ax.set_xscale("log")
    ax.set_xlabel("frequency rank β (1 = most frequent)")
    ax.set_ylabel("‖w‖")
    ax.legend(fontsize=7)
    fig.subplots_adjust(left=0.12, right=0.97, bottom=0.13, top=0.95)
    _save(fig, path)
    plt.close(fig)
    return path


def save_figures(run, folder, prefix: str = "") -> dict:
    """Write the three figures of ``run`` into ``folder``; returns {name: path}.

    Raises
    ------
    FCTheoryError
        When ``folder`` cannot be a folder (a file of that name exists, or a parent of it is a file) or is not
        writable; checked before anything is drawn.
    """
    folder = check_output_path("folder", folder, dir=True)
    os.makedirs(folder, exist_ok=True)
    return {
        "pca_W": plot_pca_words(run, os.path.join(folder, f"{prefix}pca_W.png")),
        "pca_U": plot_pca_classifier(run, os.path.join(folder, f"{prefix}pca_U.png")),
        "norm_by_rank": plot_norm_by_rank(run, os.path.join(folder, f"{prefix}norm_by_rank.png")),
    }
