"""Figures and the markdown report of a :class:`~fctheory.nc_diagnosis.FeatureDiagnosis`."""

from __future__ import annotations

import math
import os

import numpy as np

from .._files import atomic_path, write_json
from .._plot import pyplot

__all__ = ["plot_feature_diagnosis", "write_feature_report"]


def _heat(ax, G, title):
    v = float(np.max(np.abs(G))) or 1.0
    im = ax.imshow(G, cmap="RdBu_r", vmin=-v, vmax=v)
    ax.set_title(title, fontsize=9)
    ax.set_xticks([])
    ax.set_yticks([])
    return im


def plot_feature_diagnosis(D, out) -> dict:
    """``grams.png`` (observed W Wᵀ and class-mean Gram next to the optimum's) and ``metrics.png`` (the
    deviations the verdict checks, against rtol); returns {name: path}."""
    plt = pyplot("out", out)
    os.makedirs(out, exist_ok=True)
    opt = D.applicability.optimum
    M = D.statistics.means
    fig, axes = plt.subplots(2, 2, figsize=(7, 6.5))
    _heat(axes[0, 0], D.W @ D.W.T, "observed W Wᵀ")
    _heat(axes[0, 1], opt.W_gram, f"UFM optimum W*W*ᵀ ({D.applicability.model})")
    _heat(axes[1, 0], M @ M.T, "observed class-mean Gram M Mᵀ")
    _heat(axes[1, 1], opt.means_gram, "UFM optimum class-mean Gram")
    fig.suptitle(f"K = {D.K}, d = {D.d}, λ_W = {D.lam_W:g}, λ_H = {D.lam_H:g}", fontsize=10)
    fig.tight_layout()
    paths = {"grams": os.path.join(out, "grams.png")}
    with atomic_path(paths["grams"], name="out") as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)
    names = list(D.checks)
    vals = [D.checks[k] if math.isfinite(D.checks[k]) else np.nan for k in names]
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(names) + 1.2))
    ax.barh(range(len(names)), [max(v, 1e-17) for v in vals], color="tab:blue")
    ax.axvline(D.rtol, color="tab:red", ls="--", label=f"rtol = {D.rtol:g}")
    ax.set_xscale("log")
    ax.set_yticks(range(len(names)), names, fontsize=8)
    ax.set_xlabel("deviation from the UFM optimum (0 at the optimum)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    paths["metrics"] = os.path.join(out, "metrics.png")
    with atomic_path(paths["metrics"], name="out") as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)
    return paths


def _fmt(v) -> str:
    if v is None:
        return "—"
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    return f"{float(v):.6g}"


def write_feature_report(D, out) -> str:
    """``report.md`` (result, conditions, metrics, distances, verdict, figures) and ``diagnosis.json``."""
    paths = plot_feature_diagnosis(D, out)
    write_json(os.path.join(out, "diagnosis.json"), D.to_dict(), name="out")
    a = D.applicability
    lines = [
        f"# Features against the {a.model} UFM optimum",
        "",
        f"K = {D.K} classes, N = {D.N} samples (n_k {int(D.counts.min())}–{int(D.counts.max())}), d = {D.d}, "
        f"loss {D.loss}, bias {'yes' if D.bias else 'no'}, λ_W = {D.lam_W:g}, λ_H = {D.lam_H:g}, "
        f"λ_b = {D.lam_b:g}.",
        "",
        f"**Verdict:** {D.verdict}",
        "",
        f"Result: {a.source}; " + ("its conditions hold." if a.applies else "it does not apply exactly:"),
        "",
    ]
    lines += [f"- {r}" for r in a.reasons] + [f"- note: {n}" for n in a.notes] + [""]
    lines += ["| metric | value |", "|---|---|"] + [f"| {k} | {_fmt(v)} |" for k, v in D.metrics.items()] + [""]
    lines += ["| distance to the optimum | value |", "|---|---|"]
    lines += [f"| {k} | {_fmt(v)} |" for k, v in D.distances.items()] + [""]
    lines += [f"![{k}]({os.path.basename(p)})" for k, p in paths.items()] + [""]
    path = os.path.join(out, "report.md")
    with atomic_path(path, name="out") as tmp:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
    return path
