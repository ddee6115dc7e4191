"""Shared test configuration: Hypothesis profiles, the backend fixtures, the temp-folder check, and the rule that
CI runs every test of the optional PyTorch parts.

``ci`` (default) keeps the suite inside the CI time budget; ``thorough`` (HYPOTHESIS_PROFILE=thorough)
runs many more examples for local verification.

Tests write files only under pytest's ``tmp_path``: :func:`_system_temp_folder_stays_clean` points the
process's temp folder (``tempfile``, ``TMPDIR``) at an empty folder of its own for the session and fails
the run if anything was written there (a test, the library, dask, torch or a subprocess writing into the
system temp folder instead of ``tmp_path``).

The lean install (``pip install -e ".[test,plot]"``) has no PyTorch, Lightning, transformers or accelerate: the
tests that need one skip with the reason (``pytest.importorskip(module, reason="needs torch: pip install ...")``).
CI installs them and exports ``FCTHEORY_REQUIRE_OPTIONAL=1`` (:data:`REQUIRE_OPTIONAL`): then a test skipped
because one of :data:`OPTIONAL` is missing fails the session (:func:`missing_optional_module` reads the reason).
"""

import importlib.util
import os
import re
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis.configuration import set_hypothesis_home_dir

#: the repository: Hypothesis's and pytest-benchmark's folders stay in it wherever pytest is started from
ROOT = Path(__file__).resolve().parent.parent
set_hypothesis_home_dir(ROOT / ".hypothesis")  # its example database included (not used by derandomized runs)

settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)
settings.register_profile(
    "thorough",
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# --- the optional modules: skipped without them, required in CI ----------------------------------------------
#: the optional modules some tests need (the torch extras: pip install -e ".[test,plot,torch-all]")
OPTIONAL = ("torch", "lightning", "transformers", "accelerate", "safetensors", "sklearn")
#: set (to anything but "" or "0") by .ci/run: a test skipped for a missing optional module fails the session
REQUIRE_OPTIONAL = "FCTHEORY_REQUIRE_OPTIONAL"
#: the ways a skip names a missing module: the project's reasons ("needs torch: ..."), pytest.importorskip's own
#: ("could not import 'torch': ..."), and an ImportError's text ("No module named 'torch'")
_MISSING = re.compile(r"^(?:Skipped: )?needs ([\w.]+)\b|could not import '([\w.]+)'|No module named '([\w.]+)'")


def missing_optional_module(reason: str):
    """The optional module (of :data:`OPTIONAL`) a skip reason says is missing, or None."""
    for match in _MISSING.finditer(reason or ""):
        name = next(g for g in match.groups() if g).split(".")[0]
        if name in OPTIONAL:
            return name
    return None


def _skip_reason(report) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # (path, line, "Skipped: reason")
        return str(longrepr[2])
    return str(longrepr or "")


def _note_optional_skip(config, report) -> None:
    if report.skipped and not hasattr(report, "wasxfail"):
        module = missing_optional_module(_skip_reason(report))
        if module is not None:
            config._fctheory_optional_skips.append(f"{report.nodeid}: {module} ({_skip_reason(report)})")


def pytest_collectreport(report):
    # a module-level importorskip skips at collection (under xdist the controller gets the skipped reports too)
    _note_optional_skip(_CONFIG[0], report)


def pytest_runtest_logreport(report):
    _note_optional_skip(_CONFIG[0], report)


def _optional_required() -> bool:
    return os.environ.get(REQUIRE_OPTIONAL, "") not in ("", "0")


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    skips = getattr(config, "_fctheory_optional_skips", [])
    if skips and _optional_required():
        terminalreporter.section("skipped for a missing optional module (not allowed here)", red=True)
        for line in skips:
            terminalreporter.line(line)
        terminalreporter.line(f'{REQUIRE_OPTIONAL} is set: install the torch extras (pip install -e ".[torch-all]")')


_CONFIG = [None]  # the session's config, for the report hooks (which get no config of their own)


def pytest_configure(config):
    _CONFIG[0] = config
    config._fctheory_optional_skips = []
    # pytest-benchmark's default storage is relative to the working folder (file://./.benchmarks)
    if getattr(config.option, "benchmark_storage", None) == "file://./.benchmarks":
        config.option.benchmark_storage = f"file://{ROOT / '.benchmarks'}"
    # importing lightning (collection of tests/torch/test_lightning.py, before any fixture) makes torch create
    # its compile cache folder <temp>/torchinductor_<user>: give it a folder of this process, removed at the end
    if "TORCHINDUCTOR_CACHE_DIR" not in os.environ:
        config._fctheory_inductor_dir = tempfile.mkdtemp(prefix="fctheory-tests-torchinductor-")
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = config._fctheory_inductor_dir


def pytest_unconfigure(config):
    own = getattr(config, "_fctheory_inductor_dir", None)
    if own is not None:
        shutil.rmtree(own, ignore_errors=True)
        os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)


