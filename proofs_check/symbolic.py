"""Symbolic checks (sympy) of the algebra of appendices B–E, with n_c, L, r, λ, … as symbols.

Where sympy cannot sum a binomial series with a symbolic upper limit, the general-L statement is
reduced to Pascal's rule (checked symbolically) by induction, and the identity is also checked as an
exact polynomial identity for L = 1..12.
"""
from __future__ import annotations

import sympy as sp

from .registry import expect, register

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
)
def check_lemma_B_i(mutant: bool = False, quick: bool = False) -> str:
    """(38)–(39): (n_c−1)·[z≠α count] + [z=α count] = (K/n_c^L)·C(L,r)(n_c−1)^r, via Pascal's rule."""
    lhs = (n - 1) * _count_diff(K, n, L, r, shift=1 if mutant else 0) + _count_same(K, n, L, r)
    rhs = K / n**L * sp.binomial(L, r) * (n - 1) ** r
    expect(_zero(lhs - rhs), f"|S_r| identity (39) fails: lhs - rhs = {sp.simplify(sp.combsimp(lhs - rhs))}")
    return "sum_alpha (35) == (K/n_c^L) C(L,r)(n_c-1)^r for symbolic n_c, L, r, K"


@register(
    "lemmaB-ii-sums",
    "Lemma B(ii), (37), (40)-(41): sum_r (K/n_c^L) C(L-1,r-1)(n_c-1)^(r-1) = K/n_c, so sum_k Z_k = (K/n_c)11^T "
    "and ZZ^T = (KL/n_c)I",
    "symbolic",
    "(n_c-1)^r instead of (n_c-1)^(r-1) in (41)",
)
def check_lemma_B_ii(mutant: bool = False, quick: bool = False) -> str:
    """(41) by the binomial theorem; exact polynomial identity for L = 1..12 and the Pascal step for all L."""
    shift = 1 if mutant else 0
    for Lv in _L_RANGE:
        s = sum(_count_diff(K, n, Lv, rv, shift) for rv in range(1, Lv + 1))
        expect(sp.simplify(s - K / n) == 0, f"(41) fails at L={Lv}: sum = {sp.factor(s)} != K/n_c")
    # ZZ^T: diagonal entry α = Σ_ℓ |{k : z_kℓ = α}| = L·K/n_c by (37)
    expect(sp.simplify(sum(K / n for _ in range(3)) - 3 * K / n) == 0, "ZZ^T diagonal")
    # all L: Σ_{r=1}^{L} C(L−1, r−1) y^{r−1} = (1+y)^{L−1} (binomial theorem, by Pascal's rule induction)
    expect(_zero(sp.binomial(L + 1, r) - sp.binomial(L, r) - sp.binomial(L, r - 1)), "Pascal's rule")
    return "sum_r (35, z!=α) == K/n_c for L=1..12 (symbolic n_c, K); general L by the binomial theorem"


@register(
    "lemmaB-iii-theta",
    "Lemma B(iii), (42): neighbour ratios (L-r)/L and r/((n_c-1)L), theta_r = n_c r/((n_c-1)L), "
    "A_r = -r/((n_c-1)L) 11^T",
    "symbolic",
    "theta_r off by the factor kappa: theta_r = r/L",
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
    return "ratios, theta_r = kappa r/L and A_r = -r/((n_c-1)L) 11^T hold for symbolic n_c, L, r"


@register(
    "binomial-identity-H",
    "(49)/(92): 1 + sum_{r=1}^L |S_r| e^(-gamma r) = 1 - K/n_c^L + (K/n_c^L)(1 + (n_c-1)e^(-gamma))^L",
    "symbolic",
    "(1 + n_c e^(-gamma))^L on the right-hand side",
)
def check_binomial_identity(mutant: bool = False, quick: bool = False) -> str:
    """Exact identity in n_c, K, γ for L = 1..12; general L from the binomial theorem (Pascal step)."""
    x = sp.exp(-g)
    base = n if mutant else (n - 1)
    for Lv in _L_RANGE:
        lhs = 1 + sum(K / n**Lv * sp.binomial(Lv, rv) * (n - 1) ** rv * x**rv for rv in range(1, Lv + 1))
        rhs = 1 - K / n**Lv + K / n**Lv * (1 + base * x) ** Lv
        expect(sp.expand(lhs - rhs) == 0, f"binomial identity fails at L={Lv}")
    expect(_zero(sp.binomial(L + 1, r) - sp.binomial(L, r) - sp.binomial(L, r - 1)), "Pascal's rule")
    return "identity exact for L=1..12 with symbolic n_c, K, gamma"


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
)
def check_H_convexity(mutant: bool = False, quick: bool = False) -> str:
    """H''(t)·q²/η² = a·(bLcu p^{L−1} + bL(L−1)c²u² p^{L−2}) + b²Lcu p^{2L−2} > 0, symbolic L.

    With a = 1 − K/n_c^L ≥ 0 (K ≤ n_c^L), b = K/n_c^L > 0, c_ = n_c − 1 > 0, u = e^{−ηt} ∈ (0, 1]
    and L ≥ 1 every term is ≥ 0 and the last one is > 0, so H'' > 0 (H* adds λ > 0).
    """
    a, b, cc, u, p, q = _H_parts(L)
    # chain rule for u = e^{−ηt}: d/dt = −η·D with D = u d/du, so (log q)'' = η²(D²q·q − (Dq)²)/q²
    f = sp.Function("f")
    chain = sp.diff(f(sp.exp(-eta * t)), t, 2) - eta**2 * (
        u * sp.diff(f(u), u) + u**2 * sp.diff(f(u), u, 2)
    ).subs(u, sp.exp(-eta * t))
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
    return "H'' q^2/eta^2 = a(...) + b^2 L c u p^(2L-2) > 0 for symbolic L; H*'' = that + lambda"


