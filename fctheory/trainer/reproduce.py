"""Run the presets and write the reproduction report (paper | authors' notebook | theory | ours).

Reference numbers are from the paper (arXiv v1) and from the outputs printed in the authors'
notebooks (derivations A.7 and C). Runs are resumable: each preset checkpoints to
``OUT/<name>.ckpt.npz`` and a finished checkpoint is reused as is (so a report can be rebuilt from
runs made earlier, e.g. in the background, without training again).
"""

from __future__ import annotations

import math
import os
import platform
import time

import numpy as np

from .._budget import budget
from .._files import atomic_path, write_json
from .._validate import Anything, Bool, Choice, Instance, Int, PathIn, PathOut, fail, public
from .core import TrainRun, open_checkpoint, train
from .data import CONFIG_KINDS, jsonable, sample_data
from .figures import save_figures
from .measure import measure
from .presets import PRESETS, get_preset

__all__ = ["PAPER", "NOTEBOOK", "run_preset", "load_run", "acceptance", "write_report", "reproduce"]

# numbers printed in the paper (v1)
PAPER = {
    "fig3": {
        "test_acc": 1.0,
        "w_norm": "1.41 ± 0.13 (predicted 1.42214)",
        "pca_W": (34.9, 34.7, 0.001),
        "pca_U": (34.9, 34.6, 0.0003),
    },
    "fig4a": {"test_acc": 1.0},
    "fig4b": {"test_acc": 0.45},
    "fig4c": {"test_acc": 1.0},
    "k50": {"w_norm": "0.61 ± 0.06 (predicted 0.61602)"},
}
# last epoch printed in the authors' notebooks (HEAD)
NOTEBOOK = {
    "fig3": {
        "loss": 0.5131,
        "train_acc": 1.0,
        "test_acc": 1.0,
        "pca_W": (35.05, 34.46, 0.1841),
        "pca_U": (35.07, 34.48, 0.1842),
    },
    "fig4a": {
        "loss": 0.3809,
        "train_acc": 1.0,
        "test_acc": 0.999,
        "pca_W": (24.24, 24.20, 3.366e-4),
        "pca_U": (24.34, 24.30, 2.350e-4),
    },
    "fig4b": {
        "loss": 0.2003,
        "train_acc": 1.0,
        "test_acc": 0.437,
        "pca_W": (19.14, 18.85, 7.842),
        "pca_U": (19.19, 18.89, 7.875),
        "note": "test accuracy peaks at 65.5% (epoch 400)",
    },
    "fig4c": {
        "loss": 0.01675,
        "train_acc": 1.0,
        "test_acc": 1.0,
        "pca_W": (238.7, 237.5, 5.228),
        "pca_U": (8.387, 8.377, 0.1145),
    },
    "k50": {},
}


def _ckpt_path(out, name, quick):
    return os.path.join(out, f"{name}{'-quick' if quick else ''}.ckpt.npz")


