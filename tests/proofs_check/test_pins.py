"""proofs_check.pins: the pin table covers exactly the registered checks, each pin a plausible count."""

from proofs_check import get_checks
from proofs_check.pins import ASSERTIONS


def test_every_registered_check_has_a_pinned_assertion_count():
    assert sorted(ASSERTIONS) == sorted(c.id for c in get_checks())


def test_every_pin_counts_at_least_one_call_from_at_most_as_many_sites():
    bad = {cid: pin for cid, pin in ASSERTIONS.items() if not (1 <= pin[1] <= pin[0])}
    assert not bad, bad