@register(
    "tau-trivial-threshold",
    "Theorem 1: tau > 0 iff lambda < lambda_trivial = sqrt(KL/n_w)/(1 + K - K/n_c^L) (H'(0) < 0); "
    "Theorem 3: H*'(0) < 0 so tau* > 0 always",
    "symbolic + numeric",
    "claims tau > 0 at lambda = 1.01 lambda_trivial",
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
    from ._deps import lead

    details = []
    for nc, nw_, Lv, Kv in [(3, 6, 2, 9), (2, 4, 3, 5), (3, 1200, 15, 1000)]:
        lt = float(lead("lambda_trivial")(nc, nw_, Lv, Kv))
        ref = float(lam_triv.subs({n: nc, nw: nw_, L: Lv, K: Kv}))
        expect(abs(lt - ref) <= 1e-12 * ref, f"lambda_trivial({nc},{nw_},{Lv},{Kv}) = {lt} != {ref}")
        above = 1.01 * lt
        below = 0.99 * lt
        if mutant:
            expect(float(lead("tau")(nc, nw_, Lv, Kv, above)) > 0, "tau = 0 at lambda = 1.01 lambda_trivial")
        expect(float(lead("tau")(nc, nw_, Lv, Kv, below)) > 0, "tau = 0 below the threshold")
        expect(float(lead("tau")(nc, nw_, Lv, Kv, above)) == 0, "tau > 0 above the threshold")
        details.append(f"{lt:.6g}")
    return "H'(0) = lambda - lambda_trivial symbolically; fctheory.tau switches at lambda_trivial = " + ", ".join(details)


@register(
    "lemmaF-claimA-value",
    "Lemma F / Claim A: on B_c^I, <U_hat, W P^T Z> = c^2 s_c sqrt(K L n_w) (optimal value of (65)-(66), P for Q) "
    "= c^2 n_w sigma_max(P^T Z)",
    "symbolic + numeric",
    "value c^2 n_c sqrt(K L n_w)",
)
def check_claim_A(mutant: bool = False, quick: bool = False) -> str:
    """W = cFP, Û = c√(n_w/(KL)) FZ, PPᵀ = s_c I, ‖FZ‖² = tr(FᵀF ZZᵀ) = (KL/n_c)‖F‖² = KL."""
    s_c, nw = sp.symbols("s_c n_w", positive=True)
    FZ2 = (K * L / n) * n  # ‖FZ‖_F² with ZZᵀ = (KL/n_c)I and ‖F‖_F² = n_c
    value = c * sp.sqrt(nw / (K * L)) * c * s_c * FZ2  # <c'FZ, cF P Pᵀ Z> = c c' s_c ‖FZ‖²
    claim = c**2 * (n if mutant else s_c) * sp.sqrt(K * L * nw)
    expect(sp.simplify(value - claim) == 0, f"Claim A value {sp.simplify(value)} != {claim}")
    # the budget: ½(‖W‖² + ‖Û‖²) = ½(c² s_c n_c + c² n_w/(KL)·KL) = c² n_w when n_w = n_c s_c
    budget = sp.Rational(1, 2) * (c**2 * s_c * n + c**2 * nw / (K * L) * K * L)
    expect(sp.simplify(budget.subs(nw, n * s_c) - c**2 * n * s_c) == 0, "norm budget")
    # numeric: max ⟨Û, W M⟩ over ½(‖W‖² + ‖Û‖²) = c² n_w is c² n_w σ_max(M), M = PᵀZ (full latent sets)
    import numpy as np

    from fctheory import Task

    for ncv, scv, Lv in [(2, 2, 2), (3, 2, 2), (3, 3, 3), (4, 1, 2)]:
        task = Task.full(ncv, scv, Lv)
        smax = float(np.linalg.norm(task.P.T @ task.Z_onehot, 2))
        got = task.n_w * smax  # at c = 1
        want = float(claim.subs({c: 1, s_c: scv, n: ncv, K: task.K, L: Lv, nw: task.n_w}))
        expect(abs(got - want) <= 1e-12 * want, f"n_w sigma_max(P^T Z) = {got} != {want} on {task}")
    return "c c' s_c ||FZ||^2 = c^2 s_c sqrt(K L n_w) (symbolic) = c^2 n_w sigma_max(P^T Z) (numeric, 1e-12)"


@register(
    "lemmaM-claimD-value",
    "Lemma M / Claim D: on B_c^II, <U_hat, V Q^T Z> = c sqrt(d) K L (optimal value of (97)-(98))",
    "symbolic",
    "value c d K L",
)
def check_claim_D(mutant: bool = False, quick: bool = False) -> str:
    """V = √d FP, Û = cFZ, PQᵀ = I, ‖FZ‖² = KL; Cauchy–Schwarz bound c√(KL)·√(KL/n_c · n_c d)."""
    value = c * sp.sqrt(d) * K * L  # c√d <FZ, F P Qᵀ Z> = c√d ‖FZ‖²
    claim = c * (d if mutant else sp.sqrt(d)) * K * L
    expect(sp.simplify(value - claim) == 0, f"Claim D value {value} != {claim}")
    bound = c * sp.sqrt(K * L) * sp.sqrt(K * L / n * n * d)  # ‖Û‖·‖VQᵀZ‖ with ‖VQᵀ‖² ≤ n_c d
    expect(sp.simplify(bound - claim) == 0, f"Cauchy-Schwarz bound {sp.simplify(bound)} != {claim}")
    return "c sqrt(d) ||FZ||^2 = c sqrt(d) K L = the Cauchy-Schwarz bound (104)"


@register(
    "lemmaK-lemmaR-constants",
    "Lemma K (92) and Lemma R (124): type-I margin c c' kappa r = eta n_w c^2 r, eta = kappa/sqrt(n_w K L); "
    "type-II margin c sqrt(d) kappa r = eta* sqrt(KL) c r, eta* = kappa/sqrt(KL/d); regularisers lambda n_w c^2, "
    "lambda KL c^2/2",
    "symbolic",
    "eta = kappa/sqrt(K L) (n_w dropped)",
)
def check_lemma_K_R_constants(mutant: bool = False, quick: bool = False) -> str:
    nw = sp.symbols("n_w", positive=True)
    kap = n / (n - 1)
    # biased Kronecker delta (137): 1 − <f_α, f_α'> = 1 + 1/(n_c−1) = κ for α ≠ α'
    expect(sp.simplify(1 - (-1 / (n - 1)) - kap) == 0, "1 - <f_a, f_a'> != kappa")
    cprime = c * sp.sqrt(nw / (K * L))
    eta1 = kap / sp.sqrt((1 if mutant else nw) * K * L)
    expect(sp.simplify(c * cprime * kap - eta1 * nw * c**2) == 0, "type-I margin per differing position != eta n_w c^2")
    reg1 = lam / 2 * (nw * c**2 + K * L * cprime**2)
    expect(sp.simplify(reg1 - lam * nw * c**2) == 0, "type-I regulariser != lambda n_w c^2")
    etas = kap / sp.sqrt(K * L / d)
    expect(sp.simplify(c * sp.sqrt(d) * kap - etas * sp.sqrt(K * L) * c) == 0, "type-II margin != eta* sqrt(KL) c")
    return "margins and regularisers of (92) and (124) match H(n_w c^2) and H*(sqrt(KL) c)"


@register(
    "eq148-149-to-7-8",
    "Prop. C / Theorem 2: (148)-(149) with sigma(x) = 1/(1+(n_c-1)e^(-kappa x)) rewrite to (7) "
    "(lambda/L)(r/c)(n_c-1+e^(kappa c r)) = mu and (8) sum_beta (r_beta/c)^2 = K L/n_c",
    "symbolic",
    "(8) with K L instead of K L/n_c",
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
    return "(148)+(149) <=> (7)+(8) for symbolic n_c, L, K, lambda, c, r_beta, mu_beta"


@register(
    "propD-monotonicity",
    "Prop. D (153)-(158): psi_s(rho) = rho(n_c-1+e^(kappa s rho)) strictly increasing, rho_beta(s) "
    "strictly decreasing, F(0) > L n_c^(L-1) iff (9) lambda^2 < (L/n_c^(L+1)) sum mu^2",
    "symbolic",
    "existence condition claimed as lambda^2 < (L/n_c^L) sum mu^2",
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
    return "psi_rho > 0, psi_s > 0 (so rho_beta decreasing), F(0) = L n^(L-1) at lambda^2 = L sum mu^2/n^(L+1)"
