"""proofs_check.symbolic: the proofs for symbolic L (the binomial theorem by induction, (41)) decide on their own
and refuse a wrong recursion."""

import pytest

from proofs_check import CheckFailed


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
