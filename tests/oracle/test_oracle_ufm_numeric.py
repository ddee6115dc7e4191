"""Oracles for the numerical UFM results: NumericalOptimum of every solver,
convex_ce/convex_mse, the perturbation paper's gradient flow and anchored solver, and the central
path in mpmath.

Every value is recomputed from the returned point with the hand-written objectives of
tests/oracle/oracles.py (per-sample softplus CE, explicit residual sums), constraints are checked entry by
entry, gradient norms by central differences, and the closed forms of fctheory.ufm (themselves
checked in tests/oracle/test_oracle_ufm.py) are the reference optimum. The central path L(H) and W*(H)
are recomputed in mpmath at 50 digits (a direct solve of the normal equations; ∇L by mpmath.diff),
including H of magnitude 1e±150, where the library rescales by powers of two.

Checklist (field -> test)
-------------------------
NumericalOptimum of solve_ce(bias) / solve_mse(±bias): value, W, H, b, grad_norm, values, method
                                              -> test_regularized_solvers_value_and_grad_norm_equal_hand[...]
solve_max_margin: value, grad_norm (= constraint violation), values -> test_solve_max_margin_fields
solve_norm_constrained_ce: value, norms, stationarity, values     -> test_solve_norm_constrained_ce_fields
solve_output_ball: value, H (the point), values                  -> test_solve_output_ball_fields
solve_layernorm_ce / solve_layernorm_mse(±bias, d = 2 branch)     -> test_solve_layernorm_fields_equal_hand[...]
convex_ce / convex_mse (value, Z, b)                              -> test_convex_reformulations_equal_hand_objective[...]
FlowResult.t, H, nc1_tilde, nc1, loss, T_W, T_B                   -> test_gradient_flow_fields_equal_independent_integration
AnchoredSolution.W, H, value, grad_norm, newton_steps             -> test_solve_anchored_fields_equal_hand_objective[...]
central_path_loss / central_path_gradient / optimal_W vs mpmath   -> test_central_path_equals_mpmath[scale]
CollapsedMinimizer trivial branch (c > 1, c = 1)                  -> test_collapsed_minimizer_trivial_branch
"""

import math

import mpmath
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from tests.oracle import oracles as O
from fctheory import ufm
from fctheory.ufm import perturbation as P


def _fd_norm(f, arrays, h=1e-6):
    """‖∇f‖ over all the arrays, by central differences."""
    tot = 0.0
    for i, A in enumerate(arrays):

        def fi(X, i=i):
            args = list(arrays)
            args[i] = X
            return f(*args)

        tot += float(np.sum(O.central_fd(fi, A, h) ** 2))
    return math.sqrt(tot)


# ------------------------------------------------------------------------------------------ regularized solvers
@pytest.mark.parametrize("loss,bias", [("ce", True), ("mse", False), ("mse", True)])
def test_regularized_solvers_value_and_grad_norm_equal_hand(loss, bias):
    K, n, m, lw, lh = 3, 2, 4, 1e-2, 2e-2
    solve = ufm.solve_ce if loss == "ce" else ufm.solve_mse
    obj = O.ufm_ce_objective if loss == "ce" else O.ufm_mse_objective
    num = solve(K=K, n_spl=n, d=m, lam_W=lw, lam_H=lh, bias=bias, seed=1)
    assert num.W.shape == (K, m) and num.H.shape == (m, K * n) and (num.b is None) == (not bias)
    val = obj(num.W, num.H, num.b, n, lw, lh)
    assert abs(num.value - val) <= 1e-13 * val
    assert num.value == min(num.values) and len(num.values) == 3
    arrays = [num.W, num.H] + ([num.b] if bias else [])
    g = _fd_norm(lambda W, H, *b: obj(W, H, b[0] if b else None, n, lw, lh), arrays)
    assert abs(num.grad_norm - g) <= 1e-8
    closed = (ufm.ce if loss == "ce" else ufm.mse)(K=K, n_spl=n, lam_W=lw, lam_H=lh, bias=bias).value
    assert abs(num.value - closed) <= 1e-9 * closed


