"""Input validation of the analytic core: every bad input refused cleanly, sizes checked before any work,
valid extremes answered (λ down to 5e-324, K up to 1e300, L up to 10**4).

Each test targets one root cause or one extreme; oracles are mpmath (the predictors' ``precision="mp"``
paths evaluate the formulas as printed), exact integer arithmetic and the binomial theorem.
"""

import math
import time
from fractions import Fraction

import numpy as np
import pytest

import fctheory as fc
from fctheory.cli import main as cli_main

ERR = fc.FCTheoryError


def refused(fn, *args, name, **kwargs):
    """Call, expect the project error whose message starts with ``name=``; return the message."""
    with pytest.raises(ERR) as info:
        fn(*args, **kwargs)
    msg = str(info.value)
    assert msg.startswith(f"{name}="), msg
    return msg


def rel(a, b):
    return abs(float(a) / float(b) - 1)


# ------------------------------------------------------------------------------ sizes before work
def test_task_full_refuses_astronomical_L_without_forming_n_c_power_L():
    t0 = time.perf_counter()
    msg = refused(fc.Task.full, 3, 2, 2**70, name="L")
    assert time.perf_counter() - t0 < 1.0
    assert "limit 10**7" in msg


def test_task_full_under_the_item_limit_but_over_the_memory_budget_is_refused():
    # 2**23 latent variables (< 10**7) of length 23 need well over 2 GiB
    msg = refused(fc.Task.full, 2, 1, 23, name="L")
    assert "max_bytes" in msg


def test_task_full_follows_the_budget_in_force():
    with fc.budget(max_bytes=2**16):
        refused(fc.Task.full, 2, 1, 12, name="L")
    assert fc.Task.full(2, 1, 12).K == 2**12


def test_task_random_over_the_memory_budget_is_refused_before_sampling():
    t0 = time.perf_counter()
    msg = refused(fc.Task.random, 2, 1, 30, 10**6, seed=0, name="K")
    assert time.perf_counter() - t0 < 1.0 and "max_bytes" in msg


def test_task_random_K_beyond_the_latent_space_is_refused_in_logs():
    refused(fc.Task.random, 2, 1, 2, 5, name="K")
    refused(fc.Task.random, 2, 1, 10**6, 10**8, name="K")  # K over 10**7, n_c**L never formed


def test_task_hamming_over_budget_is_refused():
    task = fc.Task.random(2, 1, 40, 2000, seed=0)
    with fc.budget(max_bytes=2**20):
        refused(task.hamming, name="K")
    assert task.hamming().shape == (2000, 2000)


def test_broadcast_request_over_budget_is_refused_before_allocation():
    t0 = time.perf_counter()
    msg = refused(fc.tau, n_c=3, n_w=12, L=2, K=np.full((10**5, 1), 4.0), lam=np.full((1, 10**5), 0.01), name="shape")
    assert time.perf_counter() - t0 < 1.0 and "items" in msg


def test_search_lemma_B_stops_at_the_time_budget_with_the_reason():
    t0 = time.perf_counter()
    with fc.budget(max_seconds=1.0):
        msg = refused(fc.search_lemma_B, n_c=3, L=3, with_origin=True, name="L")
    assert time.perf_counter() - t0 < 5.0
    assert "max_seconds" in msg and "sets examined" in msg


def test_search_assumption_A_integrality_refuses_huge_latent_spaces():
    t0 = time.perf_counter()
    refused(fc.search_assumption_A, n_c=2, L=10**6, method="integrality", name="L")
    with fc.budget(max_items=1e4):
        msg = refused(fc.search_assumption_A, n_c=2, L=20, method="integrality", name="L")
    assert "max_items" in msg and time.perf_counter() - t0 < 1.0
    # one K < n_c**L is cheap at any size below 2**62 (no enumeration, no example)
    assert fc.search_assumption_A(n_c=2, L=60, K=5, method="integrality").counts == {5: 0}


def test_check_assumption_B_refuses_an_exact_null_space_over_the_time_budget():
    task = fc.Task.random(30, 1, 2, 40, seed=0)  # m = 465 symmetric unknowns: sympy needs hours
    t0 = time.perf_counter()
    msg = refused(fc.check_assumption_B, task, name="n_c")
    assert "max_seconds" in msg and time.perf_counter() - t0 < 1.0


def test_lemma_B_properties_refuses_a_huge_n_c_before_allocating():
    refused(fc.lemma_B_properties, np.array([[0, 1], [1, 0]]), n_c=10**6, name="n_c")


