"""Oracles for every public number of fctheory.ufm.

For each closed form the optimum is *built* from the reported Grams (factored here), its
objective is evaluated by the hand-written objectives of tests/oracle/oracles.py and compared with
``value``; the point is checked stationary by central differences; norms are compared with the
traces of the reported Grams; the scalar equations are re-solved in mpmath. The perturbation
paper's spectra are compared with the SVD of the F blocks assembled from a finite-difference
Hessian of a hand-written objective (2).

Checklist (field -> test)
-------------------------
UFMOptimum.value, W_norm_sq, H_norm_sq, W_gram, means_gram, bias, threshold, trivial, closed_form,
extras (q, Kq, logit_gap, rho, h_over_w, s, alpha_sq, beta_sq, margin, h_star, z, t, formula_value, a):
  ce / ce+bias                 -> test_ce_optimum_fields_equal_built_point[...], test_ce_mse_trivial_branch
  mse / mse+bias               -> test_mse_optimum_fields_equal_built_point[...], test_ce_mse_trivial_branch
  max_margin                   -> test_max_margin_fields_equal_built_point
  norm_constrained_ce          -> test_norm_constrained_ce_fields_equal_built_point
  output_ball                  -> test_output_ball_fields_equal_built_point
  layernorm_ce                 -> test_layernorm_ce_fields_equal_built_point_and_mpmath_root
  layernorm_mse (+bias)        -> test_layernorm_mse_fields_equal_built_point[...]
NumericalOptimum.value, grad_norm, values -> test_numerical_optimum_value_is_objective_at_its_point
CollapsedMinimizer.value, c, rho, sigma_W_sq, W, H, R, trivial -> test_collapsed_minimizer_fields
optimal_W, central_path_loss (closed/direct) -> test_optimal_W_and_central_path_loss_equal_hand_formulas
FirstOrderResponse.F_H, F_W, G, kind; BlockSpectra (all fields) -> test_first_order_response_and_block_spectra_equal_fd_hessian
"""

import math

import mpmath
import numpy as np
import pytest

from tests.oracle import oracles as O
from fctheory import ufm
from fctheory.ufm import perturbation as P


def _E(K):
    return np.eye(K) - np.ones((K, K)) / K


def _ratio_to(G, T):
    """The scalar a with G = a·T (asserting proportionality to 1e-13)."""
    a = float(np.sum(G * T) / np.sum(T * T))
    assert np.abs(G - a * T).max() <= 1e-13 * max(1.0, abs(a))
    return a


def _fd_grad(f, x, h=1e-6):
    return O.central_fd(f, x, h)


def _build_ce_point(opt, K, n, m):
    w = _ratio_to(opt.W_gram, _E(K))
    hh = _ratio_to(opt.means_gram, _E(K))
    A = O.factor_gram(_E(K), m)  # K × m, A Aᵀ = E_K
    W = math.sqrt(w) * A
    H = np.repeat((math.sqrt(hh) * A).T, n, axis=1)  # class means h_k = √hh·a_k, n copies
    return W, H


