"""Trained networks against the certified optimum of their own training objective, setting by setting.

``python -m proofs_check.training_sets --runs DIR --out docs/training-sets`` writes ``docs/training-sets.md`` and
``docs/training-sets/summary.json``. For each setting (the paper's presets and settings of this project's own,
Zipf words included) it takes the training sentences the trainer drew (:func:`fctheory.io.training_sentences`:
the same seed, the same sentences), and:

* the **prediction**: :func:`fctheory.finite_sample.predict_training_optimum`, the certified global minimiser of
  R̂ over every width (``fctheory.optimum(task, lam, data=(S, y))``); for a network at the optimum, balancedness
  forces WᵀW = (XᵀX)^(1/2), so every word norm, the singular values of W (the memorisation directions beyond
  the first n_c − 1 included), the classifier's norms and the train CE follow from X* alone;
* the **trained network** read from ``DIR`` (``<name>.npz`` with W and U, a run directory ``<name>/`` or a trainer
  checkpoint ``<name>.ckpt.npz``; ``--train`` trains the settings missing there with the reference trainer);
* its **certificate** (:func:`fctheory.certify` at the network's own weights, no solve): R̂ of the network, a
  certified lower bound on min R̂, and the network's exact excess over the certified minimum, so that when a
  prediction misses, the report says whether SGD stopped short;
* with ``--polish NAME``: the same network trained on until the certificate closes (full-batch L-BFGS of R̂ at
  the network's width from its SGD weights, :func:`fctheory.finite_sample.minimize_empirical_risk`).

Measures: the mean word norm and its spread (relative errors), R² of the per-word norms (1 − SS_res/SS_tot over
the words), the top-10 singular values of W (largest relative error), the memorisation directions σ₃.. (their
mean relative error), the train CE.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import dataclass

import numpy as np

import fctheory as fc
import fctheory.predictions.partial as fpp
from fctheory.finite_sample import minimize_empirical_risk, predict_training_optimum
from fctheory.io import load_run
from fctheory.io.json import to_json
from fctheory.io.sentences import training_sentences
from fctheory.io.tasks import task_fingerprint
from fctheory.optima import sample_average_optimum
from fctheory.risk.empirical import empirical_risk, norms
from fctheory.trainer.presets import get_preset

__all__ = ["Setting", "SETTINGS", "compare", "setting_row", "write_report", "store_sample_average", "main"]

#: λ of every setting (λ_W = λ_U, as the paper's runs)
LAM = 1e-3
#: L-BFGS iterations of --polish (full-batch, from the SGD weights)
POLISH_ITERS = 5000
#: singular values compared (the top of W's spectrum, the concept directions and the first memorisation ones)
TOP = 10


@dataclass(frozen=True)
class Setting:
    """A training setting: the task, the sentences per class and the trainer's configuration."""

    name: str
    task: object  # a callable returning the Task
    n_spl: int
    d: int
    lr: float
    epochs: int
    init_scale: float
    note: str = ""
    preset: str | None = None

    def make_task(self):
        return self.task()


def _preset(name: str, note: str) -> Setting:
    p = get_preset(name)
    return Setting(name, p.task, p.n_spl, p.d, p.lr, p.epochs, p.init_scale, note, preset=name)


SETTINGS = {
    s.name: s
    for s in (
        Setting("small", lambda: fc.Task.full(3, 40, 6), 5, 32, 0.2, 2500, 1e-3,
                "docs/finite-sample.md's full task: the minimiser memorises its sentences"),
        Setting("zipfC100", lambda: fc.Task.random(3, 20, 6, 100, seed=0, mu="zipf"), 100, 30, 0.1, 300, 0.1,
                "partial, Zipf words, 100 sentences per class"),
        Setting("zipfC5", lambda: fc.Task.random(3, 20, 6, 100, seed=0, mu="zipf"), 5, 30, 0.1, 3000, 0.1,
                "the same latent set, 5 sentences per class"),
        Setting("zipfD50", lambda: fc.Task.random(5, 8, 4, 200, seed=0, mu="zipf"), 50, 30, 0.1, 300, 0.1,
                "partial, 5 concepts, Zipf words"),
        _preset("k50", "uniform words, K = 50 (section 3)"),
        _preset("fig3", "uniform words, K = 1000, 5 sentences per class (figure 3)"),
        _preset("fig4b", "Zipf words, K = 1000, 5 sentences per class (figure 4b)"),
    )
}  # fmt: skip


def _r2(pred, obs) -> float:
    """1 − SS_res/SS_tot of the per-word norms (nan where the observed norms are all equal)."""
    ss_tot = float(np.sum((obs - obs.mean()) ** 2))
    return float(1.0 - np.sum((pred - obs) ** 2) / ss_tot) if ss_tot > 0 else float("nan")


