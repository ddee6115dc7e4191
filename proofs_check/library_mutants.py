"""Realistic bugs planted in the library, for ``python -m proofs_check --self-test``.

Each :class:`LibraryMutant` is a small edit of one library function (a wrong constant, a dropped term, a
loosened tolerance, a skipped step), applied for the duration of a ``with`` block by
:mod:`proofs_check._mutate` (the function's code object is swapped, so every caller sees the bug; numba
kernels are recompiled from the edited source). ``checks`` lists the checks that must catch it: the
self-test runs them (quick mode) under the mutant and reports CAUGHT when one of them raises
:class:`~proofs_check.CheckFailed`, MISSED when all pass. A mutant whose edited text is no longer in the
library is reported STALE (the registry must follow the library).
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, field

from . import _mutate
from .registry import CheckFailed, CheckResult, count_expects, get_checks


@dataclass(frozen=True)
class LibraryMutant:
    """One planted library bug.

    Attributes
    ----------
    id : str
    module, qualname : str
        The function edited (``qualname`` may be ``Class.method``); for numba kernels the kernel module and
        the dispatchers rebuilt (``kernels``).
    old, new : str
        The edit (``old`` must occur once in the function, or ``occurrence`` gives which).
    description : str
    checks : tuple of str
        Check ids expected to catch it.
    more : tuple of (old, new)
        Further edits of the same function.
    kernels : tuple of str
        Non-empty for a numba kernel mutant (slow: a few seconds of compilation).
    """

    id: str
    module: str
    qualname: str
    old: str
    new: str
    description: str
    checks: tuple
    occurrence: int | None = None
    more: tuple = ()
    kernels: tuple = field(default=())

    @property
    def slow(self) -> bool:
        return bool(self.kernels)

    def patch(self):
        """Context manager planting the bug."""
        if self.kernels:
            return _mutate.numba_edit(self.module, self.kernels, self.old, self.new, self.occurrence)
        names = self.qualname.split("|")  # candidates (the first whose source holds ``old``), for refactors
        for name in names[:-1]:
            if _mutate.holds(self.module, name, self.old):
                return _mutate.source_edit(self.module, name, self.old, self.new, self.occurrence, more=self.more)
        return _mutate.source_edit(self.module, names[-1], self.old, self.new, self.occurrence, more=self.more)


M = LibraryMutant
_T1 = ("predictors-mpmath",)
MUTANTS: list[LibraryMutant] = [
    # ---- Theorem 1: fctheory/tau.py, fctheory/_latent.py, fctheory/_kernels.py
    M(
        "eta-kappa",
        "fctheory.tau",
        "_log_eta",
        "np.log(n_c / (n_c - 1))",
        "np.log(n_c / n_c)",
        "eta of Theorem 1 with n_c/(n_c-1) -> n_c/n_c",
        ("lemmaK-eq92", "predictors-mpmath"),
    ),
    M(
        "lambda0-denominator",
        "fctheory.tau",
        "_scaled_denominator",
        "A = dd_add((K, 0.0 * K), _one_minus_p_dd(n_c, L, K))",
        "A = (K, 0.0 * K)",
        "lambda_trivial with denominator K instead of K + 1 - K/n_c^L",
        ("tau-trivial-threshold", "predictors-mpmath"),
    ),
    M(
        "tau-numpy-newton-tol",
        "fctheory.tau",
        "_solve_s",
        "atol=1e-13",
        "atol=1e-3",
        "tau(backend='numpy'): Newton stopping tolerance 1e-13 -> 1e-3",
        _T1,
    ),
    M(
        "tau-near-threshold-float-gap",
        "fctheory.tau",
        "_threshold_gap",
        "gap = dd_add(lhs, (-rhs[0], -rhs[1]))",
        "gap = (lhs[0] - rhs[0], 0.0 * lam)",
        "tau near lambda_trivial: the gap (lambda0/lambda)^2 - 1 formed in float64 instead of double-double",
        _T1,
    ),
    M(
        "tau-threshold-decided-in-float",
        "fctheory.tau",
        "_tau_near_threshold",
        "X[i] = _threshold_gap_exact(n_c[i], n_w[i], L[i], K[i], lam[i])",
        "X[i] = 0.0",
        "tau within a few ulps of lambda_trivial: 0 instead of the exact-rational decision",
        _T1,
    ),
    M(
        "H-prime-sign",
        "fctheory.tau",
        "H_prime",
        "lam + e * lat.G_prime(t * e)",
        "lam - e * lat.G_prime(t * e)",
        "H'(t) with the sign of the log-term derivative flipped",
        _T1,
    ),
    M(
        "H-second-eta",
        "fctheory.tau",
        "H_second",
        "e * e * lat.G_second(t * e)",
        "e * lat.G_second(t * e)",
        "H''(t) = eta G''(eta t) (one chain-rule factor eta dropped)",
        _T1,
    ),
    M(
        "G-n_c-1",
        "fctheory._latent",
        "LatentSum.G",
        "(self.n_c - 1) * np.exp(-s)",
        "self.n_c * np.exp(-s)",
        "the log term of H, H* with (1 + n_c e^-s)^L instead of (1 + (n_c-1)e^-s)^L",
        ("lemmaK-eq92", "lemmaR-eq124"),
    ),
    M(
        "G-drop-1-minus-p",
        "fctheory._latent",
        "LatentSum.G",
        "return log1p_aexpm1(self.logp, self.log_om, a)",
        "return self.logp + a",
        "the (1 - K/n_c^L) term of H dropped (invisible when K = n_c^L)",
        _T1,
    ),
    M(
        "G-second-drop-L",
        "fctheory._latent",
        "LatentSum.G_second",
        "self.L * e1**2",
        "e1**2",
        "G'' missing the factor L in its second term",
        _T1,
    ),
    M(
        "log-Kom-half-1-minus-p",
        "fctheory._latent",
        "LatentSum.__init__",
        "self.logK + np.log1p(self.om / K)",
        "self.logK + np.log1p(self.om / K / 2)",
        "log(K + 1 - K/n_c^L) in the latent sums computed as log(K + (1 - K/n_c^L)/2)",
        ("tau-trivial-threshold", "predictors-mpmath"),
    ),
    M(
        "log-rhs0-no-logK",
        "fctheory._latent",
        "LatentSum.log_rhs0",
        "self.log1m_inv_nc + self.logK - self.log_Kom",
        "self.log1m_inv_nc - self.log_Kom",
        "tau*'s stationarity constant log(E1E2)(0) without log K",
        _T1,
    ),
    M(
        "kernel-newton-tol",
        "fctheory._kernels",
        "",
        "if abs(xn - x) <= 1e-15 * max(1.0, abs(x)):",
        "if abs(xn - x) <= 1e-4 * max(1.0, abs(x)):",
        "compiled Newton of tau, tau*: stopping tolerance 1e-15 -> 1e-4",
        _T1,
        kernels=("tau_direct", "tau_sigma", "tau_star_sigma"),
    ),
    M(
        "kernel-log-Kom",
        "fctheory._kernels",
        "",
        "log_Kom = logK + math.log1p(om / K)",
        "log_Kom = logK",
        "compiled tau: log(K + 1 - K/n_c^L) taken as log K (the +1 - K/n_c^L dropped)",
        _T1,
        kernels=("tau_direct", "tau_sigma", "tau_star_sigma"),
    ),
    # ---- Theorem 3: fctheory/tau_star.py
    M(
        "eta-star-drop-L",
        "fctheory.tau_star",
        "_log_eta_star",
        "- np.log(K) - np.log(L))",
        "- np.log(K))",
        "eta* = kappa/sqrt(K/d) (L dropped)",
        ("lemmaR-eq124", "predictors-mpmath"),
    ),
    M(
        "H-star-half",
        "fctheory.tau_star",
        "H_star",
        "0.5 * lam * t * t",
        "lam * t * t",
        "H* with regulariser lambda t^2 instead of lambda t^2/2",
        ("lemmaR-eq124", "predictors-mpmath"),
    ),
    M(
        "tau-star-logb",
        "fctheory.tau_star",
        "tau_star",
        "- 2 * log_eta - np.log(L)",
        "- log_eta - np.log(L)",
        "tau*: stationarity constant with eta* instead of eta*^2",
        _T1,
    ),
    # ---- Theorem 2: fctheory/type3.py
    M(
        "lambda-max-exponent",
        "fctheory.type3",
        "_log_lambda_max",
        "(L + 1) * np.log(n_c)",
        "L * np.log(n_c)",
        "condition (9) with n_c^L instead of n_c^(L+1)",
        ("thm2-critical-point", "predictors-mpmath", "type3-origin-threshold", "type3-proof-origin"),
    ),
    M(
        "type3-residual-min",
        "fctheory.type3",
        "_residuals",
        "res7 = np.max(",
        "res7 = np.min(",
        "residual_7 of (7) reported as the min over beta instead of the max",
        _T1,
    ),
    M(
        "type3-kappa",
        "fctheory.type3",
        "_System.__init__",
        "self.log_kappa = self.log_nc - self.c1",
        "self.log_kappa = self.log_nc",
        "type-III solver with kappa = n_c instead of n_c/(n_c-1)",
        ("thm2-critical-point", "predictors-mpmath", "type3-spectrum-certificate"),
    ),
    M(
        "type3-weights",
        "fctheory.type3",
        "_System.__init__",
        "log_mu2 = 2 * np.log(self.mu)",
        "log_mu2 = np.log(self.mu)",
        "type-III solver weights mu_b/sum mu instead of mu_b^2/sum mu^2",
        ("thm2-critical-point", "predictors-mpmath"),
    ),
    M(
        "type3-no-polish-loose-tol",
        "fctheory.type3",
        "solve_type3",
        "for _ in range(2):",
        "for _ in range(0):",
        "type-III solver: long-double Newton polish skipped (float64 solve left 1e-7 off in log c^2)",
        _T1,
        more=(
            ("    x = ld.x_of(sig, np.log(x))\n", "    x = ld.x_of(sig, None if x is None else np.log(x))\n"),
            ("sigma = _solve_sigma(sys)", "sigma = _solve_sigma(sys) + 1e-7"),
        ),
    ),
    # ---- theorems.py (the prediction objects of Theorems 1-3)
    M(
        "predict1-c-prime",
        "fctheory.theorems",
        "predict_type1",
        "c_prime=_s(root(np.log(K_a) + np.log(L_a)))",
        "c_prime=_s(root(np.log(K_a)))",
        "predict_type1.c_prime = sqrt(tau/K)",
        ("predictions-configurations",),
    ),
    M(
        "predict1-pca",
        "fctheory.theorems",
        "predict_type1",
        "pca_sigma=_s(np.sqrt(t / (n_c_a - 1)))",
        "pca_sigma=_s(np.sqrt(t / n_c_a))",
        "predict_type1.pca_sigma = sqrt(tau/n_c)",
        ("predictions-configurations",),
    ),
    M(
        "predict2-c",
        "fctheory.theorems",
        "predict_type2",
        "c=_s(np.exp(log_ts - 0.5 * (np.log(K_a) + np.log(L_a))))",
        "c=_s(np.exp(log_ts - 0.5 * np.log(K_a)))",
        "predict_type2.c = tau*/sqrt(K)",
        ("predictions-configurations",),
    ),
    M(
        "predict3-ce-n_c",
        "fctheory.theorems",
        "predict_type3",
        "np.log1p((n_c_a[..., None] - 1) * np.exp(-x))",
        "np.log1p(n_c_a[..., None] * np.exp(-x))",
        "predict_type3.ce with n_c e^-x instead of (n_c-1)e^-x",
        ("predictions-configurations",),
    ),
    M(
        "predict3-reg",
        "fctheory.theorems",
        "predict_type3",
        "log_norm_W2 = log_nc + log_sum_r2",
        "log_norm_W2 = log_sum_r2",
        "predict_type3.risk: ||W||^2 = sum r^2 (factor n_c dropped)",
        ("predictions-configurations",),
    ),
    # ---- configurations.py, frames.py, network.py
    M(
        "config1-c-prime-scaled",
        "fctheory.configurations",
        "type1_configuration",
        "c_prime = float(np.sqrt(t / (task.K * task.L)))",
        "c_prime = 1.001 * float(np.sqrt(t / (task.K * task.L)))",
        "type1_configuration(lam): c' scaled by 1.001",
        ("predictions-configurations", "type1-full-certified"),
    ),
    M(
        "config1-tau-lam-shifted",
        "fctheory.configurations",
        "type1_configuration",
        "K=task.K, lam=lam)",
        "K=task.K, lam=1.001 * lam)",
        "type1_configuration(lam): Theorem 1's tau taken at 1.001*lam (balanced, but off the optimal scale)",
        ("type1-full-certified",),
    ),
    M(
        "config-frame-not-mean-zero",
        "fctheory.configurations",
        "_frame",
        "mean_zero=mean_zero, seed=seed",
        "mean_zero=False, seed=seed",
        "type2_configuration with an equiangular frame that is not mean-zero",
        ("predictions-configurations",),
    ),
    M(
        "config3-r-reversed",
        "fctheory.configurations",
        "type3_configuration",
        "r[task.word_rank]",
        "r[::-1][task.word_rank]",
        "type3_configuration: r_beta assigned in reversed frequency order",
        ("predictions-configurations",),
    ),
    M(
        "frame-scale",
        "fctheory.frames",
        "simplex_coords",
        "np.sqrt(n_c / (n_c - 1.0))",
        "np.sqrt(n_c / (n_c + 1.0))",
        "equiangular frame vectors not of unit norm",
        ("predictions-configurations", "lemmaK-eq92"),
    ),
    M(
        "gram-kappa",
        "fctheory.frames",
        "equiangular_gram",
        "/ (n_c - 1)",
        "/ n_c",
        "equiangular Gram matrix (4) scaled by 1/n_c instead of 1/(n_c - 1)",
        ("type3-proof-spectrum",),
    ),
    M(
        "phi-unbiased-std",
        "fctheory.network",
        "phi",
        "var = (C * C).mean(axis=0, keepdims=True)",
        "var = (C * C).sum(axis=0, keepdims=True) / (W.shape[0] - 1)",
        "LayerNorm with the unbiased variance",
        ("risk-engine",),
    ),
    M(
        "phi-vjp-drop-d",
        "fctheory.network",
        "phi_jacobian_vjp",
        "(Y * G).sum(axis=0, keepdims=True) / d",
        "(Y * G).sum(axis=0, keepdims=True)",
        "LayerNorm backward pass missing 1/d in the phi phi^T term",
        ("risk-engine",),
    ),
    # ---- the exact true risk: fctheory/risk/
    M(
        "risk-penalty-half",
        "fctheory.risk.evaluation",
        "evaluate_risk|evaluate",
        "penalty = 0.5 * lam *",
        "penalty = lam *",
        "true risk penalty lambda(||W||^2 + ||U||^2) (1/2 dropped)",
        ("risk-engine",),
    ),
    M(
        "risk-grad-no-lamU",
        "fctheory.risk.evaluation",
        "evaluate_risk|evaluate",
        "res.grad_U = U_from_hat(dUh, L=L) + lam * U",
        "res.grad_U = U_from_hat(dUh, L=L)",
        "true_risk_grad: dR/dU missing lambda U",
        ("risk-engine",),
    ),
    M(
        "risk-eps-ignored",
        "fctheory.risk.evaluation",
        "evaluate_risk|evaluate",
        "V = phi(W, eps=eps) if layernorm else W",
        "V = phi(W) if layernorm else W",
        "true risk of h*: LayerNorm eps ignored",
        ("risk-engine",),
    ),
    M(
        "risk-grad-no-1/K",
        "fctheory.risk.evaluation",
        "evaluate_risk|evaluate",
        "gG = gG3.reshape(K * L, task.n_w) / K",
        "gG = gG3.reshape(K * L, task.n_w)",
        "true_risk_grad without the 1/K of (5)",
        ("risk-engine", "type3-closed-form-gradient"),
    ),
    M(
        "risk-target-in-normalizer",
        "fctheory.risk.enumeration",
        "_run_group_inner",
        "        saved = buf[rows_k, cols_loc].copy()\n        buf[rows_k, cols_loc] = 0.0\n",
        "        saved = buf[rows_k, cols_loc].copy()\n",
        "exact risk engine: the target class is not excluded from the normalizer sum_(j != k)",
        ("risk-engine", "convex-f-crosscheck"),
    ),
    M(
        "brute-target-in-normalizer",
        "fctheory.risk._brute",
        "true_risk_bruteforce",
        "            Dl[:, k] = -np.inf\n",
        "",
        "true_risk_bruteforce: the target class is not excluded from sum_(j != k)",
        ("risk-engine",),
    ),
    M(
        "brute-ce-clipped",
        "fctheory.risk._brute",
        "true_risk_bruteforce",
        "sp = _softplus(t)",
        "sp = np.maximum(t, 0.0)",
        "true_risk_bruteforce: cross-entropy softplus(t) clipped to max(t, 0)",
        ("risk-engine",),
    ),
    # ---- assumption checkers: fctheory/assumptions/
    M(
        "assumptionA-exponent",
        "fctheory.assumptions.assumption_a",
        "_expected_35",
        "(n_c - 1) ** r, N)",
        "(n_c - 1) ** (r + 1), N)",
        "(35), z_kl = alpha case, with (n_c-1)^(r+1)",
        ("lemmaB-enum-full", "existence-assumptionA"),
    ),
    M(
        "lemmaB-theta",
        "fctheory.assumptions.lemma_b",
        "lemma_B_properties",
        "theta = 1 - Fraction(a, 1) / s",
        "theta = 1 - Fraction(a, 1) / (s + 1)",
        "Lemma B theta_r recovered with |S_r| + 1",
        ("lemmaB-enum-full", "lemmaB-iii-forced"),
    ),
    # ---- certified enclosures: fctheory/_interval.py, fctheory/type3.py
    M(
        "enclosure-radius-dropped",
        "fctheory._interval",
        "enclosure",
        "ball=ball,",
        "ball=flint.arb(ball.mid()),",
        "precision='interval': the Enclosure keeps the ball's midpoint and drops its radius (a point, not a ball)",
        ("interval-enclosures",),
    ),
    M(
        "lambda-max-interval-no-sqrt",
        "fctheory.type3",
        "lambda_max_type3",
        "flint_module().arb(q).sqrt()",
        "flint_module().arb(q)",
        "lambda_max_type3(precision='interval') encloses lambda_max^2 instead of lambda_max",
        ("interval-enclosures",),
    ),
    M(
        "lemmaB-ZZt",
        "fctheory.assumptions.lemma_b",
        "lemma_B_properties",
        "K * L * np.eye(n_c, dtype=np.int64)",
        "K * np.eye(n_c, dtype=np.int64)",
        "Lemma B(ii) tested as ZZ^T = (K/n_c) I",
        ("lemmaB-enum-full",),
    ),
    M(
        "assumptionB-unsymmetrised",
        "fctheory.assumptions.assumption_b",
        "_gamma_vectors",
        "G[..., a, b] + G[..., b, a]",
        "G[..., a, b]",
        "(44) with the off-diagonal entries of Gamma not symmetrised",
        ("assumptionB-lemmaC",),
    ),
    # ---- the certified optima: fctheory/optima/
    M(
        "optimum-grad-scale",
        "fctheory.optima.population",
        "EnumeratedF.__call__",
        "gG3.reshape(X.shape) / task.K",
        "gG3.reshape(X.shape) / (task.K + 1)",
        "optimum: the engine's gradient in X divided by K + 1 instead of K (the solver minimises the wrong problem)",
        ("optimum-certificate",),
    ),
    M(
        "collapsed-score-scale",
        "fctheory.optima.collapsed",
        "_Fc.__call__",
        "S = (V.reshape(self.shape2) @ self.OH).T / self.root",
        "S = (V.reshape(self.shape2) @ self.OH).T / self.root**2",
        "collapsed_optimum: the scores of V divided by s_c instead of sqrt(s_c) (the solver minimises another problem)",
        ("collapsed-optimum",),
        more=(("G = (P.T @ self.OH.T) / (K * self.root)", "G = (P.T @ self.OH.T) / (K * self.root**2)"),),
    ),
    M(
        "collapsed-star-no-deficit",
        "fctheory.optima.collapsed",
        "_star_bound",
        "    if deficit < 0:",
        "    if deficit < -1e300:",
        "collapsed_optimum_star: the slackness guess y taken as dual-feasible without raising it to diag(y) >= A^T A "
        "(the bound is then no bound away from the optimum)",
        ("collapsed-optimum-star",),
    ),
    M(
        "optimum-unbalanced-factors",
        "fctheory._nuclear",
        "balanced_svd",
        "Wt[:r] = root[:, None] * Bt[:r]",
        "Wt[:r] = root[:, None] ** 2 * Bt[:r]",
        "optimum: X factored as W = Sigma B^T, U_hat = A^T (unbalanced: R > g(X) at the returned weights)",
        ("optimum-certificate",),
        more=(("Uh[:r] = root[:, None] * A[:, :r].T", "Uh[:r] = A[:, :r].T"),),
    ),
    M(
        "optimum-interval-no-dual-scaling",
        "fctheory.optima.certificates",
        "_bounds|certify_optimality",
        "s = min(1.0, enclosure(lam_b / flint.arb(t).sqrt(), prec).lo)",
        "s = 1.0",
        "certify_optimality: the dual point not scaled into the ball ||Y||_2 <= lambda (s = 1 always)",
        ("optimum-interval",),
    ),
    # ---- the training-set optimum and the certificate of trained networks: fctheory/optima/, fctheory/_nuclear.py
    M(
        "empirical-grad-scale",
        "fctheory.optima.sample",
        "SampleF.__init__",
        "self.be.inv_n = 1.0 / self.N",
        "self.be.inv_n = 1.0 / (self.N + 1)",
        "training-set optimum: the gradient of f_hat divided by N + 1 instead of N (the solver minimises another "
        "problem and the certificate's dual point is not the gradient's)",
        ("empirical-certificate",),
    ),
    M(
        "empirical-entropy-term",
        "fctheory.optima.sample",
        "_Numba.terms",
        "return float(np.sum(ce)), float(np.sum(ent)), P",
        "return float(np.sum(ce)), float(np.sum(ce)), P",
        "training-set certificate: the entropy term E of the Fenchel bound taken as the cross entropy f_hat",
        ("empirical-certificate", "empirical-certify-sound"),
    ),
    M(
        "empirical-norm-unguarded",
        "fctheory.optima.empirical",
        "SampleOracle.norm_bound",
        "return spectral_norm_bound(M, m, fro2, estimate)",
        "return 0.999 * float(self.top(1, tol=1e-12)[1][0])",
        "training-set certificate: ||grad f_hat||_2 from Lanczos (0.1% low) instead of the Cholesky-guarded bound",
        ("empirical-certify-sound", "empirical-certificate"),
    ),
    M(
        "fenchel-no-dual-scaling",
        "fctheory._nuclear",
        "fenchel_bound",
        "s = 1.0 if gop <= lam else lam / gop",
        "s = 1.0",
        "the Fenchel bound without the dual scaling s = min(1, lambda/||grad f||_2) (E claimed as a lower bound)",
        ("empirical-certify-sound",),
    ),
    M(
        "interval-entropy-wrong-end",
        "fctheory.optima.certificates",
        "_bounds",
        "E_lo = enclosure(E, prec).lo",
        "E_lo = enclosure(E, prec).hi",
        "ball-arithmetic certificates: the entropy term E taken from the upper end of its ball",
        ("empirical-interval",),
    ),
    M(
        "interval-R-wrong-end",
        "fctheory.optima.certificates",
        "_bounds",
        '{"R": (eR.lo, eR.hi)',
        '{"R": (eR.hi, eR.hi)',
        "ball-arithmetic certificates: the lower end of R(W, U) taken from the upper end of its ball",
        ("empirical-interval",),
    ),
    M(
        "interval-pd-zero-pivot",
        "fctheory.optima.certificates",
        "_positive_definite",
        "if not dj > 0:",
        "if dj < 0:",
        "ball-arithmetic certificates: the LDL^T test accepts a pivot ball that contains zero (t below ||grad f||^2)",
        ("empirical-interval",),
    ),
]


def get_mutants(only: str | None = None, *, slow: bool = True, checks=None) -> list[LibraryMutant]:
    """Mutants (``only``: comma-separated substrings of ids), optionally without the slow numba ones and
    restricted to those covered by the check ids ``checks``."""
    out = []
    pats = [p.strip() for p in only.split(",") if p.strip()] if only else []
    for m in MUTANTS:
        if pats and not any(p in m.id for p in pats):
            continue
        if not slow and m.slow:
            continue
        if checks is not None and not set(m.checks) & set(checks):
            continue
        out.append(m)
    return out


def _baseline(ids, cache):
    """Whether each check passes (quick mode) on the unmodified library: a mutant can only be caught by a
    check that passes without it."""
    by_id = {c.id: c for c in get_checks()}
    for cid in ids:
        if cid not in cache:
            try:
                by_id[cid].func(mutant=False, quick=True)
                cache[cid] = None
            except Exception as exc:  # noqa: BLE001
                cache[cid] = f"{cid} does not pass on the unmodified library: {type(exc).__name__}: {exc}"
    return [cache[c] for c in ids if cache[c]]


def run_mutant(m: LibraryMutant, check_ids=None, baseline=None) -> CheckResult:
    """Run the checks covering ``m`` (quick mode) with the bug planted; CAUGHT if one fails.

    ``baseline``: a dict shared between calls caching whether each covering check passes unmutated (it
    is run first when not cached); a failing covering check makes the result ERROR, not CAUGHT.
    """
    by_id = {c.id: c for c in get_checks()}
    ids = [i for i in m.checks if check_ids is None or i in check_ids]
    t0 = time.perf_counter()
    bad = _baseline(ids, {} if baseline is None else baseline)
    if bad:
        return CheckResult(
            m.id,
            m.description,
            f"{m.module}.{m.qualname}".rstrip("."),
            "ERROR",
            time.perf_counter() - t0,
            "; ".join(bad),
        )
    errors = []
    status, detail = "MISSED", "every covering check passed: " + ", ".join(ids)
    try:
        with m.patch():
            for cid in ids:
                try:
                    with count_expects():
                        by_id[cid].func(mutant=False, quick=True)
                except CheckFailed as exc:
                    status, detail = "CAUGHT", f"{cid}: {exc}"
                    break
                except Exception as exc:  # noqa: BLE001 - a crash is reported, never counted as caught
                    errors.append(f"{cid}: {traceback.format_exception_only(type(exc), exc)[-1].strip()}")
    except _mutate.StaleMutant as exc:
        status, detail = "STALE", str(exc)
    if status == "MISSED" and errors:
        status, detail = "ERROR", "; ".join(errors)
    return CheckResult(
        m.id, m.description, f"{m.module}.{m.qualname}".rstrip("."), status, time.perf_counter() - t0, detail
    )


def run_mutants(only=None, *, slow: bool = True, check_ids=None, on_result=None) -> list[CheckResult]:
    """Run every selected library mutant (see :func:`run_mutant`)."""
    results = []
    baseline = {}
    for m in get_mutants(only, slow=slow, checks=check_ids):
        res = run_mutant(m, check_ids, baseline)
        results.append(res)
        if on_result is not None:
            on_result(res)
    return results
