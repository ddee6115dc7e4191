"""Every proofs_check check passes (quick mode) and its mutant — a deliberately wrong statement — fails.

One test per statement of the paper, named after it; the checks themselves live in proofs_check/.
"""
import contextlib
import functools

import pytest

from proofs_check import CheckFailed, count_expects
from proofs_check.assumption_checks import (
    check_assumption_A_random,
    check_assumption_B_cert,
    check_existence_A,
    check_lemma_B_forced,
    check_lemma_B_weaker,
    check_lemma_C,
)
from proofs_check.convex import (
    check_cvx_f,
    check_lemma_B_sets_collapse,
    check_random_K,
    check_thm1_convex,
    check_type3_conjecture,
)
from proofs_check.enumeration import (
    check_lemma_B_full,
    check_lemma_K,
    check_lemma_R,
    check_prop_C,
    check_thm2_critical,
)
from proofs_check.library import check_lower_bound, check_predictions, check_predictors_mpmath, check_risk_engine
from proofs_check.properties import check_bilinear_bounds, check_nuclear_inequality, check_theorem_D
from proofs_check.symbolic import (
    check_148_149,
    check_binomial_identity,
    check_claim_A,
    check_claim_D,
    check_H_convexity,
    check_lemma_B_i,
    check_lemma_B_ii,
    check_lemma_B_iii,
    check_lemma_K_R_constants,
    check_prop_D,
    check_tau_threshold,
)


# (expect() calls, distinct expect() call sites) of every check in quick mode: deleting or bypassing one of a
# check's assertions changes these, so it cannot go unnoticed. Regenerate (after a deliberate change of a
# check) with: python -c "from tests.proofs_check.test_registry import print_assertion_counts; print_assertion_counts()"
ASSERTIONS = {
    "lemmaB-i-pascal": (17, 3),
    "lemmaB-ii-sums": (25, 6),
    "lemmaB-iii-theta": (12, 6),
    "binomial-identity-H": (25, 6),
    "H-strict-convexity": (9, 4),
    "tau-trivial-threshold": (11, 5),
    "lemmaF-claimA-value": (12, 4),
    "lemmaM-claimD-value": (15, 3),
    "lemmaK-lemmaR-constants": (63, 7),
    "eq148-149-to-7-8": (5, 4),
    "propD-monotonicity": (8, 6),
    "lemmaB-enum-full": (38, 5),
    "lemmaK-eq92": (48, 2),
    "lemmaR-eq124": (24, 2),
    "propC-gradient": (4, 2),
    "thm2-critical-point": (6, 3),
    "assumptionB-lemmaC": (8, 2),
    "assumptionA-random": (411, 2),
    "assumptionB-certificates": (20, 4),
    "existence-assumptionA": (9, 3),
    "lemmaB-weaker-than-A": (7, 2),
    "lemmaB-iii-forced": (48, 3),
    "thmG-nuclear-inequality": (250, 5),
    "thmD-lower-bound": (60, 3),
    "lemmaF-lemmaM-bounds": (156, 6),
    "convex-f-crosscheck": (4, 1),
    "thm1-convex-optimum": (4, 4),
    "thm2-type3-conjecture": (8, 4),
    "thmG-random-K": (2, 1),
    "lemmaB-sets-collapse": (15, 2),
    "predictors-mpmath": (132, 3),
    "risk-engine": (56, 6),
    "predictions-configurations": (57, 6),
    "convex-lower-bound": (20, 3),
}


def print_assertion_counts():
    from proofs_check import get_checks

    for c in get_checks():
        with count_expects() as box:
            c.func(quick=True)
        print(f"    {c.id!r}: ({box.n}, {len(box.sites)}),")


def _holds_and_mutant_fails(check):
    """The check passes in quick mode making exactly its pinned number of assertions, every library function it
    declares is actually called, and its mutant fails."""
    cid = check.check.id
    with _calls_recorded(check.check.library) as called, count_expects() as box:
        detail = check(quick=True)
    assert isinstance(detail, str) and detail
    assert (box.n, len(box.sites)) == ASSERTIONS[cid], f"{cid}: (assertions, sites) = {(box.n, len(box.sites))}"
    missing = sorted(name for name in check.check.library if not called[name])
    assert not missing, f"{cid} declares but never calls {missing}"
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
            for sub in ("tau", "tau_star", "type3", "configurations", "predictions", "assumptions", "risk", "frames",
                        "network"):
                mod = importlib.import_module(f"fctheory.{sub}")
                if mod is not home and getattr(mod, name, None) is obj:
                    wrap(mod, name, name)
    try:
        yield called
    finally:
        for owner, attr, orig in reversed(undo):
            setattr(owner, attr, orig)


