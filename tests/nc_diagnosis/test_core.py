"""diagnose_features: the applicable UFM result per case, the verdict at a numerically trained UFM optimum
(and under a wrong lambda), the report files and the refusal of bad input."""

import json
import math

import numpy as np
import pytest

from fctheory import FCTheoryError, ufm
from fctheory.nc_diagnosis import applicable_result, diagnose_features


def _counts(K, n):
    return np.full(K, n)


def test_ce_balanced_applies_with_and_without_bias():
    for bias in (False, True):
        a = applicable_result(loss="ce", K=4, d=3, counts=_counts(4, 10), lam_W=1e-3, lam_H=1e-3, bias=bias)
        assert a.applies and a.reasons == []
        assert a.model == ("ce+bias" if bias else "ce")
        assert not a.optimum.trivial


def test_mse_without_bias_needs_d_at_least_K():
    a = applicable_result(loss="mse", K=4, d=3, counts=_counts(4, 10), lam_W=1e-3, lam_H=1e-3)
    assert not a.applies and "d = 3" in a.reasons[0]
    assert applicable_result(loss="mse", K=4, d=3, counts=_counts(4, 10), lam_W=1e-3, lam_H=1e-3, bias=True).applies


def test_mse_with_a_regularised_bias_does_not_apply():
    a = applicable_result(loss="mse", K=4, d=5, counts=_counts(4, 10), lam_W=1e-3, lam_H=1e-3, lam_b=1e-2, bias=True)
    assert not a.applies and "regularised" in a.reasons[0]


def test_unbalanced_classes_apply_with_the_certified_optimum_for_their_counts():
    counts = np.array([10, 10, 4])
    a = applicable_result(loss="ce", K=3, d=5, counts=counts, lam_W=1e-3, lam_H=1e-3)
    assert a.applies and not a.reasons and isinstance(a.optimum, ufm.CertifiedUFMOptimum)
    assert a.optimum.value == ufm.ce(counts=counts, lam_W=1e-3, lam_H=1e-3).value
    assert "certified" in a.notes[1] and a.source.startswith("the certified optimum")
    # below the optimum's rank, or with a regularised bias where b* != 0, it does not
    low = applicable_result(loss="ce", K=3, d=1, counts=counts, lam_W=1e-3, lam_H=1e-3)
    assert not low.applies and "below the rank 2" in low.reasons[0]
    reg = applicable_result(loss="ce", K=3, d=5, counts=counts, lam_W=1e-3, lam_H=1e-3, lam_b=1e-3, bias=True)
    assert not reg.applies and "regularised" in reg.reasons[0]


def test_absent_classes_are_noted_and_their_groups_collapse_as_predicted():
    counts = np.array([30, 30, 2, 2, 2, 0])
    a = applicable_result(loss="ce", K=6, d=6, counts=counts, lam_W=2.5e-2, lam_H=2.5e-2)
    assert a.applies
    text = " ".join(a.notes)
    assert "1 of 6 classes absent" in text and "keeps its classifier row" in text
    assert "minority collapse: the classes of count(s) 2" in text  # n/N = 2/66 <= N·λ_Wλ_H = 66·6.25e-4
    assert not a.optimum.trivial


def test_threshold_of_the_trivial_solution():
    # K·sqrt(n λ_W λ_H) = 4·sqrt(25·0.1·0.1) = 2 ≥ 1: W = H = 0 is optimal; 4·sqrt(25·0.1·0.023) = 0.96: not
    a = applicable_result(loss="ce", K=4, d=5, counts=_counts(4, 25), lam_W=0.1, lam_H=0.1)
    assert a.optimum.trivial and "trivial" in a.notes[0]
    b = applicable_result(loss="ce", K=4, d=5, counts=_counts(4, 25), lam_W=0.1, lam_H=0.023)
    assert not b.optimum.trivial


