"""The ``fctheory`` command line: one sub-command per module in this package.

Each sub-command module defines ``register(subparsers)`` which adds its parser and sets
``func`` (called with the parsed arguments, returning an exit status).

Exit statuses (docs/cli.md): 0 success; 2 a user error — an invalid option or input
(:class:`~fctheory.FCTheoryError`, argparse's own errors) — reported on one line naming the option;
1 any other failure (OSError, MemoryError, a bug …), also on one line; 130 interrupted (Ctrl-C).
``--debug`` (before or after the sub-command) adds the traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import traceback

from .. import __version__
from .._errors import FCTheoryError

# sub-command modules, in the order shown by --help
COMMANDS = ("predict", "optimum", "check", "train", "risk", "diagnose", "diagnose_features", "sweep")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fctheory",
        description="Feature-collapse theory: predictors, exact risk, theorem checks, training.",
    )
    parser.add_argument("--version", action="version", version=f"fctheory {__version__}")
    parser.add_argument(
        "--debug",
        action="store_true",
        help="show the full traceback of an error (accepted before or after the command)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMANDS:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 2000 else text[:1997] + "..."


def main(argv=None) -> int:
    """Run the command line on ``argv`` (default ``sys.argv[1:]``); returns the exit status.

    argparse's own errors (unknown option, bad option value) print the usage and one error line
    and raise ``SystemExit(2)``, as argparse does.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    # --debug is global: accepted anywhere on the line, so strip it before argparse sees it
    debug = "--debug" in argv
    argv = [a for a in argv if a != "--debug"]
    command = ""
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        command = f" {args.command}" if getattr(args, "command", None) else ""
        return int(args.func(args) or 0)
    except FCTheoryError as exc:
        if debug:
            traceback.print_exc()
        print(f"fctheory{command}: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        if debug:
            traceback.print_exc()
        detail = _one_line(exc)
        print(f"fctheory{command}: interrupted{': ' + detail if detail else ''}", file=sys.stderr)
        return 130
    except SystemExit:
        raise
    except BrokenPipeError:  # output piped into e.g. `head`, which closed it: not an error worth a message
        import os  # noqa: PLC0415

        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        except (OSError, ValueError):
            pass
        return 1
    except Exception as exc:  # noqa: BLE001 - a runtime failure: one line, the traceback only with --debug
        if debug:
            traceback.print_exc()
        hint = "" if debug else " (run with --debug for the traceback)"
        print(f"fctheory{command}: error: {type(exc).__name__}: {_one_line(exc)}{hint}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
