"""Checks of the assumption checkers against the paper (Lemma C, Assumption A/B on random sets) and
of the existence search (the question the paper leaves open)."""

from __future__ import annotations

from fractions import Fraction
from math import comb

import numpy as np

from fctheory import Task
from fctheory import assumptions as asm

from .registry import expect, register, tolerances

_FULL = [(2, 2), (2, 3), (3, 2), (3, 3), (4, 2)]


@register(
    "assumptionB-lemmaC",
    "Lemma C: for K = n_c^L (Z = C^L) Assumption B holds: the solutions of (44) over symmetric matrices are "
    "exactly A = {aI + b11^T} (exact rational null space)",
    "exact enumeration",
    "A taken as span{I} only (so 11^T would be a solution outside A)",
    library=("check_assumption_B",),
    oracle="the dimension of the solution space of (44) is 2 (Lemma C), exact rational arithmetic",
)
def check_lemma_C(mutant: bool = False, quick: bool = False) -> str:

    out = []
    for n_c, L in _FULL[:4] if quick else _FULL:
        task = Task.full(n_c, 1, L)
        res = asm.check_assumption_B(task, A_space=[np.eye(n_c)] if mutant else None, sdp=not mutant)
        expect(res.holds, f"Assumption B fails on the full set ({n_c},{L}): solution space dim {res.dim}")
        expect(res.dim == 2, f"solution space of (44) has dim {res.dim} != 2 on ({n_c},{L})")
        out.append(f"({n_c},{L}): {res.n_equations} eqs")
    return "dim = 2 on " + ", ".join(out)


def _count_direct(Z, k, r, ell, alpha):
    """|{j : dist(z_j, z_k) = r and z_{j,ℓ} = α}| by a plain loop (independent of the checker)."""
    return sum(1 for z in Z if int(np.sum(z != Z[k])) == r and z[ell] == alpha)


@register(
    "assumptionA-random",
    "Assumption A (35) fails for random latent sets with K < n_c^L (integrality: the r = 1, z_kl != alpha count "
    "must equal K/n_c^L); every reported (k, r, l, alpha) is re-counted by a direct loop",
    "exact enumeration",
    "claims random latent sets satisfy Assumption A",
    library=("check_assumption_A",),
    oracle="every (k, r, l, alpha) re-counted by a direct Python loop, right-hand sides as Fractions",
)
def check_assumption_A_random(mutant: bool = False, quick: bool = False) -> str:

    n_viol = 0
    cases = [(2, 3, 5, 0), (3, 2, 4, 1), (3, 3, 10, 2)] + (
        [] if quick else [(3, 3, 20, 3), (2, 4, 12, 4), (4, 2, 7, 5)]
    )
    for n_c, L, K, seed in cases:
        task = Task.random(n_c, 1, L, K, seed=seed)
        res = asm.check_assumption_A(task)
        if mutant:
            expect(res.holds, f"Assumption A fails on {task} ({len(res.violations)} violations)")
            continue
        expect(not res.holds and not res.integral, f"Assumption A reported to hold on {task}")
        N = n_c**L
        # every (k, r, ℓ, α) with its direct count; violations reported must be exactly the mismatches
        reported = {(v.k, v.r, v.ell, v.alpha) for v in res.violations}
        for k in range(K):
            for r in range(1, L + 1):
                for ell in range(L):
                    for alpha in range(n_c):
                        cnt = _count_direct(task.Z, k, r, ell, alpha)
                        same = task.Z[k, ell] == alpha
                        e = Fraction(
                            K
                            * (comb(L - 1, r) * (n_c - 1) ** r if same else comb(L - 1, r - 1) * (n_c - 1) ** (r - 1)),
                            N,
                        )
                        expect(
                            (cnt != e) == ((k, r, ell, alpha) in reported), f"checker disagrees at {(k, r, ell, alpha)}"
                        )
        n_viol += len(res.violations)
    return f"{len(cases)} random sets, {n_viol} violations, all confirmed by direct counting"


