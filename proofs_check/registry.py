"""The table of checks and the runner behind ``python -m proofs_check``.

A check is a small function ``func(mutant: bool = False) -> str``: it verifies one statement of the
paper and returns a one-line detail, or raises :class:`CheckFailed`. With ``mutant=True`` it verifies a
deliberately wrong variant of the same statement (described by ``Check.mutant``), which must fail:
``--self-test`` runs every check that way and passes only if every mutant is caught.
"""

from __future__ import annotations

import fnmatch
import sys
import time
import traceback
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from types import MappingProxyType, SimpleNamespace
from typing import Callable, Mapping

__all__ = [
    "Check",
    "CheckFailed",
    "CheckResult",
    "REGISTRY",
    "register",
    "expect",
    "tolerances",
    "count_expects",
    "get_checks",
    "run_checks",
]


class CheckFailed(AssertionError):
    """Raised by a check whose statement does not hold (the only 'FAIL' outcome)."""


# expect() calls made so far, and the call sites recorded while count_expects() is active: a check that
# returns after making none is an ERROR, and proofs_check/pins.py pins how many each check makes and
# from how many distinct places (a deleted or bypassed assertion changes them)
_EXPECTS = [0]
_ACTIVE_SITES: list = []


def expect(condition, message: str) -> None:
    """Raise :class:`CheckFailed` with ``message`` unless ``condition`` is true (and count the assertion)."""
    _EXPECTS[0] += 1
    if _ACTIVE_SITES:
        f = sys._getframe(1)
        site = (f.f_code.co_filename.rsplit("/", 1)[-1], f.f_code.co_qualname, f.f_lineno - f.f_code.co_firstlineno)
        for sites in _ACTIVE_SITES:
            sites.add(site)
    if not bool(condition):
        raise CheckFailed(message)


@contextmanager
def count_expects():
    """Context manager yielding a namespace whose ``n`` (number of expect() calls) and ``sites`` (their distinct
    call sites: file, function, line offset in the function) are filled in on exit."""
    box = SimpleNamespace(n=0, sites=set())
    start = _EXPECTS[0]
    _ACTIVE_SITES.append(box.sites)
    try:
        yield box
    finally:
        _ACTIVE_SITES.remove(box.sites)
        box.n = _EXPECTS[0] - start


@dataclass(frozen=True)
class Check:
    """One entry of the table: what is checked, how, and its deliberately wrong variant.

    Attributes
    ----------
    id : str
        Short unique identifier (``--only`` matches it).
    statement : str
        The paper's statement checked, with lemma / equation numbers.
    method : str
        "symbolic", "exact enumeration", "numeric enumeration", "Hypothesis" or "SDP/convex".
    func : callable
        ``func(mutant=False) -> str`` (detail) raising :class:`CheckFailed` on failure.
    mutant : str
        The wrong statement checked by ``func(mutant=True)``.
    quick : bool
        Part of ``--quick`` (CI) runs.
    tol : mapping str -> float
        Every tolerance the check's comparisons use, declared here (and read by the check through
        :func:`tolerances`) so that tests/proofs_check/test_library.py can pin them: none can be loosened
        silently.
    library : tuple of str
        The public fctheory functions whose output the check compares (dotted names below ``fctheory``).
    oracle : str
        The independent computation they are compared with.
    """

    id: str
    statement: str
    method: str
    func: Callable[..., str]
    mutant: str
    quick: bool = True
    tol: Mapping[str, float] = field(default_factory=dict)
    library: tuple = ()
    oracle: str = ""

    def __call__(self, mutant: bool = False, **kwargs) -> str:
        return self.func(mutant=mutant, **kwargs)


REGISTRY: dict[str, Check] = {}


def register(
    id: str, statement: str, method: str, mutant: str, quick: bool = True, *, tol=None, library=(), oracle: str = ""
):
    """Decorator adding ``func`` to :data:`REGISTRY` under ``id`` (the function itself is returned).

    ``tol`` declares every tolerance of the check (read back with :func:`tolerances`), ``library`` the
    public fctheory functions it checks and ``oracle`` the independent computation they are compared with.
    """

    def deco(func):
        if id in REGISTRY:
            raise ValueError(f"duplicate check id {id!r}")
        REGISTRY[id] = Check(
            id, statement, method, func, mutant, quick, MappingProxyType(dict(tol or {})), tuple(library), oracle
        )
        func.check = REGISTRY[id]
        return func

    return deco


def tolerances(id: str) -> Mapping[str, float]:
    """The tolerances declared for check ``id`` (the only place a check takes a tolerance from)."""
    return REGISTRY[id].tol