@pytest.mark.parametrize(
    "K,n,lw,lh,bias",
    [(3, 2, 1e-2, 2e-2, False), (4, 3, 1e-3, 5e-3, True), (2, 1, 0.1, 0.2, False), (5, 2, 1e-6, 1e-6, False)],
)
def test_ce_optimum_fields_equal_built_point(K, n, lw, lh, bias):
    opt = ufm.ce(K=K, n_spl=n, lam_W=lw, lam_H=lh, bias=bias)
    m = K
    W, H = _build_ce_point(opt, K, n, m)
    b = np.zeros(K) if bias else None
    f = lambda W_, H_: O.ufm_ce_objective(W_, H_, b, n, lw, lh)  # noqa: E731
    assert abs(opt.value - f(W, H)) <= 1e-12 * opt.value
    assert abs(opt.W_norm_sq - np.trace(opt.W_gram)) <= 1e-13 * opt.W_norm_sq
    assert abs(opt.H_norm_sq - n * np.trace(opt.means_gram)) <= 1e-13 * opt.H_norm_sq
    assert abs(opt.H_norm_sq - np.sum(H * H)) <= 1e-12 * opt.H_norm_sq
    # stationary in (W, H): the built point is a critical point of the hand objective
    gW = _fd_grad(lambda X: f(X, H), W)
    gH = _fd_grad(lambda X: f(W, X), H)
    assert math.sqrt(np.sum(gW**2) + np.sum(gH**2)) <= 1e-7
    # mpmath: q, the logit gap, ρ from the printed formulas
    with mpmath.workdps(40):
        q = mpmath.sqrt(mpmath.mpf(n) * lw * lh)
        gap = mpmath.log(1 / q - (K - 1))
        rho = (K - 1) * mpmath.sqrt(n * mpmath.mpf(lh) / lw) * gap
    assert abs(opt.extras["q"] - float(q)) <= 3e-16 * 8 * float(q) and abs(
        opt.extras["Kq"] - K * float(q)
    ) <= 3e-15 * K * float(q)
    assert abs(opt.extras["logit_gap"] - float(gap)) <= 1e-13 * float(gap)
    assert abs(opt.extras["rho"] - float(rho)) <= 1e-13 * float(rho) and opt.extras["rho"] == opt.W_norm_sq
    logits = W @ H[:, ::n]
    assert abs((logits[0, 0] - logits[1, 0]) - float(gap)) <= 1e-12 * float(gap)
    assert abs(opt.extras["h_over_w"] - math.sqrt(lw / (n * lh))) <= 1e-15
    assert opt.trivial is False and opt.threshold == 1.0 and opt.closed_form is True
    assert (opt.bias is None) == (not bias) and (not bias or np.array_equal(opt.bias, np.zeros(K)))


@pytest.mark.parametrize(
    "K,n,lw,lh,bias", [(3, 2, 1e-2, 2e-2, False), (4, 3, 1e-3, 5e-3, True), (3, 1, 0.05, 0.1, True)]
)
def test_mse_optimum_fields_equal_built_point(K, n, lw, lh, bias):
    opt = ufm.mse(K=K, n_spl=n, lam_W=lw, lam_H=lh, bias=bias)
    T = _E(K) if bias else np.eye(K)
    w = _ratio_to(opt.W_gram, T)
    hh = _ratio_to(opt.means_gram, T)
    A = O.factor_gram(T, K)
    W = math.sqrt(w) * A
    H = np.repeat((math.sqrt(hh) * A).T, n, axis=1)
    b = opt.bias
    f = lambda W_, H_, b_: O.ufm_mse_objective(W_, H_, b_, n, lw, lh)  # noqa: E731
    assert abs(opt.value - f(W, H, b)) <= 1e-12 * opt.value
    assert abs(opt.W_norm_sq - np.trace(opt.W_gram)) <= 1e-13 * opt.W_norm_sq
    assert abs(opt.H_norm_sq - np.sum(H * H)) <= 1e-12 * opt.H_norm_sq
    gW = _fd_grad(lambda X: f(X, H, b), W)
    gH = _fd_grad(lambda X: f(W, X, b), H)
    g = np.sum(gW**2) + np.sum(gH**2)
    if bias:
        g += np.sum(_fd_grad(lambda X: f(W, H, X), b) ** 2)
        np.testing.assert_allclose(b, np.full(K, 1.0 / K), rtol=1e-15)
    assert math.sqrt(g) <= 1e-8
    q = math.sqrt(n * lw * lh)
    assert abs(opt.extras["s"] - (1 - K * q)) <= 1e-15 and abs(opt.extras["q"] - q) <= 1e-16


