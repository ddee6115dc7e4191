"""benchmarks/trainer.py runs (smoke test of its --quick mode, without the optional torch engine)."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_trainer_benchmark_quick_runs_and_engines_agree():
    out = subprocess.run(
        [
            sys.executable,
            os.path.join(ROOT, "benchmarks", "trainer.py"),
            "--quick",
            "--threads",
            "1",
            "--dtypes",
            "float64",
            "--engines",
            "numba,numpy",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    assert "[float64]      numba:" in out and "[float64]      numpy:" in out
    line = next(s for s in out.splitlines() if "numpy:" in s)
    assert float(line.rsplit(":", 1)[1]) < 1e-12  # same weights after the same epochs
