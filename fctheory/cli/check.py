"""``fctheory check``: the proofs_check runner (same options as ``python -m proofs_check``)."""
from __future__ import annotations


def register(subparsers):
    p = subparsers.add_parser(
        "check",
        help="run the paper's lemmas as symbolic / enumeration / Hypothesis / convex checks",
        description="Run proofs_check: every check prints id, statement, method, status and time; "
        "exit status 1 if any check fails (or, with --self-test, if any mutant is not caught).",
    )
    from proofs_check.__main__ import add_arguments

    add_arguments(p)
    p.set_defaults(func=_run)
    return p


def _run(args) -> int:
    from proofs_check.__main__ import run_from_args

    return run_from_args(args)
