"""proofs_check.certificates: the relation between ∇f and the engine's gradients, the closed-form spectrum of
∇f at concept-symmetric points of full tasks, the rigorous bounds, and the atlas report."""

import itertools

import mpmath
import numpy as np
import pytest

from fctheory import Task, evaluate_risk, lambda_max_type3, solve_type3, type3_configuration
from proofs_check import _risk, convex
from proofs_check import certificates as C


def _task(n_c, s_c, L, a=1.0):
    return Task.full(n_c, s_c, L, mu=C.zipf_mu(s_c, a))


def _type3_X(task, frac=0.5):
    lam = frac * float(lambda_max_type3(mu=task.mu, n_c=task.n_c, L=task.L))
    c, r, a, b = C.type3_entries(task.mu, task.n_c, task.L, lam)
    return lam, a, b, C.structured_X(task, a, b)


def test_lifted_engine_gradient_matches_finite_differences_of_the_exact_risk():
    """At a generic X (no structure), the engine's ∂R₀/∂Û at W = I, Û = Xᵀ is ∇f(X): central differences of
    f = R₀ (the engine's value) along random directions agree to 1e-8 relative."""
    task = Task.random(3, 2, 3, 7, mu="zipf", seed=1)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(task.K * task.L, task.n_w))
    f0, G = C.engine_grad_f(task, X)
    h = 1e-5
    for _ in range(3):
        D = rng.normal(size=X.shape)
        fd = (C.engine_grad_f(task, X + h * D)[0] - C.engine_grad_f(task, X - h * D)[0]) / (2 * h)
        assert fd == pytest.approx(float(np.sum(G * D)), rel=1e-8)


def test_engine_W_and_U_gradients_are_the_projections_of_grad_f():
    """At fctheory's type-III configuration (d = n_c + 1): ∂R₀/∂W = Û∇f(X) and ∂R₀/∂Û = W∇f(X)ᵀ with ∇f read off
    the lifted point, and X = ÛᵀW equals the structured X_III of the certificates (1e-14)."""
    task = _task(3, 3, 2)
    lam, a, b, X3 = _type3_X(task)
    W, U = type3_configuration(task, d=4, lam=lam)
    Uh = _risk.U_hat(U, task.L)
    X = Uh.T @ W
    np.testing.assert_allclose(X, X3, rtol=0, atol=1e-14)
    res = evaluate_risk(task, W, U, 0.0, grad=True)
    _, G = C.engine_grad_f(task, X)
    np.testing.assert_allclose(res.grad_W, Uh @ G, rtol=0, atol=1e-15)
    np.testing.assert_allclose(_risk.U_hat(res.grad_U, task.L), W @ G.T, rtol=0, atol=1e-15)
    # criticality of R at the type-III point is ∇f(X)Wᵀ = −λÛᵀ
    np.testing.assert_allclose(G @ W.T, -lam * Uh.T, rtol=0, atol=1e-13)


def test_certificate_agrees_with_the_convex_solver_certificate():
    """On (2,2,2) (Zipf, λ = λ_max/2): the enumerated gradient of convex.lower_bound equals the engine's, and the
    Claim-H ratio of conjecture.py's row (cvxpy solved) equals the certificate's, both 1 to 1e-14."""
    task = convex.make_task(2, 2, 2, "zipf")
    lam, a, b, X = _type3_X(task)
    row = convex.conjecture_row(task, lam, label="zipf", with_cvx=True)
    cert = C.certify(2, 2, 2, 1.0, 0.5)
    assert cert.lam == pytest.approx(lam, rel=1e-15)
    _, Genum = _risk.f_grad(_risk.enumerate_sentences(task), X)
    _, G = C.engine_grad_f(task, X)
    np.testing.assert_allclose(G, Genum, rtol=0, atol=1e-16)
    assert abs(row.grad_op_over_lam - 1) <= 1e-14 and abs(cert.rho_engine) <= 1e-14
    assert row.gap <= 1e-14 and cert.gap_hi <= 1e-14
    assert abs(row.cvx_value - row.R_type3) <= 1e-6


def _mp_gradient(task, X, dps=40):
    """∇f(X) by enumerating every sentence of every class in mpmath (``dps`` digits)."""
    with mpmath.workdps(dps):
        G = [[mpmath.mpf(0)] * task.n_w for _ in range(task.K * task.L)]
        Xm = [[mpmath.mpf(float(x)) for x in row] for row in X]
        for k, z in enumerate(task.Z):
            for betas in itertools.product(range(task.s_c), repeat=task.L):
                words = [int(z[l]) * task.s_c + b for l, b in enumerate(betas)]
                D = mpmath.fprod(mpmath.mpf(float(task.mu[b])) for b in betas) / task.K
                y = [mpmath.fsum(Xm[j * task.L + l][w] for l, w in enumerate(words)) for j in range(task.K)]
                ymax = max(y)
                e = [mpmath.exp(t - ymax) for t in y]
                Z = mpmath.fsum(e)
                for j in range(task.K):
                    g = D * (e[j] / Z - (1 if j == k else 0))
                    for l, w in enumerate(words):
                        G[j * task.L + l][w] += g
        return G


