"""Independent reference implementations for the oracle tests.

Nothing here imports fctheory's numerics: every function is written from the formulas of the
paper and the notes in /work/shared/theory/ (feature-collapse-derivations.md, the review,
deep-resnets and perturbation notes), by the most direct route available — mpmath at 50 digits,
plain enumeration with Python loops, explicit SVDs, finite differences. They are slow and
meant for tiny inputs only.

Conventions (docs/theory.md): word (α, β) has index α·s_c + β; W is d×n_w; U is K×(L·d) with
u_{k,ℓ} = U[k, ℓd:(ℓ+1)d]; Z is K×L (concepts of the latent variables); μ the word law.
"""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np

DPS = 50


def _wp():
    """At least DPS digits, never fewer than the caller's (mpmath.diff raises the precision)."""
    return mpmath.workdps(max(DPS, mpmath.mp.dps))


# ============================================================================ Theorem 1 / 3 in mpmath
def mp_G(s, n_c, L, K):
    """G(s) = log(1 − K/n_c^L + (K/n_c^L)(1 + (n_c−1)e^{−s})^L), as printed (mpf)."""
    n_c, L, K = mpmath.mpf(n_c), mpmath.mpf(L), mpmath.mpf(K)
    p = K / n_c**L
    return mpmath.log(1 - p + p * (1 + (n_c - 1) * mpmath.exp(-s)) ** L)


def mp_eta(n_c, n_w, L, K):
    n_c = mpmath.mpf(n_c)
    return n_c / (n_c - 1) / mpmath.sqrt(mpmath.mpf(n_w) * K * L)


def mp_eta_star(n_c, L, K, d):
    n_c = mpmath.mpf(n_c)
    return n_c / (n_c - 1) / mpmath.sqrt(mpmath.mpf(K) * L / d)


def mp_H(t, n_c, n_w, L, K, lam):
    """H(t) of Theorem 1 at DPS digits."""
    with _wp():
        t = mpmath.mpf(t)
        return mp_G(mp_eta(n_c, n_w, L, K) * t, n_c, L, K) + mpmath.mpf(lam) * t


def mp_H_star(t, n_c, L, K, d, lam):
    with _wp():
        t = mpmath.mpf(t)
        return mp_G(mp_eta_star(n_c, L, K, d) * t, n_c, L, K) + mpmath.mpf(lam) * t * t / 2


def mp_diff(f, t, n=1):
    """n-th derivative of f at t by mpmath.diff at DPS digits (t ≥ 0: one-sided at 0)."""
    with _wp():
        t = mpmath.mpf(t)
        if t == 0:
            return mpmath.diff(f, t, n, direction=1)
        return mpmath.diff(f, t, n)


def mp_lambda0(n_c, n_w, L, K):
    """λ₀ = √(LK/n_w)/(K + 1 − K/n_c^L) (Theorem 1), at DPS digits."""
    with _wp():
        n_c, n_w, L, K = (mpmath.mpf(v) for v in (n_c, n_w, L, K))
        return mpmath.sqrt(L * K / n_w) / (K + 1 - K / n_c**L)


def mp_argmin(fprime, hi0=1):
    """Root of an increasing fprime on [0, ∞) (0 when fprime(0) ≥ 0), by bisection+secant (findroot)."""
    with _wp():
        if fprime(mpmath.mpf(0)) >= 0:
            return mpmath.mpf(0)
        hi = mpmath.mpf(hi0)
        while fprime(hi) < 0:
            hi *= 2
        lo = mpmath.mpf(0)
        # plain bisection to 1e-45 relative: slow but free of any cleverness
        for _ in range(400):
            mid = (lo + hi) / 2
            if fprime(mid) < 0:
                lo = mid
            else:
                hi = mid
            if hi - lo <= mpmath.mpf(10) ** (-45) * hi:
                break
        return (lo + hi) / 2


