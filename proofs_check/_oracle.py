"""Independent reference computations for the checks of the library (nothing here calls fctheory).

* H, H′, H″, H*, H*′, H*″ and their minimisers τ, τ* in mpmath (50 digits) from the formulas as printed in
  Theorems 1 and 3, with the derivatives written out by hand;
* Theorem 2's system (7)–(8) solved in mpmath by nested bracketed root finding (Proposition D);
* λ_max of condition (9) from its closed form;
* the equiangular frame (4) from a Helmert basis and the LayerNorm φ, in numpy.
"""

from __future__ import annotations

import mpmath
import numpy as np

DPS = 50
mpf = mpmath.mpf


def _consts(n_c, L, K):
    n, L, K = mpf(n_c), mpf(L), mpf(K)
    return n, L, K, K / n**L


def eta(n_c, n_w, L, K):
    """η = κ/√(n_w K L), κ = n_c/(n_c−1) (Theorem 1)."""
    n = mpf(n_c)
    return n / (n - 1) / mpmath.sqrt(mpf(n_w) * mpf(K) * mpf(L))


def eta_star(n_c, L, K, d):
    """η* = κ/√(KL/d) (Theorem 3)."""
    n = mpf(n_c)
    return n / (n - 1) / mpmath.sqrt(mpf(K) * mpf(L) / mpf(d))


def _log_parts(s, n_c, L, K):
    """q(s) = 1 − p + p(1+u)^L with u = (n_c−1)e^{−s}, and q′(s), q″(s) (derivatives in s)."""
    n, L, K, p = _consts(n_c, L, K)
    u = (n - 1) * mpmath.exp(-s)
    q = 1 - p + p * (1 + u) ** L
    q1 = -p * L * (1 + u) ** (L - 1) * u  # du/ds = −u
    q2 = p * L * (L - 1) * (1 + u) ** (L - 2) * u * u + p * L * (1 + u) ** (L - 1) * u
    return q, q1, q2


def H(t, n_c, n_w, L, K, lam):
    """Theorem 1: H(t) = log(1 − K/n_c^L + (K/n_c^L)(1 + (n_c−1)e^{−ηt})^L) + λt."""
    with mpmath.workdps(DPS):
        e = eta(n_c, n_w, L, K)
        q, _, _ = _log_parts(e * mpf(t), n_c, L, K)
        return mpmath.log(q) + mpf(lam) * mpf(t)


def H_prime(t, n_c, n_w, L, K, lam):
    with mpmath.workdps(DPS):
        e = eta(n_c, n_w, L, K)
        q, q1, _ = _log_parts(e * mpf(t), n_c, L, K)
        return mpf(lam) + e * q1 / q


def H_second(t, n_c, n_w, L, K):
    with mpmath.workdps(DPS):
        e = eta(n_c, n_w, L, K)
        q, q1, q2 = _log_parts(e * mpf(t), n_c, L, K)
        return e * e * (q2 * q - q1 * q1) / (q * q)


def H_star(t, n_c, L, K, d, lam):
    """Theorem 3: H*(t) = log(1 − K/n_c^L + (K/n_c^L)(1 + (n_c−1)e^{−η*t})^L) + λt²/2."""
    with mpmath.workdps(DPS):
        e = eta_star(n_c, L, K, d)
        q, _, _ = _log_parts(e * mpf(t), n_c, L, K)
        return mpmath.log(q) + mpf(lam) * mpf(t) ** 2 / 2


def H_star_prime(t, n_c, L, K, d, lam):
    with mpmath.workdps(DPS):
        e = eta_star(n_c, L, K, d)
        q, q1, _ = _log_parts(e * mpf(t), n_c, L, K)
        return mpf(lam) * mpf(t) + e * q1 / q


def H_star_second(t, n_c, L, K, d, lam):
    with mpmath.workdps(DPS):
        e = eta_star(n_c, L, K, d)
        q, q1, q2 = _log_parts(e * mpf(t), n_c, L, K)
        return mpf(lam) + e * e * (q2 * q - q1 * q1) / (q * q)


def lambda_trivial(n_c, n_w, L, K):
    """λ₀ = −H′(0) + λ: the slope of the log term at 0, from the hand-written derivative."""
    with mpmath.workdps(DPS):
        return -(H_prime(0, n_c, n_w, L, K, 0))


def _bisect_root(f, lo, hi, iters=400):
    """Root of f on [lo, hi] with a sign change: Illinois (regula falsi) steps, a bisection step whenever
    the bracket did not halve over two steps; stops at a relative bracket width 10^(5−dps)."""
    lo, hi = mpf(lo), mpf(hi)
    flo, fhi = f(lo), f(hi)
    if flo == 0:
        return lo
    if fhi == 0:
        return hi
    if (flo > 0) == (fhi > 0):
        raise ArithmeticError("no sign change on the bracket")
    eps = mpf(10) ** (-mpmath.mp.dps + 5)
    widths = [hi - lo, hi - lo]
    side = 0
    for _ in range(iters):
        if hi - lo <= eps * max(1, abs(hi)):
            break
        if hi - lo > widths[-2] / 2:
            x = (lo + hi) / 2
        else:
            x = hi - fhi * (hi - lo) / (fhi - flo)
            if not lo < x < hi:
                x = (lo + hi) / 2
        fx = f(x)
        if fx == 0:
            return x
        if (fx > 0) == (flo > 0):
            lo, flo = x, fx
            if side == -1:
                fhi /= 2
            side = -1
        else:
            hi, fhi = x, fx
            if side == 1:
                flo /= 2
            side = 1
        widths.append(hi - lo)
    return (lo + hi) / 2


