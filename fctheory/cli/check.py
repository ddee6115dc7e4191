"""``fctheory check``: the proofs_check runner (same options and checks as ``python -m proofs_check``).

The table is the runner's, narrowed to 100 columns; ``--json`` prints the ``fctheory/1`` object and
``--csv`` one row per check. proofs_check (sympy, cvxpy, Hypothesis and the whole table) is imported only
when the command runs, never when the parser is built: every other ``fctheory`` command stays light.
"""

from __future__ import annotations

import argparse
import textwrap
import time

from .._validate import fail
from ._output import print_csv, print_json

_OK = {"PASS", "CAUGHT"}
# id, statement, method, status, time: 27 + 33 + 19 + 6 + 7 + 4 separators of 2 = 100 columns
_WIDTHS = (27, 33, 19, 6, 7)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The runner's options (shared by ``python -m proofs_check`` and ``fctheory check``)."""
    parser.add_argument(
        "--only", metavar="PATTERN", help="run only checks whose id matches (glob or regex; comma-separated)"
    )
    parser.add_argument("--quick", action="store_true", help="the CI subset (< 2 min on 2 cores)")
    parser.add_argument(
        "--self-test",
        action="store_true",
        help="run every check against its mutant, and the checks against bugs planted in the library "
        "(proofs_check.library_mutants); pass iff all are caught (with --quick: without the "
        "numba-kernel mutants, which recompile)",
    )
    parser.add_argument("--json", action="store_true", help="print results as JSON")
    parser.add_argument("--list", action="store_true", help="list the checks (id, statement, method, mutant) and exit")


def register(subparsers):
    p = subparsers.add_parser(
        "check",
        help="run the paper's lemmas as symbolic / enumeration / Hypothesis / convex checks",
        description="Run proofs_check: every check prints id, statement, method, status and time; "
        "exit status 1 if any check fails (or, with --self-test, if any mutant is not caught).",
    )
    add_arguments(p)  # --only --quick --self-test --json --list
    p.add_argument("--csv", action="store_true", help="CSV: one header row, one row per check")
    p.set_defaults(func=_run)
    return p


def _line(values) -> str:
    return "  ".join(str(v)[:w].ljust(w) for v, w in zip(values, _WIDTHS)).rstrip()


def _say(text: str, indent: str = "") -> None:
    """Print ``text`` wrapped at 100 columns (continuation lines indented)."""
    print(textwrap.fill(text, 100, subsequent_indent=indent or "    ", break_on_hyphens=False), flush=True)


def _params(args) -> dict:
    return {
        "only": args.only or None,
        "quick": bool(args.quick),
        "self_test": bool(args.self_test),
        "list": bool(args.list),
        "mode": "self-test" if args.self_test else ("quick" if args.quick else "full"),
    }


def _selected(args) -> list:
    """The checks selected by ``--only``/``--quick``; user errors name the option (one line, exit status 2)."""
    from proofs_check.registry import get_checks  # noqa: PLC0415 - proofs_check loads on demand (sympy, cvxpy)

    if args.json and args.csv:
        fail("--csv", True, "cannot be combined with --json (choose one output format)")
    if args.only:  # "" means no filter
        pats = [p.strip() for p in args.only.split(",") if p.strip()]
        if not pats or "\x00" in args.only:
            fail("--only", args.only, "must be one or more comma-separated id patterns (globs or substrings)")
    checks = get_checks(args.only or None, args.quick)
    if not checks:
        subset = " in the --quick subset" if args.quick else ""
        fail("--only", args.only, f"matches no check id{subset} (see --list)")
    return checks


def _list(args, checks) -> int:
    from proofs_check.registry import listing, listing_text  # noqa: PLC0415 - proofs_check loads on demand

    listed = [listing(c) for c in checks]
    if args.json:
        print_json("check", task=None, parameters=_params(args), results={"checks": listed})
    elif args.csv:
        print_csv(listed, ["id", "statement", "method", "mutant", "quick", "library", "oracle"])
    else:
        for c in checks:
            print(listing_text(c))
    return 0


def _execute(args, checks, quiet: bool):
    """Run the checks (and with ``--self-test`` the library mutants), printing rows unless ``quiet``."""
    from proofs_check.library_mutants import run_mutants  # noqa: PLC0415 - proofs_check loads on demand
    from proofs_check.registry import run_checks  # noqa: PLC0415 - proofs_check loads on demand

    rule = "-" * (sum(_WIDTHS) + 2 * (len(_WIDTHS) - 1))
    if not quiet:
        mode = "self-test (mutants must FAIL)" if args.self_test else ("quick" if args.quick else "full")
        print(f"fctheory check: {len(checks)} checks, {mode}")
        print(_line(("id", "statement", "method", "status", "time")))
        print(rule)

    def show(res):
        if not quiet:
            print(_line((res.id, res.statement, res.method, res.status, f"{res.seconds:6.1f}s")), flush=True)
            if res.status not in _OK or args.self_test:
                _say(f"    -> {res.detail}", "       ")

    results = run_checks(args.only or None, quick=args.quick, self_test=args.self_test, on_result=show)
    lib_results = []
    if args.self_test:
        if not quiet:
            print(rule)
            print("library mutants (bugs planted in fctheory; the covering checks must FAIL)")
            print(_line(("mutant", "planted bug", "function", "status", "time")))
            print(rule)
        lib_results = run_mutants(check_ids={c.id for c in checks}, slow=not args.quick, on_result=show)
    return results, lib_results, rule


def _run(args) -> int:
    checks = _selected(args)
    if args.list:
        return _list(args, checks)
    t0 = time.perf_counter()
    results, lib_results, rule = _execute(args, checks, quiet=args.json or args.csv)
    total = time.perf_counter() - t0
    bad = [r for r in results if r.status not in _OK]
    lib_bad = [r for r in lib_results if r.status != "CAUGHT"]
    ok = not bad and not lib_bad
    if args.json:
        out = {"ok": ok, "seconds": total, "checks": [r.as_dict() for r in results]}
        if args.self_test:
            out["library_mutants"] = [r.as_dict() for r in lib_results]
        print_json("check", task=None, parameters=_params(args), results=out)
    elif args.csv:
        rows = [dict(r.as_dict(), kind="check") for r in results]
        rows += [dict(r.as_dict(), kind="library_mutant") for r in lib_results]
        print_csv(rows, ["kind", "id", "statement", "method", "status", "seconds", "assertions", "detail"])
    else:
        from proofs_check.registry import summary_lines  # noqa: PLC0415 - proofs_check loads on demand

        print(rule)
        for line in summary_lines(results, bad, lib_results, lib_bad, args.self_test):
            _say(line)
        print(f"total {total:.1f}s")
    return 0 if ok else 1
