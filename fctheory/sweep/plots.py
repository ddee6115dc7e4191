"""Phase diagrams from a sweep table (matplotlib, Agg backend; PNG or any format matplotlib writes).

* ``"tau"`` — τ of Theorem 1 over (λ, K) (log-log, colour), with the boundary λ₀(K) of
  :func:`fctheory.lambda_trivial` above which τ = 0 (the trivial solution); needs columns
  ``lam``, ``K``, ``value`` (target ``tau``) and ``n_c``, ``L``, ``n_w`` (or ``s_c``).
* ``"type3"`` — the type-III word norms r_β of Theorem 2 over the Zipf exponent: left, r_β against
  the exponent at the smallest λ (one line per frequency rank β); right, the constant c over
  (exponent, λ) with the boundary λ_max of (9) (points at or beyond it fail: no type-III solution);
  target ``predict_type3`` or ``solve_type3`` with a ``zipf`` axis.
* ``"collapse"`` — test accuracy and relative distance to the nearest collapse configuration against
  ``n_spl``, with and without LayerNorm (mean ± std over seeds): section 2 at small scale; target ``train``.
* ``"line"`` / ``"heatmap"`` — any output ``y`` against an input ``x`` (grouped by ``hue``), or over two
  inputs ``x``, ``y`` coloured by ``z``.
* ``"auto"`` — chosen from the table's target and columns.
"""

from __future__ import annotations

import math
import os

import numpy as np

from .._plot import pyplot
from .._validate import Anything, Choice, PathOut, fail, public
from ..tau import lambda_trivial
from ..type3 import lambda_max_type3

__all__ = ["plot", "KINDS"]

KINDS = ("auto", "tau", "type3", "collapse", "line", "heatmap")


def _plt():
    return pyplot("out", "plot")


def _ok(table):
    return table[table["status"] == "ok"] if "status" in table.columns else table


def _need(table, cols, kind):
    miss = [c for c in cols if c not in table.columns]
    if miss:
        fail("table", f"columns {sorted(table.columns)[:12]}...", f"the {kind!r} plot needs columns {miss}")


def _auto(table) -> str:
    cols = set(table.columns)
    if {"lam", "K", "value"} <= cols:
        return "tau"
    if "zipf" in cols and ({"r", "c"} & cols):
        return "type3"
    if {"n_spl", "final_test_acc"} <= cols:
        return "collapse"
    return "line"


def _first_value(table, col, default=None):
    if col in table.columns and len(table):
        return table[col].iloc[0]
    return default


def _plot_tau(table, ax_fig):

    fig, ax = ax_fig
    t = _ok(table)
    _need(t, ["lam", "K", "value"], "tau")
    piv = t.pivot_table(index="K", columns="lam", values="value", aggfunc="mean").sort_index().sort_index(axis=1)
    lam = piv.columns.to_numpy(float)
    K = piv.index.to_numpy(float)
    mesh = ax.pcolormesh(_edges(lam), _edges(K), piv.to_numpy(float), shading="flat", cmap="viridis")
    fig.colorbar(mesh, ax=ax, label="τ (Theorem 1)")
    n_c = int(_first_value(t, "n_c", 3))
    L = int(_first_value(t, "L", 1))
    n_w = _first_value(t, "n_w")
    if n_w is None or (isinstance(n_w, float) and math.isnan(n_w)):
        n_w = n_c * int(_first_value(t, "s_c", 1))
    Ks = np.unique(np.round(np.geomspace(max(K.min(), 1), max(K.max(), 1), 200)))  # λ₀ takes integer K
    lam0 = np.atleast_1d(lambda_trivial(n_c=n_c, n_w=int(n_w), L=L, K=Ks))
    ax.plot(lam0, Ks, "w--", lw=2, label="λ₀(K): τ = 0 beyond")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(_edges(lam)[0], _edges(lam)[-1])
    ax.set_ylim(_edges(K)[0], _edges(K)[-1])
    ax.set_xlabel("λ")
    ax.set_ylabel("K")
    ax.set_title(f"τ over (λ, K): n_c={n_c}, n_w={int(n_w)}, L={L}")
    ax.legend(loc="lower left")


