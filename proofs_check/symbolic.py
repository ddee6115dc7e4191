"""Symbolic checks (sympy) of the algebra of appendices B–E, with n_c, L, r, λ, … as symbols.

Where sympy cannot sum a binomial series with a symbolic upper limit, the general-L statement is
reduced to Pascal's rule (checked symbolically) by induction, and the identity is also checked as an
exact polynomial identity for L = 1..12.
"""

from __future__ import annotations

import functools
import importlib
import itertools
from fractions import Fraction

import mpmath
import numpy as np
import sympy as sp

import fctheory
from fctheory import Task

from . import _deps
from .registry import expect, register, tolerances

n, K, g, lam, c, t, eta, d = sp.symbols("n_c K gamma lambda c t eta d", positive=True)
L, r = sp.symbols("L r", positive=True, integer=True)
y = sp.symbols("y", positive=True)
_L_RANGE = range(1, 13)


def _zero(expr) -> bool:
    """True when ``expr`` simplifies to 0.

    Binomials with symbolic arguments are reduced by combsimp; n_c = 1 + m and expanded powers
    (m^(r−1) = m^r·m^(−1)) let sympy cancel terms like n_c(n_c−1)^(r−1) − (n_c−1)^r − (n_c−1)^(r−1).
    """
    m = sp.symbols("m", positive=True)
    e = sp.combsimp(sp.expand_func(expr)).subs(n, 1 + m)
    e = sp.expand(sp.powsimp(sp.expand(e, power_exp=True)))
    return e == 0 or sp.simplify(e) == 0


def _count_same(Kx, nx, Lx, rx, shift=0):
    """(35), case z_{k,ℓ} = α: (K/n_c^L) C(L−1, r)(n_c−1)^r."""
    return Kx / nx**Lx * sp.binomial(Lx - 1, rx) * (nx - 1) ** (rx + shift)


def _count_diff(Kx, nx, Lx, rx, shift=0):
    """(35), case z_{k,ℓ} ≠ α: (K/n_c^L) C(L−1, r−1)(n_c−1)^(r−1)."""
    return Kx / nx**Lx * sp.binomial(Lx - 1, rx - 1) * (nx - 1) ** (rx - 1 + shift)


@register(
    "lemmaB-i-pascal",
    "Lemma B(i), (38)-(39): sum over α of the counts (35) is |S_r| = (K/n_c^L) C(L,r)(n_c-1)^r",
    "symbolic",
    "exponent of (n_c-1) in the z_kl != α count off by one: (n_c-1)^r",
    library=("lemma_B_properties", "Task.S_r_counts"),
    oracle="sympy (combsimp) for symbolic n_c, L, r, K; the resulting |S_r| evaluated exactly on full latent sets",
)
def check_lemma_B_i(mutant: bool = False, quick: bool = False) -> str:
    """(38)–(39): (n_c−1)·[z≠α count] + [z=α count] = (K/n_c^L)·C(L,r)(n_c−1)^r, via Pascal's rule."""
    lhs = (n - 1) * _count_diff(K, n, L, r, shift=1 if mutant else 0) + _count_same(K, n, L, r)
    rhs = K / n**L * sp.binomial(L, r) * (n - 1) ** r
    expect(_zero(lhs - rhs), f"|S_r| identity (39) fails: lhs - rhs = {sp.simplify(sp.combsimp(lhs - rhs))}")

    for nv, Lv in [(2, 3), (3, 2), (3, 3)]:
        task = Task.full(nv, 1, Lv)
        S_lib = fctheory.lemma_B_properties(task).S_r
        for rv in range(1, Lv + 1):
            want = lhs.subs({n: nv, L: Lv, r: rv, K: nv**Lv})
            expect(
                all(int(v) == want for v in S_lib[:, rv]),
                f"lemma_B_properties |S_{rv}| = {S_lib[0, rv]} != {want} on ({nv},{Lv})",
            )
            expect(
                float(task.S_r_counts()[rv]) == float(want),
                f"Task.S_r_counts()[{rv}] = {task.S_r_counts()[rv]} != {want} on ({nv},{Lv})",
            )
    return "sum_alpha (35) == (K/n_c^L) C(L,r)(n_c-1)^r for symbolic n_c, L, r, K"


# ----------------------------------------------------------------------------------------- binomial theorem
_M, _rho = sp.symbols("M rho", integer=True, nonnegative=True)


def _binomial_sum(m, yy):
    """S(m) = Σ_{ρ=0}^{m} C(m, ρ) y^ρ as an unevaluated sympy Sum."""
    return sp.Sum(sp.binomial(m, _rho) * yy**_rho, (_rho, 0, m))


def binomial_theorem_by_induction() -> tuple:
    """Prove S(M) = (1 + y)^M for a symbolic integer M ≥ 0, every step checked by sympy.

    Base: S(0) = 1. Step: by Pascal's rule C(M+1, ρ) = C(M, ρ) + C(M, ρ−1) the sum S(M+1) splits into
    Σ_{ρ=0}^{M+1} C(M, ρ) y^ρ (= S(M), its ρ = M+1 term C(M, M+1) = 0) and Σ_{ρ=0}^{M+1} C(M, ρ−1) y^ρ
    (index shift ρ → ρ+1: = y·S(M), its ρ = −1 term C(M, −1) = 0), so S(M+1) = (1+y)S(M) = (1+y)^{M+1}.
    Returns the steps verified; raises CheckFailed at the first that fails.
    """
    steps = _induction_steps()
    for ok, what in steps:
        expect(ok, f"binomial theorem by induction: step fails: {what}")
    return tuple(what for _, what in steps)