def test_ce_mse_trivial_branch():
    K, n = 3, 2
    lw = lh = 1 / (K * math.sqrt(n)) * 1.0001  # K·q = 1.0001 ≥ 1
    for fn, zero_val in ((ufm.ce, math.log(K)), (ufm.mse, 0.5)):
        opt = fn(K=K, n_spl=n, lam_W=lw, lam_H=lh)
        Z = np.zeros((K, K))
        Hz = np.zeros((K, K * n))
        val = (
            O.ufm_ce_objective(Z, Hz, None, n, lw, lh) if fn is ufm.ce else O.ufm_mse_objective(Z, Hz, None, n, lw, lh)
        )
        assert opt.trivial is True and abs(opt.value - val) <= 1e-15 and abs(val - zero_val) <= 1e-15
        assert opt.W_norm_sq == 0 and opt.H_norm_sq == 0 and not opt.W_gram.any()
    opt = ufm.mse(K=K, n_spl=n, lam_W=lw, lam_H=lh, bias=True)
    assert (
        abs(opt.value - O.ufm_mse_objective(np.zeros((K, K)), np.zeros((K, K * n)), np.full(K, 1 / K), n, lw, lh))
        <= 1e-15
    )
    # continuity at K·q = 1 from below
    l1 = 1 / (K * math.sqrt(n)) * (1 - 1e-9)
    assert abs(ufm.ce(K=K, n_spl=n, lam_W=l1, lam_H=l1).value - math.log(K)) <= 1e-7
    assert abs(ufm.mse(K=K, n_spl=n, lam_W=l1, lam_H=l1).value - 0.5) <= 1e-7


def test_max_margin_fields_equal_built_point():
    K, n = 4, 3
    opt = ufm.max_margin(K=K, n_spl=n)
    W, H = _build_ce_point(opt, K, n, K)
    margins = [float((W[k] - W[j]) @ H[:, k * n + i]) for k in range(K) for j in range(K) if j != k for i in range(n)]
    assert abs(min(margins) - 1) <= 1e-13 and abs(max(margins) - 1) <= 1e-13
    assert abs(opt.value - 0.5 * (np.sum(W * W) + np.sum(H * H))) <= 1e-13 * opt.value
    assert abs(opt.value - (K - 1) * math.sqrt(n)) <= 1e-13 * opt.value
    assert (
        abs(opt.W_norm_sq - np.sum(W * W)) <= 1e-13 * opt.value
        and abs(opt.H_norm_sq - np.sum(H * H)) <= 1e-13 * opt.value
    )
    assert (
        abs(opt.extras["alpha_sq"] - np.sum(W[0] ** 2)) <= 1e-13
        and abs(opt.extras["beta_sq"] - np.sum(H[:, 0] ** 2)) <= 1e-13
    )
    # KKT: the objective cannot decrease along the feasible scaling (W, H) → (sW, H/s)
    assert all(
        0.5 * (s * s * np.sum(W * W) + np.sum(H * H) / (s * s)) >= opt.value - 1e-12 for s in (0.9, 0.99, 1.01, 1.1)
    )


def test_norm_constrained_ce_fields_equal_built_point():
    K, Ow, Oh = 4, 0.7, 2.5
    opt = ufm.norm_constrained_ce(K=K, Omega_W=Ow, Omega_H=Oh)
    W, H = _build_ce_point(opt, K, 2, K)
    assert abs(np.mean(np.sum(W * W, axis=1)) - Ow) <= 1e-14 and abs(np.mean(np.sum(H * H, axis=0)) - Oh) <= 1e-14
    val = O.ufm_ce_objective(W, H, None, 2, 0.0, 0.0)
    assert abs(opt.value - val) <= 1e-13 * val
    assert abs(opt.W_norm_sq - K * Ow) <= 1e-14 and abs(np.trace(opt.means_gram) - K * Oh) <= 1e-13
    assert abs(opt.extras["logit_gap"] - K * math.sqrt(Ow * Oh) / (K - 1)) <= 1e-14
    assert math.isnan(opt.H_norm_sq)


def test_output_ball_fields_equal_built_point():
    K, R = 5, 3.0
    opt = ufm.output_ball(K=K, R=R)
    hs = opt.extras["h_star"]
    for k in range(K):
        h = hs[k]
        assert abs(np.linalg.norm(h) - R) <= 1e-13
        mx = max(h)
        ce = mx + math.log(math.fsum(math.exp(v - mx) for v in h)) - h[k]
        assert abs(ce - opt.value) <= 1e-13 * opt.value
    np.testing.assert_allclose(opt.W_gram, hs @ hs.T, rtol=1e-13, atol=1e-13)
    assert abs(opt.H_norm_sq - np.sum(hs * hs)) <= 1e-12
    # any other point of the ball is worse (random points on the sphere)
    rng = np.random.default_rng(0)
    for _ in range(20):
        v = rng.standard_normal(K)
        v = R * v / np.linalg.norm(v)
        assert math.log(math.fsum(math.exp(x) for x in v)) - v[0] >= opt.value - 1e-12


