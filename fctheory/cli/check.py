"""``fctheory check``: the proofs_check runner (same options and checks as ``python -m proofs_check``).

The table is the runner's, narrowed to 100 columns; ``--json`` prints the ``fctheory/1`` object and
``--csv`` one row per check.
"""

from __future__ import annotations

import time

_OK = {"PASS", "CAUGHT"}
# id, statement, method, status, time: 27 + 33 + 19 + 6 + 7 + 4 separators of 2 = 100 columns
_WIDTHS = (27, 33, 19, 6, 7)


def register(subparsers):
    p = subparsers.add_parser(
        "check",
        help="run the paper's lemmas as symbolic / enumeration / Hypothesis / convex checks",
        description="Run proofs_check: every check prints id, statement, method, status and time; "
        "exit status 1 if any check fails (or, with --self-test, if any mutant is not caught).",
    )
    from proofs_check.__main__ import add_arguments

    add_arguments(p)  # --only --quick --self-test --json --list
    p.add_argument("--csv", action="store_true", help="CSV: one header row, one row per check")
    p.set_defaults(func=_run)
    return p


def _line(values) -> str:
    return "  ".join(str(v)[:w].ljust(w) for v, w in zip(values, _WIDTHS)).rstrip()


def _say(text: str, indent: str = "") -> None:
    """Print ``text`` wrapped at 100 columns (continuation lines indented)."""
    import textwrap

    print(textwrap.fill(text, 100, subsequent_indent=indent or "    ", break_on_hyphens=False), flush=True)


def _params(args) -> dict:
    return {
        "only": args.only or None,
        "quick": bool(args.quick),
        "self_test": bool(args.self_test),
        "list": bool(args.list),
        "mode": "self-test" if args.self_test else ("quick" if args.quick else "full"),
    }


def _run(args) -> int:
    from proofs_check.registry import get_checks, run_checks

    from .._validate import fail
    from ._output import print_csv, print_json

    if args.json and args.csv:
        fail("--csv", True, "cannot be combined with --json (choose one output format)")
    # user errors are reported here, naming the option (one line, exit status 2)
    if args.only:  # "" means no filter
        pats = [p.strip() for p in args.only.split(",") if p.strip()]
        if not pats or "\x00" in args.only:
            fail("--only", args.only, "must be one or more comma-separated id patterns (globs or substrings)")
    checks = get_checks(args.only or None, args.quick)
    if not checks:
        fail(
            "--only",
            args.only,
            "matches no check id" + (" in the --quick subset" if args.quick else "") + " (see --list)",
        )
    if args.list:
        from proofs_check.__main__ import listing, listing_text  # noqa: PLC0415

        listed = [listing(c) for c in checks]
        if args.json:
            print_json("check", task=None, parameters=_params(args), results={"checks": listed})
        elif args.csv:
            print_csv(listed, ["id", "statement", "method", "mutant", "quick", "library", "oracle"])
        else:
            for c in checks:
                print(listing_text(c))
        return 0
    quiet = args.json or args.csv
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

    t0 = time.perf_counter()
    results = run_checks(args.only or None, quick=args.quick, self_test=args.self_test, on_result=show)
    lib_results = []
    if args.self_test:
        from proofs_check.library_mutants import run_mutants

        if not quiet:
            print(rule)
            print("library mutants (bugs planted in fctheory; the covering checks must FAIL)")
            print(_line(("mutant", "planted bug", "function", "status", "time")))
            print(rule)
        lib_results = run_mutants(check_ids={c.id for c in checks}, slow=not args.quick, on_result=show)
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
        rows = [dict(r.as_dict(), kind="check") for r in results] + [
            dict(r.as_dict(), kind="library_mutant") for r in lib_results
        ]
        print_csv(rows, ["kind", "id", "statement", "method", "status", "seconds", "assertions", "detail"])
    else:
        from proofs_check.__main__ import summary_lines  # noqa: PLC0415

        print(rule)
        for line in summary_lines(results, bad, lib_results, lib_bad, args.self_test):
            _say(line)
        print(f"total {total:.1f}s")
    return 0 if ok else 1