@functools.lru_cache(maxsize=1)
def _induction_steps() -> tuple:
    """The sympy verdicts of the induction proof (cached: the proof does not depend on the check)."""
    steps = [(_binomial_sum(0, y).doit() == 1, "base case S(0) = 1")]
    summand = sp.binomial(_M + 1, _rho) * y**_rho
    a_part = sp.binomial(_M, _rho) * y**_rho
    b_part = sp.binomial(_M, _rho - 1) * y**_rho
    steps.append((_zero(summand - a_part - b_part), "Pascal's rule C(M+1, rho) = C(M, rho) + C(M, rho-1) (combsimp)"))
    steps.append((sp.simplify(a_part.subs(_rho, _M + 1)) == 0, "top term C(M, M+1) y^(M+1) = 0"))
    shifted = sp.Sum(b_part, (_rho, 0, _M + 1)).change_index(_rho, _rho - 1)  # new ρ = old ρ − 1: limits −1 .. M
    (fn, (var, lo, hi)) = shifted.function, shifted.limits[0]
    steps.append((lo == -1 and sp.simplify(hi - _M) == 0, f"index shift gives limits -1..M (got {lo}..{hi})"))
    steps.append((sp.simplify(fn.subs(var, -1)) == 0, "bottom term C(M, -1) = 0"))
    steps.append((_zero(fn - y * sp.binomial(_M, var) * y**var), "shifted summand = y C(M, rho) y^rho"))
    hyp = (1 + y) ** _M  # induction hypothesis S(M) = (1+y)^M
    steps.append((sp.simplify(hyp + y * hyp - (1 + y) ** (_M + 1)) == 0, "S(M+1) = (1+y) S(M) = (1+y)^(M+1)"))
    return tuple((bool(ok), what) for ok, what in steps)


@functools.lru_cache(maxsize=1)
def _sympy_binomial_summation():
    """sympy's ``summation`` of S(M) (a Piecewise valid for y ≤ 1: enough, both sides are polynomials in y)."""
    cas = sp.summation(sp.binomial(_M, _rho) * y**_rho, (_rho, 0, _M))
    if isinstance(cas, sp.Piecewise):
        cas = cas.args[0][0]
    return cas


def _closed_binomial_sum(summand, var, lo, hi, yy):
    """Σ_{var=lo}^{hi} summand for a symbolic upper limit, when summand = const·C(M, ρ) y^ρ after the shift
    ρ = var − lo, M = hi − lo: returns const·(1 + y)^M (binomial theorem, proved by induction above), or None
    when the summand does not have that form. sympy's own ``summation`` is asked too (it answers for y ≤ 1)."""
    m = sp.simplify(hi - lo)
    term = sp.expand_func(summand.subs(var, _rho + lo))
    const = sp.simplify(sp.combsimp(term / (sp.binomial(m, _rho) * yy**_rho)))
    if const.has(_rho):
        return None
    closed = const * (1 + yy) ** m
    cas = _sympy_binomial_summation()
    expect(sp.simplify(cas - (1 + y) ** _M) == 0, f"sympy's summation of the binomial series gave {cas}")
    return closed


@register(
    "lemmaB-ii-sums",
    "Lemma B(ii), (37), (40)-(41): sum_r (K/n_c^L) C(L-1,r-1)(n_c-1)^(r-1) = K/n_c, so sum_k Z_k = (K/n_c)11^T "
    "and ZZ^T = (KL/n_c)I",
    "symbolic",
    "(n_c-1)^r instead of (n_c-1)^(r-1) in (41)",
    library=("lemma_B_properties",),
    oracle="sympy: the sum for symbolic L, n_c, K via the binomial theorem proved by induction (each step by "
    "sympy) and sympy.summation; exact polynomial identities for L = 1..12",
)
def check_lemma_B_ii(mutant: bool = False, quick: bool = False) -> str:
    """(41) for symbolic L by the binomial theorem (proved by induction); also exact for L = 1..12."""
    shift = 1 if mutant else 0
    binomial_theorem_by_induction()
    total = _closed_binomial_sum(_count_diff(K, n, L, r, shift), r, 1, L, n - 1)
    expect(total is not None, "the (41) summand is not a binomial term")
    expect(_zero(total - K / n), f"(41) for symbolic L: sum = {sp.simplify(total)} != K/n_c")
    for Lv in _L_RANGE:
        s = sum(_count_diff(K, n, Lv, rv, shift) for rv in range(1, Lv + 1))
        expect(sp.cancel(s - K / n) == 0, f"(41) fails at L={Lv}: sum = {sp.factor(s)} != K/n_c")
    # ZZ^T: diagonal entry α = Σ_ℓ |{k : z_kℓ = α}| = L·(K/n_c) by (37); the library's exact counts agree

    for nv, Lv in [(2, 3), (3, 2), (4, 2)]:
        res = fctheory.lemma_B_properties(Task.full(nv, 1, Lv))
        want = total.subs({n: nv, L: Lv, K: nv**Lv})
        expect(
            res.ii_holds and all(int(v) == want for v in res.column_sums.ravel()),
            f"lemma_B_properties column sums {res.column_sums.tolist()} != K/n_c = {want} on ({nv},{Lv})",
        )
    return "sum_r (35, z!=α) == K/n_c for symbolic L, n_c, K (binomial theorem by induction) and L=1..12"


