"""Machine-checked algebra of the proof that Theorem 2's type-III point is a global minimiser on full tasks.

The proof is written out in docs/conjecture-type3.md (steps 1–8). The checks here verify its algebraic
steps with sympy (n_c, L, K, c, λ, S, ‖v‖ symbolic where sympy can handle them; s_c = 2, 3 with symbolic
r_β, μ_β, v_β) and by exact rational enumeration of the true risk (steps 2–3):

* ``type3-proof-factorisation`` (steps 2–3): ∇f(EM) = −(S^(L−1)/K) E Γ P_v, exact in rationals;
* ``type3-proof-spectrum`` (step 4): Γ, Γ² = κ²(I − 11ᵀ/n_c), P_v P_vᵀ = ‖v‖² I, EᵀE = (KL/n_c) I, and
  ∇fᵀ∇f has the single nonzero eigenvalue s², multiplicity n_c − 1, s = κ S^(L−1) ‖v‖ √(L/(n_c K));
* ``type3-proof-critical`` (step 5): (7), (8), (134) give s(X_III) = λ and ∇f(X_III) = −(λ n_c/(κLc²K)) X_III;
* ``type3-proof-balance`` (step 7): ‖W_III‖² = ‖Û_III‖² = ‖X_III‖_* = KLc²;
* ``type3-proof-origin`` (step 8): s(0) = λ_max.

Matrices built from the identity I and J = 11ᵀ (n_c × n_c, n_c symbolic) are handled as pairs (α, β) meaning
αI + βJ: J² = n_c J closes the algebra, tr J = n_c, and αI + βJ has the eigenvalue α + n_c β on 1 and α, with
multiplicity n_c − 1, on 1^⊥ (its eigen-decomposition). Steps 1 and 6 (Claim G's inequality, the
convexity/subgradient argument) are not checked here.
"""

from __future__ import annotations

import functools
import itertools
from fractions import Fraction

import mpmath
import numpy as np
import sympy as sp

import fctheory
from fctheory import Task

from .registry import expect, register, tolerances

__all__ = [
    "IJ",
    "spectrum_general",
    "gradient_enumerated",
    "gradient_closed_form",
    "check_factorisation",
    "check_spectrum",
    "check_critical_value",
    "check_balance",
    "check_origin",
]

n, K, L, c, lam, S, vn = sp.symbols("n_c K L c lambda S v_norm", positive=True)
kappa = n / (n - 1)
_m = sp.symbols("m", positive=True)


# --------------------------------------------------------------------------------- the algebra of I and 11ᵀ
class IJ:
    """αI + βJ with J = 11ᵀ (n_c × n_c, n_c symbolic): J² = n_c J, tr J = n_c."""

    def __init__(self, alpha, beta):
        self.alpha, self.beta = sp.sympify(alpha), sp.sympify(beta)

    def __mul__(self, other):
        if not isinstance(other, IJ):
            return IJ(self.alpha * other, self.beta * other)
        a1, b1, a2, b2 = self.alpha, self.beta, other.alpha, other.beta
        return IJ(a1 * a2, a1 * b2 + b1 * a2 + n * b1 * b2)

    __rmul__ = __mul__

    def __sub__(self, other):
        return IJ(self.alpha - other.alpha, self.beta - other.beta)

    def trace(self):
        return n * self.alpha + n * self.beta

    def eig_on_ones(self):
        """Eigenvalue on the vector 1 (J1 = n_c 1)."""
        return self.alpha + n * self.beta

    def eig_on_complement(self):
        """Eigenvalue on 1^⊥ (J = 0 there), multiplicity n_c − 1."""
        return self.alpha

    def is_zero(self):
        return sp.simplify(self.alpha) == 0 and sp.simplify(self.beta) == 0


def _zero(expr) -> bool:
    """True when sympy simplifies ``expr`` to 0 (directly, after expansion, or with n_c = 1 + m, m > 0, which
    lets sympy use n_c > 1, e.g. |n_c − 1| = n_c − 1)."""
    if sp.simplify(expr) == 0 or sp.simplify(sp.expand(expr)) == 0:
        return True
    return sp.simplify(sp.expand(expr.subs(n, 1 + _m))) == 0


