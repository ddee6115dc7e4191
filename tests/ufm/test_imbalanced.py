"""The certified UFM optimum for any class counts (fctheory.ufm.imbalanced): independent oracles, the balanced
closed forms, and the soundness of the certificate."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fctheory import FCTheoryError, ufm
from fctheory._nuclear import fenchel_bound, nuclear_norm
from fctheory.ufm._reduced import ReducedCE, _entropy, certify_ce

# count vectors (K ≤ 20, zeros = absent classes) and (λ_W, λ_H): the oracle set
CASES = [
    ([6, 3, 2, 1, 0], 1e-2, 5e-3),
    ([5, 5, 3, 3, 1], 2e-2, 1e-2),
    ([8, 1, 1, 1, 1, 1], 1e-2, 1e-2),
    ([4, 4, 4, 2, 2, 0, 0], 3e-2, 1e-2),
    pytest.param([10, 7, 7, 3, 1, 1, 1, 0, 2, 2], 5e-3, 2e-2, marks=pytest.mark.slow),  # cvxpy: ~8 s
    ([3, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1], 1e-2, 1e-2),
]


def _present(counts, bias):
    """With a bias an absent class drops out (its bias → −∞): the oracles solve the problem without it."""
    return [c for c in counts if c > 0] if bias else counts


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("counts,lam_W,lam_H", CASES)
def test_ce_counts_equals_cvxpy_and_multistart_lbfgs(counts, lam_W, lam_H, bias):
    r = ufm.ce(counts=counts, lam_W=lam_W, lam_H=lam_H, bias=bias)
    assert r.certified and r.rel_gap <= 1e-10
    assert r.lower_bound <= r.value
    cc = _present(counts, bias)
    # cvxpy on the per-sample program (K × N logits, no collapse or groups assumed): interior-point accuracy
    v, _, _ = ufm.convex_ce(counts=cc, lam_W=lam_W, lam_H=lam_H, bias=bias)
    assert v == pytest.approx(r.value, rel=1e-7)
    # L-BFGS on (W, H, b) itself, d = K, three starts: no start beats the certified lower bound
    num = ufm.solve_ce(counts=cc, d=len(cc), lam_W=lam_W, lam_H=lam_H, bias=bias, n_starts=3, seed=0)
    assert num.value == pytest.approx(r.value, rel=1e-9)
    assert num.values.min() >= r.lower_bound * (1 - 1e-12)


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("counts,lam_W,lam_H", CASES[:4])
def test_mse_counts_equals_cvxpy_and_lbfgs(counts, lam_W, lam_H, bias):
    r = ufm.mse(counts=counts, lam_W=lam_W, lam_H=lam_H, bias=bias)
    assert r.certified and abs(r.gap) <= 1e-14
    v, _, _ = ufm.convex_mse(counts=counts, lam_W=lam_W, lam_H=lam_H, bias=bias)
    assert v == pytest.approx(r.value, rel=1e-7)
    num = ufm.solve_mse(counts=counts, d=len(counts), lam_W=lam_W, lam_H=lam_H, bias=bias, n_starts=2, seed=0)
    assert num.value == pytest.approx(r.value, rel=1e-9)
    if bias:  # b* = (T − X)√π; the L-BFGS bias agrees
        np.testing.assert_allclose(num.b, r.bias, atol=1e-5)


def test_mse_without_bias_is_the_per_class_threshold():
    # X* = diag((√π_k − λ)₊): value Σ_k φ(√π_k), φ(σ) = σ²/2 (σ ≤ λ) or λσ − λ²/2
    counts = np.array([9, 4, 1, 1, 0, 25])
    lam_W, lam_H = 1e-2, 2.5e-3
    N = counts.sum()
    lam = math.sqrt(N * lam_W * lam_H)
    sig = np.sqrt(counts / N)
    phi = np.where(sig <= lam, sig**2 / 2, lam * sig - lam**2 / 2)
    r = ufm.mse(counts=counts, lam_W=lam_W, lam_H=lam_H)
    assert r.value == pytest.approx(float(phi.sum()), rel=1e-14)
    assert r.width == int(np.count_nonzero(sig > lam))


@settings(max_examples=25, deadline=None)
@given(
    st.integers(2, 12),
    st.integers(1, 50),
    st.floats(-4.0, -0.5).map(lambda e: 10.0**e),
    st.floats(-4.0, -0.5).map(lambda e: 10.0**e),
    st.booleans(),
    st.sampled_from(["ce", "mse"]),
)
def test_balanced_counts_reproduce_the_closed_forms(K, n, lam_W, lam_H, bias, loss):
    fn = getattr(ufm, loss)
    a = fn(K=K, n_spl=n, lam_W=lam_W, lam_H=lam_H, bias=bias)
    b = fn(counts=[n] * K, lam_W=lam_W, lam_H=lam_H, bias=bias)
    assert b.value == pytest.approx(a.value, rel=1e-12, abs=1e-300)
    assert b.W_norm_sq == pytest.approx(a.W_norm_sq, rel=1e-12, abs=1e-300)
    assert b.H_norm_sq == pytest.approx(a.H_norm_sq, rel=1e-12, abs=1e-300)
    scale = max(float(np.max(np.abs(a.W_gram))), 1e-300)
    np.testing.assert_allclose(np.asarray(b.W_gram), np.asarray(a.W_gram), rtol=0, atol=1e-12 * scale)
    scale = max(float(np.max(np.abs(a.means_gram))), 1e-300)
    np.testing.assert_allclose(np.asarray(b.means_gram), np.asarray(a.means_gram), rtol=0, atol=1e-12 * scale)
    assert b.trivial == a.trivial
    if bias:
        np.testing.assert_allclose(b.bias, a.bias, atol=1e-12)
    assert b.extras["Kq"] == pytest.approx(K * math.sqrt(n * lam_W * lam_H), rel=1e-12)


@pytest.mark.parametrize("bias", [False, True])
def test_the_factors_attain_the_value_and_the_grams(bias):
    counts = np.array([7, 4, 4, 2, 1, 0])
    lam_W, lam_H = 2e-2, 5e-3
    r = ufm.ce(counts=counts, lam_W=lam_W, lam_H=lam_H, bias=bias)
    W, means = r.W, r.means
    np.testing.assert_allclose(W @ W.T, r.W_gram, atol=1e-9)
    np.testing.assert_allclose(means.T @ means, r.means_gram, atol=1e-9)
    assert float(np.sum(W * W)) == pytest.approx(r.W_norm_sq, rel=1e-9)
    H = np.repeat(means, counts, axis=1)  # every sample at its class mean
    assert float(np.sum(H * H)) == pytest.approx(r.H_norm_sq, rel=1e-9)
    b = None
    if bias:
        b = np.where(np.isfinite(r.bias), r.bias, -1e3)  # an absent class's bias → −∞
    v, *_ = ufm.ce_objective(W, H, b, counts=counts, lam_W=lam_W, lam_H=lam_H)
    assert v == pytest.approx(r.value, rel=1e-10)


def test_an_absent_class_under_a_bias_drops_out_and_without_one_stays_in_the_softmax():
    counts, lam_W, lam_H = [6, 3, 0, 2, 0], 1e-2, 1e-2
    with_bias = ufm.ce(counts=counts, lam_W=lam_W, lam_H=lam_H, bias=True)
    dropped = ufm.ce(counts=[6, 3, 2], lam_W=lam_W, lam_H=lam_H, bias=True)
    assert with_bias.value == pytest.approx(dropped.value, rel=1e-11)
    assert np.all(np.isneginf(with_bias.bias[[2, 4]]))
    no_bias = ufm.ce(counts=counts, lam_W=lam_W, lam_H=lam_H)
    fewer = ufm.ce(counts=[6, 3, 2], lam_W=lam_W, lam_H=lam_H)
    assert no_bias.value > fewer.value + 1e-3  # the absent classes' logits cost something in every softmax
    assert np.all(np.diag(np.asarray(no_bias.W_gram))[[2, 4]] > 0)  # their classifiers are pushed away
    np.testing.assert_array_equal(np.asarray(no_bias.means_gram)[[2, 4]], 0.0)  # and they have no features


@pytest.mark.parametrize("bias", [False, True])
def test_a_group_collapses_exactly_when_its_share_is_below_lambda_squared(bias):
    # 2 classes of 30, 3 of 10, 4 of 2 (N = 98): π = 30/98, 10/98, 2/98; λ² = Nλ_Wλ_H
    counts = [30, 30, 10, 10, 10, 2, 2, 2, 2]
    N = sum(counts)
    for lam2, collapsed in ((1.5 / N, ()), (5.0 / N, (2,)), (20.0 / N, (2, 10))):
        lam = math.sqrt(lam2 / N)  # λ_W = λ_H: Nλ² = lam2
        r = ufm.ce(counts=counts, lam_W=lam, lam_H=lam, bias=bias)
        assert r.certified
        exp = np.isin(np.array(counts), collapsed)
        np.testing.assert_array_equal(r.collapsed, exp)
        W = r.W
        for c in (2, 10, 30):
            rows = W[np.array(counts) == c]
            spread = float(np.max(np.abs(rows - rows[0])))
            assert (spread < 1e-7) == (c in collapsed), (lam2, c, spread)


def test_trivial_at_and_above_lambda0():
    counts = [9, 3, 1, 0]
    r = ufm.ce(counts=counts, lam_W=1e-3, lam_H=1e-3)
    lam0 = r.extras["lambda0"]
    N = sum(counts)
    lam = lam0 * 1.000001
    t = ufm.ce(counts=counts, lam_W=lam / math.sqrt(N), lam_H=lam / math.sqrt(N))
    assert t.trivial and t.width == 0 and t.gap == 0.0
    assert t.value == pytest.approx(math.log(4), rel=1e-15)  # uniform softmax over the K classes
    below = ufm.ce(counts=counts, lam_W=0.999 * lam0 / math.sqrt(N), lam_H=lam0 / math.sqrt(N))
    assert not below.trivial and below.value < math.log(4)


# ---------------------------------------------------------------------------------------------- soundness
def _perturbed_points(r, rng, n=6):
    M, t, c = (r.reduced[k] for k in ("M", "t", "c"))
    for eps in (1e-6, 1e-3, 1e-1, 1.0):
        for _ in range(n):
            yield (
                M + eps * rng.standard_normal(M.shape),
                t + eps * rng.standard_normal(t.shape),
                c + eps * rng.standard_normal(c.shape),
            )
    yield M, np.zeros_like(t), c  # the within-group parts switched off: ‖∂f/∂t‖_∞ = max √π_b > λ
    yield M, 3.0 * t, c


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("counts,lam_W,lam_H", CASES[:4])
def test_the_bound_never_exceeds_the_minimum_and_the_gap_covers_the_true_excess(counts, lam_W, lam_H, bias):
    r = ufm.ce(counts=counts, lam_W=lam_W, lam_H=lam_H, bias=bias)
    red = ReducedCE(r.reduced["groups"], r.reduced["lam"], bias)
    rng = np.random.default_rng(len(counts))
    tol = 1e-13 * r.value
    for M, t, c in _perturbed_points(r, rng):
        g, lb, _, _ = certify_ce(red, M, t, c)
        assert lb <= r.lower_bound + r.gap + tol  # LB(anywhere) ≤ min ≤ value
        assert g - lb >= (g - r.value) - tol  # the certified gap bounds the excess over the minimum


def test_the_uncorrected_bias_bound_is_unsound_and_the_corrected_one_is_not():
    # with a bias the dual point must have no bias part; the softmax p at a point whose bias is off the optimum
    # has one (Σ_b w_b(p_b − e_b) ≠ 0), and s·Σ w H(p) then exceeds the minimum
    r = ufm.ce(counts=[8, 1, 1, 1, 1, 1], lam_W=1e-2, lam_H=1e-2, bias=True)
    red = ReducedCE(r.reduced["groups"], r.reduced["lam"], True)
    rng = np.random.default_rng(0)
    M, t, c = (r.reduced[k] for k in ("M", "t", "c"))
    worst_naive = worst = -math.inf
    for _ in range(30):  # the optimum with its bias moved off
        cp = c + 0.3 * rng.standard_normal(c.shape)
        _, lb, _, _ = certify_ce(red, M, t, cp)
        worst = max(worst, lb - r.value)
        _, P, omo, _ = red.evaluate(M, t, cp)
        dual = max(float(np.linalg.norm(red.grad_M(P, omo), 2)), float(np.max(np.abs(red.grad_t(P, omo)))))
        worst_naive = max(worst_naive, min(1.0, red.lam / dual) * _entropy(red, P, omo) - r.value)
    assert worst <= 1e-13
    assert worst_naive > 1e-3


def test_the_group_certificate_equals_the_full_problems():
    # lift the reduced optimum to the K × K_p matrix X and certify the full problem (no symmetry used) with
    # fctheory._nuclear.fenchel_bound: the two bounds agree
    counts = np.array([5, 5, 3, 3, 3, 1, 0])
    r = ufm.ce(counts=counts, lam_W=1e-2, lam_H=1e-2)
    groups, lam = r.reduced["groups"], r.reduced["lam"]
    m = groups.sizes[: groups.Gp]
    beta = np.where(m > 1, r.reduced["t"] / np.maximum(m - 1, 1), 0.0)
    X = ufm.groups.lift(groups, r.reduced["M"], beta)
    pres = np.flatnonzero(counts > 0)
    pi = counts[pres] / counts.sum()
    Z = X / np.sqrt(pi)[None, :]
    A = Z - Z[pres, np.arange(pres.size)][None, :]
    P = np.exp(A) / np.exp(A).sum(axis=0)
    f = float(pi @ np.log(np.exp(A).sum(axis=0)))
    P[pres, np.arange(pres.size)] -= 1.0
    G = P * np.sqrt(pi)[None, :]
    lb, _, _, g = fenchel_bound(f, G, X, lam, nuclear_norm(X))
    assert g == pytest.approx(r.value, rel=1e-13)
    assert lb == pytest.approx(r.lower_bound, rel=1e-12)


# ---------------------------------------------------------------------------------------------- refusals
@pytest.mark.parametrize(
    "kw,name,match",
    [
        (dict(counts=[3, -1, 2]), "counts", ">= 0"),
        (dict(counts=[0, 0, 0]), "counts", "at least one positive count"),
        (dict(counts=[4]), "counts", "K >= 2"),
        (dict(counts=[4, 2], K=3), "counts", "K = 3"),
        (dict(counts=[4, 2], n_spl=3), "n_spl", "either n_spl"),
        (dict(K=3), "n_spl", "is required"),
        (dict(counts=[4, 2], lam_W=1e-30, lam_H=1e-30), "lam_W", r"sqrt\(N\*lam_W\*lam_H\)"),
    ],
)
@pytest.mark.parametrize("fn", [ufm.ce, ufm.mse])
def test_bad_counts_are_refused_naming_the_parameter(fn, kw, name, match):
    args = dict(lam_W=1e-2, lam_H=1e-2) | kw
    with pytest.raises(FCTheoryError, match=rf"^{name}=.*{match}"):
        fn(**args)


def test_a_solve_stopped_early_says_it_is_not_certified():
    r = ufm.ce(counts=[8, 3, 1, 1], lam_W=1e-3, lam_H=1e-3, bias=True, maxiter=1)
    assert not r.certified and r.rel_gap > 1e-10 and r.message.startswith("not certified")
    assert r.lower_bound <= r.value  # still a valid bound, just not a tight one
    full = ufm.ce(counts=[8, 3, 1, 1], lam_W=1e-3, lam_H=1e-3, bias=True)
    assert r.lower_bound <= full.value <= r.value


@pytest.mark.parametrize("factor", [1 / 50, 1 / 1.5])
def test_certified_means_a_relative_gap_within_tol_not_nearly(factor):
    # with a bias one proximal iteration stops at the same point whatever tol (rel. gap ~0.94): a tol just below
    # that gap (within 1.5x or 50x) must leave it uncertified, a tol just above it must certify it
    kw = dict(counts=[8, 3, 1, 1], lam_W=1e-3, lam_H=1e-3, bias=True, maxiter=1)
    gap = ufm.ce(**kw).rel_gap
    assert 1e-3 < gap < 1.0
    below = ufm.ce(**kw, tol=gap * factor)
    assert below.rel_gap == pytest.approx(gap, rel=1e-12) and not below.certified
    above = ufm.ce(**kw, tol=min(gap * 1.01, 1.0))
    assert above.rel_gap == pytest.approx(gap, rel=1e-12) and above.certified


@pytest.mark.parametrize("bias", [False, True])
def test_the_mse_bound_never_exceeds_the_minimum_and_the_gap_covers_the_excess(bias):
    from fctheory.ufm.imbalanced import mse_certificate

    counts = [9, 4, 4, 1, 1, 1, 0]
    r = ufm.mse(counts=counts, lam_W=2e-2, lam_H=1e-2, bias=bias)
    g = r.reduced["groups"]
    M, tw, lam = r.reduced["M"], r.reduced["t"], r.reduced["lam"]
    m = g.sizes.astype(float)
    pi = g.values[: g.Gp] / g.N
    A = np.zeros((g.G, g.Gp))
    A[np.arange(g.Gp), np.arange(g.Gp)] = np.sqrt(pi)
    if bias:
        A -= np.outer(np.sqrt(m) * np.concatenate([pi, np.zeros(g.G - g.Gp)]), np.sqrt(m[: g.Gp] * pi))
    value, lb = mse_certificate(A, M, np.sqrt(pi), tw, m[: g.Gp], lam)
    assert value == pytest.approx(r.value, rel=1e-14) and lb == pytest.approx(r.lower_bound, rel=1e-14)
    rng = np.random.default_rng(5)
    for eps in (1e-4, 1e-2, 1.0):
        for _ in range(5):
            v, b = mse_certificate(A, M + eps * rng.standard_normal(M.shape), np.sqrt(pi),
                                   tw + eps * rng.standard_normal(tw.shape), m[: g.Gp], lam)  # fmt: skip
            assert b <= r.value * (1 + 1e-14)  # a lower bound wherever it is computed
            assert v - b >= v - r.value - 1e-15  # the gap covers the excess
