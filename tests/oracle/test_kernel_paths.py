"""Every kernel path against brute force.

Risk engine: risk-only AND risk+gradient, on the numba kernels (backend "numpy" / "numba") and on
the array-API path (``jit=False``: the code CuPy runs, here with NumPy as xp), each compared with
``fctheory.true_risk_bruteforce`` and with the independent enumeration of tests/oracle/oracles.py, on
adversarial inputs (exact ties, huge margins that force the log-space fallback, zero weights,
LayerNorm with and without eps, K < n_c^L, non-uniform μ). Gradients also against Richardson
central differences. Trainer: the numba epoch and the reference step (what CuPy runs, xp =
NumPy) against an SGD step written here, gradients against finite differences, ties in the
argmax. τ, τ*: numba and NumPy solvers against mpmath on mixed-regime arrays.

CuPy-only code that cannot run on the host: ``fctheory._backend.get_namespace("cupy")`` and
``fctheory.trainer._reference.scatter_add_for(cupy)`` (cupyx.scatter_add); everything else the
CuPy backends run is the array-API code exercised here with xp = NumPy.

Tolerances: R, R₀ 1e-12 relative; gradients 1e-12 norm-wise vs enumeration, 1e-8 vs differences.

Checklist (path -> test)
------------------------
risk-only, numpy / numba / array-API         -> test_risk_only_path_equals_enumeration[case-path]
risk+gradient, numpy / numba / array-API     -> test_risk_and_gradient_path_equals_enumeration[case-path]
true_risk_bruteforce (risk-only, gradient)   -> test_library_bruteforce_equals_independent_enumeration
ties (log K exactly)                         -> test_ties_give_log_K_exactly
log-space fallback (post_group/_post_group_xp flags, fallback_class/_fallback_xp)
                                             -> test_fallback_is_counted_identically_on_every_path_and_both_modes,
                                                huge_* cases above
tiny CE (softplus/log1p branches)            -> test_tiny_cross_entropy_keeps_relative_precision_against_mpmath
gradients vs differences                     -> test_gradient_of_every_path_equals_richardson_differences_of_the_oracle
τ, τ* numba and NumPy solvers                -> test_tau_*_kernels_equal_mpmath_on_a_mixed_regime_array
ℓ / logaddexp precision helpers              -> test_ell_helpers_numba_and_numpy_keep_relative_precision_where_they_exist_for,
                                                test_numba_logaddexp_equals_mpmath
trainer: reference gradient, one SGD step numba/reference/hand, epochs with partial batch, argmax ties,
evaluate at large scores                     -> test_reference_minibatch_gradient_*, test_one_sgd_step_*,
                                                test_numba_epoch_*, test_argmax_ties_*, test_trainer_evaluate_*
"""

import importlib
import math
import zlib

import mpmath
import numpy as np
import pytest

import fctheory as fc
from tests.oracle import oracles as O
from fctheory.risk import evaluate_risk, true_risk_bruteforce
from fctheory.trainer import _numba_kernels as nk
from fctheory.trainer import _reference as ref

RTOL = 1e-12
PATHS = [dict(backend="numpy"), dict(backend="numba"), dict(backend="numpy", jit=False)]
PATH_IDS = ["numpy", "numba", "array-api"]


def _task(n_c, s_c, L, K, mu, seed=0):
    if K == n_c**L:
        return fc.Task.full(n_c, s_c, L, mu=mu)
    return fc.Task.random(n_c, s_c, L, K, mu=mu, seed=seed)


