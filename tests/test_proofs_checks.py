"""Every proofs_check check passes (quick mode) and its mutant — a deliberately wrong statement — fails.

One test per statement of the paper, named after it; the checks themselves live in proofs_check/.
"""
import pytest

from proofs_check import CheckFailed
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


def _holds_and_mutant_fails(check):
    detail = check(quick=True)
    assert isinstance(detail, str) and detail
    with pytest.raises(CheckFailed):
        check(mutant=True, quick=True)


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


@pytest.mark.slow
def test_theorem_G_random_latent_sets_local_equals_global():
    _holds_and_mutant_fails(check_random_K)


@pytest.mark.slow
def test_lemma_B_sets_below_n_c_power_L_collapse():
    _holds_and_mutant_fails(check_lemma_B_sets_collapse)


@pytest.mark.slow
def test_type_III_conjecture_full_grid():
    check_type3_conjecture(quick=False)
