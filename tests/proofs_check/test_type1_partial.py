"""proofs_check.type1_partial: the Claim-H certificate of Theorem 1's type-I point on partial tasks."""

import numpy as np
import pytest

from fctheory import Task
from proofs_check import _risk
from proofs_check import type1_partial as t1
from proofs_check.certificates import engine_grad_f


def test_rho_on_a_full_task_is_one_and_type1_is_certified():
    row = t1.type1_row(Task.full(2, 2, 3), 0.4, kind="full")
    assert abs(row.rho - 1) <= 1e-12
    assert abs(row.align) <= 1e-12
    assert abs(row.balance) <= 1e-12
    assert row.verdict == "certified"


def test_engine_gradient_equals_finite_differences_of_the_exact_risk_on_a_partial_task():
    task = Task.random(2, 2, 2, 3, seed=4)
    _, _, X = t1.type1_X(task, 0.3 * t1.lambda0(task))
    X = X + 0.3 * np.random.default_rng(0).normal(size=X.shape)  # a generic point, not only type I's
    _, G = engine_grad_f(task, X)
    S = _risk.enumerate_sentences(task)
    h = 1e-5
    fd = np.zeros_like(X)
    for idx in np.ndindex(X.shape):
        E = np.zeros_like(X)
        E[idx] = h
        fd[idx] = (_risk.f_value(S, X + E) - _risk.f_value(S, X - E)) / (2 * h)
    assert np.max(np.abs(G - fd)) <= 1e-9 * np.max(np.abs(G))


def test_refuted_case_minimiser_beats_type1_by_more_than_the_error_bound():
    n_c, s_c, L, K, seed, frac = t1.REFUTED
    task = Task.random(n_c, s_c, L, K, seed=seed)
    row = t1.type1_row(task, frac, seed=seed)
    assert row.verdict == "refuted" and row.rho > 1 + 1e3 * row.bound
    m = t1.minimiser_summary(task, frac, seeds=(0,))
    R1 = _risk.risk(task, *t1.type1_X(task, row.lam)[:2], row.lam)
    assert m.R_type1 == R1
    assert m.gap > 1e6 * row.bound * R1


def test_rows_are_deterministic_by_seed():
    def rows(seed):
        return t1.run_grid(tasks=[("random", seed, Task.random(3, 2, 2, 5, seed=seed))], fracs=(0.3, 0.8))

    a, b, c = rows(2), rows(2), rows(3)
    assert [r.__dict__ for r in a] == [r.__dict__ for r in b]
    assert a[0].z != c[0].z


def test_an_unbalanced_point_is_refuted():
    assert t1.verdict(1.0, 0.0, 1e-14, balance=1e-6) == "refuted"
    assert t1.verdict(1.0, 0.0, 1e-14, balance=0.0) == "certified"


def _next(x, direction=np.inf):
    return float(np.nextafter(x, direction))


def test_verdict_certifies_exactly_at_rho_one_plus_bound_and_refutes_one_ulp_beyond():
    b = 1e-13
    assert t1.verdict(1 + b, 0.0, b) == "certified"
    assert t1.verdict(_next(1 + b), 0.0, b) == "refuted"
    assert t1.verdict(0.5, 0.0, b) == "certified"  # ‖∇f‖₂ < λ: inside the subdifferential


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_verdict_certifies_exactly_at_an_alignment_of_plus_or_minus_bound_and_refutes_one_ulp_beyond(sign):
    b = 3e-14
    assert t1.verdict(1.0, sign * b, b) == "certified"
    assert t1.verdict(1.0, sign * _next(b), b) == "refuted"


def test_verdict_balance_tolerance_is_inclusive_and_an_unbalanced_point_is_refuted():
    tol = t1.BALANCE_TOL
    assert t1.verdict(1.0, 0.0, 1e-13, tol) == "certified"
    assert t1.verdict(1.0, 0.0, 1e-13, -tol) == "certified"
    assert t1.verdict(1.0, 0.0, 1e-13, _next(tol)) == "refuted"  # R > g(X): a balanced factorisation is lower
    # R < g(X) beyond the tolerance contradicts Claim G (R ≥ g): neither certified nor refuted
    assert t1.verdict(1.0, 0.0, 1e-13, -_next(tol)) == "undecided"


