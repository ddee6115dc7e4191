"""The tests mirror the package: every module of ``fctheory/`` and ``proofs_check/`` has a test file named after
it in the mirrored folder (docs/architecture.md, "Where the tests are"), the few modules exempt from that are
pure re-export shims and stay so, and backend-dependent tests take the one ``backend`` fixture of
``tests/conftest.py`` instead of listing backends themselves."""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"

#: former homes kept so that old import paths work: they only re-export (no def, no class), so they have no
#: behaviour of their own to test; the new homes' tests cover what they re-export
EXEMPT = {
    "fctheory/__main__.py": "``python -m fctheory``: calls fctheory.cli.main (tests/cli/ runs the commands)",
    "fctheory/_logmath.py": "former home of the overflow-free helpers, now fctheory/_numerics.py",
    "fctheory/diagnosis/montecarlo.py": "former home of the Monte-Carlo risk, now fctheory/risk/montecarlo.py",
    "fctheory/diagnosis/files.py": "former home of task and run files, now fctheory/io/",
    "fctheory/risk/io.py": "former home of weight loading, now fctheory/io/weights.py",
    "fctheory/collapsed.py": "former home of the collapsed optima, now fctheory/optima/collapsed.py",
    "fctheory/risk/convex.py": "former home of the certified optimum, now fctheory/optima/",
}


def _modules():
    for pkg in ("fctheory", "proofs_check"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            if path.name != "__init__.py" and "__pycache__" not in path.parts:
                yield path.relative_to(ROOT).as_posix()


def _test_folder_and_stem(module: str, tests: Path = TESTS):
    """(mirrored tests folder, module name as test files spell it) of ``module`` (a path under ROOT)."""
    parts = Path(module).parts
    pkg, sub, name = parts[0], parts[1:-1], Path(parts[-1]).stem
    folder = tests.joinpath(*sub) if pkg == "fctheory" else tests.joinpath(pkg, *sub)
    # a private module's leading underscore is dropped; a dunder module is named by its middle (__main__ -> main)
    stem = name[2:-2] if name.startswith("__") and name.endswith("__") else name.lstrip("_")
    return folder, stem


def _test_files(module: str, tests: Path = TESTS):
    folder, stem = _test_folder_and_stem(module, tests)
    exact = folder / f"test_{stem}.py"
    return ([exact] if exact.is_file() else []) + sorted(folder.glob(f"test_{stem}_*.py")), exact


MODULES = list(_modules())


@pytest.mark.parametrize("module", [m for m in MODULES if m not in EXEMPT])
def test_every_module_has_a_test_file_in_its_mirrored_folder(module):
    found, expected = _test_files(module)
    assert found, (
        f"{module} has no test file: expected {expected.relative_to(ROOT)} "
        f"(or {expected.relative_to(ROOT).with_suffix('')}_<what>.py)"
    )


def _is_reexport(stmt) -> bool:
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return True
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
        return True  # the docstring
    if isinstance(stmt, ast.Assign) and [getattr(t, "id", None) for t in stmt.targets] == ["__all__"]:
        return True
    # ``sys.exit(main())`` of a __main__ module: a call of imported names, no logic of its own
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)


@pytest.mark.parametrize("module", sorted(EXEMPT))
def test_exempt_modules_are_reexport_shims(module):
    path = ROOT / module
    assert path.is_file(), f"{module} is in EXEMPT but does not exist: remove it from EXEMPT"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    defs = [n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    assert not defs, f"{module} defines {defs}: it is no longer a shim; give it {_test_files(module)[1]}"
    other = [ast.unparse(s).splitlines()[0] for s in tree.body if not _is_reexport(s)]
    assert not other, f"{module} has statements besides re-exports: {other}; give it {_test_files(module)[1]}"


def test_exempt_list_names_only_modules_of_the_packages():
    assert set(EXEMPT) <= set(MODULES)


@pytest.mark.parametrize(
    ("module", "expected"),
    [
        ("fctheory/task.py", "tests/test_task.py"),
        ("fctheory/risk/_layout.py", "tests/risk/test_layout.py"),
        ("fctheory/cli/_task_options.py", "tests/cli/test_task_options.py"),
        ("proofs_check/_deps.py", "tests/proofs_check/test_deps.py"),
        ("proofs_check/__main__.py", "tests/proofs_check/test_main.py"),
    ],
)
def test_mirrored_name(module, expected):
    folder, stem = _test_folder_and_stem(module)
    assert (folder / f"test_{stem}.py").relative_to(ROOT).as_posix() == expected


def test_a_second_file_named_after_the_module_counts(tmp_path):
    # e.g. fctheory/risk/montecarlo.py is covered by tests/risk/test_montecarlo_interval.py alone
    module = "fctheory/risk/montecarlo.py"
    (tmp_path / "risk").mkdir()
    assert _test_files(module, tmp_path)[0] == []
    (tmp_path / "risk" / "test_montecarlos.py").write_text("")  # another module's name: does not count
    assert _test_files(module, tmp_path)[0] == []
    (tmp_path / "risk" / "test_montecarlo_interval.py").write_text("")
    found, expected = _test_files(module, tmp_path)
    assert found == [tmp_path / "risk" / "test_montecarlo_interval.py"]
    assert expected == tmp_path / "risk" / "test_montecarlo.py"


# the exact form the rule forbids; the fixture is written ``def test_x(backend)`` instead
_BACKEND_PARAMETRIZE = re.compile(r"""parametrize\(\s*\(?\s*["'](host_)?backend\s*["',]""")


def test_no_test_lists_backends_itself():
    offenders = []
    for path in sorted(TESTS.rglob("*.py")):
        if path == Path(__file__).resolve():
            continue
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if _BACKEND_PARAMETRIZE.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{lineno}")
    assert not offenders, (
        "tests parametrize 'backend' themselves; take the `backend` (or `host_backend`) fixture of "
        f"tests/conftest.py instead: {offenders}"
    )


@pytest.mark.parametrize(
    ("line", "forbidden"),
    [
        ('@pytest.mark.parametrize("backend", ["numpy", "numba"])', True),
        ("@pytest.mark.parametrize('backend', BACKENDS)", True),
        ('@pytest.mark.parametrize("backend,dtype", CASES)', True),
        ('@pytest.mark.parametrize(("backend", "dtype"), CASES)', True),
        ('@pytest.mark.parametrize("host_backend", ["numpy"])', True),
        ('@pytest.mark.parametrize("backend_name", NAMES)', False),
        ('@pytest.mark.parametrize("dtype", ["float32"])', False),
        ("def test_x(backend):", False),
    ],
)
def test_backend_parametrize_pattern(line, forbidden):
    assert bool(_BACKEND_PARAMETRIZE.search(line)) is forbidden
