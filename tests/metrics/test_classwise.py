"""Per-class values (fctheory.metrics.classwise): each against a direct computation from the samples, their
averages against the summary metrics (the decompositions the module states), scale invariance, absent classes,
coinciding means."""

import math

import numpy as np
import pytest

from fctheory import FCTheoryError
from fctheory.metrics import ClassStatistics, class_statistics, nc_summary, per_class
from fctheory.metrics.classwise import COLUMNS


def _data(seed=0, K=7, d=5, n_max=20):
    rng = np.random.default_rng(seed)
    y = np.concatenate([np.arange(K), rng.integers(0, K, int(rng.integers(K, n_max * K)))])
    H = 3.0 * rng.standard_normal((K, d))[y] + rng.standard_normal((y.size, d)) + 4.0
    return H, y, rng.standard_normal((K, d))


def _direct(H, y, W):
    """Every per-class value from its definition, in long double, one class at a time."""
    Hl, Wl = H.astype(np.longdouble), W.astype(np.longdouble)
    K = int(y.max()) + 1
    mu = np.stack([Hl[y == k].mean(axis=0) for k in range(K)])
    var = np.array([((Hl[y == k] - mu[k]) ** 2).sum() / (y == k).sum() for k in range(K)])
    mc = mu - mu.mean(axis=0)
    trB = (mc**2).sum() / K
    d2 = ((mu[:, None, :] - mu[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(d2, np.inf)
    V = (var[:, None] + var[None, :]) / (2 * d2)
    wn = np.sqrt((Wl**2).sum(1))
    cn = np.sqrt((mc**2).sum(1))
    return dict(
        var=var,
        var_rel=var / trB,
        cdnv=V.sum(1) / (K - 1),
        mean_norm=np.sqrt((mu**2).sum(1)),
        centred_norm=cn,
        w_norm=wn,
        w_cos=(Wl * mc).sum(1) / (wn * cn),
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_value_equals_its_definition(seed):
    H, y, W = _data(seed)
    pc = per_class(class_statistics(H, y), W)
    want = _direct(H, y, W)
    n = np.bincount(y)
    assert pc.classes.tolist() == list(range(n.size)) and pc.counts.tolist() == n.tolist()
    np.testing.assert_allclose(pc.frequency, n / n.sum(), rtol=1e-15)
    for key, ref in want.items():
        np.testing.assert_allclose(getattr(pc, key), ref.astype(float), rtol=1e-11, err_msg=key)


@pytest.mark.parametrize("seed", [0, 3])
def test_the_averages_are_the_summary_metrics(seed):
    H, y, W = _data(seed, K=9, d=4)
    st = class_statistics(H, y)
    pc, s = per_class(st, W), nc_summary(st, W)
    assert (pc.frequency * pc.var_rel).sum() == pytest.approx(s["nc1_trace_ratio"], rel=1e-13)
    assert pc.cdnv.mean() == pytest.approx(s["cdnv"], rel=1e-13)
    assert pc.centred_norm.mean() == pytest.approx(s["mean_norm_means"], rel=1e-13)
    assert pc.centred_norm.std() / pc.centred_norm.mean() == pytest.approx(s["equinorm_means"], rel=1e-12)


@pytest.mark.parametrize("e", [-400, 400])
def test_scale_free_values_do_not_change_and_norms_scale_exactly(e):
    H, y, W = _data(4)
    ref = per_class(class_statistics(H, y), W)
    got = per_class(class_statistics(np.ldexp(H, e), y), np.ldexp(W, -e))
    for key in ("var_rel", "cdnv", "w_cos"):
        np.testing.assert_allclose(getattr(got, key), getattr(ref, key), rtol=1e-13, err_msg=key)
    for key, f in (("mean_norm", e), ("centred_norm", e), ("var", 2 * e), ("w_norm", -e)):
        np.testing.assert_allclose(getattr(got, key), np.ldexp(getattr(ref, key), f), rtol=1e-13, err_msg=key)


def test_norms_that_overflow_are_refused_naming_st():
    # class means of entries near the float64 limit: their norms (√5·1e308) are not representable
    rng = np.random.default_rng(5)
    means = rng.uniform(0.5, 1.0, size=(4, 5)) * 1e308
    st = ClassStatistics(means, means[0], np.full(4, 3), np.eye(5), np.eye(5), np.ones(4))
    with pytest.raises(FCTheoryError, match=r"^st=.*norms overflow"):
        per_class(st)


def test_absent_classes_give_the_values_of_the_present_ones_under_their_labels():
    H, y, W = _data(6, K=4)
    present = np.array([2, 5, 6, 9])  # K = 10, 6 classes absent
    yl = present[y]
    Wl = np.random.default_rng(0).standard_normal((10, W.shape[1]))
    Wl[present] = W
    got = per_class(class_statistics(H, yl, K=10), Wl)
    ref = per_class(class_statistics(H, y), W)
    assert got.classes.tolist() == present.tolist()
    for key in COLUMNS[1:]:
        field = "counts" if key == "count" else key
        np.testing.assert_allclose(getattr(got, field), getattr(ref, field), rtol=1e-14, err_msg=key)


def test_coinciding_means_leave_their_cdnv_undefined_and_nothing_else():
    H, y, W = _data(7, K=5)
    st = class_statistics(H, y)
    means = st.means.copy()
    means[1] = means[0]  # class 1's mean exactly on class 0's
    st = ClassStatistics(means, means.mean(axis=0), st.counts, st.sigma_W, st.sigma_B, st.class_var)
    pc = per_class(st, W)
    assert np.isnan(pc.cdnv[[0, 1]]).all() and np.isfinite(pc.cdnv[2:]).all()
    assert np.isfinite(pc.var_rel).all() and np.isfinite(pc.w_cos).all()
    # every mean the same: nothing is relative to a spread of the means
    same = np.tile(means[2], (5, 1))
    pc = per_class(ClassStatistics(same, same[0], st.counts, st.sigma_W, st.sigma_B, st.class_var))
    assert np.isnan(pc.var_rel).all() and np.isnan(pc.cdnv).all() and pc.w_norm is None


def test_the_table_has_one_row_per_class_and_the_documented_columns():
    pytest.importorskip("pandas")
    H, y, W = _data(8)
    df = per_class(class_statistics(H, y), W).to_frame()
    assert list(df.columns) == list(COLUMNS) and len(df) == 7
    assert list(per_class(class_statistics(H, y)).to_frame().columns) == list(COLUMNS[:-2])
    assert math.isclose(df["frequency"].sum(), 1.0, rel_tol=1e-15)
