"""proofs_check.library_mutants: every planted library bug targets an existing check and a real edit, is caught
by its checks, and leaves the library restored; a stale mutant is reported, not counted as caught."""

import pytest

import fctheory
from proofs_check import get_checks
from proofs_check.library_mutants import MUTANTS, get_mutants, run_mutant

_BASELINE = {}  # each covering check is run once on the unmodified library, shared by the tests below


def test_every_library_mutant_targets_a_check_that_exists_and_a_real_edit():
    ids = {c.id for c in get_checks()}
    assert len(MUTANTS) >= 30 and len({m.id for m in MUTANTS}) == len(MUTANTS)
    modules = {m.module for m in MUTANTS}
    assert len(modules) >= 10
    for m in MUTANTS:
        assert m.checks and set(m.checks) <= ids, m.id
        assert m.old != m.new


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
    monkeypatch.setattr(deps, "lead", lambda name: lambda t, *a, **kw: en.H_closed(t, *a, **kw))
    assert run_mutant(m).status == "MISSED"