def _case(name):
    """(task, W, U, lam, layernorm, eps) of an adversarial input."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))  # hash() of str is salted per process
    if name == "ties_U_zero":  # all scores equal: CE = log K exactly
        t = _task(2, 2, 3, 8, [0.7, 0.3])
        return t, rng.standard_normal((3, t.n_w)), np.zeros((t.K, 9)), 0.1, False, 0.0
    if name == "ties_equal_rows":  # two classes with identical rows of U: exact ties between them
        t = _task(3, 2, 2, 9, "uniform")
        U = rng.standard_normal((t.K, 6))
        U[1] = U[0]
        U[4] = U[3]
        return t, rng.standard_normal((3, t.n_w)), U, 0.05, False, 0.0
    if name == "huge_margins":  # type-I-like, scaled: most normalizers underflow
        t = _task(2, 2, 3, 8, [0.6, 0.4])
        F = O.simplex_frame(2, 2)
        W, U = O.type3_weights(t.Z, 2, 2, 3, 2, 40.0, [40.0, 35.0], F=F)
        return t, W + 0.01 * rng.standard_normal(W.shape), U, 0.01, False, 0.0
    if name == "huge_random":
        t = _task(3, 2, 2, 6, "zipf", seed=3)
        return t, 300 * rng.standard_normal((2, t.n_w)), 300 * rng.standard_normal((t.K, 4)), 0.0, False, 0.0
    if name == "zero_W_layernorm_eps":  # φ(0) = 0 with eps > 0: every score 0
        t = _task(2, 2, 2, 3, "uniform", seed=1)
        return t, np.zeros((3, t.n_w)), rng.standard_normal((t.K, 6)), 0.2, True, 1e-5
    if name == "layernorm_K_lt_full":
        t = _task(3, 2, 2, 5, [0.8, 0.2], seed=2)
        return t, rng.standard_normal((3, t.n_w)), 2 * rng.standard_normal((t.K, 6)), 0.03, True, 0.0
    if name == "layernorm_eps_huge":
        t = _task(2, 3, 2, 4, [0.5, 0.3, 0.2])
        return t, rng.standard_normal((3, t.n_w)), 200 * rng.standard_normal((t.K, 6)), 0.01, True, 1e-3
    if name == "fallback_moderate_t":
        # class 0: half-maxima come from two *different* classes, so S′ = 2e^{−1000} underflows
        # while every total score is 1000: t = log 2, CE = log 3 (softplus, not max(t, 0))
        t = fc.Task(2, 1, 2, [[0, 0], [0, 1], [1, 0]])
        W = np.ones((1, 2))
        U = np.array([[500.0, 500.0], [1000.0, 0.0], [0.0, 1000.0]])
        return t, W, U, 0.0, False, 0.0
    if name == "random_nonuniform":
        t = _task(3, 3, 2, 7, [0.6, 0.3, 0.1], seed=5)
        return t, rng.standard_normal((2, t.n_w)), rng.standard_normal((t.K, 4)), 0.02, False, 0.0
    raise KeyError(name)


CASES = [
    "ties_U_zero",
    "ties_equal_rows",
    "huge_margins",
    "huge_random",
    "zero_W_layernorm_eps",
    "fallback_moderate_t",
    "layernorm_K_lt_full",
    "layernorm_eps_huge",
    "random_nonuniform",
]
_ORACLE = {}


def _oracle(name):
    if name not in _ORACLE:
        t, W, U, lam, ln, eps = _case(name)
        _ORACLE[name] = O.my_risk(t.Z, t.s_c, t.mu, W, U, lam, ln, eps, grad=True)
    return _ORACLE[name]


def _check_values(r, o):
    assert abs(r.R - o["R"]) <= RTOL * abs(o["R"]) + 1e-300
    assert abs(r.R0 - o["R0"]) <= RTOL * abs(o["R0"]) + 1e-300
    assert abs(r.penalty - o["penalty"]) <= 1e-14 * abs(o["penalty"])
    assert r.R0 >= 0


def _check_grad(r, o):
    g = np.concatenate([np.ravel(r.grad_W), np.ravel(r.grad_U)])
    go = np.concatenate([np.ravel(o["grad_W"]), np.ravel(o["grad_U"])])
    assert O.rel(g, go) <= RTOL
    assert abs(r.grad_norm - np.linalg.norm(go)) <= RTOL * np.linalg.norm(go) + 1e-300


@pytest.mark.parametrize("path", PATHS, ids=PATH_IDS)
@pytest.mark.parametrize("name", CASES)
def test_risk_only_path_equals_enumeration(name, path):
    t, W, U, lam, ln, eps = _case(name)
    r = evaluate_risk(t, W, U, lam, layernorm=ln, eps=eps, grad=False, **path)
    _check_values(r, _oracle(name))
    assert r.grad_W is None and r.grad_U is None and math.isnan(r.grad_norm)


@pytest.mark.parametrize("path", PATHS, ids=PATH_IDS)
@pytest.mark.parametrize("name", CASES)
def test_risk_and_gradient_path_equals_enumeration(name, path):
    t, W, U, lam, ln, eps = _case(name)
    r = evaluate_risk(t, W, U, lam, layernorm=ln, eps=eps, grad=True, **path)
    o = _oracle(name)
    _check_values(r, o)
    _check_grad(r, o)


@pytest.mark.parametrize("name", CASES)
def test_library_bruteforce_equals_independent_enumeration(name):
    t, W, U, lam, ln, eps = _case(name)
    for grad in (False, True):
        r = true_risk_bruteforce(t, W, U, lam, layernorm=ln, eps=eps, grad=grad)
        _check_values(r, _oracle(name))
        if grad:
            _check_grad(r, _oracle(name))


def test_ties_give_log_K_exactly():
    t, W, U, lam, ln, eps = _case("ties_U_zero")
    for path in PATHS:
        for grad in (False, True):
            assert evaluate_risk(t, W, U, 0.0, grad=grad, **path).R0 == pytest.approx(math.log(t.K), rel=1e-15)


@pytest.mark.parametrize("name", ["huge_margins", "huge_random", "layernorm_eps_huge", "fallback_moderate_t"])
def test_fallback_is_counted_identically_on_every_path_and_both_modes(name):
    t, W, U, lam, ln, eps = _case(name)
    counts = {
        (i, g): evaluate_risk(t, W, U, lam, layernorm=ln, eps=eps, grad=g, **p).n_fallback
        for i, p in enumerate(PATHS)
        for g in (False, True)
    }
    assert len(set(counts.values())) == 1
    assert next(iter(counts.values())) > 0  # the log-space path really ran
    assert evaluate_risk(t, W / 100, U / 100, lam, layernorm=ln, eps=eps).n_fallback == 0


def test_tiny_cross_entropy_keeps_relative_precision_against_mpmath():
    """Huge margins: every CE is ~e^{−thousands}; float enumeration and mpmath agree to 1e-12."""
    t, W, U, lam, ln, eps = _case("huge_margins")
    W, U = W * 0.2, U * 0.2  # CE ~ 1e-50: far below 1 ulp of anything O(1)
    ref = O.my_risk_mp(t.Z, t.s_c, t.mu, W, U)
    assert 0 < float(ref) < 1e-20
    for path in PATHS:
        for grad in (False, True):
            r = evaluate_risk(t, W, U, 0.0, grad=grad, **path)
            assert abs(r.R0 - float(ref)) <= 1e-12 * float(ref)


def _richardson(f, h):
    return (8 * (f(h) - f(-h)) - (f(2 * h) - f(-2 * h))) / (12 * h)


@pytest.mark.parametrize("name", ["random_nonuniform", "layernorm_K_lt_full", "ties_equal_rows"])
def test_gradient_of_every_path_equals_richardson_differences_of_the_oracle(name):
    t, W, U, lam, ln, eps = _case(name)
    rng = np.random.default_rng(7)
    dW, dU = rng.standard_normal(W.shape), rng.standard_normal(U.shape)
    fd = _richardson(lambda h: O.my_risk(t.Z, t.s_c, t.mu, W + h * dW, U + h * dU, lam, ln, eps)["R"], 1e-3)
    for path in PATHS:
        r = evaluate_risk(t, W, U, lam, layernorm=ln, eps=eps, grad=True, **path)
        an = np.sum(r.grad_W * dW) + np.sum(r.grad_U * dU)
        assert abs(an - fd) <= 1e-8 * (abs(fd) + r.grad_norm)


def test_oracle_gradient_equals_richardson_differences():
    """The independent enumeration's own gradient (used above) is itself right."""
    t, W, U, lam, ln, eps = _case("layernorm_eps_huge")
    W, U = W, U / 100
    o = O.my_risk(t.Z, t.s_c, t.mu, W, U, lam, ln, eps, grad=True)
    rng = np.random.default_rng(3)
    dW, dU = rng.standard_normal(W.shape), rng.standard_normal(U.shape)
    fd = _richardson(lambda h: O.my_risk(t.Z, t.s_c, t.mu, W + h * dW, U + h * dU, lam, ln, eps)["R"], 1e-3)
    an = np.sum(o["grad_W"] * dW) + np.sum(o["grad_U"] * dU)
    assert abs(an - fd) <= 1e-8 * abs(fd)


