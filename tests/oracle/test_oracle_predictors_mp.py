"""Oracles for the precision="mp" paths of the predictors, predict()'s dispatch and the collapse
configurations built from explicit constants.

The 50-digit references are tests/oracle/oracles.py's own bisection on H′ / H*′ (differentiated by hand
from the printed H, H*) and mpmath.findroot on (7)–(8) as printed; the configurations are compared
with hand-built (W, U) of Definitions 1–3 (word (α, β) at index α·s_c + β, u_{k,ℓ} = U[k, ℓd:(ℓ+1)d])
evaluated entry by entry, and with the Gram matrices the definitions imply.

Checklist (field -> test)
-------------------------
tau(precision="mp") incl. near λ₀ and huge K/n_c^L      -> test_tau_mp_equals_50_digit_bisection[...]
tau_star(precision="mp")                                 -> test_tau_star_mp_equals_50_digit_bisection[...]
solve_type3(precision="mp"): c, r (mpf), residuals 0, echo -> test_solve_type3_mp_equals_findroot[...]
predict(network="h*"/"h", d) dispatch                    -> test_predict_network_dispatch
type1_configuration(c, c_prime, frame)                   -> test_type1_configuration_explicit_constants
type2_configuration(c, frame, scale, shift)              -> test_type2_configuration_explicit_constants
type3_configuration(c, r, frame)                         -> test_type3_configuration_explicit_constants
"""

import math

import mpmath
import numpy as np
import pytest

import fctheory as fc
from tests.oracle import oracles as O

MU3 = np.array([0.5, 0.3, 0.2])


def _mprel(a, b):
    return abs(mpmath.mpf(a) - b) / abs(b)


@pytest.mark.parametrize(
    "n_c,n_w,L,K,lam", [(3, 6, 2, 9, 0.01), (3, 1200, 15, 1000, 1e-3), (2, 4, 30, 1, 1e-12), (4, 8, 3, 64, 0.05)]
)
def test_tau_mp_equals_50_digit_bisection(n_c, n_w, L, K, lam):
    t = fc.tau(n_c=n_c, n_w=n_w, L=L, K=K, lam=lam, precision="mp")
    assert isinstance(t, mpmath.mpf)
    with mpmath.workdps(50):
        ref = O.mp_tau(n_c, n_w, L, K, lam)
        assert _mprel(t, ref) <= mpmath.mpf(10) ** -40


def test_tau_mp_just_below_threshold_and_vector():
    n_c, n_w, L, K = 3, 6, 2, 9
    lam0 = float(O.mp_lambda0(n_c, n_w, L, K))
    lams = np.array([lam0 * (1 - 1e-6), lam0 * 0.5, lam0 * 2])
    ts = fc.tau(n_c=n_c, n_w=n_w, L=L, K=K, lam=lams, precision="mp")
    with mpmath.workdps(50):
        for t, lam in zip(ts, lams):
            ref = O.mp_tau(n_c, n_w, L, K, lam)
            if ref == 0:
                assert t == 0
            else:
                assert _mprel(t, ref) <= mpmath.mpf(10) ** -35


@pytest.mark.parametrize(
    "n_c,L,K,d,lam", [(3, 2, 9, 4, 0.01), (3, 15, 1000, 100, 1e-3), (2, 30, 1, 3, 0.5), (4, 3, 20, 2, 1e-4)]
)
def test_tau_star_mp_equals_50_digit_bisection(n_c, L, K, d, lam):
    t = fc.tau_star(n_c=n_c, L=L, K=K, d=d, lam=lam, precision="mp")
    with mpmath.workdps(50):
        ref = O.mp_tau_star(n_c, L, K, d, lam)
        assert _mprel(t, ref) <= mpmath.mpf(10) ** -40


