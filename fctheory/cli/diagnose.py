"""``fctheory diagnose WEIGHTS``: a trained network against the theory (exact or Monte-Carlo risk,
gradient, applicable theorem, collapse distances, figures and a markdown report).

The task options it shares with ``fctheory train`` live in :mod:`fctheory.cli._task_options` (their old
names here keep working).
"""

from __future__ import annotations

import os

from .._validate import Bool, Int, PathOut, Real, fail
from ..diagnosis import diagnose
from ..io import load_run
from ._output import print_json, say
from ._table import table
from ._task_options import add_task_arguments, task_from_args

__all__ = ["register", "run", "add_task_arguments", "task_from_args"]

_EPS_PYTORCH = 1e-5


# ----------------------------------------------------------------------------- the command
def register(sub) -> None:
    p = sub.add_parser(
        "diagnose",
        help="a trained network against the theory: exact/Monte-Carlo risk, gradient, theorem, collapse, report",
        description="Load trained weights (a run directory of 'fctheory train --out', an .npz, a PyTorch "
        "state_dict or a .safetensors file in the authors' notebook layout: emb.weight n_w x d, clf.weight "
        "K x L*d), compute the true risk (exact when it fits --max-seconds, else Monte Carlo with a "
        "confidence interval), its gradient norm, the applicable theorem's prediction and why it may not "
        "apply, distances to collapse configurations, norms, spectra and cosines; with --out write "
        "report.md, diagnosis.json and PNG figures.",
    )
    p.add_argument("weights", help="run directory, .npz, .pt/.pth state_dict, .safetensors or trainer checkpoint")
    add_task_arguments(p, random_Z=False)
    p.add_argument("--lam-W", type=float, default=None, help="weight decay on W (default: from the run's config)")
    p.add_argument("--lam-U", type=float, default=None, help="weight decay on U (default: from the run's config)")
    p.add_argument("--layernorm", action="store_true", default=None, help="network h* (LayerNorm φ on the embeddings)")
    p.add_argument(
        "--eps",
        type=float,
        default=None,
        help=f"LayerNorm epsilon (default: the run's, else {_EPS_PYTORCH:g} as PyTorch; 0 is the paper's φ)",
    )
    p.add_argument(
        "--method",
        default="auto",
        choices=("auto", "exact", "mc"),
        help="exact enumeration, Monte Carlo, or auto (exact when within --max-seconds)",
    )
    p.add_argument("--samples", type=int, default=None, help="Monte-Carlo sentences per class")
    p.add_argument("--seed", type=int, default=0, help="Monte-Carlo seed (default 0)")
    p.add_argument("--confidence", type=float, default=0.95, help="level of the Monte-Carlo interval (default 0.95)")
    p.add_argument(
        "--max-seconds", type=float, default=60.0, help="longest exact enumeration 'auto' accepts (default 60)"
    )
    p.add_argument("--rtol", type=float, default=1e-6, help="tolerance of the critical-point / match verdicts")
    p.add_argument(
        "--backend",
        default="numpy",
        choices=("numpy", "numba", "cupy"),
        help="engine of the exact risk: NumPy (default), numba kernels, or CuPy on a CUDA device",
    )
    p.add_argument("--no-assumptions", action="store_true", help="skip the Assumption A/B checks of Z")
    p.add_argument(
        "--unsafe-pickle",
        action="store_true",
        help="also read a fully pickled nn.Module: EXECUTES CODE FROM THE FILE (trusted files only)",
    )
    p.add_argument("--out", default=None, help="folder for report.md, diagnosis.json and the figures")
    p.add_argument("--json", action="store_true", help="print the diagnosis as the fctheory/1 JSON object")
    p.set_defaults(func=run)


def _config_value(args_value, config, key, flag, kind):
    if args_value is not None:
        return kind(flag, args_value)
    if key in config and config[key] is not None:
        return kind(flag, config[key])
    return None