def _gamma_entry(nv, a, alpha):
    """Γ[a, α] = ⟨f_a, f_α⟩ = (n_c δ_aα − 1)/(n_c − 1), equation (4)."""
    return sp.Rational(nv * (a == alpha) - 1, nv - 1)


def spectrum_general(*, kappa_factor=kappa):
    """Step 4 for symbolic n_c, K, L, S, ‖v‖: returns (s², list of (ok, what))."""
    steps = []
    Jm = IJ(0, 1)
    steps.append(((Jm * Jm - IJ(0, n)).is_zero(), "J^2 = n_c J"))
    Pi = IJ(1, -1 / n)  # I − 11ᵀ/n_c
    steps.append(((Pi * Pi - Pi).is_zero(), "I - 11^T/n_c is a projector"))
    steps.append((_zero(Pi.eig_on_ones()) and _zero(Pi.eig_on_complement() - 1), "eigenvalues of I - 11^T/n_c: 0, 1"))
    Gam = IJ(kappa, -kappa / n)  # Γ = (n_c I − J)/(n_c − 1) entrywise (n_c δ − 1)/(n_c − 1)
    steps.append((_zero(Gam.alpha + Gam.beta - 1) and _zero(Gam.beta + 1 / (n - 1)), "Gamma entries"))
    G2 = Gam * Gam
    steps.append(((G2 - kappa**2 * Pi).is_zero(), "Gamma^2 = kappa^2 (I - 11^T/n_c)"))
    # ∇fᵀ∇f = c0 P_vᵀ Γ (EᵀE) Γ P_v with EᵀE = (KL/n_c) I; with P_v P_vᵀ = ‖v‖² I:
    # (∇fᵀ∇f)² = c0² ‖v‖² P_vᵀ Γ⁴ P_v and tr ∇fᵀ∇f = c0 ‖v‖² tr Γ²
    c0 = S ** (2 * L - 2) / K**2 * (K * L / n)
    G4 = G2 * G2
    ratio = sp.simplify(G4.alpha / G2.alpha)
    steps.append(((G4 - ratio * G2).is_zero(), "Gamma^4 = kappa^2 Gamma^2"))
    s2_sq = c0 * vn**2 * ratio  # G² = s² G with this s²: every nonzero eigenvalue of G equals s²
    mult = sp.simplify(c0 * vn**2 * G2.trace() / s2_sq)  # tr G / s² = number of nonzero eigenvalues
    steps.append((_zero(mult - (n - 1)), f"multiplicity tr(G)/s^2 = {mult} != n_c - 1"))
    steps.append((_zero(G2.eig_on_ones()), "Gamma^2 annihilates 1 (rank n_c - 1)"))
    claim = (kappa_factor * S ** (L - 1) * vn * sp.sqrt(L / (n * K))) ** 2
    steps.append((_zero(s2_sq - claim), f"s^2 = {sp.simplify(s2_sq)} != claimed {sp.simplify(claim)}"))
    return s2_sq, steps


def s_closed(v_norm, S_=1, K_=None, L_=L, n_=n):
    """(*): s = κ S^(L−1) ‖v‖ √(L/(n_c K)), K = n_c^L by default."""
    K_ = n_**L_ if K_ is None else K_
    return n_ / (n_ - 1) * S_ ** (L_ - 1) * v_norm * sp.sqrt(L_ / (n_ * K_))


