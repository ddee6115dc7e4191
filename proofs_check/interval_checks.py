"""The certified enclosures of the predictors (``precision="interval"``) against the independent oracle.

An :class:`~fctheory._interval.Enclosure` claims to contain the exact value of the paper's formula. The claim
is checked here against :mod:`proofs_check._oracle` (mpmath at 50 digits from the printed formulas, sharing
no code with the library's ball arithmetic): every enclosure must contain the oracle's value and be tight.
The oracle's own error (≤ 1e-35 relative, its root finders stopping at a bracket of 1e-45) is far below the
balls' radii (≥ 2^-128 relative at the library's first working precision), so a sound enclosure contains it.
"""

from __future__ import annotations

import mpmath
import numpy as np

import fctheory

from . import _oracle as orc
from .registry import expect, register, tolerances

# Theorem 1 (n_c, n_w, L, K, λ): a generic point, a partial latent set (K < n_c^L), the paper's size and an
# extreme one (L = 40, K = 10^12); λ = None: just below λ₀ (relative distance ``near``), then just above it
_T1 = [
    (3, 6, 2, 9, 0.01),
    (2, 4, 3, 5, 0.02),
    (3, 1200, 15, 1000, 1e-3),
    (2, 4, 40, 10**12, 1e-4),
    (3, 6, 2, 9, None),
]
# Theorem 3 (n_c, L, K, d, λ): a generic point and the extreme one
_T3 = [(3, 2, 9, 4, 0.01), (2, 40, 10**12, 50, 1e-4)]
# Theorem 2 (μ, n_c, L, fraction of λ_max): Zipf μ over s_c = 5 sub-classes, and the example of the docs
_ZIPF = 1.0 / np.arange(1, 6)
_T2 = [(_ZIPF / _ZIPF.sum(), 3, 2, 0.5), (np.array([6.0, 3.0, 2.0]) / 11, 3, 2, 0.8)]


def _theorem1(items, near):
    for n_c, n_w, L, K, lam in _T1:
        args = (n_c, n_w, L, K)
        kw = dict(n_c=n_c, n_w=n_w, L=L, K=K)
        l0 = orc.lambda_trivial(*args)
        items.append((f"lambda_trivial{args}", fctheory.lambda_trivial(**kw, precision="interval"), l0))
        lams = [lam] if lam is not None else [float(l0 * (1 - near)), float(l0 * (1 + near))]
        for lm in lams:
            items.append((f"tau{args + (lm,)}", fctheory.tau(**kw, lam=lm, precision="interval"), orc.tau(*args, lm)))


def _theorem3(items):
    for n_c, L, K, d, lam in _T3:
        args = (n_c, L, K, d)
        enc = fctheory.tau_star(n_c=n_c, L=L, K=K, d=d, lam=lam, precision="interval")
        items.append((f"tau_star{args + (lam,)}", enc, orc.tau_star(*args, lam)))


def _theorem2(items):
    for mu, n_c, L, frac in _T2:
        lmax = orc.lambda_max_type3(mu, n_c, L)
        items.append(
            (
                f"lambda_max_type3(s_c={mu.size})",
                fctheory.lambda_max_type3(mu=mu, n_c=n_c, L=L, precision="interval"),
                lmax,
            )
        )
        lam = float(lmax) * frac
        sol = fctheory.solve_type3(mu=mu, n_c=n_c, L=L, lam=lam, precision="interval")
        c, r = orc.solve_type3(mu, n_c, L, lam, dps=orc.DPS)
        items.append((f"solve_type3 c (s_c={mu.size}, lam={lam:.6g})", sol.c, c))
        items.append((f"solve_type3 r (s_c={mu.size}, lam={lam:.6g})", sol.r, r))


@register(
    "interval-enclosures",
    "The certified enclosures of precision='interval' (lambda_trivial, tau, tau_star, lambda_max_type3, "
    "solve_type3's c and r) contain the exact values of Theorems 1-3 and condition (9), and are tight "
    "(relative width <= 1e-15): at generic, partial-latent, paper-size and extreme (L = 40, K = 1e12) "
    "points, at lambda = lambda0 (1 -+ 1e-10), and for Zipf mu",
    "numeric (mpmath)",
    "the oracle's values shifted by a relative 1e-20 (invisible in float64): the enclosures must exclude them",
    tol=dict(tight=1e-15, near=1e-10, shift=1e-20),
    library=("lambda_trivial", "tau", "tau_star", "lambda_max_type3", "solve_type3"),
    oracle="mpmath (50 digits): lambda0 = -H'(0) from the hand-written derivative, bisection on H', H*' for "
    "tau, tau*, the closed form of condition (9), nested bisection for (7)-(8) (Prop. D)",
)
def check_interval_enclosures(mutant: bool = False, quick: bool = False) -> str:
    T = tolerances("interval-enclosures")
    items: list = []
    _theorem1(items, T["near"])
    _theorem3(items)
    _theorem2(items)
    widest = 0.0
    for what, enc, ref in items:
        refs = list(ref) if isinstance(ref, list) else [ref]
        if mutant:
            with mpmath.workdps(orc.DPS):
                refs = [v * (1 + mpmath.mpf(T["shift"])) for v in refs]
        inside = np.atleast_1d(enc.contains(refs if isinstance(ref, list) else refs[0]))
        expect(
            bool(inside.all()),
            f"{what}: the enclosure [{enc.lo!r}, {enc.hi!r}] does not contain the 50-digit value(s) "
            f"{[mpmath.nstr(v, 25) for v in refs]}",
        )
        width = float(np.max(enc.rel_width))
        expect(width <= T["tight"], f"{what}: relative width {width:.1e} > {T['tight']:g}")
        widest = max(widest, width)
    return f"{len(items)} enclosures contain the 50-digit mpmath values; widest relative width {widest:.1e}"