# ------------------------------------------------------------------------------ valid extremes
def test_tau_at_the_smallest_subnormal_lambda_matches_mpmath(host_backend):
    t = fc.tau(n_c=3, n_w=12, L=2, K=4, lam=5e-324, backend=host_backend)
    ref = fc.tau(n_c=3, n_w=12, L=2, K=4, lam=5e-324, precision="mp")
    assert np.isfinite(t) and rel(t, ref) < 1e-13


def test_tau_star_at_the_smallest_subnormal_lambda_matches_mpmath():
    t = fc.tau_star(n_c=3, L=2, K=4, d=3, lam=5e-324)
    assert np.isfinite(t) and rel(t, fc.tau_star(n_c=3, L=2, K=4, d=3, lam=5e-324, precision="mp")) < 1e-13


def test_tau_with_K_a_float_near_1e300_matches_mpmath():
    # K = 1e300 <= 3**1000; lambda far below lambda_0 ~ 9e-150 so that tau > 0
    t = fc.tau(n_c=3, n_w=12, L=1000, K=1e300, lam=1e-200)
    assert t > 0 and rel(t, fc.tau(n_c=3, n_w=12, L=1000, K=1e300, lam=1e-200, precision="mp")) < 1e-12


@pytest.mark.parametrize("K", [1, 1e300])
def test_tau_at_L_ten_thousand_matches_mpmath(K):
    lam = 1e-3 if K == 1 else 1e-200
    t = fc.tau(n_c=3, n_w=12, L=10**4, K=K, lam=lam)
    assert t > 0 and rel(t, fc.tau(n_c=3, n_w=12, L=10**4, K=K, lam=lam, precision="mp")) < 1e-12


def test_tau_star_at_L_ten_thousand_matches_mpmath():
    t = fc.tau_star(n_c=3, L=10**4, K=1, d=5, lam=1e-3)
    assert rel(t, fc.tau_star(n_c=3, L=10**4, K=1, d=5, lam=1e-3, precision="mp")) < 1e-12


def test_H_and_H_prime_at_L_ten_thousand_are_finite_and_consistent():
    # H'(t) against a central difference of H (independent of the closed-form derivative)
    t, h = 0.5, 1e-5
    args = dict(n_c=3, n_w=12, L=10**4, K=1.0, lam=1e-3)
    fd = (fc.H(t + h, **args) - fc.H(t - h, **args)) / (2 * h)
    assert np.isfinite(fc.H(t, **args)) and abs(fc.H_prime(t, **args) - fd) < 1e-8
    assert np.isfinite(fc.H_star(t, n_c=3, L=10**4, K=1.0, d=5, lam=1e-3))


def test_lambda_trivial_at_extremes_matches_its_closed_form_in_logs():
    # lambda_0 = sqrt(L K / n_w) / (K + 1 - K/n_c^L); for K = 1e300, L = 10**4: K/n_c^L ~ 0
    lt = fc.lambda_trivial(n_c=3, n_w=12, L=10**4, K=1e300)
    ref = math.exp(0.5 * (math.log(10**4) + math.log(1e300) - math.log(12)) - math.log(1e300 + 1))
    assert rel(lt, ref) < 1e-13


def test_predictors_at_extremes_return_finite_fields():
    for pred in (
        fc.predict_type1(n_c=3, n_w=12, L=10**4, K=1e300, lam=5e-324),
        fc.predict_type1(n_c=3, n_w=12, L=2, K=4, lam=5e-324),
        fc.predict_type2(n_c=3, L=10**4, K=1e300, d=5, lam=5e-324, n_w=12),
        fc.predict_type2(n_c=3, L=2, K=4, d=3, lam=5e-324),
    ):
        for k, v in pred.to_dict().items():
            assert v is None or isinstance(v, bool) or np.all(np.isfinite(v)), (k, v)


def test_predict_type2_without_n_w_reports_None_not_NaN():
    p = fc.predict_type2(n_c=3, L=2, K=4, d=5, lam=0.01)
    assert p.n_w is None and p.pca_sigma_phiW is None


def test_predict_type3_norms_stay_finite_when_r_squared_overflows():
    # L = 1300: lambda_max ~ 1e-309, r ~ 1e156 (r**2 overflows); by (8) ||W|| = ||U||
    lam = fc.lambda_max_type3(mu=[0.5, 0.5], n_c=3, L=1300) / 2
    p = fc.predict_type3(mu=[0.5, 0.5], n_c=3, L=1300, lam=lam)
    assert np.isfinite(p.norm_W) and rel(p.norm_W, p.norm_U) < 1e-12
    assert np.isfinite(p.risk) and np.isfinite(p.pca_sigma_U)