@public(
    name=Choice(*PRESETS),
    quick=Bool(),
    backend=CONFIG_KINDS["backend"],
    dtype=CONFIG_KINDS["dtype"],
    out=PathOut(dir=True).or_none(),
    progress=Bool(),
    epochs=Int(min=0, max=10**12).or_none(),
    seed=Int(min=0, max=2**63 - 1).or_none(),
    figures=Bool(),
)
def run_preset(
    name: str,
    *,
    quick: bool = False,
    backend: str = "numba",
    dtype: str = "float32",
    out=None,
    progress: bool = False,
    epochs: int | None = None,
    seed: int | None = None,
    figures: bool = True,
) -> TrainRun:
    """Train preset ``name`` (resuming from ``OUT/<name>.ckpt.npz`` if present) and measure it.

    With ``out`` the checkpoint, ``<name>.json`` (summary) and the figures are written there
    (atomically; the folder is checked writable before training). The presets are the paper's
    long, checkpointed runs: the time budget (:func:`fctheory.get_budget`) does not apply to
    them (the memory budget does).
    """
    p = get_preset(name, quick=quick)
    kw = p.train_kwargs()
    if epochs is not None:
        kw["epochs"] = epochs
    if seed is not None:
        kw["seed"] = seed
    task = p.task() if seed is None else type(p)(**{**p.__dict__, "seed": seed}).task()
    ck = None
    resume = None
    if out is not None:
        os.makedirs(out, exist_ok=True)
        ck = _ckpt_path(out, name, quick)
        if os.path.exists(ck):
            resume = ck
    with budget(max_seconds=math.inf):  # hours-long by design, checkpointed and resumable
        run = train(
            task,
            n_spl=p.n_spl,
            d=p.d,
            backend=backend,
            dtype=dtype,
            checkpoint=ck,
            checkpoint_every=max(1, kw["epochs"] // 20) if ck else None,
            resume=resume,
            progress=progress,
            keep_data=True,
            **kw,
        )
    if out is not None:
        _write_outputs(run, name, quick, out, figures)
    return run


def _write_outputs(run, name, quick, out, figures):
    tag = f"{name}{'-quick' if quick else ''}"
    summ = run.summary()
    if figures:
        summ["figures"] = {k: os.path.basename(v) for k, v in save_figures(run, out, prefix=f"{tag}_").items()}
    summ["acceptance"] = acceptance(name, run) if not quick else quick_acceptance(run, name=name)
    write_json(os.path.join(out, f"{tag}.json"), jsonable(summ), name="out")


@public(path=PathIn(), with_measurements=Bool())
def load_run(path, *, with_measurements: bool = True) -> TrainRun:
    """Rebuild a :class:`TrainRun` (weights, history, data, measurements) from a checkpoint (verified first)."""
    ck = open_checkpoint(path, "path")
    cfg, task = ck["config"], ck["task"]
    data = sample_data(task, cfg.n_spl, cfg.seed, cfg.n_test)
    run = TrainRun(
        task,
        cfg,
        np.ascontiguousarray(ck["E"].T),
        ck["U"],
        ck["history"],
        ck["epochs_done"],
        ck["wall_time"],
        None,
        data,
    )
    if with_measurements:
        run.measurements = measure(
            task, run.W, run.U, layernorm=cfg.layernorm, eps=cfg.eps, data=data, lam_W=cfg.lam_W, lam_U=cfg.lam_U
        )
    return run


@public(
    run=Anything("a TrainRun (or an object with its attributes)"),
    name=Choice(*PRESETS).or_none(),
    legacy_positional=("name",),
)
def quick_acceptance(run, *, name: str | None = None) -> dict:
    """The --quick criterion: 100% training accuracy (on the whole training set) at the end."""
    acc = run.measurements.train_acc if run.measurements is not None else run.history["train_acc"][-1]
    out = {"train accuracy = 100%": bool(acc == 1.0)}
    target = get_preset(name, quick=True).epochs if name is not None else run.config.epochs
    if run.epochs_done < target:
        out["training completed all epochs"] = False
    return out


@public(name=Choice(*PRESETS), run=Anything("a TrainRun (or an object with .measurements, .epochs_done)"))
def acceptance(name: str, run) -> dict:
    """The acceptance criteria for the full preset ``name`` → {criterion: bool}."""
    m = getattr(run, "measurements", None)
    if m is None:
        fail("run", run, "has no measurements (train with measure=True or use load_run)")
    te = m.test_acc
    out = {}
    if name == "fig3":
        s = math.sqrt(2426.98039 / 2)  # √(τ/2) = 34.835, τ of Theorem 1 (derivations C)
        out["test accuracy = 100%"] = te == 1.0
        out["mean ‖w‖ within 0.05 of 1.42214"] = abs(m.W_norm_mean - 1.42214) <= 0.05
        out["σ₁, σ₂ of W within 3% of √(τ/2) = 34.835"] = bool(all(abs(x / s - 1) <= 0.03 for x in m.pca_W[:2]))
        out["σ₃ of W < 1"] = bool(m.pca_W[2] < 1)
    elif name == "k50":
        out["mean ‖w‖ within 0.03 of 0.61602"] = abs(m.W_norm_mean - 0.61602) <= 0.03
    elif name == "fig4b":
        out["final test accuracy ≤ 70%"] = te <= 0.70
    elif name == "fig4c":
        out["test accuracy ≥ 99.5%"] = te >= 0.995
        out["mean ‖u‖ within 5% of τ*/√(KL) = 0.09755"] = abs(m.U_norm_mean / 0.0975470857 - 1) <= 0.05
    elif name == "fig4a":
        out["test accuracy ≥ 99.5%"] = te >= 0.995
    out["training completed all epochs"] = run.epochs_done >= get_preset(name).epochs
    return {k: bool(v) for k, v in out.items()}


def format_value(v, digits=5):
    if v is None:
        return "—"
    if isinstance(v, str):
        return v
    if isinstance(v, (tuple, list, np.ndarray)):
        return ", ".join(_fmt(x, 4) for x in v)
    v = float(v)
    if not math.isfinite(v):
        return "—"
    return f"{v:.{digits}g}"


_fmt = format_value  # the short name the report tables use (and the CLI imports)


def _pct(v):
    return "—" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{100 * v:.2f}%"


def preset_section(name, run, quick, command, figures=None) -> str:
    p = get_preset(name, quick=quick)
    m = run.measurements
    pred = m.predicted
    # the paper's and the notebooks' numbers are for the full-size setting only
    paper, nb = ({}, {}) if quick else (PAPER.get(name, {}), NOTEBOOK.get(name, {}))
    lines = [f"### {name}{' (quick)' if quick else ''}: {p.description}", ""]
    lines.append(f"- command: `{command}`")
    c = run.config
    lines.append(
        f"- backend {c.backend}, {c.dtype}; {run.epochs_done}/{p.epochs} epochs of "
        f"{math.ceil(run.task.K * c.n_spl / c.batch)} steps; wall time {run.wall_time:.0f} s"
    )
    lines.append(
        f"- task: n_c={run.task.n_c}, s_c={run.task.s_c}, L={run.task.L}, K={run.task.K}, d={c.d}, "
        f"n_spl={c.n_spl}, {'uniform' if run.task.is_uniform else 'Zipf'} words, "
        f"{'h* (LayerNorm, eps=' + str(c.eps) + ')' if c.layernorm else 'h'}, λ_W={c.lam_W}, λ_U={c.lam_U}, "
        f"lr={c.lr}, batch={c.batch}, seed={c.seed}"
    )
    if pred:
        source = pred.get("theorem") or pred.get("provenance")
        lines.append(f"- theory: {source}" + (f", τ = {pred['tau']:.6g}" if "tau" in pred else ""))
    lines += ["", "| quantity | paper | authors' notebook | theory | ours |", "|---|---|---|---|---|"]
    lines.append(
        f"| test accuracy | {_pct(paper.get('test_acc'))} | {_pct(nb.get('test_acc'))} | — | {_pct(m.test_acc)} |"
    )
    lines.append(f"| train accuracy | — | {_pct(nb.get('train_acc'))} | — | {_pct(m.train_acc)} |")
    lines.append(
        f"| final epoch loss (mean minibatch CE) | — | {_fmt(nb.get('loss'))} | — | "
        f"{_fmt(run.history['loss'][-1] if run.epochs_done else None)} |"
    )
    lines.append(f"| unregularised train CE | — | — | {_fmt(pred.get('ce'))} | {_fmt(m.train_ce)} |")
    wlabel = "‖φ(w)‖" if c.layernorm else "‖w‖"
    wmean = m.phiW_norm_mean if c.layernorm else m.W_norm_mean
    lines.append(
        f"| mean {wlabel} ± std | {paper.get('w_norm', '—')} | — | {_fmt(pred.get('w_norm'))} | "
        f"{_fmt(wmean)} ± {_fmt(m.W_norm_std if not c.layernorm else None, 3)} |"
    )
    if c.layernorm:
        lines.append(f"| mean ‖w‖ (raw) ± std | — | — | — | {_fmt(m.W_norm_mean)} ± {_fmt(m.W_norm_std, 3)} |")
    lines.append(
        f"| mean ‖u_kℓ‖ ± std | — | — | {_fmt(pred.get('u_norm'))} | {_fmt(m.U_norm_mean)} ± {_fmt(m.U_norm_std, 3)} |"
    )
    what = "φ(W)" if c.layernorm else "W"
    lines.append(
        f"| PCA σ₁..σ₃ of {what} | {_fmt(paper.get('pca_W'))} | {_fmt(nb.get('pca_W'))} | "
        f"{_fmt(pred.get('pca_W'))} | {_fmt(m.pca_W[:3])} |"
    )
    lines.append(
        f"| PCA σ₁..σ₃ of u_kℓ | {_fmt(paper.get('pca_U'))} | {_fmt(nb.get('pca_U'))} | "
        f"{_fmt(pred.get('pca_U'))} | {_fmt(m.pca_U[:3])} |"
    )
    lines.append(
        f"| cos within / across concepts (W) | — | — | {_fmt(pred.get('cos_within'))} / "
        f"{_fmt(pred.get('cos_across'))} | {_fmt(m.cos_W_within, 4)} / {_fmt(m.cos_W_across, 4)} |"
    )
    lines.append(
        f"| cos within / across concepts (U) | — | — | {_fmt(pred.get('cos_within'))} / "
        f"{_fmt(pred.get('cos_across'))} | {_fmt(m.cos_U_within, 4)} / {_fmt(m.cos_U_across, 4)} |"
    )
    for k, v in m.distances.items():
        lines.append(f"| relative distance to nearest type-{k} configuration | — | — | 0 | {_fmt(v, 4)} |")
    if nb.get("note"):
        lines.append(f"\nNotebook: {nb['note']}.")
    h = run.history
    ev = ~np.isnan(h["test_acc"])
    if ev.any():
        lines += [
            "",
            "Test accuracy during training: "
            + ", ".join(f"{int(e)}: {100 * a:.1f}%" for e, a in zip(h["epoch"][ev], h["test_acc"][ev])),
        ]
    acc = quick_acceptance(run, name=name) if quick else acceptance(name, run)
    lines += ["", "Acceptance: " + "; ".join(f"{k}: **{'met' if v else 'NOT met'}**" for k, v in acc.items())]
    if figures:
        lines += [""] + [f"![{name} {k}]({os.path.basename(v)})" for k, v in figures.items()]
    return "\n".join(lines) + "\n"


@public(
    path=PathOut(),
    sections=Anything("list of markdown strings"),
    quick=Bool(),
    extra=Instance(str),
    legacy_positional=("quick", "extra"),
)
def write_report(path, sections, *, quick, extra: str = "") -> str:
    """Write the markdown report (atomically) from the preset sections."""
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    head = [
        f"# Reproduction of the Feature Collapse experiments{' (quick versions)' if quick else ''}",
        "",
        f"Generated by `fctheory reproduce{' --quick' if quick else ''}` on {when}, "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores.",
        "",
    ]
    text = "\n".join(head) + extra + "\n" + "\n".join(str(x) for x in sections)
    with atomic_path(path) as tmp:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
    return path


@public(
    out=PathOut(dir=True),
    quick=Bool(),
    backend=CONFIG_KINDS["backend"],
    dtype=CONFIG_KINDS["dtype"],
    presets=Anything("iterable of preset names (checked)"),
    progress=Bool(),
    train_missing=Bool(),
)
def reproduce(
    out,
    *,
    quick: bool = False,
    backend: str = "numba",
    dtype: str = "float32",
    presets=PRESETS,
    progress: bool = False,
    train_missing: bool = True,
) -> dict:
    """Run (or reuse the finished checkpoints of) every preset and write ``OUT/report.md``.

    With ``train_missing=False`` nothing is trained: the report is built from the checkpoints found in
    ``out`` (partial ones are reported as such; presets without a checkpoint are listed as not run).

    Returns {"report": path, "runs": {name: TrainRun}, "acceptance": {name: {criterion: bool}}}.
    """
    try:
        presets = list(presets) if not isinstance(presets, str) else None
    except TypeError:
        presets = None
    if not presets or not all(isinstance(n, str) and n in PRESETS for n in presets):
        fail("presets", presets, f"must be a non-empty list of preset names from {list(PRESETS)}")
    os.makedirs(out, exist_ok=True)
    runs, sections, acc = {}, [], {}
    for name in presets:
        if not train_missing:
            ck = _ckpt_path(out, name, quick)
            if not os.path.exists(ck):
                sections.append(f"### {name}{' (quick)' if quick else ''}\n\nNot run (no checkpoint in `{out}`).\n")
                continue
            run = load_run(ck)
            _write_outputs(run, name, quick, out, figures=False)
        else:
            run = run_preset(name, quick=quick, backend=backend, dtype=dtype, out=out, progress=progress, figures=False)
        figs = save_figures(run, out, prefix=f"{name}{'-quick' if quick else ''}_")
        c = run.config
        cmd = (
            f"fctheory train --preset {name}{' --quick' if quick else ''} --backend {c.backend} --dtype {c.dtype} "
            f"--out {out}"
        )
        sections.append(preset_section(name, run, quick, cmd, figs))
        runs[name] = run
        acc[name] = quick_acceptance(run, name=name) if quick else acceptance(name, run)
    report = write_report(os.path.join(out, "report.md"), sections, quick=quick)
    return {"report": report, "runs": runs, "acceptance": acc}
