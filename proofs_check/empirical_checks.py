"""The training-set optimum and the certificate of trained networks, against oracles that share none of their code.

``fctheory.optimum(task, lam=λ, data=(S, y))`` returns balanced (W, U) and a lower bound on min R̂ from the Fenchel
dual of min_X f̂(X) + λ‖X‖_* (docs/optimum.md). Here R̂ is recomputed from the sentences with this package's own
gather (its own Û and scores, scipy's logsumexp), ∇f̂(X) by its own scatter, ‖∇f̂‖₂ by a full SVD (the samples are
small), and the *exact* dual value (1/N) Σ_i H(s p_i + (1 − s) e_(y_i)) at Y = s∇f̂(X), s = min(1, λ/‖∇f̂‖₂): by weak
duality a lower bound on min R̂ that owes nothing to the library. ``fctheory.certify``'s bound at other weights
(perturbed optima, networks stopped early) must stay below that certified minimum, its gap above the true excess;
``certify_optimality_empirical``'s ball arithmetic at 16 bits (wide balls) must stay on the safe side of the
256-bit enclosure, and its LDLᵀ test must refuse a pivot ball containing zero. Network h* on a sample
(``network="h*"``, the trainer's objective with LayerNorm eps and decays λ_W, λ): its relaxation bound
max_λ' LB_ĥ(λ') − ψ*(λ') is rebuilt here from the h-optimum at each λ' bracketed by this module's primal and exact
dual, ψ* and R̂* written here.
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy.optimize import minimize, minimize_scalar
from scipy.special import logsumexp

import fctheory
from fctheory import Task
from fctheory.optima import certificates as fcert

from . import _risk
from .registry import expect, register, tolerances

__all__ = [
    "sample_risk",
    "sample_dual",
    "check_empirical_certificate",
    "check_empirical_certify",
    "check_empirical_interval",
    "check_empirical_star",
]


def _scores(S, X, K, L):
    X3 = X.reshape(K, L, -1)
    return sum(X3[:, ell, S[:, ell]].T for ell in range(L))


def sample_risk(task, S, y, W, U, lam):
    """R̂(W, U) and ∇f̂ at X = ÛᵀW, written here: (R̂, f̂, ∇f̂ (K·L × n_w), X)."""
    X = _risk.U_hat(U, task.L).T @ W
    Y = _scores(S, X, task.K, task.L)
    lse = logsumexp(Y, axis=1)
    N = len(y)
    f = float(np.mean(lse - Y[np.arange(N), y]))
    P = np.exp(Y - lse[:, None])
    P[np.arange(N), y] -= 1.0
    G = np.zeros((task.K, task.L, task.n_w))
    for ell in range(task.L):
        Gl = np.zeros((task.n_w, task.K))
        np.add.at(Gl, S[:, ell], P / N)
        G[:, ell, :] = Gl.T
    return f + lam / 2 * (np.sum(W * W) + np.sum(U * U)), f, G.reshape(task.K * task.L, task.n_w), X


def sample_dual(task, S, y, X, G, lam) -> float:
    """(1/N) Σ_i H(s p_i + (1 − s) e_(y_i)), s = min(1, λ/‖∇f̂(X)‖₂) (full SVD): −f̂*(s∇f̂(X)), ≤ min R̂."""
    s = min(1.0, lam / float(np.linalg.norm(G, 2)))
    Y = _scores(S, X, task.K, task.L)
    P = np.exp(Y - logsumexp(Y, axis=1)[:, None])
    Q = s * P
    Q[np.arange(len(y)), y] += 1.0 - s
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.mean(-np.where(Q > 0, Q * np.log(Q), 0.0).sum(axis=1)))


def _local_minimum(task, S, y, lam, d, seed):
    """scipy L-BFGS-B on this module's R̂ at width d from a random start (an independent minimiser)."""
    nW = d * task.n_w

    def fg(x):
        W, U = x[:nW].reshape(d, task.n_w), x[nW:].reshape(task.K, task.L * d)
        R, _, G, _ = sample_risk(task, S, y, W, U, lam)
        Uh = _risk.U_hat(U, task.L)
        gU = (W @ G.T + lam * Uh).T.reshape(task.K, task.L * d)
        return R, np.concatenate([(Uh @ G + lam * W).ravel(), gU.ravel()])

    x0 = 0.3 * np.random.default_rng(seed).standard_normal(nW + task.K * task.L * d)
    return minimize(fg, x0, jac=True, method="L-BFGS-B", options=dict(maxiter=20000, gtol=1e-12, ftol=0)).fun


