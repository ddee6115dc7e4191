"""The project's own fuzz suite: every public callable validates its input.

The public API is discovered by introspection (tests/fuzz/harness.py: ``__all__`` of fctheory and its
public sub-packages, the public methods of public classes), so a new function is covered automatically:
it fails here until it is wrapped with ``@public(...)`` and has a valid example in
tests/fuzz/examples_<area>.py. For each callable and each declared parameter, bad values drawn from the
parameter's kind must raise ``FCTheoryError`` naming that parameter; valid extremes must give finite
results or ``FCTheoryError``; every call is time-bounded (``FCTHEORY_FUZZ_TIMEOUT``, 10 s) and runs under a
small work budget; RuntimeWarnings and mutated array inputs fail.

Default run: every fixed bad value, extreme and shape variant of every parameter, and a sample of
pairs of extremes. ``-m slow`` adds Hypothesis-generated bad values (derandomized in the ``ci`` profile
of tests/conftest.py) and every pair of extremes. ``python -m tests.fuzz.harness --report``
lists all failures at once.
"""

import re
from pathlib import Path

import pytest

from tests.fuzz import harness as H

ENTRIES = H.discover()
BY_KEY = {e.key: e for e in ENTRIES}
KEYS = sorted(BY_KEY)
EX = H.load_examples()


@pytest.fixture(autouse=True, scope="module")
def _scratch_under_tmp_path(tmp_path_factory):
    """The examples' files and the PathIn/PathOut scratch paths go under pytest's temporary folder."""
    H.set_scratch_root(tmp_path_factory.mktemp("fuzz"))


def _fail_list(fails, title):
    lines = [str(f) for f in fails]
    return f"{title} ({len(lines)}):\n  " + "\n  ".join(lines)


def _entry(key):
    e = BY_KEY[key]
    if EX.skipped(e) is not None:
        pytest.skip(f"SKIP: {EX.skipped(e)}")
    if e.params is None:
        pytest.skip("no __fc_params__ (reported by test_every_public_callable_declares_its_parameters)")
    if EX.example(e) is None:
        pytest.skip("no example (reported by test_every_public_callable_has_a_valid_example)")
    return e


# ------------------------------------------------------------------------------------------ coverage
def test_discovery_finds_the_documented_api():
    """The walk reaches the top level, the sub-packages and methods (a broken walk would pass everything)."""
    for key in (
        "fctheory.tau",
        "fctheory.Task",
        "fctheory.Task.full",
        "fctheory.metrics.nc1",
        "fctheory.ufm.ce",
        "fctheory.risk.estimate_cost",
        "fctheory.trainer.resume",
        "fctheory.diagnose_features",
        "fctheory.nc_diagnosis.nc_metrics",
    ):
        assert key in BY_KEY, key
    assert not any(k.startswith("fctheory.cli") for k in KEYS)


@pytest.mark.parametrize("path", H.LAZY)
def test_lazy_packages_are_fuzzed_where_they_import(path):
    """A sub-package loaded on first access (fctheory.torch, outside ``__all__``) is walked like the exported
    ones; without its optional dependency it is reported as a skip here, not silently left out."""
    why = H.unavailable_packages().get(path)
    if why is not None:
        pytest.skip(f"{path} does not import here, its callables are not fuzzed: {why}")
    assert any(k.startswith(path + ".") for k in KEYS), f"no public callable of {path} was discovered"


def test_all_lists_only_existing_names():
    assert not H.discovery_problems(), H.discovery_problems()


def test_public_names_are_exported_in___all__():
    """A public function or class left out of ``__all__`` would escape the fuzz suite."""
    missing = H.unexported_names()
    assert not missing, (
        "public names missing from their package's __all__ (export them, or rename with a "
        f"leading underscore): {missing}"
    )


def test_every_public_callable_declares_its_parameters():
    fails = [f for e in ENTRIES for f in H.check_declaration(e)]
    assert not fails, _fail_list(fails, "public callables without a complete @public declaration")


def test_every_public_callable_has_a_valid_example():
    missing = [e.key for e in ENTRIES if EX.example(e) is None and EX.skipped(e) is None]
    note = (
        f"\n(missing files: {', '.join('examples_' + a + '.py' for a in EX.missing_areas)})" if EX.missing_areas else ""
    )
    assert not missing, (
        f"no valid example in tests/fuzz/examples_*.py for ({len(missing)}):\n  " + "\n  ".join(missing) + note
    )


