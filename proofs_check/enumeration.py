"""Checks by enumeration: exact rational counts over full latent sets, and the true risk of small
tasks computed by enumerating every sentence (numeric, float64, tolerances stated per check)."""

from __future__ import annotations

from fractions import Fraction
from math import comb

import numpy as np

import fctheory
from fctheory import FCTheoryError, Task

from . import _deps, _risk
from .registry import expect, register, tolerances

_FULL_SETS = [(2, 2), (2, 3), (3, 2), (2, 4), (3, 3), (4, 2)]
_FULL_SETS_QUICK = [(2, 2), (2, 3), (3, 2), (3, 3)]


def _kappa(n_c):
    return n_c / (n_c - 1)


def H_closed(t, n_c, n_w, L, K, lam, eta=None):
    """(92): H(t) = log(1 − K/n_c^L + (K/n_c^L)(1+(n_c−1)e^{−ηt})^L) + λt, η = κ/√(n_w K L)."""
    eta = _kappa(n_c) / np.sqrt(n_w * K * L) if eta is None else eta
    b = K / n_c**L
    return np.log1p(-b + b * (1 + (n_c - 1) * np.exp(-eta * t)) ** L) + lam * t


def H_star_closed(t, n_c, L, K, d, lam, eta=None):
    """(124): H*(t) = log(1 − K/n_c^L + (K/n_c^L)(1+(n_c−1)e^{−η*t})^L) + λt²/2, η* = κ/√(KL/d)."""
    eta = _kappa(n_c) / np.sqrt(K * L / d) if eta is None else eta
    b = K / n_c**L
    return np.log1p(-b + b * (1 + (n_c - 1) * np.exp(-eta * t)) ** L) + lam * t**2 / 2


@register(
    "lemmaB-enum-full",
    "Lemma B (i)-(iii) and Assumption A (35) on the full latent set Z = C^L: |S_r| = C(L,r)(n_c-1)^r, "
    "sum_k Z_k = (K/n_c)11^T, ZZ^T = (KL/n_c)I, theta_r = n_c r/((n_c-1)L), A_r = -r/((n_c-1)L)11^T",
    "exact enumeration",
    "theta_r claimed as r/L",
    library=("check_assumption_A", "lemma_B_properties"),
    oracle="exact integer binomial counts and rationals (math.comb, fractions.Fraction)",
)
def check_lemma_B_full(mutant: bool = False, quick: bool = False) -> str:
    """Exact integer counts and rational θ_r, A_r over every z ∈ C^L for small (n_c, L)."""

    sets = _FULL_SETS_QUICK if quick else _FULL_SETS
    for n_c, L in sets:
        task = Task.full(n_c, 1, L)
        A = fctheory.check_assumption_A(task)
        expect(A.holds and A.integral, f"Assumption A fails on the full set (n_c,L)=({n_c},{L}): {A.violations[:3]}")
        B = fctheory.lemma_B_properties(task)
        expect(B.holds, f"Lemma B fails on the full set ({n_c},{L}): {B.messages}")
        for rr in range(1, L + 1):
            expect(int(B.S_r[0, rr]) == comb(L, rr) * (n_c - 1) ** rr, f"|S_{rr}| wrong for ({n_c},{L})")
            theta_claim = Fraction(rr, L) if mutant else Fraction(n_c * rr, (n_c - 1) * L)
            expect(B.theta[rr - 1] == theta_claim, f"theta_{rr} = {B.theta[rr - 1]} != {theta_claim} for ({n_c},{L})")
            a = Fraction(-rr, (n_c - 1) * L)
            expect(all(v == a for row in B.A[rr - 1] for v in row), f"A_{rr} != {a} 11^T for ({n_c},{L})")
    return f"exact on full sets {sets}"


