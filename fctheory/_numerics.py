"""Overflow-free numerics shared by the whole library: one home for each trick.

* Exact power-of-two rescaling (:func:`pow2_exponent`, :func:`pow2_scale`, :func:`pow2_unscale`,
  :func:`column_exponents`): dividing by 2^e only changes the exponent of every float, so it is
  exact (barring underflow of entries 2^-1074 below the largest) and cannot overflow. Scale-invariant
  quantities (cosines, φ, relative distances) are computed on A·2^-e; norms and singular values are
  computed on A·2^-e and multiplied back by 2^e, so 1e300 and 1e-300 inputs neither overflow nor
  underflow in their squares.
* :func:`safe_norm` and :func:`norms`: Frobenius / column norms by that rescaling.
* The predictors' building blocks (float64 or long double): ``log1p_aexpm1`` and its derivative, and
  the safeguarded vectorised Newton :func:`solve_monotone`. They are ufunc compositions, so they work
  elementwise on float64 arrays (the fast path) and ``np.longdouble`` (the final Newton polish:
  64-bit mantissa on x86-64, which buys the ~3 digits lost to conditioning near thresholds).
* Double-double arithmetic (:func:`two_sum`, :func:`two_prod`, :func:`dd_add`, :func:`dd_mul`,
  :func:`dd_div`, :func:`dd_sqrt`): a value is an unevaluated pair (hi, lo) of float64 arrays with
  |lo| ≤ ulp(hi)/2, i.e. about 106 bits, built from error-free transformations (Knuth's two-sum, Dekker's
  two-product). It is portable (unlike ``np.longdouble``, which is float64 on some platforms) and is what
  a difference of two nearly equal closed forms needs (λ₀ − λ near the threshold of Theorem 1).

Every function taking ``xp`` works on NumPy or CuPy arrays and PyTorch tensors (``xp`` is the array
namespace, see :func:`fctheory._backend.array_namespace_of`).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import expit

from ._backend import array_namespace_of, is_torch

__all__ = [
    "expit",
    "log1p_aexpm1",
    "log1p_aexpm1_prime",
    "solve_monotone",
    "pow2_exponent",
    "pow2_scale",
    "pow2_unscale",
    "ldexp",
    "column_exponents",
    "safe_norm",
    "norms",
    "two_sum",
    "two_prod",
    "dd_add",
    "dd_mul",
    "dd_div",
    "dd_sqrt",
]


# ----------------------------------------------------------------------------- exact power-of-two rescaling
def pow2_exponent(A, xp=np) -> int:
    """e with max|A|·2^-e in [0.5, 1); 0 for an empty or all-zero A (then nothing is rescaled).

    A non-finite maximum gives 0 as well: the caller's own finiteness checks then see the inf/NaN.
    """
    # the method, not xp.max: the same reduction in NumPy, CuPy and PyTorch without NumPy's Python wrapper
    a = float(abs(A).max()) if math.prod(A.shape) else 0.0
    return int(math.frexp(a)[1]) if a > 0.0 and math.isfinite(a) else 0


def pow2_scale(A, e: int, xp=np):
    """A·2^-e (exact; A itself when e = 0). Entries more than 2^1074 below the largest underflow to 0."""
    if not e:
        return A
    # scaling up cannot underflow, torch raises no floating-point warnings, and NumPy's default ignores
    # underflow: the errstate block (a dozen Python calls) is entered only under a caller's stricter setting
    if e < 0 or is_torch(A) or np.geterr()["under"] == "ignore":
        return ldexp(A, -e, xp)
    with np.errstate(under="ignore"):
        return ldexp(A, -e, xp)


def pow2_unscale(A, e: int, xp=np):
    """A·2^e (A itself when e = 0); the caller checks the result for overflow where it can happen."""
    if not e:
        return A
    with np.errstate(over="ignore", under="ignore"):
        return ldexp(A, e, xp)


def ldexp(A, e: int, xp=np):
    """A·2^e for a float64 array of any namespace, rounded once like C's ``ldexp``.

    NumPy and CuPy have ``ldexp``; ``torch.ldexp`` multiplies by ``2.0**e``, which overflows to inf
    for e > 1023 and underflows to 0 for e < −1074 although A·2^e may be representable. For tensors
    A = m·2^x (``frexp``, m in [0.5, 1)) is multiplied by the exact power 2^(x+e), built from its bits:
    one rounding per entry, so the result is bitwise NumPy's.
    """
    if not is_torch(A):
        return xp.ldexp(A, e)
    return _torch_ldexp(A, int(e), xp)


def _torch_ldexp(A, e: int, xp):
    m, x = xp.frexp(A)
    p = xp.astype(x, xp.int64) + e
    # 2^1024 is not a float64: m·2^1024 = (2m)·2^1023 (2m is exact)
    big = p > 1023
    m = xp.where(big, 2.0 * m, m)
    p = xp.where(big, p - 1, p)
    one = xp.ones_like(p)
    # bits of 2^p: biased exponent for normal numbers, a single mantissa bit for subnormal ones, 0
    # below 2^-1074 (the product rounds to ±0 there) and inf above 2^1023 (it overflows)
    normal = xp.bitwise_left_shift(xp.clip(p, -1022, 1024) + 1023, one * 52)
    sub = xp.bitwise_left_shift(one, xp.clip(p + 1074, 0, 51))
    bits = xp.where(p >= -1022, normal, xp.where(p >= -1074, sub, 0 * one))
    out = m * bits.view(A.dtype)
    return xp.where(A == 0, A, out)


def column_exponents(A, xp=np, *, keepdims: bool = False):
    """Per-column e with max_i |A_ij|·2^-e_j in [0.5, 1) (0 for an all-zero column), as an int array."""
    amax = xp.max(xp.abs(A), axis=0, keepdims=keepdims)
    _, e = xp.frexp(amax)
    return xp.where(amax > 0, e, 0)


def safe_norm(*arrays) -> float:
    """Frobenius norm of the concatenated arrays by exact power-of-two rescaling (squares cannot overflow).

    inf or NaN entries give inf/NaN; an overflowing norm (entries near 1.8e308) gives inf. NumPy data
    (lists included), CuPy arrays and PyTorch tensors: each array is reduced in float64 on its own device,
    only scalars reach the host.
    """
    if len(arrays) == 1 and type(arrays[0]) is np.ndarray and arrays[0].dtype == np.float64:
        return _safe_norm_numpy(arrays[0])
    arrays = [_float64_array(a) for a in arrays]
    m = max((float(xp.max(xp.abs(a))) for xp, a in arrays if math.prod(a.shape)), default=0.0)
    if m == 0.0 or not math.isfinite(m):
        return m
    e = math.frexp(m)[1]
    s = math.sqrt(sum(float(xp.sum(ldexp(a, -e, xp) ** 2)) for xp, a in arrays))
    try:
        return math.ldexp(s, e)  # rounded once, like np.ldexp
    except OverflowError:
        return math.inf


def _safe_norm_numpy(a) -> float:
    """safe_norm of one float64 NumPy array (the common case, without the namespace dispatch).

    Where the largest entry lies in [2^-400, 2^400] no square can overflow and the rescaling is exact, so
    √(Σa²) is bitwise the rescaled √(Σ(a·2^-e)²)·2^e: it is computed directly.
    """
    m = float(abs(a).max()) if a.size else 0.0
    if m == 0.0 or not math.isfinite(m):
        return m
    e = math.frexp(m)[1]
    if -400 <= e <= 400:
        return math.sqrt(float((a * a).sum()))
    with np.errstate(under="ignore"):
        s = math.sqrt(float((np.ldexp(a, -e) ** 2).sum()))
    try:
        return math.ldexp(s, e)
    except OverflowError:
        return math.inf


def _float64_array(a):
    """(xp, a as a float64 array of its own namespace): NumPy for host data, else the array's library."""
    if is_torch(a) or type(a).__module__.startswith("cupy"):
        xp = array_namespace_of(a)
        return xp, xp.astype(a, xp.float64) if is_torch(a) else a.astype(xp.float64, copy=False)
    return np, np.asarray(a, dtype=np.float64)


