"""proofs_check checks the library: pinned tolerances, declared library functions and oracles, planted
library bugs (proofs_check.library_mutants) caught, a weakened lower bound caught, symbolic proofs for
symbolic L, and no .hypothesis/ folder left behind."""
import ast
import importlib
import inspect

import numpy as np
import pytest

import fctheory
from proofs_check import CheckFailed, get_checks
from proofs_check.library_mutants import MUTANTS, get_mutants, run_mutant

# Every tolerance of every check, pinned: loosening one in proofs_check (say 1e-12 -> 1e-3) fails this test.
TOLERANCES = {
    "lemmaB-i-pascal": {},
    "lemmaB-ii-sums": {},
    "lemmaB-iii-theta": {},
    "binomial-identity-H": {"rel": 1e-12},
    "H-strict-convexity": {"rel": 1e-12},
    "tau-trivial-threshold": {"rel": 1e-12},
    "lemmaF-claimA-value": {"rel": 1e-12},
    "lemmaM-claimD-value": {"rel": 1e-12},
    "lemmaK-lemmaR-constants": {"rel": 1e-12},
    "eq148-149-to-7-8": {"rel": 1e-12},
    "propD-monotonicity": {"rel": 1e-12},
    "lemmaB-enum-full": {},
    "lemmaK-eq92": {"rel": 1e-12},
    "lemmaR-eq124": {"rel": 1e-12},
    "propC-gradient": {"abs": 1e-13},
    "thm2-critical-point": {"lam_max_rel": 1e-14, "residual": 1e-12, "grad": 1e-12},
    "assumptionB-lemmaC": {},
    "assumptionA-random": {},
    "assumptionB-certificates": {"min_eig": 1e-06, "distance": 0.001, "residual": 1e-10},
    "existence-assumptionA": {},
    "lemmaB-weaker-than-A": {},
    "lemmaB-iii-forced": {},
    "thmG-nuclear-inequality": {"rel": 1e-10, "imbalance": 0.001, "strict": 1e-12, "nonzero": 1e-06},
    "thmD-lower-bound": {"rel": 1e-12},
    "lemmaF-lemmaM-bounds": {"rel": 1e-12},
    "convex-f-crosscheck": {"rel": 1e-12},
    "thm1-convex-optimum": {"claim_H": 1e-09, "gap": 1e-10, "rel": 1e-12, "cvx": 1e-06},
    "thm2-type3-conjecture": {"grad": 1e-11, "claim_H": 1e-09, "gap": 1e-09, "cvx": 1e-06},
    "thmG-random-K": {"gap": 1e-06},
    "lemmaB-sets-collapse": {"cvx": 1e-07, "H_Z": 1e-09},
    "predictors-mpmath": {"rel": 1e-12, "residual_rel": 0.2, "residual_abs": 1e-18, "near": 1e-05, "above": 1e-09},
    "risk-engine": {"rel": 1e-12, "grad_abs": 1e-12, "fd_rel": 1e-06, "fd_step": 1e-05},
    "predictions-configurations": {"rel": 1e-12, "abs": 1e-12, "grad": 1e-11},
    "convex-lower-bound": {"slack": 1e-12, "tight": 1e-10},
}

# checks of a statement that no fctheory function computes (the reason is the oracle's text)
STATEMENT_ONLY = {"thmG-nuclear-inequality"}


def test_every_check_tolerance_is_pinned():
    assert {c.id: dict(c.tol) for c in get_checks()} == TOLERANCES


def _check_bodies():
    for c in get_checks():
        fn = ast.parse(inspect.getsource(c.func)).body[0]
        yield c, fn, inspect.getsourcelines(c.func)[1]


def test_no_tolerance_literal_outside_the_declared_table():
    """Tolerances live in ``register(..., tol=...)`` only: a small float literal in a check's body would be an
    unpinned tolerance."""
    found = []
    for c, fn, line0 in _check_bodies():
        for node in ast.walk(ast.Module(body=fn.body, type_ignores=[])):
            if isinstance(node, ast.Constant) and isinstance(node.value, float) and 0 < abs(node.value) < 1e-3:
                found.append(f"{c.id}: {node.value!r} at line {line0 + node.lineno - 1}")
    assert not found, found