@register(
    "lemmaK-eq92",
    "Lemma K (92): on Omega_c^I, R(W,U) = H(n_w c^2) for any mu (enumerated true risk vs closed form, "
    "rel. tol 1e-12), and fctheory.H agrees",
    "numeric enumeration",
    "eta = kappa/sqrt(K L) in H (n_w dropped)",
    tol=dict(rel=1e-12),
    library=("H", "equiangular_frame"),
    oracle="proofs_check._risk: every sentence enumerated with its probability; the closed form (92) in numpy",
)
def check_lemma_K(mutant: bool = False, quick: bool = False) -> str:

    T = tolerances("lemmaK-eq92")
    worst = 0.0
    cases = [(2, 2, 3, "uniform"), (3, 2, 2, "uniform"), (3, 3, 2, "zipf")] + (
        [] if quick else [(4, 1, 3, "uniform"), (3, 2, 3, "zipf")]
    )
    for n_c, s_c, L, mu in cases:
        task = Task.full(n_c, s_c, L, mu=mu)
        S = _risk.enumerate_sentences(task)
        for d in (n_c - 1, n_c + 3):
            F = fctheory.equiangular_frame(n_c, d, seed=d)
            for c in (0.0, 0.3, 1.1, 2.7):
                lam = 0.013
                W, U = _risk.type1_point(task, c, d, F)
                R = _risk.risk(task, W, U, lam, S=S)
                t = task.n_w * c**2
                eta_m = _kappa(n_c) / np.sqrt(task.K * L) if mutant else None
                Hc = H_closed(t, n_c, task.n_w, L, task.K, lam, eta=eta_m)
                Hl = float(_deps.lead("H")(t, n_c=n_c, n_w=task.n_w, L=L, K=task.K, lam=lam))
                err = abs(R - Hc) / abs(Hc)
                worst = max(worst, err)
                expect(
                    err <= T["rel"], f"R(type I) = {R!r} != H(n_w c^2) = {Hc!r} (rel {err:.2e}) at {task}, d={d}, c={c}"
                )
                expect(abs(Hl - Hc) <= T["rel"] * abs(Hc), f"fctheory.H = {Hl!r} != (92) = {Hc!r}")
    return f"max rel. error {worst:.1e} over {len(cases)} tasks x 2 d x 4 c"


@register(
    "lemmaR-eq124",
    "Lemma R (124): on Omega_c^II, R*(W,U) = H*(sqrt(KL) c) for any mu > 0 (LayerNorm network, enumerated, "
    "rel. tol 1e-12), and fctheory.H_star agrees",
    "numeric enumeration",
    "eta* = kappa/sqrt(K L d)",
    tol=dict(rel=1e-12),
    library=("H_star", "equiangular_frame"),
    oracle="proofs_check._risk with its own LayerNorm: every sentence enumerated; the closed form (124) in numpy",
)
def check_lemma_R(mutant: bool = False, quick: bool = False) -> str:

    T = tolerances("lemmaR-eq124")
    rng = np.random.default_rng(4)
    worst = 0.0
    cases = [(3, 3, 2, "zipf"), (2, 2, 3, "uniform")] + ([] if quick else [(3, 2, 3, "zipf"), (4, 2, 2, "zipf")])
    for n_c, s_c, L, mu in cases:
        task = Task.full(n_c, s_c, L, mu=mu)
        S = _risk.enumerate_sentences(task)
        for d in (n_c, n_c + 2):
            F = fctheory.equiangular_frame(n_c, d, mean_zero=True, seed=d)
            scales = (rng.uniform(0.5, 2.0, task.n_w), rng.normal(size=task.n_w))
            for c in (0.2, 0.9, 1.7):
                lam = 0.021
                W, U = _risk.type2_point(task, c, d, F, scales)
                R = _risk.risk(task, W, U, lam, layernorm=True, S=S)
                tt = np.sqrt(task.K * L) * c
                eta_m = _kappa(n_c) / np.sqrt(task.K * L * d) if mutant else None
                Hc = H_star_closed(tt, n_c, L, task.K, d, lam, eta=eta_m)
                Hl = float(_deps.lead("H_star")(tt, n_c=n_c, L=L, K=task.K, d=d, lam=lam))
                err = abs(R - Hc) / abs(Hc)
                worst = max(worst, err)
                expect(
                    err <= T["rel"], f"R*(type II) = {R!r} != H*(sqrt(KL)c) = {Hc!r} (rel {err:.2e}) at {task}, d={d}"
                )
                expect(abs(Hl - Hc) <= T["rel"] * abs(Hc), f"fctheory.H_star = {Hl!r} != (124) = {Hc!r}")
    return f"max rel. error {worst:.1e}"