def mp_tau(n_c, n_w, L, K, lam):
    """τ = argmin H by bisection on H′ (differentiated by hand from the printed H)."""
    with _wp():
        nc, nw, LL, KK, lm = (mpmath.mpf(v) for v in (n_c, n_w, L, K, lam))
        p = KK / nc**LL
        et = mp_eta(n_c, n_w, L, K)

        def Hp(t):
            u = (nc - 1) * mpmath.exp(-et * t)
            return lm - et * LL * p * u * (1 + u) ** (LL - 1) / (1 - p + p * (1 + u) ** LL)

        return mp_argmin(Hp, hi0=1 / et)


def mp_tau_star(n_c, L, K, d, lam):
    with _wp():
        nc, LL, KK, lm = (mpmath.mpf(v) for v in (n_c, L, K, lam))
        p = KK / nc**LL
        et = mp_eta_star(n_c, L, K, d)

        def Hp(t):
            u = (nc - 1) * mpmath.exp(-et * t)
            return lm * t - et * LL * p * u * (1 + u) ** (LL - 1) / (1 - p + p * (1 + u) ** LL)

        return mp_argmin(Hp, hi0=1 / et)


# ============================================================================ Theorem 2 in mpmath
def mp_lambda_max(mu, n_c, L):
    """λ_max of (9): √((L/n_c^{L+1}) Σ μ²)."""
    with _wp():
        s = mpmath.fsum(mpmath.mpf(float(m)) ** 2 for m in mu)
        return mpmath.sqrt(mpmath.mpf(L) / mpmath.mpf(n_c) ** (L + 1) * s)


def mp_residuals(mu, n_c, L, lam, c, r):
    """Relative residuals of (7) (max over β of |LHS/μ_β − 1|) and (8) at the given (c, r), at DPS digits."""
    with _wp():
        nc, LL, lm, c = mpmath.mpf(n_c), mpmath.mpf(L), mpmath.mpf(float(lam)), mpmath.mpf(float(c))
        kap = nc / (nc - 1)
        r = [mpmath.mpf(float(x)) for x in r]
        mu = [mpmath.mpf(float(m)) for m in mu]
        res7 = max(abs((lm / LL) * (rb / c) * (nc - 1 + mpmath.exp(kap * c * rb)) / m - 1) for rb, m in zip(r, mu))
        res8 = abs(mpmath.fsum((rb / c) ** 2 for rb in r) / (LL * nc ** (LL - 1)) - 1)
        return res7, res8


def mp_solve_type3(mu, n_c, L, lam, start):
    """Newton (mpmath.findroot) on (7)–(8) as printed from ``start`` = (c, r) (a float guess)."""
    with _wp():
        nc, LL, lm = mpmath.mpf(n_c), mpmath.mpf(L), mpmath.mpf(float(lam))
        kap = nc / (nc - 1)
        mu = [mpmath.mpf(float(m)) for m in mu]

        def eqs(*v):
            c, r = v[0], v[1:]
            out = [(lm / LL) * rb * (nc - 1 + mpmath.exp(kap * c * rb)) - m * c for rb, m in zip(r, mu)]
            out.append(mpmath.fsum(rb**2 for rb in r) - LL * nc ** (LL - 1) * c**2)
            return out

        c0, r0 = start
        sol = mpmath.findroot(
            eqs, [mpmath.mpf(float(c0))] + [mpmath.mpf(float(x)) for x in r0], tol=mpmath.mpf(10) ** (-40)
        )
        return sol[0], [sol[i] for i in range(1, len(mu) + 1)]


# ============================================================================ tasks, networks, enumeration
def word_probs(mu, s_c):
    if isinstance(mu, str):
        if mu == "uniform":
            return np.full(s_c, 1.0 / s_c)
        w = 1.0 / np.arange(1, s_c + 1)
        return w / w.sum()
    return np.asarray(mu, dtype=float)


def my_phi(W, eps=0.0):
    """Column-wise LayerNorm with the biased std (written out, complex-safe for complex steps)."""
    d = W.shape[0]
    out = np.empty_like(W)
    for j in range(W.shape[1]):
        v = W[:, j]
        m = sum(v) / d
        c = v - m
        var = sum(c * c) / d
        out[:, j] = c / np.sqrt(var + eps)
    return out