def norms(M, axis: int, xp=np):
    """Euclidean norms of M along ``axis`` (columns: 0, rows: 1) by exact power-of-two rescaling.

    Overflowing results (norms beyond 1.8e308) are inf; the caller refuses them, naming its input.
    """
    e = pow2_exponent(M, xp)
    return pow2_unscale(xp.linalg.norm(pow2_scale(M, e, xp), axis=axis), e, xp)


# ----------------------------------------------------------------------------- the predictors' building blocks


def log1p_aexpm1(logA, log1mA, t):
    """ℓ(A, t) = log(1 + A(e^t − 1)) for A ∈ [0, 1], t ≥ 0, given log A and log(1 − A).

    For small t it is log1p(A·expm1(t)) (accurate relative to its tiny size); for t ≥ 1 it is
    logaddexp(log(1 − A), log A + t), which cannot overflow however large t is.
    """
    small = t < 1
    ts = np.where(small, t, 0)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        a_small = np.log1p(np.exp(logA) * np.expm1(ts))
        a_big = np.logaddexp(log1mA, logA + t)
    return np.where(small, a_small, a_big)


def log1p_aexpm1_prime(logA, log1mA, t):
    """∂ℓ(A, t)/∂t = A e^t/(1 − A + A e^t) = expit(t + log A − log(1 − A))."""
    with np.errstate(invalid="ignore"):
        return expit(t + logA - log1mA)