def _trained_ufm(lam_W, lam_H, K=4, n=5, d=4):
    """A UFM trained numerically (multi-start L-BFGS), independent of the closed form."""
    sol = ufm.solve_ce(K=K, n_spl=n, d=d, lam_W=lam_W, lam_H=lam_H, n_starts=2, seed=1)
    return sol.H.T, np.repeat(np.arange(K), n), sol.W


def test_verdict_matches_at_a_trained_optimum():
    H, y, W = _trained_ufm(5e-3, 1e-2)
    D = diagnose_features(H, y, W, lam_W=5e-3, lam_H=1e-2, rtol=1e-3)
    assert D.applicability.applies and D.matches is True
    assert D.verdict.startswith("matches")
    assert D.distances["dist_W_gram"] < 1e-3 and D.metrics["nc1_trace_ratio"] < 1e-6


def test_verdict_flags_a_wrong_lambda():
    """Features trained with lam_H = 1e-2, diagnosed with lam_H = 1e-3: collapsed geometry, wrong norms."""
    H, y, W = _trained_ufm(5e-3, 1e-2)
    D = diagnose_features(H, y, W, lam_W=5e-3, lam_H=1e-3, rtol=1e-3)
    assert D.matches is False
    assert "does NOT match" in D.verdict and "imply lam_W/lam_H" in D.verdict
    # the ratio the features imply is the one they were trained with: λ_W/λ_H = 0.5
    implied = float(D.verdict.split("imply lam_W/lam_H ≈ ")[1].split()[0])
    assert implied == pytest.approx(0.5, rel=1e-3)


def _trained_counts_ufm(counts, lam_W, lam_H, bias=False):
    """The UFM of these class counts trained numerically (multi-start L-BFGS on (W, H, b)), d = K."""
    sol = ufm.solve_ce(counts=counts, d=len(counts), lam_W=lam_W, lam_H=lam_H, bias=bias, n_starts=2, seed=3)
    return sol.H.T, np.repeat(np.arange(len(counts)), counts), sol.W, sol.b


@pytest.mark.parametrize("bias", [False, True])
def test_a_numerically_solved_imbalanced_ufm_matches_and_a_wrong_lambda_does_not(bias):
    counts = np.array([12, 7, 7, 3, 1])
    H, y, W, b = _trained_counts_ufm(counts, 5e-3, 1e-2, bias)
    D = diagnose_features(H, y, W, b, lam_W=5e-3, lam_H=1e-2, rtol=1e-3)
    assert D.applicability.applies and D.matches is True, D.verdict
    assert D.verdict.startswith("matches the") and "for these class counts" in D.verdict
    wrong = diagnose_features(H, y, W, b, lam_W=5e-3, lam_H=1e-1, rtol=1e-3)
    assert wrong.matches is False and "does NOT match" in wrong.verdict
    # the balanced closed form at the mean count would not have matched: the counts matter
    n = round(counts.sum() / len(counts))
    bal = ufm.ce(K=len(counts), n_spl=n, lam_W=5e-3, lam_H=1e-2, bias=bias)
    assert np.linalg.norm(W @ W.T - bal.W_gram) > 10 * D.distances["dist_W_gram"] * np.linalg.norm(bal.W_gram)


def test_absent_classes_are_left_out_of_the_metrics_and_kept_in_the_optimum():
    counts = np.array([9, 5, 0, 5, 2, 0])
    H, y, W, _ = _trained_counts_ufm(counts, 5e-3, 1e-2)
    D = diagnose_features(H, y, W, lam_W=5e-3, lam_H=1e-2, rtol=1e-3)
    assert D.matches is True, D.verdict
    assert D.metrics["classes_present"] == 4 and D.counts.tolist() == counts.tolist()
    assert np.all(np.isfinite([v for v in D.metrics.values() if isinstance(v, float)]))
    # an absent class changes nothing it should not: the same features against the optimum without those classes
    # (no bias: their classifier rows stay in every softmax, so the optimum itself differs)
    assert D.applicability.optimum.value > ufm.ce(counts=counts[counts > 0], lam_W=5e-3, lam_H=1e-2).value


