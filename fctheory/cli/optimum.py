"""``fctheory optimum``: the certified optimum of a task, with its certificate.

The task is a preset of the paper (``--preset NAME``, ``--quick`` for its small version) or given by its
parameters (``--nc --sc --L --K`` with ``--task-seed``, ``--Z``, ``--mu``; or ``--task FILE``: the options of
:mod:`fctheory.cli._task_options`). Network h: :func:`fctheory.optima.optimum` (the collapsed problem for uniform word
frequencies, any K; enumeration of the sentences otherwise, refused with one line when the task is too big).
Network h*: :func:`fctheory.optimum` with ``network="h*"`` (a local minimiser and a certified lower bound, small
tasks), or with ``--collapsed`` :func:`fctheory.collapsed_optimum_star` (the best feature-collapsed h*, any K).

Each kind of optimum is one entry of :data:`SOLVERS` (``what`` it is, the function that answers it): an answer
of another kind (the training-set optimum on given sentences) is a new entry and the options that choose it.
"""

from __future__ import annotations

from .._validate import fail
from ..optima import collapsed_optimum_star, optimum
from ..trainer.presets import PRESETS, get_preset
from ._optima import summary_h, summary_h_star, summary_star
from ._output import add_format_options, print_json, say
from ._table import fmt, integer, real, table
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
    task = task_from_args(args, random_Z=True)
    return task, args.network or "h", 1e-3 if args.lam is None else args.lam, args.d, None


def _solve_h(task, lam, d, args) -> tuple:
    res = optimum(task, lam=lam, d=d, tol=args.tol, max_seconds=args.max_seconds)
    how = "collapsed problem (uniform mu)" if task.is_uniform else "enumeration of the sentences"
    return f"global minimiser of (5), network h: {how}", {**summary_h(task, res, lam), "status": res.status}


def _solve_star(task, lam, d, args) -> tuple:
    if args.collapsed:
        if d is None:
            fail("--d", None, "is needed for h*: the embedding dimension (LayerNorm features have norm sqrt(d))")
        res = collapsed_optimum_star(task, lam=lam, d=d, tol=args.tol)
        what = "best feature-collapsed network h* (certified among feature-collapsed networks of any width)"
        return what, summary_star(task, res)
    res = optimum(task, lam=lam, network="h*", d=d, tol=args.tol, max_seconds=args.max_seconds)
    what = "network h*: best local minimiser of (10) and a certified lower bound on min R* (width d)"
    return what, {**summary_h_star(task, res, lam), "status": res.status}


#: each kind of optimum: (network, collapsed) -> the function that solves it
SOLVERS = {("h", False): _solve_h, ("h*", False): _solve_star, ("h*", True): _solve_star}


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
    task, network, lam, d, preset = _problem(args)
    if args.collapsed and network != "h*":
        fail("--collapsed", True, "chooses the best feature-collapsed h*: add --network h* (or a preset of h*)")
    what, out = SOLVERS[(network, bool(args.collapsed))](task, lam, d, args)
    params = {"preset": preset, "quick": bool(args.quick), "network": network, "lam": lam, "d": d}
    params.update(collapsed=bool(args.collapsed), tol=args.tol, max_seconds=args.max_seconds)
    if args.json:
        print_json("optimum", task=task, parameters=params, results={"optimum": what, **out})
        return 0
    say(f"fctheory optimum: {what}")
    say(f"task: {task!r}{f' (preset {preset})' if preset else ''}, lambda = {lam:g}{f', d = {d}' if d else ''}")
    print(table([[k, _shown(k, v, task)] for k, v in out.items() if k not in _JSON_ONLY], ["quantity", "value"]))
    say(out["message"])
    return 0
