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
    from proofs_check.registry import get_checks

    from .._validate import fail

    # user errors are reported here, naming the option (one line, exit status 2)
    if args.only:  # "" means no filter
        pats = [p.strip() for p in args.only.split(",") if p.strip()]
        if not pats or "\x00" in args.only:
            fail("--only", args.only, "must be one or more comma-separated id patterns (globs or substrings)")
        if not get_checks(args.only, args.quick):
            fail("--only", args.only, "matches no check id" + (" in the --quick subset" if args.quick else "") + " (see --list)")
    return run_from_args(args)
