"""The monitor's figure: each metric over the epochs, with the UFM prediction as a line."""

from __future__ import annotations

import numpy as np

from .._files import atomic_path
from .._plot import pyplot
from .._validate import Anything, Instance, PathOut, public

__all__ = ["plot_history"]

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