def test_solve_type3_with_lambda_max_below_the_float_range_is_refused_with_the_reason():
    msg = refused(fc.solve_type3, mu=[0.5, 0.5], n_c=3, L=10**4, lam=5e-324, name="lam")
    assert "beyond the float64 range" in msg
    assert fc.lambda_max_type3(mu=[0.5, 0.5], n_c=3, L=10**4) == 0.0  # documented underflow


def test_solve_type3_with_a_very_skewed_law_matches_mpmath():
    mu = np.array([1.0, 1e-300, 1e-300])
    mu /= mu.sum()
    sol = fc.solve_type3(mu=mu, n_c=3, L=2, lam=0.02)
    ref = fc.solve_type3(mu=mu, n_c=3, L=2, lam=0.02, precision="mp")
    assert rel(sol.c, ref.c) < 1e-12
    assert max(rel(a, b) for a, b in zip(sol.r, ref.r)) < 1e-12


def test_solve_type3_at_L_one_thousand_matches_mpmath():
    sol = fc.solve_type3(mu=[0.5, 0.5], n_c=3, L=1000, lam=1e-300)
    ref = fc.solve_type3(mu=[0.5, 0.5], n_c=3, L=1000, lam=1e-300, precision="mp", dps=30)
    assert rel(sol.c, ref.c) < 1e-12 and rel(sol.r[0], ref.r[0]) < 1e-12


def test_phi_is_exactly_scale_invariant_under_powers_of_two():
    W = np.random.default_rng(0).standard_normal((5, 7))
    ref = fc.phi(W)
    np.testing.assert_array_equal(fc.phi(W * 2.0**1000), ref)
    np.testing.assert_array_equal(fc.phi(W * 2.0**-1000), ref)
    np.testing.assert_allclose(fc.phi(W * 1e300), ref, rtol=1e-13, atol=1e-14)


def test_phi_with_eps_on_tiny_columns_is_w_minus_mean_over_sqrt_eps():
    W = np.random.default_rng(1).standard_normal((4, 3)) * 1e-300
    expect = (W - W.mean(0)) / np.sqrt(1e-5)
    np.testing.assert_allclose(fc.phi(W, eps=1e-5), expect, rtol=1e-12)


def test_S_r_counts_log_path_sums_to_K_by_the_binomial_theorem():
    task = fc.Task(3, 1, 10**4, np.zeros((1, 10**4), dtype=np.int64))
    S = task.S_r_counts()  # L**2 log2(n_c) > 1e8: the log-gamma path
    assert abs(S.sum() - 1.0) < 1e-11
    r = 6000  # one term exactly: C(L, r) 2^r / 3^L as a correctly rounded float
    exact = Fraction(math.comb(10**4, r) * 2**r, 3**10**4)
    assert rel(S[r], float(exact)) < 1e-10


def test_n_latent_refuses_a_million_digit_integer_and_is_full_answers_in_logs():
    task = fc.Task(3, 1, 3 * 10**6, np.zeros((1, 3 * 10**6), dtype=np.int64))
    t0 = time.perf_counter()
    assert task.is_full is False
    refused(lambda: task.n_latent, name="L")
    assert time.perf_counter() - t0 < 1.0


# ------------------------------------------------------------------------------ indices, booleans, seeds, choices
def test_negative_word_indices_are_refused_not_wrapped():
    W, U = fc.type1_configuration(fc.Task.full(3, 2, 2), d=4, c=0.5)
    refused(fc.scores, W, U, np.array([[0, -1]]), name="X")
    refused(fc.scores, W, U, np.array([[0, 6]]), name="X")  # n_w = 6
    task = fc.Task.full(3, 2, 2)
    refused(task.word_index, -1, 0, name="alpha")
    refused(task.word_index, 0, 2, name="beta")
    assert task.word_index(2, 1) == 5


def test_scores_refuses_U_inconsistent_with_X_and_W():
    W, U = fc.type1_configuration(fc.Task.full(3, 2, 2), d=4, c=0.5)
    refused(fc.scores, W, U, np.array([[0, 1, 2]]), name="U")  # L = 3 positions, U has L*d = 8 columns


@pytest.mark.parametrize("value", ["False", 0, 1, None, np.array([True])])
def test_booleans_must_be_booleans(value):
    refused(fc.equiangular_frame, 3, 4, mean_zero=value, name="mean_zero")


@pytest.mark.parametrize("seed", [-1, 1.5, True, "0", 2**63])
def test_seeds_are_checked(seed):
    refused(fc.Task.random, 3, 2, 2, 4, seed=seed, name="seed")
    refused(fc.equiangular_frame, 3, 4, seed=seed, name="seed")


def test_sample_rng_is_checked():
    refused(fc.Task.full(2, 2, 2).sample, 2, seed="x", name="seed")


