"""Refusals of the regularised UFM (``fctheory.ufm.regularized``): the point shapes of the objectives, an
overflowing objective, the λ and q range of the numerical solvers, and the budget of the L-BFGS and cvxpy
checks. Each message names the parameter, its value and the constraint (the project's error contract)."""

import re

import numpy as np
import pytest

from fctheory import FCTheoryError, budget
from fctheory.ufm import regularized

OBJECTIVES = [regularized.ce_objective, regularized.mse_objective]


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_objective_refuses_a_W_with_one_row(objective):
    W, H = np.zeros((1, 2)), np.zeros((2, 2))
    with pytest.raises(
        FCTheoryError,
        match=r"^W=\[\[0\.0, 0\.0\]\] is invalid: must have K >= 2 rows \(classes\), got shape \(1, 2\)$",
    ):
        objective(W, H, None, n_spl=2, lam_W=0.1, lam_H=0.1)


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_objective_refuses_an_H_of_the_wrong_shape(objective):
    W, H = np.zeros((3, 2)), np.zeros((2, 5))
    msg = r"must have shape \(m, K\*n\) = \(2, 6\) for W of shape \(3, 2\) and n = 2, got \(2, 5\)$"
    with pytest.raises(FCTheoryError, match=r"^H=array\(shape=\(2, 5\), dtype=float64\) is invalid: " + msg):
        objective(W, H, None, n_spl=2, lam_W=0.1, lam_H=0.1)


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_objective_refuses_a_bias_of_the_wrong_length(objective):
    W, H = np.zeros((3, 2)), np.zeros((2, 6))
    with pytest.raises(
        FCTheoryError, match=r"^b=\[0\.0, 0\.0\] is invalid: must have K = 3 entries, got shape \(2,\)$"
    ):
        objective(W, H, np.zeros(2), n_spl=2, lam_W=0.1, lam_H=0.1)


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_objective_refuses_a_point_whose_value_overflows(objective):
    # ‖W‖² = 6e310 overflows while every gradient stays finite (H = 0: dW = λ_W W, dH = Wᵀ G);
    # λ_W = 0 makes the penalty 0·inf = NaN, the invalid operation the objective must also catch
    W, H = np.full((3, 2), 1e155), np.zeros((2, 3))
    msg = r"the objective or its gradient at \(W, H\) of this magnitude overflows float64 for this input$"
    for lam_W in (0.0, 1.0):
        with pytest.raises(FCTheoryError, match=r"^W='array of shape \(3, 2\)' is invalid: " + msg):
            objective(W, H, None, n_spl=1, lam_W=lam_W, lam_H=0.1)


@pytest.mark.parametrize("name", ["lam_W", "lam_H"])
@pytest.mark.parametrize("lam,shown", [(9.99e-9, "9.99e-09"), (1.01e8, "101000000.0")])
def test_solvers_refuse_a_lambda_outside_their_range(name, lam, shown):
    kw = dict(lam_W=0.1, lam_H=0.1) | {name: lam}
    rule = r"the numerical solvers need 1e-08 <= lam <= 1e\+08 \(use the closed form outside\)$"
    for solve in (regularized.solve_ce, regularized.solve_mse):
        with pytest.raises(FCTheoryError, match=f"^{name}={re.escape(shown)} is invalid: {rule}"):
            solve(K=2, n_spl=1, d=2, **kw)
    with pytest.raises(FCTheoryError, match=f"^{name}={re.escape(shown)} is invalid: {rule}"):
        regularized.convex_ce(K=2, n_spl=1, **kw)


@pytest.mark.parametrize("lam_W,lam_H", [(1e-8, 1e-8), (1e8, 1e8), (1e-8, 1e8)])
def test_solver_range_includes_its_ends(lam_W, lam_H):
    # q = √(nλ_Wλ_H) = 1e-8 and 1e8 exactly at the corners: both ends of the documented ranges are accepted
    assert regularized._solver_lams(2, 1, lam_W, lam_H) is None


def test_solver_range_bounds_q_not_Kq():
    # q = √(1e15) ≈ 3.2e7 is inside [1e-8, 1e8]; K·q = 1.3e8 is not, and must not be what is checked
    assert regularized._solver_lams(4, 1, 1e8, 1e7) is None


