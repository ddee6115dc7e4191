"""``fctheory train`` and ``fctheory reproduce``: the reference trainer and the paper's experiments."""

from __future__ import annotations

import os
import shlex
import sys

from .._budget import check_work
from .._files import write_json
from .._validate import Int, PathOut, Real, fail
from ..io import save_run, save_task, to_json
from ..trainer.core import TrainingInterrupted, load_checkpoint, train
from ..trainer.presets import PRESETS
from ..trainer.reproduce import acceptance, format_value, quick_acceptance, reproduce, run_preset
from ._output import print_json, say
from ._table import hint, table
from ._task_options import add_task_arguments, task_from_args


def register(sub) -> None:
    p = sub.add_parser(
        "train",
        help="train h / h* with SGD: a preset of the paper, or any task and hyper-parameters",
        description="Train the network with the reference trainer and print the measurements next to the "
        "theory's prediction. With --preset: one of the paper's experiments (checkpoint, JSON summary and "
        "figures in --out; resumed from OUT/<preset>.ckpt.npz when present). Without: any task (--task "
        "TASK.json, or --nc --sc --L [--K] [--Z] [--mu]) and any hyper-parameters; --out DIR writes a run "
        "directory (weights.npz, task.json, config.json, summary.json, checkpoint.npz) that "
        "'fctheory diagnose DIR' reads directly. Ctrl-C saves a checkpoint.",
    )
    p.add_argument(
        "--preset",
        default=None,
        choices=("fig3", "fig4a", "fig4b", "fig4c", "k50"),
        help="one of the paper's experiments: its task, network and hyper-parameters (docs/reproduction.md)",
    )
    p.add_argument("--quick", action="store_true", help="tiny version of the preset (seconds; for CI)")
    p.add_argument(
        "--backend",
        default="numba",
        choices=("numba", "numpy", "cupy"),
        help="training engine: numba kernels (default), plain NumPy, or CuPy on a CUDA device",
    )
    p.add_argument(
        "--dtype",
        default="float32",
        choices=("float32", "float64"),
        help="floating-point type of the weights (default float32)",
    )
    p.add_argument("--epochs", type=int, default=None, help="number of epochs (default: the preset's, else 100)")
    p.add_argument("--seed", type=int, default=None, help="seed of data, initialisation and shuffles (default 0)")
    p.add_argument("--out", default=None, help="folder for the outputs (preset files, or a run directory)")
    p.add_argument("--no-progress", action="store_true", help="no tqdm progress bar")
    p.add_argument("--json", action="store_true", help="print the fctheory/1 JSON object instead of a table")

    add_task_arguments(p, random_Z=True)
    h = p.add_argument_group("hyper-parameters (without --preset; defaults as fctheory.train)")
    h.add_argument("--d", type=int, default=None, help="embedding dimension (default 100)")
    h.add_argument("--n-spl", type=int, default=None, help="training sentences per class (default 5)")
    h.add_argument("--lr", type=float, default=None, help="SGD learning rate (default 0.1)")
    h.add_argument("--batch", type=int, default=None, help="minibatch size (default 100)")
    h.add_argument("--lam-W", type=float, default=None, help="weight decay on W (default 1e-3)")
    h.add_argument("--lam-U", type=float, default=None, help="weight decay on U (default 1e-3)")
    h.add_argument("--layernorm", action="store_true", default=None, help="network h* (LayerNorm φ)")
    h.add_argument("--eps", type=float, default=None, help="LayerNorm epsilon (default 1e-5 as PyTorch)")
    h.add_argument("--init-scale", type=float, default=None, help="initial weights = PyTorch defaults x this (1e-3)")
    h.add_argument("--n-test", type=int, default=None, help="test sentences per class (default 5)")
    p.set_defaults(func=run_train)

    r = sub.add_parser(
        "reproduce",
        help="run every preset and write a markdown report (paper | notebook | theory | ours)",
        description="Run fig3, fig4a, fig4b, fig4c and k50 (finished checkpoints in OUT are reused, partial ones "
        "resumed) and write OUT/report.md with the paper's numbers, the authors' notebook numbers, the "
        "theory's predictions and ours side by side, with the figures.",
    )
    r.add_argument("--quick", action="store_true", help="tiny versions (seconds)")
    r.add_argument(
        "--backend",
        default="numba",
        choices=("numba", "numpy", "cupy"),
        help="training engine: numba kernels (default), plain NumPy, or CuPy on a CUDA device",
    )
    r.add_argument(
        "--dtype",
        default="float32",
        choices=("float32", "float64"),
        help="floating-point type of the weights (default float32)",
    )
    r.add_argument("--out", default="fctheory-reproduction", help="output folder (default ./fctheory-reproduction)")
    r.add_argument("--presets", default="fig3,fig4a,fig4b,fig4c,k50", help="comma-separated subset")
    r.add_argument(
        "--no-train",
        action="store_true",
        help="train nothing: build the report from the checkpoints already in OUT (partial ones included)",
    )
    r.add_argument("--no-progress", action="store_true", help="no tqdm progress bar")
    r.add_argument("--json", action="store_true", help="print the acceptance results as JSON")
    r.set_defaults(func=run_reproduce)