def run(args) -> int:
    if args.out is not None:
        PathOut(dir=True)("--out", args.out)  # refused before any work
    rf = load_run(args.weights, allow_pickle=args.unsafe_pickle)
    task = task_from_args(args, W=rf.W, U=rf.U, file_task=rf.task)
    cfg = rf.config
    lam_W = _config_value(args.lam_W, cfg, "lam_W", "--lam-W", Real(lo=0))
    lam_U = _config_value(args.lam_U, cfg, "lam_U", "--lam-U", Real(lo=0))
    if lam_W is None:
        fail("--lam-W", None, "is required (the weight decay the network was trained with)")
    if lam_U is None:
        fail("--lam-U", None, "is required (the weight decay the network was trained with)")
    layernorm = True if args.layernorm else bool(Bool()("layernorm (config)", cfg.get("layernorm", False)))
    eps = _config_value(args.eps, cfg, "eps", "--eps", Real(lo=0))
    if eps is None:
        eps = _EPS_PYTORCH if layernorm else 0.0
    n = Int(min=2, max=10**9)("--samples", args.samples) if args.samples is not None else None
    D = diagnose(
        W=rf.W,
        U=rf.U,
        task=task,
        lam_W=lam_W,
        lam_U=lam_U,
        layernorm=layernorm,
        eps=eps,
        method=args.method,
        n_samples=n,
        seed=Int(min=0, max=2**63 - 1)("--seed", args.seed),
        confidence=Real(lo=0, hi=1 - 1e-12, lo_open=True)("--confidence", args.confidence),
        max_seconds=Real(lo=0, lo_open=True)("--max-seconds", args.max_seconds),
        rtol=Real(lo=0)("--rtol", args.rtol),
        backend=args.backend,
        assumptions=not args.no_assumptions,
    )
    report = D.report(args.out) if args.out is not None else None
    if args.json:
        _print_json(args, D, rf, report, layernorm=layernorm, eps=eps, n=n)
        return 0
    _print_text(args, D, rf, report)
    return 0


def _print_json(args, D, rf, report, *, layernorm, eps, n) -> None:
    """The fctheory/1 object: the diagnosis (task and versions in the envelope), where it came from, the options."""
    out = D.to_dict()
    out.pop("task", None)
    out.pop("versions", None)  # the envelope lists them
    out["source"] = {"path": os.path.abspath(args.weights), "kind": rf.source}
    if report:
        out["report"] = os.path.abspath(report)
    params = {
        "weights": args.weights,
        "lam_W": D.lam_W,
        "lam_U": D.lam_U,
        "layernorm": bool(layernorm),
        "eps": eps,
        "method": args.method,
        "samples": n,
        "seed": args.seed,
        "confidence": args.confidence,
        "max_seconds": args.max_seconds,
        "rtol": args.rtol,
        "backend": args.backend,
        "assumptions": not args.no_assumptions,
        "out": None if args.out is None else os.path.abspath(args.out),
    }
    print_json("diagnose", task=D.task, parameters=params, results=out)


def _print_text(args, D, rf, report) -> None:
    """The diagnosis as text: risk, theory and why it may not apply, the comparison table, the verdict."""
    t = D.task
    say(f"{rf.source} {args.weights}: network {D.network}, d={D.d}, {t!r}, λ_W={D.lam_W:g}, λ_U={D.lam_U:g}")
    if D.method == "exact":
        print(f"true risk (exact): R = {D.R:.12g}, R0 = {D.R0:.12g}")
    else:
        lo, hi = D.R_ci
        say(
            f"true risk (Monte Carlo, {D.n_samples}/class): R = {D.R:.8g} ± {D.R_stderr:.2g} "
            f"({D.confidence:.0%}: [{lo:.8g}, {hi:.8g}])"
        )
    th = D.theory
    say(f"theory: {th.theorem or 'none'}" + (f" — {th.statement}" if th.theorem else ""))
    for r in th.reasons:
        say(f"  does not apply exactly: {r}")
    for n_ in th.notes:
        say(f"  note: {n_}")
    print(table([[q, o, p] for q, o, p in D.comparison()], ["quantity", "observed", "theory"]))
    say(f"verdict: {D.verdict}")
    if report:
        say(f"report: {os.path.abspath(report)}")
