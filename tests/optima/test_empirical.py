"""fctheory.optima.empirical: the certified optimum of the training objective R̂ of a finite sample.

Oracles: the best of 8 random starts of minimize_empirical_risk at a width above min(KL, n_w) (Theorem G: no
spurious local minima there), the empirical risk of fctheory.risk.empirical at the returned weights, and ball
arithmetic (python-flint) for the interval option."""

from __future__ import annotations

import numpy as np
import pytest

import fctheory as fc
from fctheory import FCTheoryError
from fctheory._nuclear import LowRankState, certify_state
from fctheory.optima import empirical as em
from fctheory.optima import optimum
from fctheory.risk.empirical import empirical_risk_grad, minimize_empirical_risk

REL = 1e-10


def _sample(n_c, s_c, L, K, n_spl, seed, mu="zipf"):
    task = fc.Task.random(n_c, s_c, L, K, seed=seed, mu=mu)
    S, y = task.sample(n_spl, seed=seed + 100)
    return task, S, y


CASES = [
    ("partial zipf (3,3,3) K=8", _sample(3, 3, 3, 8, 3, 0), 0.01),
    pytest.param("partial uniform (2,3,3) K=5", _sample(2, 3, 3, 5, 4, 1, "uniform"), 0.02, marks=pytest.mark.slow),
    pytest.param(
        "full (2,2,2)", (fc.Task.full(2, 2, 2), *fc.Task.full(2, 2, 2).sample(5, seed=3)), 0.005, marks=pytest.mark.slow
    ),  # fmt: skip
]


@pytest.mark.parametrize("name,data,lam", CASES, ids=["zipf K=8", "uniform K=5", "full (2,2,2)"])
def test_certified_and_never_above_the_best_of_8_local_minima(name, data, lam):
    task, S, y = data
    res = optimum(task, lam=lam, data=(S, y))
    assert res.certified and res.status == "certified" and res.rel_gap <= REL
    assert res.lower_bound <= res.R and res.R == pytest.approx(res.R_convex, rel=1e-15)
    # R at the returned weights, recomputed by the network-weight implementation
    R, dW, dU = empirical_risk_grad(task, res.W, res.U, S, y, lam)
    assert R == pytest.approx(res.R, rel=1e-12)
    assert np.sqrt(np.sum(dW**2) + np.sum(dU**2)) == pytest.approx(res.grad_norm, rel=1e-6, abs=1e-9)
    # balanced factors (Claim G): ‖W‖² = ‖U‖² = ‖X‖_*
    nuc = np.linalg.svd(res.X, compute_uv=False).sum()
    assert np.sum(res.W**2) == pytest.approx(nuc, rel=1e-9) and np.sum(res.U**2) == pytest.approx(nuc, rel=1e-9)
    d = min(task.K * task.L, task.n_w) + 1
    best = min(minimize_empirical_risk(task, S, y, d=d, lam=lam, seed=s, gtol=1e-11)[2]["R"] for s in range(8))
    assert res.R <= best * (1 + REL)
    assert res.lower_bound <= best * (1 + 1e-14)


def test_interval_option_brackets_the_float_result():
    pytest.importorskip("flint")
    task, S, y = _sample(3, 2, 2, 4, 3, 2)
    res = optimum(task, lam=0.02, data=(S, y), precision="interval")
    iv = res.interval
    assert iv["R"][0] <= res.R * (1 + 4e-16) and iv["R"][1] >= res.R * (1 - 4e-16)
    assert iv["lower_bound"] <= res.R and 0 <= iv["gap"] <= 1e-9 * res.R


def test_width_below_the_rank_reports_both_values():
    task, S, y, lam = *_sample(3, 3, 3, 8, 3, 0), 0.01
    full = optimum(task, lam=lam, data=(S, y))
    assert full.width >= 2
    d = full.width - 1
    res = optimum(task, lam=lam, data=(S, y), d=d)
    assert res.status == "width-limited" and not res.certified and res.W.shape[0] == d
    assert res.width == full.width and res.R_convex == pytest.approx(full.R, rel=1e-12)
    assert res.R >= res.R_convex * (1 - 1e-12) and res.lower_bound <= res.R_convex
    assert f"rank X* = {full.width} > d = {d}" in res.message
    # the width-d value is a local minimum of R̂ at width d, not worse than 8 random width-d starts' best by much
    best = min(minimize_empirical_risk(task, S, y, d=d, lam=lam, seed=s)[2]["R"] for s in range(8))
    assert res.R <= best * (1 + 1e-3)
    pad = optimum(task, lam=lam, data=(S, y), d=full.width + 2)
    assert pad.W.shape[0] == full.width + 2 and not pad.W[full.width :].any()
    assert pad.R == pytest.approx(full.R, rel=1e-12) and pad.certified


