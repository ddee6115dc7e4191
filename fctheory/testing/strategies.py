"""Hypothesis strategies whose every drawn value is valid input to fctheory.

Each function checks its own arguments at once (bad ones raise :class:`~fctheory.FCTheoryError`) and
returns a Hypothesis ``SearchStrategy``; nothing is drawn until a test runs. Randomness comes only from
Hypothesis: large arrays are filled by ``numpy.random.default_rng(seed)`` with a Hypothesis-drawn
``seed`` (never the global NumPy generator), so runs are reproducible, derandomizable and shrink towards
seed 0. Conventions as in docs/theory.md: word (α, β) has index α·s_c + β, W is d×n_w, U is K×(L·d);
NC-metric features are samples as rows (N×d).

Reference: docs/testing-api.md.
"""

from __future__ import annotations

import math
import typing

import numpy as np
from hypothesis import strategies as st

from .._budget import check_work
from .._validate import Bool, Choice, Instance, Int, Prob, Real, check_mu, fail, public, result_type
from ..configurations import type1_configuration, type2_configuration, type3_configuration
from ..task import Task
from ..tau import lambda_trivial
from ..type3 import lambda_max_type3

__all__ = [
    "tasks",
    "word_distributions",
    "predictor_params",
    "weights",
    "configurations",
    "labels_and_features",
    "Configuration",
    "PREDICTORS",
]

_SEEDS = st.integers(0, 2**32 - 1)
_LN_FLOAT_MAX = math.log(np.finfo(np.float64).max)  # 709.78...


def _rng(draw):
    """A NumPy generator seeded by Hypothesis (deterministic under Hypothesis' control)."""
    return np.random.default_rng(draw(_SEEDS))


def _power_le(n_c: int, L: int, limit: int) -> bool:
    """n_c**L <= limit, decided without forming a huge power."""
    if L * math.log(n_c) > math.log(limit) + 1e-9:
        return False
    return n_c**L <= limit


def _largest_L(n_c: int, limit: int, cap: int) -> int:
    """The largest L <= cap with n_c**L <= limit (0 when even n_c > limit)."""
    L, p = 0, 1
    while L < cap and p * n_c <= limit:
        p *= n_c
        L += 1
    return L