def _type3_closed_grad(task, c, r, lam):
    """Prop. C: ∂R/∂u_{k,ℓ} and ∂R/∂w_{(α,β)} at a type-III point, from (148)–(149) before equating."""
    n_c, K, L = task.n_c, task.K, task.L
    kap = _kappa(n_c)
    mu = task.mu
    one_minus_sig = (n_c - 1) / (np.exp(kap * c * r) + n_c - 1)  # 1 − σ(c r_β)
    gu_coef = -(kap / K) * np.sum(mu * r * one_minus_sig) + lam * c  # times f_{z_kℓ}
    gw_coef = -(kap * L / n_c) * c * mu * one_minus_sig + lam * r  # times f_α, per β
    return gu_coef, gw_coef


@register(
    "propC-gradient",
    "Prop. C / Lemma S: at w_(a,b) = r_b f_a, u_kl = c f_z_kl (K = n_c^L) the true-risk gradient is "
    "dR/du_kl = [lambda c - (kappa/K) sum_b mu_b r_b (1-sigma(c r_b))] f_z_kl and "
    "dR/dw_(a,b) = [lambda r_b - (kappa L/n_c) c mu_b (1-sigma(c r_b))] f_a, sigma(x) = 1/(1+(n_c-1)e^(-kappa x)) "
    "(abs. tol 1e-13)",
    "numeric enumeration",
    "sigma(x) = 1/(1+(n_c-1)e^(-x)) (kappa dropped)",
    tol=dict(abs=1e-13),
    library=("true_risk_grad",),
    oracle="proofs_check._risk: the enumerated gradient in X = U_hat^T W, and the closed form of Prop. C",
)
def check_prop_C(mutant: bool = False, quick: bool = False) -> str:

    T = tolerances("propC-gradient")
    rng = np.random.default_rng(5)
    worst = 0.0
    cases = [(3, 3, 2), (2, 3, 3)] + ([] if quick else [(4, 2, 2), (3, 2, 3)])
    for n_c, s_c, L in cases:
        task = Task.full(n_c, s_c, L, mu="zipf")
        S = _risk.enumerate_sentences(task)
        d = n_c + 1
        F = fctheory.equiangular_frame(n_c, d, seed=1)
        c = float(rng.uniform(0.3, 1.5))
        r = rng.uniform(0.2, 2.0, s_c)
        lam = 0.017
        W, U = _risk.type3_point(task, c, r, d, F)
        _, gW, gU = _risk.risk_grad(task, W, U, lam, S=S)
        if mutant:  # σ without κ in the exponent
            one_minus_sig = (n_c - 1) / (np.exp(c * r) + n_c - 1)
            kap = _kappa(n_c)
            gu = -(kap / task.K) * np.sum(task.mu * r * one_minus_sig) + lam * c
            gw = -(kap * L / n_c) * c * task.mu * one_minus_sig + lam * r
        else:
            gu, gw = _type3_closed_grad(task, c, r, lam)
        Wexp = F[:, task.word_concept] * gw[task.word_rank][None, :]
        Uh_exp = gu * F @ task.Z_onehot
        Uexp = fctheory.U_from_hat(Uh_exp, L=L)
        err = max(np.max(np.abs(gW - Wexp)), np.max(np.abs(gU - Uexp)))
        worst = max(worst, err)
        expect(err <= T["abs"], f"Prop. C gradient mismatch {err:.2e} at {task}")
        _, gWl, gUl = fctheory.true_risk_grad(task, W, U, lam)
        err_l = max(np.max(np.abs(gWl - Wexp)), np.max(np.abs(gUl - Uexp)))
        expect(err_l <= T["abs"], f"fctheory.true_risk_grad differs from Prop. C by {err_l:.2e} at {task}")
    return f"max abs. error {worst:.1e} over {cases}"