# --- one backend fixture: a test that takes `backend` runs once per available backend --------------
def _cuda_available() -> bool:
    if importlib.util.find_spec("cupy") is None:
        return False
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # noqa: BLE001 - any CUDA failure means "no usable GPU"
        return False


BACKENDS = ["numpy", "numba", "cupy"]
_GPU = _cuda_available()


@pytest.fixture(
    params=[
        "numpy",
        "numba",
        pytest.param(
            "cupy", marks=[pytest.mark.gpu, pytest.mark.skipif(not _GPU, reason="needs CuPy and a CUDA device")]
        ),
    ]
)
def backend(request):
    """Every backend of the library: NumPy, numba kernels, and CuPy where a CUDA device is present."""
    return request.param


@pytest.fixture(params=["numpy", "numba"])
def host_backend(request):
    """The host backends only (NumPy and numba), for tests whose oracle needs host arrays."""
    return request.param


# --- one array-library fixture: a test that takes `array_backend` runs once per array library --------
class ArrayBackend:
    """An array library the metrics accept directly: NumPy, PyTorch (CPU or CUDA) or CuPy.

    ``asarray(a, dtype)`` turns a NumPy array into this library's array (on its device); ``owns(x)`` says
    whether ``x`` is an array of this library on this device (results must stay there).
    """

    def __init__(self, name: str):
        self.name = name

    def asarray(self, a, dtype=None):
        a = np.asarray(a) if dtype is None else np.asarray(a, dtype=dtype)
        if self.name == "numpy":
            return a
        if self.name == "cupy":
            import cupy

            return cupy.asarray(a)
        import torch

        return torch.as_tensor(a, device="cuda" if self.name == "torch-cuda" else "cpu")

    def owns(self, x) -> bool:
        lib = type(x).__module__.partition(".")[0]
        if self.name in ("numpy", "cupy"):
            return lib == self.name
        return lib == "torch" and x.device.type == ("cuda" if self.name == "torch-cuda" else "cpu")

    def __repr__(self):
        return self.name


def _skip_unless_array_library(name: str):
    if name in ("torch", "torch-cuda"):
        pytest.importorskip("torch", reason="needs torch: pip install 'fctheory[torch]'")
    if name == "torch-cuda":
        import torch

        if not torch.cuda.is_available():
            pytest.skip("needs PyTorch with a CUDA device")
    if name == "cupy" and not _GPU:
        pytest.skip("needs CuPy and a CUDA device")


@pytest.fixture(
    params=[
        "numpy",
        "torch",
        pytest.param("cupy", marks=pytest.mark.gpu),
        pytest.param("torch-cuda", marks=pytest.mark.gpu),
    ]
)
def array_backend(request):
    """NumPy, PyTorch on the CPU, and (marked gpu, skipped without CUDA) CuPy and PyTorch on CUDA."""
    _skip_unless_array_library(request.param)
    return ArrayBackend(request.param)


