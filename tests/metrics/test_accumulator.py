"""NCAccumulator (fctheory/metrics/accumulator.py): one pass over batches gives the class statistics of the
whole set — sized against the budget to the byte, exact for nearly collapsed classes whatever the batching,
equal to the in-memory statistics and metrics."""

import math

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
    nc1,
    nc1_from_statistics,
    nc2,
    nc3,
    nc3_from_statistics,
    nc4,
)

from .test_nc import random_data
from .test_variability import DATA, RTOL


@pytest.mark.parametrize("full", [True, False])
def test_accumulator_is_sized_against_the_budget_to_the_byte(full):
    # 8 bytes per float: K·d means, K·d references, K counts and K traces, and K·d² scatters when kept
    import fctheory as fc

    K, d = 3, 5
    need = 8 * (2 * K * d + 2 * K + (K * d * d if full else 0))
    with fc.budget(max_bytes=need):
        NCAccumulator(K, d, full_scatter=full)
    name, value = ("d", d) if full else ("K", K)
    what = "means and references" + (" and K\\*d\\*d scatters" if full else "")
    with fc.budget(max_bytes=need - 1):
        with pytest.raises(FCTheoryError, match=f"^{name}={value} .*NCAccumulator \\(2\\*K\\*d {what}\\) needs about"):
            NCAccumulator(K, d, full_scatter=full)


@pytest.mark.parametrize("batch", [200, 37, 7])
def test_accumulator_of_nearly_collapsed_classes_keeps_sigma_W_to_the_last_digits_whatever_the_batching(batch):
    # classes 1e-6 wide around means of size ~3: a batch's mean has an absolute rounding error ~1e-16, which is
    # 1e-10 of the deviations unless each class is accumulated relative to one of its samples. Oracle: Σ_W in
    # 40-digit arithmetic from the definition; the rows are also fed in a shuffled order (another summation order,
    # as a GPU's reductions take)
    import mpmath

    rng = np.random.default_rng(3)
    K, d = 4, 5
    y = np.repeat(np.arange(K), 30)
    rng.shuffle(y)
    H = 3.0 * rng.standard_normal((K, d))[y] + 1e-6 * rng.standard_normal((y.size, d))
    with mpmath.workdps(40):
        Hm = mpmath.matrix(H.tolist())
        mu = [
            [mpmath.fsum(Hm[i, j] for i in np.nonzero(y == k)[0]) / int((y == k).sum()) for j in range(d)]
            for k in range(K)
        ]
        dev = [[Hm[i, j] - mu[y[i]][j] for j in range(d)] for i in range(y.size)]
        ref = np.array([[float(mpmath.fsum(r[a] * r[b] for r in dev) / y.size) for b in range(d)] for a in range(d)])
    for order in (np.arange(y.size), rng.permutation(y.size)):
        acc = NCAccumulator(K, d)
        for i in range(0, y.size, batch):
            acc.update(H[order][i : i + batch], y[order][i : i + batch])
        assert np.max(np.abs(acc.statistics().sigma_W - ref)) <= 1e-14 * np.max(np.abs(ref))


@settings(max_examples=25)
@given(random_data(), st.integers(1, 7))
def test_streaming_accumulator_equals_in_memory(case, batch):
    K, m, H, y, W, rng = case
    acc = NCAccumulator(K, m)
    lite = NCAccumulator(K, m, full_scatter=False)
    for i in range(0, len(y), batch):
        acc.update(H[i : i + batch], y[i : i + batch])
        lite.update(H[i : i + batch], y[i : i + batch])
    ref = class_statistics(H, y)
    stt = acc.statistics()
    np.testing.assert_allclose(stt.means, ref.means, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(stt.sigma_W, ref.sigma_W, rtol=1e-12, atol=1e-12)
    assert acc.nc1() == pytest.approx(nc1(H, y), rel=1e-10)
    assert acc.nc1(variant="trace_ratio") == pytest.approx(nc1(H, y, variant="trace_ratio"), rel=1e-12)
    assert lite.nc1(variant="trace_ratio") == pytest.approx(nc1(H, y, variant="trace_ratio"), rel=1e-12)
    assert acc.cdnv() == pytest.approx(cdnv(H, y), rel=1e-12)
    assert lite.cdnv() == pytest.approx(cdnv(H, y), rel=1e-12)
    assert acc.nc2() == pytest.approx(nc2(ref.means), rel=1e-10, abs=1e-13)
    assert acc.nc3(W) == pytest.approx(nc3(W, H, y), rel=1e-12)
    # NC4 is additive over batches once the means are known
    dis = sum(
        nc4(W, H[i : i + batch], y[i : i + batch], means=stt.means) * len(y[i : i + batch])
        for i in range(0, len(y), batch)
    )
    assert dis / len(y) == pytest.approx(nc4(W, H, y), abs=1e-15)


def test_accumulated_statistics_give_the_accumulators_metrics():
    H, y, W = DATA[0]
    acc = NCAccumulator(K=4, d=9)
    for i in range(0, y.size, 5):
        acc.update(H[i : i + 5], y[i : i + 5])
    st = acc.statistics()
    assert math.isclose(nc1_from_statistics(st), acc.nc1(), rel_tol=RTOL)
    assert math.isclose(cdnv_from_statistics(st), acc.cdnv(), rel_tol=RTOL)
    assert math.isclose(nc3_from_statistics(W, st), acc.nc3(W), rel_tol=RTOL)


def test_classes_not_yet_seen_are_left_out_of_every_metric():
    # an accumulator of K = 10 fed 4 classes: its statistics and metrics are those of the 4 (one-pass = two-pass)
    rng = np.random.default_rng(3)
    present = np.array([0, 3, 4, 9])
    y = np.concatenate([present, rng.choice(present, 30)])
    H = 2.0 * rng.standard_normal((10, 5))[y] + rng.standard_normal((y.size, 5))
    W = rng.standard_normal((10, 5))
    acc = NCAccumulator(10, 5)
    for i in range(0, y.size, 7):
        acc.update(H[i : i + 7], y[i : i + 7])
    yr = np.searchsorted(present, y)
    st = acc.statistics()
    assert st.classes.tolist() == present.tolist() and st.num_classes == 10
    np.testing.assert_allclose(st.means, class_statistics(H, yr).means, rtol=1e-12)
    assert acc.nc1() == pytest.approx(nc1(H, yr), rel=1e-10)
    assert acc.cdnv() == pytest.approx(cdnv(H, yr), rel=1e-10)
    assert acc.nc2() == pytest.approx(nc2(class_statistics(H, yr).means), rel=1e-10)
    assert acc.nc3(W) == pytest.approx(nc3(W[present], H, yr), rel=1e-10)
    trace_only = NCAccumulator(10, 5, full_scatter=False)
    trace_only.update(H, y)
    assert trace_only.nc1(variant="trace_ratio") == pytest.approx(nc1(H, yr, variant="trace_ratio"), rel=1e-10)
    one = NCAccumulator(10, 5)
    one.update(H[y == 3], y[y == 3])
    with pytest.raises(FCTheoryError, match="at least 2 classes present"):
        one.nc1()
