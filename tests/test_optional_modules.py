"""The lean install skips the tests of the optional PyTorch parts with a reason; CI (``FCTHEORY_REQUIRE_OPTIONAL``,
exported by .ci/run) fails the session instead, so that every test runs there.

The mechanism lives in tests/conftest.py; here it runs on a small suite of its own in a subprocess (loaded as a
plugin with ``-p tests.conftest``), with and without the variable, with and without pytest-xdist.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import OPTIONAL, REQUIRE_OPTIONAL, missing_optional_module

ROOT = Path(__file__).resolve().parent.parent

SUITE = """
import pytest

absent = pytest.importorskip("fctheory_no_such_module_{kind}", reason={reason!r})


def test_never_runs():
    pass
"""
OTHER = """
import pytest


def test_runs():
    assert True


def test_skips_for_a_gpu():
    pytest.importorskip("fctheory_no_such_gpu_module", reason="needs CuPy and a CUDA device")
"""
IN_TEST = """
import pytest


def test_needs_lightning():
    # what pytest.importorskip("lightning") says where Lightning is not installed (it is, here)
    pytest.skip("could not import 'lightning': No module named 'lightning'")
"""


@pytest.mark.parametrize(
    ("reason", "module"),
    [
        ("needs torch: pip install 'fctheory[torch]'", "torch"),
        ("Skipped: needs torch.distributed: pip install 'fctheory[torch]'", "torch"),
        ("needs accelerate (the Trainer uses it): pip install 'fctheory[hf]'", "accelerate"),
        ("could not import 'transformers': No module named 'transformers'", "transformers"),
        ("fctheory.torch does not import here: ModuleNotFoundError: No module named 'torch'", "torch"),
        ("could not import 'cupy': No module named 'cupy'", None),  # a GPU library: allowed to be absent
        ("needs CuPy and a CUDA device", None),
        ("needs PyTorch with a CUDA device", None),  # torch is there, the device is not
        ("doc example docs/x.md:3 not run: needs the trained network", None),
        ("", None),
    ],
)
def test_a_skip_reason_names_its_missing_optional_module(reason, module):
    assert missing_optional_module(reason) == module


def test_the_optional_modules_are_the_torch_extras():
    assert set(OPTIONAL) == {"torch", "lightning", "transformers", "accelerate", "safetensors", "sklearn"}


def _suite(tmp_path, files: dict) -> Path:
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def _pytest(folder: Path, *extra, require: bool):
    env = {k: v for k, v in os.environ.items() if k != REQUIRE_OPTIONAL}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    if require:
        env[REQUIRE_OPTIONAL] = "1"
    cmd = [sys.executable, "-m", "pytest", "-p", "tests.conftest", "-p", "no:cacheprovider", "-q", "-rs"]
    # the inner session's temporary folders stay under this test's tmp_path (a failing session keeps them)
    temp = folder.parent / "temp"
    temp.mkdir(exist_ok=True)
    env["TMPDIR"] = str(temp)
    cmd += ["-c", str(folder / "pytest.ini"), "--rootdir", str(folder), "--basetemp", str(folder.parent / "base")]
    cmd += [*extra, str(folder)]
    return subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture
def suite(tmp_path):
    return _suite(
        tmp_path,
        {
            "test_collect.py": SUITE.format(kind="torch", reason="needs torch: pip install 'fctheory[torch]'"),
            "test_in_test.py": IN_TEST,
            "test_other.py": OTHER,
        },
    )


def test_without_the_variable_the_skips_pass(suite):
    proc = _pytest(suite, "-p", "no:xdist", require=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "needs torch: pip install 'fctheory[torch]'" in proc.stdout  # the reason is shown


def test_with_the_variable_a_skip_for_a_missing_optional_module_fails_the_session(suite):
    proc = _pytest(suite, "-p", "no:xdist", require=True)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = proc.stdout
    assert "skipped for a missing optional module" in out
    listed = out.split("skipped for a missing optional module")[1].split("short test summary")[0]
    assert "test_collect.py: torch" in listed  # skipped at collection
    assert "test_in_test.py::test_needs_lightning: lightning" in listed  # skipped in the test
    assert "test_skips_for_a_gpu" not in listed


def test_with_the_variable_only_allowed_skips_pass(tmp_path):
    folder = _suite(tmp_path, {"test_other.py": OTHER})
    proc = _pytest(folder, "-p", "no:xdist", require=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # a missing GPU library is not an optional module


def test_under_xdist_the_controller_sees_every_worker_s_skips(suite):
    pytest.importorskip("xdist", reason="needs pytest-xdist (the test extra installs it)")
    proc = _pytest(suite, "-n", "2", require=True)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "test_collect.py: torch" in proc.stdout and "test_needs_lightning: lightning" in proc.stdout
