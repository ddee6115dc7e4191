"""fctheory.nc_diagnosis.statistics at the edges of float64: huge and tiny features and classifiers, extreme
regularisation. Exact power-of-two rescaling is the oracle: scaling the inputs by 2^k scales every moment,
Gram and norm by an exact power of two, so the results must follow bit for bit (or to rounding where a
square root or a ratio intervenes); what cannot be represented is refused with FCTheoryError."""

import math

import numpy as np
import pytest

from fctheory import FCTheoryError, ufm
from fctheory.nc_diagnosis import diagnose_features, feature_statistics, nc_metrics, statistics_from_moments
from fctheory.nc_diagnosis import ufm_distances

K, D, N_PER = 3, 4, 5
LAM_W, LAM_H = 5e-3, 1e-2


def _data(seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(K), N_PER)
    H = 3.0 * rng.standard_normal((K, D))[y] + 0.3 * rng.standard_normal((K * N_PER, D))
    return H, y, rng.standard_normal((K, D)), rng.standard_normal(K)


def _moments(H, y):
    shift = H[np.searchsorted(y, np.arange(K))]
    dev = H - shift[y]
    sums = np.stack([dev[y == k].sum(axis=0) for k in range(K)])
    sq = np.array([np.sum(dev[y == k] ** 2) for k in range(K)])
    return np.bincount(y, minlength=K), sums, dev.T @ dev, sq, shift


def test_a_scatter_near_the_float64_limit_gives_the_covariance_exactly():
    """Entries in [2^1023, 2^1024): symmetrising S + Sᵀ would overflow; halves first give S/N exactly."""
    H, y, _, _ = _data()
    counts, _, scatter, _, shift = _moments(H, y)
    big = np.ldexp(scatter, 1024 - math.frexp(np.max(np.abs(scatter)))[1])  # max entry in [2^1023, 2^1024)
    assert np.max(np.abs(big)) >= 2.0**1023 and np.array_equal(big, big.T)
    # zero shifted sums: the class means are the shifts and the within-class scatter is S itself
    st = statistics_from_moments(counts, np.zeros((K, D)), big, np.ones(K), shift)
    assert np.array_equal(st.sigma_W, big / counts.sum())
    assert np.array_equal(st.means, shift)


def test_moments_whose_statistics_overflow_are_refused_naming_sums():
    H, y, _, _ = _data()
    counts, sums, scatter, sq, shift = _moments(H, y)
    msg = (
        rf"^sums='array of shape \({sums.shape[0]}, {sums.shape[1]}\)' is invalid: Σ_W overflows float64 at this scale"
    )
    with pytest.raises(FCTheoryError, match=msg):
        statistics_from_moments(counts, sums * 1e300, scatter, sq, shift)


def test_cosines_of_a_tiny_classifier_equal_those_of_the_classifier():
    """Cosines are scale free: W·2^-1000 (whose squares underflow to 0) gives the same mean cosine."""
    H, y, W, _ = _data()
    st = feature_statistics(H, y)
    ref = nc_metrics(st, W)["mean_cos_W"]
    assert nc_metrics(st, np.ldexp(W, -1000))["mean_cos_W"] == pytest.approx(ref, rel=1e-15, abs=1e-15)


def test_tiny_features_keep_their_class_mean_cosines():
    H, y, W, b = _data()
    ref = diagnose_features(H, y, W, b, lam_W=LAM_W, lam_H=LAM_H).metrics["mean_cos_means"]
    tiny = diagnose_features(np.ldexp(H, -1000), y, W, b, lam_W=LAM_W, lam_H=LAM_H).metrics["mean_cos_means"]
    assert tiny == pytest.approx(ref, rel=1e-15, abs=1e-15)


@pytest.mark.parametrize("name", ["W", "b"])
def test_a_layer_whose_squared_norm_overflows_is_refused_naming_it(name):
    H, y, W, b = _data()
    st = feature_statistics(H, y)
    opt = ufm.ce(K=K, n_spl=N_PER, lam_W=LAM_W, lam_H=LAM_H, bias=True)
    args = {"W": W, "b": b, name: (W if name == "W" else b) * 1e300}
    with pytest.raises(FCTheoryError, match=rf"\b{name}\b"):
        ufm_distances(st, args["W"], args["b"], opt, n_spl=N_PER)
    if name == "W":
        with pytest.raises(FCTheoryError, match=r"\bW\b"):
            nc_metrics(st, args["W"])


def test_features_whose_squared_norm_overflows_are_refused_naming_H():
    H, y, W, b = _data()
    for huge in (H * 1e300, np.full_like(H, 1e308)):
        with pytest.raises(FCTheoryError, match=r"\bH\b"):
            diagnose_features(huge, y, W, b, lam_W=LAM_W, lam_H=LAM_H)


def test_the_gram_distance_to_a_huge_optimum_is_the_rescaled_relative_distance():
    """lam_W = 5e-324: the optimum's Gram entries are ~1e160, whose squares overflow a plain norm."""
    H, y, W, _ = _data()
    st = feature_statistics(H, y)
    opt = ufm.ce(K=K, n_spl=N_PER, lam_W=5e-324, lam_H=LAM_H, bias=False)
    e = math.frexp(np.max(np.abs(opt.W_gram)))[1]
    G, Gs = np.ldexp(W @ W.T, -e), np.ldexp(opt.W_gram, -e)  # the relative distance is scale free
    oracle = np.linalg.norm(G - Gs) / np.linalg.norm(Gs)
    got = ufm_distances(st, W, None, opt, n_spl=N_PER)["dist_W_gram"]
    assert math.isfinite(got) and got == pytest.approx(oracle, rel=1e-14)


def test_h_over_w_of_a_tiny_classifier_scales_exactly():
    H, y, W, _ = _data()
    st = feature_statistics(H, y)
    opt = ufm.ce(K=K, n_spl=N_PER, lam_W=LAM_W, lam_H=LAM_H, bias=False)
    ref = ufm_distances(st, W, None, opt, n_spl=N_PER)["h_over_w"]
    tiny = ufm_distances(st, np.ldexp(W, -1000), None, opt, n_spl=N_PER)["h_over_w"]
    assert tiny == pytest.approx(ref * 2.0**1000, rel=1e-15)


def test_an_astronomical_n_spl_is_refused_naming_it():
    H, y, W, _ = _data()
    opt = ufm.ce(K=K, n_spl=N_PER, lam_W=LAM_W, lam_H=LAM_H, bias=False)
    with pytest.raises(FCTheoryError, match="n_spl"):
        ufm_distances(feature_statistics(H, y), W, None, opt, n_spl=10**400)


@pytest.mark.parametrize("k", [0, 1, 6])
def test_a_layer_is_refused_exactly_when_its_squared_norm_exceeds_the_float64_range(k):
    """W with all K·D entries equal to a, K·D·a² a factor 1 ± 2^-20 around the largest float64 (and 2^-k
    below: an entry exponent short of the bound, where the check needs only max|W| and the size)."""
    H, y, _, _ = _data()
    st = feature_statistics(H, y)
    edge = math.sqrt(np.finfo(np.float64).max / (K * D))
    for factor, refused in ((1 + 2.0**-20, k == 0), (1 - 2.0**-20, False)):
        W = np.full((K, D), math.ldexp(edge * factor, -k))
        if refused:
            with pytest.raises(FCTheoryError, match=r"\bW\b"):
                nc_metrics(st, W)
        else:
            assert math.isfinite(nc_metrics(st, W)["W_norm_sq"])