@register(
    "thm2-critical-point",
    "Theorem 2: the solution (c, r) of (7)-(8) (fctheory.solve_type3) gives a critical point of R: "
    "residuals of (7), (8) <= 1e-12, enumerated gradient norm <= 1e-12; (9) is the exact existence threshold",
    "numeric enumeration",
    "lambda outside (9): claims a type-III point exists at lambda = 1.01 lambda_max",
    tol=dict(lam_max_rel=1e-14, residual=1e-12, grad=1e-12),
    library=("solve_type3", "lambda_max_type3"),
    oracle="residuals of (7)-(8) recomputed in numpy; the gradient of the enumerated risk (proofs_check._risk)",
)
def check_thm2_critical(mutant: bool = False, quick: bool = False) -> str:

    T = tolerances("thm2-critical-point")
    cases = [(3, 3, 2, 0.02), (2, 4, 3, 0.02)] + ([] if quick else [(3, 3, 2, 0.1), (4, 3, 2, 0.01), (3, 4, 3, 0.005)])
    worst = 0.0
    for n_c, s_c, L, lam in cases:
        task = Task.full(n_c, s_c, L, mu="zipf")
        lmax = float(_deps.lead("lambda_max_type3")(mu=task.mu, n_c=n_c, L=L))
        expect(
            abs(lmax - np.sqrt(L * np.sum(task.mu**2) / n_c ** (L + 1))) <= T["lam_max_rel"] * lmax, "lambda_max != (9)"
        )
        if mutant:
            try:
                _deps.lead("solve_type3")(mu=task.mu, n_c=n_c, L=L, lam=1.01 * lmax)
            except FCTheoryError as exc:
                expect(False, f"no type-III solution at 1.01 lambda_max: {exc}")
        try:
            _deps.lead("solve_type3")(mu=task.mu, n_c=n_c, L=L, lam=1.001 * lmax)
            expect(False, "solve_type3 accepted lambda = 1.001 lambda_max outside (9)")
        except FCTheoryError:
            pass
        sol = _deps.lead("solve_type3")(mu=task.mu, n_c=n_c, L=L, lam=lam)
        c, r = float(sol.c), np.asarray(sol.r, dtype=float)
        kap = _kappa(n_c)
        res7 = np.max(np.abs(lam / L * (r / c) * (n_c - 1 + np.exp(kap * c * r)) - task.mu) / task.mu)
        res8 = abs(np.sum((r / c) ** 2) - L * n_c ** (L - 1)) / (L * n_c ** (L - 1))
        S = _risk.enumerate_sentences(task)
        W, U = _risk.type3_point(task, c, r, n_c + 2, fctheory.equiangular_frame(n_c, n_c + 2, seed=3))
        _, gW, gU = _risk.risk_grad(task, W, U, lam, S=S)
        gn = np.sqrt(np.sum(gW**2) + np.sum(gU**2))
        worst = max(worst, res7, res8, gn)
        expect(
            res7 <= T["residual"] and res8 <= T["residual"],
            f"(7)/(8) residuals {res7:.1e}, {res8:.1e} at {task}, lambda={lam}",
        )
        expect(gn <= T["grad"], f"gradient norm {gn:.2e} at the type-III point of {task}, lambda={lam}")
    return f"max residual / gradient norm {worst:.1e}"