# ------------------------------------------------------------------------------------------ τ, τ* kernels
def test_tau_numba_and_numpy_kernels_equal_mpmath_on_a_mixed_regime_array():
    lam0 = fc.lambda_trivial(n_c=3, n_w=6, L=2, K=9)
    lam = np.array([1e-12, 1e-6, 1e-3, 0.05, lam0 * (1 - 1e-7), lam0 * (1 - 1e-3), lam0, 2 * lam0])
    refs = [O.mp_tau(3, 6, 2, 9, float(l)) for l in lam]
    a = fc.tau(n_c=3, n_w=6, L=2, K=9, lam=lam, backend="numba")
    b = fc.tau(n_c=3, n_w=6, L=2, K=9, lam=lam, backend="numpy")
    for x, y, r, l in zip(a, b, refs, lam):
        tol = 1e-12 + 2e-18 / max(1 - l / lam0, 1e-300)
        if r == 0:
            assert x == 0 and y == 0
        else:
            assert abs(x - float(r)) <= tol * float(r) and abs(y - float(r)) <= tol * float(r)


def test_tau_star_numba_and_numpy_kernels_equal_mpmath_on_a_mixed_regime_array():
    lam = np.array([1e-12, 1e-6, 1e-2, 1.0, 1e3, 1e8])
    a = fc.tau_star(n_c=3, L=2, K=9, d=4, lam=lam, backend="numba")
    b = fc.tau_star(n_c=3, L=2, K=9, d=4, lam=lam, backend="numpy")
    for x, y, l in zip(a, b, lam):
        r = float(O.mp_tau_star(3, 2, 9, 4, float(l)))
        assert abs(x - r) <= RTOL * r and abs(y - r) <= RTOL * r


