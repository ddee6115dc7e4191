"""proofs_check._mutate: source edits of a function's code object apply inside the block only, and stale or
ambiguous edits are refused before anything changes."""

import pytest

from proofs_check._mutate import StaleMutant, attribute, holds, source_edit


def test_source_edit_changes_the_function_inside_the_block_and_restores_it():
    from proofs_check import enumeration

    assert enumeration._kappa(3) == 1.5
    with source_edit("proofs_check.enumeration", "_kappa", "n_c / (n_c - 1)", "n_c / n_c"):
        assert enumeration._kappa(3) == 1.0
    assert enumeration._kappa(3) == 1.5
    assert holds("proofs_check.enumeration", "_kappa", "n_c / (n_c - 1)")


def test_source_edit_refuses_text_that_is_not_in_the_function():
    from proofs_check import enumeration

    with pytest.raises(StaleMutant):
        with source_edit("proofs_check.enumeration", "_kappa", "no such text anywhere", "x"):
            pass
    assert enumeration._kappa(3) == 1.5


def test_holds_is_false_for_a_missing_function_or_text():
    assert not holds("fctheory.tau", "no_such_function", "x")
    assert not holds("fctheory.tau", "lambda_trivial", "text that is not in the source")


def test_attribute_sets_a_module_constant_inside_the_block_only():
    import fctheory.risk._brute as brute

    old = brute.MAX_BRUTE_PAIRS
    with attribute("fctheory.risk._brute", "MAX_BRUTE_PAIRS", 7):
        assert brute.MAX_BRUTE_PAIRS == 7
    assert brute.MAX_BRUTE_PAIRS == old
    with pytest.raises(StaleMutant):
        with attribute("fctheory.risk._brute", "NOT_A_NAME", 1):
            pass