# ------------------------------------------------------------------------------ steps 2–3: exact gradient
def gradient_enumerated(nv: int, s_c: int, Lv: int, mu, t):
    """∂f/∂X at X = EM by enumerating every class and sentence, in exact rationals.

    e^(M[a,(α,β)]) = 1 if a = α else t_β (t_β = e^(b_β − a_β) rational; a common shift of a column of M leaves
    every softmax unchanged). f = (1/K) Σ_k Σ_x μ(x) (−log p_k(x)), μ(x) = Π_ℓ μ_(β_ℓ) (Σμ = S need not be 1);
    ∂(−log p_k)/∂y_j = p_j − δ_jk, ∂y_j(x)/∂X[jL+ℓ, w] = 1(x_ℓ = w). Rows jL+ℓ, columns α s_c + β.
    """
    Zs = list(itertools.product(range(nv), repeat=Lv))
    Kv = len(Zs)
    G = [[Fraction(0)] * (nv * s_c) for _ in range(Kv * Lv)]
    for k, zk in enumerate(Zs):
        for betas in itertools.product(range(s_c), repeat=Lv):
            weight = Fraction(1)
            for b in betas:
                weight *= mu[b]
            ex = []
            for zj in Zs:
                e = Fraction(1)
                for ell in range(Lv):
                    if zj[ell] != zk[ell]:
                        e *= t[betas[ell]]
                ex.append(e)
            tot = sum(ex)
            for j in range(Kv):
                coef = weight * (ex[j] / tot - (j == k)) / Kv
                for ell in range(Lv):
                    G[j * Lv + ell][zk[ell] * s_c + betas[ell]] += coef
    return Zs, G


def gradient_closed_form(Zs, nv, s_c, Lv, mu, t, *, s_power=None):
    """Step 3: −(S^(L−1)/K) v_β Γ[z_jℓ, α], v_β = μ_β(1 − σ_β), σ_β = 1/(1 + (n_c − 1) t_β)."""
    Kv = len(Zs)
    Ssum = sum(mu, Fraction(0))
    pw = Lv - 1 if s_power is None else s_power
    out = []
    for zj in Zs:
        for ell in range(Lv):
            row = []
            for alpha in range(nv):
                for b in range(s_c):
                    v = mu[b] * (1 - 1 / (1 + (nv - 1) * t[b]))
                    gam = Fraction(nv * (zj[ell] == alpha) - 1, nv - 1)
                    row.append(-(Ssum**pw) / Kv * v * gam)
            out.append(row)
    return out


def _sympy_gradient(nv, s_c, Lv, mu, t):
    """The same gradient by sympy differentiation of f written with symbolic X entries (small tasks only)."""
    Zs = list(itertools.product(range(nv), repeat=Lv))
    Kv, nw = len(Zs), nv * s_c
    X = sp.Matrix(Kv * Lv, nw, lambda i, w: sp.Symbol(f"x_{i}_{w}"))
    f = 0
    for k, zk in enumerate(Zs):
        for betas in itertools.product(range(s_c), repeat=Lv):
            words = [zk[ell] * s_c + betas[ell] for ell in range(Lv)]
            y = [sum(X[j * Lv + ell, words[ell]] for ell in range(Lv)) for j in range(Kv)]
            weight = sp.Mul(*[sp.Rational(mu[b].numerator, mu[b].denominator) for b in betas])
            f += weight * (-y[k] + sp.log(sum(sp.exp(yj) for yj in y)))
    f = f / Kv
    at = {}
    for j, zj in enumerate(Zs):
        for ell in range(Lv):
            for alpha in range(nv):
                for b in range(s_c):
                    tb = sp.Rational(t[b].numerator, t[b].denominator)
                    at[X[j * Lv + ell, alpha * s_c + b]] = 0 if zj[ell] == alpha else sp.log(tb)
    return [[sp.nsimplify(sp.simplify(sp.diff(f, X[i, w]).subs(at))) for w in range(nw)] for i in range(Kv * Lv)]


_FACT_TASKS = [(nv, sv, Lv) for nv in (2, 3) for sv in (1, 2) for Lv in (1, 2)]
_MU = [Fraction(1, 3), Fraction(1, 2)]  # S = Σμ ≠ 1 (for s_c = 2), so the power S^(L−1) is tested
_T = [Fraction(1, 3), Fraction(5, 2)]