def test_error_bound_holds_against_an_mpmath_enumeration():
    """On (2,2,2) and (3,2,2): the closed-form gradient equals a 40-digit enumeration to 1e-30, and the engine's
    gradient is within the certificate's rigorous (Weyl) bound of that enumeration."""
    for n_c in (2, 3):
        task = _task(n_c, 2, 2, a=1.5)
        lam, a, b, X = _type3_X(task, 0.3)
        cf = C.closed_form(task.mu, n_c, 2, a, b, lam)
        Gmp = _mp_gradient(task, X)
        for j, w in itertools.product(range(task.K * task.L), range(task.n_w)):
            own = task.Z.reshape(-1)[j] == task.word_concept[w]
            exact = (cf.g if own else cf.g_other)[task.word_rank[w]]
            with mpmath.workprec(256):
                lo, hi = C.ends(exact)
                assert lo - 1e-30 <= Gmp[j][w] <= hi + 1e-30
        row = C.certify(n_c, 2, 2, 1.5, 0.3)
        _, G = C.engine_grad_f(task, X)
        dist = float(
            mpmath.sqrt(mpmath.fsum((G[j][w] - Gmp[j][w]) ** 2 for j in range(len(G)) for w in range(task.n_w)))
        )
        assert dist / lam <= row.weyl


@pytest.mark.parametrize("shape", [(2, 3, 3), (3, 2, 3), (4, 3, 2), (5, 2, 2)])
def test_closed_form_spectrum_matches_numpy_svd(shape):
    """At random concept-symmetric X (not critical) and at the type-III point: numpy's singular values of the
    enumerated ∇f are n_c − 1 copies of (*) and zeros, to 1e-13 of the largest."""
    n_c, s_c, L = shape
    task = _task(n_c, s_c, L, a=0.7)
    rng = np.random.default_rng(n_c * 10 + L)
    lam, a3, b3, _ = _type3_X(task, 0.6)
    for a, b in ((rng.normal(size=s_c), rng.normal(size=s_c)), (a3, b3)):
        _, G = _risk.f_grad(_risk.enumerate_sentences(task), C.structured_X(task, a, b))
        sv = np.linalg.svd(G, compute_uv=False)
        s = C.float_up(C.closed_form(task.mu, n_c, L, a, b, lam).s)
        ref = np.r_[np.full(n_c - 1, s), np.zeros(len(sv) - n_c + 1)]
        np.testing.assert_allclose(sv, ref, rtol=0, atol=1e-13 * s)


def test_spectrum_equals_lambda_at_the_mp_type3_solution():
    """With solve_type3's 50-digit (c, r): (*) at the type-III point equals λ to 1e-40 (the identity s = λ of the
    proof, step 5), for uniform and Zipf μ."""
    for n_c, s_c, L, mu in ((3, 3, 2, "zipf"), (2, 4, 5, "zipf"), (5, 2, 3, "uniform")):
        task = Task.full(n_c, s_c, L, mu=mu)
        lam = 0.37 * float(lambda_max_type3(mu=task.mu, n_c=n_c, L=L))
        with mpmath.workdps(50):
            sol = solve_type3(mu=task.mu, n_c=n_c, L=L, lam=lam, precision="mp")
            kap = mpmath.mpf(n_c) / (n_c - 1)
            mu = [mpmath.mpf(float(m)) for m in task.mu]  # (7)–(8) with the float law as given (S = 1 in (*))
            v = [m * (n_c - 1) / (n_c - 1 + mpmath.exp(kap * sol.c * r)) for m, r in zip(mu, sol.r)]
            s = kap * mpmath.sqrt(mpmath.fsum(x * x for x in v)) * mpmath.sqrt(mpmath.mpf(L) / (n_c * task.K))
            assert abs(s / mpmath.mpf(lam) - 1) <= 1e-40


def test_frobenius_bound_is_an_upper_bound():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(40, 7))
    B = A + 1e-13 * rng.normal(size=A.shape)
    exact = mpmath.sqrt(
        mpmath.fsum((mpmath.mpf(float(x)) - mpmath.mpf(float(y))) ** 2 for x, y in zip(A.ravel(), B.ravel()))
    )
    bound = C.frobenius_bound(A, B)
    assert exact <= bound <= exact * (1 + 1e-12)


def test_certify_rejects_nothing_and_bounds_are_tight_on_a_small_grid():
    """Every certificate of a small grid: |ρ − 1| ≤ 1e-14, gap ≤ 1e-14, engine within its Weyl bound plus LAPACK's."""
    rows = C.run_grid([(2, 2, 3), (3, 2, 2)], (0.0, 2.0), (0.1, 0.9), engine=True)
    for r in rows:
        assert max(abs(r.rho_lo), abs(r.rho_hi)) <= 1e-14 and r.gap_hi <= 1e-14
        assert r.spec_err <= r.weyl + C.svd_bound((r.K * r.L, r.n_c * r.s_c), 1.0)


def test_closed_form_needs_no_task_beyond_the_engine():
    """K = 5^20: the closed-form certificate runs without building the task."""
    r = C.certify(5, 10, 20, 1.0, 0.5, engine=False)
    assert r.K == 5**20 and max(abs(r.rho_lo), abs(r.rho_hi)) <= 1e-13 and np.isnan(r.weyl)
