"""``fctheory optimum``: the certified optimum of a task, with its certificate.

The task is a preset of the paper (``--preset NAME``, ``--quick`` for its small version) or given by its
parameters (``--nc --sc --L --K`` with ``--task-seed``, ``--Z``, ``--mu``; or ``--task FILE``: the options of
:mod:`fctheory.cli._task_options`). Network h: :func:`fctheory.optima.optimum` (the collapsed problem for uniform word
frequencies, any K; enumeration of the sentences otherwise, refused with one line when the task is too big).
Network h*: :func:`fctheory.optimum` with ``network="h*"`` (a local minimiser and a certified lower bound, small
tasks), or with ``--collapsed`` :func:`fctheory.collapsed_optimum_star` (the best feature-collapsed h*, any K).

Network h on a training set (``--data SENTENCES.npz``, a sentence file of :mod:`fctheory.io.sentences`):
:func:`fctheory.optimum` with ``data=(S, y)``, the certified global minimiser of the training objective R̂ of those
sentences (the task from the options, the preset, or the sentence file).

Each kind of optimum is one entry of :data:`SOLVERS` (``what`` it is, the function that answers it): an answer
of another kind is a new entry and the options that choose it. ``--out FILE.npz`` writes the optimum's weights
(W, U, the task and the decays) in the format ``fctheory certify`` and ``fctheory diagnose`` read.
"""

from __future__ import annotations

import os

from .._files import write_npz
from .._validate import PathOut, fail
from ..optima import collapsed_optimum_star, optimum
from ..trainer.presets import PRESETS, get_preset
from ._optima import summary_h, summary_h_star, summary_star
from ._output import add_format_options, print_json, say
from ._sentences import DATA_HELP, read_sentences
from ._table import fmt, hint, integer, real, table
from ._task_options import add_task_arguments, task_from_args

__all__ = ["register", "run", "SOLVERS"]


def register(sub) -> None:
    p = sub.add_parser(
        "optimum",
        help="the certified optimum of a task (a preset, or its parameters and a seed) with its certificate",
        description="Compute the certified global minimiser of the true risk (5) of network h on a task (or, for "
        "h*, the best network with a certified lower bound), and print its certificate: R, the certified lower "
        "bound on min R, the gap, whether it is certified, the width, the word and concept norms.",
    )
    g = p.add_argument_group("preset", "one of the paper's experiments instead of the task options")
    g.add_argument("--preset", choices=PRESETS, default=None, help="the preset's latent set, network, lambda and d")
    g.add_argument("--quick", action="store_true", help="the preset's small version (seconds)")
    add_task_arguments(p, random_Z=True, description="the task (a task file, or its parameters and a seed)")
    s = p.add_argument_group("problem", "the network and the regularisation (defaults: the preset's)")
    s.add_argument(
        "--lam",
        type=real(lo=1e-12, hi=1e12),
        default=None,
        help="weight decay lambda of (5) (both decays; for h*: lambda_U); default the preset's, else 1e-3",
    )
    s.add_argument("--network", choices=("h", "h*"), default=None, help="h (default) or h* (LayerNorm features)")
    s.add_argument("--d", type=integer(min=1, max=2**31), default=None, help="width (h*: the embedding dimension)")
    s.add_argument(
        "--collapsed",
        action="store_true",
        help="h*: the best feature-collapsed network (collapsed_optimum_star; any K, certified among collapsed "
        "networks) instead of a local minimiser of all networks (small tasks)",
    )
    s.add_argument(
        "--tol", type=real(lo=0.0, lo_open=True, hi=1.0), default=1e-10, help="relative certified gap (default 1e-10)"
    )
    s.add_argument(
        "--max-seconds",
        type=real(lo=0.0, lo_open=True, inf_ok=True),
        default=None,
        help="longest solve before it stops uncertified (default: the work budget's)",
    )
    t = p.add_argument_group("training set", "network h on given sentences instead of the true risk (5)")
    t.add_argument(
        "--data",
        default=None,
        metavar="SENTENCES.npz",
        help=DATA_HELP + "; the optimum of their training objective (the task: the options, the preset or the file's)",
    )
    p.add_argument(
        "--out",
        default=None,
        metavar="FILE.npz",
        help="write the optimum's weights W, U (with the task and lambda) to an .npz that certify and diagnose read",
    )
    add_format_options(p, csv_ok=False)
    p.set_defaults(func=run)


# ----------------------------------------------------------------------------- the problem
def _problem(args):
    """(task, network, lambda, d, preset name or None) from --preset or the task options."""
    if args.preset is not None:
        given = [o for o in ("task", "nc", "sc", "L", "K", "Z", "mu", "task_seed") if getattr(args, o) is not None]
        if given:
            fail(f"--{given[0].replace('_', '-')}", getattr(args, given[0]), "the preset fixes the task: drop it")
        p = get_preset(args.preset, quick=args.quick)
        network = args.network or ("h*" if p.layernorm else "h")
        lam = args.lam if args.lam is not None else p.lam_U
        return p.task(), network, lam, args.d if args.d is not None else (p.d if network == "h*" else None), p.name
    if args.quick:
        fail("--quick", True, "chooses a preset's small version: add --preset NAME")
    given = any(getattr(args, o) is not None for o in ("task", "nc", "sc", "L", "K", "Z"))
    sentences = getattr(args, "sentences", None)
    if not given and sentences is not None and sentences.task is not None:
        task = sentences.task if args.mu is None else task_from_args(args, file_task=sentences.task)
        return task, args.network or "h", 1e-3 if args.lam is None else args.lam, args.d, None
    task = task_from_args(args, random_Z=True)
    return task, args.network or "h", 1e-3 if args.lam is None else args.lam, args.d, None


