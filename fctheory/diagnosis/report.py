"""Figures (PNG, matplotlib Agg) and the markdown report of a :class:`~fctheory.diagnosis.Diagnosis`.

* ``pca_W.png`` — PCA components 1–2 of the word embeddings (φ(W) for h*) coloured by concept, as
  figures 3–4 of the paper, with the predicted radius (type I/II: every word at ‖w‖ = c);
* ``pca_U.png`` — the same for all u_{k,ℓ}, coloured by the concept z_{k,ℓ};
* ``norm_by_rank.png`` — ‖w_(α,β)‖ (‖φ(w)‖ for h*) against the frequency rank β with the type-I
  constant or the type-III curve r_β;
* ``u_norms.png`` — histogram of ‖u_{k,ℓ}‖ with the predicted value;
* ``spectra.png`` — PCA singular values of W (φ(W)) and of the u_{k,ℓ}, observed and predicted.
"""

from __future__ import annotations

import os

import numpy as np

from .._files import atomic_path, write_json
from .._plot import pyplot
from ..metrics.geometry import pca2
from ..network import U_hat, phi

__all__ = ["plot_diagnosis", "write_report"]

_COLOURS = ["darkblue", "darkred", "darkgreen", "darkorange", "purple", "teal", "olive", "brown"]
_DPI = 110


def _plt():
    return pyplot("out", "figures")


def _save(fig, path):
    plt = _plt()
    with atomic_path(path, name="out") as tmp:
        fig.savefig(tmp, dpi=_DPI, format="png")
    plt.close(fig)
    return path


def scatter_figure(pts, labels, n_c, title, radius=None, radius_label=""):
    """The PCA scatter (one colour per concept, the predicted radius dashed) as a matplotlib figure.

    The legend sits outside the axes, to the right: at collapse the points lie on a circle around the
    origin in every direction, so no corner of the axes is reliably free of data.
    """
    fig, ax = _plt().subplots(figsize=(6.6, 5))
    for a in range(n_c):
        sel = labels == a
        ax.scatter(pts[sel, 0], pts[sel, 1], s=6, color=_COLOURS[a % len(_COLOURS)], label=f"concept {a}")
    if radius is not None and radius > 0:
        t = np.linspace(0, 2 * np.pi, 200)
        ax.plot(radius * np.cos(t), radius * np.sin(t), "k--", lw=0.8, label=radius_label)
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel("PCA component 1")
    ax.set_ylabel("PCA component 2")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, markerscale=2, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    fig.subplots_adjust(left=0.12, right=0.72, bottom=0.1, top=0.92)
    return fig


def _scatter(path, *args, **kw):
    return _save(scatter_figure(*args, **kw), path)


def _pca_figures(diag, out, th) -> dict:
    """pca_W.png and pca_U.png: PCA scatter by concept, with the predicted radius (types I and II)."""
    task, p, ln = diag.task, diag.theory.predicted, diag.network == "h*"
    V = phi(diag.W, eps=diag.eps) if ln else diag.W
    what = "φ(W)" if ln else "W"
    pts, s = pca2(V.T)
    rad_w = p.get("w_norm") if diag.theory.configuration in ("I", "II") else None
    paths = {
        "pca_W": _scatter(
            os.path.join(out, "pca_W.png"),
            pts,
            task.word_concept,
            task.n_c,
            f"PCA of {what} ({task.n_w} words): σ = " + ", ".join(f"{v:.4g}" for v in s[:3]),
            rad_w,
            f"{th}: ‖{'φ(w)' if ln else 'w'}‖ = {rad_w:.4g}" if rad_w else "",
        )
    }
    pts, s = pca2(U_hat(diag.U, L=task.L).T)
    rad_u = p.get("u_norm")
    paths["pca_U"] = _scatter(
        os.path.join(out, "pca_U.png"),
        pts,
        task.Z.ravel(),
        task.n_c,
        f"PCA of u_kℓ ({task.K * task.L} vectors): σ = " + ", ".join(f"{v:.4g}" for v in s[:3]),
        rad_u,
        f"{th}: ‖u‖ = {rad_u:.4g}" if rad_u else "",
    )
    return paths