def _edges(v):
    v = np.asarray(v, float)
    if v.size == 1:
        return np.array([v[0] / 1.5, v[0] * 1.5]) if v[0] > 0 else np.array([v[0] - 0.5, v[0] + 0.5])
    if np.all(v > 0):
        lv = np.log(v)
        mid = (lv[1:] + lv[:-1]) / 2
        return np.exp(np.concatenate([[lv[0] - (mid[0] - lv[0])], mid, [lv[-1] + (lv[-1] - mid[-1])]]))
    mid = (v[1:] + v[:-1]) / 2
    return np.concatenate([[v[0] - (mid[0] - v[0])], mid, [v[-1] + (v[-1] - mid[-1])]])


def _plot_type3(table, fig_axes):

    fig, (ax1, ax2) = fig_axes
    _need(table, ["zipf", "lam"], "type3")
    ok = _ok(table)
    lam_min = ok["lam"].min() if len(ok) else table["lam"].min()
    sub = ok[ok["lam"] == lam_min].sort_values("zipf")
    if len(sub) and "r" in sub.columns:
        R = np.array([np.asarray(r, float) for r in sub["r"]])
        a = sub["zipf"].to_numpy(float)
        cmap = _plt().get_cmap("plasma")
        for b in range(R.shape[1]):
            ax1.plot(
                a,
                R[:, b],
                color=cmap(b / max(R.shape[1] - 1, 1)),
                label=f"β = {b + 1}" if R.shape[1] <= 8 or b in (0, R.shape[1] - 1) else None,
            )
        ax1.legend(fontsize=8)
    ax1.set_xlabel("Zipf exponent a (μ_β ∝ β^−a)")
    ax1.set_ylabel("word norm r_β")
    ax1.set_title(f"type-III word norms, λ = {lam_min:.3g}")
    # right: c over (a, λ); failures (λ ≥ λ_max, no type-III solution) left blank
    zcol = "c" if "c" in table.columns else None
    a_all = np.sort(table["zipf"].unique().astype(float))
    l_all = np.sort(table["lam"].unique().astype(float))
    Zm = np.full((l_all.size, a_all.size), np.nan)
    if zcol is not None:
        for _, row in ok.iterrows():
            i = np.searchsorted(l_all, float(row["lam"]))
            j = np.searchsorted(a_all, float(row["zipf"]))
            Zm[i, j] = float(row[zcol])
    mesh = ax2.pcolormesh(_edges(a_all), _edges(l_all), np.ma.masked_invalid(Zm), shading="flat", cmap="viridis")
    fig.colorbar(mesh, ax=ax2, label="c = ‖u_{k,ℓ}‖ (blank: no type-III solution)")
    n_c = int(_first_value(table, "n_c", 3))
    L = int(_first_value(table, "L", 1))
    s_c = int(_first_value(table, "s_c", 2))
    aa = np.linspace(a_all.min(), a_all.max(), 100)
    lm = []
    for a in aa:
        w = np.arange(1, s_c + 1, dtype=float) ** (-a)
        lm.append(float(lambda_max_type3(mu=w / w.sum(), n_c=n_c, L=L)))
    ax2.plot(aa, lm, "r-", lw=2, label="λ_max of (9)")
    ax2.set_yscale("log")
    ax2.set_ylim(_edges(l_all)[0], _edges(l_all)[-1])
    ax2.set_xlabel("Zipf exponent a")
    ax2.set_ylabel("λ")
    ax2.set_title("type-III solutions exist below λ_max")
    ax2.legend(loc="upper right")


def _plot_collapse(table, fig_axes):
    fig, (ax1, ax2) = fig_axes
    ok = _ok(table)
    _need(ok, ["n_spl", "final_test_acc"], "collapse")
    ln = ok["layernorm"] if "layernorm" in ok.columns else np.zeros(len(ok), bool)
    for flag, name, style in ((False, "h (no LayerNorm)", "o-"), (True, "h* (LayerNorm)", "s--")):
        sub = ok[np.asarray(ln, bool) == flag]
        if not len(sub):
            continue
        for ax, col in ((ax1, "final_test_acc"), (ax2, "collapse_distance")):
            if col not in sub.columns:
                continue
            g = sub.groupby("n_spl")[col]
            m, s = g.mean(), g.std().fillna(0.0)
            ax.errorbar(
                m.index.to_numpy(float), m.to_numpy(float), yerr=s.to_numpy(float), fmt=style, capsize=3, label=name
            )
    from matplotlib.ticker import NullFormatter  # noqa: PLC0415

    xs = np.sort(ok["n_spl"].unique().astype(float))
    for ax in (ax1, ax2):
        ax.set_xscale("log")
        ax.set_xticks(xs)
        ax.set_xticklabels([f"{v:g}" for v in xs])
        ax.xaxis.set_minor_formatter(NullFormatter())
    ax1.set_xlabel("n_spl (training sentences per class)")
    ax2.set_xlabel("n_spl (training sentences per class)")
    ax1.set_ylabel("test accuracy")
    ax2.set_ylabel("relative distance to collapse")
    ax1.set_title("generalisation")
    ax2.set_title("distance to type I/III (h) or type II (h*)")
    ax1.legend()
    ax2.legend()


