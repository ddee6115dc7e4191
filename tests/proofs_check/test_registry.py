"""Every proofs_check check passes (quick mode) and its mutant — a deliberately wrong statement — fails.

One parametrized test over the registry (proofs_check.get_checks(): the test id is the check id); the
checks themselves live in proofs_check/, their pinned assertion counts in proofs_check/pins.py.
"""

import contextlib
import functools

import pytest

from proofs_check import CheckFailed, count_expects, get_checks
from proofs_check.convex import check_type3_conjecture
from proofs_check.pins import ASSERTIONS

CHECKS = get_checks()


@pytest.mark.parametrize("check", [pytest.param(c, id=c.id, marks=() if c.quick else pytest.mark.slow) for c in CHECKS])
def test_check_holds_and_its_mutant_fails(check):
    """The check passes in quick mode making exactly its pinned number of assertions, every library function it
    declares is actually called, and its mutant fails."""
    with _calls_recorded(check.library) as called, count_expects() as box:
        detail = check(quick=True)
    assert isinstance(detail, str) and detail
    assert (box.n, len(box.sites)) == ASSERTIONS[check.id], (
        f"{check.id}: (assertions, sites) = {(box.n, len(box.sites))}"
    )
    missing = sorted(name for name in check.library if not called[name])
    assert not missing, f"{check.id} declares but never calls {missing}"
    with pytest.raises(CheckFailed):
        check(mutant=True, quick=True)


@contextlib.contextmanager
def _calls_recorded(names):
    """Count calls of the public fctheory functions ``names`` (as declared in Check.library), wherever a check
    looks them up: ``fctheory.X``, the home module's ``X``, ``fctheory.mod.X`` or ``fctheory.Class.method``."""
    import importlib

    import fctheory

    called = {n: 0 for n in names}
    undo = []

    def wrap(owner, attr, name):
        orig = owner.__dict__[attr] if isinstance(owner, type) else getattr(owner, attr)

        @functools.wraps(orig)
        def counting(*a, **k):
            called[name] += 1
            return orig(*a, **k)

        setattr(owner, attr, counting)
        undo.append((owner, attr, orig))

    for name in names:
        head, _, tail = name.rpartition(".")
        if head and head[0].isupper():  # Class.method
            wrap(getattr(fctheory, head), tail, name)
        elif head:  # module.function
            wrap(importlib.import_module(f"fctheory.{head}"), tail, name)
        else:
            obj = getattr(fctheory, name)
            home = importlib.import_module(obj.__module__)
            wrap(fctheory, name, name)
            if home is not fctheory and getattr(home, name, None) is obj:
                wrap(home, name, name)
            for sub in (
                "tau",
                "tau_star",
                "type3",
                "configurations",
                "predictions",
                "assumptions",
                "risk",
                "frames",
                "network",
            ):
                mod = importlib.import_module(f"fctheory.{sub}")
                if mod is not home and getattr(mod, name, None) is obj:
                    wrap(mod, name, name)
    try:
        yield called
    finally:
        for owner, attr, orig in reversed(undo):
            setattr(owner, attr, orig)


@pytest.mark.slow
def test_type_III_conjecture_full_grid():
    check_type3_conjecture(quick=False)
