"""Checks of the library's public functions against independent computations.

Every number fctheory reports for Theorems 1–3 — τ, τ*, H and its derivatives, the type-III constants and
residuals, the predictions, the collapse configurations and the exact true risk with its gradient — is
recomputed here without fctheory (``proofs_check._oracle``: mpmath at 50 digits from the printed formulas;
``proofs_check._risk``: enumeration of every sentence; finite differences) and compared at the tolerance
declared in the check's ``tol``.
"""

from __future__ import annotations

import importlib

import mpmath
import numpy as np

import fctheory
from fctheory import Task

from . import _oracle as orc
from . import _risk, convex
from .registry import expect, register, tolerances

# (n_c, n_w, L, K, λ): full and partial latent sets (K < n_c^L exercises the 1 − K/n_c^L term), the paper's
# setting of figure 3, and λ well below λ₀
# (3, 3, 1, 2, 0.1): r = log(λ₀/λ) = 1.25 and the root has t(s) < 1, the branch of ℓ(q, t) where an error in
# log(K + 1 − K/n_c^L) does not cancel against the same error in r (for t ≥ 1 it does, exactly)
_T1 = [
    (3, 6, 2, 9, 0.01),
    (2, 4, 3, 5, 0.02),
    (4, 8, 3, 20, 0.003),
    (3, 1200, 15, 1000, 1e-3),
    (3, 3, 1, 2, 0.1),
    (5, 10, 2, 7, 0.05),
]
# (n_c, L, K, d, λ) for Theorem 3
_T3 = [(3, 2, 9, 4, 0.01), (2, 3, 5, 3, 0.02), (3, 15, 1000, 100, 1e-3), (4, 2, 11, 6, 0.2)]


def _rel(a, b):
    b = float(b)
    return abs(float(a) - b) / abs(b) if b != 0 else abs(float(a))


@register(
    "predictors-mpmath",
    "Theorems 1-3 as computed by fctheory: tau, tau_star (both backends), H, H', H'', H*, H*', H*'', lambda_trivial "
    "and solve_type3 (c, r, residual_7, residual_8) equal 50-digit mpmath values from the printed formulas "
    "(rel. tol 1e-12, also at lambda = lambda_trivial(1 - 1e-5) and 1 to 64 ulps below the float lambda0, where "
    "log(lambda0/lambda) must be formed from a double-double gap and its sign decided exactly)",
    "numeric (mpmath)",
    "H taken without its 1 - K/n_c^L term (log(p(1+u)^L) + lambda t) on the reference side",
    tol=dict(rel=1e-12, residual_rel=0.2, residual_abs=1e-18, near=1e-5, above=1e-9),
    library=(
        "tau",
        "tau_star",
        "H",
        "H_prime",
        "tau.H_second",
        "H_star",
        "H_star_prime",
        "lambda_trivial",
        "solve_type3",
        "lambda_max_type3",
    ),
    oracle="mpmath (50 digits): the printed H, H* with hand-written derivatives, bisection for tau, tau*; "
    "nested bisection for (7)-(8) (Prop. D); residuals of (7)-(8) re-evaluated at the returned floats",
)
def check_predictors_mpmath(mutant: bool = False, quick: bool = False) -> str:

    T = tolerances("predictors-mpmath")
    worst = 0.0

    def cmp(lib, ref, what, tol, scale=None):
        """|lib − ref| ≤ tol·scale; scale = |ref| unless given (derivatives: the size of their terms)."""
        nonlocal worst
        e = _rel(lib, ref) if scale is None else abs(float(lib) - float(ref)) / float(scale)
        worst = max(worst, e) if tol == T["rel"] else worst
        expect(e <= tol, f"{what}: fctheory {float(lib)!r} != mpmath {float(ref)!r} (rel {e:.1e} > {tol:g})")

    _mpmath_theorem1(cmp, T, mutant, quick)
    _mpmath_theorem3(cmp, T, quick)
    _mpmath_theorem2(cmp, T, quick)
    return f"max rel. error {worst:.1e} (tau, tau*, H, H', H'', H*, ..., type-III constants) vs 50-digit mpmath"


