"""Property-based checks (Hypothesis) of statements about functions: Theorem G's inequality, Theorem D's
lower bound, and the bilinear bounds of Lemmas F and M. Hypothesis runs derandomised, without an
example database, so a run is reproducible and leaves no files behind (Hypothesis is one of fctheory's
dependencies: ``fctheory.testing`` is built on it)."""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from math import comb

import hypothesis.configuration as hc
import numpy as np
from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import strategies as st

import fctheory
from fctheory import Task

from . import _risk
from .registry import CheckFailed, expect, register, tolerances


def _hyp():
    """(hypothesis.given, hypothesis.strategies), imported lazily."""

    return given, st


def _settings(quick: bool, n: int = 120):

    return settings(
        max_examples=max(10, n // 3) if quick else n,
        deadline=None,
        derandomize=True,
        database=None,
        verbosity=Verbosity.quiet,
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        phases=(Phase.explicit, Phase.reuse, Phase.generate),  # no shrinking: the first counterexample is enough
    )


@contextmanager
def _private_storage():
    """Point Hypothesis's storage (its cache of source constants) at a temporary directory, unless the user
    chose one (HYPOTHESIS_STORAGE_DIRECTORY or hypothesis.configuration.set_hypothesis_home_dir): a run of the
    checks must not leave a ``.hypothesis/`` folder in the working directory."""

    chosen = vars(hc).get("__hypothesis_home_directory") is not None or os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY")
    if chosen:
        yield
        return
    with tempfile.TemporaryDirectory(prefix="proofs_check-hypothesis-") as tmp:
        hc.set_hypothesis_home_dir(tmp)
        try:
            yield
        finally:
            hc.set_hypothesis_home_dir(None)


def _run(test):
    """Run a Hypothesis test; its assertion (a CheckFailed) propagates with the falsifying example."""
    try:
        with _private_storage():
            test()
    except CheckFailed:
        raise
    except AssertionError as exc:  # pragma: no cover - Hypothesis wraps flaky failures
        raise CheckFailed(str(exc)) from exc


def _dims(st):
    return st.tuples(st.integers(1, 6), st.integers(1, 6), st.integers(1, 6))


def _seeds(st):
    return st.integers(0, 2**32 - 1)


@register(
    "thmG-nuclear-inequality",
    "Theorem G, Claim G and (164)-(166): ||AB||_* <= (||A||_F^2 + ||B||_F^2)/2 for all A, B, with equality iff "
    "A^T A = B B^T (rel. tol 1e-10)",
    "Hypothesis",
    "claims equality ||AB||_* = (||A||^2+||B||^2)/2 for all A, B",
    tol=dict(rel=1e-10, imbalance=1e-3, strict=1e-12, nonzero=1e-6),
    library=(),
    oracle="numpy SVD (nuclear norm) and an explicit balanced factorisation; a statement about matrices that no "
    "fctheory function computes",
)
def check_nuclear_inequality(mutant: bool = False, quick: bool = False) -> str:
    given, st = _hyp()
    T = tolerances("thmG-nuclear-inequality")

    @_settings(quick, 150)
    @given(_dims(st), _seeds(st), st.floats(0.2, 5.0))
    def prop(dims, seed, t):
        m, d, n = dims
        rng = np.random.default_rng(seed)
        A = rng.normal(size=(m, d))
        B = rng.normal(size=(d, n))
        nuc = np.linalg.norm(A @ B, "nuc")
        half = 0.5 * (np.sum(A * A) + np.sum(B * B))
        tol = T["rel"] * max(1.0, half)
        if mutant:
            expect(abs(nuc - half) <= tol, f"||AB||_* = {nuc} != {half} for A {A.shape}, B {B.shape}")
        expect(nuc <= half + tol, f"||AB||_* = {nuc} > {half}")
        # "only if": a clearly unbalanced pair gives a strict inequality (the gap grows like the imbalance²)
        imbalance = np.linalg.norm(A.T @ A - B @ B.T)
        if imbalance > T["imbalance"] * max(1.0, half):
            expect(
                half - nuc > T["strict"] * max(1.0, half), f"equality without A^T A = B B^T (imbalance {imbalance:.2e})"
            )
        # balanced factorisation of X = AB: A' = U√S R, B' = Rᵀ√S Vᵀ (R orthogonal) has A'ᵀA' = B'B'ᵀ
        X = A @ B
        Uu, s, Vt = np.linalg.svd(X, full_matrices=False)
        R = np.linalg.qr(rng.normal(size=(len(s), len(s))))[0]
        A2 = Uu * np.sqrt(s) @ R
        B2 = R.T @ (np.sqrt(s)[:, None] * Vt)
        expect(np.allclose(A2.T @ A2, B2 @ B2.T, rtol=0.0, atol=T["rel"] * max(1.0, s.max(initial=0.0))), "balance")
        half2 = 0.5 * (np.sum(A2 * A2) + np.sum(B2 * B2))
        expect(abs(np.linalg.norm(A2 @ B2, "nuc") - half2) <= tol, "equality fails for a balanced pair")
        # unbalancing by t ≠ 1 keeps AB and makes the inequality strict when X ≠ 0
        if s.max(initial=0.0) > T["nonzero"] and abs(t - 1) > T["imbalance"]:
            half3 = 0.5 * (t * t * np.sum(A2 * A2) + np.sum(B2 * B2) / (t * t))
            expect(half3 > half2 * (1 + T["strict"]), "inequality not strict for an unbalanced pair")

    _run(prop)
    return "inequality, equality at balanced pairs, strictness off balance (Hypothesis)"


def _g_theoremD(task, x):
    """(49): g(x) = log(1 + Σ_r |S_r| e^{θ_r x/K}) with |S_r|, θ_r of Lemma B (full latent set)."""

    n_c, L, K = task.n_c, task.L, task.K
    r = np.arange(1, L + 1)
    S = np.array([comb(L, int(rr)) * (n_c - 1) ** int(rr) for rr in r], dtype=float)
    theta = n_c * r / ((n_c - 1) * L)
    return np.log1p(np.sum(S * np.exp(theta * x / K)))


@register(
    "thmD-lower-bound",
    "Theorem D (50)-(51): on N = {sum_k U_hat_k = 0}, R_0(W,U) >= g(-<U_hat, W Q^T Z>) with "
    "g(x) = log(1 + sum_r |S_r| e^(theta_r x/K)); equality at equimargin (type-I) points (rel. tol 1e-12)",
    "Hypothesis",
    "reversed inequality R_0 <= g(-<U_hat, W Q^T Z>)",
    tol=dict(rel=1e-12),
    library=("unregularized_risk",),
    oracle="proofs_check._risk enumeration of R_0; g of (49) from exact sphere sizes",
)
def check_theorem_D(mutant: bool = False, quick: bool = False) -> str:

    tasks = {(3, 2, 2, "zipf"): None, (2, 2, 3, "uniform"): None}
    for key in tasks:
        t = Task.full(key[0], key[1], key[2], mu=key[3])
        tasks[key] = (t, _risk.enumerate_sentences(t))

    given, st = _hyp()
    T = tolerances("thmD-lower-bound")

    @_settings(quick, 60)
    @given(st.sampled_from(sorted(tasks)), st.integers(1, 4), _seeds(st), st.floats(0.05, 3.0))
    def prop(key, d, seed, scale):
        task, S = tasks[key]
        rng = np.random.default_rng(seed)
        W = scale * rng.normal(size=(d, task.n_w))
        Uh = scale * rng.normal(size=(d, task.K * task.L))
        Uh3 = Uh.reshape(d, task.K, task.L)
        Uh = (Uh3 - Uh3.mean(axis=1, keepdims=True)).reshape(d, -1)  # project onto N
        R0 = _risk.f_value(S, Uh.T @ W)
        x = -float(np.sum(Uh * (W @ task.Q.T @ task.Z_onehot)))
        g = _g_theoremD(task, x)
        tol = T["rel"] * max(1.0, abs(g))
        R0_lib = fctheory.unregularized_risk(task, W, _risk.U_from_hat(Uh, L=task.L))
        expect(abs(R0_lib - R0) <= tol, f"fctheory.unregularized_risk = {R0_lib!r} != enumerated {R0!r}")
        if mutant:
            expect(R0 <= g + tol, f"R_0 = {R0} > g = {g}")
        expect(R0 >= g - tol, f"R_0 = {R0} < g = {g} at a point of N")
        # equality on N ∩ E: the type-I point of the same scale
        F = fctheory.equiangular_frame(task.n_c, max(d, task.n_c - 1), seed=seed % 1000)
        W1, U1 = _risk.type1_point(task, scale, F.shape[0], F)
        Uh1 = fctheory.U_hat(U1, L=task.L)
        R1 = _risk.f_value(S, Uh1.T @ W1)
        g1 = _g_theoremD(task, -float(np.sum(Uh1 * (W1 @ task.Q.T @ task.Z_onehot))))
        expect(abs(R1 - g1) <= T["rel"] * max(1.0, g1), f"equality fails at a type-I point: {R1} vs {g1}")

    _run(prop)
    return "R_0 >= g on N, equality at type-I points (Hypothesis over tasks, d, scales)"


@register(
    "lemmaF-lemmaM-bounds",
    "Lemmas F and M: <U_hat, W P^T Z> <= c^2 s_c sqrt(K L n_w) when (||W||^2+||U_hat||^2)/2 = c^2 n_w, and "
    "<U_hat, V Q^T Z> <= c sqrt(d) K L when V has mean-zero columns of norm sqrt(d) and ||U_hat||^2 = c^2 KL; "
    "both attained on B_c^I, B_c^II (rel. tol 1e-12)",
    "Hypothesis",
    "bounds claimed with a factor 1/2 (c^2 s_c sqrt(KLn_w)/2, c sqrt(d) KL/2)",
    tol=dict(rel=1e-12),
    library=("type1_configuration", "type2_configuration"),
    oracle="random feasible points rescaled onto the constraint sets; the values in numpy",
)
def check_bilinear_bounds(mutant: bool = False, quick: bool = False) -> str:

    fac = 0.5 if mutant else 1.0
    rel = tolerances("lemmaF-lemmaM-bounds")["rel"]

    given, st = _hyp()

    @_settings(quick, 80)
    @given(
        st.sampled_from([(3, 2, 2), (2, 3, 3), (4, 1, 2)]),
        st.sampled_from(["uniform", "zipf"]),
        st.integers(0, 3),
        _seeds(st),
        st.floats(0.1, 3.0),
    )
    def prop(shape, mu, dd, seed, c):
        n_c, s_c, L = shape
        task = Task.full(n_c, s_c, L, mu=mu)
        K, n_w = task.K, task.n_w
        d = n_c + dd
        rng = np.random.default_rng(seed)
        P, Q, Z = task.P, task.Q, task.Z_onehot
        # Lemma F (P in place of Q): random point on the budget sphere, then the optimum
        W = rng.normal(size=(d, n_w))
        Uh = rng.normal(size=(d, K * L))
        sc = np.sqrt(2 * c * c * n_w / (np.sum(W * W) + np.sum(Uh * Uh)))
        bound_F = fac * c * c * s_c * np.sqrt(K * L * n_w)
        expect(np.sum(sc * Uh * (sc * W @ P.T @ Z)) <= bound_F * (1 + rel), "Lemma F bound exceeded")
        W1, U1 = fctheory.type1_configuration(task, d=d, c=c, seed=seed % 997)
        val = np.sum(_risk.U_hat(U1, L=L) * (W1 @ P.T @ Z))
        expect(abs(val - c * c * s_c * np.sqrt(K * L * n_w)) <= rel * val, "Claim A value not attained")
        expect(val <= bound_F * (1 + rel), f"Lemma F bound {bound_F} exceeded by the optimum {val}")
        # Lemma M: V columns mean zero, norm √d; ‖Û‖² = c² KL
        V = rng.normal(size=(d, n_w))
        V -= V.mean(axis=0)
        V *= np.sqrt(d) / np.linalg.norm(V, axis=0)
        Uh = rng.normal(size=(d, K * L))
        Uh *= c * np.sqrt(K * L) / np.linalg.norm(Uh)
        bound_M = fac * c * np.sqrt(d) * K * L
        expect(np.sum(Uh * (V @ Q.T @ Z)) <= bound_M * (1 + rel), "Lemma M bound exceeded")
        W2, U2 = fctheory.type2_configuration(task, d=d, c=c, seed=seed % 991)
        val2 = np.sum(_risk.U_hat(U2, L=L) * (W2 @ Q.T @ Z))  # W2 = φ(W2) = √d FP by default
        expect(abs(val2 - c * np.sqrt(d) * K * L) <= rel * val2, "Claim D value not attained")
        expect(val2 <= bound_M * (1 + rel), f"Lemma M bound {bound_M} exceeded by the optimum {val2}")

    _run(prop)
    return "bounds hold at random feasible points and are attained on B_c^I, B_c^II"