# --- nothing is written into the system temp folder --------------------------------------------------
#: names a machine's own runtime leaves in the temp folder whichever code runs (Open MPI's shared-memory
#: session files, made where an MPI installation is loaded by torch.distributed or CUDA libraries): not the
#: suite's writing
_RUNTIME_FILES = ("ompi.",)


@pytest.fixture(scope="session", autouse=True)
def _system_temp_folder_stays_clean(tmp_path_factory):
    """Fail the run if the suite wrote into the system temp folder instead of ``tmp_path``.

    For the session, ``tempfile.gettempdir()`` (and ``TMPDIR`` for subprocesses) is an empty folder under
    pytest's own basetemp; whatever is left in it at the end was written by a test, the library or a
    dependency (dask's scratch space, torch's caches) outside ``tmp_path``. Checking a private folder rather
    than diffing the real temp folder keeps the check exact when other processes share that folder. Under
    pytest-xdist every worker checks its own folder.
    """
    tmp_path_factory.getbasetemp()  # pytest's own folder stays where pytest puts it
    watched = tmp_path_factory.mktemp("system-temp-folder", numbered=True)
    # torch's compile cache defaults to <temp folder>/torchinductor_<user>: give it a folder of its own
    env = {"TMPDIR": str(watched), "TORCHINDUCTOR_CACHE_DIR": str(tmp_path_factory.mktemp("torchinductor"))}
    saved_tempdir, saved_env = tempfile.tempdir, {k: os.environ.get(k) for k in env}
    tempfile.tempdir = str(watched)
    os.environ.update(env)
    try:
        yield
    finally:
        tempfile.tempdir = saved_tempdir
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    left = sorted(name for name in os.listdir(watched) if not name.startswith(_RUNTIME_FILES))
    if left:
        pytest.fail(
            f"the tests wrote {len(left)} entries into the system temp folder instead of tmp_path: "
            f"{', '.join(left[:20])}{' ...' if len(left) > 20 else ''} (left in {watched})",
            pytrace=False,
        )


@pytest.fixture(scope="session", autouse=True)
def _dask_scratch_space_under_tmp_path(tmp_path_factory):
    """dask.distributed's ``dask-scratch-space`` (test clusters and the sweep's own LocalCluster) goes under
    pytest's temporary folder: a cluster's ``local_directory`` alone still leaves one in the temp folder."""
    if importlib.util.find_spec("dask") is None:
        yield
        return
    import dask

    with dask.config.set({"temporary-directory": str(tmp_path_factory.mktemp("dask"))}):
        yield


def pytest_sessionfinish(session, exitstatus):
    """With :data:`REQUIRE_OPTIONAL` set, a test skipped for a missing optional module fails the session (the
    controller decides under xdist: it saw every worker's reports).

    A passing run leaves the system temp folder as it found it: pytest's numbered folder of this run (and
    ``pytest-of-<user>`` when nothing else is in it) is removed. A failing run keeps it for inspection, and so
    does an explicit ``--basetemp``. Under pytest-xdist the controller cleans up after its workers."""
    config = session.config
    if (
        _optional_required()
        and not hasattr(config, "workerinput")
        and getattr(config, "_fctheory_optional_skips", [])
        and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED)
    ):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        exitstatus = session.exitstatus
    if exitstatus != 0 or hasattr(config, "workerinput") or config.option.basetemp:
        return
    base = getattr(getattr(config, "_tmp_path_factory", None), "_basetemp", None)
    if base is None:
        return
    shutil.rmtree(base, ignore_errors=True)
    root = base.parent
    if not root.name.startswith("pytest-of-"):
        return
    current = root / "pytest-current"
    if current.is_symlink() and not current.exists():  # it pointed at the folder just removed
        current.unlink()
    try:
        root.rmdir()  # only when empty: earlier runs' folders are not ours
    except OSError:
        pass