def _samples(quick: bool):
    full = Task.full(2, 2, 2)
    cases = [("partial zipf (3,3,3) K=6", Task.random(3, 3, 3, 6, seed=0, mu="zipf"), 3, 0.01),
             ("full (2,2,2)", full, 4, 0.01)]  # fmt: skip
    if not quick:
        cases += [("partial uniform (2,3,3) K=5", Task.random(2, 3, 3, 5, seed=1), 4, 0.02),
                  ("partial zipf (4,2,2) K=10", Task.random(4, 2, 2, 10, seed=2, mu="zipf"), 2, 0.005)]  # fmt: skip
    return [(name, task, *task.sample(n, seed=7), lam) for name, task, n, lam in cases]


@register(
    "empirical-certificate",
    "The certified optimum of the training objective (fctheory.optimum with data=(S, y): min of f_hat(X) + "
    "lambda||X||_*, X = U_hat^T W, Claim G with the empirical average): at the returned balanced (W, U) R_hat equals "
    "an independent gather over the sentences (rel. 1e-12), W and U_hat are balanced, the exact Fenchel dual at "
    "Y = s grad f_hat(X) (full SVD for ||grad f_hat||_2) is within 1e-10 R of R and above the library's bound, and no "
    "independent L-BFGS start at width min(KL, n_w) + 1 goes below R by more than 1e-10 R",
    "numeric (sample)",
    "the optimum's W scaled by 1 + 1e-4 claimed certified (the gap must show it)",
    tol=dict(rel=1e-12, gap=1e-10, balance=1e-10),
    library=("optimum",),
    oracle="this module's gather/scatter of R_hat and grad f_hat; the exact entropy form of the dual; scipy L-BFGS-B",
)
def check_empirical_certificate(mutant: bool = False, quick: bool = False) -> str:
    T = tolerances("empirical-certificate")
    worst = 0.0
    for name, task, S, y, lam in _samples(quick):
        res = fctheory.optimum(task, lam=lam, data=(S, y))
        expect(res.certified, f"{name}: the library did not certify its optimum ({res.message})")
        W = res.W * (1.0001 if mutant else 1.0)
        R, _, G, X = sample_risk(task, S, y, W, res.U, lam)
        dual = sample_dual(task, S, y, X, G, lam)
        expect(abs(R - res.R) <= T["rel"] * R or mutant, f"{name}: R = {res.R!r}, independent {R!r}")
        expect(dual <= R + T["rel"] * R, f"{name}: dual {dual!r} above the primal {R!r} (weak duality broken)")
        expect(R - dual <= T["gap"] * R, f"{name}: gap R - dual = {R - dual:.2e} > {T['gap']:.0e} R")
        expect(res.lower_bound <= dual + T["rel"] * R, f"{name}: library bound {res.lower_bound!r} > dual {dual!r}")
        nuc = float(np.linalg.svd(X, compute_uv=False).sum())
        Uh = _risk.U_hat(res.U, task.L)
        bal = max(abs(np.sum(W * W) - nuc), abs(np.sum(Uh * Uh) - nuc))
        expect(bal <= T["balance"] * nuc, f"{name}: not balanced (||W||^2, ||U_hat||^2 off ||X||_* = {nuc} by {bal})")
        d = min(task.K * task.L, task.n_w) + 1
        best = min(_local_minimum(task, S, y, lam, d, seed) for seed in range(2))
        expect(R <= best * (1 + T["gap"]), f"{name}: an independent local minimum {best!r} lies below R = {R!r}")
        worst = max(worst, (R - dual) / R)
    return f"{len(_samples(quick))} samples: max (R - exact dual)/R = {worst:.1e}"