def _norm_by_rank_figure(diag, path, th):
    """Word norms (‖φ(w)‖ for h*) against frequency rank, with the type-I constant or type-III curve."""
    task, p, ln = diag.task, diag.theory.predicted, diag.network == "h*"
    fig, ax = _plt().subplots(figsize=(6, 4))
    norms = (diag.phiW_norms if ln else diag.W_norms).reshape(task.n_c, task.s_c)
    ranks = np.arange(1, task.s_c + 1)
    for a in range(task.n_c):
        ax.plot(ranks, norms[a], "o", ms=3, color=_COLOURS[a % len(_COLOURS)], label=f"concept {a}")
    curve = p.get("w_norm_by_rank")
    if curve is not None:
        lab = {"III": "type III: r_β (Thm 2)", "I": "type I: c (Thm 1)", "II": "type II: √d (Thm 3)"}
        ax.plot(ranks, curve, "k-", lw=1.4, label=lab[diag.theory.configuration])
    if task.s_c > 10:  # long tails (Zipf) read best on a log axis; a few ranks on a linear one
        ax.set_xscale("log")
    elif task.s_c > 1:
        ax.set_xticks(ranks)
    ax.set_xlabel("frequency rank β (1 = most frequent)")
    ax.set_ylabel("‖φ(w)‖" if ln else "‖w‖")
    ax.set_title(f"word norms against frequency rank ({th})", fontsize=9)
    ax.legend(fontsize=7)
    fig.subplots_adjust(left=0.12, right=0.97, bottom=0.13, top=0.92)
    return _save(fig, path)


