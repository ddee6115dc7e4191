"""The top-level package: what ``import fctheory`` exports, and that it never imports PyTorch.

``fctheory.torch`` (the PyTorch training monitor) is loaded on first attribute access (a module
``__getattr__``); each check that depends on what a fresh interpreter has imported runs in a subprocess.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import fctheory

ROOT = Path(__file__).resolve().parents[1]


def _run(code: str) -> dict:
    """Run ``code`` in a fresh interpreter that imports this checkout; it prints one JSON object."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), *sys.path]))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_fctheory_does_not_import_torch():
    got = _run(
        "import json, sys, fctheory, fctheory.nc_diagnosis, fctheory.cli\n"
        "print(json.dumps({'torch': 'torch' in sys.modules, 'monitor': 'fctheory.torch' in sys.modules}))"
    )
    assert got == {"torch": False, "monitor": False}


def test_star_import_does_not_import_torch():
    got = _run("import json, sys\nfrom fctheory import *\nprint(json.dumps({'torch': 'torch' in sys.modules}))")
    assert got == {"torch": False}


def test_the_torch_package_is_not_in___all__():
    """``from fctheory import *`` resolves every name of ``__all__``: a lazy package there would load PyTorch."""
    assert "torch" not in fctheory.__all__
    assert "torch" in fctheory._LAZY_SUBPACKAGES


def test_fctheory_torch_loads_on_first_access():
    pytest.importorskip("torch")
    got = _run(
        "import json, sys, fctheory\n"
        "before = 'torch' in sys.modules\n"
        "mod = fctheory.torch\n"
        "import fctheory.torch as direct\n"
        "print(json.dumps({'before': before, 'after': 'torch' in sys.modules, 'same': mod is direct,\n"
        "                  'name': mod.__name__, 'monitor': mod.NCMonitor.__name__, 'dir': 'torch' in dir(fctheory)}))"
    )
    assert got == {
        "before": False,
        "after": True,
        "same": True,
        "name": "fctheory.torch",
        "monitor": "NCMonitor",
        "dir": True,
    }


def test_fctheory_torch_without_pytorch_says_how_to_install_it():
    """``sys.modules['torch'] = None`` makes ``import torch`` fail as if PyTorch were not installed."""
    got = _run(
        "import json, sys\n"
        "sys.modules['torch'] = None\n"
        "import fctheory\n"
        "try:\n"
        "    fctheory.torch\n"
        "except ImportError as exc:\n"
        "    print(json.dumps({'error': type(exc).__name__, 'message': str(exc)}))\n"
        "else:\n"
        "    print(json.dumps({'error': None}))"
    )
    assert got["error"] == "ImportError"
    assert "pip install 'fctheory[torch]'" in got["message"]


def test_an_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no_such_name"):
        fctheory.no_such_name  # noqa: B018 - the access itself is the test
    assert not hasattr(fctheory, "no_such_name")


def test_nc_diagnosis_is_exported_next_to_diagnosis():
    for name in ("nc_diagnosis", "diagnose_features", "FeatureDiagnosis", "diagnosis", "diagnose", "Diagnosis"):
        assert name in fctheory.__all__, name
    assert fctheory.diagnose_features is fctheory.nc_diagnosis.diagnose_features
    assert fctheory.FeatureDiagnosis is fctheory.nc_diagnosis.FeatureDiagnosis


def test___all___names_exist():
    missing = [n for n in fctheory.__all__ if not hasattr(fctheory, n)]
    assert not missing, missing