def _mpmath_theorem1(cmp, T, mutant, quick):
    """tau (both backends), lambda_trivial, H, H', H'' against mpmath, and tau just below lambda0."""
    for n_c, n_w, L, K, lam in _T1 if not quick else _T1[:5]:
        args = (n_c, n_w, L, K)
        kw = dict(n_c=n_c, n_w=n_w, L=L, K=K)
        tr = orc.tau(*args, lam)
        for backend in ("numba", "numpy"):
            cmp(fctheory.tau(**kw, lam=lam, backend=backend), tr, f"tau{args + (lam,)} [{backend}]", T["rel"])
        cmp(fctheory.lambda_trivial(**kw), orc.lambda_trivial(*args), f"lambda_trivial{args}", T["rel"])
        for t in (0.0, 0.5 * float(tr), float(tr), 3.0 * float(tr) + 1.0):
            href = orc.H(t, *args, lam)
            if mutant:  # the wrong reference: log(p(1+u)^L) + λt
                with mpmath.workdps(orc.DPS):
                    _, L_, K_, p = orc._consts(n_c, L, K)
                    href = mpmath.log(p * (1 + (n_c - 1) * mpmath.exp(-orc.eta(*args) * t)) ** L_) + lam * t
            cmp(fctheory.H(t, **kw, lam=lam), href, f"H({t:.6g}; {args}, {lam})", T["rel"])
            hp = orc.H_prime(t, *args, lam)  # λ + (log term)': compared relative to the size of the two terms
            cmp(fctheory.H_prime(t, **kw, lam=lam), hp, f"H'({t:.6g}; {args})", T["rel"], scale=lam + abs(hp - lam))
            cmp(
                importlib.import_module("fctheory.tau").H_second(t, **kw, lam=lam),
                orc.H_second(t, *args),
                f"H''({t:.6g}; {args})",
                T["rel"],
            )
    # just below the trivial threshold (r = log(lambda0/lambda) small: the double-double branch), down to
    # 1 ulp below the float lambda0 (there tau is positive or 0 as the exact lambda0 lies above or below)
    for n_c, n_w, L, K in [(3, 6, 2, 9), (2, 4, 3, 5), (3, 1200, 15, 1000), (7, 7, 9, 12345)]:
        l0 = float(orc.lambda_trivial(n_c=n_c, n_w=n_w, L=L, K=K))
        for eps in (1e-3, T["near"], 1, 4, 64):
            lam = l0 * (1 - eps) if eps < 1 else l0 - eps * float(np.spacing(l0))
            where = f"lambda0(1 - {eps:g})" if eps < 1 else f"{eps} ulp(s) below lambda0"
            ref = orc.tau(n_c, n_w, L, K, lam)
            for backend in ("numba", "numpy"):
                cmp(
                    fctheory.tau(n_c=n_c, n_w=n_w, L=L, K=K, lam=lam, backend=backend),
                    ref,
                    f"tau at lambda = {lam!r} = {where} on {(n_c, n_w, L, K)} [{backend}]",
                    T["rel"],
                )
        expect(
            fctheory.tau(n_c=n_c, n_w=n_w, L=L, K=K, lam=l0 * (1 + T["above"])) == 0,
            f"tau > 0 just above lambda0 on {(n_c, n_w, L, K)}",
        )


def _mpmath_theorem3(cmp, T, quick):
    """tau_star (both backends), H*, H*', H*'' against mpmath."""
    for n_c, L, K, d, lam in _T3 if not quick else _T3[:3]:
        args = (n_c, L, K, d)
        kw = dict(n_c=n_c, L=L, K=K, d=d)
        tr = orc.tau_star(*args, lam)
        for backend in ("numba", "numpy"):
            cmp(fctheory.tau_star(**kw, lam=lam, backend=backend), tr, f"tau_star{args + (lam,)} [{backend}]", T["rel"])
        for t in (0.0, 0.5 * float(tr), float(tr), 2.0 * float(tr)):
            cmp(fctheory.H_star(t, **kw, lam=lam), orc.H_star(t, *args, lam), f"H*({t:.6g}; {args})", T["rel"])
            hp = orc.H_star_prime(t, *args, lam)
            cmp(
                fctheory.H_star_prime(t, **kw, lam=lam),
                hp,
                f"H*'({t:.6g}; {args})",
                T["rel"],
                scale=lam * t + abs(hp - lam * t),
            )
            cmp(
                importlib.import_module("fctheory.tau_star").H_star_second(t, **kw, lam=lam),
                orc.H_star_second(t, *args, lam),
                f"H*''({t:.6g}; {args})",
                T["rel"],
            )


