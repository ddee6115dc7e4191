"""The optimal scale of type I on a Lemma-B latent set: Theorem 1's τ for a partial task (K < n_c^L).

Lemma B's properties (i)–(iii) (:func:`fctheory.lemma_B_properties`) do not need Assumption A (35): some
latent sets with K < n_c^L satisfy them (:func:`fctheory.search_lemma_B`). On such a set, with uniform word
frequencies, θ_r = κr/L is forced (κ = n_c/(n_c − 1)), and the risk (5) of the type-I configuration with
‖W‖² = ‖U‖² = t is the analogue of Theorem 1's H(t) with the set's own sphere sizes |S_r| = |S_r(k)| in
place of (39)'s (K/n_c^L)·C(L, r)(n_c − 1)^r:

    H_Z(t) = log(1 + Σ_(r=1..L) |S_r| e^(−ηrt)) + λt,     η = κ/√(n_w K L).

H_Z is strictly convex (H_Z″ = η²·Var r > 0 under the weights |S_r|e^(−ηrt), |S_0| = 1). With q = e^(−ηt)
its stationarity condition is the polynomial equation

    Σ_(r=1..L) (ηr − λ) |S_r| q^r = λ,

whose left side minus λ is −λ at q = 0 and ηΣ_r r|S_r| − λK at q = 1. So t* > 0 iff
λ < λ₀,Z = η Σ_r r|S_r| / K, and then t* = −log(q*)/η with q* its unique root in (0, 1); t* = 0 (the
origin) otherwise. On a full task |S_r| is (39)'s and t* = τ of Theorem 1.

That type I at scale t* is the *global* minimiser of (5) on a Lemma-B set is checked, not proven here: the
proofs_check check ``lemmaB-optimal-scale`` compares t* and min H_Z with the certified optimum
(:func:`fctheory.risk.optimum`) on several Lemma-B partial sets (docs/optimum.md, docs/theory.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import mpmath
import numpy as np

from ._interval import (
    adaptive,
    bisect_to_newton,
    bracket_increasing,
    enclosure,
    enclosure_array,
    exact_arb,
    exact_fmpq,
    flint_module,
)
from ._mp import mp_context, mp_guard, mp_root
from ._validate import Choice, Instance, fail, float_array, public, result_type
from .assumptions import lemma_B_properties
from .tau import DPS, LAM
from .task import Task

__all__ = ["LemmaBScale", "lemma_b_scale"]


@result_type
@dataclass(frozen=True)
class LemmaBScale:
    """Result of :func:`lemma_b_scale`: type I's optimal scale on a Lemma-B latent set.

    Attributes
    ----------
    lam
        λ (as given, broadcast).
    t_star
        t* = argmin_{t≥0} H_Z(t) = ‖W‖² = ‖U‖² = ‖X‖_* of the optimum (0 iff λ ≥ λ₀,Z).
    q_star
        q* = e^(−ηt*), the root in (0, 1] of Σ_r (ηr − λ)|S_r| q^r = λ (1 when t* = 0).
    risk
        min R = H_Z(t*).
    ce
        H_Z(t*) − λt*, the unregularised cross-entropy.
    word_norm
        ‖w_(α,β)‖ = √(t*/n_w), the same for every word (type I).
    u_norm
        ‖u_{k,ℓ}‖ = √(t*/(KL)).
    lambda0
        λ₀,Z = η Σ_r r|S_r| / K.
    eta
        η = κ/√(n_w K L).
    trivial
        t* = 0.
    sphere_sizes
        |S_r| for r = 1..L (ndarray of int, the same for every k by Lemma B (i)).
    """

    lam: object
    t_star: object
    q_star: object
    risk: object
    ce: object
    word_norm: object
    u_norm: object
    lambda0: float
    eta: float
    trivial: object
    sphere_sizes: np.ndarray


def _sizes(task: Task) -> np.ndarray:
    if not task.is_uniform:
        fail("task", task, "the Lemma-B closed form needs uniform word frequencies (mu = 'uniform')")
    res = lemma_B_properties(task)
    if not res.holds:
        fail("task", task, "its latent set does not satisfy Lemma B: " + "; ".join(res.messages[:2]))
    return np.asarray(res.S_r[0, 1:], dtype=np.int64)


def _solve_s(S: np.ndarray, a: np.ndarray) -> np.ndarray:
    """s = ηt* per entry of a = λ/η (< m(0)): the root of m(s) = Σ r|S_r|e^(−rs)/(1 + Σ|S_r|e^(−rs)) = a.

    m decreases strictly from m(0) = Σ r|S_r|/K to 0 (m′ = −Var r); safeguarded Newton on a bracket.
    """
    r = np.arange(1, len(S) + 1, dtype=float)

    def m(s):
        w = S * np.exp(-np.outer(s, r))  # e^(−rs) ≤ 1: no overflow
        den = 1.0 + w.sum(1)
        mean = (w @ r) / den
        return mean, (w @ (r * r)) / den - mean * mean

    lo = np.zeros_like(a)
    hi = np.ones_like(a)
    for _ in range(2100):  # m(hi) < a by doubling; a ≥ 5e-324 needs hi ≲ 745
        big = m(hi)[0] >= a
        if not big.any():
            break
        lo, hi = np.where(big, hi, lo), np.where(big, 2 * hi, hi)
    s = 0.5 * (lo + hi)
    for _ in range(200):
        v, var = m(s)
        g = v - a
        lo, hi = np.where(g > 0, s, lo), np.where(g > 0, hi, s)
        with np.errstate(divide="ignore", invalid="ignore"):
            new = s + g / var  # Newton: m′ = −Var r
        new = np.where((new > lo) & (new < hi) & np.isfinite(new), new, 0.5 * (lo + hi))
        done = np.abs(new - s) <= 4e-16 * new
        s = new
        if done.all():
            break
    return s


def _float(S, eta, lam, lam0):
    pos = lam < lam0
    s = np.zeros_like(lam)
    if pos.any():
        s[pos] = _solve_s(S.astype(float), lam[pos] / eta)  # λ/η only below λ₀,Z (no overflow at λ ~ 1e308)
    r = np.arange(1, len(S) + 1)
    t = s / eta
    ce = np.log1p((S * np.exp(-np.outer(s, r))).sum(1))
    return t, np.exp(-s), ce


def _mp(S, n_c, n_w, L, K, lam):
    """t*, q*, H_Z(t*) − λt* from the polynomial as printed (mpmath), t* = 0 iff λ ≥ λ₀,Z."""
    lam = mpmath.mpf(lam)
    eta = mpmath.mpf(n_c) / (n_c - 1) / mpmath.sqrt(mpmath.mpf(n_w) * K * L)
    Sm = [mpmath.mpf(int(x)) for x in S]
    if eta * mpmath.fsum(r * Sm[r - 1] for r in range(1, L + 1)) <= lam * K:
        return mpmath.mpf(0), mpmath.mpf(1), mpmath.log(K)

    def g(q):
        return mpmath.fsum((eta * r - lam) * Sm[r - 1] * q**r for r in range(1, L + 1)) - lam

    q = mp_root(g, 0, 1)
    return -mpmath.log(q) / eta, q, mpmath.log(1 + mpmath.fsum(Sm[r - 1] * q**r for r in range(1, L + 1)))


def _interval(S, n_c, n_w, L, K, lam, s_float):
    """Certified (t*, q*, risk, ce, word norm, u norm) for one λ (``s_float`` = ηt* of the float path: a guess).

    t* = 0 iff λ ≥ λ₀,Z = ηΣ r|S_r|/K, decided exactly in rationals (η² is rational); otherwise s = ηt* is the
    zero of the increasing f(s) = λ/η − m(s), f′ = Var r > 0 (the weights w_0 = 1, w_r = |S_r|e^(−rs): the class
    itself at r = 0 keeps the variance positive), enclosed by interval Newton (:func:`bisect_to_newton`)."""
    flint = flint_module()
    sr = int(sum((r + 1) * int(x) for r, x in enumerate(S)))
    lq = exact_fmpq(lam)
    if lq * lq * flint.fmpq(K * K * (n_c - 1) ** 2 * n_w * K * L) >= flint.fmpq(n_c * n_c * sr * sr):
        zero, one, logk = flint.arb(0), flint.arb(1), flint.arb(K).log()
        return [enclosure(zero, 0), enclosure(one, 0), enclosure(logk, 53), enclosure(logk, 53)] + [
            enclosure(zero, 0)
        ] * 2

    def solve(prec):
        eta = flint.arb(flint.fmpq(n_c, n_c - 1)) / flint.arb(flint.fmpz(n_w * K * L)).sqrt()
        a = exact_arb(lam) / eta

        def moments(s):
            w = [int(x) * (-(r + 1) * s).exp() for r, x in enumerate(S)]
            den = 1 + sum(w)
            mean = sum((r + 1) * v for r, v in enumerate(w)) / den
            return w, den, mean

        def f(s):
            return a - moments(s)[2]

        def fp(s):
            w, den, mean = moments(s)
            return sum((r + 1) ** 2 * v for r, v in enumerate(w)) / den - mean * mean

        br = bracket_increasing(f, s_float)
        X = None if br is None else bisect_to_newton(f, fp, *br)
        if X is None:
            return None
        t = X / eta
        ce = (1 + sum(int(x) * (-(r + 1) * X).exp() for r, x in enumerate(S))).log()
        return [t, (-X).exp(), ce + exact_arb(lam) * t, ce, (t / n_w).sqrt(), (t / (K * L)).sqrt()]

    balls, prec = adaptive(solve, what="lemma_b_scale")
    return [enclosure(b, prec) for b in balls]


def _mp_fields(S, n_c, n_w, L, K, flat, dps):
    """(t*, q*, ce, risk, word norm, u norm) as object arrays of mpf: :func:`_mp` per λ with ``dps`` digits."""
    with mp_context(dps), mp_guard(dps):
        vals = [_mp(S, n_c, n_w, L, K, x) for x in flat]
        t, q, ce = (np.array([v[i] for v in vals], dtype=object) for i in range(3))
        risk = np.array([c + mpmath.mpf(x) * tt for c, x, tt in zip(ce, flat, t)], dtype=object)
        wn = np.array([mpmath.sqrt(tt / n_w) for tt in t], dtype=object)
        un = np.array([mpmath.sqrt(tt / (K * L)) for tt in t], dtype=object)
    return t, q, ce, risk, wn, un


def _interval_result(task, S, eta, lam0, flat, shape) -> LemmaBScale:
    """:func:`lemma_b_scale` with ``precision="interval"``: one enclosure per λ, from the float path's guess."""
    flint_module()
    guess = _float(S, eta, flat, lam0)[0] * eta
    encl = [_interval(S, task.n_c, task.n_w, task.L, task.K, float(x), float(g)) for x, g in zip(flat, guess)]
    t, q, risk, ce, wn, un = (enclosure_array([e[i] for e in encl], shape) for i in range(6))
    return LemmaBScale(
        lam=float(flat[0]) if not shape else flat.reshape(shape), t_star=t, q_star=q, risk=risk, ce=ce,
        word_norm=wn, u_norm=un, lambda0=lam0, eta=float(eta),
        trivial=bool(t.mid == 0) if not shape else np.asarray(t.mid) == 0, sphere_sizes=S,
    )  # fmt: skip


