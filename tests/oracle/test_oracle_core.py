"""Oracles for every public number of the analytic core.

Every value is compared with an independent computation from tests/oracle/oracles.py (mpmath at 50
digits from the formulas as printed, hand-built configurations evaluated by plain enumeration,
SVDs), on inputs that reach each code path's regime.

Checklist (field -> test)
-------------------------
H                        -> test_H_equals_mpmath (incl. tiny K/n_c^L, huge t)
H_prime                  -> test_H_prime_equals_mpmath_derivative
H_second                 -> test_H_second_equals_mpmath_second_derivative
H_star, H_star_prime     -> test_H_star_and_derivatives_equal_mpmath
H_star_second            -> test_H_star_and_derivatives_equal_mpmath
eta, eta_star            -> test_eta_and_eta_star_equal_mpmath
lambda_trivial           -> test_lambda_trivial_equals_mpmath_and_is_the_sign_change_of_H_prime
tau (numba, numpy)       -> test_tau_equals_mpmath_bisection[...] (generic, tiny K/n_c^L, K = n_c^L at L=20,
                            1e-9 below λ₀: long-double path, above λ₀: 0); test_tau_precision_mp
tau_star (numba, numpy)  -> test_tau_star_equals_mpmath_bisection[...]
lambda_max_type3         -> test_lambda_max_type3_equals_mpmath
Type3Solution.c, .r      -> test_type3_solution_equals_mpmath_newton[...] (incl. 1e-6 below λ_max)
Type3Solution.residual_7 -> test_type3_reported_residuals_equal_mpmath_residuals_of_returned_point,
  .residual_8               test_type3_residual_helper_takes_the_max_over_words
Type3Solution.lam_max, mu, n_c, L, lam, K -> test_type3_echo_fields
TypeIPrediction (all 18 fields, pca_W/pca_U, to_dict) -> test_type1_prediction_fields_equal_enumerated_configuration,
                            test_type1_prediction_trivial_and_tiny_p
TypeIIPrediction (all 17 fields) -> test_type2_prediction_fields_equal_enumerated_configuration
TypeIIIPrediction (all 18 fields) -> test_type3_prediction_fields_equal_enumerated_configuration
predict dispatch         -> test_predict_dispatches_to_the_applicable_theorem
"""

import importlib
import math

import mpmath
import numpy as np
import pytest

import fctheory as fc
from tests.oracle import oracles as O

tau_mod = importlib.import_module("fctheory.tau")
tau_star_mod = importlib.import_module("fctheory.tau_star")
type3_mod = importlib.import_module("fctheory.type3")

RTOL = 1e-12

# (n_c, n_w, L, K): generic; K = n_c^L; tiny K/n_c^L (1 − p matters at 1e-15); long L
CASES1 = [(3, 6, 2, 9), (3, 1200, 15, 1000), (2, 4, 30, 1), (4, 8, 3, 64), (3, 30, 20, 3**20), (5, 10, 4, 7)]


def _rel(a, b):
    a, b = float(a), float(b)
    return abs(a - b) / abs(b) if b != 0 else abs(a)


# ------------------------------------------------------------------------------------------ H and friends
@pytest.mark.parametrize("n_c,n_w,L,K", CASES1)
@pytest.mark.parametrize("tfac", [0.0, 1e-6, 0.3, 1.0, 7.0, 200.0])
def test_H_equals_mpmath(n_c, n_w, L, K, tfac):
    lam = 1e-3
    et = float(O.mp_eta(n_c, n_w, L, K))
    t = tfac / et  # s = ηt = tfac
    ref = O.mp_H(t, n_c, n_w, L, K, lam)
    assert _rel(fc.H(t, n_c=n_c, n_w=n_w, L=L, K=K, lam=lam), ref) <= RTOL


@pytest.mark.parametrize("n_c,n_w,L,K", CASES1)
@pytest.mark.parametrize("tfac", [0.0, 1e-4, 0.5, 3.0, 40.0])
def test_H_prime_equals_mpmath_derivative(n_c, n_w, L, K, tfac):
    lam = 2e-3
    t = tfac / float(O.mp_eta(n_c, n_w, L, K))
    ref = O.mp_diff(lambda x: O.mp_H(x, n_c, n_w, L, K, lam), t)
    assert _rel(fc.H_prime(t, n_c=n_c, n_w=n_w, L=L, K=K, lam=lam), ref) <= 1e-11