def _rel(a, b) -> float:
    return float(abs(a - b) / abs(b)) if b else float("nan")


def compare(task, W_pred, U_pred, W, U) -> dict:
    """The measures of the module docstring, prediction (W_pred, U_pred) against the network (W, U)."""
    wp, up = norms(task, W_pred, U_pred)
    wt, ut = norms(task, W, U)
    sp = np.linalg.svd(W_pred, compute_uv=False)
    st = np.linalg.svd(W, compute_uv=False)
    k = min(TOP, sp.size, st.size)
    kc = task.n_c - 1  # the concept directions of a collapsed network (σ₁ .. σ_(n_c − 1))
    mem = [_rel(sp[i], st[i]) for i in range(kc, k)]
    return dict(
        w_mean_pred=float(wp.mean()), w_mean_trained=float(wt.mean()), w_mean_err=_rel(wp.mean(), wt.mean()),
        w_spread_pred=float(wp.std()), w_spread_trained=float(wt.std()), w_spread_err=_rel(wp.std(), wt.std()),
        w_r2=_r2(wp, wt), u_mean_pred=float(up.mean()), u_mean_trained=float(ut.mean()),
        u_mean_err=_rel(up.mean(), ut.mean()), sigma_pred=sp[:k].tolist(), sigma_trained=st[:k].tolist(),
        sigma_err_max=max(_rel(sp[i], st[i]) for i in range(k)),
        memorisation_err_mean=float(np.mean(mem)) if mem else float("nan"),
    )  # fmt: skip


def _train(s: Setting, task):
    dtype = "float32" if s.preset else "float64"
    run = fc.train(task, n_spl=s.n_spl, d=s.d, lr=s.lr, epochs=s.epochs, batch=100, lam_W=LAM, lam_U=LAM, seed=0,
                   init_scale=s.init_scale, backend="numba", dtype=dtype, measure=False, progress=False)  # fmt: skip
    return np.asarray(run.W, dtype=float), np.asarray(run.U, dtype=float)


def _weights(s: Setting, runs: str | None):
    for cand in (f"{s.name}.npz", f"{s.name}.ckpt.npz", s.name, f"{s.name}/{s.name}.ckpt.npz"):
        path = os.path.join(runs or ".", cand)
        if runs and os.path.exists(path):
            r = load_run(path)
            return np.asarray(r.W, dtype=float), np.asarray(r.U, dtype=float), path
    return None


def _optimum(task, S, y, cache: str | None, tol: float) -> dict:
    """The certified optimum of R̂ (W, U, R, lower bound, rel. gap, rank, seconds): solved, or read from
    ``cache`` (an .npz of W and U) and certified again there (the Fenchel bound at those weights: no solve)."""
    t0 = time.process_time()
    if cache and os.path.exists(cache):
        z = np.load(cache)
        W, U = np.asarray(z["W"], dtype=float), np.asarray(z["U"], dtype=float)
        c = fc.certify(task, W, U, lam=LAM, data=(S, y), solve=False)
        R, lb, rel = c.R, c.lower_bound, c.rel_gap
        cpu = float(z["cpu_seconds"]) if "cpu_seconds" in z.files else float("nan")
    else:
        pred = predict_training_optimum(task, S, y, LAM, tol=tol, max_seconds=7200)
        W, U, info = pred.info["W"], pred.info["U"], pred.info
        R, lb, rel = info["R"], info["lower_bound"], info["rel_gap"]
        cpu = time.process_time() - t0
        if cache:
            np.savez(cache, W=W, U=U, cpu_seconds=cpu)
    rank = int(np.sum(np.linalg.svd(W, compute_uv=False) > 1e-9 * max(1.0, float(np.abs(W).max()))))
    return dict(W=W, U=U, R=float(R), lower_bound=float(lb), rel_gap=float(rel), rank=rank, cpu=cpu)


def _truncate(task, W, U, d):
    """The top ``d`` directions of balanced factors (rows of W sorted by singular value, as the solver returns
    them) and the matching coordinates of U (K × L·r, position-major blocks of r)."""
    r = W.shape[0]
    return W[:d].copy(), U.reshape(task.K, task.L, r)[:, :, :d].reshape(task.K, task.L * d).copy()