@public(
    table=Anything("a pandas DataFrame from fctheory.sweep / read_table"),
    path=PathOut(),
    kind=Choice(*KINDS),
    x=Anything("a column name or None"),
    y=Anything("a column name or None"),
    hue=Anything("a column name or None"),
    z=Anything("a column name or None"),
    legacy_positional=("kind",),
)
def plot(table, path, *, kind="auto", x=None, y=None, hue=None, z=None):
    """Draw a phase diagram (or a generic line / heat map) of a sweep table into ``path``.

    Parameters
    ----------
    table : pandas.DataFrame
        A table from :func:`fctheory.sweep` or :func:`fctheory.sweep.read_table`.
    path : str
        Output file (PNG, PDF, SVG …).
    kind : {"auto", "tau", "type3", "collapse", "line", "heatmap"}
        See the module docstring.
    x, y, hue, z : str or None
        Columns of the generic ``"line"`` (y against x, one line per hue) and ``"heatmap"``
        (z over x, y) plots.

    Returns
    -------
    str
        ``path``.
    """
    pd_ok = hasattr(table, "columns") and hasattr(table, "iterrows")
    if not pd_ok:
        fail("table", table, "must be a pandas DataFrame (the result of fctheory.sweep)")
    if len(table) == 0:
        fail("table", "an empty table", "has no rows to plot")
    if kind == "auto":
        kind = _auto(table)
    plt = _plt()
    try:
        if kind == "tau":
            fig, ax = plt.subplots(figsize=(7, 5))
            _plot_tau(table, (fig, ax))
        elif kind in ("type3", "collapse"):
            fig, axes = plt.subplots(1, 2, figsize=(12, 4.8))
            (_plot_type3 if kind == "type3" else _plot_collapse)(table, (fig, axes))
        else:
            fig, ax = plt.subplots(figsize=(7, 5))
            ok = _ok(table)
            inputs = [
                c for c in ok.columns if c not in ("point_id", "status", "error", "wall_time", "batch_size", "versions")
            ]
            if kind == "line":
                xx = x or next((c for c in inputs if ok[c].nunique() > 1), inputs[0])
                yy = y or ("value" if "value" in ok.columns else None)
                _need(ok, [xx] + ([yy] if yy else []), "line")
                if yy is None:
                    fail("y", None, "name the output column to plot")
                groups = ok.groupby(hue) if hue else [(None, ok)]
                for key, sub in groups:
                    g = sub.groupby(xx)[yy].mean()
                    ax.plot(g.index.to_numpy(float), g.to_numpy(float), "o-", label=f"{hue}={key}" if hue else None)
                ax.set_xlabel(xx)
                ax.set_ylabel(yy)
                if hue:
                    ax.legend()
            else:
                _need(ok, [c for c in (x, y, z) if c], "heatmap")
                if not (x and y and z):
                    fail("z", z, "the heatmap needs x, y and z column names")
                piv = ok.pivot_table(index=y, columns=x, values=z, aggfunc="mean").sort_index().sort_index(axis=1)
                mesh = ax.pcolormesh(
                    _edges(piv.columns.to_numpy(float)),
                    _edges(piv.index.to_numpy(float)),
                    piv.to_numpy(float),
                    shading="flat",
                )
                fig.colorbar(mesh, ax=ax, label=z)
                ax.set_xlabel(x)
                ax.set_ylabel(y)
        fig.tight_layout()
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        fig.savefig(path, dpi=110)
    finally:
        plt.close("all")
    return path
