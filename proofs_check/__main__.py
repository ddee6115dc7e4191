"""``python -m proofs_check``: run the paper's lemmas as checks and print a table.

Options: ``--only PATTERN`` (comma-separated globs / regexes on check ids), ``--quick`` (the CI subset),
``--self-test`` (every check against its deliberately wrong statement; passes only if all are caught),
``--json`` (machine-readable output), ``--list``. Exit status 0 when everything passes, 1 otherwise,
2 on invalid arguments.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from fctheory import FCTheoryError
from fctheory.cli.check import add_arguments  # the runner's options: one definition for both command lines

from .library_mutants import run_mutants
from .registry import get_checks, listing, listing_text, run_checks, summary_lines

_OK = {"PASS", "CAUGHT"}


def _table(rows, widths):
    return "  ".join(str(v)[:w].ljust(w) for v, w in zip(rows, widths))


def run_from_args(args) -> int:
    """Run the table as selected by parsed ``args``; return the exit status."""
    checks = get_checks(args.only, args.quick)
    if not checks:
        raise FCTheoryError(f"only={args.only!r} is invalid: matches no check id (see --list)")
    if args.list:
        if args.json:
            print(json.dumps([listing(c) for c in checks], indent=1))
        else:
            for c in checks:
                print(listing_text(c))
        return 0
    widths = (32, 56, 19, 6, 8)
    if not args.json:
        mode = "self-test (mutants must FAIL)" if args.self_test else ("quick" if args.quick else "full")
        print(f"proofs_check: {len(checks)} checks, {mode}")
        print(_table(("id", "statement", "method", "status", "time"), widths))
        print("-" * (sum(widths) + 8))

    def show(res):
        if not args.json:
            print(_table((res.id, res.statement, res.method, res.status, f"{res.seconds:7.2f}s"), widths), flush=True)
            if res.status not in _OK or args.self_test:
                print(f"    -> {res.detail}", flush=True)

    t0 = time.perf_counter()
    results = run_checks(args.only, quick=args.quick, self_test=args.self_test, on_result=show)
    lib_results = []
    if args.self_test:
        if not args.json:
            print("-" * (sum(widths) + 8))
            print("library mutants (bugs planted in fctheory; the covering checks must FAIL)")
            print(_table(("mutant", "planted bug", "function", "status", "time"), widths))
            print("-" * (sum(widths) + 8))
        lib_results = run_mutants(check_ids={c.id for c in checks}, slow=not args.quick, on_result=show)
    total = time.perf_counter() - t0
    bad = [r for r in results if r.status not in _OK]
    lib_bad = [r for r in lib_results if r.status != "CAUGHT"]
    if args.json:
        out = {
            "mode": "self-test" if args.self_test else ("quick" if args.quick else "full"),
            "ok": not bad and not lib_bad,
            "seconds": total,
            "results": [r.as_dict() for r in results],
        }
        if args.self_test:
            out["library_mutants"] = [r.as_dict() for r in lib_results]
        print(json.dumps(out, indent=1))
    else:
        print("-" * (sum(widths) + 8))
        for line in summary_lines(results, bad, lib_results, lib_bad, args.self_test):
            print(line)
        print(f"total {total:.1f}s")
    return 0 if not bad and not lib_bad else 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m proofs_check", description="Run the paper's lemmas as checks and print a table."
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run_from_args(args)
    except FCTheoryError as exc:
        print(f"proofs_check: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