def setting_row(s: Setting, W, U, *, source: str, polish: bool = False, tol: float = 1e-8, cache=None) -> dict:
    """One setting: prediction, comparison, certificate (and the polished network with ``polish``)."""
    task = s.make_task()
    S, y = training_sentences(task, n_spl=s.n_spl, seed=0)
    opt = _optimum(task, S, y, cache, tol)
    cert = fc.certify(task, W, U, lam=LAM, data=(S, y), solve=False)
    R_net = cert.R
    ce = empirical_risk(task, opt["W"], opt["U"], S, y, 0.0, grad=False)[0]
    row = dict(
        setting=s.name, note=s.note, K=task.K, L=task.L, n_w=task.n_w, n_spl=s.n_spl, N=int(len(y)), d=s.d,
        source=source, rank_opt=opt["rank"], R_opt=opt["R"], lower_bound=opt["lower_bound"],
        rel_gap_opt=opt["rel_gap"], certified=bool(opt["rel_gap"] <= tol), cpu_seconds_opt=opt["cpu"],
        R_trained=R_net, excess_trained=float(R_net - opt["R"]),
        rel_excess_trained=float((R_net - opt["R"]) / opt["R"]),
        cert_gap_trained=float(cert.gap), cert_rel_gap_trained=float(cert.rel_gap), ce_pred=float(ce),
        ce_trained=float(empirical_risk(task, W, U, S, y, 0.0, grad=False)[0]),
        **compare(task, opt["W"], opt["U"], W, U),
    )  # fmt: skip
    d = W.shape[0]
    if opt["rank"] > d:  # the network cannot hold X*: predict with the width-d minimiser from X*'s top d directions
        Wd, Ud = _truncate(task, opt["W"], opt["U"], d)
        Wd, Ud, _ = minimize_empirical_risk(task, S, y, d, LAM, W0=Wd, U0=Ud, gtol=1e-9, maxiter=POLISH_ITERS)
        row["width_limited"] = dict(R=float(empirical_risk(task, Wd, Ud, S, y, LAM, grad=False)[0]),
                                    **compare(task, Wd, Ud, W, U))  # fmt: skip
    if polish:
        Wp, Up, _ = minimize_empirical_risk(task, S, y, W.shape[0], LAM, W0=W, U0=U, gtol=1e-9, maxiter=POLISH_ITERS)
        c2 = fc.certify(task, Wp, Up, lam=LAM, data=(S, y), solve=False)
        row["polished"] = dict(R=c2.R, rel_excess=float((c2.R - opt["R"]) / opt["R"]), cert_rel_gap=c2.rel_gap,
                               **compare(task, opt["W"], opt["U"], Wp, Up))  # fmt: skip
    return row


_COLS = [
    ("setting", "{}"), ("N", "{}"), ("d", "{}"), ("rank_opt", "{}"), ("rel_gap_opt", "{:.1e}"),
    ("rel_excess_trained", "{:.2e}"), ("w_mean_pred", "{:.4f}"), ("w_mean_trained", "{:.4f}"),
    ("w_mean_err", "{:.1%}"), ("w_spread_pred", "{:.4f}"), ("w_spread_trained", "{:.4f}"), ("w_r2", "{:.3f}"),
    ("sigma_err_max", "{:.1%}"), ("memorisation_err_mean", "{:.1%}"), ("u_mean_err", "{:.1%}"),
]  # fmt: skip


def _cell(fmt, v):
    if v is None or (isinstance(v, float) and not np.isfinite(v)):
        return ""
    return fmt.format(v)


def write_report(rows: list, out: str, command: str) -> str:
    """docs/training-sets.md beside ``out`` and ``out``/summary.json; returns the markdown path."""
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "summary.json"), "w", encoding="utf-8") as fh:
        json.dump(to_json(dict(command=command, lam=LAM, rows=rows)), fh, indent=1)
    head = "| " + " | ".join(c for c, _ in _COLS) + " |\n|" + "---|" * len(_COLS) + "\n"
    body = "".join("| " + " | ".join(_cell(f, r.get(c)) for c, f in _COLS) + " |\n" for r in rows)
    sig = "".join(
        f"| {r['setting']} | {', '.join(f'{v:.4g}' for v in r['sigma_pred'])} | "
        f"{', '.join(f'{v:.4g}' for v in r['sigma_trained'])} |\n"
        for r in rows
    )
    pol = "".join(
        f"| {r['setting']} | {r['rel_excess_trained']:.2e} | {r['polished']['rel_excess']:.2e} | "
        f"{r['polished']['w_mean_err']:.1%} | {r['polished']['w_r2']:.3f} | {r['polished']['sigma_err_max']:.1%} |\n"
        for r in rows
        if "polished" in r
    )
    wl = "".join(
        f"| {r['setting']} | {r['d']} | {r['rank_opt']} | {r['width_limited']['w_mean_err']:.1%} | "
        f"{r['width_limited']['w_spread_err']:.1%} | {r['width_limited']['w_r2']:.3f} | "
        f"{r['width_limited']['sigma_err_max']:.1%} | {r['width_limited']['memorisation_err_mean']:.1%} |\n"
        for r in rows
        if "width_limited" in r
    )
    md = _HEADER.format(command=command) + head + body + _SIGMA + sig
    if wl:
        md += _WIDTH + wl
    if pol:
        md += _POLISH + pol
    path = out.rstrip("/") + ".md"
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(md)
    return path