def _mpmath_theorem2(cmp, T, quick):
    """Theorem 2: the type-III constants and the residuals solve_type3 reports."""
    cases = [(3, 3, 2, 0.02, "zipf"), (2, 4, 3, 0.02, "zipf"), (3, 3, 2, 0.1, "random")]
    for n_c, s_c, L, lam, kind in cases if not quick else cases[:2]:
        mu = Task.full(n_c, s_c, L, mu="zipf").mu if kind == "zipf" else np.array([0.5, 0.3, 0.2])
        with mpmath.workdps(orc.DPS):
            lmax_ref = mpmath.sqrt(
                mpmath.mpf(L) / mpmath.mpf(n_c) ** (L + 1) * sum(mpmath.mpf(float(m)) ** 2 for m in mu)
            )
        cmp(fctheory.lambda_max_type3(mu=mu, n_c=n_c, L=L), lmax_ref, f"lambda_max_type3 on {(n_c, s_c, L)}", T["rel"])
        sol = fctheory.solve_type3(mu=mu, n_c=n_c, L=L, lam=lam)
        c_ref, r_ref = orc.solve_type3(mu=mu, n_c=n_c, L=L, lam=lam)
        cmp(sol.c, c_ref, f"solve_type3 c on {(n_c, s_c, L, lam)}", T["rel"])
        for b in range(s_c):
            cmp(sol.r[b], r_ref[b], f"solve_type3 r_{b} on {(n_c, s_c, L, lam)}", T["rel"])
        res7, res8 = orc.type3_residuals(mu, n_c, L, lam, sol.c, sol.r)
        for got, ref, name in ((sol.residual_7, res7, "residual_7"), (sol.residual_8, res8, "residual_8")):
            err = abs(float(got) - float(ref))
            expect(
                err <= T["residual_abs"] + T["residual_rel"] * float(ref),
                f"solve_type3 {name} = {float(got):.3e} but the residual of the returned (c, r) is {float(ref):.3e}",
            )


def _rand_weights(rng, task, d, scale=0.7):
    return scale * rng.normal(size=(d, task.n_w)), scale * rng.normal(size=(task.K, task.L * d))