def test_certificate_bound_covers_the_engine_enumeration_distance_and_both_svd_bounds():
    from proofs_check.certificates import svd_bound

    task = Task.random(2, 2, 2, 3, seed=4)
    lam = 0.3 * t1.lambda0(task)
    _, _, X = t1.type1_X(task, lam)
    rho, align, bound, f, nuc = t1.certificate(task, X, lam)
    _, G = engine_grad_f(task, X)
    _, G_enum = _risk.f_grad(_risk.enumerate_sentences(task), X)
    sg, sx = np.linalg.svd(G, compute_uv=False), np.linalg.svd(X, compute_uv=False)
    assert rho == sg[0] / lam and nuc == pytest.approx(np.sum(sx), rel=1e-15)
    assert align == pytest.approx((np.sum(G * X) + lam * nuc) / (lam * nuc), rel=1e-12, abs=1e-15)
    cross = np.linalg.norm(G - G_enum) / lam
    expected = cross + svd_bound(G.shape, sg[0]) / lam + len(sx) * svd_bound(X.shape, sx[0]) / nuc
    assert bound == pytest.approx(expected, rel=1e-12, abs=0) and bound > cross  # abs=0: the bound is ~1e-15
    assert f == pytest.approx(_risk.f_value(_risk.enumerate_sentences(task), X), rel=1e-12)


def _g(task, X, lam):
    """g(X) = f(X) + λ‖X‖_* from the independent enumeration."""
    S = _risk.enumerate_sentences(task)
    return _risk.f_value(S, X) + lam * float(np.sum(np.linalg.svd(X, compute_uv=False)))


def test_partial_tasks_yields_the_full_task_then_random_and_lemma_b_sets_per_size_in_order():
    from fctheory import search_lemma_B

    got = list(t1.partial_tasks(shapes=((2, 2), (3, 2)), s_cs=(1, 2), seeds=(0, 3)))
    want = []
    for n_c, L in ((2, 2), (3, 2)):
        lb = {2: [[0, 0], [1, 1]]} if n_c == 2 else {3: [[0, 0], [1, 1], [2, 2]]}
        for s_c in (1, 2):
            want.append(("full", -1, n_c, s_c, L, n_c**L))
            for K in range(2, n_c**L):
                want += [("random", seed, n_c, s_c, L, K) for seed in (0, 3)]
                if K in lb:
                    want.append(("lemmaB", -1, n_c, s_c, L, K))
    assert [(k, s, t.n_c, t.s_c, t.L, t.K) for k, s, t in got] == want
    for kind, seed, task in got:
        if kind == "random":
            assert np.array_equal(task.Z, Task.random(task.n_c, task.s_c, task.L, task.K, seed=seed).Z)
        elif kind == "lemmaB":
            ex = search_lemma_B(n_c=task.n_c, L=task.L, with_origin=True).examples[task.K]
            assert np.array_equal(task.Z, ex) and np.array_equal(
                task.Z, np.diag(range(task.n_c)) @ np.ones((task.n_c, 2))
            )
        else:
            assert np.array_equal(task.Z, Task.full(task.n_c, task.s_c, task.L).Z)


def test_partial_tasks_without_lemma_b_yields_no_lemma_b_set():
    got = list(t1.partial_tasks(shapes=((2, 2),), s_cs=(1,), seeds=(1,), lemma_b=False))
    assert [(k, s, t.K) for k, s, t in got] == [("full", -1, 4), ("random", 1, 2), ("random", 1, 3)]


def test_partial_tasks_beyond_nine_searches_lemma_b_sets_only_for_the_listed_sizes(monkeypatch):
    calls = []
    Z5 = np.array([[0, 0, 0, 0], [1, 1, 1, 1], [0, 1, 0, 1], [1, 0, 1, 0], [0, 0, 1, 1]])

    class Found:
        examples = {5: Z5}

    def fake(**kw):
        calls.append(kw)
        return Found()

    monkeypatch.setattr(t1, "search_lemma_B", fake)
    monkeypatch.setattr(t1, "LEMMA_B_SIZES", {(2, 4): (5,)})
    got = list(t1.partial_tasks(shapes=((2, 4),), s_cs=(1,), seeds=()))
    assert calls == [dict(n_c=2, L=4, K=5, with_origin=True)]
    assert [(k, t.K) for k, _, t in got] == [("full", 16), ("lemmaB", 5)]
    assert np.array_equal(got[1][2].Z, Z5)
    calls.clear()
    assert [k for k, _, _ in t1.partial_tasks(shapes=((2, 4),), s_cs=(1,), seeds=(), lemma_b=False)] == ["full"]
    assert calls == []