@register(
    "empirical-certify-sound",
    "fctheory.certify (the Fenchel bound at given weights, no solve) is sound: at perturbed optima and at networks "
    "stopped early its lower bound stays below the independently certified min R_hat (the exact dual of the optimum, "
    "empirical-certificate) and its gap is at least the true excess R_hat(W, U) - min R_hat (independent R_hat)",
    "numeric (sample)",
    "the bound without the dual scaling: E = f_hat - <grad f_hat, X> taken as a lower bound (s = 1)",
    tol=dict(rel=1e-12),
    library=("certify", "optimum"),
    oracle="this module's R_hat, grad f_hat and exact dual (full SVD); the minimum bracketed by R and the dual",
)
def check_empirical_certify(mutant: bool = False, quick: bool = False) -> str:
    T = tolerances("empirical-certify-sound")
    n = 0
    for name, task, S, y, lam in _samples(quick)[: 1 if quick else None]:
        opt = fctheory.optimum(task, lam=lam, data=(S, y))
        R_opt, _, G, X = sample_risk(task, S, y, opt.W, opt.U, lam)
        lo = sample_dual(task, S, y, X, G, lam)  # lo ≤ min R̂ ≤ R_opt
        points = [(t * opt.W, t * opt.U) for t in (0.9, 0.97, 0.99, 1.05, 1.5)]
        for d, it in ((2, 3), (task.n_w, 15)):
            W, U, _ = fctheory.finite_sample.minimize_empirical_risk(task, S, y, d=d, lam=lam, seed=1, maxiter=it)
            points.append((W, U))
        for W, U in points:
            c = fctheory.certify(task, W, U, lam=lam, data=(S, y), solve=False)
            R, f, Gw, Xw = sample_risk(task, S, y, W, U, lam)
            lb = f - float(np.sum(Gw * Xw)) if mutant else c.lower_bound
            expect(abs(c.R - R) <= T["rel"] * R, f"{name}: R = {c.R!r}, independent {R!r}")
            # the bound at these weights never above s·E with the exact ||grad f_hat||_2 (full SVD): a sound norm
            # bound is at least the true norm, so its s, and the bound, are at most the exact ones
            E = f - float(np.sum(Gw * Xw))
            exact = min(1.0, lam / float(np.linalg.norm(Gw, 2))) * E
            expect(c.lower_bound_network <= exact + T["rel"] * R,
                   f"{name}: bound {c.lower_bound_network!r} at the weights above s*E = {exact!r}")  # fmt: skip
            expect(lb <= R_opt * (1 + T["rel"]), f"{name}: lower bound {lb!r} above the optimum R = {R_opt!r}")
            expect(R - lb >= R - R_opt, f"{name}: gap {R - lb!r} below the true excess (at least {R - R_opt!r})")
            expect(c.gap >= R - R_opt - T["rel"] * R, f"{name}: gap {c.gap!r} < R - min R (at least {R - R_opt!r})")
            # the exact dual and R at the optimum agree to ~1e-14 R: each is a float64 sum, either may be the larger
            expect(lo <= R_opt * (1 + T["rel"]), f"{name}: exact dual {lo!r} above the optimum R = {R_opt!r}")
            n += 1
    return f"{n} weights: every certified lower bound below min R_hat, every gap above the excess"