@pytest.mark.parametrize("n_c,n_w,L,K", CASES1)
@pytest.mark.parametrize("tfac", [0.0, 1e-4, 0.5, 3.0, 25.0])
def test_H_second_equals_mpmath_second_derivative(n_c, n_w, L, K, tfac):
    """Not only positive: the value of H″ (η²G″) against a 50-digit numerical second derivative."""
    t = tfac / float(O.mp_eta(n_c, n_w, L, K))
    ref = O.mp_diff(lambda x: O.mp_H(x, n_c, n_w, L, K, 0.0), t, 2)
    got = tau_mod.H_second(t, n_c=n_c, n_w=n_w, L=L, K=K, lam=0.5)
    assert _rel(got, ref) <= 1e-13


@pytest.mark.parametrize("n_c,L,K,d", [(3, 2, 9, 4), (3, 15, 1000, 100), (2, 30, 1, 3), (4, 3, 20, 2)])
@pytest.mark.parametrize("sfac", [0.0, 0.2, 2.0, 30.0])
def test_H_star_and_derivatives_equal_mpmath(n_c, L, K, d, sfac):
    lam = 0.01
    t = sfac / float(O.mp_eta_star(n_c, L, K, d))
    f = lambda x: O.mp_H_star(x, n_c, L, K, d, lam)  # noqa: E731
    assert _rel(fc.H_star(t, n_c=n_c, L=L, K=K, d=d, lam=lam), f(t)) <= RTOL
    assert _rel(fc.H_star_prime(t, n_c=n_c, L=L, K=K, d=d, lam=lam), O.mp_diff(f, t)) <= 1e-11
    assert _rel(tau_star_mod.H_star_second(t, n_c=n_c, L=L, K=K, d=d, lam=lam), O.mp_diff(f, t, 2)) <= 1e-13


def test_eta_and_eta_star_equal_mpmath():
    for n_c, n_w, L, K in CASES1:
        assert _rel(tau_mod.eta(n_c=n_c, n_w=n_w, L=L, K=K), O.mp_eta(n_c, n_w, L, K)) <= 1e-14
        assert _rel(tau_star_mod.eta_star(n_c=n_c, L=L, K=K, d=7), O.mp_eta_star(n_c, L, K, 7)) <= 1e-14


@pytest.mark.parametrize("n_c,n_w,L,K", CASES1)
def test_lambda_trivial_equals_mpmath_and_is_the_sign_change_of_H_prime(n_c, n_w, L, K):
    ref = O.mp_lambda0(n_c, n_w, L, K)
    lam0 = fc.lambda_trivial(n_c=n_c, n_w=n_w, L=L, K=K)
    assert _rel(lam0, ref) <= 1e-14
    # H′(0) = λ − λ₀ (the mpmath derivative of the printed H at 0)
    d0 = O.mp_diff(lambda x: O.mp_H(x, n_c, n_w, L, K, 0.0), 0)
    assert _rel(-d0, ref) <= 1e-12


# ------------------------------------------------------------------------------------------ τ and τ*
TAU_CASES = [
    # (n_c, n_w, L, K, lam, rtol)
    (3, 6, 2, 9, 0.01, RTOL),
    (3, 1200, 15, 1000, 1e-3, RTOL),
    (3, 1200, 15, 50, 1e-3, RTOL),
    (2, 4, 30, 1, 1e-4, RTOL),  # tiny K/n_c^L: 1 − K/n_c^L differs from 1 by 1e-9
    (3, 30, 20, 3**20, 1e-6, RTOL),
    (4, 8, 3, 64, 1e-8, RTOL),  # λ ≪ λ₀: large s, log-space branch of ℓ
]


@pytest.mark.parametrize("n_c,n_w,L,K,lam,rtol", TAU_CASES)
def test_tau_equals_mpmath_bisection(host_backend, n_c, n_w, L, K, lam, rtol):
    ref = O.mp_tau(n_c, n_w, L, K, lam)
    assert _rel(fc.tau(n_c=n_c, n_w=n_w, L=L, K=K, lam=lam, backend=host_backend), ref) <= rtol


@pytest.mark.parametrize("n_c,n_w,L,K", [(3, 6, 2, 9), (3, 1200, 15, 1000), (2, 4, 30, 1)])
@pytest.mark.parametrize("below", [1e-9, 1e-5, 3e-3])
def test_tau_near_threshold_equals_mpmath(host_backend, n_c, n_w, L, K, below):
    """λ = λ₀(1 − below): r = log(λ₀/λ) < 0.01 takes the long-double path; τ ∝ (λ₀ − λ) there."""
    lam = float(O.mp_lambda0(n_c, n_w, L, K)) * (1 - below)
    ref = O.mp_tau(n_c, n_w, L, K, lam)
    got = fc.tau(n_c=n_c, n_w=n_w, L=L, K=K, lam=lam, backend=host_backend)
    assert got > 0
    # conditioning: the float λ itself carries 1.1e-16 relative, amplified by 1/below in τ
    assert _rel(got, ref) <= 1e-12 + 2e-18 / below  # float64 r alone: ~1e-16/below