def test_every_check_reads_its_tolerances_from_the_table():
    for c, fn, _ in _check_bodies():
        if not c.tol:
            continue
        src = ast.unparse(fn)
        assert f'tolerances("{c.id}")' in src or f"tolerances('{c.id}')" in src, c.id


def _public(name):
    """The public fctheory object named ``name`` (``X``, ``module.X`` with X in the module's __all__, or
    ``Class.method``), or None."""
    head, _, tail = name.rpartition(".")
    if not head:
        return getattr(fctheory, name, None) if name in fctheory.__dict__ and not name.startswith("_") else None
    if head[0].isupper():
        cls = getattr(fctheory, head, None)
        return getattr(cls, tail, None) if cls is not None and not tail.startswith("_") else None
    mod = importlib.import_module(f"fctheory.{head}")
    return getattr(mod, tail, None) if tail in getattr(mod, "__all__", ()) else None


def test_every_check_compares_a_public_fctheory_function_with_an_independent_oracle():
    for c in get_checks():
        assert c.oracle, f"{c.id} declares no independent oracle"
        if c.id in STATEMENT_ONLY:
            assert not c.library
            continue
        assert c.library, f"{c.id} compares no fctheory function"
        for name in c.library:
            assert _public(name) is not None, f"{c.id}: {name} is not a public fctheory function"


def test_every_library_mutant_targets_a_check_that_exists_and_a_real_edit():
    ids = {c.id for c in get_checks()}
    assert len(MUTANTS) >= 30 and len({m.id for m in MUTANTS}) == len(MUTANTS)
    modules = {m.module for m in MUTANTS}
    assert len(modules) >= 10
    for m in MUTANTS:
        assert m.checks and set(m.checks) <= ids, m.id
        assert m.old != m.new


# --- planted library bugs ---------------------------------------------------------------------------
_BASELINE = {}  # each covering check is run once on the unmodified library, shared by the tests below


@pytest.mark.parametrize("mutant", get_mutants(slow=False), ids=lambda m: m.id)
def test_library_mutant_is_caught_by_its_checks(mutant):
    res = run_mutant(mutant, baseline=_BASELINE)
    assert res.status == "CAUGHT", f"{mutant.id}: {res.status}: {res.detail}"


@pytest.mark.slow
@pytest.mark.parametrize("mutant", [m for m in MUTANTS if m.slow], ids=lambda m: m.id)
def test_numba_kernel_mutant_is_caught_by_its_checks(mutant):
    res = run_mutant(mutant, baseline=_BASELINE)
    assert res.status == "CAUGHT", f"{mutant.id}: {res.status}: {res.detail}"


def test_library_mutants_restore_the_library():
    before = fctheory.H(3.0, n_c=3, n_w=6, L=2, K=9, lam=0.01)
    m = next(m for m in MUTANTS if m.id == "G-n_c-1")
    with m.patch():
        assert fctheory.H(3.0, n_c=3, n_w=6, L=2, K=9, lam=0.01) != before
    assert fctheory.H(3.0, n_c=3, n_w=6, L=2, K=9, lam=0.01) == before


def test_stale_mutant_is_reported_not_caught():
    from proofs_check.library_mutants import LibraryMutant

    m = LibraryMutant("stale", "fctheory.tau", "H", "no such text in H", "x", "d", ("lemmaK-eq92",))
    assert run_mutant(m).status == "STALE"


