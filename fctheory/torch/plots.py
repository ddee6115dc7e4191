"""The monitor's figures: each metric over the epochs, with the UFM prediction as a line
(:func:`plot_history`), and the per-class values against class frequency (:func:`plot_classes`)."""

from __future__ import annotations

import numpy as np

from .._files import atomic_path
from .._plot import pyplot
from .._validate import Anything, Instance, PathOut, fail, public

__all__ = ["plot_classes", "plot_history"]

# (columns, title, log scale, UFM prediction: a number, the name of a column holding it, or None)
_PANELS = (
    (("nc1", "nc1_trace_ratio"), "NC1 (Papyan; tr Σ_W/tr Σ_B)", True, 0.0),
    (("cdnv",), "CDNV", True, 0.0),
    (("nc2", "nc2_W"), "NC2: distance to a simplex ETF (means, W)", True, 0.0),
    (("nc3",), "NC3: self-duality ‖W/‖W‖ − M̃/‖M̃‖‖", True, 0.0),
    (("nc4",), "NC4: classifier ≠ nearest class mean", False, 0.0),
    (("dist_W_gram", "dist_means_gram"), "relative distance of W Wᵀ, M Mᵀ to the optimum", True, 0.0),
    (("W_norm_sq",), "‖W‖²", False, "ufm_W_norm_sq"),
    (("H_norm_sq_per_sample",), "‖H‖²/N", False, "ufm_H_per_sample"),
)


def _panel(ax, df, cols, title, log, pred):
    x = df["epoch"].to_numpy()
    drawn = False
    for c in cols:
        if c in df and np.isfinite(df[c].to_numpy(dtype=float)).any():
            v = df[c].to_numpy(dtype=float)
            ax.plot(x, np.where(v > 0, v, np.nan) if log else v, label=c)
            drawn = True
    if isinstance(pred, str) and pred in df:
        ax.axhline(float(df[pred].iloc[-1]), color="k", ls="--", lw=1, label="UFM optimum")
    elif pred == 0.0:
        title += " (UFM: 0)"
    if log and drawn:
        ax.set_yscale("log")
    ax.set_title(title, fontsize=8)
    ax.set_xlabel("epoch", fontsize=8)
    ax.tick_params(labelsize=7)
    if drawn:
        ax.legend(fontsize=6)
    return drawn


@public(df=Anything("the monitor's table, a pandas DataFrame"), path=PathOut(), title=Instance(str))
def plot_history(df, path, *, title=""):
    """Write the monitor's table ``df`` (one row per epoch) as a PNG grid of panels at ``path``."""
    plt = pyplot("path", path)
    df = df.copy()
    if "ufm_H_norm_sq" in df and "H_norm_sq_ratio" in df and "H_norm_sq_per_sample" in df:
        # the prediction per sample: observed per-sample value / observed ratio
        df["ufm_H_per_sample"] = df["H_norm_sq_per_sample"] / df["H_norm_sq_ratio"]
    fig, axes = plt.subplots(2, 4, figsize=(14, 6))
    for ax, (cols, name, log, pred) in zip(axes.ravel(), _PANELS):
        if not _panel(ax, df, cols, name, log, pred):
            ax.set_visible(False)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    with atomic_path(path, name="path") as tmp:
        fig.savefig(tmp, dpi=100, format="png")
    plt.close(fig)
    return path


# (column, title, log y, the UFM optimum's column or None)
_CLASS_PANELS = (
    ("var_rel", "Var_k / tr Σ_B (within-class variability)", True, None),
    ("cdnv", "CDNV of class k (mean over the others)", True, None),
    ("mean_norm", "‖μ_k‖", True, "ufm_mean_norm"),
    ("w_norm", "‖w_k‖", True, "ufm_w_norm"),
    ("w_cos", "cos(w_k, μ_k − μ_G) (self-duality)", False, None),
)


_EPOCH_COLOURS = ("tab:orange", "tab:green", "tab:purple", "tab:brown")


def _binned_median(x, v, bins=12):
    """(bin centres, medians) of v over log-spaced bins of x (bins without a finite value left out)."""
    ok = (x > 0) & np.isfinite(v)
    x, v = x[ok], v[ok]
    if x.size == 0:
        return np.empty(0), np.empty(0)
    edges = np.geomspace(x.min(), x.max() * (1 + 1e-12), bins + 1)
    at = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, bins - 1)
    keep = [b for b in range(bins) if np.any(at == b)]
    return np.sqrt(edges[keep] * edges[np.array(keep) + 1]), np.array([np.median(v[at == b]) for b in keep])


def _class_panel(ax, df, epochs, col, title, log, pred):
    if col not in df or not np.isfinite(df[col].to_numpy(dtype=float)).any():
        return False
    for i, e in enumerate(epochs):
        part = df[df["epoch"] == e]
        x, v = part["frequency"].to_numpy(dtype=float), part[col].to_numpy(dtype=float)
        keep = np.isfinite(v) & ((v > 0) if log else True)
        color = _EPOCH_COLOURS[i % len(_EPOCH_COLOURS)] if i < len(epochs) - 1 else "tab:blue"
        ax.scatter(x[keep], v[keep], s=4, alpha=0.5, color=color, lw=0, label=f"epoch {e}")
        bx, bv = _binned_median(x[keep], v[keep])
        ax.plot(bx, bv, color=color, lw=1.2)
        if pred is not None and pred in part and e == epochs[-1]:
            p = part[pred].to_numpy(dtype=float)
            order = np.argsort(x)
            ax.plot(x[order], p[order], "k--", lw=1, label="UFM optimum")
    ax.set_xscale("log")
    if log:
        ax.set_yscale("log")
    ax.set_title(title, fontsize=8)
    ax.set_xlabel("class frequency n_k/N", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=6, markerscale=3)
    return True


@public(
    df=Anything("the monitor's class table, a pandas DataFrame"),
    path=PathOut(),
    epochs=Anything("epoch numbers (ints) or None").or_none(),
    title=Instance(str),
)
def plot_classes(df, path, *, epochs=None, title=""):
    """Write the per-class values of the monitor's class table ``df`` against class frequency as a PNG.

    One point per class (log frequency on x), per epoch of ``epochs`` (default: the first and the last in the
    table), with the median over log-spaced frequency bins as a line and the UFM optimum's per-class norms as a
    dashed line: the plot studies of neural collapse in language models draw (variability and norms against
    token frequency).
    """
    if "epoch" not in df or "frequency" not in df or len(df) == 0:
        fail("df", f"table with columns {list(df.columns)}", "must be a non-empty class table (epoch, frequency, ...)")
    have = sorted(int(e) for e in df["epoch"].unique())
    epochs = sorted({have[0], have[-1]}) if epochs is None else [int(e) for e in epochs]
    missing = [e for e in epochs if e not in have]
    if missing or not epochs:
        fail("epochs", epochs, f"must be epochs of the table ({have[0]}..{have[-1]})")
    plt = pyplot("path", path)
    fig, axes = plt.subplots(1, len(_CLASS_PANELS), figsize=(18, 3.6))
    for ax, (col, name, log, pred) in zip(axes, _CLASS_PANELS):
        if not _class_panel(ax, df, epochs, col, name, log, pred):
            ax.set_visible(False)
    if title:
        fig.suptitle(title, fontsize=9)
    fig.subplots_adjust(left=0.04, right=0.99, bottom=0.15, top=0.82, wspace=0.3)
    with atomic_path(path, name="path") as tmp:
        fig.savefig(tmp, dpi=100, format="png")
    plt.close(fig)
    return path
