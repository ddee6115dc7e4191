"""fctheory.lemma_b_scale: the closed-form optimal scale of type I on Lemma-B latent sets (fctheory/partial.py)."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

import fctheory as fc
from fctheory.risk import optimum

# Lemma-B latent sets with K < n_c^L (and one full set), as (n_c, L, Z)
SETS = [
    (2, 3, [[0, 0, 0], [0, 1, 1], [1, 0, 1], [1, 1, 0]]),
    (2, 2, [[0, 0], [1, 1]]),
    (3, 2, [[0, 0], [1, 1], [2, 2]]),
    (2, 3, [[0, 0, 0], [1, 1, 1]]),
]


def _task(n_c, L, Z, s_c=2):
    return fc.Task(n_c, s_c, L, np.array(Z), "uniform")


@pytest.mark.parametrize("n_c,L,Z", SETS)
def test_closed_form_is_the_certified_optimum(n_c, L, Z):
    """t* = ||X||_* and min H_Z = min R of the certified global minimiser (rel. 1e-10), every word at sqrt(t*/n_w)."""
    task = _task(n_c, L, Z)
    assert fc.lemma_B_properties(task).holds and not task.is_full
    lam0 = fc.lemma_b_scale(task, lam=1.0).lambda0
    for frac in (0.1, 0.5, 0.9):
        b = fc.lemma_b_scale(task, lam=frac * lam0)
        res = optimum(task, lam=frac * lam0)
        assert res.certified
        assert abs(b.risk - res.R) <= 1e-10 * res.R
        w = np.linalg.norm(res.W, axis=0)
        np.testing.assert_allclose(w, b.word_norm, rtol=1e-6)  # W from a solver converged to gap 1e-10 on R
        assert abs(np.sum(w * w) - b.t_star) <= 1e-7 * b.t_star


def test_mp_reference_agrees_and_vectorises():
    task = _task(*SETS[0])
    lams = np.array([[1e-8, 1e-3], [0.05, 0.4]])
    b = fc.lemma_b_scale(task, lam=lams)
    m = fc.lemma_b_scale(task, lam=lams, precision="mp", dps=60)
    assert b.t_star.shape == lams.shape
    for i in np.ndindex(lams.shape):
        for f in ("t_star", "risk", "word_norm", "q_star"):
            ref = m.__getattribute__(f)[i]
            assert abs(getattr(b, f)[i] - float(ref)) <= 1e-13 * abs(float(ref)), (f, i)
        # the mp root solves the stationarity polynomial sum_r (eta r - lam)|S_r| q^r = lam
        with mpmath.workdps(60):
            q, S, eta = m.q_star[i], b.sphere_sizes, mpmath.mpf(2) / mpmath.sqrt(4 * 4 * 3)
            g = sum((eta * r - lams[i]) * int(S[r - 1]) * q**r for r in range(1, 4)) - lams[i]
            assert abs(g) < mpmath.mpf(10) ** -50


def test_threshold_and_trivial_side():
    task = _task(*SETS[1])
    lam0 = fc.lemma_b_scale(task, lam=1.0).lambda0
    b = fc.lemma_b_scale(task, lam=[0.999 * lam0, 1.001 * lam0, 10 * lam0])
    assert b.t_star[0] > 0 and b.t_star[1] == 0 and b.t_star[2] == 0
    assert b.trivial.tolist() == [False, True, True]
    np.testing.assert_allclose(b.risk[1:], np.log(task.K), rtol=1e-15)


def test_full_set_gives_theorem_1_tau():
    task = fc.Task.full(3, 2, 3)
    lam = np.array([1e-4, 1e-2, 0.1])
    np.testing.assert_allclose(
        fc.lemma_b_scale(task, lam=lam).t_star, fc.tau(n_c=3, n_w=6, L=3, K=27, lam=lam), rtol=1e-11
    )


FIELDS = ("t_star", "q_star", "risk", "ce", "word_norm", "u_norm")


@pytest.mark.parametrize("n_c,L,Z", SETS)
def test_interval_encloses_the_mp_reference_and_the_float_result(n_c, L, Z):
    """precision="interval": every field is a ball that contains the 60-digit mpmath value (the polynomial in q
    as printed, an independent root-finder), with relative width below 1e-15, and the float result lies within
    its documented error of it (tiny λ, mid-range and just below λ₀,Z)."""
    pytest.importorskip("flint")
    task = _task(n_c, L, Z)
    lam0 = fc.lemma_b_scale(task, lam=1.0).lambda0
    lams = np.array([1e-9 * lam0, 0.3 * lam0, 0.999 * lam0])
    b = fc.lemma_b_scale(task, lam=lams)
    m = fc.lemma_b_scale(task, lam=lams, precision="mp", dps=60)
    iv = fc.lemma_b_scale(task, lam=lams, precision="interval")
    for f in FIELDS:
        e = getattr(iv, f)
        assert np.all(e.contains(getattr(m, f))), f
        # the float path: a few ulps, amplified by 1/(1 − λ/λ₀,Z) where t* ∝ λ₀,Z − λ cancels (its docstring)
        tol = 64 * np.finfo(float).eps / (1 - lams / lam0)
        assert np.all(np.abs(getattr(b, f) - e.mid) <= tol * np.abs(e.mid)), f
        assert np.all(e.rel_width <= 1e-15), f
    assert not np.any(iv.trivial)


def test_interval_decides_the_trivial_side_exactly():
    """λ ≥ λ₀,Z, decided in rationals: t* is exactly 0 (a zero-width ball), q* = 1 and R = log K."""
    pytest.importorskip("flint")
    task = _task(*SETS[1])
    lam0 = fc.lemma_b_scale(task, lam=1.0).lambda0
    iv = fc.lemma_b_scale(task, lam=[1.001 * lam0, 10 * lam0], precision="interval")
    assert iv.trivial.tolist() == [True, True] and np.all(iv.t_star.hi == 0) and np.all(iv.t_star.lo == 0)
    assert np.all(iv.q_star.mid == 1) and np.all(iv.risk.contains(mpmath.log(task.K)))
    scalar = fc.lemma_b_scale(task, lam=0.5 * lam0, precision="interval")
    assert scalar.trivial is False and scalar.t_star.lo > 0


def test_interval_on_the_full_set_encloses_theorem_1_tau():
    """On the full set t* = τ of Theorem 1: the ball overlaps fctheory.tau's own certified ball (a root of H′ in
    Theorem 1's counts, another function), and both are narrower than 1e-30 relative."""
    pytest.importorskip("flint")
    task = fc.Task.full(3, 2, 3)
    for lam in (1e-4, 1e-2):
        iv = fc.lemma_b_scale(task, lam=lam, precision="interval").t_star
        ref = fc.tau(n_c=3, n_w=6, L=3, K=27, lam=lam, precision="interval")
        assert iv.ball.overlaps(ref.ball) and iv.rel_width < 1e-30 and ref.rel_width < 1e-30


