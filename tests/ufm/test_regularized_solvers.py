"""The numerical side of the regularised UFM (``fctheory.ufm.regularized``): the objectives' bias term and
gradient against an independent oracle and finite differences, the fields of the L-BFGS result (value,
per-start values, method, bias, seed reproducibility), the defaults of every entry point, and the cvxpy
reformulations' solver handling (the CLARABEL → SCS fallback, failed statuses, a missing cvxpy)."""

import sys

import cvxpy
import numpy as np
import pytest

from fctheory import FCTheoryError
from fctheory.ufm import regularized
from tests.oracle.oracles import ufm_ce_objective, ufm_mse_objective

K, N_SPL, LW, LH = 3, 2, 0.05, 0.1
OBJECTIVES = [(regularized.ce_objective, ufm_ce_objective), (regularized.mse_objective, ufm_mse_objective)]


def _point(rng, K=K, d=3, n=N_SPL):
    return rng.standard_normal((K, d)), rng.standard_normal((d, K * n)), rng.standard_normal(K)


@pytest.mark.parametrize("objective,oracle", OBJECTIVES)
def test_objective_value_with_a_bias_matches_the_oracle(objective, oracle):
    W, H, b = _point(np.random.default_rng(0))
    v = objective(W, H, b, n_spl=N_SPL, lam_W=LW, lam_H=LH)[0]
    assert v == pytest.approx(oracle(W, H, b, N_SPL, LW, LH), rel=1e-13)
    assert abs(v - oracle(W, H, None, N_SPL, LW, LH)) > 1e-3  # the bias is not ignored


@pytest.mark.parametrize("objective,oracle", OBJECTIVES)
def test_objective_bias_gradient_matches_finite_differences(objective, oracle):
    W, H, b = _point(np.random.default_rng(1))
    db = objective(W, H, b, n_spl=N_SPL, lam_W=LW, lam_H=LH)[3]
    h = 1e-6
    for k in range(K):
        e = np.zeros(K)
        e[k] = h
        fd = (oracle(W, H, b + e, N_SPL, LW, LH) - oracle(W, H, b - e, N_SPL, LW, LH)) / (2 * h)
        assert db[k] == pytest.approx(fd, abs=1e-8)


@pytest.mark.parametrize("objective,oracle", OBJECTIVES)
def test_objective_without_a_bias_has_no_bias_gradient(objective, oracle):
    W, H, _ = _point(np.random.default_rng(2))
    out = objective(W, H, None, n_spl=N_SPL, lam_W=LW, lam_H=LH)
    assert len(out) == 4 and out[3] is None


@pytest.mark.parametrize("closed", [regularized.ce, regularized.mse])
def test_closed_forms_default_to_no_bias(closed):
    o = closed(K=K, n_spl=N_SPL, lam_W=LW, lam_H=LH)
    assert o.bias is None and not o.model.endswith("+bias")


@pytest.mark.parametrize("solve", [regularized.solve_ce, regularized.solve_mse])
def test_solvers_default_to_no_bias_and_three_starts(solve):
    r = solve(K=2, n_spl=1, d=2, lam_W=0.1, lam_H=0.1, seed=0)
    assert r.b is None and len(r.values) == 3


@pytest.mark.parametrize(
    "solve,closed,oracle",
    [
        (regularized.solve_ce, regularized.ce, ufm_ce_objective),
        (regularized.solve_mse, regularized.mse, ufm_mse_objective),
    ],
)
@pytest.mark.parametrize("bias", [False, True])
def test_solver_result_fields(solve, closed, oracle, bias):
    r = solve(K=K, n_spl=N_SPL, d=K, lam_W=LW, lam_H=LH, bias=bias, n_starts=2, seed=4)
    assert r.method == "L-BFGS"
    assert r.W.shape == (K, K) and r.H.shape == (K, K * N_SPL)
    assert (r.b is not None and r.b.shape == (K,)) if bias else r.b is None
    assert len(r.values) == 2 and r.value == min(r.values)
    assert r.value == pytest.approx(closed(K=K, n_spl=N_SPL, lam_W=LW, lam_H=LH, bias=bias).value, rel=1e-9)
    assert r.value == pytest.approx(oracle(r.W, r.H, r.b, N_SPL, LW, LH), rel=1e-12)  # the value is of (W, H, b)
    assert r.grad_norm < 1e-6


@pytest.mark.parametrize("solve", [regularized.solve_ce, regularized.solve_mse])
def test_solver_is_reproducible_from_its_seed(solve):
    kw = dict(K=2, n_spl=1, d=2, lam_W=0.1, lam_H=0.1, n_starts=1)
    a, b = solve(**kw, seed=7), solve(**kw, seed=7)
    np.testing.assert_array_equal(a.W, b.W)
    np.testing.assert_array_equal(solve(**kw, seed=np.random.default_rng(7)).H, a.H)  # a Generator = its seed
    assert not np.allclose(solve(**kw, seed=8).W, a.W)  # the start depends on the seed (rotated optima)


