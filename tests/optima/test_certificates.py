"""fctheory.optima.certificates: the ball-arithmetic certificate of the optimum of (5) (certify_optimality)."""

import mpmath
import numpy as np
import pytest

import fctheory as fc
from fctheory import FCTheoryError, Task
from fctheory.optima import certify_optimality, optimum

REL = 1e-10  # the relative certified gap fc.optimum reaches by default


def test_interval_bounds_contain_the_float_result():
    pytest.importorskip("flint")
    task, lam = Task.random(3, 2, 2, 5, seed=0, mu=np.array([0.7, 0.3])), 0.02
    res = optimum(task, lam=lam, precision="interval")
    iv = res.interval
    lo, hi = iv["R"]
    assert lo <= hi and hi - lo <= 1e-14 * res.R
    assert lo - 4e-16 * res.R <= res.R <= hi + 4e-16 * res.R  # the float R: its rounding only
    assert iv["lower_bound"] <= res.lower_bound + 1e-13 and iv["lower_bound"] <= lo
    assert 0 <= iv["gap"] <= REL * res.R and iv["rho"] >= res.rho - 1e-12
    # at a perturbed point the rigorous gap is positive and the bound still below the optimum
    W = res.W * 1.01
    bad = certify_optimality(task, W, res.U, lam)
    assert bad["gap"] > 1e-6 and bad["lower_bound"] <= res.R


def test_interval_is_for_h_only_and_needs_small_tasks():
    pytest.importorskip("flint")
    task, lam = Task.random(2, 2, 3, 3, seed=0), 0.05
    with pytest.raises(FCTheoryError, match="precision"):
        optimum(task, lam=lam, network="h*", precision="interval")
    W, U = fc.type1_configuration(task, d=2, lam=lam)
    with pytest.raises(FCTheoryError, match="max_pairs"):
        certify_optimality(task, W, U, lam, max_pairs=10)


# ----------------------------------------------------------------------------- soundness at a low precision
# At PREC_MIN bits the balls are ~1e-4 wide, far wider than the float optimum's certified gap (~1e-12): a bound
# taken from the wrong end of its ball, or a positive-definiteness test that accepts a pivot ball containing
# zero, then lands on the wrong side of the exact value, which a 256-bit run pins down to float64 rounding.
LOW, HIGH = 16, 256


def _low_and_high(certify, *args):
    return certify(*args, prec=LOW), certify(*args, prec=HIGH)


def _assert_sound_at_the_optimum(lo, hi):
    """Every low-precision bound on the right side of the exact values the high-precision run encloses."""
    assert hi["R"][1] - hi["R"][0] <= 4e-16 * abs(hi["R"][1])  # the exact R(W, U), to float64 rounding
    assert lo["R"][1] - lo["R"][0] > 1e3 * (hi["R"][1] - hi["R"][0])  # the low run's balls are wide
    # R(W, U) lies in both enclosures
    assert lo["R"][0] <= hi["R"][1] and lo["R"][1] >= hi["R"][0]
    # min R ≤ R(W, U): a lower bound of min R is below R(W, U), also at the optimum where it is tight
    assert lo["lower_bound"] <= hi["R"][1] and hi["lower_bound"] <= hi["R"][1]
    # the gap bounds R(W, U) − min R ≥ 0 from above
    assert lo["gap"] >= 0.0 and lo["gap"] >= hi["R"][0] - hi["R"][1]
    # the low run is looser than the high one, never tighter
    assert lo["lower_bound"] <= hi["lower_bound"] + hi["gap"] and lo["gap"] >= hi["gap"] - hi["gap"]
    assert lo["rho"] >= hi["rho"] * (1 - 1e-12)


def test_population_certificate_is_sound_at_low_precision():
    pytest.importorskip("flint")
    task, lam = Task.full(3, 1, 2), 0.05
    res = optimum(task, lam=lam, tol=1e-12)
    lo, hi = _low_and_high(certify_optimality, task, res.W, res.U, lam)
    assert hi["gap"] <= 1e-10 * res.R  # the optimum is tight at 256 bits ...
    assert lo["gap"] > 1e-6 * res.R  # ... and visibly loose at 16 bits
    _assert_sound_at_the_optimum(lo, hi)
    # min R = H(τ) (Theorem 1) is bracketed at every precision
    Ht = float(fc.predict_type1(n_c=3, n_w=task.n_w, L=2, K=task.K, lam=lam).risk)
    for b in (lo, hi):
        assert b["lower_bound"] <= Ht * (1 + 1e-15) and b["R"][1] >= Ht * (1 - 1e-15)


def test_ldl_test_refuses_a_pivot_ball_that_contains_zero():
    """t·I − M is certified positive definite only when every pivot ball is certainly > 0."""
    flint = pytest.importorskip("flint")
    from fctheory.optima import certificates as ce

    with fc._interval.workprec(53):
        M = flint.arb_mat(1, 1, [flint.arb(1.0, 1e-3)])  # the ball 1 ± 1e-3
        assert not ce._positive_definite(flint, M, 1.0)  # pivot 0 ± 1e-3: neither certainly > 0 nor < 0
        assert not ce._positive_definite(flint, M, 1.0005)  # pivot 5e-4 ± 1e-3: contains zero
        assert ce._positive_definite(flint, M, 1.002)
        M2 = flint.arb_mat(2, 2, [flint.arb(2.0), flint.arb(1.0, 1e-6), flint.arb(1.0, 1e-6), flint.arb(0.5)])
        assert not ce._positive_definite(flint, M2, 2.5)  # second pivot 0 ± ~1e-6 (λ_max(M2) = 2.5 exactly)


