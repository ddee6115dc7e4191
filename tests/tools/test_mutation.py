"""tools/mutation.py's rewrite of decorators into trailing assignments: the rewritten source binds each name to
the same kind of object as the decorated original (checked by running both with recording decorators)."""

import ast
import importlib.util
import sys
import textwrap
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[2] / "tools" / "mutation.py"


@pytest.fixture(scope="module")
def mutation():
    spec = importlib.util.spec_from_file_location("mutation_tool", _PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(spec.name, None)


class _Wrapped:
    """What a recording decorator returns: the function and the decorator's arguments."""

    def __init__(self, kind, args, kwargs, func):
        self.kind, self.args, self.kwargs, self.func = kind, args, kwargs, func

    def __call__(self, *a):
        return self.func(*a)


def _recorder(kind):
    def decorator(*args, **kwargs):
        if len(args) == 1 and callable(args[0]) and not kwargs:  # bare @njit
            return _Wrapped(kind, (), {}, args[0])
        return lambda f: _Wrapped(kind, args, kwargs, f)

    return decorator


def _run(source):
    numba = type(sys)("numba")
    numba.njit = _recorder("numba.njit")
    namespace = {"njit": _recorder("njit"), "public": _recorder("public"), "numba": numba}
    exec(compile(source, "<test>", "exec"), namespace)
    return namespace


_KERNELS = textwrap.dedent(
    '''
    _NB = dict(cache=True)


    @njit(
        **_NB,
        nogil=True,
    )
    def add(a, b):
        """Two lines of arguments above."""
        return a + b


    @njit
    def neg(a):
        return -a


    @numba.njit(fastmath=True)
    def twice(a):
        return 2 * a


    class Holder:
        @staticmethod
        @njit
        def kept(a):
            return a

        @staticmethod
        def plain(a):
            return a + 1
    '''
)


def _same(a, b):
    assert type(a) is type(b)
    if isinstance(a, _Wrapped):
        assert (a.kind, a.args, a.kwargs, a.func.__name__) == (b.kind, b.args, b.kwargs, b.func.__name__)


def test_njit_kernels_become_assignments_binding_the_same_objects(mutation):
    new = mutation.undecorate(_KERNELS, kernels=True)
    before, after = _run(_KERNELS), _run(new)
    for name, args in (("add", (3, 4)), ("neg", (3,)), ("twice", (3,))):
        _same(before[name], after[name])
        assert after[name](*args) == before[name](*args)
    assert after["add"](3, 4) == 7
    assert after["add"].kwargs == {"cache": True, "nogil": True}


def test_rewritten_kernels_carry_no_decorator_mutmut_would_skip(mutation):
    tree = ast.parse(mutation.undecorate(_KERNELS, kernels=True))
    tops = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert all(not tops[name].decorator_list for name in ("add", "neg", "twice"))


def test_staticmethods_are_left_as_written(mutation):
    new = mutation.undecorate(_KERNELS, kernels=True)
    assert new[new.index("class Holder") :] == _KERNELS[_KERNELS.index("class Holder") :]
    holder = _run(new)["Holder"]
    assert isinstance(holder.__dict__["kept"], staticmethod) and isinstance(holder.kept, _Wrapped)
    assert holder.plain(1) == 2


def test_without_the_option_njit_is_left_as_written(mutation):
    assert mutation.undecorate(_KERNELS) == _KERNELS


def test_public_is_rewritten_with_and_without_the_option(mutation):
    source = textwrap.dedent(
        """
        @public(x="finite")
        def f(x):
            return x


        class C:
            @staticmethod
            @public(x="finite")
            def g(x):
                return -x
        """
    )
    for kernels in (False, True):
        new = mutation.undecorate(source, kernels=kernels)
        assert "@public" not in new
        before, after = _run(source), _run(new)
        _same(before["f"], after["f"])
        assert isinstance(after["C"].__dict__["g"], staticmethod)
        assert after["C"].g(2) == before["C"].g(2) == -2


def _fake_tree(root):
    """The folders build_scratch copies, one module each, a pyproject.toml and a README."""
    for folder in ("fctheory", "proofs_check", "tests", "benchmarks", "docs"):
        (root / folder).mkdir(parents=True)
        (root / folder / "mod.py").write_text("@public(x='finite')\ndef f(x):\n    return x\n")
    (root / "pyproject.toml").write_text('[project]\nname = "fake"\n')
    (root / "README.md").write_text("fake\n")


def _mutmut_config(scratch):
    import tomllib

    return tomllib.loads((scratch / "pyproject.toml").read_text())["tool"]["mutmut"]


def test_source_paths_option_reaches_mutmut_config_in_the_scratch_copy(mutation, tmp_path, monkeypatch):
    _fake_tree(tmp_path / "src")
    calls = []

    class _Done:
        stdout = ""

    def fake_run(cmd, **kwargs):
        calls.append((cmd, kwargs))
        return _Done()

    monkeypatch.setattr(mutation.subprocess, "run", fake_run)
    scratch = tmp_path / "scratch"
    argv = ["--source", str(tmp_path / "src"), "--scratch", str(scratch), "--modules", "proofs_check/mod.py"]
    mutation.main([*argv, "--source-paths", "fctheory", "proofs_check", "--jobs", "1"])
    cfg = _mutmut_config(scratch)
    assert cfg["source_paths"] == ["fctheory", "proofs_check"]
    assert cfg["only_mutate"] == ["proofs_check/mod.py"]
    # a mutated folder is not also copied as data: mutmut would copy it over its own mutated tree
    assert sorted(cfg["also_copy"]) == ["README.md", "benchmarks/", "docs/"]
    # @public is rewritten in every mutated folder (mutmut skips decorated functions)
    assert "@public" not in (scratch / "proofs_check" / "mod.py").read_text()
    assert calls[0][0][-3:] == ["run", "--max-children", "1"] and calls[0][1]["cwd"] == scratch

    mutation.main([*argv, "--fresh"])  # the default: fctheory only, proofs_check copied as data and left as written
    cfg = _mutmut_config(scratch)
    assert cfg["source_paths"] == ["fctheory"]
    assert sorted(cfg["also_copy"]) == ["README.md", "benchmarks/", "docs/", "proofs_check/"]
    assert "@public" in (scratch / "proofs_check" / "mod.py").read_text()
    assert "@public" not in (scratch / "fctheory" / "mod.py").read_text()


def test_source_paths_outside_the_copied_folders_are_refused(mutation, tmp_path, monkeypatch):
    _fake_tree(tmp_path / "src")
    monkeypatch.setattr(mutation, "SOURCE", tmp_path / "src")
    monkeypatch.setattr(mutation, "SCRATCH", tmp_path / "scratch")
    with pytest.raises(ValueError, match="'experiments' is not one of the copied folders"):
        mutation.build_scratch([], source_paths=["fctheory", "experiments"])
