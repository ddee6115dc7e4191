"""The top-level package: what ``import fctheory`` exports, and what a bare import loads (almost nothing).

Every public name is loaded on first attribute access (a module ``__getattr__`` reading the ``if _TYPE_CHECKING:``
imports of fctheory/__init__.py); ``fctheory.torch`` (the PyTorch training monitor) likewise. Each check that
depends on what a fresh interpreter has imported runs in a subprocess.
"""

import importlib
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
    pytest.importorskip("torch", reason="needs torch: pip install 'fctheory[torch]'")
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


#: what a bare ``import fctheory`` may not load: every dependency beyond NumPy and the standard library
HEAVY = ("scipy", "mpmath", "numba", "llvmlite", "sympy", "cvxpy", "hypothesis", "tqdm", "threadpoolctl",
         "array_api_compat", "pandas", "dask", "matplotlib", "torch", "flint")  # fmt: skip
#: the fctheory modules a bare import loads: the error, the work budget (with the validation it uses), the version
CORE = [
    "fctheory",
    "fctheory._budget",
    "fctheory._compat",
    "fctheory._errors",
    "fctheory._validate",
    "fctheory._version",
]

_LOADED = (
    "import json, sys\n{before}\nimport fctheory as fc\n{code}\n"
    "print(json.dumps({{'heavy': sorted({{m.split('.')[0] for m in sys.modules}} & set({heavy!r})),\n"
    "                  'fctheory': sorted(m for m in sys.modules if m.startswith('fctheory')),\n"
    "                  'scipy': sorted(m for m in sys.modules if m.startswith('scipy.') and m.count('.') == 1)}}))"
)


def _loaded(code="", before=""):
    return _run(_LOADED.format(before=before, code=code, heavy=HEAVY))


def test_a_bare_import_loads_no_dependency_beyond_numpy():
    got = _loaded()
    assert got["heavy"] == []
    assert got["fctheory"] == CORE


def test_tau_loads_its_own_module_and_not_the_rest_of_the_library():
    got = _loaded("fc.tau(n_c=3, n_w=1200, L=15, K=1000, lam=1e-3)")
    assert "fctheory.tau" in got["fctheory"]
    for other in ("fctheory.risk", "fctheory.trainer", "fctheory.metrics", "fctheory.ufm", "fctheory.sweep",
                  "fctheory.diagnosis", "fctheory.testing", "fctheory.predictions", "fctheory.task"):  # fmt: skip
        assert other not in got["fctheory"], other
    assert not {"sympy", "cvxpy", "hypothesis", "pandas", "dask", "matplotlib", "torch"} & set(got["heavy"])
    assert "scipy.optimize" not in got["scipy"]


def test_every_lazy_name_is_the_object_its_module_defines():
    lazy = fctheory._lazy_names()
    eager = {"FCTheoryError", "Budget", "budget", "get_budget", "set_budget"}  # the core, loaded by the bare import
    assert set(fctheory.__all__) - eager <= set(lazy) and not eager & set(lazy)
    for name, (module, attr) in lazy.items():
        if name in fctheory._LAZY_SUBPACKAGES:
            continue
        mod = importlib.import_module(f"fctheory.{module}")
        assert getattr(fctheory, name) is (mod if attr is None else getattr(mod, attr)), name


def test_functions_that_share_their_module_name_stay_functions_whatever_imports_the_module():
    # the import system binds fctheory.<child> to the child module when it first loads it; the package's
    # tau, tau_star and sweep must stay the functions, whether the module is loaded directly or by another
    got = _run(
        "import json, types, fctheory\n"
        "import fctheory.predictions\n"  # imports fctheory.tau and fctheory.tau_star itself
        "import fctheory.sweep.core\n"
        "print(json.dumps({n: isinstance(getattr(fctheory, n), types.FunctionType) for n in ('tau', 'tau_star', "
        "'sweep')}))"
    )
    assert got == {"tau": True, "tau_star": True, "sweep": True}
    assert fctheory.tau is importlib.import_module("fctheory.tau").tau


def test_dir_lists_every_public_name_before_it_is_loaded():
    got = _run("import json, fctheory\nprint(json.dumps(sorted(dir(fctheory))))")
    assert set(fctheory.__all__) | {"torch"} <= set(got)


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