@dataclass
class CheckResult:
    id: str
    statement: str
    method: str
    status: str  # PASS / FAIL / ERROR, or in self-test CAUGHT / MISSED / ERROR
    seconds: float
    detail: str
    assertions: int = 0  # expect() calls made

    def as_dict(self):
        return asdict(self)


# the check modules, in table order (each registers its checks when imported)
MODULES = (
    "symbolic",
    "enumeration",
    "assumption_checks",
    "properties",
    "convex",
    "certificates",
    "type1_partial",
    "type3_proof",
    "library",
    "interval_checks",
    "optimum_checks",
    "empirical_checks",
)
# callables importing the check modules, registered by the package on import (the registry must not import
# the package that imports it); get_checks runs them first
LOADERS: list[Callable[[], None]] = []


def get_checks(only: str | None = None, quick: bool = False) -> list[Check]:
    """Checks whose id matches ``only`` (comma-separated globs; a pattern without glob characters
    matches as a substring), in table order."""
    for load in LOADERS:
        load()
    out = []

    def table_position(c):  # the table's order is the modules' order, whatever order they were imported in
        mod = c.func.__module__.rsplit(".", 1)[-1]
        return MODULES.index(mod) if mod in MODULES else len(MODULES)

    for c in sorted(REGISTRY.values(), key=table_position):  # sorted() is stable: definition order within a module
        if quick and not c.quick:
            continue
        if only:
            pats = [p.strip() for p in only.split(",") if p.strip()]
            if not any(fnmatch.fnmatch(c.id, p) if any(ch in p for ch in "*?[") else p in c.id for p in pats):
                continue
        out.append(c)
    return out


def run_checks(only=None, *, quick: bool = False, self_test: bool = False, on_result=None) -> list[CheckResult]:
    """Run the selected checks (or their mutants with ``self_test``) and return the results.

    In a normal run a check PASSes when it returns, FAILs on :class:`CheckFailed` and is an ERROR
    on any other exception. In a self-test the mutant must raise :class:`CheckFailed` (CAUGHT);
    returning normally is MISSED and any other exception an ERROR (a crash is not a caught mutant).
    """
    results = []
    for c in get_checks(only, quick):
        t0 = time.perf_counter()
        n_assert = SimpleNamespace(n=0)
        try:
            with count_expects() as n_assert:
                detail = c.func(mutant=self_test, quick=quick)
            status = "MISSED" if self_test else "PASS"
            if n_assert.n == 0:  # a check that asserted nothing has not checked anything
                status, detail = "ERROR", f"no assertion was made ({detail})"
        except CheckFailed as exc:
            detail = str(exc)
            status = "CAUGHT" if self_test else "FAIL"
        except Exception as exc:  # noqa: BLE001 - reported, never hidden
            tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
            detail = f"{tb}"
            status = "ERROR"
        res = CheckResult(c.id, c.statement, c.method, status, time.perf_counter() - t0, str(detail), n_assert.n)
        results.append(res)
        if on_result is not None:
            on_result(res)
    return results


def listing(check) -> dict:
    """What ``--list`` shows of a check (shared by ``python -m proofs_check`` and ``fctheory check``)."""
    return dict(
        id=check.id,
        statement=check.statement,
        method=check.method,
        mutant=check.mutant,
        quick=check.quick,
        tol=dict(check.tol),
        library=list(check.library),
        oracle=check.oracle,
    )


def listing_text(check) -> str:
    """The ``--list`` entry of a check as text."""
    return (
        f"{check.id}\n    statement: {check.statement}\n    method:    {check.method}\n"
        f"    mutant:    {check.mutant}\n    quick:     {check.quick}\n"
        f"    library:   {', '.join(check.library) or '-'}\n    oracle:    {check.oracle}\n"
        f"    tol:       {dict(check.tol)}"
    )


def summary_lines(results, bad, lib_results, lib_bad, self_test) -> list:
    """The closing lines of a run (shared by ``python -m proofs_check`` and ``fctheory check``)."""
    word = "check mutants caught" if self_test else "passed"
    lines = [
        f"{len(results) - len(bad)}/{len(results)} {word}"
        + (f"; not OK: {', '.join(r.id for r in bad)}" if bad else "")
    ]
    if self_test:
        rate = (len(lib_results) - len(lib_bad)) / max(len(lib_results), 1)
        lines.append(
            f"{len(lib_results) - len(lib_bad)}/{len(lib_results)} library mutants caught ({100 * rate:.0f}%)"
            + (f"; not caught: {', '.join(f'{r.id} ({r.status})' for r in lib_bad)}" if lib_bad else "")
        )
    return lines