def test_example_files_are_well_formed():
    fails = [
        f for f in H.coverage_failures(ENTRIES, EX) if f.key == "tests/fuzz" or "names nothing that exists" in f.what
    ]
    assert not fails, _fail_list(fails, "problems in tests/fuzz/examples_*.py")


# ---------------------------------------------------------------------------- per-callable behaviour
@pytest.mark.parametrize("key", KEYS)
def test_valid_example(key):
    """The example runs within the budget, returns no NaN/inf (unless allow-listed), mutates no input."""
    fails = H.check_valid_example(_entry(key), EX)
    assert not fails, _fail_list(fails, f"{key}: valid example")


@pytest.mark.parametrize("key", KEYS)
def test_bad_values(key):
    """Every fixed bad value of every declared parameter raises FCTheoryError naming that parameter."""
    e = _entry(key)
    fails = H.run_cases(e, EX, H.value_cases(e, EX, "bad"))
    assert not fails, _fail_list(fails, f"{key}: bad values")


@pytest.mark.parametrize("key", KEYS)
def test_valid_extremes(key):
    """Domain edges (one parameter at a time, and a sample of two at once) give finite results or FCTheoryError."""
    e = _entry(key)
    fails = H.run_cases(e, EX, H.value_cases(e, EX, "extreme") + H.value_cases(e, EX, "pairs", "fast"))
    assert not fails, _fail_list(fails, f"{key}: valid extremes")


@pytest.mark.parametrize("key", KEYS)
def test_wrong_shapes(key):
    """The example's arrays transposed, truncated, extended or swapped: FCTheoryError or a finite result."""
    e = _entry(key)
    fails = H.run_cases(e, EX, H.value_cases(e, EX, "shape"))
    assert not fails, _fail_list(fails, f"{key}: wrong shapes")


@pytest.mark.slow
@pytest.mark.parametrize("key", KEYS)
def test_hypothesis_bad_values(key):
    """Bad values drawn by Hypothesis: the fixed lists plus generated numbers (below min, above max, ...)."""
    e = _entry(key)
    fails = H.hypothesis_failures(e, EX)
    assert not fails, _fail_list(fails, f"{key}: Hypothesis bad values")


@pytest.mark.slow
@pytest.mark.parametrize("key", KEYS)
def test_all_pairs_of_extremes(key):
    e = _entry(key)
    fails = H.run_cases(e, EX, H.value_cases(e, EX, "pairs", "full"))
    assert not fails, _fail_list(fails, f"{key}: pairs of extremes")


# ------------------------------------------------------------------------------ the harness itself
def test_a_new_public_function_without_validation_is_caught(monkeypatch):
    """Adding an undeclared function to __all__ fails the declaration and example checks; leaving it out of
    __all__ fails the export check (so no public function can skip the suite)."""
    import fctheory

    def new_function(x):
        return x

    new_function.__module__ = "fctheory.somewhere"
    monkeypatch.setattr(fctheory, "new_function", new_function, raising=False)
    assert "fctheory.new_function" in H.unexported_names()
    monkeypatch.setattr(fctheory, "__all__", list(fctheory.__all__) + ["new_function"])
    entries = list(H._discover_cached.__wrapped__()[0])  # a fresh walk (discover() is cached)
    new = [e for e in entries if e.key == "fctheory.new_function"]
    assert new and "has no __fc_params__" in H.check_declaration(new[0])[0].what
    assert any(
        f.key == "fctheory.new_function" and "no valid example" in f.what for f in H.coverage_failures(entries, EX)
    )


def test_bad_values_are_refused_by_their_own_kind():
    """Each generated bad value is really invalid for its kind (else the suite would demand errors wrongly)."""
    from fctheory import FCTheoryError
    from fctheory import _validate as V

    kinds = [
        V.Int(min=1),
        V.Int(min=0, max=5),
        V.Int(min=1, array=True),
        V.Real(lo=0, lo_open=True),
        V.Real(lo=0, hi=1),
        V.Real(inf_ok=True, lo=0),
        V.Real(array=True),
        V.Bool(),
        V.Choice("numpy", "numba"),
        V.Seed(),
        V.Prob(),
        V.Array(ndim=2),
        V.Array(ndim=(1, 2), integer=True, min=0, max=3),
        V.Instance(V.Kind),
        V.PathIn(),
        V.PathIn(dir=True),
        V.PathOut(),
        V.PathOut(dir=True),
        V.Int(min=1).or_none(),
    ]
    accepted = []
    for kind in kinds:
        for v in H.bad_values(kind):
            try:
                kind("x", v.make())
            except FCTheoryError as exc:
                assert "x" in str(exc)
            else:
                accepted.append(f"{kind!r} accepted {v.label}")
    assert not accepted, accepted