@register(
    "risk-engine",
    "(5)/(10) and Lemma S as computed by fctheory.risk: true_risk, unregularized_risk, evaluate_risk, "
    "true_risk_bruteforce (h and h*, lambda > 0, LayerNorm eps) equal an independent enumeration of every sentence "
    "(rel. tol 1e-12); true_risk_grad equals the enumerated gradient for h (abs. tol 1e-12) and central finite "
    "differences of the enumerated risk for h* (rel. tol 1e-6)",
    "numeric enumeration",
    "the reference risk's penalty taken as lambda(||W||^2 + ||U||^2) (factor 1/2 dropped)",
    tol=dict(rel=1e-12, grad_abs=1e-12, fd_rel=1e-6, fd_step=1e-5),
    library=("true_risk", "true_risk_grad", "unregularized_risk", "evaluate_risk", "true_risk_bruteforce", "phi"),
    oracle="proofs_check._risk: every sentence of every class with D(x) = prod mu, scipy logsumexp; own LayerNorm; "
    "analytic gradient in X = U_hat^T W; central finite differences",
)
def check_risk_engine(mutant: bool = False, quick: bool = False) -> str:

    T = tolerances("risk-engine")
    rng = np.random.default_rng(21)
    tasks = [Task.full(3, 2, 2, mu="zipf"), Task.random(2, 3, 3, 5, mu="zipf", seed=2)]
    if not quick:
        tasks.append(Task.full(2, 2, 4, mu="zipf"))
    worst = 0.0
    n = 0
    for task in tasks:
        S = _risk.enumerate_sentences(task)
        d = 3
        W, U = _rand_weights(rng, task, d)
        lam = 0.03
        for layernorm, eps in ((False, 0.0), (True, 0.0), (True, 1e-3)):
            R_ref = _own_risk(task, W, U, lam, layernorm, eps, S)
            if mutant:
                R_ref += lam / 2 * (np.sum(U * U) + (0.0 if layernorm else np.sum(W * W)))
            R0_ref = _own_risk(task, W, U, 0.0, layernorm, eps, S)
            kw = dict(eps=eps)
            got = {
                "true_risk": fctheory.true_risk(task, W, U, lam, layernorm=layernorm, **kw),
                "evaluate_risk.R": fctheory.evaluate_risk(task, W, U, lam, layernorm=layernorm, **kw).R,
                "true_risk_bruteforce.R": fctheory.true_risk_bruteforce(task, W, U, lam, layernorm=layernorm, **kw).R,
            }
            for name, v in got.items():
                e = _rel(v, R_ref)
                worst = max(worst, e)
                expect(
                    e <= T["rel"],
                    f"{name} = {v!r} != enumerated {R_ref!r} (rel {e:.1e}) on {task}, layernorm={layernorm}, eps={eps}",
                )
            e = _rel(fctheory.unregularized_risk(task, W, U, layernorm=layernorm, **kw), R0_ref)
            expect(e <= T["rel"], f"unregularized_risk off by rel {e:.1e} on {task}, layernorm={layernorm}")
            Rg, gW, gU = fctheory.true_risk_grad(task, W, U, lam, layernorm=layernorm, **kw)
            expect(_rel(Rg, R_ref) <= T["rel"], f"true_risk_grad R = {Rg!r} != {R_ref!r}")
            bres = fctheory.true_risk_bruteforce(task, W, U, lam, layernorm=layernorm, grad=True, **kw)
            if not layernorm:
                _, gW_ref, gU_ref = _risk.risk_grad(task, W, U, lam, S=S)
                for name, a, b in (
                    ("dW", gW, gW_ref),
                    ("dU", gU, gU_ref),
                    ("bruteforce dW", bres.grad_W, gW_ref),
                    ("bruteforce dU", bres.grad_U, gU_ref),
                ):
                    err = float(np.max(np.abs(np.asarray(a) - b)))
                    expect(err <= T["grad_abs"], f"true_risk_grad {name} off by {err:.1e} on {task}")
            else:  # directional central differences of the enumerated R*
                h = T["fd_step"]
                for _ in range(2):
                    VW, VU = rng.normal(size=W.shape), rng.normal(size=U.shape)
                    fd = (
                        _own_risk(task, W + h * VW, U + h * VU, lam, True, eps, S)
                        - _own_risk(task, W - h * VW, U - h * VU, lam, True, eps, S)
                    ) / (2 * h)
                    for name, gw, gu in (("true_risk_grad", gW, gU), ("bruteforce", bres.grad_W, bres.grad_U)):
                        dd = float(np.sum(np.asarray(gw) * VW) + np.sum(np.asarray(gu) * VU))
                        expect(
                            abs(dd - fd) <= T["fd_rel"] * max(1.0, abs(fd)),
                            f"{name} (h*, eps={eps}) directional derivative {dd!r} != finite difference {fd!r}",
                        )
            n += 1
    # the LayerNorm itself
    Wt = rng.normal(size=(5, 7)) * rng.uniform(0.1, 10, size=7) + rng.normal(size=7)
    for eps in (0.0, 1e-3):
        err = float(np.max(np.abs(fctheory.phi(Wt, eps=eps) - orc.phi(Wt, eps))))
        expect(err <= T["grad_abs"], f"fctheory.phi(eps={eps}) differs from the column LayerNorm by {err:.1e}")
    return f"{n} (task, network) cases: max rel. error of R {worst:.1e}; gradients match"


def _own_risk(task, W, U, lam, layernorm, eps, S):
    V = orc.phi(W, eps) if layernorm else W
    reg = lam / 2 * (np.sum(U * U) + (0.0 if layernorm else np.sum(W * W)))
    return _risk.f_value(S, _risk.U_hat(U, L=task.L).T @ V) + reg


def _pca_sigmas(M):
    """Singular values of the centred data matrix (rows = samples), largest first."""
    C = M - M.mean(axis=0, keepdims=True)
    return np.linalg.svd(C, compute_uv=False)


