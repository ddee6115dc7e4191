"""L-BFGS with a strong-Wolfe line search that tolerates rounding noise in f: the iteration shared by the
true-risk minimiser (:func:`fctheory.risk.minimize_true_risk`), the empirical-risk minimiser
(:func:`fctheory.finite_sample.minimize_empirical_risk`) and the fixed-rank polish of the convex problems
(:mod:`fctheory._nuclear`)."""

from __future__ import annotations

import time

import numpy as np

from ._numerics import safe_norm

__all__ = ["lbfgs_iterate"]


def _two_loop(g, S, Yv, rho):
    q = g.copy()
    alphas = []
    for s, y, r in zip(reversed(S), reversed(Yv), reversed(rho)):
        a = r * (s @ q)
        alphas.append(a)
        q -= a * y
    if S:
        q *= (S[-1] @ Yv[-1]) / (Yv[-1] @ Yv[-1])
    for (s, y, r), a in zip(zip(S, Yv, rho), reversed(alphas)):
        b = r * (y @ q)
        q += (a - b) * s
    return q


def _line_search(phi, f0, d0, a1, c1=1e-4, c2=0.9, max_eval=40):
    """Strong-Wolfe step; the sufficient-decrease test tolerates rounding noise in f.

    Near a minimum the decrease of f falls below its rounding error long before the gradient is
    1e-10; the curvature condition |φ'(a)| ≤ c2|φ'(0)| uses the exact directional derivative and
    keeps the step meaningful there.
    """
    noise = 1e-13 * max(1.0, abs(f0))
    evals = []

    def ev(a):
        f, d, g = phi(a)
        evals.append((a, f, d, g))
        return f, d, g

    def armijo(a, f):
        return f <= f0 + c1 * a * d0 + noise

    def zoom(lo, f_lo, d_lo, g_lo, hi, f_hi, d_hi):
        for _ in range(max_eval):
            span = hi - lo
            a = lo - d_lo * span / (d_hi - d_lo) if d_hi != d_lo else lo + 0.5 * span
            if not (min(lo, hi) + 0.1 * abs(span) <= a <= max(lo, hi) - 0.1 * abs(span)):
                a = lo + 0.5 * span
            f, d, g = ev(a)
            if not armijo(a, f) or f > f_lo + noise:
                hi, d_hi = a, d
            else:
                if abs(d) <= c2 * abs(d0):
                    return a, f, g
                if d * span >= 0:
                    hi, d_hi = lo, d_lo
                lo, f_lo, d_lo, g_lo = a, f, d, g
            if abs(hi - lo) < 1e-16 * max(1.0, abs(lo)):
                break
        return (lo, f_lo, g_lo) if lo > 0 else None

    a_prev, f_prev, d_prev, g_prev = 0.0, f0, d0, None
    a = a1
    for i in range(max_eval):
        f, d, g = ev(a)
        if not np.isfinite(f) or not armijo(a, f) or (i > 0 and f > f_prev + noise):
            if not np.isfinite(f):
                f, d = np.inf, np.inf
            return zoom(a_prev, f_prev, d_prev, g_prev, a, f, d)
        if abs(d) <= c2 * abs(d0):
            return a, f, g
        if d >= 0:
            return zoom(a, f, d, g, a_prev, f_prev, d_prev)
        a_prev, f_prev, d_prev, g_prev = a, f, d, g
        a *= 2.0
    return None


def lbfgs_iterate(fg, x, f, g, history, message, gtol, maxiter, memory, sec, t0, callback):
    """L-BFGS iterations (strong-Wolfe line search) from ``x`` with value ``f`` and gradient ``g``.

    ``fg(x)`` returns ``(f, g, overflow)``. Stops when ``‖g‖ ≤ gtol``, after ``maxiter`` iterations, when
    ``sec`` seconds have passed since ``t0`` (``sec=None``: no limit) or when the line search fails twice in
    a row; ``message`` is the reason reported if the iteration limit is reached. Each accepted value is
    appended to ``history`` and passed to ``callback(it, f, ‖g‖)``. Shared by the true-risk and the
    empirical-risk minimisers. Returns ``(iterations, x, f, g, history, message)``.
    """
    S, Yv, rho = [], [], []
    it = 0
    for it in range(1, maxiter + 1):
        gn = safe_norm(g)
        if gn <= gtol:
            message = "gradient norm below gtol"
            it -= 1
            break
        if sec is not None and time.perf_counter() - t0 > sec:
            message = f"time budget max_seconds={sec} reached"
            it -= 1
            break
        p = -_two_loop(g, S, Yv, rho)
        dd = float(g @ p)
        if not dd < 0:
            S, Yv, rho = [], [], []
            p = -g
            dd = -gn * gn
        a1 = 1.0 if S else min(1.0, 1.0 / gn)

        def phi(a, x=x, p=p):
            fa, ga, _ = fg(x + a * p)
            return fa, float(ga @ p), ga

        out = _line_search(phi, f, dd, a1)
        if out is None:
            if S:  # restart from steepest descent once before giving up
                S, Yv, rho = [], [], []
                continue
            message = "line search failed"
            break
        a, f_new, g_new = out
        s = a * p
        y = g_new - g
        sy = float(s @ y)
        if sy > 1e-300:
            S.append(s)
            Yv.append(y)
            rho.append(1.0 / sy)
            if len(S) > memory:
                S.pop(0), Yv.pop(0), rho.pop(0)
        x = x + s
        f, g = f_new, g_new
        history.append(f)
        if callback is not None:
            callback(it, f, safe_norm(g))
    return it, x, f, g, history, message