@register(
    "type3-proof-factorisation",
    "Steps 2-3 of the type-III proof (docs/conjecture-type3.md): on a full task, at a concept-symmetric X = EM, "
    "grad f(X)[jL+l, (alpha,beta)] = -(S^(L-1)/K) mu_beta (1 - sigma_beta) Gamma[z_jl, alpha], "
    "sigma_beta = 1/(1+(n_c-1)e^(b_beta - a_beta)), exactly (n_c in {2,3}, s_c in {1,2}, L in {1,2})",
    "exact enumeration",
    "the factor S^(L-1) of the other positions dropped",
    oracle="exact rational enumeration of every class and sentence (fractions.Fraction, rational e^(b-a), "
    "S = sum mu != 1); sympy differentiation of the enumerated risk on the smallest tasks",
)
def check_factorisation(mutant: bool = False, quick: bool = False) -> str:
    """Exact equality of the enumerated and closed-form gradients, entry by entry."""
    for nv, sv, Lv in _FACT_TASKS:
        mu, t = _MU[:sv] if sv > 1 else [Fraction(2, 3)], _T[:sv]
        Zs, G = gradient_enumerated(nv, sv, Lv, mu, t)
        C = gradient_closed_form(Zs, nv, sv, Lv, mu, t, s_power=0 if mutant else None)
        bad = [(i, w) for i, row in enumerate(G) for w, g in enumerate(row) if g != C[i][w]]
        expect(not bad, f"(n_c,s_c,L)=({nv},{sv},{Lv}): enumerated != closed form at {bad[:3]}")
    # the softmax cross-entropy derivative itself, by sympy on the enumerated risk
    for nv, sv, Lv in [(2, 2, 1), (2, 1, 2)] if quick else [(2, 2, 1), (2, 1, 2), (3, 1, 1), (2, 2, 2)]:
        mu, t = _MU[:sv] if sv > 1 else [Fraction(2, 3)], _T[:sv]
        Zs, G = gradient_enumerated(nv, sv, Lv, mu, t)
        D = _sympy_gradient(nv, sv, Lv, mu, t)
        bad = [
            (i, w)
            for i, row in enumerate(G)
            for w, g in enumerate(row)
            if D[i][w] != sp.Rational(g.numerator, g.denominator)
        ]
        expect(not bad, f"sympy derivative != enumerated gradient on ({nv},{sv},{Lv}) at {bad[:3]}")
    return f"grad f(EM) = -(S^(L-1)/K) E Gamma P_v exactly on {len(_FACT_TASKS)} full tasks (S = 5/6 for s_c = 2)"


# --------------------------------------------------------------------------------------- step 4: spectrum
def _explicit_spectrum(nv: int, s_c: int, kappa_factor):
    """Explicit n_c with symbolic v_β, K, L, S: Γ, P_v P_vᵀ, G = ∇fᵀ∇f, G² = s² G, tr G = (n_c − 1) s²."""
    v = sp.symbols(f"v0:{s_c}", real=True)
    Gam = sp.Matrix(nv, nv, lambda a, al: _gamma_entry(nv, a, al))
    P = sp.zeros(nv, nv * s_c)
    for a in range(nv):
        for b in range(s_c):
            P[a, a * s_c + b] = v[b]
    norm2 = sum(x**2 for x in v)
    ok_p = (P * P.T - norm2 * sp.eye(nv)).expand() == sp.zeros(nv, nv)
    kv = sp.Rational(nv, nv - 1)
    ok_g2 = Gam * Gam == kv**2 * (sp.eye(nv) - sp.ones(nv, nv) / nv)
    c0 = S ** (2 * L - 2) * L / (nv * K)  # (S^(L−1)/K)² · KL/n_c from EᵀE
    Gm = c0 * P.T * Gam * Gam * P
    s2 = (kappa_factor.subs(n, nv) * S ** (L - 1) * sp.sqrt(norm2) * sp.sqrt(L / (nv * K))) ** 2
    ok_sq = (Gm * Gm - s2 * Gm).applyfunc(lambda e: sp.simplify(sp.expand(e))) == sp.zeros(nv * s_c, nv * s_c)
    ok_tr = _zero(Gm.trace() - (nv - 1) * s2)
    return ok_p, ok_g2, ok_sq, ok_tr, Gam


