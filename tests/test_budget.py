"""fctheory._budget: the work budget in force (block, process, environment) and the refusals it drives."""

import math

import pytest

import fctheory as fc
from fctheory._budget import budget, check_work, get_budget, log_size, set_budget


def test_log_size_equals_the_log_of_the_exact_product():
    factors = (3, 10**200, 7, 2.5)
    assert log_size(*factors) == pytest.approx(
        math.log(3) + 200 * math.log(10) + math.log(7) + math.log(2.5), rel=1e-15
    )


def test_log_size_of_a_zero_factor_is_minus_infinity():
    assert log_size(5, 0, 10**400) == -math.inf


def test_budget_block_applies_inside_and_is_restored_after():
    before = get_budget()
    with budget(max_items=10) as b:
        assert get_budget() == b and b.max_items == 10 and b.max_bytes == before.max_bytes
        with pytest.raises(fc.FCTheoryError, match=r"n=11 is invalid: .*needs about 11 items.*max_items=10"):
            check_work("n", 11, items=11)
        check_work("n", 10, items=10)  # at the limit: allowed
    assert get_budget() == before


def test_nested_blocks_stack_and_unwind():
    outer_seconds = get_budget().max_seconds
    with budget(max_bytes=100):
        with budget(max_seconds=5):
            assert get_budget().max_bytes == 100 and get_budget().max_seconds == 5
        assert get_budget().max_bytes == 100 and get_budget().max_seconds == outer_seconds


def test_check_work_compares_log_sizes_with_the_log_of_the_limit():
    with budget(max_items=1e6):
        check_work("K", None, items=("log", math.log(1e6) - 1e-9))
        with pytest.raises(fc.FCTheoryError, match="max_items"):
            check_work("K", None, items=("log", math.log(1e6) + 1e-9))


def test_set_budget_changes_the_process_budget_and_can_be_undone():
    old = get_budget()
    try:
        new = set_budget(max_seconds=3.0)
        assert new.max_seconds == 3.0 and new.max_bytes == old.max_bytes and get_budget() == new
    finally:
        set_budget(max_bytes=old.max_bytes, max_seconds=old.max_seconds, max_items=old.max_items)
    assert get_budget() == old


@pytest.mark.parametrize("bad", [0, -1.0, float("nan")])
def test_non_positive_limits_are_refused(bad):
    with pytest.raises(fc.FCTheoryError, match="max_bytes"):
        with budget(max_bytes=bad):
            pass