@register(
    "lemmaB-iii-theta",
    "Lemma B(iii), (42): neighbour ratios (L-r)/L and r/((n_c-1)L), theta_r = n_c r/((n_c-1)L), "
    "A_r = -r/((n_c-1)L) 11^T",
    "symbolic",
    "theta_r off by the factor kappa: theta_r = r/L",
    library=("lemma_B_properties",),
    oracle="sympy (combsimp) for symbolic n_c, L, r; theta_r, A_r evaluated exactly on full latent sets",
)
def check_lemma_B_iii(mutant: bool = False, quick: bool = False) -> str:
    """e_{α*} − mean = θ_r e_{α*} + a_r 1 with mean = p_same e_{α*} + p_other (1 − e_{α*})."""
    S = K / n**L * sp.binomial(L, r) * (n - 1) ** r
    p_same = _count_same(K, n, L, r) / S
    p_other = _count_diff(K, n, L, r) / S
    expect(_zero(p_same - (L - r) / L), f"same-concept ratio {sp.combsimp(p_same)} != (L-r)/L")
    expect(_zero(p_other - r / ((n - 1) * L)), f"other-concept ratio {sp.combsimp(p_other)} != r/((n_c-1)L)")
    # the ratios of one position sum to 1: p_same + (n_c − 1) p_other = 1
    expect(_zero(p_same + (n - 1) * p_other - 1), "ratios do not sum to 1")
    # e* − [p_same e* + p_other (1 − e*)] = (1 − p_same + p_other) e* − p_other 1
    theta = 1 - p_same + p_other
    a = -p_other
    theta_claim = r / L if mutant else n * r / ((n - 1) * L)
    expect(_zero(theta - theta_claim), f"theta_r = {sp.simplify(sp.combsimp(theta))} != claimed {theta_claim}")
    expect(_zero(a + r / ((n - 1) * L)), f"A_r coefficient {sp.combsimp(a)} != -r/((n_c-1)L)")

    for nv, Lv in [(2, 3), (3, 2), (4, 2)]:
        res = fctheory.lemma_B_properties(Task.full(nv, 1, Lv))
        for rv in range(1, Lv + 1):
            th = sp.Rational(theta_claim.subs({n: nv, L: Lv, r: rv}))
            expect(
                res.theta[rv - 1] == Fraction(int(th.p), int(th.q)),
                f"lemma_B_properties theta_{rv} = {res.theta[rv - 1]} != {th} on ({nv},{Lv})",
            )
    return "ratios, theta_r = kappa r/L and A_r = -r/((n_c-1)L) 11^T hold for symbolic n_c, L, r"


@register(
    "binomial-identity-H",
    "(49)/(92): 1 + sum_{r=1}^L |S_r| e^(-gamma r) = 1 - K/n_c^L + (K/n_c^L)(1 + (n_c-1)e^(-gamma))^L",
    "symbolic",
    "(1 + n_c e^(-gamma))^L on the right-hand side",
    tol=dict(rel=1e-12),
    library=("H",),
    oracle="sympy: symbolic L, n_c, K, gamma via the binomial theorem proved by induction; exact for L = 1..12; "
    "the sum over r evaluated at 50 digits against fctheory.H(t) - lambda t",
)
def check_binomial_identity(mutant: bool = False, quick: bool = False) -> str:
    """Symbolic L via the binomial theorem (proved by induction); exact identity in n_c, K, γ for L = 1..12."""
    x = sp.exp(-g)
    base = n if mutant else (n - 1)
    rhs_sym = 1 - K / n**L + K / n**L * (1 + base * x) ** L
    binomial_theorem_by_induction()
    # Σ_{r=1}^{L} (K/n^L) C(L,r)((n−1)x)^r = (K/n^L)(S(L) − 1) with y = (n−1)x
    yy = (n - 1) * x
    S_full = _closed_binomial_sum(K / n**L * sp.binomial(L, r) * yy**r, r, 0, L, yy)
    expect(S_full is not None, "the |S_r| e^(-gamma r) summand is not a binomial term")
    lhs_sym = 1 + S_full - K / n**L  # minus the r = 0 term (K/n^L)
    expect(
        sp.simplify(lhs_sym - rhs_sym) == 0,
        f"identity fails for symbolic L: lhs - rhs = {sp.simplify(lhs_sym - rhs_sym)}",
    )
    for Lv in _L_RANGE:
        lhs = 1 + sum(K / n**Lv * sp.binomial(Lv, rv) * (n - 1) ** rv * x**rv for rv in range(1, Lv + 1))
        rhs = 1 - K / n**Lv + K / n**Lv * (1 + base * x) ** Lv
        expect(sp.expand(lhs - rhs) == 0, f"binomial identity fails at L={Lv}")
    # the library's H is this log plus λt: compare the left-hand side (the sum over spheres) at 50 digits

    tol = tolerances("binomial-identity-H")["rel"]
    for nv, nw, Lv, Kv, lamv, tv in [(3, 6, 2, 9, 0.01, 7.0), (2, 4, 5, 11, 0.02, 3.0), (4, 8, 3, 17, 0.0, 40.0)]:
        with mpmath.workdps(50):
            gam = mpmath.mpf(nv) / (nv - 1) / mpmath.sqrt(nw * Kv * Lv) * tv  # γ = ηt
            sphere_sum = 1 + sum(
                mpmath.mpf(Kv) / nv**Lv * mpmath.binomial(Lv, rv) * (nv - 1) ** rv * mpmath.exp(-gam * rv)
                for rv in range(1, Lv + 1)
            )
            ref = mpmath.log(sphere_sum) + lamv * tv
        got = fctheory.H(tv, n_c=nv, n_w=nw, L=Lv, K=Kv, lam=lamv)
        expect(
            abs(got - float(ref)) <= tol * abs(float(ref)),
            f"fctheory.H = {got!r} != log(1 + sum_r |S_r| e^(-eta t r)) + lambda t = {float(ref)!r}",
        )
    return "identity proved for symbolic L (binomial theorem by induction), exact for L=1..12, fctheory.H matches"


def _H_parts(Lx):
    """q(u) = a + b(1 + c_ u)^L with u = e^{−ηt}: H(t) = log q(e^{−ηt}) + reg(t)."""
    a, b, cc, u = sp.symbols("a b c_ u", positive=True)
    p = 1 + cc * u
    q = a + b * p**Lx
    return a, b, cc, u, p, q