def _table(rows):

    # at most 100 columns: a long cell (an "unavailable (...)" reason) is wrapped by table()
    return table([[q, format_value(obs), format_value(pred)] for q, obs, pred in rows], ["quantity", "ours", "theory"])


_CUSTOM = (
    "d",
    "n_spl",
    "lr",
    "batch",
    "lam_W",
    "lam_U",
    "layernorm",
    "eps",
    "init_scale",
    "n_test",
    "task",
    "nc",
    "sc",
    "L",
    "K",
    "Z",
    "mu",
    "task_seed",
)


def run_train(args) -> int:

    if args.epochs is not None and args.epochs < 0:
        fail("--epochs", args.epochs, "must be >= 0")
    if args.preset is None:
        return run_custom(args)
    given = [k for k in _CUSTOM if getattr(args, k, None) is not None]
    if args.normalize_mu:
        given.append("normalize_mu")
    if given:
        fail(
            "--preset",
            args.preset,
            f"fixes the task and hyper-parameters; drop --{given[0].replace('_', '-')} "
            "(or drop --preset to train a task of your own)",
        )
    try:
        run = run_preset(
            args.preset,
            quick=args.quick,
            backend=args.backend,
            dtype=args.dtype,
            out=args.out,
            progress=not args.no_progress and not args.json,
            epochs=args.epochs,
            seed=args.seed,
        )
    except TrainingInterrupted as exc:
        print(f"interrupted: checkpoint saved to {exc.checkpoint}; run the same command to resume", file=sys.stderr)
        return 130
    acc = quick_acceptance(run, name=args.preset) if args.quick else acceptance(args.preset, run)
    if args.json:
        s = run.summary()
        s["acceptance"] = acc
        if args.out:
            s["out"] = os.path.abspath(args.out)
        _print_summary(run, s, {"preset": args.preset, "quick": bool(args.quick)})
        return 0
    c = run.config
    say(
        f"preset {args.preset}{' (quick)' if args.quick else ''}: {run.task!r}, d={c.d}, n_spl={c.n_spl}, "
        f"{'h*' if c.layernorm else 'h'}, {c.backend}/{c.dtype}, {run.epochs_done} epochs in {run.wall_time:.1f} s"
    )
    m = run.measurements
    if m.predicted:
        print(f"theory: {m.predicted['theorem'] or m.predicted['provenance']}")
    print(_table(m.comparison()))
    for k, v in acc.items():
        print(f"acceptance: {k}: {'met' if v else 'NOT met'}")
    if args.out:
        print(hint("outputs in", os.path.abspath(args.out)))
    return 0


