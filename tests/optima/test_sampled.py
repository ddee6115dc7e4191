"""fctheory.optima.sampled: the population optimum estimated from the certified optima of fresh samples."""

import numpy as np
import pytest

import fctheory as fc
from fctheory.optima import optimum, sample_average_optimum

ZIPF, LAM = fc.Task.random(3, 2, 2, 4, seed=0, mu="zipf"), 0.02


@pytest.fixture(scope="module")
def exact():
    """The certified optimum by enumeration: the independent oracle of the estimates."""
    res = optimum(ZIPF, lam=LAM, symmetry=False)
    assert res.certified
    return res


@pytest.fixture(scope="module")
def saa():
    return sample_average_optimum(ZIPF, lam=LAM, n_spl=100, replicates=4, seed=3)


def test_every_replicate_is_certified_and_the_standard_errors_are_stated(saa):
    assert saa.certified and saa.replicates == 4 and saa.rel_gaps.shape == (4,) and np.all(saa.rel_gaps <= 1e-8)
    assert saa.w_norms.shape == (ZIPF.n_w,) and np.all(saa.w_norms_se > 0)
    assert saa.u_norms.shape == (ZIPF.K, ZIPF.L) and np.all(np.isfinite(saa.u_norms_se))


def test_the_estimates_agree_with_the_enumerated_optimum_within_their_errors(saa, exact):
    w = np.linalg.norm(exact.W, axis=0)
    z = np.abs(saa.w_norms - w) / saa.w_norms_se
    assert np.max(z) < 5.0  # five standard errors (4 replicates: t with 3 dof)
    assert np.max(np.abs(saa.w_norms - w) / w) <= saa.error
    assert abs(saa.tau - np.sum(w * w)) < 5 * saa.tau_se


def test_min_r_is_bracketed_by_the_lower_and_upper_estimates(saa, exact):
    """E[min of a sample's objective] ≤ min R ≤ R of any fixed point: the estimates, two standard errors out."""
    assert saa.R_lower - 3 * saa.R_lower_se <= exact.R <= saa.R_upper + 3 * saa.R_upper_se
    assert saa.R_lower <= saa.R_upper + 3 * (saa.R_lower_se + saa.R_upper_se)


def test_more_sentences_per_class_give_a_closer_estimate(exact):
    w = np.linalg.norm(exact.W, axis=0)
    errs = [
        np.mean(np.abs(sample_average_optimum(ZIPF, lam=LAM, n_spl=n, replicates=3, seed=5).w_norms - w) / w)
        for n in (4, 400)
    ]
    assert errs[1] < errs[0] / 3  # the error shrinks like 1/sqrt(n): a factor 10 here, asked only 3


def test_a_balanced_factorisation_of_the_average_optimum_is_returned(saa):
    X = fc.U_hat(saa.U, L=ZIPF.L).T @ saa.W
    s = np.linalg.svd(X, compute_uv=False)
    assert np.sum(saa.W**2) == pytest.approx(s.sum(), rel=1e-10)


@pytest.mark.parametrize("kwargs,match", [(dict(replicates=1), "replicates"), (dict(n_spl=0), "n_spl")])
def test_bad_input_is_refused(kwargs, match):
    with pytest.raises(fc.FCTheoryError, match=match):
        sample_average_optimum(ZIPF, lam=LAM, **{"n_spl": 10, **kwargs})