@pytest.mark.parametrize(
    "mu,n_c,L,lam",
    [(MU3, 3, 2, 0.02), (np.array([0.4, 0.3, 0.2, 0.1]), 2, 3, 0.05), (np.array([0.9, 0.1]), 4, 2, 1e-3)],
)
def test_solve_type3_mp_equals_findroot(mu, n_c, L, lam):
    sol = fc.solve_type3(mu=mu, n_c=n_c, L=L, lam=lam, precision="mp")
    fl = fc.solve_type3(mu=mu, n_c=n_c, L=L, lam=lam)
    with mpmath.workdps(50):
        c_ref, r_ref = O.mp_solve_type3(mu, n_c, L, lam, (fl.c, fl.r))
        assert _mprel(sol.c, c_ref) <= mpmath.mpf(10) ** -38
        for a, b in zip(sol.r, r_ref):
            assert _mprel(a, b) <= mpmath.mpf(10) ** -38
        # the mp point satisfies (7)–(8) as printed to 1e-38: residuals in mpmath at the mp values
        nc, LL, lm, c = mpmath.mpf(n_c), mpmath.mpf(L), mpmath.mpf(float(lam)), mpmath.mpf(sol.c)
        kap = nc / (nc - 1)
        for rb, m in zip(sol.r, mu):
            assert abs((lm / LL) * (rb / c) * (nc - 1 + mpmath.exp(kap * c * rb)) / mpmath.mpf(float(m)) - 1) <= 1e-38
        assert abs(mpmath.fsum((rb / c) ** 2 for rb in sol.r) / (LL * nc ** (LL - 1)) - 1) <= 1e-38
    assert sol.residual_7 == 0 and sol.residual_8 == 0
    assert abs(float(sol.lam_max) - float(O.mp_lambda_max(mu, n_c, L))) <= 1e-15 * float(sol.lam_max)
    np.testing.assert_array_equal(sol.mu, mu)
    assert float(sol.c) == pytest.approx(fl.c, rel=1e-14)


def test_predict_network_dispatch():
    t_u = fc.Task.full(3, 2, 2)
    p = fc.predict(t_u, lam=0.01, network="h*", d=5)  # Theorem 3 even for uniform words
    with mpmath.workdps(50):
        assert _mprel(p.tau_star, O.mp_tau_star(3, 2, 9, 5, 0.01)) <= 1e-13
    assert type(p).__name__ == "TypeIIPrediction"
    p1 = fc.predict(t_u, lam=0.01, network="h", d=2)  # d ≥ n_c − 1 is enough for network h
    with mpmath.workdps(50):
        assert _mprel(p1.tau, O.mp_tau(3, 6, 2, 9, 0.01)) <= 1e-13
    assert type(p1).__name__ == "TypeIPrediction"
    with pytest.raises(fc.FCTheoryError, match="d="):
        fc.predict(t_u, lam=0.01, network="h", d=1)
    with pytest.raises(fc.FCTheoryError, match="d="):
        fc.predict(t_u, lam=0.01, network="h*")
    t_z = fc.Task.full(3, 3, 2, mu=MU3)
    p3 = fc.predict(t_z, lam=0.02, network="h")
    assert type(p3).__name__ == "TypeIIIPrediction"
    with mpmath.workdps(50):
        c_ref, _ = O.mp_solve_type3(MU3, 3, 2, 0.02, (p3.c, np.ones(3)))
    assert abs(p3.c - float(c_ref)) <= 1e-14 * p3.c


# ------------------------------------------------------------------------------------------ configurations
def _rotated_frame(n_c, d, seed, mean_zero=False):
    F = O.simplex_frame(n_c, d, mean_zero=mean_zero)
    Q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((d, d)))
    if mean_zero:  # rotate inside 1^⊥ only, keeping 1ᵀf = 0
        P = np.eye(d) - np.ones((d, d)) / d
        B = np.linalg.svd(P)[0][:, : d - 1]
        R = B @ np.linalg.qr(np.random.default_rng(seed).standard_normal((d - 1, d - 1)))[0] @ B.T + np.ones((d, d)) / d
        return R @ F
    return Q @ F