# ------------------------------------------------------------------------------------------ trainer kernels
def _batch(seed=0, K=5, L=3, n_w=6, d=4, b=7, scale=1.0):
    rng = np.random.default_rng(seed)
    E = scale * rng.standard_normal((n_w, d))
    U = scale * rng.standard_normal((K, L * d))
    X = rng.integers(0, n_w, size=(b, L))
    y = rng.integers(0, K, size=b)
    return E, U, X, y


def _my_minibatch(E, U, X, y, layernorm, eps):
    """Mean CE of the minibatch and its gradients (∂E, ∂U), by hand (no weight decay)."""
    b, L = X.shape
    n_w, d = E.shape
    K = U.shape[0]
    V = O.my_phi(E.T, eps).T if layernorm else E
    dU = np.zeros_like(U)
    dV = np.zeros_like(E)
    loss = []
    correct = 0
    for i in range(b):
        s = O.my_scores(V.T, U, list(X[i]), K, L, d)
        ce, g = O.my_ce_and_dy(s, int(y[i]))
        loss.append(ce)
        correct += int(max(range(K), key=lambda k: (s[k], -k)) == y[i])  # ties: lowest index
        for j in range(K):
            for l in range(L):
                dU[j, l * d : (l + 1) * d] += g[j] * V[X[i, l]] / b
                dV[X[i, l]] += g[j] * U[j, l * d : (l + 1) * d] / b
    if layernorm:
        dE = np.stack([O.phi_jacobian_cs(E[w], eps).T @ dV[w] for w in range(n_w)])
    else:
        dE = dV
    return math.fsum(loss), correct, dE, dU


