"""Benchmark: what ``import fctheory`` costs over ``import numpy``, in fresh interpreters.

Each repetition starts two fresh interpreters in turn, A B A B …: A imports NumPy alone, B imports NumPy and then
fctheory (each timed inside the interpreter with ``time.perf_counter``, so interpreter start-up is left out), and
the script prints the medians and the median of the pairwise differences B − A. It also times the first call of
``fctheory.tau`` (which loads fctheory.tau and the compiled root-finder it needs) and lists what a bare import
loads beyond NumPy.

Run:  python benchmarks/import_cost.py [--repeat 10]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CODE = """
import json, sys, time
t0 = time.perf_counter()
import numpy
t1 = time.perf_counter()
{extra}
t2 = time.perf_counter()
{call}
t3 = time.perf_counter()
print(json.dumps({{"numpy": t1 - t0, "extra": t2 - t1, "call": t3 - t2, "modules": len(sys.modules),
                  "top": sorted({{m.split('.')[0] for m in sys.modules}})}}))
"""


def _once(extra: str, call: str = "") -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    code = _CODE.format(extra=extra, call=call)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args(argv)
    _once("import fctheory")  # warm the file-system cache for both
    numpy_only, with_fc, diffs = [], [], []
    for _ in range(args.repeat):
        a = _once("")
        b = _once("import fctheory")
        numpy_only.append(a["numpy"])
        with_fc.append(b["numpy"] + b["extra"])
        diffs.append(b["numpy"] + b["extra"] - a["numpy"])
    bare = _once("import fctheory")
    call = [_once("import fctheory", "fctheory.tau(n_c=3, n_w=1200, L=15, K=1000, lam=1e-3)")["call"] for _ in range(3)]
    base = set(_once("")["top"])
    print(f"import numpy:               median {statistics.median(numpy_only) * 1e3:8.1f} ms ({args.repeat} runs)")
    print(f"import numpy, fctheory:     median {statistics.median(with_fc) * 1e3:8.1f} ms")
    print(f"fctheory over numpy:        median {statistics.median(diffs) * 1e3:8.1f} ms (pairwise differences)")
    print(f"modules after a bare import: {bare['modules']}; top-level packages beyond numpy's: "
          f"{sorted(set(bare['top']) - base)}")  # fmt: skip
    print(f"first fctheory.tau(...) call: median {statistics.median(call) * 1e3:8.1f} ms (3 runs)")


if __name__ == "__main__":
    main()