def tau(n_c, n_w, L, K, lam):
    """argmin_{t ≥ 0} H(t): 0 when H′(0) ≥ 0, else the root of H′ (H is convex)."""
    with mpmath.workdps(DPS):
        f = lambda t: H_prime(t, n_c, n_w, L, K, lam)  # noqa: E731
        if f(0) >= 0:
            return mpf(0)
        hi = mpf(1)
        while f(hi) < 0:
            hi *= 2
        return _bisect_root(f, hi / 2 if hi > 1 else mpf(0), hi)


def tau_star(n_c, L, K, d, lam):
    with mpmath.workdps(DPS):
        f = lambda t: H_star_prime(t, n_c, L, K, d, lam)  # noqa: E731
        hi = mpf(1)
        while f(hi) < 0:
            hi *= 2
        return _bisect_root(f, hi / 2 if hi > 1 else mpf(0), hi)


def solve_type3(mu, n_c, L, lam, dps: int = 30):
    """(c, [r_β]) solving (7)–(8) by Proposition D: ρ_β(s) from ψ_s(ρ) = Lμ_β/λ, then Σρ² = L n^{L−1}."""
    with mpmath.workdps(dps):
        n, Lm, lm = mpf(n_c), mpf(L), mpf(lam)
        mus = [mpf(float(m)) for m in mu]
        kap = n / (n - 1)
        target = Lm * n ** (Lm - 1)

        def rho(s, m):
            g = lambda p: (lm / Lm) * p * (n - 1 + mpmath.exp(kap * s * p)) - m  # noqa: E731
            return _bisect_root(g, mpf(0), Lm * m / (lm * n) * (1 + mpf(10) ** -20))

        def F(s):  # decreasing in s
            return target - sum(rho(s, m) ** 2 for m in mus)

        if F(mpf(0)) >= 0:
            raise ValueError("condition (9) fails")
        hi = mpf(1)
        while F(hi) < 0:
            hi *= 2
        s = _bisect_root(F, mpf(0), hi)
        c = mpmath.sqrt(s)
        return c, [c * rho(s, m) for m in mus]


def lambda_max_type3(mu, n_c, L):
    """λ_max of condition (9): λ_max² = (L/n_c^{L+1}) Σ_β μ_β² (μ_β as the floats given), 50 digits."""
    with mpmath.workdps(DPS):
        n, Lm = mpf(n_c), mpf(L)
        return mpmath.sqrt(Lm / n ** (Lm + 1) * sum(mpf(float(m)) ** 2 for m in mu))


def type3_residuals(mu, n_c, L, lam, c, r):
    """Relative residuals max_β |LHS(7)/μ_β − 1| and |Σ(r/c)²/(L n^{L−1}) − 1| at the given floats, 50 digits."""
    with mpmath.workdps(DPS):
        n, Lm, lm, c = mpf(n_c), mpf(L), mpf(lam), mpf(float(c))
        kap = n / (n - 1)
        rs = [mpf(float(x)) for x in r]
        res7 = max(
            abs((lm / Lm) * (rb / c) * (n - 1 + mpmath.exp(kap * c * rb)) / mpf(float(m)) - 1) for rb, m in zip(rs, mu)
        )
        res8 = abs(sum((rb / c) ** 2 for rb in rs) / (Lm * n ** (Lm - 1)) - 1)
        return res7, res8


# ----------------------------------------------------------------------------------------- numpy
def frame(n_c: int, d: int, mean_zero: bool = False) -> np.ndarray:
    """d×n_c equiangular unit vectors (4): a centred regular simplex (Helmert basis of 1^⊥), embedded in R^d
    (with mean-zero columns when ``mean_zero``: rows 1..n_c−1 of a Helmert basis of 1_d^⊥)."""
    Hm = np.zeros((n_c - 1, n_c))
    for j in range(1, n_c):
        Hm[j - 1, :j] = 1.0 / np.sqrt(j * (j + 1.0))
        Hm[j - 1, j] = -j / np.sqrt(j * (j + 1.0))
    S = Hm * np.sqrt(n_c / (n_c - 1.0))  # (n_c−1)×n_c, unit columns, Gram κI − 11ᵀ/(n_c−1)
    if not mean_zero:
        F = np.zeros((d, n_c))
        F[: n_c - 1] = S
        return F
    B = np.zeros((d, n_c - 1))  # orthonormal columns orthogonal to 1_d
    for j in range(1, n_c):
        B[:j, j - 1] = 1.0 / np.sqrt(j * (j + 1.0))
        B[j, j - 1] = -j / np.sqrt(j * (j + 1.0))
    return B @ S


def phi(W: np.ndarray, eps: float = 0.0) -> np.ndarray:
    """Column-wise LayerNorm: (w − mean w)/√(var w + eps), var the biased variance (section 2)."""
    d = W.shape[0]
    C = W - W.sum(axis=0, keepdims=True) / d
    return C / np.sqrt(np.einsum("ij,ij->j", C, C)[None, :] / d + eps)