def test_to_dict_is_strict_json_and_report_writes_files(tmp_path):
    pytest.importorskip("matplotlib")
    H, y, W = _trained_ufm(5e-3, 1e-2)
    D = diagnose_features(H, y, W, np.zeros(4), lam_W=5e-3, lam_H=1e-2)
    text = json.dumps(D.to_dict(), allow_nan=False)
    assert json.loads(text)["result"]["model"] == "ce+bias"
    path = D.report(str(tmp_path / "rep"))
    for name in ("report.md", "diagnosis.json", "grams.png", "metrics.png"):
        assert (tmp_path / "rep" / name).is_file(), name
    assert D.verdict in open(path, encoding="utf-8").read()


@pytest.mark.parametrize(
    "kw, name",
    [
        (dict(W=np.ones((3, 5))), "W"),
        (dict(b=np.ones(4)), "b"),
        (dict(y=np.array([0, 1, 2, 7] * 5)), "y"),
        (dict(lam_H=-1.0), "lam_H"),
        (dict(lam_W=math.nan), "lam_W"),
        (dict(loss="hinge"), "loss"),
    ],
)
def test_bad_input_names_the_parameter(kw, name):
    rng = np.random.default_rng(0)
    args = dict(
        H=rng.standard_normal((20, 4)),
        y=np.repeat(np.arange(3), [7, 7, 6]),
        W=rng.standard_normal((3, 4)),
        b=None,
        lam_W=1e-3,
        lam_H=1e-3,
        loss="ce",
    )
    args.update(kw)
    with pytest.raises(FCTheoryError, match=name):
        diagnose_features(args.pop("H"), args.pop("y"), args.pop("W"), args.pop("b"), **args)


@pytest.mark.parametrize("scale", [0.5, 2.0])
def test_verdict_refuses_features_whose_norm_is_off_by_a_factor_in_either_direction(scale):
    """The norm check is a deviation |‖H‖² ratio − 1|: features too small (ratio 1/4) fail as surely as
    features too large (ratio 4): the deviation recorded is |ratio − 1| (0.75 and 3), never a negative number
    that would pass any rtol."""
    H, y, W = _trained_ufm(5e-3, 1e-2)
    D = diagnose_features(scale * H, y, W, lam_W=5e-3, lam_H=1e-2, rtol=1e-3)
    assert D.applicability.applies and D.matches is False
    assert D.checks["‖H‖² ratio − 1"] == pytest.approx(abs(scale**2 - 1), rel=1e-2)
    assert D.verdict.startswith("does NOT match")


@pytest.mark.parametrize("scale", [0.5, 2.0])
def test_verdict_refuses_a_classifier_whose_norm_is_off_by_a_factor_in_either_direction(scale):
    H, y, W = _trained_ufm(5e-3, 1e-2)
    D = diagnose_features(H, y, scale * W, lam_W=5e-3, lam_H=1e-2, rtol=1e-3)
    assert D.applicability.applies and D.matches is False
    assert D.checks["‖W‖² ratio − 1"] == pytest.approx(abs(scale**2 - 1), rel=1e-2)
    assert D.verdict.startswith("does NOT match")


def test_the_cross_entropy_bias_is_checked_up_to_a_common_shift():
    counts = np.array([12, 7, 7, 3, 1])
    H, y, W, b = _trained_counts_ufm(counts, 5e-3, 1e-2, bias=True)
    shifted = diagnose_features(H, y, W, b + 5.0, lam_W=5e-3, lam_H=1e-2, rtol=1e-3)
    assert shifted.matches is True and shifted.checks["bias (relative)"] < 1e-3
    off = b + np.array([0.0, 0.0, 0.0, 0.0, 1.0])  # the rarest class's bias raised by 1 logit
    wrong = diagnose_features(H, y, W, off, lam_W=5e-3, lam_H=1e-2, rtol=1e-3)
    assert wrong.matches is False and "bias (relative)" in wrong.verdict