def test_a_lanczos_value_too_small_cannot_make_the_bound_unsound(monkeypatch):
    """The certificate's ‖∇f̂‖₂ is the Cholesky-guarded bound, whatever Lanczos says: with every Lanczos value
    halved, the solve's certified lower bound stays below the optimum (and the unguarded use of that value would
    not)."""
    task, S, y, lam = *_sample(3, 3, 3, 8, 3, 0), 0.01
    ref = optimum(task, lam=lam, data=(S, y))
    _, oracle = em.sample_problem(task, S, y)
    rng = np.random.default_rng(0)
    from fctheory.optima.sample import network_to_factors

    Wf, Uc = network_to_factors(ref.W, ref.U, task.K, task.L)
    real_top = em.SampleOracle.top

    def halved(self, k, **kw):
        A, s, Bt = real_top(self, k, **kw)
        return A, 0.5 * s, Bt

    unsound = 0
    for scale in (0.9, 0.97, 0.99, 1.03):
        W2, U2 = scale * Wf + 1e-3 * rng.normal(size=Wf.shape), scale * Uc
        f, E, _, _, inner = oracle.factored(W2, U2)
        st = LowRankState(W2, U2, f, E, inner, lam)
        good = certify_state(oracle, st, float(oracle.top(1)[1][0]))
        monkeypatch.setattr(em.SampleOracle, "top", halved)
        half = float(oracle.top(1)[1][0])
        guarded = certify_state(oracle, st, half)
        monkeypatch.setattr(em.SampleOracle, "top", real_top)
        assert guarded[0] <= ref.R and guarded[0] == pytest.approx(good[0], rel=1e-8)
        # without the guard, s = λ/(the halved Lanczos value) overstates the bound: above the optimum itself
        unguarded = min(1.0, lam / half) * E
        assert unguarded >= guarded[0]
        unsound += bool(unguarded > ref.R)
    assert unsound >= 1  # the points are ones where the guard matters
    # a whole solve misled by halved Lanczos values: it may stop uncertified, never with an unsound bound
    monkeypatch.setattr(em.SampleOracle, "top", halved)
    res = optimum(task, lam=lam, data=(S, y))
    assert res.lower_bound <= ref.R * (1 + 1e-14) and res.R >= ref.R * (1 - 1e-12)
    assert res.gap >= res.R - ref.R


def test_bad_data_is_refused():
    task, S, y = _sample(3, 2, 2, 4, 3, 2)
    with pytest.raises(FCTheoryError, match="data"):
        optimum(task, lam=0.02, data=S)
    with pytest.raises(FCTheoryError, match="data.*one label per sentence"):
        optimum(task, lam=0.02, data=(S, y[:-1]))
    with pytest.raises(FCTheoryError, match="data.*L = 2 columns"):
        optimum(task, lam=0.02, data=(S[:, :1], y))
    with pytest.raises(FCTheoryError, match="precision"):  # R̂* of h* is not convex: no interval certificate
        optimum(task, lam=0.02, data=(S, y), network="h*", precision="interval")
    with pytest.raises(FCTheoryError, match="precision"):
        with fc.budget(max_bytes=2**40):
            big = fc.Task.random(3, 2, 2, 9, seed=0)
            Sb, yb = big.sample(10_000, seed=0)
            optimum(big, lam=0.02, data=(Sb, yb), precision="interval", maxiter=1)


def test_certified_iff_the_gap_is_within_tol_and_the_bound_stays_below_the_optimum(monkeypatch):
    """A solve stopped at a loose gap (tol 1e-3), replayed under several tol: ``certified`` is exactly
    gap ≤ tol·|R| (tol just above and just below the gap's relative size), rel_gap is gap/|R|, gap is R − lower
    bound, and the loose point's bound stays below the tightly solved optimum while its gap covers its excess."""
    task, S, y, lam = *_sample(3, 3, 3, 8, 3, 0), 0.01
    ref = optimum(task, lam=lam, data=(S, y), tol=1e-12)
    real, cache = em.solve_lowrank, {}

    def loose(oracle, lam_, W0, U0, **kw):  # the same early-stopped solve whatever tol the caller passes
        if "out" not in cache:
            cache["out"] = real(oracle, lam_, W0, U0, **dict(kw, tol=1e-3, maxiter=40))
        return cache["out"]

    monkeypatch.setattr(em, "solve_lowrank", loose)
    first = optimum(task, lam=lam, data=(S, y), tol=1e-3)
    rel = first.gap / abs(first.R)
    assert 0 < rel <= 1e-3 and first.R > ref.R  # a point visibly above the optimum
    assert first.gap == first.R - first.lower_bound and first.rel_gap == rel
    assert first.lower_bound <= ref.R and first.gap >= first.R - ref.R
    for tol, ok in ((rel * 1.5, True), (rel / 1.5, False), (rel / 20, False)):
        res = optimum(task, lam=lam, data=(S, y), tol=tol)
        assert res.gap == first.gap and res.certified is ok and (res.status == "certified") is ok
