"""The pair metrics in tiles of class pairs (fctheory.metrics.pairs) against the K×K reference path.

Every public function that switches to tiles from ``pairs.LARGE_K`` classes on is run twice on the same input:
once with the threshold lowered below K (and tiles of 64 classes, so that edge tiles, diagonal tiles and tiles
above the diagonal all occur), once on the K×K path; the two agree to 1e-10 relative (they differ only in the
order of the float64 sums, and in the exact recomputation of close pairs). Close pairs, the frame distances'
expansion, the budget, and the sampled estimates are checked against independent oracles (long double sums,
exact differences).
"""

import math

import numpy as np
import pytest

import fctheory as fc
from fctheory import FCTheoryError, metrics
from fctheory.metrics import pairs

RTOL = 1e-10


@pytest.fixture
def tiled(monkeypatch):
    """Tiles from 2 classes on, 64 classes per tile side."""
    monkeypatch.setattr(pairs, "LARGE_K", 2)
    monkeypatch.setattr(pairs, "TILE", 64)


def _dense(fn, *args, **kw):
    """fn on the K×K path (the threshold above any K of these tests)."""
    saved = pairs.LARGE_K
    pairs.LARGE_K = 10**9
    try:
        return fn(*args, **kw)
    finally:
        pairs.LARGE_K = saved


def _features(K=150, d=12, n=3, seed=0, offset=5.0):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(K), n)
    H = 3.0 * rng.normal(size=(K, d))[y] + rng.normal(size=(K * n, d)) + offset
    return H, y


def test_every_tiled_metric_equals_the_K_by_K_path(tiled):
    H, y = _features()
    M = metrics.class_statistics(H, y).means
    W = np.random.default_rng(1).normal(size=M.shape)
    cases = [(metrics.nc2, (M,), dict(variant=v)) for v in ("etf", "identity", "zhu", "cosine")]
    cases += [(metrics.nc2, (M,), dict(center=False))]
    cases += [
        (metrics.equiangularity, (M,), dict(variant=v)) for v in ("max_angle", "std", "shifted_mean", "shifted_cv")
    ]
    cases += [(metrics.cdnv, (H, y), dict(reduction=r, dist_exp=p)) for r in ("mean", "cv") for p in (1.0, 1.7)]
    cases += [(metrics.cdnv, (H, y), dict(ddof=1))]
    cases += [(metrics.nc3, (W, H, y), dict(variant="etf"))]
    cases += [(metrics.nc4, (W, H, y), {})]
    for fn, args, kw in cases:
        got, ref = fn(*args, **kw), _dense(fn, *args, **kw)
        assert got == pytest.approx(ref, rel=RTOL, abs=1e-15), (fn.__name__, kw, got, ref)


def test_nc_summary_in_tiles_equals_the_K_by_K_path_entry_by_entry(tiled):
    H, y = _features(K=130, d=9)
    st = metrics.class_statistics(H, y)
    W = np.random.default_rng(2).normal(size=(st.K, st.d))
    got, ref = metrics.nc_summary(st, W), _dense(metrics.nc_summary, st, W)
    assert list(got) == list(ref)
    for key in ref:
        assert got[key] == pytest.approx(ref[key], rel=RTOL), key
    # the same through nc_summary_from_moments and nc_summary_and_frames
    summary, frames = metrics.nc.nc_summary_and_frames(st, W)
    assert summary == got and frames["means"].nc2 == got["nc2"] and frames["W"].nc2 == got["nc2_W"]


def test_a_tiled_pass_reads_every_pair_once():
    # sums of a known function of the pairs: with rows e_k (orthonormal), every cosine is 0 and every squared
    # distance 2, whatever the tiling; T = 7 does not divide K = 30
    K = 30
    A = np.eye(K)
    s = pairs.pair_sums(A, var=np.ones(K), want=("cdnv", "cos", "frame"), tile=7)
    P = K * (K - 1) / 2
    assert s["cdnv_sum"] == pytest.approx(P * 2 / 4, rel=1e-15)  # V = (1 + 1)/(2·2)
    assert s["cos_sum"] == 0.0 and s["cos_abs"] == pytest.approx(P / (K - 1), rel=1e-15)
    assert s["gram_sq"] == K and s["frame"] == K and s["recomputed"] == 0