def test_solvers_refuse_a_q_above_the_range_naming_n_spl():
    rule = r"the numerical solvers need q = sqrt\(n_spl\*lam_W\*lam_H\) in \[1e-08, 1e\+08\], got 1\.41e\+08$"
    with pytest.raises(FCTheoryError, match="^n_spl=2 is invalid: " + rule):
        regularized.solve_ce(K=2, n_spl=2, d=2, lam_W=1e8, lam_H=1e8)
    with pytest.raises(FCTheoryError, match="^n_spl=2 is invalid: " + rule):
        regularized.convex_mse(K=2, n_spl=2, lam_W=1e8, lam_H=1e8)


def _budget_message(name, value, what, est, unit, field, limit):
    return (
        f"^{name}={value} is invalid: {re.escape(what)} needs about {re.escape(est)} {unit}, over the budget "
        f"{field}={re.escape(limit)} "
    )


# sizes where K, n_spl and d in turn are the largest (the one blamed), and one so small that every unknown
# shows in the estimates' three digits (no bias: dim = 4, not 5); N = K·n_spl, dim = K·d + d·N
SOLVE_SIZES = [(100, 20, 3), (10, 100, 3), (3, 2, 5000), (2, 1, 1)]


@pytest.mark.parametrize("solve,what", [(regularized.solve_ce, "ce"), (regularized.solve_mse, "mse")])
@pytest.mark.parametrize("K,n,d", SOLVE_SIZES)
def test_solvers_are_sized_against_the_budget(solve, what, K, n, d):
    # estimates of _common.solver_budget: items = dim, bytes = 240·dim + 64·K·N,
    # seconds = n_starts·2000·(8·K·d·N + 30·K·N + 50 000) ns
    N = K * n
    dim = K * d + d * N
    name, value = max((("K", K), ("n_spl", n), ("d", d)), key=lambda t: t[1])
    label = f"ufm.solve_{what} (L-BFGS)"
    kw = dict(K=K, n_spl=n, d=d, lam_W=0.1, lam_H=0.1, n_starts=2)
    with budget(max_items=1), pytest.raises(FCTheoryError) as e:
        solve(**kw)
    assert re.match(_budget_message(name, value, label, f"{dim:.3g}", "items", "max_items", "1"), str(e.value))
    with budget(max_bytes=1), pytest.raises(FCTheoryError) as e:
        solve(**kw)
    est = f"{240 * dim + 64 * K * N:.3g}"
    assert re.match(_budget_message(name, value, label, est, "bytes", "max_bytes", "1"), str(e.value))
    with budget(max_seconds=1e-9), pytest.raises(FCTheoryError) as e:
        solve(**kw)
    est = f"{2 * 2000 * (8 * K * d * N + 30 * K * N + 50_000) / 1e9:.3g}"
    assert re.match(_budget_message(name, value, label, est, "s", "max_seconds", "1e-09"), str(e.value))


@pytest.mark.parametrize("convex,loss", [(regularized.convex_ce, "ce"), (regularized.convex_mse, "mse")])
@pytest.mark.parametrize("K,n,name", [(3, 3, "n_spl"), (5, 2, "K"), (2, 7, "n_spl")])
def test_convex_programs_are_sized_against_the_budget_naming_the_larger_size(convex, loss, K, n, name):
    # the SDP on (K+N)² unknowns: bytes = 480·(K+N)², seconds = 1e-6·(K+N)⁴; ties blame n_spl
    KN = K + K * n
    value = n if name == "n_spl" else K
    label = f"ufm.convex_{loss} (cvxpy SDP)"
    with budget(max_bytes=1), pytest.raises(FCTheoryError) as e:
        convex(K=K, n_spl=n, lam_W=0.1, lam_H=0.1)
    est = f"{480 * KN**2:.3g}"
    assert re.match(_budget_message(name, value, label, est, "bytes", "max_bytes", "1"), str(e.value))
    with budget(max_seconds=1e-9), pytest.raises(FCTheoryError) as e:
        convex(K=K, n_spl=n, lam_W=0.1, lam_H=0.1)
    est = f"{1000 * KN**4 / 1e9:.3g}"
    assert re.match(_budget_message(name, value, label, est, "s", "max_seconds", "1e-09"), str(e.value))
