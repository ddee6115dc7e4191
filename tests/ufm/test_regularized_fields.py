"""Every field of the regularised UFM closed forms (``ce``, ``mse``) away from the threshold: the
result's labels, the extras, the trivial branch, the far-from-threshold logit gap against mpmath, the
λ products beyond the float64 range, and the refusals naming the λ whose norm overflows."""

import math

import mpmath
import numpy as np
import pytest

from fctheory.ufm.gram import FrameGram

from fctheory import FCTheoryError
from fctheory.ufm import regularized

CE_CONDITIONS = "d >= K-1; threshold K*sqrt(n_spl*lam_W*lam_H) = 1 (trivial solution at and above it)"


@pytest.mark.parametrize("bias", [False, True])
def test_ce_labels_and_extras(bias):
    K, n, lw, lh = 3, 2, 0.1, 0.2
    o = regularized.ce(K=K, n_spl=n, lam_W=lw, lam_H=lh, bias=bias)
    assert o.model == ("ce+bias" if bias else "ce")
    assert o.bias is None if not bias else np.array_equal(o.bias, np.zeros(K))
    assert o.threshold == 1.0 and o.closed_form is True and o.trivial is False
    assert o.conditions == CE_CONDITIONS and o.source.startswith("Zhu et al. 2021 Thm 3.1")
    q = math.sqrt(n * lw * lh)
    assert set(o.extras) == {"q", "Kq", "log_q", "logit_gap", "rho", "h_over_w", "log_h_over_w"}
    assert o.extras["q"] == pytest.approx(q, rel=1e-15) and o.extras["Kq"] == pytest.approx(K * q, rel=1e-15)
    assert o.extras["log_q"] == pytest.approx(math.log(q), rel=1e-15)
    assert o.extras["h_over_w"] == pytest.approx(math.sqrt(lw / (n * lh)), rel=1e-15)
    assert o.extras["log_h_over_w"] == pytest.approx(0.5 * math.log(lw / (n * lh)), rel=1e-15)


@pytest.mark.parametrize("bias", [False, True])
def test_mse_labels_and_extras(bias):
    K, n, lw, lh = 3, 2, 0.1, 0.2
    o = regularized.mse(K=K, n_spl=n, lam_W=lw, lam_H=lh, bias=bias)
    assert o.model == ("mse+bias" if bias else "mse")
    if bias:
        np.testing.assert_array_equal(o.bias, np.full(K, 1.0 / K))
    else:
        assert o.bias is None
    assert o.threshold == 1.0 and o.closed_form is True
    assert o.conditions == ("d >= K-1" if bias else "d >= K") + "; threshold K*sqrt(n_spl*lam_W*lam_H) = 1"
    assert o.source.startswith("Tirer & Bruna 2022")
    assert set(o.extras) == {"q", "Kq", "log_q", "s"}


def test_trivial_branch_values():
    c = regularized.ce(K=3, n_spl=2, lam_W=1.0, lam_H=1.0)
    assert c.trivial and c.extras["logit_gap"] == 0.0 and c.extras["rho"] == 0.0
    assert not np.any(c.means_gram) and not np.any(c.W_gram) and c.value == math.log(3)
    m = regularized.mse(K=3, n_spl=2, lam_W=1.0, lam_H=1.0)
    assert m.trivial and m.extras["s"] == 0.0 and not np.any(m.means_gram) and m.value == 0.5


@pytest.mark.parametrize("q", [0.3, 1e-3, 1e-40, 1e-200])
def test_logit_gap_far_below_the_threshold(q):
    # q ≪ 1/K: log(1/q − (K − 1)) through its large-argument branch
    K = 4
    o = regularized.ce(K=K, n_spl=1, lam_W=q, lam_H=q)
    with mpmath.workdps(50):
        qq = mpmath.sqrt(mpmath.mpf(q) * mpmath.mpf(q))
        want = mpmath.log(1 / qq - (K - 1)) if K * qq < 1 else None
    if want is None:
        assert o.trivial
    else:
        assert o.extras["logit_gap"] == pytest.approx(float(want), rel=1e-13)


def test_lambda_products_below_the_float64_range_are_far_from_trivial():
    # K²nλ_Wλ_H = 4·2^-1002 = 2^-1000 exactly, and 1e-310² (subnormal λ): s = 1 − Kq = 1 to every digit
    for lw in (2.0**-501, 1e-310):
        m = regularized.mse(K=2, n_spl=1, lam_W=lw, lam_H=lw)
        assert not m.trivial and m.extras["s"] == 1.0
        c = regularized.ce(K=2, n_spl=1, lam_W=lw, lam_H=lw)
        with mpmath.workdps(50):
            q = mpmath.mpf(lw)
            assert c.extras["logit_gap"] == pytest.approx(float(mpmath.log(1 / q - 1)), rel=1e-13)


def test_lambda_products_above_the_float64_range_are_trivial():
    for lam in (1e300, 1.7976931348623157e308):
        assert regularized.ce(K=3, n_spl=5, lam_W=lam, lam_H=lam).trivial
        assert regularized.mse(K=3, n_spl=5, lam_W=lam, lam_H=lam).trivial


@pytest.mark.parametrize(
    "solve,what_W,what_H", [(regularized.ce, "ρ\\* = ‖W\\*‖²", "‖H\\*‖²"), (regularized.mse, "‖w_k‖²", "‖H\\*‖²/r")]
)
def test_overflowing_norms_are_refused_naming_the_small_lambda(solve, what_W, what_H):
    with pytest.raises(FCTheoryError, match=f"^lam_W=1e-320 is invalid: {what_W} = e\\^7.* is beyond the float64"):
        solve(K=3, n_spl=1, lam_W=1e-320, lam_H=1e300)
    with pytest.raises(FCTheoryError, match=f"^lam_H=1e-320 is invalid: {what_H} = e\\^7.* is beyond the float64"):
        solve(K=3, n_spl=1, lam_W=1e300, lam_H=1e-320)


@pytest.mark.parametrize("solve,name", [(regularized.ce, "ufm.ce"), (regularized.mse, "ufm.mse")])
def test_a_huge_K_keeps_its_grams_as_frames_and_refuses_their_arrays(solve, name):
    # from metrics.pairs.LARGE_K classes on the Grams are FrameGrams (three numbers); the K x K array of one
    # is sized against the memory budget when it is asked for
    opt = solve(K=10**7, n_spl=1, lam_W=1e-9, lam_H=1e-9)
    assert isinstance(opt.W_gram, FrameGram) and opt.W_gram.shape == (10**7, 10**7)
    assert opt.W_gram.trace() == pytest.approx(opt.W_norm_sq, rel=1e-12)
    with pytest.raises(FCTheoryError, match="^K=10000000 is invalid: the K x K Gram matrix of the UFM optimum"):
        np.asarray(opt.means_gram)


def test_mse_norm_overflowing_only_after_the_rank_factor_is_refused():
    # ‖w_k‖² ≈ 0.97e308 is finite, ‖W*‖² = K·‖w_k‖² is not (likewise ‖H*‖² = r·(‖H*‖²/r))
    for lw, lh, shown in ((1e-310, 1e306, "1e-310"), (1e306, 1e-310, "1e\\+306")):
        with pytest.raises(
            FCTheoryError, match=f"^lam_W={shown} is invalid: ‖W\\*‖² or ‖H\\*‖² overflows float64 for this input$"
        ):
            regularized.mse(K=3, n_spl=1, lam_W=lw, lam_H=lh)