@register(
    "empirical-interval",
    "certify_optimality_empirical (ball arithmetic for the training objective), run at 16 bits (balls ~1e-3 wide) "
    "against a 256-bit run (the exact values to float64 rounding): at the certified optimum of a small sample its R "
    "interval contains R_hat(W, U), its lower bound lies below it and its gap is >= 0; at the optimum scaled by 2 "
    "(||grad f_hat||_2 < lambda: s = 1 at every precision, the bound is E itself) its lower bound is below the 256-bit "
    "one; its LDL^T positive-definiteness test refuses a pivot ball that contains zero",
    "numeric (balls)",
    "the lower bound taken from the upper end of its ball",
    tol=dict(gap=1e-10, rel=1e-15, solve=1e-12, rho=1e-12, ball=1e-6),
    library=("optima.certificates.certify_optimality_empirical", "optimum"),
    oracle="a 256-bit run of the same enclosure (the exact value to float64 rounding) and H(tau)-free sample duality",
)
def check_empirical_interval(mutant: bool = False, quick: bool = False) -> str:
    T = tolerances("empirical-interval")
    name, task, S, y, lam = _samples(True)[0]
    opt = fctheory.optimum(task, lam=lam, data=(S, y), tol=T["solve"])
    lo = fcert.certify_optimality_empirical(task, opt.W, opt.U, lam, S, y, prec=16)
    hi = fcert.certify_optimality_empirical(task, opt.W, opt.U, lam, S, y, prec=256)
    expect(hi["gap"] <= T["gap"] * hi["R"][1], f"{name}: 256-bit gap {hi['gap']:.2e} at the optimum")
    expect(lo["R"][0] <= hi["R"][1] and lo["R"][1] >= hi["R"][0], f"{name}: 16-bit R {lo['R']} misses {hi['R']}")
    expect(lo["lower_bound"] <= hi["R"][1], f"{name}: 16-bit lower bound {lo['lower_bound']!r} above R(W, U)")
    expect(lo["gap"] >= 0.0 and lo["rho"] >= hi["rho"] * (1 - T["rho"]), f"{name}: 16-bit gap {lo['gap']!r} < 0")
    lo2 = fcert.certify_optimality_empirical(task, 2 * opt.W, 2 * opt.U, lam, S, y, prec=16)
    hi2 = fcert.certify_optimality_empirical(task, 2 * opt.W, 2 * opt.U, lam, S, y, prec=256)
    expect(hi2["rho"] < 0.9 and lo2["rho"] < 1.0, f"{name}: rho {hi2['rho']!r} at 2 X*: s is not 1 there")
    lb2 = lo2["lower_bound"] + ((lo2["R"][1] - lo2["R"][0]) if mutant else 0.0)
    expect(lb2 <= hi2["lower_bound"] * (1 + T["rel"]),
           f"{name}: 16-bit lower bound {lb2!r} above the exact E = {hi2['lower_bound']!r} (s = 1)")  # fmt: skip
    with fcert.workprec(53) as flint:
        r = T["ball"]
        M = flint.arb_mat(2, 2, [flint.arb(2.0), flint.arb(1.0, r), flint.arb(1.0, r), flint.arb(0.5)])
        expect(not fcert._positive_definite(flint, M, 2.5), "LDL^T accepted a pivot ball 0 +- 1e-6 as positive")
    return f"16-bit ball widths {lo['R'][1] - lo['R'][0]:.1e}, all bounds on the safe side of the 256-bit enclosure"


# ----------------------------------------------------------------------------- network h* on a sample
def star_risk(task, S, y, W, U, lam, lam_W, eps) -> float:
    """R̂*(W, U) of the trainer (LayerNorm: biased variance and eps; decays λ_W on W, λ on U), written here."""
    C = W - W.mean(axis=0)
    V = C / np.sqrt((C * C).mean(axis=0) + eps)
    return sample_risk(task, S, y, V, U, 0.0)[1] + lam_W / 2 * np.sum(W * W) + lam / 2 * np.sum(U * U)


def _psi(lp, n, d, lam, lam_W, eps) -> float:
    return n * d / 2 * max(lp / np.sqrt(lam) - np.sqrt(lam_W * eps), 0.0) ** 2


def _every_sentence(task):
    """Every sentence of every class once (uniform μ: f̂ is the true risk's f), enumerated here."""
    rows = [[task.Z[k, ell] * task.s_c + b[ell] for ell in range(task.L)]
            for k in range(task.K) for b in itertools.product(range(task.s_c), repeat=task.L)]  # fmt: skip
    return np.array(rows), np.repeat(np.arange(task.K), task.s_c**task.L)