@pytest.mark.parametrize("layernorm,eps", [(False, 0.0), (True, 0.0), (True, 1e-5)])
def test_reference_minibatch_gradient_equals_hand_gradient_and_differences(layernorm, eps):
    E, U, X, y = _batch(1)
    loss, correct, dE, dU = ref.minibatch_grad(np, E.copy(), U.copy(), X, y, layernorm, eps, np.add.at)
    l2, c2, dE2, dU2 = _my_minibatch(E, U, X, y, layernorm, eps)
    assert abs(loss - l2) <= 1e-13 * l2 and correct == c2
    assert O.rel(dE, dE2) <= 1e-12 and O.rel(dU, dU2) <= 1e-12
    b = X.shape[0]
    rng = np.random.default_rng(2)
    vE, vU = rng.standard_normal(E.shape), rng.standard_normal(U.shape)
    fd = _richardson(lambda h: _my_minibatch(E + h * vE, U + h * vU, X, y, layernorm, eps)[0] / b, 1e-3)
    an = np.sum(dE * vE) + np.sum(dU * vU)
    assert abs(an - fd) <= 1e-8 * (abs(fd) + 1)


@pytest.mark.parametrize("layernorm,eps", [(False, 0.0), (True, 1e-5)])
def test_one_sgd_step_numba_reference_and_hand_agree(layernorm, eps):
    E, U, X, y = _batch(3)
    lr, lw, lu = 0.3, 1e-2, 2e-2
    _, _, dE, dU = _my_minibatch(E, U, X, y, layernorm, eps)
    E_hand = E - lr * (dE + lw * E)
    U_hand = U - lr * (dU + lu * U)
    E1, U1 = E.copy(), U.copy()
    ref.sgd_step(np, E1, U1, X, y, lr, lw, lu, layernorm, eps, np.add.at)
    E2, U2 = E.copy(), U.copy()
    perm = np.arange(X.shape[0], dtype=np.int64)
    nk.train_epoch(E2, U2, X, y, perm, X.shape[0], np.array([lr, lw, lu, eps]), layernorm)
    for A, B in ((E1, E_hand), (U1, U_hand), (E2, E_hand), (U2, U_hand)):
        assert O.rel(A, B) <= 1e-13


def test_numba_epoch_equals_reference_steps_with_partial_last_batch():
    E, U, X, y = _batch(4, b=11)
    perm = np.random.default_rng(0).permutation(11).astype(np.int64)
    params = np.array([0.2, 1e-3, 1e-3, 1e-5])
    for ln in (False, True):
        E1, U1 = E.copy(), U.copy()
        tot1, c1 = 0.0, 0
        for b0 in range(0, 11, 4):
            rows = perm[b0 : b0 + 4]
            ls, c = ref.sgd_step(np, E1, U1, X[rows], y[rows], 0.2, 1e-3, 1e-3, ln, 1e-5, np.add.at)
            tot1 += ls
            c1 += int(c)
        E2, U2 = E.copy(), U.copy()
        tot2, c2 = nk.train_epoch(E2, U2, X, y, perm, 4, params, ln)
        assert abs(tot1 - tot2) <= 1e-13 * tot1 and c1 == c2
        assert O.rel(E2, E1) <= 1e-13 and O.rel(U2, U1) <= 1e-13


