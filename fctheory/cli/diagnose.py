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
from ._sentences import DATA_HELP, read_sentences
from .data import run_training_set
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
    t = p.add_argument_group(
        "training objective",
        "the certificate of the network's own training objective (network h): its sentences from --data, or "
        "regenerated from a run's task and configuration (n_spl, seed)",
    )
    t.add_argument(
        "--data",
        default=None,
        metavar="SENTENCES.npz",
        help=DATA_HELP,
    )
    t.add_argument(
        "--certificate",
        default="auto",
        choices=("auto", "network", "optimum", "none"),
        help="where the certified lower bound is taken: the network's own weights (network, instant), also the "
        "solved optimum (optimum), the optimum on small samples only (auto, default), or no certificate (none)",
    )
    p.add_argument("--out", default=None, help="folder for report.md, diagnosis.json and the figures")
    p.add_argument("--json", action="store_true", help="print the diagnosis as the fctheory/1 JSON object")
    p.set_defaults(func=run)


def _training_data(args, rf, task):
    """((S, y) or None, where they came from): --data, else the run's training set from its configuration."""
    if args.certificate == "none":
        if args.data is not None:
            fail("--data", args.data, "gives the sentences of a certificate, but --certificate none asks for none")
        return None, None
    if args.data is not None:
        sf = read_sentences(args.data, task)
        return sf.data, os.path.abspath(args.data)
    found = run_training_set(rf)
    if found is None:
        return None, None
    S, y, n_spl, seed = found
    return (S, y), f"regenerated from the run's configuration (n_spl = {n_spl}, seed = {seed})"


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
    data, data_source = _training_data(args, rf, task)
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
        data=data,
        certificate="auto" if args.certificate == "none" else args.certificate,
    )
    report = D.report(args.out) if args.out is not None else None
    if args.json:
        _print_json(args, D, rf, report, layernorm=layernorm, eps=eps, n=n, data_source=data_source)
        return 0
    _print_text(args, D, rf, report, data_source)
    return 0


def _print_json(args, D, rf, report, *, layernorm, eps, n, data_source) -> None:
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
        "data": data_source,
        "certificate": args.certificate,
    }
    print_json("diagnose", task=D.task, parameters=params, results=out)


def _print_text(args, D, rf, report, data_source=None) -> None:
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
    _print_certificate(D.certificate, data_source)
    if report:
        say(f"report: {os.path.abspath(report)}")


def _print_certificate(c, data_source) -> None:
    """One or two lines: how far the network is from the optimum of its own training objective, which bound."""
    if c is None:
        return
    if not c["available"]:
        say(f"training objective ({data_source}): no certificate: {c['reason']}")
        return
    say(f"training objective ({c['N']} sentences, {data_source}): {c['message']}")
    say(f"  lower bound: {c['bound_description']}")