@register(
    "H-strict-convexity",
    "Theorems 1 and 3: H(t) = log(1 - K/n_c^L + (K/n_c^L)(1+(n_c-1)e^(-eta t))^L) + lambda t and "
    "H*(t) (regulariser lambda t^2/2) are strictly convex on [0, inf)",
    "symbolic",
    "the b^2 term of H''*q^2/eta^2 claimed as b^2 L c^2 u^2 p^(2L-2) (wrong power of c u)",
    tol=dict(rel=1e-12),
    library=("tau.H_second",),
    oracle="sympy: exact decomposition of q^2 H''/eta^2 for symbolic L; evaluated at 50 digits against the library",
)
def check_H_convexity(mutant: bool = False, quick: bool = False) -> str:
    """H''(t)·q²/η² = a·(bLcu p^{L−1} + bL(L−1)c²u² p^{L−2}) + b²Lcu p^{2L−2} > 0, symbolic L.

    With a = 1 − K/n_c^L ≥ 0 (K ≤ n_c^L), b = K/n_c^L > 0, c_ = n_c − 1 > 0, u = e^{−ηt} ∈ (0, 1]
    and L ≥ 1 every term is ≥ 0 and the last one is > 0, so H'' > 0 (H* adds λ > 0).
    """
    a, b, cc, u, p, q = _H_parts(L)
    # chain rule for u = e^{−ηt}: d/dt = −η·D with D = u d/du, so (log q)'' = η²(D²q·q − (Dq)²)/q²
    f = sp.Function("f")
    chain = sp.diff(f(sp.exp(-eta * t)), t, 2) - eta**2 * (u * sp.diff(f(u), u) + u**2 * sp.diff(f(u), u, 2)).subs(
        u, sp.exp(-eta * t)
    )
    expect(sp.simplify(chain.doit()) == 0, "chain rule for u = e^(-eta t)")
    Dq = u * sp.diff(q, u)
    num = u * sp.diff(Dq, u) * q - Dq**2  # q²·H''/η²
    pos_a = b * L * cc * u * p ** (L - 1) + b * L * (L - 1) * cc**2 * u**2 * p ** (L - 2)
    pos_b = b**2 * L * (cc**2 * u**2 if mutant else cc * u) * p ** (2 * L - 2)
    diff = sp.expand(sp.powsimp(sp.expand(num - (a * pos_a + pos_b), power_exp=True)))
    expect(diff == 0 or sp.simplify(diff) == 0, f"H'' decomposition fails: difference {diff}")
    # H* has the same log-part plus λt²/2 (t = √(KL) c), so H*'' = (log part)'' + λ
    logq = sp.log(q.subs(u, sp.exp(-eta * t)))
    Hs2 = sp.diff(logq + lam * t**2 / 2, t, 2)
    expect(sp.simplify(Hs2 - sp.diff(logq, t, 2) - lam) == 0, "H*'' != H_log'' + lambda")
    # the library's H'' and H*'' are η²(a·pos_a + pos_b)/q² (+ λ), evaluated at 50 digits

    tol = tolerances("H-strict-convexity")["rel"]
    for nv, nwv, Lv, Kv, dv, tv in [(3, 6, 2, 9, 4, 5.0), (2, 4, 3, 5, 2, 1.5), (4, 8, 5, 100, 7, 30.0)]:
        e1 = (nv / sp.Integer(nv - 1)) / sp.sqrt(nwv * Kv * Lv)
        es = (nv / sp.Integer(nv - 1)) / sp.sqrt(sp.Rational(Kv * Lv, dv))
        vals = {a: 1 - sp.Rational(Kv, nv**Lv), b: sp.Rational(Kv, nv**Lv), cc: nv - 1, L: Lv}
        for et, lib, extra in (
            (e1, importlib.import_module("fctheory.tau").H_second(tv, n_c=nv, n_w=nwv, L=Lv, K=Kv, lam=0.0), 0),
            (
                es,
                importlib.import_module("fctheory.tau_star").H_star_second(tv, n_c=nv, L=Lv, K=Kv, d=dv, lam=0.05),
                0.05,
            ),
        ):
            uv = sp.exp(-et * sp.Float(tv, 50))
            ref = (et**2 * (a * pos_a + pos_b) / q**2).subs(vals).subs(u, uv) + sp.Float(extra, 50)
            ref = float(sp.N(ref, 30))
            expect(
                abs(lib - ref) <= tol * abs(ref),
                f"library H'' = {lib!r} != decomposition {ref!r} on {(nv, nwv, Lv, Kv)}",
            )
    return "H'' q^2/eta^2 = a(...) + b^2 L c u p^(2L-2) > 0 for symbolic L; H*'' = that + lambda"


