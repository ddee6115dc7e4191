"""Mutation testing of fctheory with mutmut: ``python tools/mutation.py [--modules GLOB ...] [--jobs N]``.

mutmut (3.x) skips every function that carries a decorator other than ``@staticmethod``/``@classmethod``
(it cannot set up its trampoline under an arbitrary decorator). Every public fctheory function carries
``@public(...)`` (fctheory/_validate.py), so run on the tree as written mutmut would never mutate a public
function body. This script therefore works on a scratch copy (``.mutation/``, git-ignored) in which each

    @public(...)                      def f(...):
    def f(...):            becomes        ...
        ...                           f = public(...)(f)

— the same object, bound to the same name, by the definition that Python's decorator syntax abbreviates —
then runs ``mutmut run`` there with the default test selection (``-m 'not slow'``, i.e. the README's test
command) and writes per-module kill rates to ``.mutation/summary.json`` and a markdown table to stdout.
Numba-compiled kernels (``@njit``) stay unmutated unless ``--python-kernels`` is given: a sole ``@njit(...)``
is then rewritten the same way and mutmut runs with ``NUMBA_DISABLE_JIT=1`` (each kernel runs as Python).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shlex
import shutil
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRATCH = ROOT / ".mutation"
SOURCE = ROOT  # the tree to copy (--source: e.g. a git worktree of a commit, while the main tree is being edited)


def _is_njit(dec) -> bool:
    """``njit``, ``njit(...)``, ``numba.njit`` or ``numba.njit(...)``."""
    target = dec.func if isinstance(dec, ast.Call) else dec
    if isinstance(target, ast.Name):
        return target.id == "njit"
    return isinstance(target, ast.Attribute) and target.attr == "njit" and getattr(target.value, "id", None) == "numba"


def _is_public(dec) -> bool:
    return isinstance(dec, ast.Call) and getattr(dec.func, "id", None) == "public"


def undecorate(source: str, kernels: bool = False) -> str:
    """Rewrite ``@public(...)`` (sole or innermost decorator) into a trailing assignment.

    With ``kernels``, a sole ``@njit``/``@njit(...)``/``@numba.njit(...)`` decorator is rewritten the same way
    (``f = njit(...)(f)``); under ``NUMBA_DISABLE_JIT=1`` numba's ``njit`` then returns ``f`` itself, so the
    kernel runs, and is mutated, as plain Python. ``@njit`` under another decorator is left as is.
    """
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    edits = []  # (start, stop, body end, replacement line), applied bottom-up
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not node.decorator_list:
            continue
        decs = node.decorator_list
        last = decs[-1]  # innermost: applied first
        outer = decs[:-1]
        if kernels and _is_njit(last):
            if outer:
                continue  # not a plain kernel (e.g. a staticmethod of one): left as is
        elif not _is_public(last):
            continue
        elif outer and not all(getattr(d, "id", None) in ("staticmethod", "classmethod") for d in outer):
            continue  # left as is (mutmut skips it): rare, reported by the summary as unmutated
        indent = " " * node.col_offset
        dec_src = ast.get_source_segment(source, last)
        # from the decorator's '@' line (its arguments may span lines) to the line before 'def'
        start, stop = last.lineno - 1, node.lineno - 1
        wrap = f"{indent}{node.name} = {dec_src}({node.name})\n"
        if outer:  # staticmethod/classmethod stay on the def; the wrapper goes inside them
            kind = outer[-1].id
            wrap = f"{indent}{node.name} = {kind}({dec_src}({node.name}.__func__))\n"
        edits.append((start, stop, node.end_lineno, wrap))
    for start, stop, body_end, wrap in sorted(edits, key=lambda e: -e[0]):
        lines[body_end:body_end] = [wrap]
        del lines[start:stop]
    return "".join(lines)


# Tests that cannot run under mutmut's trampolines: proofs_check's library mutants patch functions by
# editing their source text, which mutmut has rewritten (they test the self-test machinery, not the library).
DESELECT = [
    "--deselect",
    "tests/proofs_check/test_library_mutants.py::test_library_mutant_is_caught_by_its_checks",
    "--deselect",
    "tests/proofs_check/test_main.py::test_self_test_plants_library_bugs_and_reports_them",
]


# The kernels rely on IEEE arithmetic without traps (numba's error_model="numpy": an overflow gives inf, a 0/0
# NaN, silently; e.g. Jacobi's rotation at a huge cotangent, a 1e200 feature squared). Run as Python the same
# float64 operations warn, and the test configuration turns warnings into errors: ignore those raised in the
# kernels' own modules (anywhere else a RuntimeWarning still fails its test).
KERNEL_WARNINGS = [
    "-W",
    "ignore::RuntimeWarning:fctheory._nc_kernels",
    "-W",
    "ignore::RuntimeWarning:fctheory.torch._kernels",
]


# the folders copied to the scratch tree (mutmut copies the tests itself, and also_copy names the rest)
_FOLDERS = ("fctheory", "proofs_check", "tests", "benchmarks", "docs")


def build_scratch(
    modules,
    jobs_timeout_multiplier=15.0,
    pytest_args=(),
    tests=(),
    fresh=False,
    isolation="forkserver",
    kernels=False,
    source_paths=("fctheory",),
):
    """Copy the tree to ``SCRATCH``, rewrite the decorators mutmut would skip, and add mutmut's configuration.

    ``source_paths`` are the top-level folders mutmut mutates (its ``source_paths``; ``modules`` selects files
    inside them); every other copied folder goes to ``also_copy``. The decorators are rewritten in those folders.
    """
    if SCRATCH.exists():
        keep = None if fresh else SCRATCH / "mutants"  # fresh: no results carried over from an earlier run
        for p in SCRATCH.iterdir():
            if p != keep:
                shutil.rmtree(p) if p.is_dir() else p.unlink()
    SCRATCH.mkdir(parents=True, exist_ok=True)
    for folder in _FOLDERS:
        shutil.copytree(SOURCE / folder, SCRATCH / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy(SOURCE / "README.md", SCRATCH / "README.md")
    n = 0
    source_paths = [str(sp).strip("/") for sp in source_paths]
    for sp in source_paths:
        if sp not in _FOLDERS:
            raise ValueError(f"source path {sp!r} is not one of the copied folders {_FOLDERS}")
    paths = [path for sp in source_paths for path in sorted((SCRATCH / sp).rglob("*.py"))]
    for path in paths:
        text = path.read_text()
        new = undecorate(text, kernels=kernels)
        if new != text:
            compile(new, str(path), "exec")
            path.write_text(new)
            n += 1
    pyproject = (SOURCE / "pyproject.toml").read_text()
    cfg = [
        "\n[tool.mutmut]",
        f"source_paths = {json.dumps(source_paths)}",
        "also_copy = "
        + json.dumps([f"{f}/" for f in _FOLDERS if f not in source_paths and f != "tests"] + ["README.md"]),
        f"only_mutate = {json.dumps(list(modules))}" if modules else "",
        "pytest_add_cli_args = "
        + json.dumps(
            [
                "-q",
                "-p",
                "no:cacheprovider",
                "-p",
                "no:xdist",
                *DESELECT,
                *(KERNEL_WARNINGS if kernels else ()),
                *pytest_args,
            ]
        ),
        f"timeout_multiplier = {jobs_timeout_multiplier}",
        # forkserver: workers fork from a process that never ran the suite. Forked straight from mutmut's
        # main process (which ran the stats pass), many workers here died of SIGTERM as their first test
        # started, reported as "suspicious"; the same mutants under forkserver are killed or survive
        f'process_isolation = "{isolation}"',
        # only these test files run (for the stats pass and for every mutant): a run on one module
        # with the tests written for it takes minutes instead of the whole suite per mutant
        f"pytest_add_cli_args_test_selection = {json.dumps(list(tests))}" if tests else "",
    ]
    if "[tool.mutmut]" not in pyproject:
        pyproject += "\n".join(c for c in cfg if c) + "\n"
    (SCRATCH / "pyproject.toml").write_text(pyproject)
    return n


def summarize():
    out = subprocess.run(
        [sys.executable, "-m", "mutmut", "results", "--all", "true"], cwd=SCRATCH, capture_output=True, text=True
    )
    per = defaultdict(Counter)
    for line in out.stdout.splitlines():
        line = line.strip()
        if ":" not in line or "__mutmut_" not in line:
            continue
        name, status = line.rsplit(":", 1)
        module = name.split(".x_")[0].split(".xǁ")[0]
        per[module][status.strip()] += 1
    rows = {}
    for module, c in sorted(per.items()):
        total = sum(c.values())
        killed = c.get("killed", 0) + c.get("timeout", 0) + c.get("segfault", 0)
        rows[module] = dict(c, total=total, kill_rate=killed / total if total else None)
    (SCRATCH / "summary.json").write_text(json.dumps(rows, indent=2))
    print("| module | mutants | killed | survived | timeout | suspicious | no tests | kill rate |")
    print("|---|---|---|---|---|---|---|---|")
    for module, r in rows.items():
        print(
            f"| {module} | {r['total']} | {r.get('killed', 0)} | {r.get('survived', 0)} | {r.get('timeout', 0)} | "
            f"{r.get('suspicious', 0)} | {r.get('no tests', 0)} | {100 * (r['kill_rate'] or 0):.1f}% |"
        )
    return rows


def main(argv=None):
    global SOURCE, SCRATCH
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--modules",
        nargs="*",
        default=[],
        help="glob(s) of files to mutate, e.g. 'fctheory/tau.py' (default: all of fctheory/)",
    )
    ap.add_argument("--jobs", type=int, default=os.cpu_count(), help="parallel mutant workers")
    ap.add_argument("--summary-only", action="store_true", help="only print the table of the last run")
    ap.add_argument("--source", default=str(ROOT), help="tree to mutate (default: this checkout)")
    ap.add_argument("--pytest-args", default="", help="extra pytest arguments, one string (e.g. '--deselect ID')")
    ap.add_argument(
        "--tests",
        nargs="*",
        default=[],
        help="test files/node ids to run (default: the whole default selection), e.g. tests/risk/",
    )
    ap.add_argument(
        "--scratch",
        default=str(SCRATCH),
        help="scratch folder (default .mutation/; concurrent runs need one each, e.g. .mutation/run2)",
    )
    ap.add_argument("--fresh", action="store_true", help="discard the results of an earlier run in the scratch folder")
    ap.add_argument(
        "--mutants",
        nargs="*",
        default=[],
        help="run only these mutants (names as `mutmut results` prints them), e.g. an earlier run's "
        "survivors and suspicious ones re-run with new tests",
    )
    ap.add_argument(
        "--isolation",
        choices=("forkserver", "fork"),
        default="forkserver",
        help="mutmut's process_isolation (default forkserver; see build_scratch)",
    )
    ap.add_argument(
        "--timeout-multiplier",
        type=float,
        default=15.0,
        help="mutmut's CPU-time limit per mutant, in multiples of its tests' time in the stats pass",
    )
    ap.add_argument(
        "--python-kernels",
        action="store_true",
        help="also mutate the numba kernels: rewrite a sole @njit as an assignment and run with NUMBA_DISABLE_JIT=1",
    )
    ap.add_argument(
        "--source-paths",
        nargs="+",
        default=["fctheory"],
        help="top-level folders mutmut mutates (default: fctheory), e.g. --source-paths fctheory proofs_check; "
        "--modules then selects files in any of them, e.g. proofs_check/type1_partial.py",
    )
    args = ap.parse_args(argv)
    SOURCE = Path(args.source).resolve()
    SCRATCH = Path(args.scratch).resolve()
    if not args.summary_only:
        n = build_scratch(
            args.modules,
            args.timeout_multiplier,
            pytest_args=shlex.split(args.pytest_args),
            tests=args.tests,
            fresh=args.fresh,
            isolation=args.isolation,
            kernels=args.python_kernels,
            source_paths=args.source_paths,
        )
        what = "@public and @njit" if args.python_kernels else "@public"
        print(f"scratch copy in {SCRATCH} ({n} files with {what} rewritten as assignments)", flush=True)
        env = dict(os.environ, PYTHONPATH=str(SCRATCH))
        if args.python_kernels:  # every kernel runs as plain Python: mutmut's trampolines work, nothing compiles
            env["NUMBA_DISABLE_JIT"] = "1"
        subprocess.run(
            [sys.executable, "-m", "mutmut", "run", "--max-children", str(args.jobs), *args.mutants],
            cwd=SCRATCH,
            env=env,
            check=False,
        )
    summarize()


if __name__ == "__main__":
    main()