def test_theorem_1_error_on_lemma_b_partial_sets():
    """Theorem 1's K-only word norm against the certified optimum: its error is what the closed form removes."""
    errs = []
    for n_c, L, Z in SETS:
        task = _task(n_c, L, Z)
        lam = 0.3 * fc.lemma_b_scale(task, lam=1.0).lambda0
        c_opt = float(np.linalg.norm(optimum(task, lam=lam).W, axis=0).mean())
        c1 = fc.predict_type1(n_c=n_c, n_w=task.n_w, L=L, K=task.K, lam=lam).c
        errs.append(abs(c1 - c_opt) / c_opt)
        assert abs(fc.lemma_b_scale(task, lam=lam).word_norm - c_opt) <= 1e-6 * c_opt
    assert min(errs) > 0.03  # Theorem 1 is 4% to 35% off at these lambda (100% near lambda0_Z), docs/optimum.md


@pytest.mark.parametrize(
    "task,match",
    [
        (fc.Task.random(3, 2, 2, 5, seed=0), "Lemma B"),
        (fc.Task(2, 2, 2, np.array([[0, 0], [1, 1]]), np.array([0.7, 0.3])), "uniform"),
    ],
)
def test_refuses_what_the_closed_form_does_not_cover(task, match):
    with pytest.raises(fc.FCTheoryError, match=match):
        fc.lemma_b_scale(task, lam=0.01)
    with pytest.raises(fc.FCTheoryError, match="lam"):
        fc.lemma_b_scale(_task(*SETS[1]), lam=-1.0)