@register(
    "tau-trivial-threshold",
    "Theorem 1: tau > 0 iff lambda < lambda_trivial = sqrt(KL/n_w)/(1 + K - K/n_c^L) (H'(0) < 0); "
    "Theorem 3: H*'(0) < 0 so tau* > 0 always",
    "symbolic + numeric",
    "claims tau > 0 at lambda = 1.01 lambda_trivial",
    tol=dict(rel=1e-12),
    library=("lambda_trivial", "tau"),
    oracle="sympy: H'(0) differentiated symbolically; lambda_trivial evaluated from the symbolic expression",
)
def check_tau_threshold(mutant: bool = False, quick: bool = False) -> str:
    nw = sp.symbols("n_w", positive=True)
    eta1 = (n / (n - 1)) / sp.sqrt(nw * K * L)
    Hexpr = sp.log(1 - K / n**L + K / n**L * (1 + (n - 1) * sp.exp(-eta1 * t)) ** L) + lam * t
    H0 = sp.simplify(sp.diff(Hexpr, t).subs(t, 0))
    lam_triv = sp.sqrt(K * L / nw) / (1 + K - K / n**L)
    expect(sp.simplify(H0 - (lam - lam_triv)) == 0, f"H'(0) = {H0} != lambda - lambda_trivial")
    # H*'(0) = −η*·(K/n^L) L (n−1) n^{L−1} / (1 − K/n^L + K) < 0: the t² regulariser has zero slope
    etas = (n / (n - 1)) / sp.sqrt(K * L / d)
    Hs = sp.log(1 - K / n**L + K / n**L * (1 + (n - 1) * sp.exp(-etas * t)) ** L) + lam * t**2 / 2
    Hs0 = sp.simplify(sp.diff(Hs, t).subs(t, 0))
    expect(sp.simplify(Hs0 + etas * K * L * (n - 1) * n ** (L - 1) / n**L / (1 - K / n**L + K)) == 0, "H*'(0)")
    # numeric: the lead's τ and λ_trivial

    details = []
    for nc, nw_, Lv, Kv in [(3, 6, 2, 9), (2, 4, 3, 5), (3, 1200, 15, 1000)]:
        lt = float(_deps.lead("lambda_trivial")(n_c=nc, n_w=nw_, L=Lv, K=Kv))
        ref = float(lam_triv.subs({n: nc, nw: nw_, L: Lv, K: Kv}))
        expect(
            abs(lt - ref) <= tolerances("tau-trivial-threshold")["rel"] * ref,
            f"lambda_trivial({nc},{nw_},{Lv},{Kv}) = {lt} != {ref}",
        )
        above = 1.01 * lt
        below = 0.99 * lt
        if mutant:
            expect(
                float(_deps.lead("tau")(n_c=nc, n_w=nw_, L=Lv, K=Kv, lam=above)) > 0,
                "tau = 0 at lambda = 1.01 lambda_trivial",
            )
        expect(float(_deps.lead("tau")(n_c=nc, n_w=nw_, L=Lv, K=Kv, lam=below)) > 0, "tau = 0 below the threshold")
        expect(float(_deps.lead("tau")(n_c=nc, n_w=nw_, L=Lv, K=Kv, lam=above)) == 0, "tau > 0 above the threshold")
        details.append(f"{lt:.6g}")
    return "H'(0) = lambda - lambda_trivial symbolically; fctheory.tau switches at lambda_trivial = " + ", ".join(
        details
    )


# ----------------------------------------------------------------------------------------- exact configurations
def _exact_frame(nc: int, dd: int, mean_zero: bool = False) -> sp.Matrix:
    """dd×nc equiangular unit vectors (4) with exact entries: a Helmert basis of 1^⊥ scaled by √(n_c/(n_c−1)),
    embedded in R^dd (through a Helmert basis of 1_dd^⊥ when ``mean_zero``)."""

    def helmert(m, k):  # k orthonormal vectors of 1_m^⊥ as the columns of an m×k matrix
        Hm = sp.zeros(m, k)
        for j in range(1, k + 1):
            for i in range(j):
                Hm[i, j - 1] = 1 / sp.sqrt(j * (j + 1))
            Hm[j, j - 1] = -sp.Integer(j) / sp.sqrt(j * (j + 1))
        return Hm

    S = helmert(nc, nc - 1).T * sp.sqrt(sp.Rational(nc, nc - 1))  # (n_c−1)×n_c
    if mean_zero:
        return helmert(dd, nc - 1) * S
    F = sp.zeros(dd, nc)
    F[: nc - 1, :] = S
    return F


def _exact_task(nc: int, s_c: int, Lv: int):
    """The full latent set: rows z_k (list of tuples), P (n_c×n_w), Q with symbolic μ_β (Σμ = 1 imposed on the
    last one), Z (n_c×KL, column kL+ℓ = e_{z_kℓ}) — built from Definitions / appendix B, not from fctheory."""

    Zs = list(itertools.product(range(nc), repeat=Lv))
    nw = nc * s_c
    mus = list(sp.symbols(f"mu0:{s_c}", positive=True))
    mus[-1] = 1 - sum(mus[:-1])
    P = sp.zeros(nc, nw)
    Q = sp.zeros(nc, nw)
    for a in range(nc):
        for b in range(s_c):
            P[a, a * s_c + b] = 1
            Q[a, a * s_c + b] = mus[b]
    Z = sp.zeros(nc, len(Zs) * Lv)
    for k, z in enumerate(Zs):
        for ell, a in enumerate(z):
            Z[a, k * Lv + ell] = 1
    return Zs, nw, P, Q, Z, mus


def _inner(A: sp.Matrix, B: sp.Matrix):
    """<A, B> = tr(AᵀB), exactly."""
    return sp.expand(sum(A[i, j] * B[i, j] for i in range(A.rows) for j in range(A.cols)))


_CONFIG_CASES = [(2, 2, 2), (3, 2, 2), (2, 1, 3), (3, 3, 2)]