def test_tau_is_zero_at_and_above_threshold(host_backend):
    lam0 = fc.lambda_trivial(n_c=3, n_w=6, L=2, K=9)
    assert O.mp_tau(3, 6, 2, 9, lam0 * (1 + 1e-12)) == 0
    assert fc.tau(n_c=3, n_w=6, L=2, K=9, lam=lam0 * (1 + 1e-12), backend=host_backend) == 0.0
    assert fc.tau(n_c=3, n_w=6, L=2, K=9, lam=lam0 * 3, backend=host_backend) == 0.0


def test_tau_array_backends_agree_elementwise_with_mpmath(host_backend):
    lam = np.array([1e-7, 1e-3, 0.05, 0.19, 0.2])
    got = fc.tau(n_c=3, n_w=6, L=2, K=9, lam=lam, backend=host_backend)
    for g, l in zip(got, lam):
        assert _rel(g, O.mp_tau(3, 6, 2, 9, l)) <= 1e-11 or (g == 0 and O.mp_tau(3, 6, 2, 9, l) == 0)


def test_tau_precision_mp_equals_independent_bisection():
    got = fc.tau(n_c=3, n_w=6, L=2, K=9, lam=0.01, precision="mp")
    assert abs(got - O.mp_tau(3, 6, 2, 9, 0.01)) <= mpmath.mpf(10) ** -35 * got


@pytest.mark.parametrize(
    "n_c,L,K,d,lam",
    [(3, 2, 9, 4, 0.01), (3, 15, 1000, 100, 1e-3), (2, 30, 1, 3, 0.5), (4, 3, 20, 2, 1e-9), (3, 20, 3**20, 10, 50.0)],
)
def test_tau_star_equals_mpmath_bisection(host_backend, n_c, L, K, d, lam):
    ref = O.mp_tau_star(n_c, L, K, d, lam)
    assert _rel(fc.tau_star(n_c=n_c, L=L, K=K, d=d, lam=lam, backend=host_backend), ref) <= RTOL


# ------------------------------------------------------------------------------------------ Theorem 2
MU3 = np.array([6, 3, 2]) / 11.0


@pytest.mark.parametrize(
    "mu,n_c,L", [(MU3, 3, 2), (np.array([0.4, 0.3, 0.2, 0.1]), 2, 3), (np.array([0.9, 0.1]), 4, 2)]
)
def test_lambda_max_type3_equals_mpmath(mu, n_c, L):
    assert _rel(fc.lambda_max_type3(mu=mu, n_c=n_c, L=L), O.mp_lambda_max(mu, n_c, L)) <= 1e-14


T3_CASES = [
    (MU3, 3, 2, 0.02),
    (MU3, 3, 2, 0.1),
    (np.array([0.4, 0.3, 0.2, 0.1]), 2, 3, 0.02),
    (np.array([0.9, 0.1]), 4, 2, 0.01),
    (np.array([0.5, 0.5]), 3, 2, 0.05),
]


def _t3_point(mu, n_c, L, lam):
    sol = fc.solve_type3(mu=mu, n_c=n_c, L=L, lam=lam)
    c, r = O.mp_solve_type3(mu, n_c, L, lam, (sol.c, sol.r))
    return sol, c, r


@pytest.mark.parametrize("mu,n_c,L,lam", T3_CASES)
def test_type3_solution_equals_mpmath_newton(mu, n_c, L, lam):
    sol, c, r = _t3_point(mu, n_c, L, lam)
    assert _rel(sol.c, c) <= RTOL
    for a, b in zip(sol.r, r):
        assert _rel(a, b) <= RTOL


@pytest.mark.parametrize("below", [1e-3, 1e-6])
def test_type3_near_lambda_max_equals_mpmath_newton(below):
    """c → 0⁺ as λ ↑ λ_max: the long-double polish keeps c to ~1e-12/… relative."""
    lam = float(O.mp_lambda_max(MU3, 3, 2)) * (1 - below)
    sol, c, r = _t3_point(MU3, 3, 2, lam)
    assert 0 < sol.c < 0.1
    assert _rel(sol.c, c) <= 1e-12 + 2e-19 / below
    for a, b in zip(sol.r, r):
        assert _rel(a, b) <= 1e-12 + 2e-19 / below