def _mp_rho_ce(K, d, lam):
    with mpmath.workdps(40):
        a = mpmath.sqrt(d) * K / (K - 1)
        f = lambda r: mpmath.sqrt(d) / (mpmath.exp(a * r) + K - 1) - lam * r  # noqa: E731
        return mpmath.findroot(f, (mpmath.mpf(0), mpmath.sqrt(d) / (lam * K)), solver="anderson"), a


def _ln_point(Wg, Mg, K, d, orth):
    """W (K×d), X (d×K) with WWᵀ = Wg, XᵀX = Mg, zero-sum columns of X, W ∝ Xᵀ."""
    Q, _ = np.linalg.qr(np.eye(d) - 1.0 / d)
    B = Q[:, : d - 1]  # orthonormal basis of 1^⊥
    T = np.eye(K) if orth else _E(K)
    r = K if orth else K - 1
    A = O.factor_gram(T, r)  # K × r
    w, m = _ratio_to(Wg, T), _ratio_to(Mg, T)
    X = math.sqrt(m) * B[:, :r] @ A.T
    W = math.sqrt(w) * A @ B[:, :r].T
    return W, X


@pytest.mark.parametrize("K,d,lam", [(3, 3, 0.1), (4, 6, 1e-3), (2, 5, 2.0)])
def test_layernorm_ce_fields_equal_built_point_and_mpmath_root(K, d, lam):
    opt = ufm.layernorm_ce(K=K, d=d, lam=lam)
    rho, a = _mp_rho_ce(K, d, lam)
    assert abs(opt.extras["rho"] - float(rho)) <= 1e-13 * float(rho) and abs(opt.extras["a"] - float(a)) <= 1e-14
    W, X = _ln_point(opt.W_gram, opt.means_gram, K, d, orth=False)
    assert np.abs(X.sum(axis=0)).max() <= 1e-12 and np.allclose(np.sum(X * X, axis=0), d, rtol=1e-13)
    val = O.ufm_ce_objective(W, X, None, 1, lam, 0.0)
    assert abs(opt.value - val) <= 1e-12 * val and abs(opt.extras["formula_value"] - val) <= 1e-12 * val
    assert abs(opt.W_norm_sq - np.trace(opt.W_gram)) <= 1e-13 * opt.W_norm_sq
    assert abs(opt.W_norm_sq - K * float(rho) ** 2) <= 1e-12 * opt.W_norm_sq
    logits = W @ X
    assert abs((logits[0, 0] - logits[1, 0]) - opt.extras["logit_gap"]) <= 1e-12 * opt.extras["logit_gap"]
    assert opt.closed_form is True


@pytest.mark.parametrize(
    "K,d,lam,bias", [(3, 4, 0.1, False), (3, 3, 0.3, True), (4, 7, 1e-3, False), (4, 4, 2.0, True)]
)
def test_layernorm_mse_fields_equal_built_point(K, d, lam, bias):
    opt = ufm.layernorm_mse(K=K, d=d, lam=lam, bias=bias)
    W, X = _ln_point(opt.W_gram, opt.means_gram, K, d, orth=not bias)
    b = opt.bias
    val = O.ufm_mse_objective(W, X, b, 1, lam, 0.0)
    assert abs(opt.value - val) <= 1e-12 * val and abs(opt.extras["formula_value"] - val) <= 1e-12 * val
    assert abs(opt.W_norm_sq - np.sum(W * W)) <= 1e-12 * opt.W_norm_sq
    if bias:
        np.testing.assert_allclose(b, np.full(K, 1 / K), rtol=1e-15)
        assert abs(opt.extras["rho"] - math.sqrt(d) * (K - 1) / (K * (d + lam * (K - 1)))) <= 1e-15
    else:
        assert abs(opt.extras["z"] - math.sqrt(np.sum(W[0] ** 2))) <= 1e-14
    # optimal along the only free direction of the structured family: the scale of W
    for s in (0.999, 1.001):
        assert O.ufm_mse_objective(s * W, X, b, 1, lam, 0.0) >= val