def _E_gram_ok(nv: int, Lv: int) -> bool:
    """EᵀE = (KL/n_c) I for the concept indicator E of the full latent set C^L (exact integers)."""
    Zs = list(itertools.product(range(nv), repeat=Lv))
    E = sp.zeros(len(Zs) * Lv, nv)
    for k, z in enumerate(Zs):
        for ell, a in enumerate(z):
            E[k * Lv + ell, a] = 1
    return E.T * E == sp.Rational(len(Zs) * Lv, nv) * sp.eye(nv)


@register(
    "type3-proof-spectrum",
    "Step 4 of the type-III proof: with E^T E = (KL/n_c) I, Gamma[a,alpha] = (n_c delta - 1)/(n_c - 1), "
    "Gamma^2 = kappa^2 (I - 11^T/n_c), P_v P_v^T = ||v||^2 I, grad f^T grad f has the single nonzero eigenvalue s^2, "
    "multiplicity n_c - 1, s = kappa S^(L-1) ||v|| sqrt(L/(n_c K)) (symbolic n_c, K, L, S, ||v||; explicit "
    "n_c = 2, 3, 4 with symbolic v)",
    "symbolic",
    "s without its factor kappa = n_c/(n_c-1)",
    tol=dict(gram=1e-15),
    library=("equiangular_gram",),
    oracle="sympy: the algebra of I and 11^T for symbolic n_c (its eigen-decomposition), explicit matrices for "
    "n_c = 2, 3, 4 (G^2 = s^2 G, tr G = (n_c-1) s^2); E^T E from the enumerated full latent set",
)
def check_spectrum(mutant: bool = False, quick: bool = False) -> str:
    kf = sp.Integer(1) if mutant else kappa
    _, steps = spectrum_general(kappa_factor=kf)
    for ok, what in steps:
        expect(ok, f"step 4 (symbolic n_c): {what}")
    tol = tolerances("type3-proof-spectrum")["gram"]
    for nv, sv in [(2, 2), (3, 2), (4, 2)] + ([] if quick else [(2, 3), (3, 3)]):
        ok_p, ok_g2, ok_sq, ok_tr, Gam = _explicit_spectrum(nv, sv, kf)
        expect(ok_p and ok_g2, f"n_c={nv}: P_v P_v^T = ||v||^2 I or Gamma^2 = kappa^2 (I - 11^T/n_c) fails")
        expect(ok_sq and ok_tr, f"n_c={nv}, s_c={sv}: G^2 != s^2 G or tr G != (n_c-1) s^2")
        lib = fctheory.equiangular_gram(nv)
        expect(
            np.max(np.abs(lib - np.array(Gam, dtype=float))) <= tol, f"equiangular_gram({nv}) != Gamma: {lib.tolist()}"
        )
    for nv, Lv in [(2, 1), (2, 3), (3, 2), (4, 2)]:
        expect(_E_gram_ok(nv, Lv), f"E^T E != (KL/n_c) I on the full set (n_c, L) = ({nv}, {Lv})")
    return "grad f^T grad f = s^2 x (projector of rank n_c - 1), s = kappa S^(L-1) ||v|| sqrt(L/(n_c K))"


# ---------------------------------------------------------------------------------- step 5: type-III point
@functools.lru_cache(maxsize=4)
def _type3_symbols(s_c: int):
    r = sp.symbols(f"r0:{s_c}", positive=True)
    # (7) as implemented in fctheory/type3.py: (λ/L)(r_β/c)(n_c − 1 + exp(κ c r_β)) = μ_β
    mu = [lam / L * rb / c * (n - 1 + sp.exp(kappa * c * rb)) for rb in r]
    a = [c * rb for rb in r]
    b = [-c * rb / (n - 1) for rb in r]
    sigma = [1 / (1 + (n - 1) * sp.exp(bb - aa)) for aa, bb in zip(a, b)]  # step 2's σ_β = (134) at x = c r_β
    v = [m * (1 - s) for m, s in zip(mu, sigma)]
    return r, mu, a, b, sigma, v