def _predictions_frames(T):
    """The equiangular frames (4): Gram matrix kappa I - 11^T/(n_c - 1), mean-zero columns."""
    for n_c, d, mz in [(3, 4, False), (4, 3, False), (3, 5, True), (5, 5, True)]:
        F = fctheory.equiangular_frame(n_c, d, mean_zero=mz, seed=7)
        gram = (n_c * np.eye(n_c) - np.ones((n_c, n_c))) / (n_c - 1)
        expect(
            np.max(np.abs(F.T @ F - gram)) <= T["abs"], f"equiangular_frame({n_c},{d}) Gram != kappa I - 11^T/(n_c-1)"
        )
        expect(np.max(np.abs(fctheory.equiangular_gram(n_c) - gram)) <= T["abs"], f"equiangular_gram({n_c})")
        if mz:
            expect(np.max(np.abs(F.sum(axis=0))) <= T["abs"], f"mean_zero frame columns do not sum to 0 ({n_c},{d})")


def _predictions_type1(close, mutant, quick):
    """Theorem 1 (uniform mu): predict_type1, type1_configuration, their risk, norms, PCA spectra and margin."""
    for n_c, s_c, L, lam, d in [(3, 2, 2, 0.01, 4), (2, 3, 3, 0.02, 2)][: 1 if quick else 2] + [(2, 2, 2, 0.05, 3)]:
        task = Task.full(n_c, s_c, L)
        K, n_w = task.K, task.n_w
        tau_ref = float(orc.tau(n_c, n_w, L, K, lam))
        p = fctheory.predict_type1(n_c=n_c, n_w=n_w, L=L, K=K, lam=lam)
        q = fctheory.predict(task, lam=lam)
        close(p.tau, tau_ref, "predict_type1.tau")
        close(q.tau, tau_ref, "predict(task).tau")
        c_ref, cp_ref = np.sqrt(tau_ref / n_w), np.sqrt(tau_ref / (K * L))
        close(p.c, c_ref, "predict_type1.c = sqrt(tau/n_w)")
        close(p.c_prime, np.sqrt(tau_ref / K) if mutant else cp_ref, "predict_type1.c_prime = sqrt(tau/(KL))")
        W, U = fctheory.type1_configuration(task, d=d, lam=lam, seed=3)
        S = _risk.enumerate_sentences(task)
        R = _risk.risk(task, W, U, lam, S=S)
        H_ref = float(orc.H(tau_ref, n_c, n_w, L, K, lam))
        close(R, H_ref, "enumerated risk of type1_configuration(lam) vs H(tau)")
        close(p.risk, H_ref, "predict_type1.risk")
        close(p.ce, H_ref - lam * tau_ref, "predict_type1.ce")
        close([np.linalg.norm(W), np.linalg.norm(U)], [np.sqrt(tau_ref)] * 2, "||W||, ||U|| of type1_configuration")
        close([p.norm_W, p.norm_U], [np.sqrt(tau_ref)] * 2, "predict_type1 norms")
        Uh = _risk.U_hat(U, L=L)
        close(np.linalg.norm(Uh, axis=0), np.full(K * L, cp_ref), "||u_kl|| = c'")
        close(np.linalg.norm(W, axis=0), np.full(n_w, c_ref), "||w|| = c")
        sW, sU = _pca_sigmas(W.T)[: n_c - 1], _pca_sigmas(Uh.T)[: n_c - 1]
        close(sW, np.full(n_c - 1, p.pca_sigma), "PCA singular values of W vs predict_type1.pca_sigma")
        close(sU, np.full(n_c - 1, p.pca_sigma), "PCA singular values of U vs predict_type1.pca_sigma")
        # margin h_k(x) - h_j(x) at a sentence of class k where z_j differs from z_k in one position
        D = task.hamming()
        k, j = 0, int(np.nonzero(D[0] == 1)[0][0])
        x = task.Z[k] * s_c  # the words (z_kl, 0)
        y = _risk.X_of(W, U, L)[:, x].reshape(K, L, L)  # y[:, ℓ, ℓ'] = <u_{·,ℓ}, w_{x_ℓ'}>
        scores = np.einsum("kll->k", y)
        close(scores[k] - scores[j], p.margin_per_position, "margin per differing position (eta tau)")