def _star_samples(quick: bool):
    full = Task.full(2, 2, 2)
    zipf = Task.random(3, 6, 2, 6, seed=0, mu="zipf")
    cases = [("every sentence of (2,2,2), eps = lam_W = 0", full, *_every_sentence(full), (0.05, 0.0, 0.0), True),
             ("every sentence of (2,2,2), the trainer's eps and lam_W", full, *_every_sentence(full),
              (0.05, 0.05, 1e-5), True),
             ("partial zipf (3,6,2) K=6", zipf, *zipf.sample(2, seed=100), (0.01, 0.02, 1e-3), False)]  # fmt: skip
    if not quick:
        z2 = Task.random(3, 3, 3, 8, seed=0, mu="zipf")
        cases.append(("partial zipf (3,3,3) K=8", z2, *z2.sample(3, seed=100), (0.01, 0.01, 1e-5), False))
    return cases


@register(
    "empirical-star-relaxation",
    "Network h* on a training sample (fctheory.optimum(network='h*', data=)): R_hat* at the returned weights equals "
    "the trainer's objective written here (rel. 1e-12), and the lower bound is max over lambda' of the h-problem's "
    "min f_hat + lambda'||X||_* minus psi*(lambda') = (n_S d/2)(lambda'/sqrt(lambda) - sqrt(lambda_W eps))_+^2: "
    "not above that maximum taken with this module's primal value of the h-optimum at each lambda', not below it "
    "taken with the exact dual; where the relaxation is tight (every sentence of a full task) the bound closes to "
    "1e-9 of R_hat*",
    "numeric (sample)",
    "psi* without its factor d (a relaxation bound raised d-fold in its price)",
    tol=dict(rel=1e-12, gap=1e-9, search=1e-7),
    library=("optimum",),
    oracle="this module's R_hat* (own LayerNorm), primal value and exact dual of the h-problem, psi* written here, an "
    "independent bounded scalar search over lambda'",
)
def check_empirical_star(mutant: bool = False, quick: bool = False) -> str:
    T = tolerances("empirical-star-relaxation")
    worst = 0.0
    for name, task, S, y, (lam, lam_W, eps), tight in _star_samples(quick):
        d, n = 3, int(np.unique(S).size)
        res = fctheory.optimum(task, lam=lam, network="h*", data=(S, y), d=d, lam_W=lam_W, eps=eps, n_starts=1,
                               backend="numpy")  # fmt: skip
        R = star_risk(task, S, y, res.W, res.U, lam, lam_W, eps)
        expect(abs(R - res.R) <= T["rel"] * R, f"{name}: R_hat* = {res.R!r}, independent {R!r}")
        psi = (lambda lp: _psi(lp, n, 1, lam, lam_W, eps)) if mutant else (lambda lp: _psi(lp, n, d, lam, lam_W, eps))

        def bracket(lp):
            h = fctheory.optimum(task, lam=lp, data=(S, y), backend="numpy")
            Rh, _, G, X = sample_risk(task, S, y, h.W, h.U, lp)
            return sample_dual(task, S, y, X, G, lp) - psi(lp), Rh - psi(lp)

        lo = np.sqrt(lam * lam_W * eps)
        hi = np.sqrt(lam) * (np.sqrt(2 * np.log(task.K) / (n * d)) + np.sqrt(lam_W * eps))
        top = minimize_scalar(
            lambda lp: -bracket(lp)[1], bounds=(lo, hi), method="bounded", options=dict(xatol=T["search"] * hi)
        )
        low, up = bracket(top.x)
        expect(
            res.lower_bound <= up + T["gap"] * R, f"{name}: bound {res.lower_bound!r} above the relaxation's max {up!r}"
        )
        expect(res.lower_bound >= low - T["gap"] * R, f"{name}: bound {res.lower_bound!r} below the relaxation at "
               f"lambda' = {top.x:.6g}: {low!r}")  # fmt: skip
        expect(res.lower_bound <= R * (1 + T["rel"]), f"{name}: bound {res.lower_bound!r} above R_hat* = {R!r}")
        if tight:
            expect(R - res.lower_bound <= T["gap"] * R and res.certified, f"{name}: gap {R - res.lower_bound:.2e}")
        worst = max(worst, (R - res.lower_bound) / R)
    return f"{len(_star_samples(quick))} samples: the bound is the relaxation's maximum; largest gap {worst:.1e} of R"