def _impose_8(expr, r, factor):
    """Substitute (8), Σ_β (r_β/c)² = factor, by eliminating the last r_β."""
    rest = sum(x**2 for x in r[:-1])
    return expr.subs(r[-1], sp.sqrt(factor * c**2 - rest))


@register(
    "type3-proof-critical",
    "Step 5 of the type-III proof: with (7), (8) (sum (r/c)^2 = L n_c^(L-1)) and (134), a = c r, b = -c r/(n_c-1): "
    "v = (lambda n_c/(kappa L c)) r, s(X_III) = lambda identically, grad f(X_III) = -(lambda n_c/(kappa L c^2 K)) "
    "X_III, the n_c - 1 nonzero singular values of X_III equal kappa c^2 KL/n_c (so grad f = -lambda Q) "
    "(symbolic n_c, L, c, lambda, r_beta; s_c = 2, 3)",
    "symbolic",
    "(8) read as sum (r/c)^2 = L n_c^L",
    tol=dict(rel=1e-12),
    library=("solve_type3",),
    oracle="sympy simplification to 0 for symbolic n_c, L, c, lambda, r_beta (s_c = 2, 3); s/lambda at the "
    "library's (c, r) evaluated at 50 digits",
)
def check_critical_value(mutant: bool = False, quick: bool = False) -> str:
    factor8 = L * n**L if mutant else L * n ** (L - 1)
    Kf = n**L
    for sv in (2,) if quick else (2, 3):
        r, mu, a, b, sigma, v = _type3_symbols(sv)
        for rb, vb in zip(r, v):
            expect(_zero(vb - lam * n * rb / (kappa * L * c)), f"(149): v_beta != lambda n_c r/(kappa L c) (s_c={sv})")
        # (149) proved entrywise above: continue with v_β = λ n_c r_β/(κ L c) (exponentials eliminated)
        v_red = [lam * n * rb / (kappa * L * c) for rb in r]
        s2 = s_closed(sp.sqrt(sum(x**2 for x in v_red)), K_=Kf) ** 2
        expect(_zero(_impose_8(s2, r, factor8) - lam**2), f"s(X_III)^2 - lambda^2 != 0 (s_c={sv})")
        # ∇f = −(1/K) EΓP_v and X_III = EM, M[a,(α,β)] = a_β (a = α), b_β (a ≠ α): compare M-entries
        coef = -lam * n / (kappa * L * c**2 * Kf)
        for vb, ab, bb in zip(v, a, b):
            expect(_zero(-vb / Kf - coef * ab), f"grad f != coef X_III on the own concept (s_c={sv})")
            expect(_zero(vb / ((n - 1) * Kf) - coef * bb), f"grad f != coef X_III on other concepts (s_c={sv})")
    # any s_c: (149) is one identity per β (checked above for a generic β), so ‖v‖ = (λ n_c/(κLc))‖r‖, and
    # (8) fixes ‖r‖ = c √(factor8) whatever s_c is
    s_any = s_closed(lam * n / (kappa * L * c) * c * sp.sqrt(factor8), K_=Kf)
    expect(_zero(s_any**2 - lam**2), f"s(X_III)^2 = {sp.simplify(s_any**2)} != lambda^2 for symbolic ||r||")
    # X_III = c EΓP_r: by step 4 its nonzero singular value is c κ ‖r‖ √(KL/n_c); (8): ‖r‖ = c √(KL/n_c)
    sv_X = c * kappa * c * sp.sqrt(factor8) * sp.sqrt(Kf * L / n)
    expect(_zero(sv_X - kappa * c**2 * Kf * L / n), f"sigma(X_III) = {sp.simplify(sv_X)} != kappa c^2 KL/n_c")
    expect(_zero(-coef * sv_X - lam), "grad f(X_III) = -lambda Q fails")
    tol = tolerances("type3-proof-critical")["rel"]
    for muv, nv, Lv, lv in [((0.5, 0.3, 0.2), 3, 2, 0.05), ((0.7, 0.3), 2, 3, 0.1)]:
        sol = fctheory.solve_type3(mu=list(muv), n_c=nv, L=Lv, lam=lv)
        with mpmath.workdps(50):
            kv = mpmath.mpf(nv) / (nv - 1)
            cv = mpmath.mpf(float(sol.c))
            vv = [
                mpmath.mpf(m) * (1 - 1 / (1 + (nv - 1) * mpmath.exp(-kv * cv * mpmath.mpf(float(x)))))
                for m, x in zip(muv, sol.r)
            ]
            Kv = mpmath.mpf(nv) ** Lv
            s = kv * mpmath.sqrt(sum(x**2 for x in vv)) * mpmath.sqrt(Lv / (nv * Kv))
            rel = abs(s / lv - 1)
        expect(rel <= tol, f"s/lambda - 1 = {float(rel):.2e} at solve_type3's (c, r), {(muv, nv, Lv, lv)}")
    return "s(X_III) = lambda and grad f(X_III) = -(lambda n_c/(kappa L c^2 K)) X_III = -lambda Q identically"