def _best_scale_and_slope(task, lam):
    """_best_scale's t along the type-I ray X of (task, λ), the slope d/ds g(s·X) it must be a root of, and X."""
    S = _risk.enumerate_sentences(task)
    _, _, X = t1.type1_X(task, lam)
    nuc = float(np.sum(np.linalg.svd(X, compute_uv=False)))

    def slope(s):
        return float(np.sum(_risk.f_grad(S, s * X)[1] * X)) + lam * nuc

    return t1._best_scale(S, X, lam, nuc), slope, X


def test_best_scale_beyond_one_is_the_root_of_the_slope_to_full_precision():
    task = Task.random(3, 2, 2, 5, seed=0)
    lam = 0.9 * t1.lambda0(task)
    t, slope, X = _best_scale_and_slope(task, lam)

    assert t > 1  # the bracket [0, 1] had to be doubled
    assert slope(t * (1 - 1e-12)) < 0 < slope(t * (1 + 1e-12))
    assert _g(task, t * X, lam) < min(_g(task, t * (1 - 1e-3) * X, lam), _g(task, t * (1 + 1e-3) * X, lam))


def test_best_scale_is_zero_where_g_increases_from_the_origin_along_the_ray():
    task = Task.random(2, 1, 3, 2, seed=0)
    lam = 0.9 * t1.lambda0(task)
    S = _risk.enumerate_sentences(task)
    _, _, X = t1.type1_X(task, lam)
    nuc = float(np.sum(np.linalg.svd(X, compute_uv=False)))
    assert float(np.sum(_risk.f_grad(S, 0 * X)[1] * X)) + lam * nuc > 0
    assert t1._best_scale(S, X, lam, nuc) == 0.0


def test_type1_row_records_its_task_lambda_and_the_rescaled_point_certificate():
    task = Task.random(3, 2, 2, 5, seed=0)
    row = t1.type1_row(task, 0.9, kind="random", seed=7)
    lam = 0.9 * t1.lambda0(task)
    assert (row.n_c, row.s_c, row.L, row.K, row.kind, row.seed, row.frac) == (3, 2, 2, 5, "random", 7, 0.9)
    assert row.lam == lam and row.ratio == 5 / 9
    assert row.z == "|".join("".join(str(v) for v in r) for r in task.Z.tolist()) and row.lemma_b is False
    _, _, X = t1.type1_X(task, lam)
    assert row.t_star > 1
    rho_t, align_t, bound_t, _, _ = t1.certificate(task, row.t_star * X, lam)
    assert row.rho_star == rho_t and row.verdict_star == t1.verdict(rho_t, align_t, bound_t, row.balance)
    assert row.verdict_star == "refuted" and row.verdict == "refuted"
    assert row.gain_star == pytest.approx(_g(task, X, lam) - _g(task, row.t_star * X, lam), rel=1e-9, abs=0)
    assert row.gain_star > 0


@pytest.mark.parametrize(("frac", "star"), [(0.9, "origin"), (0.79, "refuted")])
def test_type1_row_at_a_zero_best_scale_certifies_the_origin_iff_the_gradient_there_is_within_lambda(frac, star):
    task = Task.random(2, 1, 3, 2, seed=0)
    row = t1.type1_row(task, frac)
    assert (row.kind, row.seed) == ("random", -1)  # the defaults
    lam = frac * t1.lambda0(task)
    _, _, X = t1.type1_X(task, lam)
    _, G0 = _risk.f_grad(_risk.enumerate_sentences(task), np.zeros_like(X))
    assert row.t_star == 0.0
    assert row.rho_star == pytest.approx(np.linalg.svd(G0, compute_uv=False)[0] / lam, rel=1e-14)
    assert row.verdict_star == star and (row.rho_star <= 1) == (star == "origin")
    f0 = _risk.f_value(_risk.enumerate_sentences(task), np.zeros_like(X))
    assert row.gain_star == pytest.approx(_g(task, X, lam) - f0, rel=1e-9, abs=0)