def test_solve_max_margin_fields():
    K, n, m = 3, 2, 3
    num = ufm.solve_max_margin(K=K, n_spl=n, d=m, n_starts=2, seed=0)
    assert num.value == pytest.approx(0.5 * (np.sum(num.W**2) + np.sum(num.H**2)), rel=1e-13)
    Z = num.W @ num.H
    margins = [Z[i // n, i] - Z[j, i] for i in range(K * n) for j in range(K) if j != i // n]
    assert num.grad_norm == pytest.approx(max(0.0, 1.0 - min(margins)), abs=1e-15)  # max violation, not min
    assert min(margins) >= 1 - 1e-9
    assert num.value == min(num.values)
    assert abs(num.value - ufm.max_margin(K=K, n_spl=n).value) <= 1e-7 * num.value


def test_solve_norm_constrained_ce_fields():
    K, n, m, Ow, Oh = 3, 2, 3, 0.7, 1.3
    N = K * n
    num = ufm.solve_norm_constrained_ce(K=K, n_spl=n, d=m, Omega_W=Ow, Omega_H=Oh, seed=0)
    assert abs(np.sum(num.W**2) - K * Ow) <= 1e-13 * K * Ow  # both constraints tight
    assert abs(np.sum(num.H**2) - N * Oh) <= 1e-13 * N * Oh
    val = O.ufm_ce_objective(num.W, num.H, None, n, 0.0, 0.0)
    assert abs(num.value - val) <= 1e-13 * val
    assert abs(num.value - ufm.norm_constrained_ce(K=K, Omega_W=Ow, Omega_H=Oh).value) <= 1e-9 * val
    # stationary on the product of spheres: the FD gradient of the scale-invariant parametrisation vanishes
    sW, sH = math.sqrt(K * Ow), math.sqrt(N * Oh)
    f = lambda X, G: O.ufm_ce_objective(sW * X / np.linalg.norm(X), sH * G / np.linalg.norm(G), None, n, 0, 0)  # noqa
    assert _fd_norm(f, [num.W / sW, num.H / sH]) <= 1e-7
    assert num.grad_norm <= 1e-7 and num.value == min(num.values)


@pytest.mark.parametrize("K,R,k", [(3, 2.0, 0), (4, 50.0, 2)])
def test_solve_output_ball_fields(K, R, k):
    num = ufm.solve_output_ball(K=K, R=R, k=k, seed=0)
    h = num.H[:, 0]
    assert num.H.shape == (K, 1) and num.W.shape == (K, 0)
    assert abs(np.linalg.norm(h) - R) <= 1e-14 * R
    ce = O.my_ce_and_dy(h, k)[0]
    assert abs(num.value - ce) <= 1e-12 * ce  # keeps its digits even at CE ~ e^-50
    ref = ufm.output_ball(K=K, R=R).value
    assert abs(num.value - ref) <= 1e-9 * ref
    assert num.value == pytest.approx(min(num.values), rel=1e-15)


@pytest.mark.parametrize(
    "loss,K,d,bias",
    [("ce", 3, 4, False), ("mse", 3, 5, False), ("mse", 3, 4, True), ("mse", 3, 2, True), ("ce", 3, 2, False)],
)
def test_solve_layernorm_fields_equal_hand(loss, K, d, bias):
    n, lam = 2, 0.1
    num = (
        ufm.solve_layernorm_ce(K=K, n_spl=n, d=d, lam=lam, seed=0)
        if loss == "ce"
        else ufm.solve_layernorm_mse(K=K, n_spl=n, d=d, lam=lam, bias=bias, seed=0)
    )
    X = num.H
    np.testing.assert_allclose(np.linalg.norm(X, axis=0), math.sqrt(d), rtol=1e-14)  # ‖x_i‖ = √d
    assert np.abs(X.sum(axis=0)).max() <= 1e-13  # 1ᵀx_i = 0
    np.testing.assert_allclose(O.my_phi(X), X, rtol=0, atol=1e-13)  # on the LayerNorm image
    if bias:  # the unregularised bias is the exact minimiser b = mean_i(y_i − W x_i)
        Y = np.kron(np.eye(K), np.ones((1, n)))
        np.testing.assert_allclose(num.b, (Y - num.W @ X).mean(axis=1), rtol=0, atol=1e-14)
    obj = O.ufm_ce_objective if loss == "ce" else O.ufm_mse_objective
    val = obj(num.W, X, num.b, n, lam, 0.0)
    assert abs(num.value - val) <= 1e-13 * val
    closed = ufm.layernorm_ce(K=K, d=d, lam=lam) if loss == "ce" else ufm.layernorm_mse(K=K, d=d, lam=lam, bias=bias)
    if closed.closed_form:
        assert abs(num.value - closed.value) <= 1e-9 * val

    # stationary in (W, G) through φ (the sphere parametrisation), by differences of the hand objective
    def f(W, G):
        b = None if not bias else (np.kron(np.eye(K), np.ones((1, n))) - W @ O.my_phi(G)).mean(1)
        return obj(W, O.my_phi(G), b, n, lam, 0.0)

    if d == 2:  # the sphere is two points: only W is optimised
        assert _fd_norm(lambda W: f(W, X), [num.W]) <= 1e-7
    else:
        assert _fd_norm(f, [num.W, X]) <= 1e-7
    assert num.grad_norm <= 1e-7 and num.value == min(num.values)


@pytest.mark.parametrize("loss,bias", [("ce", False), ("mse", True)])
def test_convex_reformulations_equal_hand_objective(loss, bias):
    K, n, lw, lh = 3, 2, 1e-2, 2e-2
    fn = ufm.convex_ce if loss == "ce" else ufm.convex_mse
    val, Z, b = fn(K=K, n_spl=n, lam_W=lw, lam_H=lh, bias=bias)
    assert Z.shape == (K, K * n) and (b is None) == (not bias)
    # (24): the value at Z is the data term + √(λ_Wλ_H)‖Z‖_*, and the balanced factorisation
    # W = U√S·t, H = √S Vᵀ/t, t = (λ_H/λ_W)^{1/4}, attains it in the UFM objective
    U, s, Vt = np.linalg.svd(Z, full_matrices=False)
    t = (lh / lw) ** 0.25
    W, H = U * np.sqrt(s) * t, (np.sqrt(s)[:, None] * Vt) / t
    obj = O.ufm_ce_objective if loss == "ce" else O.ufm_mse_objective
    v_fact = obj(W, H, b, n, lw, lh)
    assert abs(v_fact - val) <= 1e-7 * val
    closed = (ufm.ce if loss == "ce" else ufm.mse)(K=K, n_spl=n, lam_W=lw, lam_H=lh, bias=bias).value
    assert abs(val - closed) <= 1e-6 * closed


# ------------------------------------------------------------------------------------------ perturbation paper
def _hand_f(W, H, H0, K, lw, lh, beta):
    """(2) written out: 1/(2N)‖WH − Y‖² + λ_W/(2K)‖W‖² + λ_H/(2N)‖H‖² + β/(2N)‖H − H0‖² (loops over samples)."""
    N = H.shape[1]
    n = N // K
    tot = []
    for i in range(N):
        z = W @ H[:, i]
        z[i // n] -= 1.0
        tot.append(float(z @ z))
    v = 0.5 * math.fsum(tot) / N + lw / (2 * K) * float(np.sum(W * W)) + lh / (2 * N) * float(np.sum(H * H))
    if beta:
        v += beta / (2 * N) * float(np.sum((H - H0) ** 2))
    return v


def _hand_Wstar(H, K, lw):
    """W* = Y Hᵀ(HHᵀ + nλ_W I)⁻¹: the normal equations of (1) in W, solved directly."""
    d, N = H.shape
    n = N // K
    Y = np.kron(np.eye(K), np.ones((1, n)))
    return np.linalg.solve(H @ H.T + n * lw * np.eye(d), H @ Y.T).T


def _hand_grad_L(H, K, lw, lh):
    """∇L(H) = ∇_H f(W*(H), H) (envelope theorem) = (W*ᵀ(W*H − Y) + λ_H H)/N."""
    d, N = H.shape
    n = N // K
    W = _hand_Wstar(H, K, lw)
    Y = np.kron(np.eye(K), np.ones((1, n)))
    return (W.T @ (W @ H - Y) + lh * H) / N


def _traces(H, K):
    d, N = H.shape
    n = N // K
    means = [H[:, k * n : (k + 1) * n].mean(axis=1) for k in range(K)]
    g = sum(means) / K
    trW = sum(float(np.sum((H[:, i] - means[i // n]) ** 2)) for i in range(N)) / N
    trB = sum(float(np.sum((m - g) ** 2)) for m in means) / K
    SW = sum(np.outer(H[:, i] - means[i // n], H[:, i] - means[i // n]) for i in range(N)) / N
    SB = sum(np.outer(m - g, m - g) for m in means) / K
    return trW, trB, np.trace(SW @ np.linalg.pinv(SB, rcond=1e-10)) / K


def test_gradient_flow_fields_equal_independent_integration():
    K, n, d, lw, lh, t_max = 2, 2, 3, 0.3, 0.05, 2.0
    N = K * n
    H0 = np.random.default_rng(3).standard_normal((d, N))
    fl = P.gradient_flow(H0, K=K, lam_W=lw, lam_H=lh, t_max=t_max, n_eval=5)
    np.testing.assert_array_equal(fl.t, np.linspace(0, t_max, 5))
    np.testing.assert_array_equal(fl.H[0], H0)
    sol = solve_ivp(
        lambda t, x: -N * _hand_grad_L(x.reshape(d, N), K, lw, lh).ravel(),
        (0, t_max),
        H0.ravel(),
        method="RK45",
        t_eval=fl.t,
        rtol=1e-12,
        atol=1e-14,
    )
    ref = sol.y.T.reshape(-1, d, N)
    assert O.rel(fl.H, ref) <= 1e-8
    for i, t in enumerate(fl.t):
        H = fl.H[i]
        trW, trB, papyan = _traces(H, K)
        assert abs(fl.nc1_tilde[i] - trW / trB) <= 1e-13 * trW / trB
        assert abs(fl.nc1[i] - papyan) <= 1e-11 * papyan
        L = _hand_f(_hand_Wstar(H, K, lw), H, None, K, lw, lh, 0.0)
        assert abs(fl.loss[i] - L) <= 1e-13 * L
        assert abs(fl.T_W[i] - math.exp(2 * lh * t) * trW) <= 1e-13 * fl.T_W[i]
        assert abs(fl.T_B[i] - math.exp(2 * lh * t) * trB) <= 1e-13 * fl.T_B[i]
    assert np.all(np.diff(fl.loss) < 0)  # a gradient flow decreases L


@pytest.mark.parametrize("newton", [True, False])
def test_solve_anchored_fields_equal_hand_objective(newton):
    K, n, d, lw, lh, beta = 2, 2, 3, 0.3, 0.2, 2.0
    N = K * n
    H0 = np.random.default_rng(5).standard_normal((d, N))
    s = P.solve_anchored(H0, K=K, lam_W=lw, lam_H=lh, beta=beta, newton=newton)
    assert abs(s.value - _hand_f(s.W, s.H, H0, K, lw, lh, beta)) <= 1e-14 * s.value
    g = _fd_norm(lambda W, H: _hand_f(W, H, H0, K, lw, lh, beta), [s.W, s.H], h=1e-5)
    assert abs(s.grad_norm - g) <= 1e-9
    assert s.grad_norm <= (1e-13 if newton else 1e-7)
    assert O.rel(s.W, _hand_Wstar(s.H, K, lw)) <= (1e-13 if newton else 1e-7)  # W is optimal for its H
    assert (s.newton_steps >= 1) if newton else (s.newton_steps == 0)
    # no better point nearby: random perturbations of the returned point do not decrease (2)
    rng = np.random.default_rng(0)
    for _ in range(5):
        dW, dH = 1e-4 * rng.standard_normal(s.W.shape), 1e-4 * rng.standard_normal(s.H.shape)
        assert _hand_f(s.W + dW, s.H + dH, H0, K, lw, lh, beta) >= s.value - 1e-15


def _mp_L(Hm, K, lw, lh):
    """L(H) at the working mpmath precision: W* by an mpmath LU solve of the normal equations, then (1)."""
    d, N = Hm.rows, Hm.cols
    n = N // K
    Y = mpmath.matrix(K, N)
    for i in range(N):
        Y[i // n, i] = 1
    A = Hm * Hm.T + n * mpmath.mpf(lw) * mpmath.eye(d)
    B = Hm * Y.T
    W = mpmath.matrix(K, d)
    for k in range(K):  # column k of W*ᵀ solves A x = H y_kᵀ
        x = mpmath.lu_solve(A, B.column(k))
        for i in range(d):
            W[k, i] = x[i]
    R = W * Hm - Y
    sq = lambda M: mpmath.fsum(M[i, j] ** 2 for i in range(M.rows) for j in range(M.cols))  # noqa: E731
    return sq(R) / (2 * N) + mpmath.mpf(lw) / (2 * K) * sq(W) + mpmath.mpf(lh) / (2 * N) * sq(Hm), W


@pytest.mark.parametrize("scale", [1.0, 1e-150, 1e150])
def test_central_path_equals_mpmath(scale):
    K, n, d, lw = 2, 2, 3, 0.2
    lh = 0.1 if scale <= 1 else 1e-300  # keep λ_H‖H‖² finite at 1e150
    H = np.random.default_rng(7).standard_normal((d, K * n)) * scale
    with mpmath.workdps(50):
        Hm = mpmath.matrix(H.tolist())
        Lm, Wm = _mp_L(Hm, K, lw, lh)
        for method in ("closed", "direct"):
            assert abs(P.central_path_loss(H, K=K, lam_W=lw, lam_H=lh, method=method) - float(Lm)) <= 1e-13 * abs(
                float(Lm)
            )
        Wl = P.optimal_W(H, K=K, lam_W=lw)
        Wr = np.array(Wm.tolist(), dtype=float)
        assert O.rel(Wl, Wr) <= 1e-13
        G = P.central_path_gradient(H, K=K, lam_W=lw, lam_H=lh)
        Gr = np.zeros_like(H)
        for i in range(d):
            for j in range(K * n):

                def f(x, i=i, j=j):
                    Hx = Hm.copy()
                    Hx[i, j] = x
                    return _mp_L(Hx, K, lw, lh)[0]

                Gr[i, j] = float(mpmath.diff(f, Hm[i, j]))
        assert O.rel(G, Gr) <= 1e-12


@pytest.mark.parametrize("lw,lh", [(2.0, 3.0), (2.0, 0.5)])
def test_collapsed_minimizer_trivial_branch(lw, lh):
    K, n, d = 2, 2, 3
    cm = P.collapsed_minimizer(K=K, n_spl=n, d=d, lam_W=lw, lam_H=lh)
    assert cm.c == math.sqrt(lw * lh)
    if cm.c > 1:
        assert cm.trivial and cm.rho == 0 and cm.sigma_W_sq == 0 and cm.value == 0.5
        assert not np.any(cm.W) and not np.any(cm.H)
        assert cm.value == _hand_f(cm.W, cm.H, None, K, lw, lh, 0.0)
    else:  # c = 1: the boundary, value c − c²/2 = 1/2 at (0, 0) too
        assert not cm.trivial and cm.value == pytest.approx(_hand_f(cm.W, cm.H, None, K, lw, lh, 0.0), rel=1e-15)
