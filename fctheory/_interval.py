"""Certified enclosures (``precision="interval"``): python-flint ``arb`` balls shared by the predictors.

Every quantity is computed in ball arithmetic (:mod:`flint`'s ``arb``: a midpoint and a radius that
provably contains the exact value of the formula for the exact inputs). The inputs themselves are exact:
integers stay integers and a float64 λ or μ_β is the dyadic rational it stores.

* Closed forms (λ₀ of Theorem 1, λ_max of condition (9)) are evaluated directly.
* A root of an increasing scalar function (H′ of Theorem 1, H*′ of Theorem 3) is enclosed by the interval
  Newton method (:func:`newton_root`): a bracket with certified signs f(lo) < 0 < f(hi) and f′ > 0 on the
  whole bracket (so the root exists and is unique in it), narrowed by X ← X ∩ (m − f(m)/f′(X)).
* A root of a square system ((7)–(8) of Theorem 2) is enclosed by the Krawczyk operator (:func:`krawczyk`):
  K(X) ⊂ interior(X) proves that X contains exactly one zero, and that zero lies in K(X).

Each solver doubles the working precision (from :data:`PREC0` bits up to :data:`PREC_MAX`) until the
enclosure's relative radius is below :data:`REL_TARGET`, and returns the tightest certified result it
reached. python-flint is an optional dependency (``pip install fctheory[certify]``), imported on first use.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ._errors import FCTheoryError
from ._validate import fail, result_type

__all__ = [
    "Enclosure",
    "PREC0",
    "PREC_MAX",
    "REL_TARGET",
    "flint_module",
    "workprec",
    "exact_arb",
    "exact_fmpq",
    "enclosure",
    "enclosure_array",
    "rel_rad",
    "newton_root",
    "krawczyk",
    "latent_terms",
    "bisect_to_newton",
    "bracket_increasing",
    "adaptive",
    "exact_one_minus_p",
]

PREC0 = 128  # first working precision (bits)
PREC_MAX = 4096  # last working precision tried before returning the best enclosure reached
REL_TARGET = 1e-17  # relative radius aimed at: below the float64 resolution, so ``mid`` is the rounded value


def flint_module():
    """python-flint, or the project error saying how to install it."""
    try:
        import flint  # noqa: PLC0415 - optional dependency (the certify extra)
    except ImportError as exc:
        raise FCTheoryError(
            "precision='interval' needs python-flint (arb ball arithmetic), which is not installed: "
            "pip install 'fctheory[certify]'"
        ) from exc
    return flint


@contextlib.contextmanager
def workprec(prec: int):
    """flint's working precision set to ``prec`` bits inside the block (restored afterwards).

    flint keeps one global precision: calls running in several threads at once share it (their results stay
    certified enclosures; only their widths may differ from a single-threaded run).
    """
    flint = flint_module()
    old = flint.ctx.prec
    flint.ctx.prec = int(prec)
    try:
        yield flint
    finally:
        flint.ctx.prec = old


def _mpf_man_exp(x):
    """(man, exp) with x = man·2^exp exactly, the sign included, for a finite mpmath mpf; None if not finite.

    (``mpf.man_exp`` is the pair of the *absolute* value: −0.5 gives (1, −1).)
    """
    sign, man, exp, _ = x._mpf_
    if not man and exp:  # ±inf, nan (zero is (0, 0, 0, 0))
        return None
    return (-int(man) if sign else int(man)), int(exp)


def exact_fmpq(x):
    """An int, a float64 or an mpmath mpf as the exact rational ``flint.fmpq`` it represents."""
    flint = flint_module()
    if hasattr(x, "_mpf_"):  # mpmath.mpf: man·2^exp
        parts = _mpf_man_exp(x)
        if parts is None:
            x = float(x)  # ±inf, nan: refused below like the float
        else:
            return flint.fmpq(parts[0]) * flint.fmpq(2) ** parts[1]
    q = Fraction(float(x)) if isinstance(x, (float, np.floating)) else Fraction(int(x))
    return flint.fmpq(q.numerator, q.denominator)


def exact_arb(x):
    """An int, a float64, an mpmath mpf or an ``arb`` as an exact ``arb`` (radius 0 unless already a ball)."""
    flint = flint_module()
    if isinstance(x, flint.arb):
        return x
    if hasattr(x, "_mpf_"):  # mpmath.mpf: man·2^exp, exact at any working precision
        parts = _mpf_man_exp(x)
        if parts is None:
            return flint.arb(float(x))  # ±inf, nan: as the float (a ball that contains nothing finite)
        return flint.arb((flint.fmpz(parts[0]), parts[1]))
    if isinstance(x, (float, np.floating)):
        return flint.arb(float(x))  # a double is exact in arb
    return flint.arb(flint.fmpz(int(x)))


def rel_rad(ball) -> float:
    """Radius / |midpoint| of a ball (0 for an exact ball; inf when the ball contains 0 otherwise).

    Formed in ball arithmetic (the radius and midpoint may lie outside the float64 range), rounded up.
    """
    flint = flint_module()
    if ball.is_exact():
        return 0.0
    if ball.mid().is_zero():
        return float("inf")
    q = flint.arb(ball.rad()) / abs(flint.arb(ball.mid()))
    return _up(flint, q.upper())


def _down(flint, point) -> float:
    """The largest float64 ≤ the exact point."""
    f = float(point)
    if flint.arb(f) > point:
        f = float(np.nextafter(f, -np.inf))
    return f


def _up(flint, point) -> float:
    f = float(point)
    if flint.arb(f) < point:
        f = float(np.nextafter(f, np.inf))
    return f


@result_type
@dataclass(frozen=True)
class Enclosure:
    """A certified enclosure of a real number (or of an array of them), from ``precision="interval"``.

    Attributes
    ----------
    ball : flint.arb or ndarray of flint.arb
        The ball [mid ± rad] in full precision; it contains the exact value.
    lo, hi : float or ndarray
        float64 bounds rounded outwards: lo ≤ exact value ≤ hi.
    mid : float or ndarray
        The midpoint rounded to float64 (the float result, correctly rounded when rad is small enough).
    rad : float or ndarray
        An upper bound of the ball's radius (it may underflow to 0 for a value near 1e-300: use ``rel_width``).
    rel_width : float or ndarray
        An upper bound of the relative width 2·rad/|mid| of the ball (0 for an exact value such as τ = 0).
    prec : int or ndarray
        The working precision (bits) that produced the ball; 0 for a value decided exactly (τ = 0 when λ ≥ λ₀).
    """

    ball: object
    lo: object
    hi: object
    mid: object
    rad: object
    rel_width: object
    prec: object

    @property
    def width(self):
        """hi − lo of the float64 bounds (≥ 2·rad, rounded outwards)."""
        return np.asarray(self.hi) - np.asarray(self.lo) if np.ndim(self.lo) else self.hi - self.lo

    def contains(self, value):
        """Whether the ball certainly contains ``value`` (int, float, mpmath mpf or arb; arrays elementwise)."""
        if np.ndim(self.ball) == 0 and not isinstance(self.ball, np.ndarray):
            return bool(self.ball.contains(exact_arb(value)))
        balls = np.asarray(self.ball, dtype=object)
        vals = np.broadcast_to(np.asarray(value, dtype=object), balls.shape)
        return np.array([b.contains(exact_arb(v)) for b, v in zip(balls.ravel(), vals.ravel())]).reshape(balls.shape)

    def __float__(self):
        return float(self.mid)


def enclosure(ball, prec: int) -> Enclosure:
    """The :class:`Enclosure` of one ball."""
    flint = flint_module()
    return Enclosure(
        ball=ball,
        lo=_down(flint, ball.lower()),
        hi=_up(flint, ball.upper()),
        mid=float(ball.mid()),
        rad=_up(flint, flint.arb(ball.rad())),
        rel_width=2 * rel_rad(ball),
        prec=int(prec),
    )


def enclosure_array(items, shape) -> Enclosure:
    """One :class:`Enclosure` of arrays (shape ``shape``) from a flat list of scalar enclosures."""
    if not shape:
        return items[0]
    balls = np.empty(len(items), dtype=object)
    balls[:] = [e.ball for e in items]

    def col(name, dtype):
        return np.array([getattr(e, name) for e in items], dtype=dtype).reshape(shape)

    return Enclosure(
        ball=balls.reshape(shape),
        lo=col("lo", float),
        hi=col("hi", float),
        mid=col("mid", float),
        rad=col("rad", float),
        rel_width=col("rel_width", float),
        prec=col("prec", int),
    )


def latent_terms(n_c: int, L: int, K: int, om, s):
    """Ball values at s of E1, 1 − E1, E2, 1 − E2 of :mod:`fctheory._latent` (Theorem 1/3's G′ = −L·E1·E2).

    With u = (n_c − 1)e^{−s}: E1 = u/(1 + u) and E2 = p(1+u)^L/(1 − p + p(1+u)^L), p = K/n_c^L, written with
    w = (1 + u)/n_c ≤ 1 so that p(1+u)^L = K·w^L stays in range; ``om`` = 1 − p (exact).
    """
    flint = flint_module()
    u = (n_c - 1) * (-s).exp()
    one_u = 1 + u
    Kw = flint.arb(flint.fmpz(K)) * (one_u / n_c) ** L
    den = om + Kw
    return u / one_u, 1 / one_u, Kw / den, om / den


def newton_root(f, fprime, lo, hi, *, max_iter: int = 60):
    """Certified enclosure of the unique zero of an increasing ``f`` in [lo, hi] (interval Newton).

    ``f`` and ``fprime`` map an ``arb`` ball to a ball enclosing the range of f (f′) over it. The caller's
    bracket must satisfy f(lo) < 0 < f(hi) (certainly, in ball arithmetic); f′(X) > 0 is verified on the
    whole of X = [lo, hi], which makes the zero unique in X. Returns the final ball, or None when the bracket
    or the derivative cannot be certified at the current precision.
    """
    flint = flint_module()
    lo, hi = exact_arb(lo), exact_arb(hi)
    if not (f(lo) < 0 and f(hi) > 0):
        return None
    X = lo.union(hi)
    if not fprime(X) > 0:
        return None
    for _ in range(max_iter):
        m = flint.arb(X.mid())
        d = fprime(X)
        if not d > 0:  # cannot happen on a sub-box once proven on X, but a wide ball may lose the sign
            break
        N = m - f(m) / d
        if not N.overlaps(X):
            return None  # impossible when the bracket is certified: a sign error upstream
        Y = N.intersection(X)
        if Y.rad() >= X.rad() * 0.75:
            X = Y
            break
        X = Y
    return X


def krawczyk(F, J, x0, rho: float, *, refine: int = 40, rounds: int = 4):
    """Certified enclosure of a zero of F: R^n → R^n near ``x0`` by the Krawczyk test.

    ``F(x)`` returns a list of n balls, ``J(x)`` an n×n ``arb_mat`` enclosing the Jacobian over the box x
    (a list of balls). ``x0`` (floats) is first refined by Newton steps on the midpoints (not rigorous,
    only a centre), then X = [x̃ ± rho] is tested: with Y ≈ J(x̃)⁻¹,

        K(X) = x̃ − Y·F(x̃) + (I − Y·J(X))·(X − x̃) ⊂ interior(X)

    proves that X holds exactly one zero of F, which lies in K(X) (Krawczyk 1969; Moore, Kearfott & Cloud,
    *Introduction to Interval Analysis*, §8.2). The test is repeated with X ← K(X) to tighten. Returns the
    list of n enclosing balls, or None when the inclusion fails at the current precision.
    """
    flint = flint_module()
    n = len(x0)
    x = [flint.arb(v) for v in x0]
    for _ in range(refine):
        try:
            step = J(x).mid().solve(flint.arb_mat(n, 1, [v.mid() for v in F(x)]))
        except (ZeroDivisionError, ValueError):
            return None
        x = [flint.arb((xi - step[i, 0]).mid()) for i, xi in enumerate(x)]
        size = max(abs(float(step[i, 0].mid())) for i in range(n))
        if size <= 2.0 ** (-0.9 * flint.ctx.prec):
            break
    X = [flint.arb(xi, rho) for xi in x]
    proven = None
    for _ in range(rounds):
        xt = [flint.arb(v.mid()) for v in X]
        try:
            Y = J(xt).mid().inv().mid()
        except (ZeroDivisionError, ValueError):
            return proven
        Fx = flint.arb_mat(n, 1, F(xt))
        dX = flint.arb_mat(n, 1, [X[i] - xt[i] for i in range(n)])
        M = flint.arb_mat([[int(i == j) for j in range(n)] for i in range(n)]) - Y * J(X)
        Kv = flint.arb_mat(n, 1, xt) - Y * Fx + M * dX
        K = [Kv[i, 0] for i in range(n)]
        if not all(X[i].contains_interior(K[i]) for i in range(n)):
            return proven
        proven = K
        if all(K[i].rad() >= 0.75 * X[i].rad() for i in range(n)):
            break
        X = K
    return proven


def bisect_to_newton(f, fprime, lo: float, hi: float, *, max_bisect: int = 200):
    """:func:`newton_root` on [lo, hi], bisecting first (on certified signs) while f′ > 0 cannot be certified.

    ``lo`` < ``hi`` must satisfy f(lo) < 0 < f(hi) (checked). Returns a ball or None.
    """
    flint = flint_module()
    a, b = exact_arb(lo), exact_arb(hi)
    if not (f(a) < 0 and f(b) > 0):
        return None
    for _ in range(max_bisect):
        X = newton_root(f, fprime, a, b)
        if X is not None:
            return X
        m = flint.arb(((a + b) / 2).mid())
        fm = f(m)
        if fm < 0:
            a = m
        elif fm > 0:
            b = m
        else:
            return None  # the midpoint is indistinguishable from the root at this precision
    return None


def bracket_increasing(f, guess: float, *, zero_negative: bool = True, max_steps: int = 400):
    """A float bracket [lo, hi] of the zero of an increasing f on [0, ∞) with f(lo) < 0 < f(hi) certified.

    ``guess`` is the float path's root (0 or nan when it has none). Tries relative neighbourhoods of the
    guess first, then walks out geometrically (from 0 when f(0) < 0 is known, ``zero_negative``).
    Returns None when no bracket is found.
    """
    if np.isfinite(guess) and guess > 0:
        for delta in (1e-9, 1e-6, 1e-3, 0.5):
            lo, hi = guess * (1 - delta), guess * (1 + delta)
            if f(exact_arb(lo)) < 0 and f(exact_arb(hi)) > 0:
                return lo, hi
    lo = 0.0 if zero_negative else None
    hi = guess if np.isfinite(guess) and guess > 0 else 1e-300
    for _ in range(max_steps):
        v = f(exact_arb(hi))
        if v > 0:
            break
        if v < 0:
            lo = hi
        hi = min(hi * 2.0**16, 1e300)
    else:
        return None
    if lo is None:
        lo = hi
        for _ in range(max_steps):
            lo = lo / 2.0**16
            if f(exact_arb(lo)) < 0:
                break
        else:
            return None
    return lo, hi


def adaptive(solve, *, what: str):
    """Run ``solve(prec)`` (a ball, a list of balls or None) at PREC0, 2·PREC0, … ≤ PREC_MAX bits.

    Stops at the first precision whose result has every relative radius ≤ REL_TARGET and returns
    ``(result, prec)``; otherwise the last certified result. Raises FCTheoryError when no precision certified.
    """
    best = None
    prec = PREC0
    while prec <= PREC_MAX:
        with workprec(prec):
            out = solve(prec)
        if out is not None:
            best = (out, prec)
            balls = out if isinstance(out, (list, tuple)) else [out]
            if all(rel_rad(b) <= REL_TARGET for b in balls):
                break
        prec *= 2
    if best is None:
        fail(
            "precision",
            "interval",
            f"could not certify {what} up to {PREC_MAX} bits (the enclosure test failed); "
            "use precision='mp' for a reference value",
        )
    return best


def exact_one_minus_p(n_c: int, L: int, K: int):
    """1 − p = (n_c^L − K)/n_c^L as an exact ``fmpq``; refuses K > n_c^L (the float check allows 1e-15 slack)."""
    flint = flint_module()
    N = flint.fmpz(int(n_c)) ** int(L)
    K = flint.fmpz(int(K))
    if K > N:
        fail("K", int(K), f"must be <= n_c**L = {int(n_c)}**{int(L)} (the number of latent variables)")
    return flint.fmpq(N - K, N)