@pytest.mark.parametrize("solve", [regularized.solve_ce, regularized.solve_mse])
def test_solver_refuses_a_non_finite_optimum(solve, monkeypatch):
    def broken(fun, x0s):
        return x0s[0], np.inf, [np.inf], np.inf

    monkeypatch.setattr(regularized, "lbfgs_multistart", broken)
    with pytest.raises(FCTheoryError, match=r"^lam_W=0\.1 is invalid: the L-BFGS optimum overflows float64"):
        solve(K=2, n_spl=1, d=2, lam_W=0.1, lam_H=0.2, n_starts=1, seed=0)


# ----------------------------------------------------------------------------- cvxpy reformulations
CONVEX = [(regularized.convex_ce, regularized.ce), (regularized.convex_mse, regularized.mse)]


@pytest.mark.parametrize("convex,closed", CONVEX)
def test_convex_bias_is_returned_only_when_asked(convex, closed):
    v, Z, b = convex(K=2, n_spl=1, lam_W=0.1, lam_H=0.1)
    assert b is None and Z.shape == (2, 2)
    v, Z, b = convex(K=2, n_spl=1, lam_W=0.1, lam_H=0.1, bias=True)
    assert b.shape == (2,) and v == pytest.approx(closed(K=2, n_spl=1, lam_W=0.1, lam_H=0.1, bias=True).value, abs=1e-7)


def _patch_solve(monkeypatch, behave):
    """Route cvxpy's Problem.solve through ``behave(problem, solve, solver)``; return the solvers asked for."""
    real = cvxpy.Problem.solve
    calls = []

    def fake(self, *args, **kwargs):
        calls.append(kwargs.get("solver"))
        return behave(self, lambda: real(self, *args, **kwargs), kwargs.get("solver"))

    monkeypatch.setattr(cvxpy.Problem, "solve", fake)
    return calls


def _clarabel_fails(problem, solve, solver):
    if str(solver).upper() == "CLARABEL":
        raise cvxpy.SolverError("boom")
    return solve()


@pytest.mark.parametrize("convex,closed", CONVEX)
def test_convex_falls_back_from_clarabel_to_scs(convex, closed, monkeypatch):
    calls = _patch_solve(monkeypatch, _clarabel_fails)
    v, _, _ = convex(K=2, n_spl=1, lam_W=0.1, lam_H=0.1)
    assert calls == ["CLARABEL", "SCS"]
    assert v == pytest.approx(closed(K=2, n_spl=1, lam_W=0.1, lam_H=0.1).value, abs=1e-3)  # SCS: first-order accuracy


def test_convex_with_scs_asked_for_has_no_fallback(monkeypatch):
    def always_fails(problem, solve, solver):
        raise cvxpy.SolverError("boom")

    calls = _patch_solve(monkeypatch, always_fails)
    with pytest.raises(
        FCTheoryError,
        match=r"^solver='SCS' is invalid: the convex program was not solved \(SCS: SolverError: boom\)$",
    ):
        regularized.convex_ce(K=2, n_spl=1, lam_W=0.1, lam_H=0.1, solver="SCS")
    assert calls == ["SCS"]


def _solved_then(**change):
    def behave(problem, solve, solver):
        out = solve()
        if "status" in change:
            problem._status = change["status"]
        if "value" in change:
            problem._value = change["value"]
        if change.get("no_point"):
            for var in problem.variables():
                var.value = None
        return out

    return behave


@pytest.mark.parametrize(
    "change,shown",
    [
        (dict(status="infeasible"), "infeasible"),
        (dict(value=None), "optimal"),
        (dict(value=np.nan), "optimal"),
        (dict(no_point=True), "optimal"),
    ],
)
def test_convex_refuses_an_unsolved_program_listing_every_solver(change, shown, monkeypatch):
    calls = _patch_solve(monkeypatch, _solved_then(**change))
    with pytest.raises(
        FCTheoryError,
        match=rf"^solver='CLARABEL' is invalid: the convex program was not solved "
        rf"\(CLARABEL: status {shown}; SCS: status {shown}\)$",
    ):
        regularized.convex_mse(K=2, n_spl=1, lam_W=0.1, lam_H=0.1)
    assert calls == ["CLARABEL", "SCS"]


def test_convex_accepts_an_inaccurate_optimum(monkeypatch):
    calls = _patch_solve(monkeypatch, _solved_then(status="optimal_inaccurate"))
    v, _, _ = regularized.convex_ce(K=2, n_spl=1, lam_W=0.1, lam_H=0.1)
    assert calls == ["CLARABEL"] and v == pytest.approx(
        regularized.ce(K=2, n_spl=1, lam_W=0.1, lam_H=0.1).value, abs=1e-7
    )


def test_convex_without_cvxpy_is_refused_with_the_reason(monkeypatch):
    monkeypatch.setitem(sys.modules, "cvxpy", None)  # `import cvxpy` now raises ImportError
    with pytest.raises(FCTheoryError, match=r"^solver='CLARABEL' is invalid: cvxpy is not importable \(.*cvxpy.*\)$"):
        regularized.convex_ce(K=2, n_spl=1, lam_W=0.1, lam_H=0.1)
