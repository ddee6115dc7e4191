"""The regularised UFM's closed forms next to the trivial-solution threshold K·√(nλ_Wλ_H) = 1.

Every quantity that vanishes at the threshold (s = 1 − Kq, the logit gap, ‖W*‖², ‖H*‖², the Gram
scales) is compared with mpmath at 50 digits, evaluated from the exact float inputs, to a relative
1e-12 for λ = λ₀(1 − ε), ε from 1e-1 down to 1e-14 (closer than 1e-10: the inputs are exact floats, so
nothing but the evaluation limits the accuracy). The trivial flag is checked where K²nλ_Wλ_H is 1 exactly
and one ulp below.
"""

import mpmath
import numpy as np
import pytest

from fctheory.ufm import regularized

EPS = [1e-1, 1e-3, 1e-6, 1e-8, 1e-10, 1e-12, 1e-14]
CASES = [(2, 1, 0.3), (4, 3, 0.01), (10, 7, 2.5), (3, 1000, 1e-5)]  # K, n, λ_W
RTOL = 1e-12


def _lam_H(K, n, lam_W, eps):
    return float(1 / (K * K * n * lam_W)) * (1 - eps)


def _mp_mse(K, n, lam_W, lam_H, bias):
    with mpmath.workdps(50):
        lw, lh = mpmath.mpf(lam_W), mpmath.mpf(lam_H)
        q = mpmath.sqrt(n * lw * lh)
        s = 1 - K * q
        r = K - 1 if bias else K
        Kq = K * q
        half = Kq - Kq**2 / 2
        return dict(
            s=s,
            W_norm_sq=r * s * mpmath.sqrt(n * lh / lw),
            H_norm_sq=r * s * mpmath.sqrt(n * lw / lh),
            means=s * mpmath.sqrt(lw / (n * lh)),
            a2=s * mpmath.sqrt(n * lh / lw),
            value=(mpmath.mpf(K - 1) / K * half) if bias else half,
        )


def _mp_ce(K, n, lam_W, lam_H):
    with mpmath.workdps(50):
        lw, lh = mpmath.mpf(lam_W), mpmath.mpf(lam_H)
        q = mpmath.sqrt(n * lw * lh)
        gap = mpmath.log(1 / q - (K - 1))
        return dict(
            gap=gap,
            rho=(K - 1) * gap * mpmath.sqrt(n * lh / lw),
            H_norm_sq=(K - 1) * gap * mpmath.sqrt(n * lw / lh),
            means=gap * mpmath.sqrt(lw / (n * lh)),
            value=-mpmath.log(1 - (K - 1) * q) + (K - 1) * q * gap,
        )


def _close(got, want, what):
    err = abs(mpmath.mpf(float(got)) - want) / abs(want)
    assert err <= RTOL, f"{what}: {float(got)!r} vs {mpmath.nstr(want, 20)} (relative error {float(err):.3g})"


@pytest.mark.parametrize("eps", EPS)
@pytest.mark.parametrize("K,n,lam_W", CASES)
@pytest.mark.parametrize("bias", [False, True])
def test_mse_threshold_quantities_to_full_relative_precision(K, n, lam_W, eps, bias):
    lam_H = _lam_H(K, n, lam_W, eps)
    o = regularized.mse(K=K, n_spl=n, lam_W=lam_W, lam_H=lam_H, bias=bias)
    ref = _mp_mse(K, n, lam_W, lam_H, bias)
    assert not o.trivial
    _close(o.extras["s"], ref["s"], "s = 1 - Kq")
    _close(o.W_norm_sq, ref["W_norm_sq"], "‖W*‖²")
    _close(o.H_norm_sq, ref["H_norm_sq"], "‖H*‖²")
    _close(o.value, ref["value"], "value")
    diag = (1 - 1 / K) if bias else 1.0  # (I − 11ᵀ/K) or I
    _close(o.W_gram[0, 0] / diag, ref["a2"], "W Wᵀ scale")
    _close(o.means_gram[0, 0] / diag, ref["means"], "class-mean Gram scale")