def test_certified_top_eig_bounds_every_matrix_of_a_wide_ball():
    """With gradient entries known only to ±r, t must dominate ‖G‖₂² for every G in the ball, e.g. for the
    midpoint pushed by r along the sign pattern of its top singular pair."""
    flint = pytest.importorskip("flint")
    from fctheory.optima import certificates as ce

    rng = np.random.default_rng(0)
    G0 = rng.normal(size=(5, 3))
    r = 1e-3
    A, s, Bt = np.linalg.svd(G0)
    worst = G0 + r * np.sign(np.outer(A[:, 0], Bt[0]))
    with fc._interval.workprec(53):
        G = [[flint.arb(float(v), r) for v in row] for row in G0]
        t = ce.certified_top_eig(flint, G)
    assert t >= np.linalg.norm(worst, 2) ** 2 * (1 + 1e-12)
    assert t <= (s[0] + 10 * r) ** 2  # and not absurdly loose


def _exact_norm(G0):
    """‖G0‖₂ of the float entries, to 50 digits (mpmath)."""
    with mpmath.workdps(50):
        A = mpmath.matrix(G0.tolist())
        ev = mpmath.eigsy(A.T * A)[0]
        return mpmath.sqrt(max(ev[i] for i in range(ev.rows)))


def test_bounds_take_each_quantity_from_the_safe_end_of_its_ball():
    """_bounds on balls of known extent (f = 1.3 ± 1e-3, E = 0.9 ± 1e-3, an exact G with ‖G‖₂ = 2λ, so s = 1/2):
    against the exact values (mpmath), R's interval covers every R of the ball, the bound is below
    (λ/‖G‖₂)·min E, the gap above max R − bound, ρ above ‖G‖₂/λ, at 16, 24 and 53 bits. A quantity taken from
    the wrong end of its ball (s, E, R or ρ) crosses its exact value at a low precision."""
    pytest.importorskip("flint")
    from fctheory.optima import certificates as ce

    rng = np.random.default_rng(1)
    fmid, frad, Emid, Erad, pen = 1.3, 1e-3, 0.9, 1e-3, 2.0
    for _ in range(8):
        G0 = rng.normal(size=(4, 3))
        sigma = _exact_norm(G0)
        lam = 0.5 * float(np.linalg.norm(G0, 2))
        for prec in (16, 24, 53):
            with fc._interval.workprec(prec) as flint:
                G = [[flint.arb(float(v)) for v in row] for row in G0]
                out = ce._bounds(flint, flint.arb(fmid, frad), G, flint.arb(Emid, Erad), flint.arb(pen), lam, prec)
            with mpmath.workdps(50):
                R_lo = mpmath.mpf(fmid) - frad + mpmath.mpf(lam) / 2 * pen
                R_hi = mpmath.mpf(fmid) + frad + mpmath.mpf(lam) / 2 * pen
                assert out["R"][0] <= R_lo and out["R"][1] >= R_hi
                assert out["lower_bound"] <= mpmath.mpf(lam) / sigma * (mpmath.mpf(Emid) - Erad)
                assert out["gap"] >= R_hi - out["lower_bound"]
                assert out["rho"] >= sigma / lam


def test_certified_top_eig_returns_a_t_the_pivot_test_accepts():
    """The t returned (after the ladder and the bisection of _tighten) is one the LDLᵀ test accepted, never the
    last value tried: every matrix of the ball t·I − GᵀG is positive definite there, and t ≥ ‖G‖₂² (mpmath)."""
    pytest.importorskip("flint")
    from fctheory.optima import certificates as ce

    rng = np.random.default_rng(1)
    for _ in range(10):
        G0 = rng.normal(size=(4, 3))
        for prec in (16, 24, 53):
            with fc._interval.workprec(prec) as flint:
                G = [[flint.arb(float(v)) for v in row] for row in G0]
                t = ce.certified_top_eig(flint, G)
                Gm = flint.arb_mat(4, 3, [v for row in G for v in row])
                assert ce._positive_definite(flint, Gm.transpose() * Gm, t)
            assert t >= _exact_norm(G0) ** 2


def test_empirical_bound_at_s_equal_one_is_rounded_below_the_exact_entropy_term():
    """At 2·(W*, U*) of a sample's optimum (‖∇f̂‖₂ < λ: s = 1), the ball-arithmetic lower bound is E's lower end
    rounded *down*: below the exact E = (1/N) Σ_i H(p_i) (mpmath, 60 digits, from the float weights), which a
    bound rounded up by one ulp exceeds."""
    pytest.importorskip("flint")
    from fctheory.network import U_hat
    from fctheory.optima import certify_optimality_empirical

    task = Task.random(3, 2, 2, 4, seed=2)
    S, y = task.sample(3, seed=102)
    lam = 0.02
    opt = optimum(task, lam=lam, data=(S, y))
    W, U = 2 * opt.W, 2 * opt.U
    iv = certify_optimality_empirical(task, W, U, lam, S, y)
    assert iv["rho"] < 1.0  # s = 1
    with mpmath.workdps(60):
        to_mp = np.vectorize(mpmath.mpf, otypes=[object])
        X = to_mp(U_hat(U, L=task.L).T) @ to_mp(W)  # K·L × n_w, exact products of the float entries
        E = mpmath.mpf(0)
        for words in S.tolist():
            sc = [sum(X[j * task.L + ell, w] for ell, w in enumerate(words)) for j in range(task.K)]
            lse = mpmath.log(sum(mpmath.exp(v) for v in sc))
            E += lse - sum(mpmath.exp(v - lse) * v for v in sc)
        E /= len(S)
        assert 0 < E - iv["lower_bound"] <= 1e-12 * E
