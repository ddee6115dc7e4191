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
    class_statistics,
    equiangularity,
    equinorm,
    nc1,
    nc2,
    nc3,
    nc4,
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
    with pytest.raises(FCTheoryError, match="class 1 is empty"):
        nc1(H, np.array([0, 0, 2, 2]))
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
