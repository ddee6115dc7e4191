"""NC1–NC4 and CDNV (review eqs. (4)–(9), (51); Súkeník et al. Def. 3.4): zeros on collapse,
invariances, agreement with straightforward implementations, streaming = in-memory."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fctheory import FCTheoryError
from fctheory.metrics import (
    NCAccumulator,
    cdnv,
    cdnv_from_statistics,
    class_statistics,
    equiangularity,
    equinorm,
    nc1,
    nc1_from_statistics,
    nc2,
    nc3,
    nc3_from_statistics,
    nc4,
    nc_summary,
    uniform_duality,
)

TOL = 1e-12


def simplex_etf(K, m, rng):
    """K unit simplex vertices in R^m (rows), randomly rotated."""
    E = np.eye(K) - 1.0 / K
    E /= np.linalg.norm(E, axis=1, keepdims=True)
    if m >= K:
        Q, _ = np.linalg.qr(rng.standard_normal((m, K)))
        return E @ Q.T
    # m = K−1: coordinates in an orthonormal basis of 1^⊥
    U, s, Vt = np.linalg.svd(E)
    C = E @ Vt[: K - 1].T
    Q, _ = np.linalg.qr(rng.standard_normal((m, K - 1)))
    return C @ Q.T


@st.composite
def collapsed(draw):
    K = draw(st.integers(2, 6))
    m = draw(st.integers(K - 1, K + 4))
    n = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**31))
    r = draw(st.floats(0.1, 10))
    s = draw(st.floats(0.1, 10))
    rng = np.random.default_rng(seed)
    V = simplex_etf(K, m, rng)
    shift = rng.standard_normal(m) if draw(st.booleans()) else np.zeros(m)
    y = np.repeat(np.arange(K), n)
    H = r * V[y] + shift
    W = s * V
    return K, m, n, H, y, W, shift


@settings(max_examples=40)
@given(collapsed())
def test_all_metrics_vanish_on_exact_etf_collapse(case):
    K, m, n, H, y, W, shift = case
    # two-pass statistics: only the rounding of the class means remains (no E[x²] − E[x]² cancellation)
    assert nc1(H, y) <= TOL and nc1(H, y, variant="trace_ratio") <= TOL
    assert cdnv(H, y) <= TOL
    means = class_statistics(H, y).means
    for v in ("etf", "zhu", "cosine"):
        assert nc2(means, variant=v) <= TOL
        assert nc2(W, variant=v) <= TOL
    assert equinorm(means) <= TOL and equiangularity(means) <= TOL and equiangularity(means, variant="std") <= TOL
    for v in ("duality", "duality_squared", "etf"):
        assert nc3(W, H, y, variant=v) <= TOL
    assert nc4(W, H, y, b=-(W @ shift)) == 0.0  # the bias undoes the global shift


@st.composite
def random_data(draw):
    K = draw(st.integers(2, 5))
    m = draw(st.integers(1, 8))
    counts = draw(st.lists(st.integers(1, 5), min_size=K, max_size=K))
    seed = draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    y = np.concatenate([np.full(c, k) for k, c in enumerate(counts)])
    rng.shuffle(y)
    H = rng.standard_normal((y.size, m)) + 3 * rng.standard_normal((K, m))[y]
    W = rng.standard_normal((K, m))
    return K, m, H, y, W, rng


def _naive_stats(H, y, K):
    mus = np.array([H[y == k].mean(0) for k in range(K)])
    muG = mus.mean(0)
    N = len(y)
    SW = sum(np.outer(h - mus[c], h - mus[c]) for h, c in zip(H, y)) / N
    SB = sum(np.outer(mu - muG, mu - muG) for mu in mus) / K
    return mus, muG, SW, SB


@settings(max_examples=40)
@given(random_data())
def test_metrics_match_straightforward_implementations(case):
    K, m, H, y, W, rng = case
    mus, muG, SW, SB = _naive_stats(H, y, K)
    # NC1, eq. (4): (1/K) tr(Σ_W Σ_B^+) and the trace ratio
    assert nc1(H, y) == pytest.approx(np.trace(SW @ np.linalg.pinv(SB, rcond=1e-10, hermitian=True)) / K, rel=1e-9)
    assert nc1(H, y, variant="trace_ratio") == pytest.approx(np.trace(SW) / np.trace(SB), rel=1e-12)
    # CDNV, eq. (51), averaged over ordered pairs
    var = [np.mean(((H[y == k] - mus[k]) ** 2).sum(1)) for k in range(K)]
    V = [(var[i] + var[j]) / (2 * np.sum((mus[i] - mus[j]) ** 2)) for i in range(K) for j in range(K) if i != j]
    assert cdnv(H, y) == pytest.approx(np.mean(V), rel=1e-12)
    # NC2 (Súkeník NC2A, corrected E_K): brute-force minimisation over c on a fine grid is
    # replaced by the 1-D least-squares optimum written out
    Mc = mus - muG
    G = Mc @ Mc.T
    E = np.eye(K) - 1.0 / K
    c = max(0.0, np.sum(G * E) / np.sum(E * E))
    assert nc2(mus) == pytest.approx(np.linalg.norm(G - c * E) / np.linalg.norm(G), rel=1e-10, abs=1e-14)
    # NC3 (Papyan): ‖W/‖W‖ − M̃/‖M̃‖‖
    assert nc3(W, H, y) == pytest.approx(np.linalg.norm(W / np.linalg.norm(W) - Mc / np.linalg.norm(Mc)), rel=1e-12)
    # NC4: classifier vs nearest class centre, sample by sample
    dis = 0
    for h in H:
        a = np.argmax(W @ h)
        b = np.argmin([np.linalg.norm(h - mu) for mu in mus])
        dis += a != b
    assert nc4(W, H, y) == pytest.approx(dis / len(y), abs=0)


@settings(max_examples=30)
@given(random_data(), st.floats(0.01, 100), st.floats(0.01, 100))
def test_metrics_invariant_under_rotation_and_scaling(case, s, t):
    K, m, H, y, W, rng = case
    Q, _ = np.linalg.qr(rng.standard_normal((m, m)))
    H2, W2 = t * H @ Q.T, s * W @ Q.T
    shift = rng.standard_normal(m)
    for v in ("papyan", "trace_ratio"):
        assert nc1(H2 + shift, y, variant=v) == pytest.approx(nc1(H, y, variant=v), rel=1e-8)
    assert cdnv(H2 + shift, y) == pytest.approx(cdnv(H, y), rel=1e-9)
    M = class_statistics(H, y).means
    for v in ("etf", "zhu", "cosine"):
        assert nc2(t * M @ Q.T, variant=v) == pytest.approx(nc2(M, variant=v), rel=1e-8, abs=1e-12)
    for v in ("duality", "etf", "cosine"):
        assert nc3(W2, H2, y, variant=v) == pytest.approx(nc3(W, H, y, variant=v), rel=1e-8, abs=1e-12)


def test_isotropic_classes_with_etf_means_closed_forms():
    # class k: μ_k ± σ√m e_j (2m samples) ⇒ Σ_W = σ²I exactly; μ_k a simplex of radius r.
    # Review notes §1.10: NC1 = σ²(K−1)²/(K r²), CDNV = mσ²(K−1)/(2K r²).
    K, m, r, sigma = 5, 9, 2.0, 0.3
    rng = np.random.default_rng(0)
    mus = r * simplex_etf(K, m, rng)
    offs = np.concatenate([np.eye(m), -np.eye(m)]) * sigma * np.sqrt(m)
    H = np.concatenate([mu + offs for mu in mus])
    y = np.repeat(np.arange(K), 2 * m)
    assert nc1(H, y) == pytest.approx(sigma**2 * (K - 1) ** 2 / (K * r**2), rel=1e-12)
    assert cdnv(H, y) == pytest.approx(m * sigma**2 * (K - 1) / (2 * K * r**2), rel=1e-12)


def test_invalid_inputs_raise_project_error():
    H = np.zeros((4, 3))
    with pytest.raises(FCTheoryError, match="at least 2 classes present"):
        nc1(H, np.array([2, 2, 2, 2]), K=3)
    with pytest.raises(FCTheoryError, match="length"):
        nc1(H, np.array([0, 1]))
    with pytest.raises(FCTheoryError, match="undefined"):
        nc1(H, np.array([0, 0, 1, 1]))
    with pytest.raises(FCTheoryError, match="variant"):
        nc2(np.eye(3), variant="nope")
    with pytest.raises(FCTheoryError, match="finite"):
        nc1(np.full((4, 3), np.nan), np.array([0, 0, 1, 1]))


@pytest.mark.gpu
def test_cupy_inputs_match_numpy():
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(0)
    K, m = 4, 6
    y = np.repeat(np.arange(K), 5)
    H = rng.standard_normal((20, m)) + rng.standard_normal((K, m))[y]
    W = rng.standard_normal((K, m))
    Hd, Wd = cp.asarray(H), cp.asarray(W)
    assert nc1(Hd, y) == pytest.approx(nc1(H, y), rel=1e-10)
    assert cdnv(Hd, y) == pytest.approx(cdnv(H, y), rel=1e-12)
    assert nc3(Wd, Hd, y) == pytest.approx(nc3(W, H, y), rel=1e-12)
    assert nc4(Wd, Hd, y) == nc4(W, H, y)
    assert nc2(cp.asarray(class_statistics(H, y).means)) == pytest.approx(nc2(class_statistics(H, y).means), rel=1e-10)
    acc = NCAccumulator(K, m, backend="cupy")
    acc.update(Hd[:7], y[:7]).update(Hd[7:], y[7:])
    assert acc.nc1() == pytest.approx(nc1(H, y), rel=1e-10)


# ----------------------------------------------------------------------------- absent classes
def _with_absent(seed=0, K=10, present=(1, 4, 7, 8), d=6):
    """Features of the classes ``present`` of K (60% absent), unbalanced; the classifier has K rows."""
    rng = np.random.default_rng(seed)
    present = np.asarray(present)
    y = np.concatenate([present, rng.choice(present, size=40)])
    H = 3.0 * rng.standard_normal((K, d))[y] + rng.standard_normal((y.size, d)) + 2.0
    W = rng.standard_normal((K, d))
    # the same data with the absent classes removed from K: labels renumbered 0..K_p−1, W's rows of the present
    y_removed = np.searchsorted(present, y)
    return H, y, W, y_removed, W[present], present


ABSENT_CALLS = {
    "nc1": lambda H, y, W, K: nc1(H, y, K=K),
    "nc1_trace_ratio": lambda H, y, W, K: nc1(H, y, K=K, variant="trace_ratio"),
    "nc1_samples": lambda H, y, W, K: nc1(H, y, K=K, global_mean="samples"),
    "cdnv": lambda H, y, W, K: cdnv(H, y, K=K),
    "cdnv_cv": lambda H, y, W, K: cdnv(H, y, K=K, reduction="cv", ddof=1),
    "cdnv_matrix": lambda H, y, W, K: cdnv(H, y, K=K, matrix=True),
    "nc3": lambda H, y, W, K: nc3(W, H, y, K=K),
    "nc3_etf": lambda H, y, W, K: nc3(W, H, y, K=K, variant="etf"),
    "nc3_cosine": lambda H, y, W, K: nc3(W, H, y, K=K, variant="cosine"),
    "uniform_duality": lambda H, y, W, K: uniform_duality(W, H, y, K=K),
    "nc2_means": lambda H, y, W, K: nc2(class_statistics(H, y, K=K).means),
    "statistics": lambda H, y, W, K: _stat_arrays(class_statistics(H, y, K=K)),
    "from_statistics": lambda H, y, W, K: (
        [f(class_statistics(H, y, K=K)) for f in (nc1_from_statistics, cdnv_from_statistics)]
        + [nc3_from_statistics(W, class_statistics(H, y, K=K))]
    ),
    "summary": lambda H, y, W, K: list(nc_summary(class_statistics(H, y, K=K), W).values()),
}


def _stat_arrays(st):
    return [st.means, st.global_mean, st.counts, st.sigma_W, st.sigma_B, st.class_var]


def _same(a, b):
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for u, v in zip(a, b):
            _same(u, v)
        return
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=1e-14, atol=0)


@pytest.mark.parametrize("name", sorted(ABSENT_CALLS))
def test_an_absent_class_changes_nothing_every_metric_is_that_of_the_present_classes(name):
    # 6 of K = 10 classes absent: every metric (and the statistics) equals that of the same data with the absent
    # classes removed from K (labels renumbered, W's rows of the present classes): they have no mean, no
    # variance, and their rows of W are not compared with anything
    H, y, W, y_removed, W_removed, _ = _with_absent()
    got = ABSENT_CALLS[name](H, y, W, 10)
    want = ABSENT_CALLS[name](H, y_removed, W_removed, 4)
    _same(got, want)
    flat = got if isinstance(got, list) else [got]
    assert all(np.all(np.isfinite(np.asarray(v, dtype=float))) for v in flat)


def test_statistics_with_absent_classes_name_the_present_ones():
    H, y, W, y_removed, _, present = _with_absent()
    st = class_statistics(H, y, K=10)
    assert st.K == 4 and st.num_classes == 10 and st.absent == 6 and st.classes.tolist() == present.tolist()
    assert st.counts.tolist() == [int((y == c).sum()) for c in present]
    full = class_statistics(H, y_removed)
    assert full.num_classes == full.K == 4 and full.absent == 0 and full.classes.tolist() == [0, 1, 2, 3]
    # K defaults to max(y) + 1: classes 0, 2, 3, 5, 6 (below the largest label 8) absent
    assert class_statistics(H, y).num_classes == 9


def test_nc4_decides_among_all_K_classes_the_one_metric_that_depends_on_the_absent_ones():
    H, y, W, y_removed, W_removed, present = _with_absent()
    absent = np.setdiff1d(np.arange(10), present)
    # absent rows that never win: NC4 is that of the present classes alone
    W_quiet = W.copy()
    W_quiet[absent] = -100.0 * np.abs(H).max() * np.sign(H.mean(axis=0))
    b = np.zeros(10)
    b[absent] = -1e6
    assert nc4(W, H, y, b=b, K=10) == nc4(W_removed, H, y_removed)
    assert nc4(W, H, y, b=b, K=10, average="classes") == nc4(W_removed, H, y_removed, average="classes")
    # an absent class whose row wins every decision: the classifier never agrees with a present class's mean
    b_loud = np.zeros(10)
    b_loud[absent[0]] = 1e6
    assert nc4(W, H, y, b=b_loud, K=10) == 1.0
