"""Every fctheory module (and proofs_check) imports cleanly in a fresh interpreter.

An import cycle often shows only when a particular module is the first one imported, so each package
directory gets its own interpreter that imports the package first and then each of its modules (as
scipy's test_import_cycles does, but one interpreter per package, not per module, to stay fast).
``__main__`` modules are skipped: importing them runs the command line.
"""

import subprocess
import sys
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parents[1]


def _packages():
    out = []
    for top in ("fctheory", "proofs_check"):
        for init in sorted((_ROOT / top).rglob("__init__.py")):
            rel = init.parent.relative_to(_ROOT)
            modules = [
                ".".join(rel.parts + (p.stem,))
                for p in sorted(init.parent.glob("*.py"))
                if p.stem not in ("__init__", "__main__")
            ]
            out.append((".".join(rel.parts), modules))
    return out


_PACKAGES = _packages()


def test_every_package_directory_is_covered():
    names = {name for name, _ in _PACKAGES}
    assert {"fctheory", "fctheory.risk", "fctheory.cli", "proofs_check"} <= names


@pytest.mark.parametrize(("package", "modules"), _PACKAGES, ids=[name for name, _ in _PACKAGES])
def test_package_imports_in_a_fresh_interpreter(package, modules):
    if package == "fctheory.torch":  # the PyTorch parts: the lean install has no PyTorch
        pytest.importorskip("torch", reason="needs torch: pip install 'fctheory[torch]'")
    code = "import importlib, sys\nfor name in sys.argv[1:]:\n    importlib.import_module(name)\n"
    proc = subprocess.run(
        [sys.executable, "-c", code, package, *modules],
        cwd=_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, f"importing {package} in a fresh interpreter failed:\n{proc.stderr[-3000:]}"


def test_building_the_command_line_parser_does_not_import_proofs_check():
    """``fctheory check`` loads proofs_check (sympy, cvxpy, the whole table) on demand: every other command and
    ``fctheory --help`` must not pay for it."""
    code = (
        "import sys\nfrom fctheory.cli import build_parser\nbuild_parser()\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] == 'proofs_check')\n"
        "assert not loaded, loaded\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=_ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
