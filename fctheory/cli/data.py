"""``fctheory data``: write a training set (sentences and labels) to a sentence file.

The sentences are those the trainer trains on (:func:`fctheory.io.training_sentences`): of a preset
(``--preset NAME [--quick]``), of a run (a run directory of ``fctheory train --out`` or a trainer checkpoint: its
task, ``n_spl`` and ``seed``), or of any task (the task options) with ``--n-spl`` and ``--seed``. The file
(:func:`fctheory.io.save_sentences`: ``S``, ``y``, the task, ``n_spl``, ``seed``) is what ``fctheory certify
--data``, ``fctheory optimum --data`` and ``fctheory diagnose --data`` read.
"""

from __future__ import annotations

import os

from .._validate import Int, PathIn, PathOut, fail
from ..io import load_run, save_sentences, training_sentences
from ..trainer.presets import PRESETS, Preset, get_preset
from ._output import add_format_options, print_json, say
from ._table import hint, integer, table
from ._task_options import add_task_arguments, task_from_args

__all__ = ["register", "run", "run_training_set"]

_TASK_OPTIONS = ("task", "nc", "sc", "L", "K", "Z", "mu", "task_seed")


def register(sub) -> None:
    p = sub.add_parser(
        "data",
        help="write the training sentences of a preset, a run or a task (for certify/optimum/diagnose --data)",
        description="Write the training set the trainer uses (n_spl sentences per class drawn from the seed's "
        "stream) to an .npz sentence file: arrays S (N x L word indices), y (N labels), the task (Z, mu) and how "
        "they were drawn (n_spl, seed). Give a preset (--preset NAME), a run (a run directory or trainer "
        "checkpoint: its task, n_spl and seed), or a task (the task options) with --n-spl and --seed.",
    )
    p.add_argument("run", nargs="?", default=None, help="a run directory of 'fctheory train --out' or a checkpoint")
    g = p.add_argument_group("preset", "one of the paper's experiments instead of a run or the task options")
    g.add_argument("--preset", choices=PRESETS, default=None, help="the preset's task, n_spl and seed")
    g.add_argument("--quick", action="store_true", help="the preset's small version")
    add_task_arguments(p, random_Z=True, description="the task (a task file, or its parameters and a seed)")
    s = p.add_argument_group("sampling", "how many sentences, from which stream (defaults: the preset's or run's)")
    s.add_argument("--n-spl", type=integer(min=1, max=10**12), default=None, help="training sentences per class")
    s.add_argument("--seed", type=integer(min=0, max=2**63 - 1), default=None, help="the training seed (default 0)")
    p.add_argument("--out", required=True, metavar="FILE.npz", help="the sentence file to write (.npz)")
    add_format_options(p, csv_ok=False)
    p.set_defaults(func=run)


def run_training_set(rf, name: str = "WEIGHTS"):
    """(S, y, n_spl, seed) of a loaded run (:class:`fctheory.io.RunFiles`) from its task and configuration, or None
    when the run does not record them (a bare weights file)."""
    cfg = rf.config or {}
    if rf.task is None or cfg.get("n_spl") is None or cfg.get("seed") is None:
        return None
    n_spl = Int(min=1, max=10**12)(f"{name} (config n_spl)", cfg["n_spl"])
    seed = Int(min=0, max=2**63 - 1)(f"{name} (config seed)", cfg["seed"])
    S, y = training_sentences(rf.task, n_spl=n_spl, seed=seed)
    return S, y, n_spl, seed


def _source(args):
    """(task, n_spl, seed, what) from exactly one of RUN, --preset and the task options."""
    given = [o for o in _TASK_OPTIONS if getattr(args, o, None) is not None]
    if args.run is not None:  # the path first: a refusal names it whatever else is on the line
        args.run = PathIn(dir=os.path.isdir(args.run))("RUN", args.run)
    if args.preset is not None:
        if args.run is not None or given:
            fail("--preset", args.preset, "fixes the task: drop " + ("RUN" if args.run else f"--{given[0]}"))
        p = get_preset(args.preset, quick=args.quick)
        if args.seed is not None:  # as `fctheory train --preset NAME --seed S`: the task's seed too
            p = Preset(**{**p.__dict__, "seed": args.seed})
        n_spl = p.n_spl if args.n_spl is None else args.n_spl
        return p.task(), n_spl, p.seed, f"preset {p.name}{' (quick)' if args.quick else ''}"
    if args.quick:
        fail("--quick", True, "chooses a preset's small version: add --preset NAME")
    if args.run is not None:
        if given:
            fail(f"--{given[0].replace('_', '-')}", getattr(args, given[0]), "the run fixes the task: drop it")
        rf = load_run(args.run)
        if rf.task is None:
            fail("RUN", args.run, "records no task (a run directory or trainer checkpoint holds one)")
        cfg = rf.config or {}
        n_spl = args.n_spl if args.n_spl is not None else cfg.get("n_spl")
        seed = args.seed if args.seed is not None else cfg.get("seed")
        if n_spl is None or seed is None:
            fail("RUN", args.run, "records no n_spl or seed in its configuration: pass --n-spl and --seed")
        return rf.task, int(n_spl), int(seed), f"run {args.run}"
    task = task_from_args(args, random_Z=True)
    if args.n_spl is None:
        fail("--n-spl", None, "is required with the task options (training sentences per class)")
    return task, args.n_spl, 0 if args.seed is None else args.seed, "task options"


def run(args) -> int:
    out = PathOut()("--out", args.out)
    if not out.lower().endswith(".npz"):
        fail("--out", args.out, "a sentence file is an .npz: end the name with .npz")
    task, n_spl, seed, what = _source(args)
    S, y = training_sentences(task, n_spl=n_spl, seed=seed)
    save_sentences(out, S, y, task=task, n_spl=n_spl, seed=seed)
    res = {"path": os.path.abspath(out), "N": int(S.shape[0]), "L": int(S.shape[1]), "n_spl": n_spl, "seed": seed}
    if args.json:
        params = {"source": what, "preset": args.preset, "quick": bool(args.quick), "run": args.run}
        print_json("data", task=task, parameters=params, results=res)
        return 0
    say(f"fctheory data: the training sentences of the {what}: {task!r}")
    print(table([[k, v] for k, v in res.items() if k != "path"], ["quantity", "value"]))
    print(hint("written", os.path.abspath(out)))
    return 0
