"""A newcomer's first minutes, measured: the README's three commands on a fresh clone in a new virtual environment.

    python3 benchmarks/fresh_install.py [--repo .] [--branch main] [--no-cache] [--skip-tests] [--keep]

Clones ``--repo`` (default: this repository, its committed ``--branch``) into a temporary folder, makes a virtual
environment with ``python3 -m venv``, and runs in the clone, each command timed on the wall clock:

1. ``python -m pip install -e ".[test,plot]"`` (the README's install; ``--no-cache`` adds ``--no-cache-dir``, as
   on a machine that never downloaded the wheels), then the environment's size on disk;
2. ``fctheory predict --paper`` (the main job), twice: the first run pays the first-use costs (numba compiling
   and caching its kernels, Python writing its bytecode), the second is what every later run takes;
3. ``python -m pytest -n 2`` (the tests), with pytest's closing line.

It prints one Markdown table (the command, the wall time, the CPU time it and its children used, the load average
of the machine before and after, the result) for docs/performance.md: on a machine shared with other jobs the wall
time grows with the load, the CPU time much less. The clone and the environment are removed at the end unless
``--keep``.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _size(path: Path) -> int:
    """Bytes of the regular files under ``path`` (symbolic links not followed), as ``du`` would count them."""
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            p = os.path.join(folder, name)
            if not os.path.islink(p):
                total += os.path.getsize(p)
    return total


def _timed(cmd: list, cwd: Path, env: dict, log: Path) -> dict:
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with open(log, "w", encoding="utf-8") as out:
        proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, check=False)
    seconds = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    tail = [line for line in log.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()]
    return {
        "command": " ".join(cmd),
        "seconds": seconds,
        "cpu": cpu,
        "load": (load, os.getloadavg()[0]),
        "rc": proc.returncode,
        "last": tail[-1] if tail else "",
    }


def run(repo: str, branch: str, *, no_cache: bool, tests: bool, keep: bool) -> list:
    work = Path(tempfile.mkdtemp(prefix="fctheory-fresh-"))
    clone, venv = work / "clone", work / "venv"
    try:
        subprocess.run(["git", "clone", "-q", "--branch", branch, repo, str(clone)], check=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        env["VIRTUAL_ENV"] = str(venv)
        py = str(venv / "bin" / "python")
        install = [py, "-m", "pip", "install", "-e", ".[test,plot]"] + (["--no-cache-dir"] if no_cache else [])
        rows = [_timed(install, clone, env, work / "install.log")]
        rows[-1]["last"] = f"environment: {_size(venv) / 2**30:.2f} GiB ({_size(venv) / 1e9:.2f} GB)"
        for i in range(2):
            rows.append(_timed(["fctheory", "predict", "--paper"], clone, env, work / f"main{i}.log"))
            rows[-1]["last"] = "first run" if i == 0 else "second run"
        if tests:
            rows.append(_timed([py, "-m", "pytest", "-n", "2"], clone, env, work / "tests.log"))
        return rows
    finally:
        if keep:
            print(f"kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", default=str(ROOT), help="repository to clone (default: this one)")
    ap.add_argument("--branch", default="main", help="branch to clone (default main)")
    ap.add_argument("--no-cache", action="store_true", help="install without pip's cache (a machine's first install)")
    ap.add_argument("--skip-tests", action="store_true", help="stop after the main job")
    ap.add_argument("--keep", action="store_true", help="keep the clone and the environment")
    args = ap.parse_args(argv)
    rows = run(args.repo, args.branch, no_cache=args.no_cache, tests=not args.skip_tests, keep=args.keep)
    print("| command | wall time | CPU time (user + sys) | load before / after | result |")
    print("|---|---|---|---|---|")
    for r in rows:
        status = "ok" if r["rc"] == 0 else f"exit status {r['rc']}"
        load = f"{r['load'][0]:.1f} / {r['load'][1]:.1f}"
        print(f"| `{r['command']}` | {r['seconds']:.1f} s | {r['cpu']:.1f} s | {load} | {status}: {r['last']} |")
    return 0 if all(r["rc"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