def _gamma_direct(Z, n_c, j, k):
    """Γ^{(j,k)} = Z_j (Z_j − Z_k)ᵀ from the one-hot matrices (independent of the checker)."""
    L = Z.shape[1]
    Zj = np.zeros((n_c, L))
    Zk = np.zeros((n_c, L))
    Zj[Z[j], np.arange(L)] = 1
    Zk[Z[k], np.arange(L)] = 1
    return Zj @ (Zj - Zk).T


@register(
    "assumptionB-certificates",
    "Assumption B on random latent sets with small K: when (44) has solutions outside A the SDP certificate is a "
    "PSD matrix (min eigenvalue > 1e-6) solving every equation of (44) (residual <= 1e-10, equations rebuilt "
    "directly) at distance > 1e-3 from A",
    "SDP/convex",
    "(44) without its distance condition: <A, Gamma^(j,k)> equal for all pairs j != k",
    tol=dict(min_eig=1e-6, distance=1e-3, residual=1e-10),
    library=("check_assumption_B",),
    oracle="the equations (44) rebuilt directly from the one-hot matrices Gamma^(j,k) = Z_j (Z_j - Z_k)^T",
)
def check_assumption_B_cert(mutant: bool = False, quick: bool = False) -> str:

    T = tolerances("assumptionB-certificates")
    n_fail = n_hold = 0
    cases = (
        [(3, 3, 3, s) for s in range(3)]
        + [(3, 2, 3, 0), (4, 2, 4, 0)]
        + ([] if quick else [(3, 3, 5, s) for s in range(3)] + [(3, 3, 12, 0)])
    )
    for n_c, L, K, seed in cases:
        task = Task.random(n_c, 1, L, K, seed=seed)
        res = asm.check_assumption_B(task)
        if res.holds:
            n_hold += 1
            expect(res.dim == 2, "holds but dim != 2")
            continue
        n_fail += 1
        A = res.certificate
        expect(res.dim > 2, "fails with dim 2")
        expect(res.certificate_min_eig > T["min_eig"], f"certificate not PSD: min eig {res.certificate_min_eig}")
        expect(res.certificate_distance > T["distance"], "certificate lies in A")
        D = task.hamming()
        worst = 0.0
        # (44) groups the pairs by distance; the mutant drops that condition (one class for all r ≥ 1)
        classes = [np.argwhere(D >= 1)] if mutant else [np.argwhere(D == r) for r in range(1, L + 1)]
        for pairs in classes:
            if len(pairs) < 2:
                continue
            vals = [float(np.sum(A * _gamma_direct(task.Z, n_c, j, k))) for j, k in pairs]
            worst = max(worst, max(vals) - min(vals))
        expect(worst <= T["residual"], f"certificate violates (44): spread {worst:.2e} on {task}")
    return f"{n_fail} sets with verified certificates, {n_hold} satisfying Assumption B"


@register(
    "existence-assumptionA",
    "Open question (appendix B): no latent set of K distinct variables with 1 <= K < n_c^L satisfies "
    "Assumption A exactly; for K = n_c^L only Z = C^L does (exhaustive search, agrees with the integrality argument)",
    "exact enumeration",
    "(35) with C(L-1,r)(n_c-1)^(r+1) in the z_kl = alpha case",
    library=("search_assumption_A", "check_assumption_A"),
    oracle="the integrality argument (search_assumption_A(method='integrality')) and the count of full sets",
)
def check_existence_A(mutant: bool = False, quick: bool = False) -> str:

    out = []
    for n_c, L in [(2, 2), (2, 3), (3, 2)] + ([] if quick else [(2, 4), (4, 2)]):
        N = n_c**L
        if mutant:

            def bad(K, n, Lx, r, same):
                if same:
                    return Fraction(K * comb(Lx - 1, r) * (n - 1) ** (r + 1), n**Lx)
                return Fraction(K * comb(Lx - 1, r - 1) * (n - 1) ** (r - 1), n**Lx)

            full = asm.all_latent(n_c, L)
            expect(
                asm.check_assumption_A(full, n_c=n_c, expected=bad).holds, f"full set ({n_c},{L}) fails the statement"
            )
            continue
        ex = asm.search_assumption_A(n_c=n_c, L=L)
        integ = asm.search_assumption_A(n_c=n_c, L=L, method="integrality")
        expect(ex.sizes() == [], f"sets with K < n_c^L satisfying A found for ({n_c},{L}): {ex.sizes()}")
        expect(ex.counts[N] == 1, f"{ex.counts[N]} sets of size n_c^L satisfy A for ({n_c},{L})")
        expect(ex.counts == integ.counts, "exhaustive search disagrees with the integrality argument")
        out.append(f"({n_c},{L}): {ex.n_sets} balanced subsets")
    return "none with K < n_c^L; " + ", ".join(out)