@register(
    "lemmaF-claimA-value",
    "Lemma F / Claim A: on B_c^I, <U_hat, W P^T Z> = c^2 s_c sqrt(K L n_w) (optimal value of (65)-(66), P for Q) "
    "= c^2 n_w sigma_max(P^T Z)",
    "symbolic + numeric",
    "value c^2 n_c sqrt(K L n_w)",
    tol=dict(rel=1e-12),
    library=("type1_configuration",),
    oracle="sympy: W = cFP, U_hat = c sqrt(n_w/(KL)) FZ built exactly (Helmert frame, full latent set) for symbolic c; "
    "sigma_max(P^T Z)^2 as the top eigenvalue of the exact Z^T P P^T Z",
)
def check_claim_A(mutant: bool = False, quick: bool = False) -> str:
    """Value computed from the definitions of B_c^I for symbolic c on small tasks, against the claim."""

    s_c, nw = sp.symbols("s_c n_w", positive=True)
    claim = c**2 * (n if mutant else s_c) * sp.sqrt(K * L * nw)
    tol = tolerances("lemmaF-claimA-value")["rel"]
    for nc, sc, Lv in _CONFIG_CASES if not quick else _CONFIG_CASES[:3]:
        Zs, nwv, P, _, Z, _ = _exact_task(nc, sc, Lv)
        Kv = len(Zs)
        F = _exact_frame(nc, nc)
        W = c * F * P
        Uh = c * sp.sqrt(sp.Rational(nwv, Kv * Lv)) * F * Z
        value = _inner(Uh, W * P.T * Z)
        want = claim.subs({s_c: sc, n: nc, K: Kv, L: Lv, nw: nwv})
        expect(
            sp.simplify(value - want) == 0, f"<U_hat, W P^T Z> = {sp.simplify(value)} != claim {want} on {(nc, sc, Lv)}"
        )
        # the budget ½(‖W‖² + ‖Û‖²) = c² n_w and the optimum c² n_w σ_max(PᵀZ) of (65)-(66)
        budget = (_inner(W, W) + _inner(Uh, Uh)) / 2
        expect(sp.simplify(budget - c**2 * nwv) == 0, f"budget (||W||^2 + ||U_hat||^2)/2 = {budget} != c^2 n_w")
        M = P.T * Z
        top = max((M * M.T).eigenvals())  # exact eigenvalues of an integer n_w×n_w matrix (same nonzero ones as MᵀM)
        expect(
            sp.simplify(c**2 * nwv * sp.sqrt(top) - want) == 0, f"c^2 n_w sigma_max(P^T Z) != claim on {(nc, sc, Lv)}"
        )
        # the library's type-I configuration attains it

        task = Task.full(nc, sc, Lv)
        Wl, Ul = fctheory.type1_configuration(task, d=nc + 1, c=0.7, seed=1)
        got = float(np.sum(fctheory.U_hat(Ul, L=Lv) * (Wl @ task.P.T @ task.Z_onehot)))
        wantf = float(want.subs(c, sp.Rational(7, 10)))
        expect(abs(got - wantf) <= tol * wantf, f"type1_configuration(c=0.7): <U_hat, W P^T Z> = {got} != {wantf}")
    return "Claim A's value derived from the exact matrices of B_c^I (symbolic c) on " + str(_CONFIG_CASES)


@register(
    "lemmaM-claimD-value",
    "Lemma M / Claim D: on B_c^II, <U_hat, V Q^T Z> = c sqrt(d) K L (optimal value of (97)-(98))",
    "symbolic",
    "value c d K L",
    tol=dict(rel=1e-12),
    library=("type2_configuration",),
    oracle="sympy: V = sqrt(d) F P (exact mean-zero frame), U_hat = c F Z, Q with symbolic word frequencies mu_b "
    "(sum 1), for symbolic c; the Cauchy-Schwarz bound (104) from the exact norms",
)
def check_claim_D(mutant: bool = False, quick: bool = False) -> str:
    """Value computed from the definitions of B_c^II for symbolic c and μ on small tasks, against the claim."""

    claim = c * (d if mutant else sp.sqrt(d)) * K * L
    tol = tolerances("lemmaM-claimD-value")["rel"]
    for nc, sc, Lv in _CONFIG_CASES if not quick else _CONFIG_CASES[:3]:
        Zs, nwv, P, Q, Z, mus = _exact_task(nc, sc, Lv)
        Kv = len(Zs)
        for dv in (nc, nc + 1):
            F = _exact_frame(nc, dv, mean_zero=True)
            V = sp.sqrt(dv) * F * P
            Uh = c * F * Z
            value = _inner(Uh, V * Q.T * Z)
            want = claim.subs({d: dv, K: Kv, L: Lv})
            expect(
                sp.simplify(value - want) == 0,
                f"<U_hat, V Q^T Z> = {sp.simplify(value)} != claim {want} on {(nc, sc, Lv)}, d={dv}",
            )
            # Cauchy-Schwarz (104): ‖Û‖·‖VQᵀZ‖ at the uniform μ equals the value (the bound is attained)
            unif = {m: sp.Rational(1, sc) for m in mus[:-1]}
            cs = sp.sqrt(_inner(Uh, Uh)) * sp.sqrt(_inner(V * P.T * Z, V * P.T * Z)) / sc
            expect(
                sp.simplify(cs - value.subs(unif)) == 0, f"Cauchy-Schwarz bound not attained on {(nc, sc, Lv)}, d={dv}"
            )
        task = Task.full(nc, sc, Lv, mu="zipf")
        Wl, Ul = fctheory.type2_configuration(task, d=nc + 1, c=0.7, seed=2)
        got = float(np.sum(fctheory.U_hat(Ul, L=Lv) * (fctheory.phi(Wl) @ task.Q.T @ task.Z_onehot)))
        wantf = float(claim.subs({c: sp.Rational(7, 10), d: nc + 1, K: Kv, L: Lv}))
        expect(abs(got - wantf) <= tol * wantf, f"type2_configuration(c=0.7): <U_hat, phi(W) Q^T Z> = {got} != {wantf}")
    return "Claim D's value derived from the exact matrices of B_c^II (symbolic c, mu) on " + str(_CONFIG_CASES)


def _exact_ce_terms(Zs, F, P, Uh, s_c, Lv):
    """For each class k, Σ_j exp(y_j(x) − y_k(x)) at the sentence x = ((z_k1, 0), …, (z_kL, 0)) (all sentences of a
    class give the same value on a collapse configuration), from the exact scores y_j(x) = Σ_ℓ <u_{j,ℓ}, v_{x_ℓ}>."""
    V = F * P
    out = []
    for k, z in enumerate(Zs):
        x = [a * s_c for a in z]

        def y(j):
            return sum(Uh[:, j * Lv + ell].dot(V[:, x[ell]]) for ell in range(Lv))

        yk = y(k)
        out.append(sum(sp.exp(sp.radsimp(sp.expand(y(j) - yk))) for j in range(len(Zs))))
    return out