@public(task=Instance(Task), lam=LAM, precision=Choice("float", "mp", "interval"), dps=DPS)
def lemma_b_scale(task, *, lam, precision: str = "float", dps: int = 50) -> LemmaBScale:
    """The optimal scale t* of type I on a Lemma-B latent set, its risk min H_Z and the word norm.

    The closed form of the module docstring: t* = −log(q*)/η with q* the root in (0, 1) of
    Σ_r (ηr − λ)|S_r| q^r = λ (the stationarity condition of H_Z, Theorem 1's H(t) with the set's own
    sphere sizes |S_r(k)| of Lemma B (i) in place of the counts (39) that Assumption A (35) gives), t* = 0
    iff λ ≥ λ₀,Z = ηΣ_r r|S_r|/K. The word norm √(t*/n_w) and ‖u_{k,ℓ}‖ = √(t*/(KL)) are those of the
    type-I configuration at ‖W‖² = ‖U‖² = t*; proofs_check's ``lemmaB-optimal-scale`` checks that it is the
    certified global minimiser of (5) (:func:`fctheory.risk.optimum`).

    Parameters
    ----------
    task : Task
        Uniform word frequencies and a latent set satisfying Lemma B (i)–(iii) (checked exactly by
        :func:`fctheory.lemma_B_properties`); K < n_c^L allowed. On the full set t* = τ of Theorem 1.
    lam : float or array_like
        λ > 0 of (5); the fields broadcast like ``lam``.
    precision : {"float", "mp"}
        "float": safeguarded Newton on s = ηt for Σ r w_r/Σ w_r = λ/η (w_r = |S_r|e^(−rs)), relative
        error a few ulps except within ~1e-8 of λ₀,Z, where t* ∝ λ₀,Z − λ inherits the cancellation.
        "mp": the polynomial in q as printed, rooted by bracketing in mpmath with ``dps`` digits (the
        reference; fields are ``mpf`` or object arrays).
        "interval": certified enclosures (python-flint, the ``fctheory[certify]`` extra): t* = 0 decided in
        exact rationals, otherwise interval Newton on s = ηt*; ``t_star``, ``q_star``, ``risk``, ``ce``,
        ``word_norm`` and ``u_norm`` are :class:`~fctheory._interval.Enclosure` objects (relative width below
        1e-17 at the default precision, docs/certified.md).
    dps : int
        Decimal digits for "mp", in [20, 1000].

    Returns
    -------
    LemmaBScale

    Raises
    ------
    FCTheoryError
        Bad input, non-uniform word frequencies, or a latent set that does not satisfy Lemma B.

    Examples
    --------
    >>> import numpy as np, fctheory as fc
    >>> task = fc.Task(2, 2, 3, np.array([[0, 0, 0], [0, 1, 1], [1, 0, 1], [1, 1, 0]]), "uniform")
    >>> b = lemma_b_scale(task, lam=0.05)
    >>> b.sphere_sizes.tolist(), round(b.t_star, 6), round(b.word_norm, 6)
    ([0, 3, 0], 5.98329, 1.223038)
    """
    lam_a = float_array("lam", lam, lo=0, lo_open=True)
    S = _sizes(task)
    n_c, n_w, L, K = task.n_c, task.n_w, task.L, task.K
    r = np.arange(1, L + 1)
    eta = n_c / (n_c - 1) / np.sqrt(float(n_w) * K * L)
    lam0 = float(eta * np.dot(r, S) / K)
    flat = np.atleast_1d(lam_a).ravel()
    if precision == "mp":
        t, q, ce, risk, wn, un = _mp_fields(S, n_c, n_w, L, K, flat, dps)
    elif precision == "interval":
        return _interval_result(task, S, eta, lam0, flat, np.shape(lam_a))
    else:
        t, q, ce = _float(S, eta, flat, lam0)
        risk, wn, un = ce + flat * t, np.sqrt(t / n_w), np.sqrt(t / (K * L))
    shape = np.shape(lam_a)

    def out(x):
        x = np.asarray(x).reshape(shape)
        return x[()] if x.dtype == object and x.ndim == 0 else (float(x) if x.ndim == 0 else x)

    trivial = np.asarray([x == 0 for x in t]).reshape(shape)
    return LemmaBScale(
        lam=out(flat),
        t_star=out(t),
        q_star=out(q),
        risk=out(risk),
        ce=out(ce),
        word_norm=out(wn),
        u_norm=out(un),
        lambda0=lam0,
        eta=float(eta),
        trivial=bool(trivial) if trivial.ndim == 0 else trivial,
        sphere_sizes=S,
    )