# ----------------------------------------------------------------------------------------- step 7: balance
@register(
    "type3-proof-balance",
    "Step 7 of the type-III proof: under (8), ||W_III||^2 = n_c ||r||^2 = KL c^2 = ||U_hat_III||^2 = ||X_III||_* "
    "(n_c - 1 singular values kappa c^2 KL/n_c; also from ||X||_* = sqrt(KL/n_c)[(n_c-1)||a-b|| + ||a+(n_c-1)b||]), "
    "so R(W_III, U_III) = g(X_III)",
    "symbolic",
    "||X_III||_* counted with n_c instead of n_c - 1 nonzero singular values",
    tol=dict(rel=1e-12),
    library=("type3_configuration", "U_hat"),
    oracle="sympy for symbolic n_c, L, c, r_beta (s_c = 2, 3); the library's type-III configuration: Frobenius norms "
    "and numpy's nuclear norm of U_hat^T W",
)
def check_balance(mutant: bool = False, quick: bool = False) -> str:
    Kf = n**L
    target = Kf * L * c**2
    for sv in (2, 3):
        r = sp.symbols(f"r0:{sv}", positive=True)
        norm_r = sp.sqrt(sum(x**2 for x in r))
        W2 = _impose_8(n * norm_r**2, r, L * n ** (L - 1))  # w_(α,β) = r_β f_α, ‖f_α‖ = 1
        expect(_zero(W2 - target), f"||W_III||^2 = {sp.simplify(W2)} != KL c^2 (s_c={sv})")
        # ‖X‖_* from step 4's formula at a = c r, b = −c r/(n_c − 1)
        a = [c * x for x in r]
        b = [-c * x / (n - 1) for x in r]
        amb = sp.sqrt(sum((x - y) ** 2 for x, y in zip(a, b)))
        apb = sp.sqrt(sp.simplify(sum((x + (n - 1) * y) ** 2 for x, y in zip(a, b))))
        nuc_formula = _impose_8(sp.sqrt(Kf * L / n) * ((n - 1) * amb + apb), r, L * n ** (L - 1))
        expect(_zero(nuc_formula - target), f"||X_III||_* formula = {sp.simplify(nuc_formula)} != KL c^2")
    U2 = Kf * L * c**2  # KL columns u_(k,ℓ) = c f_(z_kℓ), each of norm c
    expect(_zero(U2 - target), "||U_hat_III||^2 != KL c^2")
    count = n if mutant else n - 1
    nuc = count * kappa * c**2 * Kf * L / n  # step 5: n_c − 1 equal nonzero singular values
    expect(_zero(nuc - target), f"||X_III||_* = {sp.simplify(nuc)} != KL c^2")
    tol = tolerances("type3-proof-balance")["rel"]
    for nv, sv, Lv, lv in [(3, 2, 2, 0.05), (2, 3, 3, 0.1)]:
        task = Task.full(nv, sv, Lv, mu="zipf")
        W, U = fctheory.type3_configuration(task, d=nv, lam=lv)
        Uh = fctheory.U_hat(U, L=Lv)
        cv = float(fctheory.solve_type3(mu=task.mu, n_c=nv, L=Lv, lam=lv).c)
        want = task.K * Lv * cv**2
        got = (np.sum(W * W), np.sum(Uh * Uh), np.sum(np.linalg.svd(Uh.T @ W, compute_uv=False)))
        expect(
            all(abs(x - want) <= tol * want for x in got), f"||W||^2, ||U_hat||^2, ||X||_* = {got} != KL c^2 = {want}"
        )
    return "||W_III||^2 = ||U_hat_III||^2 = ||X_III||_* = KL c^2 under (8)"