def test_type1_configuration_explicit_constants():
    task = fc.Task.random(3, 2, 3, 5, seed=2)
    d, c, cp = 4, 0.7, 1.9
    F = _rotated_frame(3, d, 1)
    W, U = fc.type1_configuration(task, d=d, c=c, c_prime=cp, frame=F)
    W_ref, U_ref = O.type3_weights(task.Z, 3, 2, 3, d, cp, [c, c], F)
    np.testing.assert_allclose(W, W_ref, rtol=0, atol=1e-15)
    np.testing.assert_allclose(U, U_ref, rtol=0, atol=1e-15)
    # c_prime omitted: the balanced choice ‖W‖_F = ‖U‖_F, c′ = c√(n_w/(KL))
    W2, U2 = fc.type1_configuration(task, d=d, c=c, frame=F)
    assert abs(np.linalg.norm(W2) - np.linalg.norm(U2)) <= 1e-14 * np.linalg.norm(W2)
    np.testing.assert_allclose(U2, U_ref * (c * math.sqrt(task.n_w / (task.K * task.L)) / cp), rtol=1e-15, atol=1e-16)
    # Gram of the words: c²·⟨f_α, f_α′⟩ = c² (same concept) or −c²/(n_c−1)
    Gw = W.T @ W
    for i in range(task.n_w):
        for j in range(task.n_w):
            same = task.word_concept[i] == task.word_concept[j]
            assert abs(Gw[i, j] - (c * c if same else -c * c / 2)) <= 1e-14


def test_type2_configuration_explicit_constants():
    task = fc.Task.full(3, 2, 2, mu="zipf")
    d, c = 5, 0.4
    F = _rotated_frame(3, d, 2, mean_zero=True)
    scale = np.linspace(0.5, 3.0, task.n_w)
    shift = np.linspace(-2.0, 1.0, task.n_w)
    W, U = fc.type2_configuration(task, d=d, c=c, frame=F, scale=scale, shift=shift)
    for a in range(3):
        for b in range(2):
            j = a * 2 + b
            np.testing.assert_allclose(W[:, j], math.sqrt(d) * F[:, a] * scale[j] + shift[j], rtol=0, atol=1e-14)
    np.testing.assert_allclose(O.my_phi(W), math.sqrt(d) * F[:, task.word_concept], rtol=0, atol=1e-13)  # φ(w) = √d f_α
    _, U_ref = O.type3_weights(task.Z, 3, 2, 2, d, c, [1.0, 1.0], F)
    np.testing.assert_allclose(U, U_ref, rtol=0, atol=1e-15)
    W0, _ = fc.type2_configuration(task, d=d, c=c, frame=F)  # default scale 1, shift 0: W = φ(W)
    np.testing.assert_allclose(W0, O.my_phi(W0), rtol=0, atol=1e-14)


def test_type3_configuration_explicit_constants():
    task = fc.Task.random(3, 3, 2, 4, mu=MU3, seed=0)  # K < n_c^L is fine with explicit constants
    d, c, r = 3, 0.8, np.array([2.0, 1.0, 0.25])
    F = _rotated_frame(3, d, 3)
    W, U = fc.type3_configuration(task, d=d, c=c, r=r, frame=F)
    W_ref, U_ref = O.type3_weights(task.Z, 3, 3, 2, d, c, r, F)
    np.testing.assert_allclose(W, W_ref, rtol=0, atol=1e-15)
    np.testing.assert_allclose(U, U_ref, rtol=0, atol=1e-15)
    np.testing.assert_allclose(np.linalg.norm(W, axis=0), np.tile(r, 3), rtol=1e-14)  # ‖w_(α,β)‖ = r_β
    with pytest.raises(fc.FCTheoryError, match="r="):
        fc.type3_configuration(task, d=d, c=c)
