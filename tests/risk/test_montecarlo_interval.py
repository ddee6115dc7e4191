"""The Monte-Carlo risk interval R̂ ± z·SE of ``monte_carlo_risk`` (used by ``diagnose``).

Oracle: a task whose per-sentence loss takes two known values. L = 1, n_c = s_c = 2, K = 2; the two
words of class 0 share one embedding (its loss is the constant ``a``), the two words of class 1 have
losses ``a`` and ``b`` (closed forms below), drawn with probabilities μ. From R̂₀ one recovers exactly how
many of the n class-1 draws had loss ``b`` (an integer c), hence the sample variance
c(n − c)/(n(n − 1))·(b − a)² that SE must be built from: SE = √(s²/n)/K. This pins the quantile (1.96
vs 2 vs 1.645), the ddof (n vs n − 1, visible at n = 2…5), the 1/K and 1/√n, the clipping at 0 and
the penalty shift to 1e-12, independently of the estimator's code. Coverage and the expected width are
then checked statistically against the exact risk (``fc.true_risk``) with binomial / CLT bounds.
"""

import math

import mpmath
import numpy as np
import pytest
from scipy.stats import binom

import fctheory as fc
from fctheory.diagnosis.montecarlo import monte_carlo_risk

# class 0: words (0, 0), (0, 1) both at (4, 0); class 1: word (1, 0) at (0, 4), word (1, 1) at (0, -1); U = I
W_TWO = np.array([[4.0, 4.0, 0.0, 0.0], [0.0, 0.0, 4.0, -1.0]])
U_TWO = np.eye(2)
A_LOSS = math.log1p(math.exp(-4.0))  # CE of scores (4, 0) for class 0, and of (0, 4) for class 1
B_LOSS = math.log1p(math.exp(1.0))  # CE of scores (0, -1) for class 1
K_TWO = 2


def _two_value_task(p=0.5):
    return fc.Task.full(2, 2, 1, mu=[1 - p, p])


def _b_count(res):
    """Number c of class-1 draws with loss b, recovered from R̂₀ = (a + a + (b − a)c/n)/2."""
    n = res.n_samples
    c = (K_TWO * res.R0 - 2 * A_LOSS) * n / (B_LOSS - A_LOSS)
    assert abs(c - round(c)) < 1e-9, c
    return round(c)


def _exact_stderr(c, n):
    s2 = c * (n - c) / (n * (n - 1)) * (B_LOSS - A_LOSS) ** 2  # unbiased (ddof = 1) sample variance of class 1
    return math.sqrt(s2 / n) / K_TWO  # class 0 has variance 0


def _runs(n, seeds, **kw):
    task = _two_value_task(kw.pop("p", 0.5))
    return [monte_carlo_risk(task, W_TWO, U_TWO, n_samples=n, seed=s, grad=False, **kw) for s in seeds]


def test_two_value_oracle_matches_the_exact_risk():
    # the closed forms a, b describe this network: the exact risk is a/2 + ((1 − p)a + p·b)/2
    p = 0.3
    R = fc.true_risk(_two_value_task(p), W_TWO, U_TWO, 0.0)
    assert R == pytest.approx(A_LOSS / 2 + ((1 - p) * A_LOSS + p * B_LOSS) / 2, rel=1e-14)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8, 40])
def test_stderr_is_the_ddof1_standard_error_over_K(n):
    # n vs n − 1 in the variance changes SE by √(n/(n − 1)) (41% at n = 2, 1.3% at n = 40)
    checked = 0
    for res in _runs(n, range(40)):
        c = _b_count(res)
        want = _exact_stderr(c, n)
        if want == 0:
            assert res.stderr == 0.0
            continue
        assert res.stderr == pytest.approx(want, rel=1e-12, abs=0)
        checked += 1
    assert checked >= 10  # enough draws with both losses present