def test_numerical_optimum_value_is_objective_at_its_point():
    num = ufm.solve_ce(K=3, n_spl=2, d=4, lam_W=1e-2, lam_H=2e-2, seed=0)
    val = O.ufm_ce_objective(num.W, num.H, num.b, 2, 1e-2, 2e-2)
    assert abs(num.value - val) <= 1e-13 * val
    assert abs(num.value - min(num.values)) <= 1e-15 * val
    g = np.sqrt(
        np.sum(_fd_grad(lambda X: O.ufm_ce_objective(X, num.H, num.b, 2, 1e-2, 2e-2), num.W) ** 2)
        + np.sum(_fd_grad(lambda X: O.ufm_ce_objective(num.W, X, num.b, 2, 1e-2, 2e-2), num.H) ** 2)
    )
    assert abs(num.grad_norm - g) <= 1e-8
    assert abs(num.value - ufm.ce(K=3, n_spl=2, lam_W=1e-2, lam_H=2e-2).value) <= 1e-9


# ------------------------------------------------------------------------------------------ perturbation paper
def _f2(W, H, H0, K, n, lw, lh, beta):
    """Objective (2) written out: 1/(2N)‖WH − Y‖² + λ_W/(2K)‖W‖² + λ_H/(2N)‖H‖² + β/(2N)‖H − H0‖²."""
    N = K * n
    Y = np.kron(np.eye(K), np.ones((1, n)))
    R = W @ H - Y
    v = 0.5 * np.sum(R * R) / N + lw / (2 * K) * np.sum(W * W) + lh / (2 * N) * np.sum(H * H)
    if beta:
        v += beta / (2 * N) * np.sum((H - H0) ** 2)
    return float(v)


def _grad2(W, H, H0, K, n, lw, lh, beta):
    N = K * n
    Y = np.kron(np.eye(K), np.ones((1, n)))
    R = W @ H - Y
    gH = (W.T @ R + lh * H) / N
    if beta:
        gH = gH + beta * (H - H0) / N
    return R @ H.T / N + lw / K * W, gH


@pytest.mark.parametrize("lw,lh", [(0.3, 0.5), (2.0, 1.5)])
def test_collapsed_minimizer_fields(lw, lh):
    K, n, d = 3, 2, 4
    cm = P.collapsed_minimizer(K=K, n_spl=n, d=d, lam_W=lw, lam_H=lh, seed=1)
    c = math.sqrt(lw * lh)
    assert abs(cm.c - c) <= 1e-15 and cm.trivial == (c > 1)
    assert abs(cm.value - _f2(cm.W, cm.H, None, K, n, lw, lh, 0.0)) <= 1e-14
    Hb = cm.H.reshape(d, K, n).mean(axis=2)
    np.testing.assert_allclose(Hb.T @ Hb, cm.rho * np.eye(K), atol=1e-14)
    np.testing.assert_allclose(cm.W @ cm.W.T, cm.sigma_W_sq * np.eye(K), atol=1e-14)
    np.testing.assert_allclose(cm.R.T @ cm.R, np.eye(K), atol=1e-14)
    gW, gH = _grad2(cm.W, cm.H, None, K, n, lw, lh, 0.0)
    assert math.sqrt(np.sum(gW**2) + np.sum(gH**2)) <= 1e-14
    if not cm.trivial:  # the nonzero critical point beats (0, 0)
        assert cm.value < _f2(0 * cm.W, 0 * cm.H, None, K, n, lw, lh, 0.0)