def test_type1_row_refutes_the_rescaled_point_of_an_unbalanced_factorisation_by_its_balance_alone():
    task = Task.full(2, 2, 2)
    lam = 0.4 * t1.lambda0(task)
    row = t1.type1_row(task, 0.4, kind="full", c_scale=1.5)
    _, _, X = t1.type1_X(task, lam, c_scale=1.5)
    assert 0 < row.t_star < 1  # X is 1.5 X_I: the best scale is 2/3
    rho_t, align_t, bound_t, _, _ = t1.certificate(task, row.t_star * X, lam)
    assert row.rho_star == rho_t
    assert t1.verdict(rho_t, align_t, bound_t) == "certified"  # t*X alone passes both conditions of Claim H
    assert row.balance > t1.BALANCE_TOL and row.verdict_star == "refuted"


def test_type1_row_origin_rho_is_the_spectral_norm_of_the_gradient_at_zero_not_its_frobenius_norm():
    task = Task.random(3, 1, 2, 3, seed=1)  # n_c = 3: ∇f(0) has rank 2, its two norms differ
    row = t1.type1_row(task, 0.9)
    lam = 0.9 * t1.lambda0(task)
    _, _, X = t1.type1_X(task, lam)
    _, G0 = _risk.f_grad(_risk.enumerate_sentences(task), np.zeros_like(X))
    sv = np.linalg.svd(G0, compute_uv=False)
    assert row.t_star == 0.0 and sv[1] > 0.5 * sv[0]
    assert row.rho_star == pytest.approx(sv[0] / lam, rel=1e-14, abs=0)
    assert np.linalg.norm(G0) / lam > 1.1 * row.rho_star


def test_type1_row_certifies_the_origin_exactly_at_rho_one_plus_bound_and_refutes_below(monkeypatch):
    task = Task.random(2, 1, 3, 2, seed=0)
    frac = 0.79  # t* = 0 and ‖∇f(0)‖₂/λ > 1: refuted with the true (tiny) bound
    lam = frac * t1.lambda0(task)
    _, _, X = t1.type1_X(task, lam)
    _, G0 = _risk.f_grad(_risk.enumerate_sentences(task), 0 * X)
    rho0 = float(np.linalg.norm(G0, 2)) / lam
    assert 1 < rho0 < 2  # rho0 − 1 is exact (Sterbenz), and 1 + (rho0 − 1) == rho0
    certificate = t1.certificate
    for bound, star in ((rho0 - 1, "origin"), ((rho0 - 1) / 2, "refuted")):
        planted = lambda *a, b=bound: certificate(*a)[:2] + (b,) + certificate(*a)[3:]  # noqa: E731
        monkeypatch.setattr(t1, "certificate", planted)
        row = t1.type1_row(task, frac)
        assert (row.t_star, row.rho_star, row.bound) == (0.0, rho0, bound)
        assert row.verdict_star == star


def test_type1_row_refutes_an_unbalanced_factorisation_of_a_certified_point_by_its_balance(monkeypatch):
    from fctheory import type1_configuration

    def unbalanced(task, lam, *, c_scale=1.0):  # (1.5 W, U/1.5): the same X = ÛᵀW, a higher risk
        W, U = type1_configuration(task, d=task.n_c, lam=lam)
        return 1.5 * W, U / 1.5, _risk.X_of(W, U, task.L)

    monkeypatch.setattr(t1, "type1_X", unbalanced)
    task = Task.full(2, 2, 3)
    row = t1.type1_row(task, 0.4, kind="full")
    assert abs(row.rho - 1) <= 1e-12 and abs(row.align) <= 1e-12  # X itself is certified
    assert t1.verdict(row.rho, row.align, row.bound) == "certified"
    assert row.balance > t1.BALANCE_TOL and row.verdict == "refuted"


def test_type1_row_flags_a_lemma_b_set():
    row = t1.type1_row(Task(2, 1, 2, np.array([[0, 0], [1, 1]])), 0.5, kind="lemmaB")
    assert row.lemma_b is True and row.kind == "lemmaB" and row.seed == -1 and row.z == "00|11"