def test_close_pairs_are_recomputed_from_the_exact_differences():
    # two classes 1e-7 apart far from the origin: ‖a‖² + ‖b‖² − 2⟨a, b⟩ loses ~14 digits to cancellation
    rng = np.random.default_rng(3)
    K, d = 40, 16
    M = rng.normal(size=(K, d))
    M[1] = M[0] + 1e-7 * rng.normal(size=d)
    var = rng.random(K)
    mean, x = pairs.cdnv_tiled(M, var)
    # oracle: every pair from its exact differences, in long double
    Ml, vl = M.astype(np.longdouble), var.astype(np.longdouble)
    i, j = np.triu_indices(K, 1)
    exact = float(np.mean((vl[i] + vl[j]) / (2 * ((Ml[i] - Ml[j]) ** 2).sum(axis=1))))
    assert x == 0.0 and mean == pytest.approx(exact, rel=1e-10)
    s = pairs.pair_sums(M - M.mean(axis=0), var=var, want=("cdnv",))
    assert s["recomputed"] >= 1
    # without the recomputation the expansion would be far off (the check above can fail)
    Mc = M - M.mean(axis=0)
    sq = (Mc * Mc).sum(axis=1)
    naive = sq[i] + sq[j] - 2 * (Mc @ Mc.T)[i, j]
    assert abs(float(np.mean((var[i] + var[j]) / (2 * naive))) / exact - 1) > 1e-8


def test_coinciding_means_are_refused_in_tiles(tiled):
    H, y = _features(K=20)
    H[y == 1] = H[y == 0]
    with pytest.raises(FCTheoryError, match="CDNV is undefined when class means coincide"):
        metrics.cdnv(H, y)


def test_the_budget_counts_the_tiled_work(tiled):
    M = np.random.default_rng(6).normal(size=(200, 10))
    with fc.budget(max_seconds=1e-9), pytest.raises(FCTheoryError) as err:
        metrics.nc2(M)
    assert "nc2 (tiles of class pairs) needs about" in str(err.value) and "max_seconds" in str(err.value)
    with fc.budget(max_bytes=1000), pytest.raises(FCTheoryError, match="tiles of class pairs"):
        metrics.equiangularity(M)
    # the K×K path is sized in bytes of its matrices, the tiled one does not refuse what fits its tiles
    with fc.budget(max_bytes=4 * 8 * 200**2 - 1):
        metrics.nc2(M)
        with pytest.raises(FCTheoryError, match="K x K Gram matrices"):
            _dense(metrics.nc2, M)


def test_sampled_estimates_are_within_their_stated_errors():
    H, y = _features(K=300, d=8, n=2, seed=7)
    st = metrics.class_statistics(H, y)
    exact_cdnv = metrics.cdnv(H, y)
    est, half = pairs.cdnv_sample(st.means, st.class_var, pairs=20000, seed=1)
    assert abs(est - exact_cdnv) <= half and half < 0.1 * exact_cdnv
    M = st.means - st.means.mean(axis=0)
    exact = metrics.equiangularity(st.means)
    est, half = pairs.cos_abs_sample(M, pairs=20000, seed=1, delta=1e-6)
    assert abs(est - exact) <= half
    assert half == pytest.approx((1 + 1 / 299) * math.sqrt(math.log(2e6) / 40000))


def test_tensors_take_the_same_tiled_path(tiled):
    torch = pytest.importorskip("torch", reason="needs torch: pip install 'fctheory[torch]'")
    H, y = _features(K=120, d=6)
    st = metrics.class_statistics(H, y)
    W = np.random.default_rng(8).normal(size=(st.K, st.d))
    Ht, yt, Mt, Wt = torch.tensor(H), torch.tensor(y), torch.tensor(st.means), torch.tensor(W)
    assert metrics.nc2(Mt) == pytest.approx(metrics.nc2(st.means), rel=1e-12)
    assert metrics.equiangularity(Mt) == pytest.approx(metrics.equiangularity(st.means), rel=1e-12)
    assert metrics.cdnv(Ht, yt) == pytest.approx(metrics.cdnv(H, y), rel=1e-12)
    assert metrics.nc3(Wt, Ht, yt, variant="etf") == pytest.approx(metrics.nc3(W, H, y, variant="etf"), rel=1e-12)
    got, ref = metrics.nc_summary(metrics.class_statistics(Ht, yt), Wt), metrics.nc_summary(st, W)
    for key in ref:
        assert got[key] == pytest.approx(ref[key], rel=1e-10), key