@pytest.mark.parametrize("mu,n_c,L,lam", T3_CASES)
def test_type3_reported_residuals_equal_mpmath_residuals_of_returned_point(mu, n_c, L, lam):
    sol = fc.solve_type3(mu=mu, n_c=n_c, L=L, lam=lam)
    r7, r8 = O.mp_residuals(mu, n_c, L, lam, sol.c, sol.r)
    # the library evaluates them in long double (~1e-19 absolute): compare to that accuracy
    assert abs(sol.residual_7 - float(r7)) <= 5e-18 + 0.05 * float(r7)
    assert abs(sol.residual_8 - float(r8)) <= 5e-18 + 0.05 * float(r8)
    assert sol.residual_7 <= 1e-14 and sol.residual_8 <= 1e-14


def test_type3_residual_helper_takes_the_max_over_words():
    """On a perturbed point the per-word residuals of (7) differ by decades: max, not min or mean."""
    mu, n_c, L, lam = MU3, 3, 2, 0.02
    sol = fc.solve_type3(mu=mu, n_c=n_c, L=L, lam=lam)
    for pert in ([1e-3, 1e-7, 1e-5], [1e-9, 1e-2, 0.0]):
        r = np.asarray(sol.r) * (1 + np.array(pert))
        c = sol.c * (1 + 3e-6)
        r7, r8 = type3_mod._residuals(
            mu[None, :], np.array([n_c]), np.array([L]), np.array([lam]), np.array([c]), r[None, :]
        )
        m7, m8 = O.mp_residuals(mu, n_c, L, lam, c, r)
        assert _rel(r7[0], m7) <= 1e-9
        assert _rel(r8[0], m8) <= 1e-9


def test_type3_echo_fields():
    sol = fc.solve_type3(mu=MU3, n_c=3, L=2, lam=0.02)
    assert _rel(sol.lam_max, O.mp_lambda_max(MU3, 3, 2)) <= 1e-14
    np.testing.assert_array_equal(sol.mu, MU3)
    assert sol.n_c == 3 and sol.L == 2 and sol.lam == 0.02 and sol.K == 9
    with pytest.raises(fc.FCTheoryError, match="lam"):
        fc.solve_type3(mu=MU3, n_c=3, L=2, lam=float(O.mp_lambda_max(MU3, 3, 2)) * (1 + 1e-12))


# ------------------------------------------------------------------------------------------ predictions
def _margin_per_position(W, U, Z, s_c, d):
    """h_k(x) − h_j(x) for two classes differing at exactly one position, from explicit scores."""
    K, L = Z.shape
    for k in range(K):
        for j in range(K):
            if (Z[k] != Z[j]).sum() == 1:
                x = next(O.sentences_of(Z[k], s_c, np.full(s_c, 1.0 / s_c)))[0]
                y = O.my_scores(W, U, x, K, L, d)
                return y[k] - y[j]
    raise AssertionError("no pair at distance 1")