def phi_jacobian_cs(w, eps=0.0):
    """Jacobian of φ at one column w (d×d) by the complex step (exact to rounding)."""
    d = w.shape[0]
    J = np.empty((d, d))
    h = 1e-30
    for i in range(d):
        wc = w.astype(complex)
        wc[i] += 1j * h
        J[:, i] = my_phi(wc[:, None], eps)[:, 0].imag / h
    return J


def sentences_of(Z_row, s_c, mu):
    """All (word indices, probability) of the sentences of one latent variable, by itertools."""
    L = len(Z_row)
    for betas in itertools.product(range(s_c), repeat=L):
        x = [int(Z_row[l]) * s_c + b for l, b in enumerate(betas)]
        p = 1.0
        for b in betas:
            p *= mu[b]
        yield x, p


def my_scores(V, U, x, K, L, d):
    """y_j = Σ_ℓ ⟨u_{j,ℓ}, v_{x_ℓ}⟩ by explicit loops."""
    y = np.zeros(K)
    for j in range(K):
        for l in range(L):
            y[j] += float(np.dot(U[j, l * d : (l + 1) * d], V[:, x[l]]))
    return y


def _softplus(t):
    return t + math.log1p(math.exp(-t)) if t > 0 else math.log1p(math.exp(t))


def my_ce_and_dy(y, k):
    """CE(y, k) = softplus(logsumexp_{j≠k}(y_j − y_k)) and ∂CE/∂y = p − e_k, both stable."""
    K = len(y)
    if K == 1:
        return 0.0, np.zeros(1)
    z = [y[j] - y[k] for j in range(K) if j != k]
    mx = max(z)
    t = mx + math.log(math.fsum(math.exp(v - mx) for v in z))
    ce = _softplus(t)
    g = np.zeros(K)
    for j in range(K):
        if j != k:
            g[j] = math.exp(y[j] - y[k] - ce)  # p_j = e^{y_j − y_k}/(1 + Σ) = e^{y_j−y_k−CE}
    g[k] = -math.exp(t - ce)  # p_k − 1 = −σ(t)
    return ce, g


def my_risk(Z, s_c, mu, W, U, lam, layernorm=False, eps=0.0, grad=False):
    """Exact R (5) / R* (10) and (R0, penalty, dW, dU) by plain enumeration of every sentence.

    Gradient: ∂CE/∂y = p − e_k through y_j = Σ_ℓ⟨u_{j,ℓ}, v_{x_ℓ}⟩, then through φ with the
    complex-step Jacobian for h*.
    """
    Z = np.asarray(Z)
    K, L = Z.shape
    d = W.shape[0]
    mu = np.asarray(mu, float)
    V = my_phi(W, eps) if layernorm else W
    terms = []
    dU = np.zeros_like(U)
    dV = np.zeros_like(V)
    for k in range(K):
        for x, p in sentences_of(Z[k], s_c, mu):
            y = my_scores(V, U, x, K, L, d)
            ce, g = my_ce_and_dy(y, k)
            terms.append(p * ce)
            if grad:
                for j in range(K):
                    if g[j] == 0.0:
                        continue
                    for l in range(L):
                        dU[j, l * d : (l + 1) * d] += p * g[j] * V[:, x[l]]
                        dV[:, x[l]] += p * g[j] * U[j, l * d : (l + 1) * d]
    R0 = math.fsum(terms) / K
    pen = 0.5 * lam * (float(np.sum(U * U)) + (0.0 if layernorm else float(np.sum(W * W))))
    out = dict(R=R0 + pen, R0=R0, penalty=pen)
    if grad:
        dU /= K
        dV /= K
        if layernorm:
            dW = np.empty_like(W)
            for c in range(W.shape[1]):
                dW[:, c] = phi_jacobian_cs(W[:, c], eps).T @ dV[:, c]
        else:
            dW = dV + lam * W
        out["grad_W"] = dW
        out["grad_U"] = dU + lam * U
    return out