def _predictions_type2(close, T, quick):
    """Theorem 3 (any mu, LayerNorm): predict_type2 and type2_configuration."""
    for n_c, s_c, L, d, lam in [(3, 2, 2, 4, 0.01), (2, 3, 3, 3, 0.05)][: 1 if quick else 2]:
        task = Task.full(n_c, s_c, L, mu="zipf")
        K, n_w = task.K, task.n_w
        ts_ref = float(orc.tau_star(n_c=n_c, L=L, K=K, d=d, lam=lam))
        p = fctheory.predict_type2(n_c=n_c, L=L, K=K, d=d, lam=lam, n_w=n_w)
        close(p.tau_star, ts_ref, "predict_type2.tau_star")
        close(p.c, ts_ref / np.sqrt(K * L), "predict_type2.c = tau*/sqrt(KL)")
        W, U = fctheory.type2_configuration(task, d=d, lam=lam, seed=5)
        expect(np.max(np.abs(orc.phi(W) - W)) <= T["abs"], "type2_configuration: phi(W) != W (default scale/shift)")
        S = _risk.enumerate_sentences(task)
        R = _risk.risk(task, W, U, lam, layernorm=True, S=S)
        Hs = float(orc.H_star(ts_ref, n_c=n_c, L=L, K=K, d=d, lam=lam))
        close(R, Hs, "enumerated R* of type2_configuration(lam) vs H*(tau*)")
        close(p.risk, Hs, "predict_type2.risk")
        close(p.norm_U, ts_ref, "predict_type2.norm_U")
        close(np.linalg.norm(U), ts_ref, "||U|| of type2_configuration")
        close(_pca_sigmas(_risk.U_hat(U, L=L).T)[: n_c - 1], np.full(n_c - 1, p.pca_sigma_U), "PCA of U vs pca_sigma_U")
        close(_pca_sigmas(W.T)[: n_c - 1], np.full(n_c - 1, p.pca_sigma_phiW), "PCA of phi(W) vs pca_sigma_phiW")


def _predictions_type3(close, T, quick):
    """Theorem 2 (type III, Zipf mu, K = n_c^L): predict_type3 and type3_configuration (a critical point)."""
    for n_c, s_c, L, lam in [(3, 3, 2, 0.02), (2, 3, 3, 0.03)][: 1 if quick else 2]:
        task = Task.full(n_c, s_c, L, mu="zipf")
        K = task.K
        c_ref, r_ref = orc.solve_type3(mu=task.mu, n_c=n_c, L=L, lam=lam)
        c_ref, r_ref = float(c_ref), np.array([float(v) for v in r_ref])
        p = fctheory.predict_type3(mu=task.mu, n_c=n_c, L=L, lam=lam)
        close(p.c, c_ref, "predict_type3.c")
        close(p.r, r_ref, "predict_type3.r")
        d = n_c + 1
        W, U = fctheory.type3_configuration(task, d=d, lam=lam, seed=2)
        S = _risk.enumerate_sentences(task)
        R, gW, gU = _risk.risk_grad(task, W, U, lam, S=S)
        R0 = _risk.f_value(S, _risk.X_of(W, U, L))
        close(p.risk, R, "predict_type3.risk vs enumerated risk of type3_configuration(lam)")
        close(p.ce, R0, "predict_type3.ce vs enumerated unregularised risk")
        gn = float(np.sqrt(np.sum(gW**2) + np.sum(gU**2)))
        expect(gn <= T["grad"], f"type3_configuration(lam) is not a critical point: |grad R| = {gn:.1e}")
        close(np.linalg.norm(W, axis=0), r_ref[task.word_rank], "||w_(a,b)|| = r_b")
        close(np.linalg.norm(_risk.U_hat(U, L=L), axis=0), np.full(K * L, c_ref), "||u_kl|| = c")
        close([p.norm_W, p.norm_U], [np.linalg.norm(W), np.linalg.norm(U)], "predict_type3 norms")
        kap = n_c / (n_c - 1)
        close(p.margins_per_position, kap * c_ref * r_ref, "predict_type3 margins kappa c r_b")
        close(
            [p.pca_sigma_W, p.pca_sigma_U],
            [_pca_sigmas(W.T)[0], _pca_sigmas(_risk.U_hat(U, L=L).T)[0]],
            "predict_type3 PCA singular values",
        )