def _u_norms_figure(diag, path, th):
    """Histogram of ‖u_kℓ‖ with the predicted value."""
    fig, ax = _plt().subplots(figsize=(6, 4))
    un = diag.U_norms.ravel()
    rad_u = diag.theory.predicted.get("u_norm")
    lo, hi = float(un.min()), float(un.max())
    if hi - lo <= 1e-9 * max(abs(hi), 1e-300):  # collapsed norms: a visible bar around the common value
        w = max(abs(hi), 1e-12) * 0.01
        lo, hi = lo - w, hi + w
    ax.hist(un, bins=min(60, max(10, un.size // 20)), range=(lo, hi), color="grey")
    if rad_u:
        ax.axvline(rad_u, color="k", ls="--", label=f"{th}: {rad_u:.4g}")
        ax.legend(fontsize=7)
    ax.set_xlabel("‖u_kℓ‖")
    ax.set_ylabel("count")
    ax.set_title(f"‖u_kℓ‖: mean {un.mean():.4g}, std {un.std():.3g}", fontsize=9)
    fig.subplots_adjust(left=0.12, right=0.97, bottom=0.13, top=0.92)
    return _save(fig, path)


def _spectra_figure(diag, path, th):
    """PCA singular values of W (φ(W)) and of the u_kℓ, observed and predicted."""
    p = diag.theory.predicted
    what = "φ(W)" if diag.network == "h*" else "W"
    fig, axes = _plt().subplots(1, 2, figsize=(9, 3.8))
    for ax, obs, key, name in ((axes[0], diag.pca_W, "pca_W", what), (axes[1], diag.pca_U, "pca_U", "u_kℓ")):
        idx = np.arange(1, len(obs) + 1)
        # values 16 decades below the largest are zero to double precision: drawn on that floor (a log axis
        # down to 1e-300 would carry ~300 decades of ticks and take most of a second to draw)
        floor = max(float(np.max(obs, initial=0.0)), 1e-300) * 1e-16
        ax.semilogy(idx, np.maximum(obs, floor), "o-", label="observed")
        pv = p.get(key)
        if pv is not None:
            ax.semilogy(np.arange(1, len(pv) + 1), pv, "kx", ms=9, mew=2, label=f"{th} (others 0)")
        ax.set_xlabel("component")
        ax.set_ylabel("singular value")
        ax.set_title(f"PCA spectrum of {name}", fontsize=9)
        ax.legend(fontsize=7)
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.14, top=0.9, wspace=0.3)
    return _save(fig, path)


def plot_diagnosis(diag, out) -> dict:
    """Write the five figures of ``diag`` into folder ``out``; returns {name: path}."""
    os.makedirs(out, exist_ok=True)
    th = diag.theory.theorem or "no theorem"
    paths = _pca_figures(diag, out, th)
    paths["norm_by_rank"] = _norm_by_rank_figure(diag, os.path.join(out, "norm_by_rank.png"), th)
    paths["u_norms"] = _u_norms_figure(diag, os.path.join(out, "u_norms.png"), th)
    paths["spectra"] = _spectra_figure(diag, os.path.join(out, "spectra.png"), th)
    return paths


def _fmt(v):
    if v is None:
        return "—"
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    v = float(v)
    if not np.isfinite(v):
        return "—"
    if v == 0:
        return "0"
    return f"{v:.6g}" if 1e-4 <= abs(v) < 1e7 else f"{v:.4e}"


def _setting_section(diag) -> list:
    t = diag.task
    law = "uniform" if t.is_uniform else "non-uniform (first μ = " + ", ".join(f"{v:.4g}" for v in t.mu[:3]) + ", …)"
    net = f"LayerNorm φ, eps = {diag.eps:g}" if diag.network == "h*" else "no LayerNorm"
    return [
        "# Diagnosis: trained network against the theory of *Feature Collapse*",
        "",
        f"**Verdict:** {diag.verdict}",
        "",
        "## Setting",
        "",
        "| | |",
        "|---|---|",
        f"| network | {diag.network} ({net}) |",
        f"| task | n_c = {t.n_c}, s_c = {t.s_c} (n_w = {t.n_w}), L = {t.L}, K = {t.K}"
        f"{' = n_c^L (all latent variables)' if t.is_full else ' < n_c^L = ' + str(t.n_latent)} |",
        f"| word frequencies | {law} |",
        f"| embedding dimension d | {diag.d} |",
        f"| weight decays | λ_W = {diag.lam_W:g}, λ_U = {diag.lam_U:g} |",
        "",
    ]


def _risk_section(diag) -> list:
    t = diag.task
    lines = ["## True risk", ""]
    if diag.method == "exact":
        lines += [
            f"Exact, by enumerating all K·s_c^L = {t.K}·{t.s_c}^{t.L} sentences (estimated cost "
            f"{_fmt(diag.exact_cost.get('seconds'))} s).",
            "",
        ]
    else:
        ec = diag.exact_cost
        cost = f"{_fmt(ec['seconds'])} s" if ec.get("seconds") is not None else f"about 10^{ec['log10_seconds']:.1f} s"
        lines += [
            f"Monte Carlo: {diag.n_samples} sentences per class (all {t.K} classes), unbiased; "
            f"{diag.confidence:.0%} normal interval. The exact enumeration would cost {cost} "
            f"(10^{ec['log10_pairs']:.1f} sentence-class pairs).",
            "",
        ]
    lines += [
        "| quantity | value |",
        "|---|---|",
        f"| R | {_fmt(diag.R)} |",
        f"| R0 (unregularised) | {_fmt(diag.R0)} |",
        f"| penalty | {_fmt(diag.penalty)} |",
    ]
    if diag.R_ci is not None:
        lines += [
            f"| {diag.confidence:.0%} interval for R | [{_fmt(diag.R_ci[0])}, {_fmt(diag.R_ci[1])}] |",
            f"| standard error | {_fmt(diag.R_stderr)} |",
        ]
    return lines + [
        f"| ‖∇R‖_F | {_fmt(diag.grad_norm)} |",
        f"| ‖∇R‖/(‖∇R0‖ + ‖∇penalty‖) | {_fmt(diag.grad_rel)} (0 at a critical point) |",
        f"| critical point (≤ {diag.rtol:g}) | {_fmt(diag.critical)} |",
        "",
    ]


def _theory_section(th) -> list:
    lines = ["## Theory", ""]
    if th.theorem:
        lines += [f"**{th.theorem}** — {th.statement}. Hypotheses all met: **{_fmt(th.applies)}**.", ""]
    else:
        lines += ["**No theorem gives a prediction for this setting.**", ""]
    lines += [f"- does not apply exactly: {r}" for r in th.reasons]
    lines += [f"- note: {n}" for n in th.notes]
    A, B = th.assumption_A, th.assumption_B
    return lines + [
        "",
        f"- Assumption A (35): {_fmt(A.get('holds'))} — {A.get('reason')}"
        + (f" ({A['n_violations']} violated identities)" if A.get("n_violations") else ""),
        f"- Assumption B (44): {_fmt(B.get('holds'))} — {B.get('reason')}",
        "",
    ]


def _comparison_section(diag) -> list:
    lines = [
        "## Observed against predicted",
        "",
        "| quantity | observed | theory | relative difference |",
        "|---|---|---|---|",
    ]
    for q, o, p in diag.comparison():
        rel = None
        if p is not None and o is not None:
            rel = (o - p) / abs(p) if p != 0 else o - p
        lines.append(f"| {q} | {_fmt(o)} | {_fmt(p)} | {_fmt(rel)} |")
    lines += [
        "",
        "Distances are relative Frobenius distances to the nearest configuration "
        "(0 = exactly collapsed; `fctheory.metrics.collapse`).",
    ]
    return lines + [f"- type {k}: {note}" for k, note in diag.distance_notes.items()]


def write_report(diag, out) -> str:
    """Write ``report.md``, ``diagnosis.json`` and the figures into folder ``out``; returns the report path."""
    os.makedirs(out, exist_ok=True)
    figs = plot_diagnosis(diag, out)
    write_json(os.path.join(out, "diagnosis.json"), diag.to_dict(), name="out")
    lines = _setting_section(diag) + _risk_section(diag) + _theory_section(diag.theory) + _comparison_section(diag)
    lines += ["", "## Figures", ""]
    captions = {
        "pca_W": "PCA of the word embeddings" + (" after φ" if diag.network == "h*" else ""),
        "pca_U": "PCA of the classifier vectors u_kℓ",
        "norm_by_rank": "word norms against frequency rank",
        "u_norms": "distribution of ‖u_kℓ‖",
        "spectra": "PCA spectra, observed and predicted",
    }
    for k, path in figs.items():
        lines += [f"![{captions[k]}]({os.path.basename(path)})", "", f"*{captions[k]}*", ""]
    path = os.path.join(out, "report.md")
    with atomic_path(path, name="out") as tmp:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
    return path
