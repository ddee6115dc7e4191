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
Numba-compiled kernels (``@njit``) stay unmutated: their NumPy twins are mutated and tested against them.
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


def undecorate(source: str) -> str:
    """Rewrite ``@public(...)`` (sole or innermost decorator) into a trailing assignment."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    edits = []  # (start, end, replacement lines), applied bottom-up
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not node.decorator_list:
            continue
        decs = node.decorator_list
        last = decs[-1]  # innermost: applied first
        if not (isinstance(last, ast.Call) and getattr(last.func, "id", None) == "public"):
            continue
        outer = decs[:-1]
        if outer and not all(getattr(d, "id", None) in ("staticmethod", "classmethod") for d in outer):
            continue  # left as is (mutmut skips it): rare, reported by the summary as unmutated
        indent = " " * node.col_offset
        dec_src = ast.get_source_segment(source, last)
        # the decorator lines of @public(...): from its '@' line to the line before the next decorator/def
        start = last.lineno - 1
        stop = (node.lineno - 1) if True else None
        # node.lineno is the 'def' line in 3.8+; remove @public lines only
        body_end = node.end_lineno
        wrap = f"{indent}{node.name} = {dec_src}({node.name})\n"
        if outer:  # staticmethod/classmethod stay on the def; the wrapper goes inside them
            kind = outer[-1].id
            wrap = f"{indent}{node.name} = {kind}({dec_src}({node.name}.__func__))\n"
        edits.append((start, stop, body_end, wrap))
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


def build_scratch(modules, jobs_timeout_multiplier=15.0, pytest_args=(), tests=(), fresh=False, isolation="forkserver"):
    if SCRATCH.exists():
        keep = None if fresh else SCRATCH / "mutants"  # fresh: no results carried over from an earlier run
        for p in SCRATCH.iterdir():
            if p != keep:
                shutil.rmtree(p) if p.is_dir() else p.unlink()
    SCRATCH.mkdir(parents=True, exist_ok=True)
    for folder in ("fctheory", "proofs_check", "tests", "benchmarks", "docs"):
        shutil.copytree(SOURCE / folder, SCRATCH / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy(SOURCE / "README.md", SCRATCH / "README.md")
    n = 0
    for path in (SCRATCH / "fctheory").rglob("*.py"):
        text = path.read_text()
        new = undecorate(text)
        if new != text:
            compile(new, str(path), "exec")
            path.write_text(new)
            n += 1
    pyproject = (SOURCE / "pyproject.toml").read_text()
    cfg = [
        "\n[tool.mutmut]",
        'source_paths = ["fctheory"]',
        'also_copy = ["benchmarks/", "docs/", "README.md", "proofs_check/"]',
        f"only_mutate = {json.dumps(list(modules))}" if modules else "",
        "pytest_add_cli_args = "
        + json.dumps(["-q", "-p", "no:cacheprovider", "-p", "no:xdist", *DESELECT, *pytest_args]),
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
        )
        print(f"scratch copy in {SCRATCH} ({n} files with @public rewritten as assignments)", flush=True)
        env = dict(os.environ, PYTHONPATH=str(SCRATCH))
        subprocess.run(
            [sys.executable, "-m", "mutmut", "run", "--max-children", str(args.jobs), *args.mutants],
            cwd=SCRATCH,
            env=env,
            check=False,
        )
    summarize()


if __name__ == "__main__":
    main()