def my_risk_mp(Z, s_c, mu, W, U, layernorm=False, dps=40):
    """R0 in mpmath (for regimes where every CE is ~1e-100: the float answer must keep its digits)."""
    Z = np.asarray(Z)
    K, L = Z.shape
    d = W.shape[0]
    V = my_phi(W) if layernorm else W
    with mpmath.workdps(dps):
        tot = mpmath.mpf(0)
        for k in range(K):
            for x, p in sentences_of(Z[k], s_c, mu):
                y = [
                    mpmath.fsum(
                        mpmath.mpf(float(U[j, l * d + i])) * mpmath.mpf(float(V[i, x[l]]))
                        for l in range(L)
                        for i in range(d)
                    )
                    for j in range(K)
                ]
                tot += mpmath.mpf(p) * mpmath.log1p(mpmath.fsum(mpmath.exp(y[j] - y[k]) for j in range(K) if j != k))
        return tot / K


def central_fd(f, x, h):
    """Central difference of a scalar function along the whole array: gradient array (slow)."""
    g = np.zeros_like(x)
    it = np.nditer(x, flags=["multi_index"])
    for _ in it:
        i = it.multi_index
        xp, xm = x.copy(), x.copy()
        xp[i] += h
        xm[i] -= h
        g[i] = (f(xp) - f(xm)) / (2 * h)
    return g


def rel(a, b):
    a, b = np.ravel(np.asarray(a, float)), np.ravel(np.asarray(b, float))
    nb = np.linalg.norm(b)
    return np.linalg.norm(a - b) / nb if nb > 0 else np.linalg.norm(a)


# ============================================================================ configurations, by hand
def simplex_frame(n_c, d, mean_zero=False):
    """An equiangular frame built by hand: f_α = √κ·(e_α − 1/n_c) in R^{n_c}, rotated into R^d.

    Columns have unit norm and ⟨f_α, f_β⟩ = −1/(n_c−1); sum zero. mean_zero=True also makes
    1_dᵀf_α = 0 (needs d ≥ n_c).
    """
    kap = n_c / (n_c - 1)
    E = np.sqrt(kap) * (np.eye(n_c) - 1.0 / n_c)  # n_c × n_c, columns are the frame
    # orthonormal basis of the (n_c−1)-dim span, via SVD
    Uu, s, _ = np.linalg.svd(E)
    B = Uu[:, : n_c - 1]
    coords = B.T @ E  # (n_c−1) × n_c
    if mean_zero:
        if d < n_c:
            raise ValueError("mean-zero frame needs d >= n_c")
        # orthonormal basis of 1^⊥ in R^d
        M = np.eye(d) - 1.0 / d
        Q, _ = np.linalg.qr(M[:, : d - 1])
        return Q[:, : n_c - 1] @ coords
    F = np.zeros((d, n_c))
    F[: n_c - 1] = coords
    return F


def type3_weights(Z, n_c, s_c, L, d, c, r, F=None):
    """(W, U) with w_(α,β) = r_β f_α, u_{k,ℓ} = c f_{z_kℓ} (Definition 3; Definition 1 when r is constant)."""
    F = simplex_frame(n_c, d) if F is None else F
    Z = np.asarray(Z)
    K = Z.shape[0]
    W = np.zeros((d, n_c * s_c))
    for a in range(n_c):
        for b in range(s_c):
            W[:, a * s_c + b] = r[b] * F[:, a]
    U = np.zeros((K, L * d))
    for k in range(K):
        for l in range(L):
            U[k, l * d : (l + 1) * d] = c * F[:, Z[k, l]]
    return W, U


def full_Z(n_c, L):
    return np.array(list(itertools.product(range(n_c), repeat=L)), dtype=np.int64).reshape(-1, L)


def centred_singular_values(M):
    """Singular values of the row-centred sample matrix (samples × features), like sklearn PCA."""
    M = np.asarray(M, float)
    return np.linalg.svd(M - M.mean(axis=0), compute_uv=False)