def solve_monotone(
    fun, lo, hi, x0=None, *, increasing: bool, rtol: float, maxiter: int = 200, atol: float = 0.0, n_bisect: int = 0
):
    """Vectorised safeguarded Newton for a monotone scalar equation, elementwise.

    ``fun(x, mask)`` returns ``(f, f')`` at ``x[mask]``.  ``lo``/``hi`` bracket the root
    (sign of f known at each end); a Newton step leaving the bracket is replaced by bisection.
    Stops elementwise when the step is below ``rtol·|x| + atol``. ``n_bisect`` plain bisection
    steps are taken first (from the bracket midpoint when ``x0`` is None): cheap insurance
    against the slow Newton crawl on the far side of an exponential.

    Returns the root array and the number of iterations used by the slowest element.
    """
    lo = np.array(lo, copy=True)
    hi = np.array(hi, copy=True)
    for _ in range(n_bisect):
        mid = 0.5 * (lo + hi)
        f, _fp = fun(mid, (slice(None),))
        below = (f > 0) == increasing
        hi = np.where(below, mid, hi)
        lo = np.where(below, lo, mid)
    x = np.array(0.5 * (lo + hi) if x0 is None else x0, copy=True)
    active = np.ones(x.shape, dtype=bool)
    it = 0
    for it in range(1, maxiter + 1):
        idx = np.nonzero(active)
        f, fp = fun(x[idx], idx)
        xi, loi, hii = x[idx], lo[idx], hi[idx]
        pos = f > 0
        # the root is below x where (f > 0) == increasing
        below = pos == increasing
        hii = np.where(below, xi, hii)
        loi = np.where(below, loi, xi)
        with np.errstate(divide="ignore", invalid="ignore"):
            xn = xi - f / fp
        bad = ~np.isfinite(xn) | (xn <= loi) | (xn >= hii)
        xn = np.where(bad, 0.5 * (loi + hii), xn)
        step = np.abs(xn - xi)
        done = (step <= rtol * np.abs(xn) + atol) | (f == 0)
        x[idx], lo[idx], hi[idx] = np.where(f == 0, xi, xn), loi, hii
        sub = np.zeros(active.shape, dtype=bool)
        sub[idx] = done
        active &= ~sub
        if not active.any():
            break
    return x, it


# ----------------------------------------------------------------------------- double-double arithmetic
# Each operation's relative error is a small multiple of 2^-104 (Joldes, Muller, Popescu, "Tight and rigorous
# error bounds for basic building blocks of double-word arithmetic", ACM TOMS 2017); inputs are assumed to
# be scaled so that no intermediate over- or underflows (|x| between about 2^-900 and 2^900).
_SPLITTER = 134217729.0  # 2^27 + 1: Veltkamp's constant splitting a double into two 26-bit halves


def two_sum(a, b):
    """(s, e) with s = fl(a + b) and s + e = a + b exactly (Knuth; no condition on |a|, |b|)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _fast_two_sum(a, b):
    """two_sum for |a| ≥ |b| (or a = 0): three operations (Dekker)."""
    s = a + b
    return s, b - (s - a)


def _split(a):
    c = _SPLITTER * a
    hi = c - (c - a)
    return hi, a - hi


def two_prod(a, b):
    """(p, e) with p = fl(a·b) and p + e = a·b exactly (Dekker's product; NumPy has no fused multiply-add)."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def dd_add(x, y):
    """x + y for double-doubles x = (hi, lo), y = (hi, lo) (a float is (v, 0))."""
    s, e = two_sum(x[0], y[0])
    t, f = two_sum(x[1], y[1])
    s, e = _fast_two_sum(s, e + t)
    return _fast_two_sum(s, e + f)


def dd_mul(x, y):
    """x·y for double-doubles."""
    p, e = two_prod(x[0], y[0])
    return _fast_two_sum(p, e + (x[0] * y[1] + x[1] * y[0]))


def dd_div(x, y):
    """x/y for double-doubles: one long-division step on the float quotient."""
    q = x[0] / y[0]
    r = dd_add(x, dd_mul((-q, 0.0 * q), y))  # x − q·y, small: its float value is enough
    return _fast_two_sum(q, (r[0] + r[1]) / y[0])


def dd_sqrt(x):
    """√x for a double-double x > 0: one Newton step s + (x − s²)/(2s) from the float root s."""
    s = np.sqrt(x[0])
    r = dd_add(x, dd_mul((-s, 0.0 * s), (s, 0.0 * s)))
    return _fast_two_sum(s, (r[0] + r[1]) / (2.0 * s))