# --- symbolic (sympy) -------------------------------------------------------------------------
def test_lemma_B_i_pascal_rule_39():
    _holds_and_mutant_fails(check_lemma_B_i)


def test_lemma_B_ii_column_sums_41():
    _holds_and_mutant_fails(check_lemma_B_ii)


def test_lemma_B_iii_theta_r_and_A_r_42():
    _holds_and_mutant_fails(check_lemma_B_iii)


def test_binomial_identity_behind_H_92():
    _holds_and_mutant_fails(check_binomial_identity)


def test_H_and_H_star_strictly_convex():
    _holds_and_mutant_fails(check_H_convexity)


def test_trivial_solution_threshold_of_tau():
    _holds_and_mutant_fails(check_tau_threshold)


def test_claim_A_lemma_F_optimal_value():
    _holds_and_mutant_fails(check_claim_A)


def test_claim_D_lemma_M_optimal_value():
    _holds_and_mutant_fails(check_claim_D)


def test_lemma_K_and_R_margins_and_constants():
    _holds_and_mutant_fails(check_lemma_K_R_constants)


def test_148_149_rewrite_to_7_8():
    _holds_and_mutant_fails(check_148_149)


def test_proposition_D_monotonicity_and_condition_9():
    _holds_and_mutant_fails(check_prop_D)


# --- enumeration --------------------------------------------------------------------------------
def test_lemma_B_exact_on_full_latent_sets():
    _holds_and_mutant_fails(check_lemma_B_full)


def test_lemma_K_92_type_I_risk_equals_H():
    _holds_and_mutant_fails(check_lemma_K)


def test_lemma_R_124_type_II_risk_equals_H_star():
    _holds_and_mutant_fails(check_lemma_R)


def test_proposition_C_gradient_at_type_III_point():
    _holds_and_mutant_fails(check_prop_C)


def test_theorem_2_type_III_point_is_critical():
    _holds_and_mutant_fails(check_thm2_critical)


# --- assumptions --------------------------------------------------------------------------------
def test_lemma_C_assumption_B_on_full_latent_set():
    _holds_and_mutant_fails(check_lemma_C)


def test_assumption_A_fails_on_random_latent_sets():
    _holds_and_mutant_fails(check_assumption_A_random)


def test_assumption_B_certificates_are_psd_solutions_of_44():
    _holds_and_mutant_fails(check_assumption_B_cert)


def test_no_assumption_A_latent_set_below_n_c_power_L():
    _holds_and_mutant_fails(check_existence_A)


def test_lemma_B_strictly_weaker_than_assumption_A():
    _holds_and_mutant_fails(check_lemma_B_weaker)


def test_lemma_B_iii_forces_theta_r_and_A_r():
    _holds_and_mutant_fails(check_lemma_B_forced)


# --- Hypothesis -----------------------------------------------------------------------------------
def test_theorem_G_nuclear_norm_inequality():
    _holds_and_mutant_fails(check_nuclear_inequality)


def test_theorem_D_lower_bound_50_51():
    _holds_and_mutant_fails(check_theorem_D)


def test_lemma_F_and_M_bilinear_bounds():
    _holds_and_mutant_fails(check_bilinear_bounds)


# --- convex certificates --------------------------------------------------------------------------
def test_cvxpy_f_matches_enumerated_true_risk():
    _holds_and_mutant_fails(check_cvx_f)


def test_theorem_1_optimum_H_tau_certified_by_convex_program():
    _holds_and_mutant_fails(check_thm1_convex)


def test_type_III_conjecture_certified_on_a_small_task():
    _holds_and_mutant_fails(check_type3_conjecture)


# --- the library against independent oracles -------------------------------------------------------
def test_library_predictors_match_50_digit_mpmath():
    _holds_and_mutant_fails(check_predictors_mpmath)


def test_library_exact_risk_and_gradient_match_enumeration():
    _holds_and_mutant_fails(check_risk_engine)


def test_library_predictions_and_configurations_match_definitions():
    _holds_and_mutant_fails(check_predictions)


def test_convex_lower_bound_is_below_the_true_minimum_and_tight():
    _holds_and_mutant_fails(check_lower_bound)


@pytest.mark.slow
def test_theorem_G_random_latent_sets_local_equals_global():
    _holds_and_mutant_fails(check_random_K)


@pytest.mark.slow
def test_lemma_B_sets_below_n_c_power_L_collapse():
    _holds_and_mutant_fails(check_lemma_B_sets_collapse)


@pytest.mark.slow
def test_type_III_conjecture_full_grid():
    check_type3_conjecture(quick=False)