# ============================================================================ UFM objectives, by hand
def ufm_ce_objective(W, H, b, n, lam_W, lam_H):
    """(1/N)Σ CE(W h_i + b, y_i) + λ_W/2‖W‖² + λ_H/2‖H‖² with H m×N class-major (review eq. (21))."""
    N = H.shape[1]
    Z = W @ H + (0 if b is None else np.asarray(b)[:, None])
    tot = []
    for i in range(N):
        tot.append(my_ce_and_dy(Z[:, i], i // n)[0])  # softplus form: exact even for CE ~ 1e-10
    return math.fsum(tot) / N + lam_W / 2 * float(np.sum(W * W)) + lam_H / 2 * float(np.sum(H * H))


def ufm_mse_objective(W, H, b, n, lam_W, lam_H):
    K = W.shape[0]
    N = H.shape[1]
    Y = np.kron(np.eye(K), np.ones((1, n)))
    R = W @ H + (0 if b is None else np.asarray(b)[:, None]) - Y
    return float(np.sum(R * R)) / (2 * N) + lam_W / 2 * float(np.sum(W * W)) + lam_H / 2 * float(np.sum(H * H))


def factor_gram(G, m):
    """A K×m matrix A with A Aᵀ = G (PSD), via the eigen-decomposition (m ≥ rank G)."""
    G = 0.5 * (G + G.T)
    ev, Q = np.linalg.eigh(G)
    ev = np.clip(ev, 0, None)
    A = Q * np.sqrt(ev)[None, :]  # K × K
    A = A[:, np.argsort(-ev)]
    out = np.zeros((G.shape[0], m))
    k = min(m, G.shape[0])
    out[:, :k] = A[:, :k]
    return out


# ============================================================================ appendix B: assumptions, by brute force
def _dist(a, b):
    return sum(1 for x, y in zip(a, b) if x != y)


def bf_assumption_A(Z, n_c):
    """(35) by plain loops and Fractions: (counts (K, L+1, L, n_c) incl. r = 0, violations, integral).

    violations are tuples (k, r, ℓ, α, count, expected) in lexicographic order.
    """
    from fractions import Fraction

    Z = [tuple(int(v) for v in row) for row in np.asarray(Z)]
    K, L = len(Z), len(Z[0])
    N = n_c**L
    counts = np.zeros((K, L + 1, L, n_c), dtype=np.int64)
    for k in range(K):
        for j in range(K):
            r = _dist(Z[j], Z[k])
            for l in range(L):
                counts[k, r, l, Z[j][l]] += 1
    viol, integral = [], True
    for r in range(1, L + 1):
        e_same = Fraction(K * math.comb(L - 1, r) * (n_c - 1) ** r, N)
        e_diff = Fraction(K * math.comb(L - 1, r - 1) * (n_c - 1) ** (r - 1), N)
        integral = integral and e_same.denominator == 1 and e_diff.denominator == 1
    for k in range(K):
        for r in range(1, L + 1):
            for l in range(L):
                for a in range(n_c):
                    e = (
                        Fraction(K * math.comb(L - 1, r) * (n_c - 1) ** r, N)
                        if Z[k][l] == a
                        else Fraction(K * math.comb(L - 1, r - 1) * (n_c - 1) ** (r - 1), N)
                    )
                    if counts[k, r, l, a] != e:
                        viol.append((k, r, l, a, int(counts[k, r, l, a]), e))
    return counts, viol, integral


def _onehot_mat(z, n_c):
    """Z_k as the n_c×L 0/1 matrix (column ℓ = e_{z_kℓ}), in sympy."""
    import sympy as sp

    M = sp.zeros(n_c, len(z))
    for l, a in enumerate(z):
        M[int(a), l] = 1
    return M


def bf_lemma_B(Z, n_c):
    """Lemma B (i)–(iii) by loops and sympy: dict(S, i, colsum, ii, iii, theta, A).

    (iii) is solved as a linear system in the n_c·L + 1 unknowns (θ, A) over all k (sympy linsolve).
    """
    import sympy as sp

    Zl = [tuple(int(v) for v in row) for row in np.asarray(Z)]
    K, L = len(Zl), len(Zl[0])
    S = np.array([[sum(1 for j in range(K) if _dist(Zl[j], Zl[k]) == r) for r in range(L + 1)] for k in range(K)])
    i_ok = all(len(set(S[:, r])) == 1 for r in range(1, L + 1))
    Ms = [_onehot_mat(z, n_c) for z in Zl]
    tot = sp.zeros(n_c, L)
    ZZ = sp.zeros(n_c, n_c)
    for M in Ms:
        tot += M
        ZZ += M * M.T
    colsum = np.array(tot.tolist(), dtype=np.int64)
    ii_ok = all(tot[a, l] * n_c == K for a in range(n_c) for l in range(L)) and ZZ * n_c == K * L * sp.eye(n_c)
    thetas, As, iii_ok = [], [], True
    th = sp.Symbol("theta")
    Asym = sp.Matrix(n_c, L, lambda a, l: sp.Symbol(f"A_{a}_{l}"))
    for r in range(1, L + 1):
        sets = [[j for j in range(K) if _dist(Zl[j], Zl[k]) == r] for k in range(K)]
        if not any(sets):
            thetas.append(None)
            As.append(None)
            continue
        if len({len(s) for s in sets}) > 1:
            iii_ok = False
            thetas.append(None)
            As.append(None)
            continue
        eqs = []
        for k in range(K):
            mean = sum((Ms[j] for j in sets[k]), sp.zeros(n_c, L)) / len(sets[k])
            E = Ms[k] - mean - th * Ms[k] - Asym
            eqs.extend(list(E))
        sol = sp.linsolve(eqs, [th] + list(Asym))
        if sol == sp.EmptySet:
            iii_ok = False
            thetas.append(None)
            As.append(None)
            continue
        (vals,) = list(sol)
        if vals[0].free_symbols:  # θ undetermined
            thetas.append(None)
            As.append(None)
            continue
        t = sp.Rational(vals[0])
        if t <= 0:
            iii_ok = False
        thetas.append(t)
        As.append([[sp.Rational(vals[1 + a * L + l]) for l in range(L)] for a in range(n_c)])
    return dict(S=S, i=i_ok, colsum=colsum, ii=bool(ii_ok), iii=iii_ok, theta=thetas, A=As)


def bf_assumption_B_equations(Z, n_c):
    """The equations (44) as an exact sympy matrix over symmetric A (entries a_{αβ}, α ≤ β, row-major),
    one row ⟨A, Γ_p − Γ_{p₀}⟩ per ordered pair p ≠ p₀ of each distance class; and that row count.
    Γ^{(j,k)} = Z_j(Z_j − Z_k)ᵀ with Z_j the n_c×L one-hot matrix."""
    import sympy as sp

    Zl = [tuple(int(v) for v in row) for row in np.asarray(Z)]
    K, L = len(Zl), len(Zl[0])
    idx = [(a, b) for a in range(n_c) for b in range(a, n_c)]
    Ms = [_onehot_mat(z, n_c) for z in Zl]

    def vec(G):
        return [G[a, b] if a == b else G[a, b] + G[b, a] for a, b in idx]

    rows = []
    for r in range(1, L + 1):
        pairs = [(j, k) for j in range(K) for k in range(K) if _dist(Zl[j], Zl[k]) == r]
        if not pairs:
            continue
        g0 = vec(Ms[pairs[0][0]] * (Ms[pairs[0][0]] - Ms[pairs[0][1]]).T)
        for j, k in pairs[1:]:
            g = vec(Ms[j] * (Ms[j] - Ms[k]).T)
            rows.append([x - y for x, y in zip(g, g0)])
    return (sp.Matrix(rows) if rows else sp.zeros(0, len(idx))), len(rows), idx


def sym_from_vec(v, idx, n_c):
    A = np.zeros((n_c, n_c))
    for t, (a, b) in enumerate(idx):
        A[a, b] = A[b, a] = float(v[t])
    return A


def vec_from_sym(A, idx):
    return np.array([A[a, b] for a, b in idx], dtype=float)


def mp_min_eig(A, dps=30):
    """Smallest eigenvalue of a symmetric matrix by mpmath's Jacobi (eigsy) at ``dps`` digits."""
    with mpmath.workdps(dps):
        E, _ = mpmath.eigsy(mpmath.matrix(np.asarray(A, float).tolist()))
        return float(min(E[i] for i in range(E.rows)))


def dist_to_span(A, mats):
    """Frobenius distance of A to span(mats), by least squares on the flattened matrices."""
    M = np.stack([np.ravel(m) for m in mats], 1)
    coef, *_ = np.linalg.lstsq(M, np.ravel(A), rcond=None)
    return float(np.linalg.norm(np.ravel(A) - M @ coef))