@register(
    "predictions-configurations",
    "Theorems 1-3 as predicted by fctheory: predict_type1/2/3 (c, c', tau, norms, PCA singular values, margins, "
    "ce, risk) and type1/2/3_configuration (built with the theorem's constants) agree with the definitions: "
    "enumerated risk of the configuration = predicted risk = 50-digit H(tau) / H*(tau*) (rel. tol 1e-12), norms and "
    "PCA spectra from an SVD, phi(W) = W for type II, equiangular frames (4), type-III point critical "
    "(|grad| <= 1e-11)",
    "numeric enumeration",
    "c' claimed as sqrt(tau/K) (L dropped)",
    tol=dict(rel=1e-12, abs=1e-12, grad=1e-11),
    library=(
        "predict_type1",
        "predict_type2",
        "predict_type3",
        "predict",
        "type1_configuration",
        "type2_configuration",
        "type3_configuration",
        "equiangular_frame",
        "equiangular_gram",
    ),
    oracle="own enumeration of the true risk of the returned (W, U), numpy SVD, own scores, 50-digit tau/tau*",
)
def check_predictions(mutant: bool = False, quick: bool = False) -> str:

    T = tolerances("predictions-configurations")

    def close(a, b, what, tol=None):
        tol = T["rel"] if tol is None else tol
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        err = float(np.max(np.abs(a - b) / np.where(b == 0, 1.0, np.abs(b))))
        expect(err <= tol, f"{what}: {a.tolist()} != {b.tolist()} (rel {err:.1e})")

    _predictions_frames(T)
    _predictions_type1(close, mutant, quick)
    _predictions_type2(close, T, quick)
    _predictions_type3(close, T, quick)
    return "predictions, configurations and frames agree with the definitions (enumerated risks, SVDs, 50-digit tau)"


@register(
    "convex-lower-bound",
    "The rigorous lower bound used by the convex certificates, min g >= f(X) - <grad f(X), X> + (log K/lambda) "
    "min(0, lambda - ||grad f(X)||_2), is below the true minimum H(tau) (50-digit mpmath, full latent set, uniform mu) "
    "at random and perturbed points (slack 1e-12) and equals it at the type-I optimum (abs. tol 1e-10)",
    "numeric enumeration",
    "the bound without its (log K/lambda) min(0, lambda - ||grad f||_2) term",
    tol=dict(slack=1e-12, tight=1e-10),
    library=("tau", "H"),
    oracle="min g = H(tau) from 50-digit mpmath (Theorem 1 + Theorem G); the bound evaluated on the own enumeration",
)
def check_lower_bound(mutant: bool = False, quick: bool = False) -> str:

    T = tolerances("convex-lower-bound")
    rng = np.random.default_rng(8)
    n = 0
    for n_c, s_c, L, lam in [(3, 2, 2, 0.01), (2, 2, 3, 0.02)]:
        task = Task.full(n_c, s_c, L)
        S = _risk.enumerate_sentences(task)
        min_g = float(orc.H(orc.tau(n_c, task.n_w, L, task.K, lam), n_c, task.n_w, L, task.K, lam))
        tau_lib = fctheory.tau(n_c=n_c, n_w=task.n_w, L=L, K=task.K, lam=lam)
        expect(
            abs(fctheory.H(tau_lib, n_c=n_c, n_w=task.n_w, L=L, K=task.K, lam=lam) - min_g)
            <= T["slack"] * max(1.0, min_g),
            "fctheory's H(tau) differs from the 50-digit minimum",
        )
        W, U = _risk.type1_point(task, np.sqrt(tau_lib / task.n_w), n_c - 1)
        X_opt = _risk.X_of(W, U, L)
        points = [("optimum", X_opt)]
        points += [(f"optimum x {s}", s * X_opt) for s in (0.5, 1.05, 3.0)]
        points += [(f"random scale {s}", s * rng.normal(size=X_opt.shape)) for s in (0.1, 1.0, 5.0)]
        points += [("optimum + noise", X_opt + 0.3 * rng.normal(size=X_opt.shape))]
        for name, X in points:
            if mutant:
                f, G = _risk.f_grad(S, X)
                lb = f - float(np.sum(G * X))
            else:
                lb, _ = convex.lower_bound(S, X, lam)
            expect(
                lb <= min_g + T["slack"] * max(1.0, abs(min_g)),
                f"lower bound {lb!r} exceeds the true minimum {min_g!r} at the {name} point of {task}",
            )
            if name == "optimum":
                expect(abs(lb - min_g) <= T["tight"], f"bound {lb!r} not tight at the optimum (min {min_g!r})")
            n += 1
    return f"{n} points: bound <= 50-digit min g everywhere, tight at the type-I optimum"
