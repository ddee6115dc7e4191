"""Theorem 2 (directional collapse of h): the type-III system (7)–(8) and condition (9).

With K = n_c^L and {z_k} = 𝒵, a type-III configuration w_(α,β) = r_β f_α, u_{k,ℓ} = c f_{z_kℓ}
is critical for (5) iff

    (7)  (λ/L)(r_β/c)(n_c − 1 + exp(κ c r_β)) = μ_β   for every β,
    (8)  Σ_β (r_β/c)² = L n_c^{L−1},

which has a unique solution with c > 0 iff (9) λ² < (L/n_c^{L+1}) Σ_β μ_β² (Proposition D).

Solver (Proposition D in log space). With s = c², m_β = Lμ_β/λ and x_β = κ s ρ_β = κ c r_β,
(7) reads x(n_c − 1 + e^x) = κ s m_β, solved for y = log x by Newton (convex, slope ≥ 1).
Since ρ_β(s)/ρ_β(0) = n_c/(n_c − 1 + e^{x_β}), (8) becomes

    D(s) := −log Σ_β w_β (1 + (e^{x_β} − 1)/n_c)^{−2} = 2 log(λ_max/λ),   w_β = μ_β²/Σμ²,

with D increasing from D(0) = 0: one monotone equation, solved in σ = log s as
log D(e^σ) = log(2 log(λ_max/λ)), accurate even as λ ↑ λ_max (then c → 0⁺). A long-double
Newton polish follows.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import mpmath
import numpy as np

from ._interval import adaptive, enclosure, enclosure_array, exact_fmpq, flint_module, krawczyk
from ._logmath import expit, log1p_aexpm1, solve_monotone
from ._mp import mp_context, mp_guard, mp_root
from ._budget import check_work
from ._validate import Choice, Int, Prob, broadcast_shape, check_mu, fail, float_array, int_array, public, result_type
from .tau import DPS, LAM, LEN, N_C, PRECISION

# an array of frequencies, or "uniform"/"zipf" together with s_c (no Task gives s_c here)
MU = Prob(named=True)
S_C = Int(min=1, max=10**8).or_none()

__all__ = ["lambda_max_type3", "solve_type3", "Type3Solution"]


def _params(mu, n_c, L, s_c=None):
    if isinstance(mu, str) and s_c is None:
        fail("s_c", None, f"mu={mu!r} needs s_c (words per concept) to build the frequencies")
    mu = check_mu(mu, s_c)
    n_c = int_array("n_c", n_c, min=2)
    L = int_array("L", L, min=1)
    return mu, n_c, L


def _log_lambda_max(mu, n_c, L):
    """log λ_max with λ_max² = (L/n_c^{L+1}) Σ μ² (condition (9)); dtype follows the inputs."""
    return 0.5 * (np.log(L) - (L + 1) * np.log(n_c) + np.log(np.sum(mu * mu, axis=-1)))


@public(mu=MU, n_c=N_C, L=LEN, s_c=S_C, precision=Choice("float", "interval"), legacy_positional=("mu", "n_c", "L"))
def lambda_max_type3(*, mu, n_c, L, s_c=None, precision: str = "float"):
    """λ_max of condition (9): (7)–(8) has a (unique) solution with c > 0 iff λ < λ_max.

    Parameters
    ----------
    mu : array_like, shape (..., s_c), or "uniform" / "zipf" (then ``s_c`` is required)
        Word frequencies (positive, summing to 1 along the last axis).
    n_c, L : int or array_like, broadcasting against ``mu.shape[:-1]``.
    s_c : int, optional
        Words per concept: builds ``mu`` when it is named; checked against ``mu.shape[-1]`` otherwise.
    precision : {"float", "interval"}
        "float": float64, computed in logs; "interval": a certified :class:`~fctheory._interval.Enclosure`
        (the sum Σμ_β² of the given float64 μ_β taken exactly, one arb square root; python-flint, the
        ``fctheory[certify]`` extra; relative width below 1e-17, see docs/certified.md).

    Returns
    -------
    float, ndarray or Enclosure
        √((L/n_c^{L+1}) Σ_β μ_β²), computed in logs (n_c^{L+1} may overflow). It underflows to 0
        when the true value is below the smallest float64 (about 5e-324; e.g. n_c = 3, L ≥ 1400):
        then no float64 λ satisfies (9) (the interval enclosure keeps the exact value).
    """
    mu, n_c, L = _params(mu, n_c, L, s_c)
    batch = broadcast_shape(mu_batch=np.empty(mu.shape[:-1]), n_c=n_c, L=L)
    _check_type3_batch(batch, mu.shape[-1], what="lambda_max_type3", precision=precision)
    if precision == "interval":
        flint_module()
        mu_b = np.broadcast_to(mu, batch + mu.shape[-1:]).reshape(-1, mu.shape[-1])
        n_c_b, L_b = (np.broadcast_to(a, batch).ravel() for a in (n_c, L))
        items = []
        for m, nc, ll in zip(mu_b, n_c_b, L_b):
            lmax2 = _lambda_max_sq(m, int(nc), int(ll))
            ball, prec = adaptive(lambda prec, q=lmax2: flint_module().arb(q).sqrt(), what="lambda_max_type3")
            items.append(enclosure(ball, prec))
        return enclosure_array(items, batch)
    out = np.exp(_log_lambda_max(mu, n_c, L))
    return float(out) if np.ndim(out) == 0 else out


@result_type
@dataclass(frozen=True)
class Type3Solution:
    """Solution of (7)–(8).

    Attributes
    ----------
    c : float or ndarray
        ‖u_{k,ℓ}‖ (shape = broadcast batch shape).
    r : ndarray
        Word-embedding norms r_β, shape batch + (s_c,), in the order of ``mu``.
    lam_max : float or ndarray
        The bound of (9).
    residual_7 : float or ndarray
        max_β |LHS/μ_β − 1| of (7) evaluated (in long double) at the returned float64 (c, r).
    residual_8 : float or ndarray
        |Σ(r/c)²/(L n_c^{L−1}) − 1| of (8), likewise.
    mu, n_c, L, lam : the inputs (broadcast).
    """

    c: np.ndarray
    r: np.ndarray
    lam_max: np.ndarray
    residual_7: np.ndarray
    residual_8: np.ndarray
    mu: np.ndarray
    n_c: np.ndarray
    L: np.ndarray
    lam: np.ndarray

    @property
    def K(self):
        """K = n_c^L (Theorem 2 needs the full latent set); inf where n_c^L exceeds the float64 range."""
        with np.errstate(over="ignore"):
            return np.power(np.asarray(self.n_c, dtype=float), self.L)


class _System:
    """Constants of (7)–(8) for a flat batch (B items × s_c words) in one dtype."""

    def __init__(self, mu, n_c, L, lam, dtype):
        dt = np.dtype(dtype).type
        self.mu = np.asarray(mu, dtype=dt)  # (B, s_c)
        self.n_c = np.asarray(n_c, dtype=dt)[:, None]
        self.L = np.asarray(L, dtype=dt)[:, None]
        self.lam = np.asarray(lam, dtype=dt)[:, None]
        self.log_nc = np.log(self.n_c)
        self.c1 = np.log(self.n_c - 1)
        self.log1m_inv_nc = self.c1 - self.log_nc
        self.log_kappa = self.log_nc - self.c1
        self.log_m = np.log(self.L) + np.log(self.mu) - np.log(self.lam)  # m_β = Lμ_β/λ
        # w_β = μ_β²/Σμ² in logs: μ_β² underflows for μ_β < 1e-162 (a valid, very skewed law)
        log_mu2 = 2 * np.log(self.mu)
        m = log_mu2.max(axis=1, keepdims=True)
        self.log_w = log_mu2 - (m + np.log(np.sum(np.exp(log_mu2 - m), axis=1, keepdims=True)))
        self.w = np.exp(self.log_w)
        self.delta = 2 * (_log_lambda_max(self.mu, self.n_c[:, 0], self.L[:, 0]) - np.log(self.lam[:, 0]))
        # δ = log(λ_max²/λ²): within a few ulps of λ_max the difference of logs is all rounding error (it can even
        # have the wrong sign); there δ = log1p(λ_max²/λ² − 1) from the exact rational ratio
        for i in np.nonzero(np.abs(self.delta) <= 2 * _LOG_MARGIN)[0]:
            ratio = _lambda_max_sq_over_lam_sq(self.mu[i], int(self.n_c[i, 0]), int(self.L[i, 0]), self.lam[i, 0])
            self.delta[i] = np.log1p(dt(float(ratio - 1)))

    def take(self, idx):
        out = object.__new__(_System)
        for k, v in self.__dict__.items():
            out.__dict__[k] = v[idx]
        return out

    def ell(self, x):
        """log(1 + (e^x − 1)/n_c) = log(n_c − 1 + e^x) − log n_c."""
        return log1p_aexpm1(-self.log_nc, self.log1m_inv_nc, x)

    def x_of(self, sigma, y0=None, iters: int = 60):
        """x_β(s): solve log x + log(n_c − 1 + e^x) = log(κ s m_β) =: Y for y = log x."""
        Y = self.log_kappa + sigma[:, None] + self.log_m
        if y0 is None:
            big = Y > self.log_nc + 1
            Yc = np.where(big, Y, 2.0)
            y = np.where(big, np.log(Yc - np.log(Yc)), Y - self.log_nc)
        else:
            y = y0
        for _ in range(iters):
            x = np.exp(y)
            f = y + self.log_nc + self.ell(x) - Y
            fp = 1 + x * expit(x - self.c1)
            step = f / fp
            y = y - step
            if np.all(np.abs(step) <= 4 * np.finfo(y.dtype).eps * np.maximum(1, np.abs(y))):
                break
        return np.exp(y)

    def D(self, sigma, x=None):
        """D(s) of the module docstring and dD/dσ."""
        if x is None:
            x = self.x_of(sigma)
        ell = self.ell(x)
        S = np.sum(self.w * -np.expm1(-2 * ell), axis=1)
        lse_terms = self.log_w - 2 * ell
        m = lse_terms.max(axis=1, keepdims=True)
        log_sum = m[:, 0] + np.log(np.sum(np.exp(lse_terms - m), axis=1))
        D = np.where(S < 0.5, -np.log1p(-np.minimum(S, 0.5)), -log_sum)
        omega = np.exp(lse_terms - log_sum[:, None])
        dx = x / (1 + x * expit(x - self.c1))
        Dp = np.sum(omega * 2 * expit(x - self.c1) * dx, axis=1)
        return D, Dp, x


def _solve_sigma(sys: _System):
    """σ = log c² solving log D(e^σ) = log δ, δ = 2 log(λ_max/λ) > 0."""
    # linearisation at s = 0: x_β ≈ κ s m_β/n_c, D ≈ (2κ/n_c²)Σ w_β m_β · s
    log_Dp0 = (
        np.log(2.0)
        + sys.log_kappa[:, 0]
        - 2 * sys.log_nc[:, 0]
        + np.log(np.sum(sys.w * np.exp(sys.log_m - sys.log_m.max(axis=1, keepdims=True)), axis=1))
        + sys.log_m.max(axis=1)
    )
    target = np.log(sys.delta)
    x0 = target - log_Dp0

    def phi(sig, sub):
        D, Dp, _ = sub.D(sig)
        return np.log(D) - sub.target, Dp / D

    sys.target = target
    # expand a bracket around the linearised guess
    lo, hi = x0 - 1.0, x0 + 1.0
    for _ in range(200):
        f_lo, _ = phi(lo, sys)
        f_hi, _ = phi(hi, sys)
        bad_lo, bad_hi = f_lo > 0, f_hi < 0
        if not (bad_lo.any() or bad_hi.any()):
            break
        lo = np.where(bad_lo, lo - 2 * (hi - lo), lo)
        hi = np.where(bad_hi, hi + 2 * (hi - lo), hi)

    def fun(x, idx):
        return phi(x, sys.take(idx))

    sigma, _ = solve_monotone(fun, lo, hi, np.clip(x0, lo, hi), increasing=True, rtol=0, atol=1e-14)
    return sigma


@public(
    mu=MU,
    n_c=N_C,
    L=LEN,
    lam=LAM,
    s_c=S_C,
    precision=PRECISION,
    dps=DPS,
    legacy_positional=("mu", "n_c", "L", "lam", "precision", "dps"),
)
def solve_type3(*, mu, n_c, L, lam, s_c=None, precision: str = "float", dps: int = 50) -> Type3Solution:
    """Unique solution (c, r_1, …, r_{s_c}) of (7)–(8), Theorem 2 / Proposition D.

    Parameters
    ----------
    mu : array_like, shape (s_c,) or (..., s_c), or "uniform" / "zipf" (then ``s_c`` is required)
        Word frequencies μ_β > 0 summing to 1 (last axis = words); "zipf" is μ_β ∝ 1/β.
    n_c, L : int or array_like
        Concepts and sentence length (K = n_c^L is implied).
    lam : float or array_like
        Weight decay λ > 0; must satisfy (9), λ < :func:`lambda_max_type3`.
    s_c : int, optional
        Words per concept: builds ``mu`` when it is named; checked against ``mu.shape[-1]`` otherwise.
    precision : {"float", "mp", "interval"}
        "float": float64, relative error ≲ 1e-12 (c and r) except within a relative 1e-6 of λ_max;
        "mp": mpmath reference (nested bracketed root-finding on (7)–(8) as printed, ``dps`` digits;
        c and r are then ``mpf`` objects);
        "interval": certified enclosures (python-flint, the ``fctheory[certify]`` extra): condition (9)
        decided in exact rationals, then the Krawczyk test K(X) ⊂ interior(X) on (7)–(8) in a box around
        the float solution proves a solution in the box, unique there (global uniqueness: Proposition D).
        ``c``, ``r`` and ``lam_max`` are :class:`~fctheory._interval.Enclosure` objects (relative width
        below 1e-17, see docs/certified.md); the residuals are 0.

    Returns
    -------
    Type3Solution

    Raises
    ------
    FCTheoryError
        If λ ≥ λ_max (then (W, U) = (0, 0) is the only type-III critical point), with λ_max in
        the message; or on invalid input.

    Examples
    --------
    >>> sol = solve_type3(mu=np.array([6, 3, 2]) / 11, n_c=3, L=2, lam=0.02)
    >>> round(sol.c, 10)
    1.1870394734
    """
    batch, mu_b, n_c_b, L_b, lam_b, log_lmax = _type3_batch(mu, n_c, L, lam, s_c, precision, dps)
    s_c = mu_b.shape[1]
    if precision == "interval":
        return _solve_interval_batch(mu_b, n_c_b, L_b, lam_b, batch)
    if precision == "mp":
        c, r, res7, res8 = _solve_mp_batch(mu_b, n_c_b, L_b, lam_b, dps)
    else:
        sys = _System(mu_b, n_c_b, L_b, lam_b, np.float64)
        sigma = _solve_sigma(sys)
        # long-double polish: two Newton steps on log D(e^σ) = log δ
        ld = _System(mu_b, n_c_b, L_b, lam_b, np.longdouble)
        sig = sigma.astype(np.longdouble)
        # within an ulp of λ_max, δ evaluated in long double can round to <= 0 while the float64 system still
        # has its (tiny) root: keep the float64 σ there instead of polishing towards log(0)
        ok = np.asarray(ld.delta > 0)
        log_delta = np.log(np.where(ok, ld.delta, 1))
        x = None
        for _ in range(2):
            x = ld.x_of(sig, None if x is None else np.log(x))
            D, Dp, _ = ld.D(sig, x)
            sig = np.where(ok, sig - (np.log(D) - log_delta) / (Dp / D), sig)
        x = ld.x_of(sig, np.log(x))
        c_ld = np.exp(sig / 2)
        r_ld = x / (np.exp(ld.log_kappa) * c_ld[:, None])
        c, r = c_ld.astype(np.float64), r_ld.astype(np.float64)
        res7, res8 = _residuals(mu_b, n_c_b, L_b, lam_b, c, r)
    shape_r = batch + (s_c,)
    return Type3Solution(
        c=_shaped(c, batch),
        r=r.reshape(shape_r),
        lam_max=_shaped(np.exp(log_lmax), batch),
        residual_7=_shaped(res7, batch),
        residual_8=_shaped(res8, batch),
        mu=mu_b.reshape(shape_r),
        n_c=n_c_b.reshape(batch),
        L=L_b.reshape(batch),
        lam=lam_b.reshape(batch),
    )


def _type3_batch(mu, n_c, L, lam, s_c, precision, dps):
    """Validated inputs of :func:`solve_type3` as a flat batch of B systems, and log λ_max (condition (9) checked)."""
    mu, n_c, L = _params(mu, n_c, L, s_c)
    lam = float_array("lam", lam, lo=0, lo_open=True)
    batch = broadcast_shape(mu_batch=np.empty(mu.shape[:-1]), n_c=n_c, L=L, lam=lam)
    s_c = mu.shape[-1]
    _check_type3_batch(batch, s_c, what="solve_type3", precision=precision, dps=dps)
    mu_b = np.broadcast_to(mu, batch + (s_c,)).reshape(-1, s_c)
    n_c_b, L_b, lam_b = (np.broadcast_to(a, batch).ravel() for a in (n_c, L, lam))
    log_lmax = _log_lambda_max(mu_b, n_c_b, L_b)
    _check_below_lambda_max(lam_b, log_lmax, n_c_b, L_b, mu_b)
    return batch, mu_b, n_c_b, L_b, lam_b, log_lmax


# |log λ − log λ_max| below which condition (9) is decided exactly: the float logs err by ~1e-15 (relative 1e-16
# of terms up to ~|L log n_c| ≲ 1e4 would be 1e-12: the margin covers that too)
_LOG_MARGIN = 1e-9


def _lambda_max_sq(mu, n_c: int, L: int):
    """λ_max² = (L/n_c^{L+1}) Σ_β μ_β² of condition (9), an exact rational (μ_β as the float64 they are)."""
    flint = flint_module()
    total = flint.fmpq(0)
    for m in mu:
        total += exact_fmpq(float(m)) ** 2
    return flint.fmpq(L) / flint.fmpz(n_c) ** (L + 1) * total


def _solve_interval_batch(mu_b, n_c_b, L_b, lam_b, batch) -> Type3Solution:
    """The certified :class:`Type3Solution` of a flat batch (see :func:`_type3_enclosure`); residuals 0."""
    flint_module()
    flt = solve_type3(mu=mu_b, n_c=n_c_b, L=L_b, lam=lam_b)  # the starting points
    cs, rs, lms = [], [], []
    for i in range(mu_b.shape[0]):
        c, r, lmax = _type3_enclosure(mu_b[i], int(n_c_b[i]), int(L_b[i]), float(lam_b[i]), flt.c[i], flt.r[i])
        cs.append(c)
        rs.extend(r)
        lms.append(lmax)
    shape_r = batch + (mu_b.shape[1],)
    zero = _shaped(np.zeros(mu_b.shape[0]), batch)
    return Type3Solution(
        c=enclosure_array(cs, batch),
        r=enclosure_array(rs, shape_r),
        lam_max=enclosure_array(lms, batch),
        residual_7=zero,
        residual_8=zero,
        mu=mu_b.reshape(shape_r),
        n_c=n_c_b.reshape(batch),
        L=L_b.reshape(batch),
        lam=lam_b.reshape(batch),
    )


def _type3_enclosure(mu, n_c: int, L: int, lam: float, c0: float, r0):
    """Certified (c, r_β) of (7)–(8) for one system, by the Krawczyk test around the float solution.

    Unknowns z = (log c, log(r_1/μ_1), …, log(r_s/μ_s)); residuals (7)/μ_β − 1 and (8)/(L n_c^{L−1}) − 1
    (relative, so the box is relative in c and r). Condition (9) is first decided exactly in rationals.
    """
    flint = flint_module()
    lmax2 = _lambda_max_sq(mu, n_c, L)
    if exact_fmpq(lam) ** 2 >= lmax2:
        fail(
            "lam",
            lam,
            f"condition (9) requires lam < lambda_max = {float(flint.arb(lmax2).sqrt()):.17g} "
            "(decided exactly); for larger lam the only type-III critical point is (W, U) = (0, 0)",
        )
    z0 = [float(np.log(c0))] + [float(np.log(rb / m)) for rb, m in zip(r0, mu)]
    if not np.all(np.isfinite(z0)):
        fail("lam", lam, "precision='interval' starts from the float64 solution, which under/overflows here")

    def solve(prec):
        F, J = _type3_system(mu, n_c, L, lam)
        Z = krawczyk(F, J, z0, 2.0 ** (-prec / 3))
        if Z is None:
            return None
        c = Z[0].exp()
        return [c] + [flint.arb(float(m)) * Zb.exp() for m, Zb in zip(mu, Z[1:])]

    balls, prec = adaptive(solve, what="solve_type3")
    lmax, lprec = adaptive(lambda p: flint.arb(lmax2).sqrt(), what="lambda_max_type3")
    return enclosure(balls[0], prec), [enclosure(b, prec) for b in balls[1:]], enclosure(lmax, lprec)


def _type3_system(mu, n_c: int, L: int, lam: float):
    """Residuals and Jacobian (ball functions of a box) of (7)–(8) in the coordinates of :func:`_type3_enclosure`.

    With q_β = (λ/L)e^{b_β−a}, x_β = κμ_β e^{a+b_β}, A_β = n_c − 1 + e^{x_β}: F_β = q_β A_β − 1 (∂_a = q_β(x_β e^{x_β}
    − A_β), ∂_{b_β} = q_β(x_β e^{x_β} + A_β)); F_0 = Σ t_β − 1, t_β = μ_β² e^{2(b_β−a)}/(L n_c^{L−1}) (∂_a = −2Σt_β,
    ∂_{b_β} = 2t_β). Rows: F_1 … F_s, F_0; columns: a, b_1 … b_s.
    """
    flint = flint_module()
    n = len(mu)
    mus = [flint.arb(float(m)) for m in mu]
    lam_L = flint.arb(lam) / L
    kappa = flint.arb(flint.fmpq(n_c, n_c - 1))
    norm8 = flint.arb(flint.fmpz(L) * flint.fmpz(n_c) ** (L - 1))

    def parts(z):
        a, b = z[0], z[1:]
        q = [lam_L * (bb - a).exp() for bb in b]
        x = [kappa * m * (a + bb).exp() for m, bb in zip(mus, b)]
        ex = [xx.exp() for xx in x]
        t = [m * m * (2 * (bb - a)).exp() / norm8 for m, bb in zip(mus, b)]
        return q, x, ex, t

    def F(z):
        q, _, ex, t = parts(z)
        return [qq * (n_c - 1 + e) - 1 for qq, e in zip(q, ex)] + [sum(t) - 1]

    def J(z):
        q, x, ex, t = parts(z)
        rows = [[flint.arb(0)] * (n + 1) for _ in range(n + 1)]
        for i in range(n):
            A, xe = n_c - 1 + ex[i], x[i] * ex[i]
            rows[i][0] = q[i] * (xe - A)
            rows[i][i + 1] = q[i] * (xe + A)
            rows[n][i + 1] = 2 * t[i]
        rows[n][0] = -2 * sum(t)
        return flint.arb_mat(rows)

    return F, J


def _lambda_max_sq_over_lam_sq(mu, n_c: int, L: int, lam) -> Fraction:
    """λ_max²/λ² = L Σμ_β²/(n_c^{L+1} λ²) as an exact rational (λ and μ_β as the doubles they store)."""
    total = sum(Fraction(float(m)) ** 2 for m in mu)
    return L * total / (Fraction(float(lam)) ** 2 * n_c ** (L + 1))


def _below_lambda_max_exactly(mu, n_c: int, L: int, lam: float) -> bool:
    """Condition (9) decided in exact rationals: λ² < (L/n_c^{L+1}) Σμ_β²."""
    return _lambda_max_sq_over_lam_sq(mu, n_c, L, lam) > 1


def _check_below_lambda_max(lam_b, log_lmax, n_c_b, L_b, mu_b) -> None:
    """Condition (9): refuse the first λ ≥ λ_max of the batch, naming λ_max.

    Refused: every λ whose float log is not below the float log λ_max (as before: this also refuses the last
    ulps below λ_max, where log λ_max rounded down), and every λ ≥ λ_max decided in exact rationals where the
    logs differ by less than :data:`_LOG_MARGIN` (where log λ_max rounded up, the comparison of logs alone
    accepted λ = λ_max itself, e.g. the dyadic λ_max = 1/2 of μ = (1), n_c = 2, L = 2).
    """
    gap = np.log(lam_b) - log_lmax
    bad = gap >= 0
    for i in np.nonzero(np.abs(gap) <= _LOG_MARGIN)[0]:
        bad[i] |= not _below_lambda_max_exactly(mu_b[i], int(n_c_b[i]), int(L_b[i]), float(lam_b[i]))
    if bad.any():
        i = int(np.argmax(bad))
        fail(
            "lam",
            float(lam_b[i]),
            f"condition (9) requires lam < lambda_max = {_show_exp(log_lmax[i])} "
            f"(n_c={n_c_b[i]:g}, L={L_b[i]:g}); for larger lam the only type-III critical point is (W, U) = (0, 0)",
        )


def _solve_mp_batch(mu_b, n_c_b, L_b, lam_b, dps: int):
    """(c, r, residual_7, residual_8) of every batch entry by the mpmath reference (object arrays of mpf)."""
    s_c = mu_b.shape[-1]
    with mp_context(dps):
        cs, rs = [], []
        for i in range(mu_b.shape[0]):
            with mp_guard(dps):
                c, r = _solve_type3_mp(mu_b[i], n_c_b[i], L_b[i], lam_b[i])
            cs.append(c)
            rs.append(r)
    c = np.empty(len(cs), dtype=object)
    c[:] = cs
    r = np.empty((len(rs), s_c), dtype=object)
    for i, ri in enumerate(rs):
        r[i, :] = ri
    res = np.zeros(len(cs))
    return c, r, res, res


def _shaped(a, batch: tuple):
    """``a`` in the batch shape; a scalar (float, or mpf for the mp path) when the batch is empty."""
    a = np.asarray(a).reshape(batch)
    if batch:
        return a
    return a[()] if a.dtype == object else float(a)


def _show_exp(log_x) -> str:
    """exp(log_x) for a message, also when it under- or overflows float64."""
    if -700 < log_x < 700:
        return f"{np.exp(log_x):.10g}"
    return f"e^{log_x:.10g} (beyond the float64 range)"


def _check_type3_batch(batch, s_c, *, what, precision="float", dps=50):
    """Budget of a type-III request: B = prod(batch) systems of s_c words (float: ~40 float64/long
    double temporaries per word; mp: Newton on s_c + 1 unknowns, ~(0.1 + 0.008 s_c²) s per system;
    interval: the Krawczyk test, cubic in s_c)."""
    B = 1
    for k in batch:
        B *= int(k)
    check_work("shape", batch, items=B * s_c, bytes=B * s_c * 8 * 48, what=what)
    if precision == "mp":
        check_work(
            "shape",
            batch,
            seconds=B * (0.1 + 0.008 * s_c * s_c) * (dps / 50) ** 0.5,
            what=f"{what} with precision='mp', dps={dps}",
        )
    if precision == "interval":
        # Krawczyk on s_c + 1 unknowns with dense arb matrices: ~2.5e-7·s_c³ s per system at 128 bits
        check_work("shape", batch, seconds=B * (0.02 + 2.5e-7 * s_c**3), what=f"{what} with precision='interval'")


def _residuals(mu, n_c, L, lam, c, r):
    """Relative residuals of (7) (max over β) and (8), in long double, without overflow."""
    ld = np.longdouble
    mu, c, r = mu.astype(ld), c.astype(ld)[:, None], r.astype(ld)
    n_c, L, lam = (a.astype(ld)[:, None] for a in (n_c, L, lam))
    log_nc = np.log(n_c)
    kappa = n_c / (n_c - 1)
    x = kappa * c * r
    log_lhs7 = np.log(lam / L) + np.log(r / c) + log_nc + log1p_aexpm1(-log_nc, np.log1p(-1 / n_c), x)
    res7 = np.max(np.abs(np.expm1(log_lhs7 - np.log(mu))), axis=1)
    lr = 2 * np.log(r / c)
    m = lr.max(axis=1, keepdims=True)
    log_lhs8 = m[:, 0] + np.log(np.sum(np.exp(lr - m), axis=1))
    res8 = np.abs(np.expm1(log_lhs8 - np.log(L[:, 0]) - (L[:, 0] - 1) * log_nc[:, 0]))
    return res7.astype(np.float64), res8.astype(np.float64)


def _solve_type3_mp(mu, n_c, L, lam):
    """Reference, independent of the float path's reformulation.

    1. Proposition D as printed, at 20 digits (to ~1e-11): ρ_β(s) from (153) by bracketed root-finding, then
       F(s) = Σ ρ_β(s)² = L n_c^{L−1} (158) for s = c² (unique by monotonicity).
    2. Newton (mpmath.findroot, numerical Jacobian) on the system (7)–(8) as printed, in the
       unknowns (c, r_1, …, r_{s_c}), at the working precision, started from step 1.
    """
    mpf = mpmath.mpf
    dps = mpmath.mp.dps
    with mpmath.workdps(20):
        mu20 = [mpf(float(m)) for m in mu]
        n20, L20, lam20 = mpf(float(n_c)), mpf(float(L)), mpf(float(lam))
        kappa = n20 / (n20 - 1)
        target = L20 * n20 ** (L20 - 1)

        def rho(s, m):
            psi = lambda p: (lam20 / L20) * p * (n20 - 1 + mpmath.exp(kappa * s * p)) - m  # noqa: E731
            # ψ(0) = −μ_β < 0 ≤ ψ(p_hi) with p_hi = Lμ_β/(λ n_c) ≥ ρ_β(s); the root may lie hundreds of decades
            # below p_hi, so step down in q = log p (doubling steps) to a bracket, then solve in q
            g = lambda q: psi(mpmath.exp(q))  # noqa: E731
            q_hi = mpmath.log(L20 * m / (lam20 * n20)) + 1  # ψ(e·p_hi) ≥ (e − 1)μ_β > 0 even after rounding
            step = mpf(1)
            q_lo = q_hi - step
            while g(q_lo) > 0:
                q_hi, step = q_lo, 2 * step
                q_lo = q_hi - step
            return mpmath.exp(mp_root(g, q_lo, q_hi, rel=1e-14))

        def F(s):
            return sum(rho(s, m) ** 2 for m in mu20) - target

        # F decreases from F(0) > 0; s = c² spans hundreds of decades at large L, so bracket and solve
        # in σ = log s (a bisection from [0, 1] would need ~log2(1/s) steps of nested root-finding)
        def Fl(sig):
            return F(mpmath.exp(sig))

        hi = mpf(0)
        while Fl(hi) > 0:
            hi += 8
        lo = hi - 8
        while Fl(lo) < 0:
            lo = lo - 8 if lo > -64 else 2 * lo  # widen geometrically: ~log2(|log s|) steps
        s0 = mpmath.exp(mp_root(Fl, lo, hi, rel=1e-13))
        c0 = mpmath.sqrt(s0)
        r0 = [c0 * rho(s0, m) for m in mu20]
    with mpmath.workdps(dps):
        mu_ = [mpf(float(m)) for m in mu]
        n_, L_, lam_ = mpf(float(n_c)), mpf(float(L)), mpf(float(lam))
        kap = n_ / (n_ - 1)

        # unknowns log c and log v_β, v_β = r_β/μ_β: r_β ∝ μ_β for rare words and c, r span hundreds of
        # orders of magnitude at large L, so in these coordinates the Jacobian stays well conditioned
        def eqs(a, *b):
            c = mpmath.exp(a)
            v = [mpmath.exp(bb) for bb in b]
            r = [vb * m for vb, m in zip(v, mu_)]
            out = [(lam_ / L_) * (vb / c) * (n_ - 1 + mpmath.exp(kap * c * rb)) - 1 for rb, vb in zip(r, v)]
            out.append(sum((rb / c) ** 2 for rb in r) / (L_ * n_ ** (L_ - 1)) - 1)
            return out

        x0 = [mpmath.log(mpf(c0))] + [mpmath.log(mpf(x) / m) for x, m in zip(r0, mu_)]
        sol = mpmath.findroot(eqs, x0, tol=mpf(10) ** (-2 * dps + 10))
        c = mpmath.exp(sol[0])
        return c, [mpmath.exp(sol[i]) * mu_[i - 1] for i in range(1, len(mu_) + 1)]