def test_type1_row_balance_is_the_relative_excess_of_the_risk_over_g_and_refutes_a_rescaled_point():
    task = Task.full(2, 2, 2)
    lam = 0.4 * t1.lambda0(task)
    row = t1.type1_row(task, 0.4, kind="full", c_scale=1.5)
    from fctheory import type1_configuration

    W, U = type1_configuration(task, d=task.n_c, lam=lam)
    W = 1.5 * W  # c·1.5: ‖W‖² > ‖Û‖², so R > g(ÛᵀW)
    X = _risk.X_of(W, U, task.L)
    assert np.array_equal(X, t1.type1_X(task, lam, c_scale=1.5)[2])
    R = _risk.risk(task, W, U, lam)
    assert row.balance == pytest.approx((R - _g(task, X, lam)) / R, rel=1e-9, abs=0)
    assert row.balance > 1e-3 and row.verdict == "refuted"


def test_minimiser_summary_describes_the_lowest_of_the_seeds_minimisers():
    from fctheory import minimize_true_risk
    from fctheory.metrics import within_concept_spread

    task = Task.random(2, 2, 2, 3, seed=4)
    m = t1.minimiser_summary(task, 0.5, seeds=(0, 1))
    lam = 0.5 * t1.lambda0(task)
    d = min(task.n_w, task.K * task.L)
    assert m.d == d == 4
    runs = [minimize_true_risk(task, d=d, lam=lam, seed=s, gtol=1e-11) for s in (0, 1)]
    Rs = [float(r[2].R) for r in runs]
    W, U, res = runs[int(np.argmin(Rs))]
    assert (m.R_min, m.R_spread, m.success) == (min(Rs), max(Rs) - min(Rs), bool(res.success))
    assert m.gap == m.R_type1 - min(Rs)
    norms = np.linalg.norm(W, axis=0)
    assert m.word_norm_spread == pytest.approx((norms.max() - norms.min()) / norms.mean(), rel=1e-12, abs=0)
    Wn = W / norms
    C = Wn.T @ Wn
    same = task.word_concept[:, None] == task.word_concept[None, :]
    off = ~np.eye(task.n_w, dtype=bool)
    assert m.cos_within == pytest.approx(C[same & off].mean(), rel=1e-9, abs=1e-12)
    assert m.cos_across == pytest.approx(C[~same].mean(), rel=1e-9, abs=1e-12)
    assert m.within_spread == within_concept_spread(task, W).spread
    sx = np.linalg.svd(_risk.X_of(W, U, task.L), compute_uv=False)
    assert m.rank_X == int(np.sum(sx > 1e-8 * sx[0]))
    assert len(m.pca_W) == 4


def test_minimiser_summary_takes_the_seed_with_the_lowest_risk_not_the_first(monkeypatch):
    import types

    import fctheory.risk

    real = fctheory.risk.minimize_true_risk
    runs = {}

    def planted(task, *, seed, **kw):  # seed 0 is made the worse run: a higher risk, a failed flag, another W
        W, U, res = real(task, seed=seed, **kw)
        if seed == 0:
            W = W.copy()
            W[:, 0] *= 3.0
            res = types.SimpleNamespace(R=float(res.R) + 1.0, success=False)
        runs[seed] = (W, U, res)
        return W, U, res

    monkeypatch.setattr(fctheory.risk, "minimize_true_risk", planted)
    task = Task.random(2, 2, 2, 3, seed=4)
    m = t1.minimiser_summary(task, 0.5, seeds=(0, 1))
    W, _, res = runs[1]
    assert res.success and m.success
    assert m.R_min == float(res.R) and m.R_spread == float(runs[0][2].R) - float(res.R)
    norms = np.linalg.norm(W, axis=0)
    assert m.word_norm_spread == pytest.approx((norms.max() - norms.min()) / norms.mean(), rel=1e-12, abs=0)


def test_minimiser_summary_pca_is_the_top_four_of_the_raw_word_embeddings_not_their_layer_norms():
    from fctheory import minimize_true_risk

    task = Task.random(2, 3, 2, 3, seed=0)  # d = n_w = 6: five nonzero PCA values, of which four are kept
    m = t1.minimiser_summary(task, 0.5, seeds=(0,))
    lam = 0.5 * t1.lambda0(task)
    W = minimize_true_risk(task, d=m.d, lam=lam, seed=0, gtol=1e-11)[0]
    C = W.T - W.T.mean(axis=0)  # PCA of the words w_(alpha,beta) (rows), centred over the words
    expected = np.linalg.svd(C, compute_uv=False)[:4]
    assert len(m.pca_W) == 4
    assert np.allclose(m.pca_W, expected, rtol=1e-9, atol=1e-12 * expected[0])


