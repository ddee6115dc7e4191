"""``fctheory train`` and ``fctheory reproduce``: the reference trainer and the paper's experiments."""
from __future__ import annotations

import json
import os
import sys

from .._validate import fail


def register(sub) -> None:
    p = sub.add_parser(
        "train",
        help="train h / h* with SGD on a preset of the paper (fig3, fig4a, fig4b, fig4c, k50)",
        description="Train the network of a preset with the reference trainer, print the measurements next "
        "to the theory's prediction, and (with --out) write the checkpoint, a JSON summary and the figures. "
        "A run is resumed from OUT/<preset>.ckpt.npz when that file exists; Ctrl-C saves a checkpoint.",
    )
    p.add_argument("--preset", required=True, choices=("fig3", "fig4a", "fig4b", "fig4c", "k50"))
    p.add_argument("--quick", action="store_true", help="tiny version of the preset (seconds; for CI)")
    p.add_argument("--backend", default="numba", choices=("numba", "numpy", "cupy"))
    p.add_argument("--dtype", default="float32", choices=("float32", "float64"))
    p.add_argument("--epochs", type=int, default=None, help="override the preset's number of epochs")
    p.add_argument("--seed", type=int, default=None, help="override the preset's seed (0)")
    p.add_argument("--out", default=None, help="folder for checkpoint, summary JSON and figures")
    p.add_argument("--no-progress", action="store_true", help="no tqdm progress bar")
    p.add_argument("--json", action="store_true", help="print the JSON summary instead of a table")
    p.set_defaults(func=run_train)

    r = sub.add_parser(
        "reproduce",
        help="run every preset and write a markdown report (paper | notebook | theory | ours)",
        description="Run fig3, fig4a, fig4b, fig4c and k50 (finished checkpoints in OUT are reused, partial ones "
        "resumed) and write OUT/report.md with the paper's numbers, the authors' notebook numbers, the "
        "theory's predictions and ours side by side, with the figures.",
    )
    r.add_argument("--quick", action="store_true", help="tiny versions (seconds)")
    r.add_argument("--backend", default="numba", choices=("numba", "numpy", "cupy"))
    r.add_argument("--dtype", default="float32", choices=("float32", "float64"))
    r.add_argument("--out", default="fctheory-reproduction", help="output folder (default ./fctheory-reproduction)")
    r.add_argument("--presets", default="fig3,fig4a,fig4b,fig4c,k50", help="comma-separated subset")
    r.add_argument("--no-train", action="store_true",
                   help="train nothing: build the report from the checkpoints already in OUT (partial ones included)")
    r.add_argument("--no-progress", action="store_true", help="no tqdm progress bar")
    r.add_argument("--json", action="store_true", help="print the acceptance results as JSON")
    r.set_defaults(func=run_reproduce)


def _table(rows):
    from ..trainer.reproduce import _fmt  # noqa: PLC0415

    w = max(len(r[0]) for r in rows)
    out = [f"{'quantity':<{w}}  {'ours':>14}  {'theory':>14}"]
    for q, obs, pred in rows:
        out.append(f"{q:<{w}}  {_fmt(obs):>14}  {_fmt(pred):>14}")
    return "\n".join(out)


def run_train(args) -> int:
    from ..trainer.core import TrainingInterrupted, _jsonable  # noqa: PLC0415
    from ..trainer.reproduce import acceptance, quick_acceptance, run_preset  # noqa: PLC0415

    if args.epochs is not None and args.epochs < 0:
        fail("--epochs", args.epochs, "must be >= 0")
    try:
        run = run_preset(args.preset, quick=args.quick, backend=args.backend, dtype=args.dtype, out=args.out,
                         progress=not args.no_progress and not args.json, epochs=args.epochs, seed=args.seed)
    except TrainingInterrupted as exc:
        print(f"interrupted: checkpoint saved to {exc.checkpoint}; run the same command to resume",
              file=sys.stderr)
        return 130
    acc = quick_acceptance(run, args.preset) if args.quick else acceptance(args.preset, run)
    if args.json:
        s = run.summary()
        s["acceptance"] = acc
        print(json.dumps(_jsonable(s)))
        return 0
    c = run.config
    print(f"preset {args.preset}{' (quick)' if args.quick else ''}: {run.task!r}, d={c.d}, n_spl={c.n_spl}, "
          f"{'h*' if c.layernorm else 'h'}, {c.backend}/{c.dtype}, {run.epochs_done} epochs in {run.wall_time:.1f} s")
    m = run.measurements
    if m.predicted.get("theorem"):
        print(f"theory: {m.predicted['theorem']}")
    print(_table(m.comparison()))
    for k, v in acc.items():
        print(f"acceptance: {k}: {'met' if v else 'NOT met'}")
    if args.out:
        print(f"outputs in {os.path.abspath(args.out)}")
    return 0


def run_reproduce(args) -> int:
    from ..trainer.core import TrainingInterrupted  # noqa: PLC0415
    from ..trainer.presets import PRESETS  # noqa: PLC0415
    from ..trainer.reproduce import reproduce  # noqa: PLC0415

    names = [s.strip() for s in args.presets.split(",") if s.strip()]
    for n in names:
        if n not in PRESETS:
            fail("--presets", args.presets, f"unknown preset {n!r}; choose from {list(PRESETS)}")
    try:
        res = reproduce(args.out, quick=args.quick, backend=args.backend, dtype=args.dtype, presets=names,
                        progress=not args.no_progress and not args.json, train_missing=not args.no_train)
    except TrainingInterrupted as exc:
        print(f"interrupted: checkpoint saved to {exc.checkpoint}; run the same command to resume",
              file=sys.stderr)
        return 130
    if args.json:
        print(json.dumps({"report": os.path.abspath(res["report"]), "acceptance": res["acceptance"]}))
    else:
        for name, acc in res["acceptance"].items():
            print(f"{name}: " + "; ".join(f"{k}: {'met' if v else 'NOT met'}" for k, v in acc.items()))
        print(f"report: {os.path.abspath(res['report'])}")
    return 0
