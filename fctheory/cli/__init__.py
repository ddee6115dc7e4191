"""The ``fctheory`` command line: one sub-command per module in this package.

Each sub-command module defines ``register(subparsers)`` which adds its parser and sets
``func`` (called with the parsed arguments, returning an exit status).
"""
from __future__ import annotations

import argparse
import importlib
import sys

from .._errors import FCTheoryError

# sub-command modules, in the order shown by --help
COMMANDS = ("predict", "check", "train", "risk")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fctheory",
        description="Feature-collapse theory: predictors, exact risk, theorem checks, training.",
    )
    from .. import __version__

    parser.add_argument("--version", action="version", version=f"fctheory {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMANDS:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except FCTheoryError as exc:
        print(f"fctheory {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # pragma: no cover
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