# ------------------------------------------------------------------------------------------ step 8: origin
@register(
    "type3-proof-origin",
    "Step 8 of the type-III proof: at X = 0, sigma_beta = 1/n_c, v = mu (n_c-1)/n_c and (*) gives "
    "s(0) = lambda_max = (L sum mu^2/n_c^(L+1))^(1/2) (symbolic n_c, L, ||mu||; s_c = 2, 3 with symbolic mu, "
    "sum mu = 1)",
    "symbolic",
    "the factor L under the square root of (*) dropped",
    tol=dict(rel=1e-14),
    library=("lambda_max_type3",),
    oracle="sympy simplification to 0; fctheory.lambda_max_type3 against the closed form at rational mu (30 digits)",
)
def check_origin(mutant: bool = False, quick: bool = False) -> str:
    Lroot = 1 if mutant else L  # (*) with √(1/(n_c K)) in the mutant
    mun = sp.symbols("mu_norm", positive=True)
    sig0 = 1 / (1 + (n - 1) * sp.exp(0))
    expect(_zero(sig0 - 1 / n), "sigma_beta(0) != 1/n_c")
    lam_max = sp.sqrt(L * mun**2 / n ** (L + 1))
    s0 = kappa * mun * (1 - sig0) * sp.sqrt(Lroot / (n * n**L))  # (*) with S = 1, K = n_c^L
    expect(_zero(s0**2 - lam_max**2), f"s(0)^2 = {sp.simplify(s0**2)} != lambda_max^2 = {lam_max**2}")
    for sv in (2, 3):
        mus = list(sp.symbols(f"mu0:{sv}", positive=True))
        mus[-1] = 1 - sum(mus[:-1])
        Ssum = sum(mus)
        v = [m * (1 - sig0) for m in mus]
        vnorm = sp.sqrt(sum(x**2 for x in v))
        s = n / (n - 1) * Ssum ** (L - 1) * vnorm * sp.sqrt(Lroot / (n * n**L))
        want = sp.sqrt(L * sum(m**2 for m in mus) / n ** (L + 1))
        expect(_zero(s**2 - want**2), f"s(0) != lambda_max with s_c = {sv} symbolic mu")
    tol = tolerances("type3-proof-origin")["rel"]
    half, third, sixth, quarter = sp.Rational(1, 2), sp.Rational(1, 3), sp.Rational(1, 6), sp.Rational(1, 4)
    for muv, nv, Lv in [((half, third, sixth), 3, 2), ((3 * quarter, quarter), 2, 5)]:
        ref = float(sp.N(s_closed(sp.sqrt(sum(m**2 for m in muv)) * sp.Rational(nv - 1, nv), L_=Lv, n_=nv), 30))
        got = fctheory.lambda_max_type3(mu=[float(m) for m in muv], n_c=nv, L=Lv)
        expect(abs(got - ref) <= tol * ref, f"lambda_max_type3 = {got!r} != s(0) = {ref!r}")
    return "s(0) = lambda_max = (L sum mu^2/n_c^(L+1))^(1/2) for symbolic n_c, L"