def test_type1_prediction_fields_equal_enumerated_configuration():
    n_c, s_c, L, lam, d = 3, 2, 2, 0.01, 3
    Z = O.full_Z(n_c, L)
    K, n_w = Z.shape[0], n_c * s_c
    p = fc.predict_type1(n_c=n_c, n_w=n_w, L=L, K=K, lam=lam)
    tau = O.mp_tau(n_c, n_w, L, K, lam)
    c, cp = math.sqrt(float(tau) / n_w), math.sqrt(float(tau) / (K * L))
    W, U = O.type3_weights(Z, n_c, s_c, L, d, cp, [c] * s_c)  # type I = type III with constant r
    mu = np.full(s_c, 1.0 / s_c)
    ref = O.my_risk(Z, s_c, mu, W, U, lam)
    assert _rel(p.tau, tau) <= RTOL
    assert _rel(p.c, c) <= RTOL and _rel(p.c_prime, cp) <= RTOL
    assert _rel(p.eta, O.mp_eta(n_c, n_w, L, K)) <= 1e-14
    assert _rel(p.lambda_trivial, O.mp_lambda0(n_c, n_w, L, K)) <= 1e-14
    assert p.trivial is False
    assert _rel(p.risk, ref["R"]) <= RTOL  # Lemma K by enumeration
    assert _rel(p.ce, ref["R0"]) <= 1e-11 and p.ce > 0
    assert _rel(p.H0, O.my_risk(Z, s_c, mu, 0 * W, 0 * U, lam)["R"]) <= RTOL
    assert _rel(p.norm_W, np.linalg.norm(W)) <= RTOL and _rel(p.norm_U, np.linalg.norm(U)) <= RTOL
    sv_W = O.centred_singular_values(W.T)
    sv_U = O.centred_singular_values(U.reshape(K * L, d))
    for sv in (sv_W, sv_U):
        np.testing.assert_allclose(sv[: n_c - 1], p.pca_sigma, rtol=1e-12)
        assert np.all(sv[n_c - 1 :] <= 1e-12 * sv[0])
    np.testing.assert_allclose(p.pca_W(), sv_W[: n_c - 1], rtol=1e-12)
    np.testing.assert_allclose(p.pca_U(), sv_U[: n_c - 1], rtol=1e-12)
    assert _rel(p.margin_per_position, _margin_per_position(W, U, Z, s_c, d)) <= 1e-12
    dd = p.to_dict()
    assert dd["tau"] == p.tau and dd["risk"] == p.risk and dd["trivial"] is False and len(dd) == 18
    assert (p.n_c, p.n_w, p.L, p.K, p.lam) == (3, 6, 2, 9, 0.01)


def test_type1_prediction_trivial_and_tiny_p():
    # above λ₀: τ = 0, risk = ce = H0 = H(0) (mpmath)
    lam0 = fc.lambda_trivial(n_c=3, n_w=6, L=2, K=9)
    p = fc.predict_type1(n_c=3, n_w=6, L=2, K=9, lam=2 * lam0)
    assert p.trivial is True and p.tau == 0.0 and p.c == 0.0 and p.norm_W == 0.0 and p.margin_per_position == 0.0
    h0 = O.mp_H(0, 3, 6, 2, 9, 2 * lam0)
    assert _rel(p.risk, h0) <= RTOL and _rel(p.ce, h0) <= RTOL and _rel(p.H0, h0) <= RTOL
    # K = 1 of 2^30: H0 = log(2 − 2^−30), ce = H(τ) − λτ must stay ≥ 0 and match mpmath
    n_c, n_w, L, K, lam = 2, 4, 30, 1, 1e-4
    p = fc.predict_type1(n_c=n_c, n_w=n_w, L=L, K=K, lam=lam)
    tau = O.mp_tau(n_c, n_w, L, K, lam)
    assert _rel(p.H0, O.mp_H(0, n_c, n_w, L, K, 0)) <= 1e-15
    ce_ref = O.mp_H(tau, n_c, n_w, L, K, lam) - mpmath.mpf(lam) * tau
    assert p.ce >= 0 and _rel(p.ce, ce_ref) <= 1e-10
    assert _rel(p.risk, O.mp_H(tau, n_c, n_w, L, K, lam)) <= RTOL


def test_type2_prediction_fields_equal_enumerated_configuration():
    n_c, s_c, L, d, lam = 3, 3, 2, 4, 0.01
    mu = O.word_probs("zipf", s_c)
    Z = O.full_Z(n_c, L)
    K, n_w = Z.shape[0], n_c * s_c
    p = fc.predict_type2(n_c=n_c, L=L, K=K, d=d, lam=lam, n_w=n_w)
    ts = O.mp_tau_star(n_c, L, K, d, lam)
    c = float(ts) / math.sqrt(K * L)
    F = O.simplex_frame(n_c, d, mean_zero=True)
    W, U = O.type3_weights(Z, n_c, s_c, L, d, c, [math.sqrt(d)] * s_c, F=F)  # φ(W) = W = √d F P
    ref = O.my_risk(Z, s_c, mu, W + 0.7, U, lam, layernorm=True)  # φ is shift-invariant
    assert _rel(p.tau_star, ts) <= RTOL and _rel(p.c, c) <= RTOL
    assert _rel(p.eta_star, O.mp_eta_star(n_c, L, K, d)) <= 1e-14
    assert _rel(p.risk, ref["R"]) <= RTOL  # Lemma R by enumeration
    assert _rel(p.ce, ref["R0"]) <= 1e-11 and p.ce > 0
    assert _rel(p.H0, O.mp_H_star(0, n_c, L, K, d, lam)) <= RTOL
    assert _rel(p.norm_U, np.linalg.norm(U)) <= RTOL
    assert _rel(p.phi_norm, np.linalg.norm(O.my_phi(W + 0.7)[:, 0])) <= 1e-14
    sv_U = O.centred_singular_values(U.reshape(K * L, d))
    sv_W = O.centred_singular_values(O.my_phi(W).T)
    np.testing.assert_allclose(sv_U[: n_c - 1], p.pca_sigma_U, rtol=1e-12)
    np.testing.assert_allclose(sv_W[: n_c - 1], p.pca_sigma_phiW, rtol=1e-12)
    assert _rel(p.margin_per_position, _margin_per_position(W, U, Z, s_c, d)) <= 1e-12
    assert (p.n_c, p.L, p.K, p.d, p.lam, p.n_w) == (3, 2, 9, 4, 0.01, 9)
    no_nw = fc.predict_type2(n_c=n_c, L=L, K=K, d=d, lam=lam).pca_sigma_phiW
    assert no_nw is None or math.isnan(no_nw)  # undefined without n_w
    assert len(p.to_dict()) == 17