# =====================================================================================================
# Word distributions
# =====================================================================================================
@st.composite
def _word_distribution(draw, s_c, max_s_c, degenerate):
    s = s_c if s_c is not None else draw(st.integers(1, max_s_c))
    if s == 1:
        return np.ones(1)
    kinds = ["uniform", "zipf", "random", "near_uniform"] + (["near_degenerate"] if degenerate else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "uniform":
        return check_mu("uniform", s)
    if kind == "zipf":
        return check_mu("zipf", s)
    if kind == "random":
        # log-uniform weights: ratios up to e^20 between words
        if s <= 16:
            u = np.array(draw(st.lists(st.floats(-20.0, 0.0), min_size=s, max_size=s)))
        else:
            u = _rng(draw).uniform(-20.0, 0.0, s)
        w = np.exp(u)
        return w / w.sum()
    if kind == "near_uniform":
        # uniform up to a relative perturbation δ of two words (ties broken by a hair)
        delta = draw(st.sampled_from([1e-12, 1e-9, 1e-6, 1e-3]))
        p = np.full(s, 1.0 / s)
        p[0] *= 1 + delta
        p[1] *= 1 - delta
        return p
    # near-degenerate: one word carries almost all the mass, the others `tiny` each (down to 1e-300)
    tiny = draw(st.sampled_from([1e-300, 1e-200, 1e-30, 1e-12, 1e-6]))
    tiny = min(tiny, 0.5 / s)
    j = draw(st.integers(0, s - 1))
    p = np.full(s, tiny)
    p[j] = 1.0 - (s - 1) * tiny
    return p


@public(s_c=Int(min=1, max=10**6).or_none(), max_s_c=Int(min=1, max=10**6), degenerate=Bool())
def word_distributions(s_c=None, *, max_s_c=8, degenerate=True):
    """Strategy for word frequencies μ (one law for every concept): float64 arrays of s_c entries.

    Parameters
    ----------
    s_c : int, optional
        Words per concept; drawn from [1, ``max_s_c``] when omitted.
    max_s_c : int
        Upper end of the drawn s_c (default 8).
    degenerate : bool
        Also draw near-degenerate laws (default True).

    Returns
    -------
    SearchStrategy of ndarray (s_c,)
        Positive finite entries summing to 1 within 1e-12 (the rule of :class:`~fctheory._validate.Prob`),
        drawn from: ``"uniform"``; Zipf μ_β ∝ 1/(β+1) (docs/theory.md); random laws with log-uniform
        weights (ratios up to e^20); near-uniform laws (two words perturbed by a relative 1e-12 … 1e-3,
        the edge where Theorem 2's r_β nearly tie); near-degenerate laws (one word ≈ 1, the others as
        small as 1e-300, the edge of (7)). s_c = 1 gives [1.0].

    Examples
    --------
    >>> from hypothesis import given, settings
    >>> @settings(deadline=None)
    ... @given(word_distributions(3))
    ... def test(mu):
    ...     assert mu.shape == (3,) and abs(mu.sum() - 1) < 1e-12
    >>> test()
    """
    return _word_distribution(s_c, max_s_c, degenerate)


# =====================================================================================================
# Tasks
# =====================================================================================================
def _z_from_indices(idx, n_c: int, L: int) -> np.ndarray:
    """Latent variables from their lexicographic indices (Task.full's order), as a K×L array."""
    idx = np.asarray(idx, dtype=np.int64)
    Z = np.empty((idx.size, L), dtype=np.int64)
    for ell in range(L - 1, -1, -1):
        Z[:, ell] = idx % n_c
        idx = idx // n_c
    return Z


@st.composite
def _task(draw, full, n_c, s_c, L, max_K, mu, max_n_c, max_s_c, max_L):
    if isinstance(mu, np.ndarray):
        s = mu.shape[-1]
    else:
        s = s_c if s_c is not None else draw(st.integers(1, max_s_c))
    law = mu if mu is not None else draw(word_distributions(s))
    want_full = full if full is not None else draw(st.booleans())
    if want_full:
        # Assumption-A designs: the full latent set C^L (the only sets satisfying (35), docs/theory.md),
        # in lexicographic order or in a Hypothesis-chosen row order
        if n_c is not None and L is not None:
            nc, ll = n_c, L
        elif n_c is not None:
            nc = n_c
            ll = draw(st.integers(1, _largest_L(nc, max_K, max_L)))
        else:
            hi = max_n_c if L is None else max(k for k in range(2, max_n_c + 1) if _power_le(k, L, max_K))
            nc = draw(st.integers(2, min(hi, max_K)))
            ll = L if L is not None else draw(st.integers(1, _largest_L(nc, max_K, max_L)))
        N = nc**ll
        order = draw(st.sampled_from(["lexicographic", "shuffled"]))
        idx = np.arange(N)
        if order == "shuffled":
            idx = np.array(draw(st.permutations(list(range(N))))) if N <= 64 else _rng(draw).permutation(N)
        return Task(n_c=nc, s_c=s, L=ll, Z=_z_from_indices(idx, nc, ll), mu=law)
    nc = n_c if n_c is not None else draw(st.integers(2, max_n_c))
    ll = L if L is not None else draw(st.integers(1, max_L))
    small = ll * math.log2(nc) < 62
    N = nc**ll if small else None
    K_hi = max_K if N is None else min(max_K, N - 1)
    K = draw(st.integers(1, K_hi))
    how = draw(st.sampled_from(["indices", "repetition", "seed"]))
    if how == "repetition" and K == nc and nc < (N or math.inf):
        # the repetition code {(α, …, α)}: a Lemma-B design (docs/theory.md) below n_c^L
        Z = np.repeat(np.arange(nc, dtype=np.int64)[:, None], ll, axis=1)
        return Task(n_c=nc, s_c=s, L=ll, Z=Z, mu=law)
    if how != "seed" and N is not None and K <= 32:
        idx = draw(st.lists(st.integers(0, N - 1), min_size=K, max_size=K, unique=True))
        return Task(n_c=nc, s_c=s, L=ll, Z=_z_from_indices(idx, nc, ll), mu=law)
    return Task.random(nc, s, ll, K, mu=law, seed=draw(_SEEDS))


@public(
    full=Bool().or_none(),
    n_c=Int(min=2, max=1000).or_none(),
    s_c=Int(min=1, max=10**5).or_none(),
    L=Int(min=1, max=1000).or_none(),
    max_K=Int(min=1, max=10**5),
    mu=Prob().or_none(),
    max_n_c=Int(min=2, max=1000),
    max_s_c=Int(min=1, max=10**5),
    max_L=Int(min=1, max=1000),
)
def tasks(*, full=None, n_c=None, s_c=None, L=None, max_K=64, mu=None, max_n_c=4, max_s_c=3, max_L=3):
    """Strategy for :class:`~fctheory.Task` objects: full latent sets and random latent sets.

    Parameters
    ----------
    full : bool, optional
        ``True``: Assumption-A designs only, i.e. the full latent set C^L (K = n_c^L), in lexicographic
        order or with its rows permuted by Hypothesis. By the integrality proposition of docs/theory.md
        these are the only latent sets satisfying Assumption A (35), so they are the sets on which
        Theorems 1–3 are stated. ``False``: random latent sets of K < n_c^L distinct latent variables
        (any K from 1, including the repetition code {(α, …, α)}, a Lemma-B design). ``None`` (default):
        either.
    n_c, s_c, L : int, optional
        Fix the number of concepts, words per concept or sentence length; drawn when omitted from
        [2, ``max_n_c``], [1, ``max_s_c``], [1, ``max_L``] (defaults 4, 3, 3).
    max_K : int
        Largest K drawn (default 64); full tasks are drawn only with n_c^L <= max_K. Keep it small for
        tests that enumerate the true risk (their cost is about K·s_c^L).
    mu : array_like or {"uniform", "zipf"}, optional
        Word frequencies; drawn from :func:`word_distributions` (uniform, Zipf, random,
        near-uniform, near-degenerate) when omitted.

    Returns
    -------
    SearchStrategy of Task

    Examples
    --------
    >>> from hypothesis import given, settings
    >>> import fctheory as fc
    >>> @settings(deadline=None)
    ... @given(tasks(full=True, mu="uniform"))
    ... def test(task):
    ...     assert task.is_full and fc.check_assumption_A(task).holds
    >>> test()
    """
    if isinstance(mu, np.ndarray) and s_c is not None and mu.shape[-1] != s_c:
        fail("mu", mu, f"must have s_c={s_c} entries, got {mu.shape[-1]}")
    if isinstance(mu, np.ndarray) and mu.ndim != 1:
        fail("mu", mu, "must be one law (a vector), not a batch")
    s = mu.shape[-1] if isinstance(mu, np.ndarray) else (s_c if s_c is not None else max_s_c)
    check_work(
        "max_K", max_K, bytes=8 * (max_K * (L or max_L) + 2 * (n_c or max_n_c) * s), what="fctheory.testing.tasks"
    )
    if full:
        lo_nc = n_c if n_c is not None else 2
        lo_L = L if L is not None else 1
        if not _power_le(lo_nc, lo_L, max_K):
            fail("max_K", max_K, f"is below n_c**L = {lo_nc}**{lo_L}: no full task fits (raise max_K or lower n_c, L)")
    return _task(full, n_c, s_c, L, max_K, mu, max_n_c, max_s_c, max_L)


# =====================================================================================================
# Predictor parameters
# =====================================================================================================
PREDICTORS = (
    "tau",
    "predict_type1",
    "lambda_trivial",
    "tau_star",
    "predict_type2",
    "solve_type3",
    "predict_type3",
    "lambda_max_type3",
    "type3",
)
_DOMAINS = ("valid", "precision", "moderate")


def _K_for(draw, n_c: int, L: int, cap_log: float):
    """K in [1, n_c^L], never above e^cap_log: the edges K = 1 and K = n_c^L (an exact int below 2^53,
    a float beyond) or a log-uniform value in between."""
    logN = L * math.log(n_c)
    if logN <= cap_log and logN < 709.0:
        top = n_c**L  # at most ~308 digits: cheap and exact
    else:
        top = math.floor(math.exp(min(cap_log, 709.0)))  # below n_c^L
    which = draw(st.sampled_from(["between", "one", "all"]))
    K = (
        1
        if which == "one"
        else top
        if which == "all"
        else min(top, max(1, math.floor(math.exp(draw(st.floats(0.0, 1.0)) * min(logN, cap_log, 709.0)))))
    )
    return int(K) if K < 2**53 else float(K)


def _lam_below(draw, lam_edge: float, lo_rel: float, *, near: bool):
    """λ in (0, lam_edge): log-uniform over [lo_rel, 0.99]·lam_edge, or (near=True) just below the edge."""
    if near and draw(st.booleans()):
        gap = (
            draw(st.sampled_from([1e-12, 1e-9, 1e-6, 1e-3]))
            if draw(st.booleans())
            else 10 ** draw(st.floats(-6.0, -0.5))
        )
        return lam_edge * (1 - gap)
    return lam_edge * 10 ** draw(st.floats(math.log10(lo_rel), math.log10(0.99)))


@st.composite
def _theorem1(draw, domain, with_lam=True):
    if domain == "moderate":
        n_c, L, s_c = draw(st.integers(2, 10)), draw(st.integers(1, 10)), draw(st.integers(1, 100))
        K = _K_for(draw, n_c, L, 60.0)
    elif domain == "precision":
        # docs/theory.md, "Precision": n_c ∈ [2,100], L ∈ [1,5000], K ∈ [1, n_c^L], n_w ≤ 1e9, λ ∈ [1e-12, 1e3]
        n_c = draw(st.integers(2, 100))
        L = draw(st.one_of(st.integers(1, 20), st.integers(1, 5000)))
        s_c = draw(st.integers(1, 10**9 // n_c))
        K = _K_for(draw, n_c, L, 690.0)
    else:
        n_c = draw(st.one_of(st.integers(2, 100), st.sampled_from([1000, 10**6])))
        L = draw(st.one_of(st.integers(1, 20), st.integers(1, 5000)))
        s_c = draw(st.one_of(st.integers(1, 1000), st.just(max(1, 10**12 // n_c))))
        K = _K_for(draw, n_c, L, 690.0)
    out = dict(n_c=n_c, n_w=n_c * s_c, L=L, K=K)
    if not with_lam:
        return out

    lam0 = float(lambda_trivial(**out))
    side = draw(st.sampled_from(["below", "above"]))
    if domain == "moderate":
        lam = (
            _lam_below(draw, lam0, 1e-6, near=False)
            if side == "below"
            else lam0 * 10 ** draw(st.floats(math.log10(1.01), 1.0))
        )
    elif domain == "precision":
        lam = _lam_below(draw, lam0, 1e-12, near=True) if side == "below" else lam0 * 10 ** draw(st.floats(0.0, 2.0))
        lam = min(max(lam, 1e-12), 1e3)
    else:
        if side == "below":
            if draw(st.booleans()):
                lam = _lam_below(draw, lam0, 1e-12, near=True)
            else:  # the far edge: λ down to the smallest subnormal (still below λ₀)
                lam = min(draw(st.sampled_from([5e-324, 1e-320, 1e-300, 1e-100])), float(np.nextafter(lam0, 0)))
        else:
            lam = draw(st.sampled_from([lam0, float(np.nextafter(lam0, np.inf)), 2 * lam0, 1e300]))
    out["lam"] = float(max(lam, 5e-324))
    return out


@st.composite
def _theorem3(draw, domain, predict):
    if domain == "moderate":
        n_c, L = draw(st.integers(2, 10)), draw(st.integers(1, 10))
        K = _K_for(draw, n_c, L, 60.0)
        d = draw(st.integers(n_c, 64))
        lam = 10 ** draw(st.floats(-6.0, 1.0))
    else:
        # docs/theory.md, Theorem 3 precision: same (n_c, L, K) domain as τ, d ≤ 1e6, λ ∈ [1e-12, 1e3]
        n_c = draw(st.integers(2, 100))
        L = draw(st.one_of(st.integers(1, 20), st.integers(1, 5000)))
        K = _K_for(draw, n_c, L, 690.0)
        d = draw(st.one_of(st.integers(n_c if predict else 1, n_c + 10), st.integers(n_c, 10**6)))
        if domain == "precision":
            lam = 10 ** draw(st.floats(-12.0, 3.0))
        else:
            lam = draw(
                st.one_of(
                    st.floats(-12.0, 3.0).map(lambda x: 10**x), st.sampled_from([5e-324, 1e-300, 1e-100, 1e100, 1e300])
                )
            )
    out = dict(n_c=n_c, L=L, K=K, d=d, lam=float(lam))
    if predict and draw(st.booleans()):
        out["n_w"] = n_c * draw(st.integers(1, 100))
    return out


@st.composite
def _theorem2(draw, domain, with_lam=True):
    if domain == "moderate":
        n_c, L, s_c = draw(st.integers(2, 6)), draw(st.integers(1, 4)), draw(st.integers(1, 8))
        mu = draw(word_distributions(s_c, degenerate=False))
    elif domain == "precision":
        # docs/theory.md, Theorem 2 precision (the domain of the project's own tests)
        n_c, L, s_c = draw(st.integers(2, 6)), draw(st.integers(1, 4)), draw(st.integers(1, 6))
        mu = draw(word_distributions(s_c, degenerate=False))
    else:
        n_c = draw(st.one_of(st.integers(2, 6), st.integers(2, 100)))
        L = draw(st.one_of(st.integers(1, 4), st.integers(1, 30)))
        mu = draw(word_distributions(draw(st.integers(1, 50))))
    out = dict(mu=mu, n_c=n_c, L=L)
    if not with_lam:
        return out

    lmax = float(lambda_max_type3(**out))
    if domain == "moderate":
        lam = _lam_below(draw, lmax, 1e-3, near=False)
    elif domain == "precision":
        lam = max(_lam_below(draw, lmax, 1e-12, near=True), 1e-12)
    else:
        if draw(st.booleans()):
            lam = _lam_below(draw, lmax, 1e-12, near=True)
        else:  # a relative 1e-13 below λ_max, or λ_max·1e-300
            lam = draw(st.sampled_from([lmax * (1 - 1e-13), lmax * 1e-300]))
        lam = max(lam, 5e-324)
    out["lam"] = float(lam)
    return out


@public(name=Choice(*PREDICTORS), domain=Choice(*_DOMAINS))
def predictor_params(name, *, domain="valid"):
    """Strategy for keyword arguments of a predictor, inside its domain and at its edges.

    Parameters
    ----------
    name : str
        The predictor: ``"tau"``, ``"predict_type1"``, ``"lambda_trivial"`` (Theorem 1: n_c, n_w, L, K,
        lam), ``"tau_star"``, ``"predict_type2"`` (Theorem 3: n_c, L, K, d, lam; predict_type2 sometimes
        n_w, and always d >= n_c, the type-II builder's rule), ``"solve_type3"``/``"type3"``,
        ``"predict_type3"``, ``"lambda_max_type3"`` (Theorem 2: mu, n_c, L, lam).
    domain : {"valid", "precision", "moderate"}
        ``"valid"`` (default): the whole validated domain with its extreme edges — λ down to 5e-324, λ = λ₀
        rounded to float and one ulp above, 1e300; n_c up to 10^6, L up to 5000, n_w up to 1e12, K = 1 and K =
        n_c^L (a float such as 1e300 beyond 2^53); for type III λ a relative 1e-13 below λ_max, λ_max·1e-300,
        and near-degenerate μ (entries down to 1e-300). ``"precision"``: the domain of the documented accuracy
        claims of docs/theory.md ("Precision": n_c ≤ 100, L ≤ 5000, n_w ≤ 1e9, λ ∈ [1e-12, 1e3], K ≤ min(n_c^L,
        e^690)), including λ just below λ₀ (relative gaps 1e-12 … 0.3; the claim is 1e-12 relative there too) and
        just below λ_max. ``"moderate"``: small sizes (n_c ≤ 10, L ≤ 10, s_c ≤
        100, integer K) and λ in [1e-6, 0.99]·λ₀ or [1.01, 10]·λ₀ (type III: [1e-3, 0.99]·λ_max), away from the
        thresholds: inputs a plain float64 implementation handles, for testing one's own code.

    Returns
    -------
    SearchStrategy of dict
        Keyword arguments, e.g. ``dict(n_c=3, n_w=12, L=2, K=9, lam=0.01)``: call
        ``fc.tau(**params)``. Integers are Python ints, except K beyond 2^53 (a float).

    Examples
    --------
    >>> from hypothesis import given, settings
    >>> import fctheory as fc
    >>> @settings(max_examples=20, derandomize=True, deadline=None)
    ... @given(predictor_params("tau"))
    ... def test(p):
    ...     assert fc.tau(**p) >= 0
    >>> test()
    """
    if name in ("tau", "predict_type1"):
        return _theorem1(domain)
    if name == "lambda_trivial":
        return _theorem1(domain, with_lam=False)
    if name in ("tau_star", "predict_type2"):
        return _theorem3(domain, name == "predict_type2")
    if name == "lambda_max_type3":
        return _theorem2(domain, with_lam=False)
    return _theorem2(domain)


# =====================================================================================================
# Weights and configurations
# =====================================================================================================
_SCALES = (1.0, 0.1, 3.0, 0.0)
_EXTREME_SCALES = (1.0, 1e-150, 1e-8, 1e8, 1e150, 0.0)


def _check_d(task, d, what):
    check_work("d", d, bytes=8 * d * (2 * task.n_w + 2 * task.K * task.L), what=what)


@st.composite
def _weights(draw, task, d, max_d, extreme_scales):
    dd = d if d is not None else draw(st.integers(1, max_d))
    scales = _EXTREME_SCALES if extreme_scales else _SCALES
    sW = draw(st.sampled_from(scales))
    # the exact risk refuses scores beyond ~1e300: keep |scale_W·scale_U| ≤ 1e150
    sU = draw(st.sampled_from([s for s in scales if s * sW <= 1e150]))
    rng = _rng(draw)
    W = sW * rng.standard_normal((dd, task.n_w))
    U = sU * rng.standard_normal((task.K, task.L * dd))
    return W, U


@public(task=Instance(Task), d=Int(min=1).or_none(), max_d=Int(min=1, max=4096), extreme_scales=Bool())
def weights(task, d=None, *, max_d=8, extreme_scales=False):
    """Strategy for finite weights (W, U) of the network h for ``task``.

    Parameters
    ----------
    task : Task
    d : int, optional
        Embedding dimension; drawn from [1, ``max_d``] (default 8) when omitted.
    extreme_scales : bool
        Default False: W and U are standard Gaussian matrices times a scale drawn from {1, 0.1, 3, 0}
        (0: the origin, an edge). True: scales from {1, 1e-150, 1e-8, 1e8, 1e150, 0}, drawn separately
        for W and U with scale_W·scale_U ≤ 1e150 (scores stay far below the overflow the exact risk
        refuses; squared norms stay finite).

    Returns
    -------
    SearchStrategy of (W, U)
        W (d, n_w), U (K, L·d), float64, finite. The Gaussian entries come from
        ``numpy.random.default_rng(seed)`` with a Hypothesis-drawn seed.
    """
    if d is not None:
        _check_d(task, d, "fctheory.testing.weights")
    else:
        _check_d(task, max_d, "fctheory.testing.weights")
    return _weights(task, d, max_d, extreme_scales)


@result_type
class Configuration(typing.NamedTuple):
    """A drawn collapse configuration: ``W, U, lam = draw``.

    ``lam`` is the weight decay for which (W, U) is the theorem's optimum (when drawn with
    ``optimal=True``), else the λ drawn alongside it.
    """

    W: np.ndarray
    U: np.ndarray
    lam: float


_MIN_D = {"type1": -1, "type2": 0, "type3": -1}  # d >= n_c + this (Definitions 1–3: equiangular frames)


@st.composite
def _configuration(draw, task, d, kind, lam, optimal, max_extra_d):

    dd = (
        d
        if d is not None
        else draw(st.integers(max(1, task.n_c + _MIN_D[kind]), task.n_c + _MIN_D[kind] + max_extra_d))
    )
    seed = draw(_SEEDS)
    if lam is None:
        if kind == "type1":
            lam0 = float(lambda_trivial(n_c=task.n_c, n_w=task.n_w, L=task.L, K=task.K))
            # mostly τ > 0; sometimes λ ≥ λ₀, where the optimum is the origin (W, U) = (0, 0)
            lam = lam0 * (
                10 ** draw(st.floats(-3.0, math.log10(0.98)))
                if draw(st.integers(0, 4))
                else draw(st.sampled_from([1.0, 2.0]))
            )
        elif kind == "type2":
            lam = 10 ** draw(st.floats(-4.0, 0.0))
        else:
            lmax = float(lambda_max_type3(mu=task.mu, n_c=task.n_c, L=task.L))
            lam = lmax * 10 ** draw(st.floats(-2.0, math.log10(0.98)))
    lam = float(lam)
    if kind == "type1":
        if optimal:
            W, U = type1_configuration(task, d=dd, lam=lam, seed=seed)
        else:
            c, cp = draw(st.floats(0.05, 4.0)), draw(st.floats(0.05, 4.0))
            W, U = type1_configuration(task, d=dd, c=c, c_prime=cp, seed=seed)
    elif kind == "type2":
        scale = shift = None
        if draw(st.booleans()):  # φ removes positive rescalings and shifts of W's columns (Definition 2)
            rng = _rng(draw)
            scale = np.exp(rng.uniform(-3, 3, task.n_w))
            shift = rng.uniform(-5, 5, task.n_w)
        if optimal:
            W, U = type2_configuration(task, d=dd, lam=lam, seed=seed, scale=scale, shift=shift)
        else:
            W, U = type2_configuration(task, d=dd, c=draw(st.floats(0.05, 4.0)), seed=seed, scale=scale, shift=shift)
    else:
        if optimal:
            W, U = type3_configuration(task, d=dd, lam=lam, seed=seed)
        else:
            c = draw(st.floats(0.05, 4.0))
            r = np.array(draw(st.lists(st.floats(0.05, 4.0), min_size=task.s_c, max_size=task.s_c)))
            W, U = type3_configuration(task, d=dd, c=c, r=r, seed=seed)
    return Configuration(W, U, lam)


@public(
    task=Instance(Task),
    d=Int(min=1).or_none(),
    kind=Choice("type1", "type2", "type3"),
    lam=Real(lo=0, lo_open=True).or_none(),
    optimal=Bool(),
    max_extra_d=Int(min=0, max=64),
)
def configurations(task, d=None, kind="type1", *, lam=None, optimal=True, max_extra_d=3):
    """Strategy for collapse configurations (Definitions 1–3) built with ``fctheory.type*_configuration``.

    Parameters
    ----------
    task : Task
    d : int, optional
        Embedding dimension: d ≥ n_c − 1 (types I and III, equiangular frame (4)), d ≥ n_c (type II,
        mean-zero frame). Drawn from [that minimum, minimum + ``max_extra_d``] when omitted.
    kind : {"type1", "type2", "type3"}
    lam : float, optional
        The weight decay. Drawn when omitted: type I, λ ∈ [1e-3, 0.98]·λ₀ (τ > 0), and, one draw in
        five, λ ∈ {λ₀, 2λ₀} (τ = 0: the optimum is (0, 0)); type II, λ ∈ [1e-4, 1]; type III,
        λ ∈ [0.01, 0.98]·λ_max (condition (9)).
    optimal : bool
        True (default): the theorem's constants for ``lam`` — Theorem 1 (c = √(τ/n_w), c′ = √(τ/(KL))),
        Theorem 3 (c = τ*/√(KL)), Theorem 2 ((c, r) solving (7)–(8)); type II W's columns are sometimes
        rescaled and shifted (φ removes both). False: the same structure with arbitrary constants in
        [0.05, 4] (a negative control for :func:`~fctheory.testing.assert_type1_optimal` and co.).

    Returns
    -------
    SearchStrategy of Configuration
        ``W, U, lam = draw``; W (d, n_w), U (K, L·d). The frame is rotated by a Hypothesis-drawn seed.

    Notes
    -----
    Theorem 2's constants need the full latent set (``type3`` with ``optimal=True`` refuses other
    tasks) and λ < λ_max.
    """
    lo = task.n_c + _MIN_D[kind]
    if d is not None and d < lo:
        fail("d", d, f"must be >= {lo} for {kind} configurations of n_c={task.n_c} concepts (equiangular frame)")
    _check_d(task, d if d is not None else lo + max_extra_d, "fctheory.testing.configurations")
    if kind == "type3" and optimal:
        if not task.is_full:
            fail("task", task, "Theorem 2's constants (optimal=True) need the full latent set (K = n_c**L)")
        if lam is not None:
            lmax = float(lambda_max_type3(mu=task.mu, n_c=task.n_c, L=task.L))
            if lam >= lmax:
                fail("lam", lam, f"must be < lambda_max = {lmax!r} (condition (9)) for a type-III optimum")
    return _configuration(task, d, kind, lam, optimal, max_extra_d)


# =====================================================================================================
# Labels and features for the NC metrics
# =====================================================================================================
@st.composite
def _labels_features(draw, K, d, max_K, max_d, max_n_spl, balanced):
    k = K if K is not None else draw(st.integers(2, max_K))
    dd = d if d is not None else draw(st.integers(1, max_d))
    if balanced:
        n = draw(st.integers(1, max_n_spl))
        counts = [n] * k
    else:
        counts = draw(st.lists(st.integers(1, max_n_spl), min_size=k, max_size=k))
    rng = _rng(draw)
    y = np.repeat(np.arange(k, dtype=np.int64), counts)
    # within-class spread: 0 is exact collapse (NC1 = 0), 1 is no collapse at all
    spread = draw(st.sampled_from([0.1, 0.0, 1e-8, 1.0, 3.0]))
    scale = draw(st.sampled_from([1.0, 1e-100, 1e100]))
    means = rng.standard_normal((k, dd))
    H = scale * (means[y] + spread * rng.standard_normal((y.size, dd)))
    if draw(st.booleans()):
        perm = rng.permutation(y.size)
        H, y = H[perm], y[perm]
    return H, y


@public(
    K=Int(min=2, max=10**4).or_none(),
    d=Int(min=1, max=10**4).or_none(),
    max_K=Int(min=2, max=10**4),
    max_d=Int(min=1, max=10**4),
    max_n_spl=Int(min=1, max=10**4),
    balanced=Bool().or_none(),
)
def labels_and_features(K=None, d=None, *, max_K=6, max_d=6, max_n_spl=5, balanced=None):
    """Strategy for labelled features (H, y) for the NC metrics (``fctheory.metrics``).

    Parameters
    ----------
    K, d : int, optional
        Number of classes (≥ 2) and feature dimension; drawn from [2, ``max_K``], [1, ``max_d``] when
        omitted (defaults 6, 6).
    max_n_spl : int
        Largest number of samples of a class (default 5).
    balanced : bool, optional
        True: every class has the same number of samples; False: counts drawn per class in
        [1, max_n_spl]; None (default): either.

    Returns
    -------
    SearchStrategy of (H, y)
        H (N, d) float64, samples as rows (as the peer libraries and ``fctheory.metrics``); y (N,) int64
        labels in [0, K), every class present. H = scale·(class mean + spread·noise) with Gaussian class
        means (distinct almost surely, so Σ_B ≠ 0), spread ∈ {0 (exact collapse), 1e-8, 0.1, 1, 3} and
        scale ∈ {1, 1e-100, 1e100}; rows sometimes shuffled.
    """
    k, dd = K if K is not None else max_K, d if d is not None else max_d
    check_work("max_n_spl", max_n_spl, bytes=8 * k * max_n_spl * (dd + 2), what="fctheory.testing.labels_and_features")
    if balanced is None:
        return st.booleans().flatmap(lambda b: _labels_features(K, d, max_K, max_d, max_n_spl, b))
    return _labels_features(K, d, max_K, max_d, max_n_spl, balanced)