_HEADER = """# Trained networks against the certified optimum of their training objective

Generated by `{command}` (module `proofs_check/training_sets.py`; numbers in `training-sets/summary.json`).

For each setting, the training sentences the trainer drew are solved for the certified global minimiser of the
training objective R̂(W, U) = (1/N) Σ CE + (λ/2)(‖W‖² + ‖U‖²), λ = 1e-3, over every width
([optimum.md](optimum.md#the-training-set-optimum-optimum-datas-y-and-certify)); the prediction of the trained
network is that minimiser's balanced factors. `rel_gap_opt` is its certified relative gap; `rel_excess_trained` is
the trained network's R̂ above the certified minimum, relative (the distance SGD left); `w_*` are the word norms
(mean, spread, R² of the per-word values), `sigma_err_max` the largest relative error of the top 10 singular values
of W, `memorisation_err_mean` the mean relative error of σ_(n_c) .. σ_10 (the directions beyond the concepts),
`u_mean_err` that of the mean classifier norm.

"""

_SIGMA = """
Singular values of W, predicted and trained:

| setting | predicted σ(W) | trained σ(W) |
|---|---|---|
"""

_WIDTH = """
Where rank X* exceeds the network's width d, the network cannot hold X*: the convex optimum is a lower bound of its
objective, and the prediction is the width-d minimiser reached by L-BFGS from X*'s top d balanced directions:

| setting | d | rank X* | mean ‖w‖ error | spread error | per-word R² | top-10 σ error | memorisation σ error |
|---|---|---|---|---|---|---|---|
"""

_POLISH = """
Trained on until the certificate closes (full-batch L-BFGS of R̂ at the network's width from its SGD weights):

| setting | rel. excess after SGD | after L-BFGS | mean ‖w‖ error | per-word R² | top-10 σ error |
|---|---|---|---|---|---|
"""


def store_sample_average(task, lam, *, n_spl=fpp.SAA_N_SPL, replicates=fpp.SAA_REPLICATES, seed=0, path=None):
    """Solve the sample-average approximation of (task, λ) and store it where ``fctheory.predict`` reads it
    (``fctheory/predictions/sample_averages.json``, keyed by the task's fingerprint and λ). Returns the entry."""
    path = fpp.STORED_SAMPLE_AVERAGES if path is None else path
    s = sample_average_optimum(task, lam=lam, n_spl=n_spl, replicates=replicates, seed=seed, progress=True)
    data = json.loads(open(path, encoding="utf-8").read()) if os.path.exists(path) else {"entries": {}}
    entry = to_json(fpp.sample_average_summary(task, s))
    data["entries"][f"{task_fingerprint(task)}@{float(lam)!r}"] = entry
    data["generated_by"] = "python -m proofs_check.training_sets --store-saa"
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1)
    return entry


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", default=None, help="folder of trained networks (<name>.npz, <name>/, <name>.ckpt.npz)")
    ap.add_argument("--out", default="docs/training-sets", help="output folder (the .md is written beside it)")
    ap.add_argument("--settings", nargs="*", default=list(SETTINGS), help="settings to run (default: all)")
    ap.add_argument("--train", action="store_true", help="train the settings missing from --runs (saved there)")
    ap.add_argument("--polish", nargs="*", default=[], help="settings whose network is trained on until certified")
    ap.add_argument(
        "--store-saa",
        nargs="*",
        default=None,
        metavar="PRESET",
        help="store the sample-average population optimum of these presets' latent sets (hours at K = 1000)",
    )
    args = ap.parse_args(argv)
    for name in args.store_saa or ():
        p = get_preset(name)
        print(json.dumps(store_sample_average(p.task(), p.lam_U))[:300])
    if args.store_saa is not None:
        return 0
    rows = []
    for name in args.settings:
        s = SETTINGS[name]
        found = _weights(s, args.runs)
        if found is None and not args.train:
            print(f"{name}: no trained network in {args.runs!r} (--train trains it)")
            continue
        if found is None:
            W, U = _train(s, s.make_task())
            src = os.path.join(args.runs or ".", f"{name}.npz")
            os.makedirs(os.path.dirname(src) or ".", exist_ok=True)
            np.savez(src, W=W, U=U)
        else:
            W, U, src = found
        cache = os.path.join(args.runs, f"{name}.optimum.npz") if args.runs else None
        row = setting_row(s, W, U, source=os.path.basename(src), polish=name in args.polish, cache=cache)
        print(json.dumps(to_json({k: v for k, v in row.items() if not isinstance(v, list)})), flush=True)
        rows.append(row)
    cmd = "python -m proofs_check.training_sets " + " ".join(argv if argv is not None else os.sys.argv[1:])
    print(write_report(rows, args.out, cmd.strip()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