def test_type3_prediction_fields_equal_enumerated_configuration():
    n_c, s_c, L, lam, d = 3, 3, 2, 0.02, 3
    mu = MU3
    Z = O.full_Z(n_c, L)
    K = Z.shape[0]
    p = fc.predict_type3(mu=mu, n_c=n_c, L=L, lam=lam)
    _, c, r = _t3_point(mu, n_c, L, lam)
    c, r = float(c), [float(x) for x in r]
    W, U = O.type3_weights(Z, n_c, s_c, L, d, c, r)
    ref = O.my_risk(Z, s_c, mu, W, U, lam)
    assert _rel(p.c, c) <= RTOL and max(_rel(a, b) for a, b in zip(p.r, r)) <= RTOL
    assert _rel(p.risk, ref["R"]) <= 1e-11
    assert _rel(p.ce, ref["R0"]) <= 1e-11 and p.ce > 0
    assert _rel(p.H0, O.my_risk(Z, s_c, mu, 0 * W, 0 * U, lam)["R"]) <= RTOL
    assert _rel(p.norm_W, np.linalg.norm(W)) <= RTOL and _rel(p.norm_U, np.linalg.norm(U)) <= RTOL
    assert _rel(p.pca_sigma_W, O.centred_singular_values(W.T)[0]) <= 1e-12
    assert _rel(p.pca_sigma_U, O.centred_singular_values(U.reshape(K * L, d))[0]) <= 1e-12
    # margin contributed by a position holding word β: scores of two classes differing there
    for b in range(s_c):
        k, j = 0, next(j for j in range(K) if (Z[0] != Z[j]).sum() == 1)
        l = int(np.nonzero(Z[0] != Z[j])[0][0])
        x = [int(Z[0, i]) * s_c + (b if i == l else 0) for i in range(L)]
        y = O.my_scores(W, U, x, K, L, d)
        assert _rel(p.margins_per_position[b], y[k] - y[j]) <= 1e-12
    assert _rel(p.lam_max, O.mp_lambda_max(mu, n_c, L)) <= 1e-14
    r7, r8 = O.mp_residuals(mu, n_c, L, lam, p.c, p.r)
    assert abs(p.residual_7 - float(r7)) <= 5e-18 + 0.05 * float(r7)
    assert abs(p.residual_8 - float(r8)) <= 5e-18 + 0.05 * float(r8)
    assert (p.n_c, p.L, p.lam) == (3, 2, 0.02) and _rel(p.K, 9) <= 1e-15
    np.testing.assert_array_equal(p.mu, mu)


def test_predict_dispatches_to_the_applicable_theorem():
    t_u = fc.Task.full(3, 2, 2)
    t_z = fc.Task.full(3, 3, 2, mu=MU3)
    assert fc.predict(t_u, lam=0.01).tau == fc.predict_type1(n_c=3, n_w=6, L=2, K=9, lam=0.01).tau
    assert fc.predict(t_z, lam=0.02).c == fc.predict_type3(mu=MU3, n_c=3, L=2, lam=0.02).c
    assert (
        fc.predict(t_z, lam=0.01, network="h*", d=4).tau_star
        == fc.predict_type2(n_c=3, L=2, K=9, d=4, lam=0.01).tau_star
    )
    # a partial task with non-uniform μ has no theorem: the answer is its enumerated certified optimum
    p = fc.predict(fc.Task.random(3, 3, 2, 5, mu=MU3, seed=0), lam=0.01)
    assert p.provenance == fc.predictions.EXACT and np.isfinite(p.risk) and p.gap is not None