@register(
    "lemmaK-lemmaR-constants",
    "Lemma K (92) and Lemma R (124): type-I margin c c' kappa r = eta n_w c^2 r, eta = kappa/sqrt(n_w K L); "
    "type-II margin c sqrt(d) kappa r = eta* sqrt(KL) c r, eta* = kappa/sqrt(KL/d); regularisers lambda n_w c^2, "
    "lambda KL c^2/2",
    "symbolic",
    "eta = kappa/sqrt(K L) (n_w dropped)",
    tol=dict(rel=1e-12),
    library=("H", "H_star"),
    oracle="sympy: the cross-entropy of every class computed from the exact scores of the type-I / type-II "
    "configuration (Helmert frames, exact LayerNorm) for symbolic c; fctheory.H, H_star at 50-digit values",
)
def check_lemma_K_R_constants(mutant: bool = False, quick: bool = False) -> str:
    """R(type I) = H(n_w c²) and R*(type II) = H*(√(KL) c) derived from the definitions for symbolic c."""

    tol = tolerances("lemmaK-lemmaR-constants")["rel"]
    nw_s = sp.symbols("n_w", positive=True)
    kap = n / (n - 1)
    eta1 = kap / sp.sqrt((1 if mutant else nw_s) * K * L)
    etas = kap / sp.sqrt(K * L / d)
    H_sym = sp.log(1 - K / n**L + K / n**L * (1 + (n - 1) * sp.exp(-eta1 * t)) ** L) + lam * t
    Hs_sym = sp.log(1 - K / n**L + K / n**L * (1 + (n - 1) * sp.exp(-etas * t)) ** L) + lam * t**2 / 2
    for nc, sc, Lv in [(2, 1, 2), (3, 1, 2), (2, 2, 2)][: 2 if quick else 3]:
        Zs, nwv, P, Q, Z, _ = _exact_task(nc, sc, Lv)
        Kv = len(Zs)
        sub = {n: nc, K: Kv, L: Lv, nw_s: nwv}
        # type I: W = cFP, Û = c′FZ with c′ = c√(n_w/(KL)); t = n_w c²
        F = _exact_frame(nc, nc - 1)
        Uh = c * sp.sqrt(sp.Rational(nwv, Kv * Lv)) * F * Z
        arg1 = sp.exp(H_sym.subs(sub).subs(t, nwv * c**2) - lam * nwv * c**2)  # the claimed softmax normaliser
        for k, tot in enumerate(_exact_ce_terms(Zs, c * F, P, Uh, sc, Lv)):
            expect(
                sp.simplify(sp.expand(tot - arg1)) == 0,
                f"type-I normaliser of class {k} on {(nc, sc, Lv)}: {tot} != {arg1}",
            )
        reg = lam / 2 * (_inner(c * F * P, c * F * P) + _inner(Uh, Uh))
        expect(sp.simplify(reg - lam * nwv * c**2) == 0, f"type-I regulariser {reg} != lambda n_w c^2")
        # type II: V = φ(W) = √d FP (exact LayerNorm of each column), Û = cFZ; t = √(KL) c
        for dv in (nc, nc + 1):
            F2 = _exact_frame(nc, dv, mean_zero=True)
            W2 = sp.sqrt(dv) * F2 * P
            for col in range(W2.cols):
                w = W2[:, col]
                mean = sum(w) / dv
                var = sum((wi - mean) ** 2 for wi in w) / dv
                expect(sp.simplify(var - 1) == 0 and sp.simplify(mean) == 0, "phi(sqrt(d) f) != sqrt(d) f")
            Uh2 = c * F2 * Z
            tt = sp.sqrt(Kv * Lv) * c
            arg2 = sp.exp(Hs_sym.subs(sub).subs(d, dv).subs(t, tt) - lam * tt**2 / 2)
            for k, tot in enumerate(_exact_ce_terms(Zs, sp.sqrt(dv) * F2, P, Uh2, sc, Lv)):
                expect(
                    sp.simplify(sp.expand(tot - arg2)) == 0,
                    f"type-II normaliser of class {k} on {(nc, sc, Lv)}, d={dv}",
                )
            reg2 = lam / 2 * _inner(Uh2, Uh2)
            expect(sp.simplify(reg2 - lam * tt**2 / 2) == 0, f"type-II regulariser {reg2} != lambda t^2/2")
        # the library's H and H* are these closed forms
        for tv, lamv in ((0.3, 0.01), (5.0, 0.1)):
            with mpmath.workdps(50):
                h_ref = sp.N(H_sym.subs(sub).subs({t: tv, lam: lamv}), 30)
                hs_ref = sp.N(Hs_sym.subs(sub).subs({t: tv, lam: lamv, d: nc + 1}), 30)
            h_lib = fctheory.H(tv, n_c=nc, n_w=nwv, L=Lv, K=Kv, lam=lamv)
            hs_lib = fctheory.H_star(tv, n_c=nc, L=Lv, K=Kv, d=nc + 1, lam=lamv)
            expect(abs(h_lib - float(h_ref)) <= tol * abs(float(h_ref)), f"fctheory.H = {h_lib!r} != {float(h_ref)!r}")
            expect(
                abs(hs_lib - float(hs_ref)) <= tol * abs(float(hs_ref)),
                f"fctheory.H_star = {hs_lib!r} != {float(hs_ref)!r}",
            )
    return "R(type I) = H(n_w c^2) and R*(type II) = H*(sqrt(KL) c) derived from the exact configurations (symbolic c)"