@pytest.mark.parametrize("dps", [10**9, 19, 20.5, True])
def test_dps_bounds(dps):
    t0 = time.perf_counter()
    refused(fc.tau, n_c=3, n_w=12, L=2, K=4, lam=0.01, precision="mp", dps=dps, name="dps")
    assert time.perf_counter() - t0 < 1.0


def test_choices_are_checked_and_named():
    refused(fc.tau, n_c=3, n_w=12, L=2, K=4, lam=0.01, precision="double", name="precision")
    refused(fc.tau_star, n_c=3, L=2, K=4, d=5, lam=0.01, backend="cupy", name="backend")
    refused(fc.predict, fc.Task.full(2, 2, 2), lam=0.01, network="h2", name="network")
    refused(fc.search_assumption_A, n_c=2, L=2, method="ilp", name="method")


def test_mp_budget_refuses_a_large_reference_request():
    refused(fc.tau, n_c=3, n_w=12, L=2, K=4, lam=np.full(10**5, 0.01), precision="mp", name="shape")


@pytest.mark.parametrize("bad,name", [(10**400, "K"), (1 + 2j, "lam"), ("4", "K"), (True, "K"), (float("nan"), "lam")])
def test_predictors_refuse_unrepresentable_numbers(bad, name):
    kw = dict(n_c=3, n_w=12, L=2, K=4, lam=0.01)
    kw[name] = bad
    refused(fc.tau, **kw, name=name)
    refused(fc.predict_type1, **kw, name=name)


# ------------------------------------------------------------------------------ Task's constructor
def test_task_constructor_declares_its_parameters():
    assert set(fc.Task.__fc_params__) == {"n_c", "s_c", "L", "Z", "mu", "allow_duplicates"}


@pytest.mark.parametrize(
    "field,value",
    [
        ("n_c", True),
        ("s_c", 0),
        ("L", 2.5),
        ("Z", [[0, 1e300]]),
        ("Z", [[0, -1]]),
        ("Z", [[0, 1], [0]]),
        ("mu", "pareto"),
        ("s_c", 2**62),
    ],
)
def test_task_constructor_refuses_bad_fields(field, value):
    kw = dict(n_c=3, s_c=2, L=2, Z=[[0, 1]], mu="uniform")
    kw[field] = value
    refused(fc.Task, **kw, name=field)


def test_task_word_frequencies_over_budget_are_refused():
    refused(fc.Task, 2, 10**9, 1, [[0]], name="s_c")  # mu of 1e9 words: 16 GB
    task = fc.Task(2, 10**4, 1, [[0]])
    with fc.budget(max_bytes=2**16):
        refused(lambda: task.P, name="s_c")  # P is n_c × n_w


# ------------------------------------------------------------------------------ consistency with the builders
def test_predict_type2_refuses_d_below_n_c_like_type2_configuration():
    refused(fc.predict_type2, n_c=3, L=2, K=9, d=2, lam=0.01, name="d")
    refused(fc.type2_configuration, fc.Task.full(3, 2, 2), d=2, lam=0.01, name="d")


def test_type3_configuration_needs_both_c_and_r():
    refused(fc.type3_configuration, fc.Task.full(3, 2, 2, mu="zipf"), d=3, lam=0.02, c=1.0, name="r")


def test_type2_configuration_scale_of_the_wrong_length_is_refused():
    refused(fc.type2_configuration, fc.Task.full(3, 2, 2), d=4, c=0.5, scale=np.ones(5), name="scale")


# ------------------------------------------------------------------------------ command line
def run_cli(capsys, *argv):
    code = cli_main(list(argv))
    return code, capsys.readouterr().err.strip().splitlines()


@pytest.mark.parametrize(
    "argv,option",
    [
        (["predict", "type3", "--K", "5"], "--K"),
        (["predict", "type2", "--d", "1"], "--d"),
        (["predict", "type1", "--d", "5"], "--d"),
        (["predict", "type1", "--mu", "zipf"], "--mu"),
        (["predict", "type3", "--mu", "0.5,0.5", "--sc", "3"], "--mu"),
        (["predict", "--paper", "--nc", "4"], "--nc"),
        (["predict", "type3", "--sc", "1000000000000"], "--sc"),
        (["check", "--only", "no-such-check-id"], "--only"),
    ],
)
def test_cli_user_errors_are_one_line_naming_the_option(capsys, argv, option):
    code, err = run_cli(capsys, *argv)
    assert code == 2 and len(err) == 1 and f"{option}=" in err[0], err


def test_cli_predict_type3_honours_a_K_equal_to_n_c_power_L(capsys):
    code, _ = run_cli(capsys, "predict", "type3", "--K", "9", "--L", "2", "--lam", "0.01", "--mu", "0.5,0.5")
    assert code == 0