def test_minimiser_summary_rank_of_X_is_relative_to_its_largest_singular_value(monkeypatch):
    import fctheory.risk

    real = fctheory.risk.minimize_true_risk
    monkeypatch.setattr(fctheory.risk, "minimize_true_risk", lambda task, **kw: _scaled_W(real(task, **kw), 1e6))
    task = Task.random(2, 2, 2, 3, seed=4)
    m = t1.minimiser_summary(task, 0.5, seeds=(0,))
    lam = 0.5 * t1.lambda0(task)
    W, U, _ = real(task, d=m.d, lam=lam, seed=0, gtol=1e-11)
    sx = np.linalg.svd(_risk.X_of(1e6 * W, U, task.L), compute_uv=False)
    assert sx[0] > 1e6 and 1e-8 / sx[0] < sx[-1]  # an absolute cutoff (or 1e-8/σ₁) would count every value
    assert m.rank_X == int(np.sum(sx > 1e-8 * sx[0])) == 1


def _scaled_W(run, c):
    W, U, res = run
    return c * W, U, res


def test_minimiser_summary_uses_a_given_width():
    task = Task.random(2, 2, 2, 3, seed=4)
    assert t1.minimiser_summary(task, 0.5, seeds=(0,), d=3).d == 3


def test_partial_tasks_searches_every_size_with_the_origin_up_to_nine_and_only_listed_sizes_beyond(monkeypatch):
    calls = []

    class Found:
        examples = {}

    def fake(**kw):
        calls.append(kw)
        return Found()

    monkeypatch.setattr(t1, "search_lemma_B", fake)
    monkeypatch.setattr(t1, "LEMMA_B_SIZES", {(10, 1): (4,)})
    shapes = ((2, 2), (3, 2), (10, 1), (2, 4))  # n_c^L = 4, 9 (exhaustive), 10, 16 (listed sizes, none for (2, 4))
    got = list(t1.partial_tasks(shapes=shapes, s_cs=(1,), seeds=()))
    assert calls == [
        dict(n_c=2, L=2, with_origin=True),
        dict(n_c=3, L=2, with_origin=True),
        dict(n_c=10, L=1, K=4, with_origin=True),
    ]
    assert [(k, t.K) for k, _, t in got] == [("full", 4), ("full", 9), ("full", 10), ("full", 16)]


def test_certificate_bound_carries_a_planted_engine_enumeration_distance_divided_by_lambda(monkeypatch):
    from proofs_check.certificates import svd_bound

    task = Task.random(2, 2, 2, 3, seed=4)
    lam = 0.3 * t1.lambda0(task)
    _, _, X = t1.type1_X(task, lam)
    f_grad = _risk.f_grad
    delta = np.full(X.shape, 1e-9)
    monkeypatch.setattr(_risk, "f_grad", lambda S, Y: (f_grad(S, Y)[0], f_grad(S, Y)[1] + delta))
    _, _, bound, _, nuc = t1.certificate(task, X, lam)
    _, G = engine_grad_f(task, X)
    sg, sx = np.linalg.svd(G, compute_uv=False), np.linalg.svd(X, compute_uv=False)
    svd_part = svd_bound(G.shape, sg[0]) / lam + len(sx) * svd_bound(X.shape, sx[0]) / nuc
    cross = np.linalg.norm(f_grad(_risk.enumerate_sentences(task), X)[1] + delta - G) / lam
    assert cross > 1e-9 / lam  # the planted distance dominates the two runs' own difference
    assert bound == pytest.approx(cross + svd_part, rel=1e-12, abs=0)


@pytest.mark.parametrize(
    ("args", "frac", "lo", "hi"),
    [((2, 2, 2, 3, 4), 0.3, 0.0, 1.0), ((3, 2, 2, 5, 0), 0.99, 4.0, 8.0)],
    ids=["root-below-one", "root-after-two-doublings"],
)
def test_best_scale_finds_the_slope_root_below_one_and_after_several_doublings(args, frac, lo, hi):
    task = Task.random(*args[:4], seed=args[4])
    lam = frac * t1.lambda0(task)
    t, slope, X = _best_scale_and_slope(task, lam)

    assert lo < t < hi
    assert slope(t * (1 - 1e-13)) < 0 < slope(t * (1 + 1e-13))