def test_a_check_that_ignores_the_library_misses_its_mutant(monkeypatch):
    """If lemmaK-eq92 compared its enumeration with a private copy of (92) instead of fctheory.H, the wrong-eta
    library mutant would go unnoticed: the self-test reports it MISSED (and --self-test exits 1)."""
    import dataclasses

    import proofs_check._deps as deps
    import proofs_check.enumeration as en

    m = dataclasses.replace(next(m for m in MUTANTS if m.id == "eta-kappa"), checks=("lemmaK-eq92",))
    monkeypatch.setattr(deps, "lead", lambda name: (lambda t, *a, **kw: en.H_closed(t, *a, **kw)))
    assert run_mutant(m).status == "MISSED"


# --- the rigorous lower bound ------------------------------------------------------------------------
def _weakened(kind):
    from proofs_check import _risk

    def lb(S, X, lam):
        f, G = _risk.f_grad(S, X)
        gop = float(np.linalg.norm(G, 2))
        B = np.log(S.K) / lam
        if kind == "no-linear-term":
            return f + B * min(0.0, lam - gop), gop / lam
        if kind == "no-nuclear-term":
            return f - float(np.sum(G * X)), gop / lam
        if kind == "max-instead-of-min":
            return f - float(np.sum(G * X)) + B * max(0.0, lam - gop), gop / lam
        if kind == "B-without-1/lambda":
            return f - float(np.sum(G * X)) + np.log(S.K) * min(0.0, lam - gop), gop / lam
        raise AssertionError(kind)

    return lb


@pytest.mark.parametrize("kind", ["no-linear-term", "no-nuclear-term", "max-instead-of-min", "B-without-1/lambda"])
def test_a_weakened_lower_bound_is_detected(monkeypatch, kind):
    import proofs_check.convex as cx
    from proofs_check.library import check_lower_bound

    check_lower_bound(quick=True)
    monkeypatch.setattr(cx, "lower_bound", _weakened(kind))
    with pytest.raises(CheckFailed):
        check_lower_bound(quick=True)


# --- symbolic proofs for symbolic L --------------------------------------------------------------------
def test_binomial_theorem_is_proved_by_an_induction_on_symbolic_L():
    from proofs_check.symbolic import binomial_theorem_by_induction

    steps = binomial_theorem_by_induction()
    assert any("Pascal" in s for s in steps) and any("S(M+1) = (1+y) S(M)" in s for s in steps)


def test_induction_step_fails_for_a_wrong_recursion(monkeypatch):
    """The proof is not a restatement: with a wrong Pascal rule the induction step is refused."""
    import sympy as sp

    import proofs_check.symbolic as sym

    sym._induction_steps.cache_clear()
    real = sp.binomial

    def wrong(a, b):  # C(M+1, ρ) taken as C(M, ρ) only
        a = sp.sympify(a)
        return real(a - 1, b) if a.has(sym._M) and (a - sym._M) == 1 else real(a, b)

    monkeypatch.setattr(sym.sp, "binomial", wrong)
    try:
        with pytest.raises(CheckFailed):
            sym.binomial_theorem_by_induction()
    finally:
        monkeypatch.undo()
        sym._induction_steps.cache_clear()


def test_lemma_B_ii_sum_holds_for_symbolic_L_without_the_L_range(monkeypatch):
    """The symbolic-L part alone decides (41): with the L = 1..12 loop emptied the mutant still fails."""
    import proofs_check.symbolic as sym

    monkeypatch.setattr(sym, "_L_RANGE", range(0))
    sym.check_lemma_B_ii(quick=True)
    with pytest.raises(CheckFailed, match="symbolic L"):
        sym.check_lemma_B_ii(mutant=True, quick=True)
    with pytest.raises(CheckFailed, match="symbolic L"):
        sym.check_binomial_identity(mutant=True, quick=True)


# --- no files left behind ----------------------------------------------------------------------------------
def test_hypothesis_checks_leave_no_hypothesis_folder(tmp_path, monkeypatch):
    from proofs_check.properties import check_nuclear_inequality

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("HYPOTHESIS_STORAGE_DIRECTORY", raising=False)
    check_nuclear_inequality(quick=True)
    assert list(tmp_path.iterdir()) == []
