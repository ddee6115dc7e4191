"""``fctheory certify WEIGHTS``: how far a trained network is from the global optimum of its own objective.

With ``--data SENTENCES.npz`` the objective is the training objective R̂ of those sentences (what SGD with weight
decay minimised); without it, the true risk (5), where the exact engine enumerates the task. The certificate is
:func:`fctheory.certify`: R of the network, a certified lower bound on the global minimum over every width
(the Fenchel bound at the network's own weights and, unless ``--no-solve``, at the solved optimum), the gap.

WEIGHTS: what :func:`fctheory.io.load_run` reads (a run directory of ``fctheory train --out``, a trainer
checkpoint, an ``.npz`` with W and U, a state_dict). The task comes from the task options, ``--preset``, the
weights' file or the sentence file, in that order; λ from ``--lam``, else the run's configuration (unequal decays
are reduced to one, λ = √(λ_W λ_U), by rescaling W and U), else the preset's.
"""

from __future__ import annotations

import os

from .._validate import fail
from ..diagnosis.certificate import balanced_decays, certificate_fields
from ..io import load_run
from ..optima import certify
from ..trainer.presets import PRESETS, get_preset
from ._output import add_format_options, print_json, say
from ._sentences import DATA_HELP, read_sentences
from ._table import real, table
from ._task_options import add_task_arguments, task_from_args

__all__ = ["register", "run"]

_TASK_OPTIONS = ("task", "nc", "sc", "L", "K", "Z", "mu")


def register(sub) -> None:
    p = sub.add_parser(
        "certify",
        help="how far a trained network is from the global optimum of its own (training) objective",
        description="Certify trained weights of network h: R of the network, a certified lower bound on the "
        "global minimum of its objective over every width (the Fenchel bound of the nuclear-norm problem at the "
        "network's own weights and at the solved optimum), and the gap. With --data: the training objective of "
        "those sentences; without: the true risk (5), where the exact engine enumerates the task.",
    )
    p.add_argument("weights", help="run directory, trainer checkpoint, .npz (W, U), .pt/.pth or .safetensors")
    p.add_argument("--data", default=None, metavar="SENTENCES.npz", help=DATA_HELP + "; without it: the true risk")
    p.add_argument(
        "--lam",
        type=real(lo=1e-12, hi=1e12),
        default=None,
        help="weight decay lambda of both W and U (default: the run's lam_W, lam_U, or the preset's)",
    )
    g = p.add_argument_group("preset", "one of the paper's experiments: its task and lambda")
    g.add_argument("--preset", choices=PRESETS, default=None, help="the preset's task and lambda")
    g.add_argument("--quick", action="store_true", help="the preset's small version")
    add_task_arguments(p, random_Z=False, description="the task (default: the one the weights or sentences record)")
    s = p.add_argument_group("certificate", "where the bound is taken and how")
    s.add_argument(
        "--no-solve",
        action="store_true",
        help="the bound at the network's own weights only (one evaluation; no solve for the optimum)",
    )
    s.add_argument(
        "--precision",
        choices=("float", "interval"),
        default="float",
        help="interval: rigorous bounds in ball arithmetic as well (small samples or enumerations only)",
    )
    s.add_argument(
        "--tol", type=real(lo=0.0, lo_open=True, hi=1.0), default=1e-10, help="relative gap the solve aims at"
    )
    s.add_argument(
        "--max-seconds",
        type=real(lo=0.0, lo_open=True, inf_ok=True),
        default=None,
        help="longest solve or enumeration (default: the work budget's)",
    )
    add_format_options(p, csv_ok=False)
    p.set_defaults(func=run)


def _task(args, rf, sf):
    """The task from the task options, --preset, the weights' file or the sentence file (in that order)."""
    given = [o for o in _TASK_OPTIONS if getattr(args, o, None) is not None]
    if args.preset is not None:
        if given:
            fail(f"--{given[0]}", getattr(args, given[0]), "the preset fixes the task: drop it")
        return get_preset(args.preset, quick=args.quick).task()
    if args.quick:
        fail("--quick", True, "chooses a preset's small version: add --preset NAME")
    own = rf.task if rf.task is not None else (sf.task if sf is not None else None)
    if own is None and not given:
        fail("--task", None, "the task is needed: the weights and sentences record none; pass --task or --nc ...")
    return task_from_args(args, W=rf.W, U=rf.U, file_task=own)


def _lam(args, rf):
    """(W, U, λ, how λ was found): --lam, else the run's decays (reduced to one), else the preset's."""
    cfg = rf.config or {}
    if cfg.get("layernorm"):
        fail("WEIGHTS", rf.path, "is a network h* (LayerNorm) run: the certificate covers network h")
    if args.lam is not None:
        return rf.W, rf.U, args.lam, "--lam"
    if cfg.get("lam_W") is not None and cfg.get("lam_U") is not None:
        lw, lu = float(cfg["lam_W"]), float(cfg["lam_U"])
        if not (lw > 0 and lu > 0):
            fail("--lam", None, f"the run's decays (lam_W = {lw:g}, lam_U = {lu:g}) must both be positive")
        W, U, lam = balanced_decays(rf.W, rf.U, lw, lu)
        return W, U, lam, "the run's configuration" + ("" if lw == lu else " (sqrt(lam_W lam_U), rescaled W, U)")
    if args.preset is not None:
        p = get_preset(args.preset, quick=args.quick)
        if p.layernorm or p.lam_W != p.lam_U:
            fail("--preset", args.preset, "is a network h* preset: the certificate covers network h")
        return rf.W, rf.U, p.lam_U, "the preset"
    fail("--lam", None, "is required: the weights record no weight decay (the lambda the network was trained with)")


def run(args) -> int:
    rf = load_run(args.weights)
    sf = read_sentences(args.data) if args.data is not None else None
    task = _task(args, rf, sf)
    if sf is not None:
        sf = read_sentences(args.data, task)  # the sentences against the task (and the file's own task)
    W, U, lam, lam_from = _lam(args, rf)
    c = certify(task, W, U, lam=lam, data=None if sf is None else sf.data, solve=not args.no_solve,
                precision=args.precision, tol=args.tol, max_seconds=args.max_seconds)  # fmt: skip
    out = certificate_fields(c, lam)
    params = {"weights": os.path.abspath(args.weights), "data": None if sf is None else os.path.abspath(args.data),
              "N": None if sf is None else int(sf.S.shape[0]), "lam": lam, "lam_from": lam_from,
              "preset": args.preset, "solve": not args.no_solve, "precision": args.precision, "tol": args.tol,
              "max_seconds": args.max_seconds}  # fmt: skip
    if args.json:
        print_json("certify", task=task, parameters=params, results=out)
        return 0
    what = f"training objective of {sf.S.shape[0]} sentences" if sf is not None else "true risk (5)"
    say(f"fctheory certify: {rf.source} {args.weights}, network h of width {W.shape[0]}: the {what}")
    say(f"task: {task!r}, lambda = {lam:g} (from {lam_from})")
    rows = [[k, v] for k, v in out.items() if k not in ("message", "interval", "bound_description", "lam")]
    if c.interval is not None:
        iv = c.interval
        rows += [["interval R", list(iv["R"])], ["interval lower_bound", iv["lower_bound"]]]
        rows += [["interval gap", iv["gap"]]]
    print(table(rows, ["quantity", "value"]))
    say(f"bound: {out['bound_description']}")
    say(out["message"])
    return 0