def _solve_h(task, lam, d, args) -> tuple:
    res = optimum(task, lam=lam, d=d, tol=args.tol, max_seconds=args.max_seconds)
    how = "collapsed problem (uniform mu)" if task.is_uniform else "enumeration of the sentences"
    return f"global minimiser of (5), network h: {how}", {**summary_h(task, res, lam), "status": res.status}, res


def _solve_data(task, lam, d, args) -> tuple:
    S, y = args.sentences.data
    res = optimum(task, lam=lam, d=d, tol=args.tol, max_seconds=args.max_seconds, data=(S, y))
    what = (f"global minimiser of the training objective of {S.shape[0]} sentences, network h "
            "(factored solve, Fenchel certificate)")  # fmt: skip
    return what, {**summary_h(task, res, lam), "status": res.status, "R_convex": res.R_convex}, res


def _solve_star(task, lam, d, args) -> tuple:
    if args.collapsed:
        if d is None:
            fail("--d", None, "is needed for h*: the embedding dimension (LayerNorm features have norm sqrt(d))")
        res = collapsed_optimum_star(task, lam=lam, d=d, tol=args.tol)
        what = "best feature-collapsed network h* (certified among feature-collapsed networks of any width)"
        return what, summary_star(task, res), None
    res = optimum(task, lam=lam, network="h*", d=d, tol=args.tol, max_seconds=args.max_seconds)
    what = "network h*: best local minimiser of (10) and a certified lower bound on min R* (width d)"
    return what, {**summary_h_star(task, res, lam), "status": res.status}, res


#: each kind of optimum: (network, kind) -> the function that solves it (what it is, its summary, the result
#: whose W, U --out writes, or None); kind: "population" (the true risk (5)), "collapsed", "data" (sentences)
SOLVERS = {
    ("h", "population"): _solve_h,
    ("h*", "population"): _solve_star,
    ("h*", "collapsed"): _solve_star,
    ("h", "data"): _solve_data,
}


def _kind(args, network) -> str:
    if args.collapsed and network != "h*":
        fail("--collapsed", True, "chooses the best feature-collapsed h*: add --network h* (or a preset of h*)")
    if args.data is not None:
        if network != "h" or args.collapsed:
            fail("--data", args.data, "the training-set optimum is of network h: drop --network h* / --collapsed")
        return "data"
    return "collapsed" if args.collapsed else "population"


def _save(path, task, res, network, lam) -> None:
    """The optimum's weights as a weights file (W, U, Z, mu and the decays: what load_run reads as a run)."""
    if res is None:
        fail("--out", path, "this optimum (the best feature-collapsed h*) has no weights W, U to write")
    ln = network == "h*"
    write_npz(path, {"W": res.W, "U": res.U, "Z": task.Z, "mu": task.mu, "lam_W": 0.0 if ln else lam, "lam_U": lam,
                     "layernorm": ln}, kind="weights", name="--out")  # fmt: skip


#: fields only --json prints (one entry per word, the message printed as prose)
_JSON_ONLY = ("word_norms", "message", "feature_cosines")


def _shown(key, value, task):
    """A table cell: the norms by frequency rank only where they differ (non-uniform mu), at most 8 of them."""
    if key != "norms_by_rank":
        return value
    if task.is_uniform:
        return "(uniform mu: every rank as word_norm_mean)"
    return value if len(value) <= 8 else f"{fmt(list(value[:8]))[:-1]}, ...] (all {len(value)} in --json)"


def run(args) -> int:
    out_path = PathOut()("--out", args.out) if args.out is not None else None  # refused before any work
    if out_path is not None and not out_path.lower().endswith(".npz"):
        fail("--out", args.out, "the weights are written as an .npz: end the name with .npz")
    args.sentences = read_sentences(args.data) if args.data is not None else None
    task, network, lam, d, preset = _problem(args)
    kind = _kind(args, network)
    if args.sentences is not None:
        args.sentences = read_sentences(args.data, task)  # the sentences against the task
    what, out, res = SOLVERS[(network, kind)](task, lam, d, args)
    if out_path is not None:
        _save(out_path, task, res, network, lam)
    params = {"preset": preset, "quick": bool(args.quick), "network": network, "lam": lam, "d": d}
    params.update(collapsed=bool(args.collapsed), tol=args.tol, max_seconds=args.max_seconds)
    params.update(data=None if args.data is None else os.path.abspath(args.data), out=out_path)
    if args.sentences is not None:
        params["N"] = int(args.sentences.S.shape[0])
    if args.json:
        print_json("optimum", task=task, parameters=params, results={"optimum": what, **out})
        return 0
    say(f"fctheory optimum: {what}")
    say(f"task: {task!r}{f' (preset {preset})' if preset else ''}, lambda = {lam:g}{f', d = {d}' if d else ''}")
    print(table([[k, _shown(k, v, task)] for k, v in out.items() if k not in _JSON_ONLY], ["quantity", "value"]))
    say(out["message"])
    if out_path is not None:
        print(hint("weights written", os.path.abspath(out_path)))
    return 0