def run_custom(args) -> int:
    """Train any task with any hyper-parameters; --out writes a run directory that diagnose reads."""
    if args.quick:
        fail("--quick", True, "only applies to --preset")
    if args.out is not None:
        PathOut(dir=True)("--out", args.out)
    task = task_from_args(args, random_Z=True)

    kw, n_spl = _custom_hyperparameters(args)

    # the weights and the training set must fit the memory budget before anything is allocated
    n_weights = kw["d"] * (task.n_w + task.K * task.L)
    check_work(
        "--d",
        kw["d"],
        bytes=8 * (n_weights + task.K * task.L * (n_spl + kw["n_test"])),
        what="the weights and sentences of this run",
    )
    ckpt, resume = _prepare_out(args, task, kw["epochs"])
    try:
        run = train(
            task,
            n_spl=n_spl,
            checkpoint=ckpt,
            checkpoint_every=max(1, kw["epochs"] // 20) if ckpt else None,
            resume=resume,
            progress=not args.no_progress and not args.json,
            keep_data=False,
            **kw,
        )
    except TrainingInterrupted as exc:
        print(f"interrupted: checkpoint saved to {exc.checkpoint}; run the same command to resume", file=sys.stderr)
        return 130
    summary = to_json(run.summary())
    if args.out is not None:
        save_run(args.out, task, run.W, run.U, run.config.to_dict())
        write_json(os.path.join(args.out, "summary.json"), summary, name="--out")
    if args.json:
        s = run.summary()
        if args.out is not None:
            s["run_dir"] = os.path.abspath(args.out)
        _print_summary(run, s, {"preset": None, "n_spl": n_spl})
        return 0
    _print_run(run, args.out)
    return 0


def _custom_hyperparameters(args) -> tuple[dict, int]:
    """The keyword arguments of ``train`` from the options (a default where an option is absent), and n_spl."""

    def val(name, flag, kind, default):
        v = getattr(args, name)
        return default if v is None else kind(flag, v)

    kw = dict(
        d=val("d", "--d", Int(min=1, max=10**6), 100),
        layernorm=bool(args.layernorm),
        eps=val("eps", "--eps", Real(lo=0), 1e-5),
        lr=val("lr", "--lr", Real(lo=0, lo_open=True), 0.1),
        batch=val("batch", "--batch", Int(min=1), 100),
        epochs=val("epochs", "--epochs", Int(min=0), 100),
        lam_W=val("lam_W", "--lam-W", Real(lo=0), 1e-3),
        lam_U=val("lam_U", "--lam-U", Real(lo=0), 1e-3),
        seed=val("seed", "--seed", Int(min=0), 0),
        backend=args.backend,
        dtype=args.dtype,
        init_scale=val("init_scale", "--init-scale", Real(lo=0, lo_open=True), 1e-3),
        n_test=val("n_test", "--n-test", Int(min=0), 5),
    )
    return kw, val("n_spl", "--n-spl", Int(min=1), 5)


def _prepare_out(args, task, epochs: int):
    """Checkpoint path and resume source in the run directory ``--out`` (None, None without one)."""
    ckpt = resume = None
    if args.out is not None:
        os.makedirs(args.out, exist_ok=True)
        ckpt = os.path.join(args.out, "checkpoint.npz")
        if os.path.exists(ckpt):
            old = load_checkpoint(ckpt)
            if old["epochs_done"] > epochs:
                fail("--epochs", epochs, f"the run in {args.out} already has {old['epochs_done']} epochs")
            resume = ckpt
        save_task(task, os.path.join(args.out, "task.json"))
    return ckpt, resume


def _print_run(run, out) -> None:
    """The human-readable end of ``fctheory train``: the run, the theory beside it, copyable hints."""
    c = run.config
    say(
        f"{run.task!r}, d={c.d}, n_spl={c.n_spl}, {'h*' if c.layernorm else 'h'}, {c.backend}/{c.dtype}, "
        f"{run.epochs_done} epochs in {run.wall_time:.1f} s"
    )
    m = run.measurements
    if m is not None:
        if m.predicted:
            print(f"theory: {m.predicted['theorem'] or m.predicted['provenance']}")
        print(_table(m.comparison()))
    if out:
        # a path and a command the user copies: never wrapped, however long
        print(hint("run directory", os.path.abspath(out)))
        print(hint("diagnose it with", f"fctheory diagnose {shlex.quote(out)}"))


def _print_summary(run, summary, extra_params) -> None:
    """The fctheory/1 object of a training run: the task, the configuration as parameters, the rest as results."""
    summary = dict(summary)
    summary.pop("task", None)
    params = dict(extra_params, **summary.pop("config", {}))
    print_json("train", task=run.task, parameters=params, results=summary)


def run_reproduce(args) -> int:

    names = [s.strip() for s in args.presets.split(",") if s.strip()]
    for n in names:
        if n not in PRESETS:
            fail("--presets", args.presets, f"unknown preset {n!r}; choose from {list(PRESETS)}")
    try:
        res = reproduce(
            args.out,
            quick=args.quick,
            backend=args.backend,
            dtype=args.dtype,
            presets=names,
            progress=not args.no_progress and not args.json,
            train_missing=not args.no_train,
        )
    except TrainingInterrupted as exc:
        print(f"interrupted: checkpoint saved to {exc.checkpoint}; run the same command to resume", file=sys.stderr)
        return 130
    if args.json:
        print_json(
            "reproduce",
            task=None,
            parameters={
                "presets": names,
                "quick": bool(args.quick),
                "backend": args.backend,
                "dtype": args.dtype,
                "out": os.path.abspath(args.out),
                "train": not args.no_train,
            },
            results={"report": os.path.abspath(res["report"]), "acceptance": res["acceptance"]},
        )
    else:
        for name, acc in res["acceptance"].items():
            say(f"{name}: " + "; ".join(f"{k}: {'met' if v else 'NOT met'}" for k, v in acc.items()))
        print(hint("report", os.path.abspath(res["report"])))
    return 0