@register(
    "lemmaB-weaker-than-A",
    "Appendix B ('we will only rely on these three properties'): Lemma B (i)-(iii) does not imply Assumption A — "
    "exhaustive search finds latent sets with K < n_c^L satisfying (i)-(iii) (e.g. the repetition code "
    "{0...0, 1...1}), each violating (35)",
    "exact enumeration",
    "claims every latent set satisfying Lemma B satisfies Assumption A",
    library=("search_lemma_B", "check_assumption_A"),
    oracle="exhaustive search over balanced subsets; (35) checked on every set found",
)
def check_lemma_B_weaker(mutant: bool = False, quick: bool = False) -> str:

    found = {}
    for n_c, L in [(2, 2), (2, 3), (3, 2)] + ([] if quick else [(2, 4), (4, 2)]):
        res = asm.search_lemma_B(n_c=n_c, L=L)
        expect(res.sizes(), f"no Lemma-B set with K < n_c^L for ({n_c},{L})")
        for K in res.sizes():
            Zs = res.examples[K]
            a = asm.check_assumption_A(Zs, n_c=n_c)
            if mutant:
                expect(a.holds, f"Lemma-B set {Zs.tolist()} violates Assumption A")
            expect(not a.holds, "a K < n_c^L set satisfies A")
        found[(n_c, L)] = res.sizes()
    return "K < n_c^L with Lemma-B sets: " + ", ".join(f"{k}: {v}" for k, v in found.items())


@register(
    "lemmaB-iii-forced",
    "Lemma B(iii) (with (i)-(ii)) forces theta_r = n_c r/((n_c-1)L) and A_r = -r/((n_c-1)L) 11^T for every r "
    "with S_r non-empty (sum (iii) over k, then pair with Z_k), so g of (49) only depends on the sphere sizes "
    "|S_r|: checked exactly on every Lemma-B latent set with K < n_c^L found by the exhaustive search",
    "exact enumeration",
    "theta_r claimed as r/L on those sets",
    library=("lemma_B_properties", "search_lemma_B"),
    oracle="exact rationals theta_r = n_c r/((n_c-1)L), A_r = -r/((n_c-1)L) 11^T (fractions.Fraction)",
)
def check_lemma_B_forced(mutant: bool = False, quick: bool = False) -> str:

    n_sets = 0
    for n_c, L in [(2, 2), (2, 3), (3, 2)] + ([] if quick else [(2, 4), (4, 2)]):
        allz = asm.all_latent(n_c, L)
        for K in asm.search_lemma_B(n_c=n_c, L=L).sizes():
            for sub in asm.subsets_balanced(n_c, L, K):
                res = asm.lemma_B_properties(allz[list(sub)], n_c=n_c)
                if not res.holds:
                    continue
                n_sets += 1
                for r in range(1, L + 1):
                    if res.theta[r - 1] is None:
                        expect(res.S_r[0, r] == 0, "theta undetermined on a non-empty sphere")
                        continue
                    claim = Fraction(r, L) if mutant else Fraction(n_c * r, (n_c - 1) * L)
                    expect(
                        res.theta[r - 1] == claim,
                        f"theta_{r} = {res.theta[r - 1]} != {claim} on {allz[list(sub)].tolist()}",
                    )
                    a = Fraction(-r, (n_c - 1) * L)
                    expect(all(v == a for row in res.A[r - 1] for v in row), f"A_{r} != {a} 11^T")
    return f"{n_sets} Lemma-B sets with K < n_c^L: theta_r = kappa r/L and A_r = -r/((n_c-1)L)11^T exactly"