def test_optimal_W_and_central_path_loss_equal_hand_formulas():
    K, n, d, lw, lh = 3, 2, 4, 0.2, 0.1
    H = np.random.default_rng(0).standard_normal((d, K * n))
    W = P.optimal_W(H, K=K, lam_W=lw)
    gW, _ = _grad2(W, H, None, K, n, lw, lh, 0.0)
    assert np.abs(gW).max() <= 1e-14  # W*(H) zeroes ∇_W f
    val = _f2(W, H, None, K, n, lw, lh, 0.0)
    for method in ("closed", "direct"):
        assert abs(P.central_path_loss(H, K=K, lam_W=lw, lam_H=lh, method=method) - val) <= 1e-13 * val
    # gradient of L(H) = f(W*(H), H) by differences of the hand objective
    L = lambda X: _f2(P.optimal_W(X, K=K, lam_W=lw), X, None, K, n, lw, lh, 0.0)  # noqa: E731
    g = O.central_fd(L, H, 1e-5)
    assert O.rel(P.central_path_gradient(H, K=K, lam_W=lw, lam_H=lh), g) <= 1e-8


def _fd_hessian(K, n, d, lw, lh, beta, W, H, H0):
    """Hessian of (2) in (vec W, vec H) (column stacking) by central differences of the hand gradient."""
    nw, nh = K * d, d * K * n

    def g(x):
        Wx = x[:nw].reshape(K, d, order="F")
        Hx = x[nw:].reshape(d, K * n, order="F")
        gw, gh = _grad2(Wx, Hx, H0, K, n, lw, lh, beta)
        return np.concatenate([gw.ravel(order="F"), gh.ravel(order="F")])

    x0 = np.concatenate([W.ravel(order="F"), H.ravel(order="F")])
    Hs = np.zeros((nw + nh, nw + nh))
    h = 1e-4
    for i in range(nw + nh):
        e = np.zeros_like(x0)
        e[i] = h
        Hs[:, i] = (g(x0 + e) - g(x0 - e)) / (2 * h)
    Hs = 0.5 * (Hs + Hs.T)
    return Hs[:nw, :nw], Hs[:nw, nw:], Hs[nw:, nw:]


def test_first_order_response_and_block_spectra_equal_fd_hessian():
    K, n, d, lw, lh, beta = 2, 3, 3, 0.5, 0.3, 4.0
    N = K * n
    cm = P.collapsed_minimizer(K=K, n_spl=n, d=d, lam_W=lw, lam_H=lh)
    W, H = cm.W, cm.H
    Hww, Hwh, Hhh = _fd_hessian(K, n, d, lw, lh, beta, W, H, H)
    S = Hhh - Hwh.T @ np.linalg.solve(Hww, Hwh)
    F_exact = beta / N * np.linalg.inv(S)
    G = N * S - beta * np.eye(d * N)  # F = (I + G/β)⁻¹
    fr = P.first_order_response(W, H, K=K, lam_W=lw, lam_H=lh, beta=beta, kind="exact")
    assert fr.kind == "exact"
    assert O.rel(fr.F_H, F_exact) <= 1e-8 and O.rel(fr.G, G) <= 1e-8
    assert O.rel(fr.F_W, -np.linalg.solve(Hww, Hwh) @ F_exact) <= 1e-8
    frn = P.first_order_response(W, H, K=K, lam_W=lw, lam_H=lh, beta=beta, kind="neumann")
    F_neu = np.eye(d * N) - G / beta
    assert O.rel(frn.F_H, F_neu) <= 1e-8
    bs = P.block_spectra(K=K, n_spl=n, d=d, lam_W=lw, lam_H=lh, beta=beta)
    s = d * n
    intra = np.linalg.svd(F_neu[:s, :s], compute_uv=False)
    inter = np.linalg.svd(F_neu[:s, s : 2 * s], compute_uv=False)
    np.testing.assert_allclose(bs.intra, intra, atol=1e-8)
    np.testing.assert_allclose(bs.inter, inter, atol=1e-8)
    assert abs(bs.sigma_max_intra - intra.max()) <= 1e-8 and abs(bs.sigma_min_intra - intra.min()) <= 1e-8
    assert abs(bs.sigma_max_inter - inter.max()) <= 1e-8
    np.testing.assert_allclose(bs.G_eigenvalues, np.sort(np.linalg.eigvalsh(G))[::-1], atol=1e-8)
    np.testing.assert_allclose(
        np.sort(bs.F_exact_eigenvalues), np.sort(np.linalg.eigvalsh(0.5 * (F_exact + F_exact.T))), atol=1e-8
    )