def test_extremes_are_valid_for_their_own_kind():
    from fctheory import _validate as V

    for kind in (
        V.Int(min=1),
        V.Int(min=1, array=True),
        V.Real(lo=0, lo_open=True),
        V.Real(lo=0, hi=1),
        V.Real(),
        V.Array(ndim=2),
    ):
        for v in H.extremes(kind, [[1.0, 2.0], [3.0, 4.0]] if isinstance(kind, V.Array) else H.MISSING):
            kind("x", v.make())  # must not raise


def test_judge_catches_each_kind_of_misbehaviour():
    """The harness reports a wrong exception, an unnamed parameter, NaN, a timeout and a mutation."""
    import numpy as np

    from fctheory import FCTheoryError

    e = H.Entry("demo.f", (), None, "function")

    def outcome(fn, **kw):
        return H.call(fn, kw, timeout=0.5)

    bad = H.Value("nan", lambda: float("nan"))
    valid = H.Value("1.0", lambda: 1.0, "valid")

    def boom(x):
        raise OverflowError("overflow")

    def wrong_name(x):
        raise FCTheoryError("y=1 is invalid")

    def spin(x):
        while True:
            pass

    def mutate(x):
        x[0] = 5.0
        return float("nan")

    assert "raised OverflowError" in H.judge(e, "x", bad, outcome(boom, x=1.0), {}, {"x": 0})[0].what
    assert "does not name 'x'" in H.judge(e, "x", bad, outcome(wrong_name, x=1.0), {}, {"x": 0})[0].what
    assert "accepted" in H.judge(e, "x", bad, outcome(lambda x: 1.0, x=1.0), {}, {"x": 0})[0].what
    assert "within" in H.judge(e, "x", valid, outcome(spin, x=1.0), {}, {"x": 0})[0].what
    whats = [f.what for f in H.judge(e, "x", valid, outcome(mutate, x=np.zeros(2)), {}, {"x": 0})]
    assert any("non-finite" in w for w in whats) and any("mutated" in w for w in whats)
    assert not H.judge(e, "x", valid, outcome(mutate, x=np.zeros(2)), {"*": ""}, {"x": 0})[0].what.startswith(
        "returned"
    )
    assert H.disallowed(["[2].history.test_loss"], {"history.test_loss": ""}) == []
    assert H.disallowed([".R"], {"history": ""}) == ["R"]


# ----------------------------------------------------------------------- docs: "Domains and errors"
API_MD = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def _docs_table():
    """The generated table of docs/api.md, less the rows of lazy packages that do not import here."""
    text = API_MD.read_text()
    reg = H.docs_table_region(text)
    assert reg is not None, f"docs/api.md lacks the markers {H.TABLE_BEGIN!r} ... {H.TABLE_END!r}"
    absent = tuple(f"| `{p}." for p in H.unavailable_packages())
    return "\n".join(row for row in text[reg[0] : reg[1]].split("\n") if not row.startswith(absent))


def test_domains_table_lists_every_public_callable():
    table = _docs_table()
    listed = set(re.findall(r"^\| `([^`]+)` \|", table, flags=re.M))
    missing = [e.key for e in ENTRIES if e.key not in listed]
    stale = sorted(listed - set(KEYS))
    assert not missing and not stale, (
        f"docs/api.md 'Domains and errors' is stale: missing {missing}, not public "
        f"{stale}; regenerate with: python -m tests.fuzz.harness --table --write"
    )


def test_domains_table_matches_the_declarations():
    assert _docs_table().strip() == H.table_markdown(ENTRIES).strip(), (
        "the declared domains changed: regenerate with python -m tests.fuzz.harness --table --write"
    )


def test_time_limit_is_cpu_time_with_a_wall_clock_backstop():
    """A computing call is stopped by its CPU time (a loaded machine does not fail a call that only waited for a
    core); a call that waits without computing is stopped by the wall-clock backstop, WALL_FACTOR × the limit."""
    import time

    def spin():
        while True:
            pass

    out = H.call(spin, {}, timeout=0.2)
    assert out.timed_out and "CPU time" in str(out.error)
    t0 = time.perf_counter()
    out = H.call(lambda: time.sleep(30), {}, timeout=0.05)
    assert out.timed_out and "wall-clock" in str(out.error)
    assert time.perf_counter() - t0 < 0.05 * H.WALL_FACTOR + 2.0