def test_argmax_ties_go_to_the_first_class_on_every_trainer_path():
    E, U, X, y = _batch(5, b=40)
    U[:] = 0.0  # every score is 0: a tie between all classes
    first = int((y == 0).sum())
    params = np.array([0.1, 0.0, 0.0, 1e-5])
    assert nk.evaluate(E, U, X, y, 7, params, False)[1] == first
    assert ref.evaluate(np, E, U, X, y, 7, False, 1e-5)[1] == first
    assert int(ref.minibatch_grad(np, E.copy(), U.copy(), X, y, False, 0.0, np.add.at)[1]) == first
    _, c = nk.train_epoch(E.copy(), U.copy(), X, y, np.arange(40, dtype=np.int64), 40, params, False)
    assert c == first
    # a tie between classes 2 and 3 only: the lower index wins
    U2 = np.zeros_like(U)
    U2[2] = U2[3] = 1.0
    Xp = np.zeros_like(X)
    E2 = np.ones_like(E)
    y2 = np.full(40, 2)
    assert nk.evaluate(E2, U2, Xp, y2, 7, params, False)[1] == 40
    assert ref.evaluate(np, E2, U2, Xp, y2, 7, False, 1e-5)[1] == 40


def test_trainer_evaluate_loss_equals_hand_cross_entropy_at_large_scores():
    E, U, X, y = _batch(6, b=9, scale=20.0)  # scores in the hundreds: needs the max shift
    params = np.array([0.1, 0.0, 0.0, 1e-5])
    for ln in (False, True):
        hand = _my_minibatch(E, U, X, y, ln, 1e-5)
        for got in (nk.evaluate(E, U, X, y, 4, params, ln), ref.evaluate(np, E, U, X, y, 4, ln, 1e-5)):
            assert abs(got[0] - hand[0]) <= 1e-12 * hand[0] + 1e-12 and got[1] == hand[1]


# ------------------------------------------------------------------------------------------ precision helpers
def _mp_ell(A, t):
    with mpmath.workdps(60):
        A, t = mpmath.mpf(A), mpmath.mpf(t)
        return mpmath.log(1 + A * mpmath.expm1(t))


@pytest.mark.parametrize(
    "A,t", [(1e-20, 5.0), (1e-12, 1.0), (1e-30, 40.0), (0.3, 1e-9), (1e-8, 0.5), (0.5, 800.0), (2.0**-40, 3.0)]
)
def test_ell_helpers_numba_and_numpy_keep_relative_precision_where_they_exist_for(A, t):
    """ℓ(A, t) = log(1 + A(e^t − 1)) with A tiny and t ≥ 1: the logaddexp branch must keep full
    relative precision when the result is ~1e-18 (log1p, not log(1 + ·))."""
    kern = importlib.import_module("fctheory._kernels")
    logmath = importlib.import_module("fctheory._logmath")
    logA, log1mA = math.log(A), math.log1p(-A)
    ref = float(_mp_ell(A, t))
    # the inputs log A and log A + t carry (|log A| + t)·eps absolute; log(1 + ·) would lose eps/ℓ
    tol = 2.3e-16 * (2 + abs(logA) + t) * ref
    assert abs(kern.ell(logA, log1mA, t) - ref) <= tol
    assert abs(float(logmath.log1p_aexpm1(np.float64(logA), np.float64(log1mA), np.float64(t))) - ref) <= tol


@pytest.mark.parametrize("a,b", [(-1e-20, -41.0), (0.0, -745.0), (-3e-17, -37.5), (700.0, 699.0), (-np.inf, 2.0)])
def test_numba_logaddexp_equals_mpmath(a, b):
    kern = importlib.import_module("fctheory._kernels")
    with mpmath.workdps(60):
        ref = float(mpmath.log(mpmath.exp(mpmath.mpf(a)) + mpmath.exp(mpmath.mpf(b))))
    got = kern.logaddexp(a, b)
    assert abs(got - ref) <= 2e-16 * abs(ref) + 1e-320
