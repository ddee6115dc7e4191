"""fctheory._lbfgs: the L-BFGS iteration shared by the minimisers (oracles: known minima)."""

from __future__ import annotations

import time

import numpy as np
import pytest

from fctheory._lbfgs import lbfgs_iterate


def _rosenbrock(x):
    a, b = x
    f = (1 - a) ** 2 + 100 * (b - a * a) ** 2
    g = np.array([-2 * (1 - a) - 400 * a * (b - a * a), 200 * (b - a * a)])
    return f, g, False


def _run(fg, x0, **kw):
    f, g, _ = fg(x0)
    args = dict(gtol=1e-10, maxiter=500, memory=10, sec=None, callback=None) | kw
    return lbfgs_iterate(fg, x0, f, g, [f], "iteration limit", args["gtol"], args["maxiter"], args["memory"],
                         args["sec"], time.perf_counter(), args["callback"])  # fmt: skip


def test_rosenbrock_minimum_is_reached():
    it, x, f, g, hist, msg = _run(_rosenbrock, np.array([-1.2, 1.0]))
    assert msg == "gradient norm below gtol"
    np.testing.assert_allclose(x, [1.0, 1.0], atol=1e-9)
    assert f < 1e-18 and all(b <= a + 1e-13 for a, b in zip(hist, hist[1:]))  # monotone up to rounding noise


def test_quadratic_is_solved_in_few_iterations():
    rng = np.random.default_rng(0)
    Q = rng.normal(size=(20, 20))
    A = Q @ Q.T + 20 * np.eye(20)
    b = rng.normal(size=20)
    x_star = np.linalg.solve(A, b)

    def fg(x):
        return 0.5 * x @ A @ x - b @ x, A @ x - b, False

    it, x, *_ = _run(fg, np.zeros(20), memory=20)
    np.testing.assert_allclose(x, x_star, rtol=1e-9)
    assert it <= 60


def test_iteration_limit_and_callback():
    seen = []
    it, x, f, g, hist, msg = _run(_rosenbrock, np.array([-1.2, 1.0]), maxiter=3, callback=lambda *a: seen.append(a))
    assert it == 3 and msg == "iteration limit" and len(seen) == 3 and len(hist) == 4


def test_time_limit_stops_the_iteration():
    it, *_, msg = _run(_rosenbrock, np.array([-1.2, 1.0]), sec=0.0)
    assert it == 0 and "max_seconds" in msg


def test_callback_exception_propagates():
    class Stop(Exception):
        pass

    def cb(it, f, gn):
        raise Stop

    with pytest.raises(Stop):
        _run(_rosenbrock, np.array([-1.2, 1.0]), callback=cb)