@pytest.mark.parametrize("eps", EPS)
@pytest.mark.parametrize("K,n,lam_W", CASES)
def test_ce_threshold_quantities_to_full_relative_precision(K, n, lam_W, eps):
    lam_H = _lam_H(K, n, lam_W, eps)
    o = regularized.ce(K=K, n_spl=n, lam_W=lam_W, lam_H=lam_H)
    ref = _mp_ce(K, n, lam_W, lam_H)
    assert not o.trivial
    _close(o.extras["logit_gap"], ref["gap"], "logit gap")
    _close(o.W_norm_sq, ref["rho"], "ρ* = ‖W*‖²")
    _close(o.extras["rho"], ref["rho"], "extras rho")
    _close(o.H_norm_sq, ref["H_norm_sq"], "‖H*‖²")
    _close(o.value, ref["value"], "value")
    _close(o.W_gram[0, 0] / (1 - 1 / K), ref["rho"] / (K - 1), "W Wᵀ scale")
    _close(o.means_gram[0, 0] / (1 - 1 / K), ref["means"], "class-mean Gram scale")


@pytest.mark.parametrize("solve", [regularized.ce, regularized.mse])
def test_trivial_exactly_at_the_threshold_and_not_one_ulp_below(solve):
    # K = 4, n = 4, λ_W = λ_H = 1/8: K²nλ_Wλ_H = 1 exactly (the threshold is included: (0, 0) optimal)
    at = solve(K=4, n_spl=4, lam_W=0.125, lam_H=0.125)
    assert at.trivial and at.W_norm_sq == 0.0 and at.H_norm_sq == 0.0
    below = np.nextafter(0.125, 0.0)
    o = solve(K=4, n_spl=4, lam_W=0.125, lam_H=below)
    assert not o.trivial and o.W_norm_sq > 0
    above = solve(K=4, n_spl=4, lam_W=0.125, lam_H=np.nextafter(0.125, 1.0))
    assert above.trivial and above.W_norm_sq == 0.0
    with mpmath.workdps(50):
        s = 1 - 4 * mpmath.sqrt(4 * mpmath.mpf(0.125) * mpmath.mpf(below))
    if solve is regularized.mse:
        _close(o.extras["s"], s, "s one ulp below the threshold")
    else:
        _close(o.extras["logit_gap"], _mp_ce(4, 4, 0.125, below)["gap"], "logit gap one ulp below the threshold")


@pytest.mark.parametrize("eps", [1e-3, 1e-10])
def test_trivial_just_above_the_threshold(eps):
    lam_H = float(1 / (4 * 4 * 3 * 0.01)) * (1 + eps)
    for solve in (regularized.ce, regularized.mse):
        o = solve(K=4, n_spl=3, lam_W=0.01, lam_H=lam_H)
        assert o.trivial and o.W_norm_sq == 0.0 and o.H_norm_sq == 0.0
    assert regularized.ce(K=4, n_spl=3, lam_W=0.01, lam_H=lam_H).value == pytest.approx(np.log(4), rel=1e-15)
    assert regularized.mse(K=4, n_spl=3, lam_W=0.01, lam_H=lam_H).value == 0.5


def test_extreme_lambdas_near_the_threshold_keep_full_precision():
    # λ_W = 1e-200, λ_H ≈ 1e200/(K²n): the log form loses ~1e-13 absolute to log's rounding alone
    K, n, lam_W = 5, 2, 1e-200
    for eps in (1e-4, 1e-9):
        lam_H = float(1 / (K * K * n * lam_W)) * (1 - eps)
        ref = _mp_mse(K, n, lam_W, lam_H, False)
        _close(regularized.mse(K=K, n_spl=n, lam_W=lam_W, lam_H=lam_H).extras["s"], ref["s"], "s")
        _close(
            regularized.ce(K=K, n_spl=n, lam_W=lam_W, lam_H=lam_H).extras["logit_gap"],
            _mp_ce(K, n, lam_W, lam_H)["gap"],
            "logit gap",
        )