@pytest.mark.parametrize("confidence", [0.95, 0.9, 0.99, 0.5])
def test_interval_half_width_is_the_normal_quantile_times_stderr(confidence):
    # z = √2·erfinv(level): 1.959964 at 95% (not 2, not 1.645), computed independently in mpmath
    mpmath.mp.dps = 50
    z = float(mpmath.sqrt(2) * mpmath.erfinv(confidence))
    for res in _runs(6, range(30), confidence=confidence):
        if res.stderr == 0:
            continue
        assert (res.ci[1] - res.R) / res.stderr == pytest.approx(z, rel=1e-12)
        if res.R0 - z * res.stderr > 0:
            assert (res.R - res.ci[0]) / res.stderr == pytest.approx(z, rel=1e-12)
        assert res.confidence == confidence


def test_interval_is_shifted_by_the_exact_penalty_and_clipped_at_the_penalty():
    lam_W, lam_U = 0.1, 0.2
    penalty = 0.5 * lam_W * float(np.sum(W_TWO**2)) + 0.5 * lam_U * float(np.sum(U_TWO**2))
    z = 1.959963984540054
    clipped = unclipped = 0
    for res in _runs(4, range(40), lam_W=lam_W, lam_U=lam_U):
        assert res.penalty == pytest.approx(penalty, rel=1e-14)
        se = _exact_stderr(_b_count(res), 4)
        assert res.R == pytest.approx(res.R0 + penalty, rel=1e-14)
        assert res.ci[1] == pytest.approx(res.R0 + z * se + penalty, rel=1e-12)
        lower = res.R0 - z * se
        if lower < 0:  # R₀ ≥ 0: the lower end is clipped at R₀ = 0, i.e. at the penalty
            assert res.ci[0] == pytest.approx(penalty, rel=1e-14)
            clipped += 1
        else:
            assert res.ci[0] == pytest.approx(lower + penalty, rel=1e-12)
            unclipped += 1
    assert clipped and unclipped


def test_expected_squared_stderr_is_the_per_sample_variance_over_nK2():
    # σ² of class 1's loss is p(1 − p)(b − a)² in closed form; with ddof = 1 E[s²] = σ² exactly, so
    # E[SE²]·n·K² = σ²; ddof = 0 would give σ²(n − 1)/n = σ²/2 at n = 2. 4000 seeds: 5 standard errors.
    n, p = 2, 0.5
    sigma2 = p * (1 - p) * (B_LOSS - A_LOSS) ** 2
    v = np.array([r.stderr**2 * n * K_TWO**2 for r in _runs(n, range(4000), p=p)])
    se = v.std(ddof=1) / math.sqrt(v.size)
    assert abs(v.mean() - sigma2) < 5 * se
    assert 5 * se < sigma2 / 10  # the bound separates ddof 1 from ddof 0 (a factor 1/2)


def _coverage(confidence, seeds, n_samples=50):
    task = fc.Task.full(2, 3, 2, mu=[0.5, 0.3, 0.2])
    rng = np.random.default_rng(1)
    W, U = rng.standard_normal((3, task.n_w)), rng.standard_normal((task.K, task.L * 3))
    R = fc.true_risk(task, W, U, 0.01)
    hits = 0
    for s in seeds:
        lo, hi = monte_carlo_risk(
            task, W, U, lam_W=0.01, lam_U=0.01, n_samples=n_samples, seed=s, confidence=confidence, grad=False
        ).ci
        hits += lo <= R <= hi
    return hits


@pytest.mark.parametrize("confidence", [0.95, 0.9])
def test_interval_covers_the_exact_risk_at_the_nominal_rate(confidence):
    # 1000 seeds: a correct level falls outside [binom.ppf(1e-4), binom.isf(1e-4)] with probability 2e-4
    # (the normal interval at n = 50 is within ~0.5% of its level here). 95% with z = 1.645 covers ~90%,
    # with z = 2.576 ~99%: both outside these bounds.
    N = 1000
    hits = _coverage(confidence, range(N))
    assert binom.ppf(1e-4, N, confidence) <= hits <= binom.isf(1e-4, N, confidence)
