"""``fctheory sweep SPEC.toml``: run a sweep (resumable), print a summary, optionally draw its phase diagram."""

from __future__ import annotations

import os

from .._validate import fail
from ..sweep import KINDS, load_spec, plot, sweep
from ._output import add_format_options, print_csv, print_json, say


def register(sub) -> None:
    p = sub.add_parser(
        "sweep",
        help="run a grid / random sweep from a TOML spec (local processes or Dask), resumable, Parquet table",
        description="Run every point of SPEC (a TOML file: target, [fixed], [grid], [random], seeds, executor, "
        "output). Finished points in the output folder are skipped, so an interrupted sweep resumes where it "
        "stopped. The table is OUTPUT/results.parquet; --plot draws the phase diagram next to it.",
    )
    p.add_argument("spec", help="the sweep spec (TOML); see docs/sweeps.md")
    p.add_argument("--executor", choices=("local", "dask"), default=None, help="override the spec's executor")
    p.add_argument("--workers", type=int, default=None, help="processes (local) or LocalCluster workers (dask)")
    p.add_argument("--address", default=None, help="dask scheduler address (implies --executor dask)")
    p.add_argument("--output", default=None, help="override the spec's output folder")
    p.add_argument("--max-points", type=int, default=None, help="stop after this many new points (resume later)")
    p.add_argument("--retry-errors", action="store_true", help="recompute points recorded with an error")
    p.add_argument(
        "--plot",
        nargs="?",
        const="spec",
        default=None,
        help="draw the phase diagram (kind: auto, tau, type3, collapse, line; default: the spec's "
        "plot or auto) to OUTPUT/plot-<kind>.png",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_format_options(p, csv_ok=True, json_help="print the summary as the fctheory/1 JSON object")
    p.set_defaults(func=run_sweep)


def run_sweep(args) -> int:
    if args.workers is not None and args.workers < 1:
        fail("--workers", args.workers, "must be >= 1")
    if args.max_points is not None and args.max_points < 0:
        fail("--max-points", args.max_points, "must be >= 0")
    spec = load_spec(args.spec, output=args.output)
    kind = None
    if args.plot is not None:
        kind = (spec.plot or "auto") if args.plot == "spec" else args.plot
        if kind not in KINDS:
            fail("--plot", args.plot, f"must be one of {list(KINDS)}")
    table = sweep(
        spec,
        executor=args.executor,
        workers=args.workers,
        address=args.address,
        max_points=args.max_points,
        progress=not args.no_progress and not (args.json or args.csv),
        retry_errors=args.retry_errors,
    )
    n_err = int((table["status"] == "error").sum()) if len(table) else 0
    fig = None
    if kind is not None and len(table):
        if spec.output is None:
            fail("--plot", args.plot, "needs an output folder (output = ... in the spec, or --output)")
        fig = plot(table, os.path.join(spec.output, f"plot-{kind}.png"), kind=kind)
    summary = {
        "points": table.attrs.get("points"),
        "finished": len(table),
        "ran": table.attrs.get("ran"),
        "errors": n_err,
        "complete": bool(table.attrs.get("complete")),
        "table": os.path.join(spec.output, "results.parquet") if spec.output else None,
        "plot": fig,
    }
    if args.json:
        params = {
            "spec": os.path.abspath(args.spec),
            "name": spec.name,
            "target": spec.target,
            "executor": args.executor,
            "workers": args.workers,
            "address": args.address,
            "output": spec.output,
            "max_points": args.max_points,
            "retry_errors": bool(args.retry_errors),
            "plot": kind,
        }
        print_json("sweep", task=None, parameters=params, results=summary)
        return 0
    if args.csv:
        print_csv(table.to_dict("records"), [str(c) for c in table.columns])
        return 0
    say(
        f"sweep {spec.name or spec.target}: {summary['finished']}/{summary['points']} points finished "
        f"({summary['ran']} run now, {n_err} with errors)"
        + ("" if summary["complete"] else " — incomplete: run again to resume")
    )
    if summary["table"]:
        say(f"table: {summary['table']}")
    if fig:
        say(f"plot: {fig}")
    if n_err:
        first = table.loc[table["status"] == "error", "error"].iloc[0]
        say(f"first error: {first}")
    return 0