@register(
    "eq148-149-to-7-8",
    "Prop. C / Theorem 2: (148)-(149) with sigma(x) = 1/(1+(n_c-1)e^(-kappa x)) rewrite to (7) "
    "(lambda/L)(r/c)(n_c-1+e^(kappa c r)) = mu and (8) sum_beta (r_beta/c)^2 = K L/n_c",
    "symbolic",
    "(8) with K L instead of K L/n_c",
    tol=dict(rel=1e-12),
    library=("solve_type3",),
    oracle="sympy (solve, simplify) for symbolic n_c, L, K, lambda, c, r_beta, mu_beta; (148)-(149) evaluated at 50 "
    "digits at the library's solution",
)
def check_148_149(mutant: bool = False, quick: bool = False) -> str:
    rb, mu = sp.symbols("r_beta mu_beta", positive=True)
    kap = n / (n - 1)
    sig = 1 / (1 + (n - 1) * sp.exp(-kap * c * rb))
    # (149) ⟺ (7): λ r = (κL/n) c μ (1 − σ)  ⟺  μ = (λ/L)(r/c)(n − 1 + e^{κ c r})
    mu_from_149 = sp.solve(sp.Eq(lam * rb, kap * L / n * c * mu * (1 - sig)), mu)[0]
    expect(sp.simplify(mu_from_149 - lam / L * rb / c * (n - 1 + sp.exp(kap * c * rb))) == 0, "(149) -> (7)")
    # (148) with (149) substituted: each β-term μ_β r_β(1 − σ) = λ n r_β²/(κ L c), so
    # λ c = (κ/K) Σ_β λ n r_β²/(κ L c) ⟺ Σ_β r_β² = K L c²/n
    term = sp.simplify(mu_from_149 * rb * (1 - sig))
    expect(sp.simplify(term - lam * n * rb**2 / (kap * L * c)) == 0, "(149) substitution into (148)")
    S2 = sp.symbols("S2", positive=True)  # Σ_β r_β²
    sol = sp.solve(sp.Eq(lam * c, kap / K * lam * n * S2 / (kap * L * c)), S2)[0]
    claim = K * L * c**2 if mutant else K * L * c**2 / n
    expect(sp.simplify(sol - claim) == 0, f"(8): sum r^2 = {sol} != {claim}")
    # the library's solution satisfies (148)-(149) as printed (σ with κ), at 50 digits

    tol = tolerances("eq148-149-to-7-8")["rel"]
    for nv, sv, Lv, lv in [(3, 3, 2, 0.02), (2, 4, 3, 0.01)]:
        muv = Task.full(nv, sv, Lv, mu="zipf").mu
        res = fctheory.solve_type3(mu=muv, n_c=nv, L=Lv, lam=lv)
        with mpmath.workdps(50):
            kv = mpmath.mpf(nv) / (nv - 1)
            cv = mpmath.mpf(float(res.c))
            rv = [mpmath.mpf(float(x)) for x in res.r]
            om = [1 - 1 / (1 + (nv - 1) * mpmath.exp(-kv * cv * x)) for x in rv]
            r148 = abs(lv * cv - kv / nv**Lv * sum(mpmath.mpf(float(m)) * x * o for m, x, o in zip(muv, rv, om))) / (
                lv * cv
            )
            r149 = max(
                abs(lv * x - kv * Lv / nv * cv * mpmath.mpf(float(m)) * o) / (lv * x) for m, x, o in zip(muv, rv, om)
            )
        expect(
            r148 <= tol and r149 <= tol,
            f"solve_type3 solution violates (148)/(149): {float(r148):.1e}, {float(r149):.1e}",
        )
    return "(148)+(149) <=> (7)+(8) for symbolic n_c, L, K, lambda, c, r_beta, mu_beta"


@register(
    "propD-monotonicity",
    "Prop. D (153)-(158): psi_s(rho) = rho(n_c-1+e^(kappa s rho)) strictly increasing, rho_beta(s) "
    "strictly decreasing, F(0) > L n_c^(L-1) iff (9) lambda^2 < (L/n_c^(L+1)) sum mu^2",
    "symbolic",
    "existence condition claimed as lambda^2 < (L/n_c^L) sum mu^2",
    tol=dict(rel=1e-12),
    library=("lambda_max_type3",),
    oracle="sympy: implicit-function derivatives and the threshold solved symbolically, evaluated exactly",
)
def check_prop_D(mutant: bool = False, quick: bool = False) -> str:
    rho, s, S2 = sp.symbols("rho s Sigma_mu2", positive=True)
    kap = n / (n - 1)
    psi = rho * (n - 1 + sp.exp(kap * s * rho))
    dpsi = sp.diff(psi, rho)
    expect(sp.simplify(dpsi - (n - 1 + sp.exp(kap * s * rho) * (1 + kap * s * rho))) == 0, "psi'")
    dpsi_s = sp.diff(psi, s)
    expect(sp.simplify(dpsi_s - kap * rho**2 * sp.exp(kap * s * rho)) == 0, "d psi/ds")
    # implicit function: dρ/ds = −ψ_s/ψ_ρ < 0 since both partials are > 0 for ρ, s > 0 (n_c > 1)
    ncp = sp.symbols("m", positive=True)  # n_c = 1 + m
    expect(sp.simplify(dpsi.subs(n, 1 + ncp)).is_positive, "psi_rho > 0 not proved")
    expect(sp.simplify(dpsi_s.subs(n, 1 + ncp)).is_positive, "psi_s > 0 not proved")
    # F(0) = Σ ρ_β(0)² with ρ_β(0) = Lμ_β/(λ n): F(0) > L n^{L−1} ⟺ λ² < L Σμ²/n^{L+1}
    F0 = L**2 * S2 / (lam**2 * n**2)
    lam_max2 = sp.solve(sp.Eq(F0, L * n ** (L - 1)), lam)[0] ** 2
    claim = L * S2 / n**L if mutant else L * S2 / n ** (L + 1)
    expect(sp.simplify(lam_max2 - claim) == 0, f"(9) threshold {sp.simplify(lam_max2)} != {claim}")

    for muv, nv, Lv in [((0.5, 0.3, 0.2), 3, 2), ((0.7, 0.3), 2, 4), ((0.25, 0.25, 0.25, 0.25), 5, 3)]:
        want = float(sp.sqrt(claim.subs({S2: sum(sp.Float(m, 30) ** 2 for m in muv), n: nv, L: Lv})))
        got = fctheory.lambda_max_type3(mu=list(muv), n_c=nv, L=Lv)
        expect(
            abs(got - want) <= tolerances("propD-monotonicity")["rel"] * want, f"lambda_max_type3 = {got!r} != {want!r}"
        )
    return "psi_rho > 0, psi_s > 0 (so rho_beta decreasing), F(0) = L n^(L-1) at lambda^2 = L sum mu^2/n^(L+1)"
