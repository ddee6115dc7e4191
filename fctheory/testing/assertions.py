"""Assertion helpers: compare weights, gradients and numbers with the theory, with precise messages.

Every helper checks its arguments like any fctheory entry point (bad input raises
:class:`~fctheory.FCTheoryError` naming the parameter) and raises :class:`TheoryAssertionError` when the
property does not hold. That exception is an ``AssertionError`` (pytest reports a failed assertion,
``pytest.raises(AssertionError)`` catches it) and also an ``FCTheoryError``, the one exception a public
fctheory entry point raises. Reference: docs/testing-api.md.
"""

from __future__ import annotations

import dataclasses
import math
import numbers

import mpmath
import numpy as np

from .._errors import FCTheoryError
from .._numerics import pow2_exponent, pow2_scale, pow2_unscale
from ..network import phi
from ..predictions import predict
from ..predictions.verdict import verdict
from ..risk import true_risk_grad
from .._validate import Anything, Array, Bool, Instance, Int, Real, Seed, fail, public, result_type
from ..task import Task, task_first

__all__ = [
    "TheoryAssertionError",
    "GradientCheck",
    "assert_type1_optimal",
    "assert_type2_optimal",
    "assert_type3_optimal",
    "assert_critical_point",
    "check_gradient",
    "assert_close_mp",
    "assert_scale_invariant",
]


class TheoryAssertionError(AssertionError, FCTheoryError):
    """A property of the theory does not hold (raised by the ``fctheory.testing`` assertion helpers)."""


def _fail(message: str):
    raise TheoryAssertionError(message)


def _g(x) -> str:
    return f"{float(x):.17g}" if isinstance(x, (float, np.floating)) else str(x)


def _check_shapes(task: Task, W, U):
    d = W.shape[0]
    if W.shape[1] != task.n_w:
        fail("W", W, f"must have shape (d, n_w) with n_w = {task.n_w} columns (one per word), got {W.shape}")
    if U.shape != (task.K, task.L * d):
        fail("U", U, f"must have shape (K, L·d) = ({task.K}, {task.L * d}) for W of shape {W.shape}, got {U.shape}")
    return d


def _pow2_scale(A):
    """2^e ≥ max|A| (dividing by it is exact): norms of huge or tiny matrices without overflow."""
    return pow2_exponent(A)


# =====================================================================================================
# Collapse structure (Definitions 1–3)
# =====================================================================================================
def _structure(task: Task, W, U, *, kind: str, rtol: float):
    """Check Definition 1/2/3's structure; return (word norms by β (s_c,), concept frame F (d, n_c), c_U).

    W is given as φ(W) for type II. Norms are returned in true units (may be inf for astronomically
    large weights, then the comparison with the theorem fails with a clear message).
    """
    n_c, s_c = task.n_c, task.s_c
    name = {"type1": "type-I (Definition 1)", "type2": "type-II (Definition 2)", "type3": "type-III (Definition 3)"}[
        kind
    ]
    Wlabel = "phi(W)" if kind == "type2" else "W"
    eW, eU = _pow2_scale(W), _pow2_scale(U)
    Ws, Us = np.ldexp(W, -eW), np.ldexp(U, -eU)
    norms = np.linalg.norm(Ws, axis=0).reshape(n_c, s_c)  # word (α, β) at α·s_c + β
    if np.any(norms == 0):
        a, b = np.argwhere(norms == 0)[0]
        _fail(f"(W, U) is not {name}: word (α, β) = ({a}, {b}) has a zero embedding in {Wlabel}")
    r = norms.mean(axis=0)  # norm by rank β
    # norms: type I and II all equal; type III equal across concepts for each β
    target = np.full_like(norms, norms.mean()) if kind != "type3" else np.broadcast_to(r, norms.shape)
    err = np.abs(norms - target) / target
    if err.max() > rtol:
        a, b = np.unravel_index(int(np.argmax(err)), err.shape)
        what = "all words" if kind != "type3" else f"the words of rank β = {b} in every concept"
        _fail(
            f"(W, U) is not {name}: {what} must have one norm in {Wlabel}, but ‖w_({a},{b})‖ = "
            f"{_g(np.ldexp(norms[a, b], eW))} differs from {_g(np.ldexp(target[a, b], eW))} by a relative "
            f"{err.max():.3g} > rtol = {rtol:g}"
        )
    # directions: one per concept, shared by its s_c words
    D = (Ws / np.linalg.norm(Ws, axis=0)).reshape(Ws.shape[0], n_c, s_c)
    F = D.mean(axis=2)
    F /= np.linalg.norm(F, axis=0)
    dev = np.linalg.norm(D - F[:, :, None], axis=0)
    if dev.max() > rtol:
        a, b = np.unravel_index(int(np.argmax(dev)), dev.shape)
        _fail(
            f"(W, U) is not {name}: the words of concept α = {a} must share one direction f_α, but "
            f"word ({a}, {b}) is off by ‖w/‖w‖ − f_α‖ = {dev.max():.3g} > rtol = {rtol:g}"
        )
    # equiangular frame, equation (4): Gram = κI − 11ᵀ/(n_c − 1) with κ = n_c/(n_c − 1)
    G = F.T @ F
    E = (n_c / (n_c - 1)) * np.eye(n_c) - 1.0 / (n_c - 1)
    gerr = np.abs(G - E).max()
    if gerr > rtol:
        i, j = np.unravel_index(int(np.argmax(np.abs(G - E))), G.shape)
        _fail(
            f"(W, U) is not {name}: the concept directions are not an equiangular frame (equation (4)): "
            f"⟨f_{i}, f_{j}⟩ = {G[i, j]:.17g}, expected {E[i, j]:.17g} (error {gerr:.3g} > rtol = {rtol:g})"
        )
    # U: u_{k,ℓ} = c f_{z_kℓ}
    d = W.shape[0]
    blocks = Us.reshape(task.K, task.L, d)
    cu = float(np.linalg.norm(blocks, axis=2).mean())
    if cu == 0.0:
        _fail(f"(W, U) is not {name}: U = 0 while W ≠ 0")
    dev = np.linalg.norm(blocks - cu * np.moveaxis(F[:, task.Z], 0, -1), axis=2) / cu
    if dev.max() > rtol:
        k, ell = np.unravel_index(int(np.argmax(dev)), dev.shape)
        _fail(
            f"(W, U) is not {name}: u_{{k,ℓ}} must be c·f_(z_kℓ) (the frame of W's concepts), but for "
            f"(k, ℓ) = ({k}, {ell}), z = {int(task.Z[k, ell])}, the relative error is {dev.max():.3g} > rtol = {rtol:g}"
        )
    with np.errstate(over="ignore", under="ignore"):
        return np.ldexp(r, eW), F, float(np.ldexp(cu, eU))


def _compare(label: str, got, want, rtol: float, theorem: str):
    got, want = np.atleast_1d(np.asarray(got, dtype=float)), np.atleast_1d(np.asarray(want, dtype=float))
    with np.errstate(all="ignore"):
        err = np.abs(got - want) / np.abs(want)
    err = np.where(np.isfinite(err), err, np.inf)
    if err.max() > rtol:
        i = int(np.argmax(err))
        idx = f"[{i}]" if got.size > 1 else ""
        _fail(
            f"{label}{idx} = {_g(got[i])} but {theorem} predicts {_g(want[i])} (relative error {err[i]:.3g} > "
            f"rtol = {rtol:g})"
        )


def _trivial(W, U, lam, lam0, atol, theorem):
    nW, nU = float(np.max(np.abs(W))), float(np.max(np.abs(U)))
    if max(nW, nU) > atol:
        _fail(
            f"lam = {_g(lam)} ≥ λ₀ = {_g(lam0)}: {theorem} predicts the trivial optimum (W, U) = (0, 0), but "
            f"max|W| = {nW:.3g}, max|U| = {nU:.3g} > atol = {atol:g}"
        )


_COMMON = dict(
    task=Instance(Task),
    W=Array(ndim=2),
    U=Array(ndim=2),
    lam=Real(lo=0, lo_open=True),
    rtol=Real(lo=0, lo_open=True),
    gtol=Real(lo=0, lo_open=True),
    atol=Real(lo=0),
)


@task_first(deprecated=False)  # also (W, U, task, lam), the order these helpers were specified with
@public(**_COMMON)
def assert_type1_optimal(task, W, U, lam, *, rtol=1e-9, gtol=1e-8, atol=1e-12):
    """Assert that (W, U) is Theorem 1's optimum of the true risk (5) for the network h.

    Checks, in order: (i) (W, U) is a type-I configuration (Definition 1): w_(α,β) = c f_α and
    u_{k,ℓ} = c′ f_{z_kℓ} with {f_α} an equiangular frame (4); (ii) its constants are Theorem 1's,
    c = √(τ/n_w) and c′ = √(τ/(KL)) with τ = argmin H (92) (:func:`fctheory.predict_type1`); when
    λ ≥ λ₀ (τ = 0) the weights must vanish instead; (iii) it is a critical point of the exact true risk
    (5) (:func:`assert_critical_point`, gradient by :func:`fctheory.true_risk_grad`).

    Parameters
    ----------
    task : Task
        The full latent set with uniform words (Assumption A and Theorem 1's hypothesis); other tasks
        raise FCTheoryError.
    W : array (d, n_w)
    U : array (K, L·d)
    lam : float
        λ > 0 of (5).
    rtol : float
        Relative tolerance of the structure and of c, c′ (default 1e-9).
    gtol : float
        Relative tolerance of the gradient (see :func:`assert_critical_point`; default 1e-8).
    atol : float
        Largest |entry| accepted for the trivial optimum (0, 0) when λ ≥ λ₀ (default 1e-12).

    Raises
    ------
    TheoryAssertionError
        Naming the first property that fails, the values and the tolerance.
    """
    _check_shapes(task, W, U)
    if not (task.is_full and task.is_uniform):
        fail("task", task, "Theorem 1 is stated for the full latent set (K = n_c**L, Assumption A) with uniform words")
    p = predict(task, lam=lam)  # the library's one dispatcher: Theorem 1 here
    if p.trivial:
        _trivial(W, U, lam, p.lambda_trivial, atol, "Theorem 1")
        return
    r, _, cu = _structure(task, W, U, kind="type1", rtol=rtol)
    _compare("c = ‖w_(α,β)‖", r[0], p.c, rtol, "Theorem 1 (c = √(τ/n_w))")
    _compare("c′ = ‖u_{k,ℓ}‖", cu, p.c_prime, rtol, "Theorem 1 (c′ = √(τ/(KL)))")
    assert_critical_point(task, W, U, lam, gtol=gtol)


@task_first(deprecated=False)
@public(**_COMMON)
def assert_type2_optimal(task, W, U, lam, *, rtol=1e-9, gtol=1e-8, atol=1e-12):
    """Assert that (W, U) is Theorem 3's optimum of the true risk (10) for the LayerNorm network h*.

    Checks (i) (W, U) is a type-II configuration (Definition 2): φ(w_(α,β)) = √d f_α with {f_α} a
    mean-zero equiangular frame and u_{k,ℓ} = c f_{z_kℓ} (φ removes any positive rescaling and shift of
    W's columns); (ii) ‖φ(w)‖ = √d and c = τ*/√(KL) with τ* = argmin H* (Theorem 3,
    :func:`fctheory.predict_type2`); (iii) a critical point of the exact risk (10)
    (``layernorm=True``: only U is penalised).

    Parameters
    ----------
    task : Task
        The full latent set (K = n_c**L); any word frequencies (Lemma R).
    W : array (d, n_w)
        d ≥ n_c.
    U : array (K, L·d)
    lam : float
    rtol, gtol : float
        As in :func:`assert_type1_optimal`.
    atol : float
        Unused by type II (τ* > 0 always); kept for a uniform signature.

    Raises
    ------
    TheoryAssertionError
    """
    d = _check_shapes(task, W, U)
    if not task.is_full:
        fail("task", task, "Theorem 3 is stated for the full latent set (K = n_c**L, Assumption A)")
    if d < task.n_c:
        fail("W", W, f"has d = {d} rows; type-II configurations need d >= n_c = {task.n_c} (mean-zero frame)")
    if np.any(np.ptp(W, axis=0) == 0):
        _fail("(W, U) is not type-II (Definition 2): W has a constant column, where φ is undefined")
    P = phi(W)
    p = predict(task, lam=lam, network="h*", d=d)  # Theorem 3
    r, _, cu = _structure(task, P, U, kind="type2", rtol=rtol)
    _compare("‖φ(w_(α,β))‖", r[0], math.sqrt(d), rtol, "Definition 2 (√d)")
    _compare("c = ‖u_{k,ℓ}‖", cu, p.c, rtol, "Theorem 3 (c = τ*/√(KL))")
    assert_critical_point(task, W, U, lam, layernorm=True, gtol=gtol)


@task_first(deprecated=False)
@public(**_COMMON)
def assert_type3_optimal(task, W, U, lam, *, rtol=1e-9, gtol=1e-8, atol=1e-12):
    """Assert that (W, U) is Theorem 2's type-III point of the true risk (5) for the network h.

    Checks (i) (W, U) is a type-III configuration (Definition 3): w_(α,β) = r_β f_α and
    u_{k,ℓ} = c f_{z_kℓ}; (ii) (c, r) solve the system (7)–(8) for the task's word frequencies μ
    (:func:`fctheory.solve_type3`; λ must satisfy condition (9), λ < λ_max, else FCTheoryError naming
    ``lam``); (iii) a critical point of the exact true risk (5).

    Parameters
    ----------
    task : Task
        The full latent set (K = n_c**L).
    W : array (d, n_w)
    U : array (K, L·d)
    lam : float
    rtol, gtol : float
        As in :func:`assert_type1_optimal`.
    atol : float
        Unused (a type-III point has c > 0); kept for a uniform signature.

    Raises
    ------
    TheoryAssertionError
    """
    _check_shapes(task, W, U)
    if not task.is_full:
        fail("task", task, "Theorem 2 is stated for the full latent set (K = n_c**L)")
    # the dispatcher's prediction: Theorem 2 ((7)–(8)); for uniform μ its special case, Theorem 1's type I
    v = verdict(task, None, lam, lam, assumptions=False)
    if "R" not in v.predicted or getattr(v.prediction, "trivial", False):
        fail("lam", lam, (v.reasons or v.notes)[-1])
    r, _, cu = _structure(task, W, U, kind="type3", rtol=rtol)
    _compare("r_β = ‖w_(α,β)‖", r, np.asarray(v.predicted["w_norm_by_rank"]), rtol, "Theorem 2 ((7)–(8))")
    _compare("c = ‖u_{k,ℓ}‖", cu, v.predicted["u_norm"], rtol, "Theorem 2 ((7)–(8))")
    assert_critical_point(task, W, U, lam, gtol=gtol)


@task_first(deprecated=False)
@public(
    task=Instance(Task),
    W=Array(ndim=2),
    U=Array(ndim=2),
    lam=Real(lo=0),
    layernorm=Bool(),
    eps=Real(lo=0),
    gtol=Real(lo=0, lo_open=True),
    atol=Real(lo=0),
)
def assert_critical_point(task, W, U, lam, *, layernorm=False, eps=0.0, gtol=1e-8, atol=0.0):
    """Assert that (W, U) is a critical point of the exact true risk (5) (or (10) with ``layernorm``).

    The gradient ∇R = ∇R₀ + λ(W, U) (R* penalises U only) comes from :func:`fctheory.true_risk_grad`
    (exact enumeration). At a critical point the data term and the penalty cancel, so the test is
    relative to their size:

        ‖∇R‖ ≤ atol + gtol · (‖∇R₀‖ + λ‖θ‖),   θ = (W, U) (θ = U with layernorm),

    with Frobenius norms. At the origin both terms vanish and ∇R = 0 passes.

    Parameters
    ----------
    task : Task
    W : array (d, n_w)
    U : array (K, L·d)
    lam : float
        λ ≥ 0.
    layernorm : bool
        Use h* and the risk (10) (default False: h and (5)).
    eps : float
        LayerNorm ε (0 = the paper's φ).
    gtol : float
        Relative tolerance (default 1e-8).
    atol : float
        Absolute slack on ‖∇R‖ (default 0; needed when λ = 0, where nothing cancels).

    Raises
    ------
    TheoryAssertionError
        With ‖∇R‖, the bound and the largest gradient entry.
    """
    _check_shapes(task, W, U)
    with np.errstate(all="ignore"):
        R, gW, gU = true_risk_grad(task, W, U, lam, layernorm=layernorm, eps=eps)
    if not (np.all(np.isfinite(gW)) and np.all(np.isfinite(gU))):
        fail("W", W, "the exact gradient (true_risk_grad) is not finite at these weights; nothing to check")
    with np.errstate(all="ignore"):
        pen_W = np.zeros_like(W) if layernorm else lam * W
        pen_U = lam * U
        g = math.hypot(_norm(gW), _norm(gU))
        g0 = math.hypot(_norm(gW - pen_W), _norm(gU - pen_U))
        pen = math.hypot(_norm(pen_W), _norm(pen_U))
    bound = atol + gtol * (g0 + pen)
    if not (g <= bound):
        which, G = ("W", gW) if _norm(gW) >= _norm(gU) else ("U", gU)
        i = tuple(int(j) for j in np.unravel_index(int(np.argmax(np.abs(G))), G.shape))
        risk = "(10) (layernorm=True)" if layernorm else "(5)"
        _fail(
            f"(W, U) is not a critical point of the true risk {risk}: ‖∇R‖ = {g:.3g} > atol + gtol·(‖∇R₀‖ + "
            f"λ‖θ‖) = {atol:g} + {gtol:g}·({g0:.3g} + {pen:.3g}) = {bound:.3g}; largest entry ∂R/∂{which}{list(i)} = "
            f"{float(G[i]):.3g} (R = {float(R):.17g})"
        )


def _norm(A) -> float:
    e = _pow2_scale(A)
    return float(pow2_unscale(np.linalg.norm(pow2_scale(A, e)), e))


# =====================================================================================================
# Gradients by central differences
# =====================================================================================================
@result_type
@dataclasses.dataclass
class GradientCheck:
    """Result of :func:`check_gradient`.

    Attributes
    ----------
    ok : bool
        Every checked derivative within tolerance.
    max_error : float
        Largest |finite difference − analytic| over the checked derivatives.
    tolerance : float
        atol + rtol·max(‖analytic‖∞, ‖finite difference‖∞), the bound each error was held to.
    worst : int
        Index (into ``fd``/``analytic``) of the largest error.
    directions : str
        ``"coordinates"`` (every entry of x, in C order) or ``"random"`` (random unit directions).
    fd, analytic : ndarray
        Central differences (f(x + hv) − f(x − hv))/(2h) and ⟨∇f(x), v⟩ for each direction v.
    eps : float
        Relative step: h = eps·max(1, |x_i|) for coordinates, eps·max(1, ‖x‖∞) for random directions.
    """

    ok: bool
    max_error: float
    tolerance: float
    worst: int
    directions: str
    fd: np.ndarray
    analytic: np.ndarray
    eps: float


def _call_f(f, x, shape):
    with np.errstate(all="ignore"):
        out = f(x.reshape(shape))
    return out


def _value(f, x, shape, has_grad_inside):
    out = _call_f(f, x, shape)
    v = out[0] if has_grad_inside else out
    try:
        v = float(v)
    except (TypeError, ValueError):
        fail(
            "f",
            f,
            f"must return a real number{' (or (value, gradient))' if has_grad_inside else ''}, got {type(v).__name__}",
        )
    return v


@public(
    f=Anything("callable x -> float, or x -> (float, gradient) when grad is None"),
    x=Array(min_size=1),
    grad=Anything("callable x -> gradient (shape of x), or None"),
    eps=Real(lo=0, lo_open=True).or_none(),
    rtol=Real(lo=0),
    atol=Real(lo=0).or_none(),
    max_coords=Int(min=1, max=10**6),
    n_directions=Int(min=1, max=10**4),
    seed=Seed(),
    raise_on_mismatch=Bool(),
)
def check_gradient(
    f, x, *, grad=None, eps=None, rtol=1e-6, atol=None, max_coords=64, n_directions=16, seed=0, raise_on_mismatch=True
):
    """Compare a gradient with central finite differences (like pymanopt's ``check_gradient``).

    For each direction v — every coordinate of x when x.size ≤ ``max_coords``, else ``n_directions``
    random unit vectors (``numpy.random.default_rng(seed)``) — the central difference
    (f(x + hv) − f(x − hv))/(2h), whose error is O(h²f‴) + O(ε_mach|f|/h), is compared with ⟨∇f(x), v⟩.

    Parameters
    ----------
    f : callable
        f(x) → float; when ``grad`` is None, f(x) → (float, gradient).
    x : array_like
        The point (any shape; f receives an array of that shape).
    grad : callable, optional
        grad(x) → array of x's shape.
    eps : float, optional
        Relative step (default ε_mach^(1/3) ≈ 6e-6, which balances the two error terms).
    rtol : float
        Relative tolerance (default 1e-6), relative to max(‖analytic‖∞, ‖fd‖∞) over the directions.
    atol : float, optional
        Absolute slack (default 10·ε_mach^(2/3)·max(1, |f(x)|), the rounding floor of central differences).
    max_coords, n_directions : int
        See above (defaults 64, 16).
    seed : int, Generator or None
        For the random directions.
    raise_on_mismatch : bool
        True (default): raise TheoryAssertionError on a mismatch; False: only return the result.

    Returns
    -------
    GradientCheck

    Raises
    ------
    TheoryAssertionError
        Naming the worst direction, both derivatives, the error and the tolerance.
    """
    shape = x.shape
    x0 = x.ravel().copy()
    has_inside = grad is None
    f0, g = _value_and_gradient(f, grad, x0, shape)
    step = eps if eps is not None else np.finfo(np.float64).eps ** (1 / 3)
    kind, dirs, n = _directions(x0.size, max_coords, n_directions, seed)
    fd, an = _differences(f, g, x0, shape, has_inside, step, eps, dirs, n)
    floor = 10 * np.finfo(np.float64).eps ** (2 / 3) * max(1.0, abs(f0)) if atol is None else atol
    with np.errstate(all="ignore"):
        err = np.abs(fd - an)
        err = np.where(np.isfinite(err), err, np.inf)
        scale = float(np.max(np.abs(an))) if an.size else 0.0
        fdmax = float(np.max(np.abs(fd[np.isfinite(fd)]))) if np.any(np.isfinite(fd)) else 0.0
        tol = min(floor + rtol * max(scale, fdmax), np.finfo(np.float64).max)
    worst = int(np.argmax(err))
    res = GradientCheck(
        ok=bool(np.all(err <= tol)),
        max_error=float(err[worst]) if np.isfinite(err[worst]) else 1e308,
        tolerance=float(tol),
        worst=worst,
        directions=kind,
        fd=np.where(np.isfinite(fd), fd, 0.0),
        analytic=an,
        eps=float(step),
    )
    if not res.ok and raise_on_mismatch:
        _fail(_mismatch_message(res, fd, shape, seed, err, tol, floor, rtol, max(scale, fdmax), n))
    return res


def _mismatch_message(res, fd, shape, seed, err, tol, floor, rtol, scale, n) -> str:
    """The failure message of :func:`check_gradient`: the worst direction, both derivatives, the tolerance."""
    worst, an = res.worst, res.analytic
    where = (
        f"coordinate {tuple(int(i) for i in np.unravel_index(worst, shape))}"
        if res.directions == "coordinates"
        else f"random direction {worst} (seed {seed!r})"
    )
    fd_s = (
        "no finite difference (the step vanished in rounding: eps too small)"
        if not np.isfinite(fd[worst])
        else f"finite difference {fd[worst]:.10g}"
    )
    return (
        f"gradient mismatch at {where}: {fd_s}, analytic {an[worst]:.10g}; |error| = {err[worst]:.3g} > "
        f"tolerance {tol:.3g} (atol {floor:.3g} + rtol {rtol:g}·{scale:.3g}); "
        f"{int(np.sum(err > tol))} of {n} directions fail"
    )


def _value_and_gradient(f, grad, x0, shape):
    """f(x) and the analytic gradient (flat), each checked: a wrong return is blamed on f or on grad."""
    has_inside = grad is None
    out = _call_f(f, x0.copy(), shape)
    if has_inside:
        if not (isinstance(out, tuple) and len(out) == 2):
            fail("f", f, "must return (value, gradient) when grad is not given")
        f0, g = out
    else:
        f0 = out
        with np.errstate(all="ignore"):
            g = grad(x0.copy().reshape(shape))
    try:
        f0 = float(f0)
    except (TypeError, ValueError):  # named apart from the gradient: f is at fault even when grad is given
        fail(
            "f",
            f,
            f"must return a real number{' (or (value, gradient))' if has_inside else ''}, got {type(f0).__name__}",
        )
    g_name, g_fn = ("f", f) if has_inside else ("grad", grad)
    try:
        g = np.asarray(g, dtype=np.float64)
    except (TypeError, ValueError):
        fail(g_name, g_fn, "must return real numbers")
    if not math.isfinite(f0):
        fail("f", f, f"returned a non-finite value {f0!r} at x")
    if g.size != x0.size:
        fail(g_name, g_fn, f"must return a gradient of x's shape {shape}, got shape {g.shape}")
    g = g.ravel()
    if not np.all(np.isfinite(g)):
        fail(g_name, g_fn, "returned a non-finite gradient")
    return f0, g


def _directions(size, max_coords, n_directions, seed):
    """("coordinates", None, size) when size ≤ max_coords, else ("random", unit rows, n_directions)."""
    if size <= max_coords:
        return "coordinates", None, size
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    dirs = rng.standard_normal((n_directions, size))
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    return "random", dirs, n_directions


def _differences(f, g, x0, shape, has_inside, step, eps, dirs, n):
    """Central differences and analytic directional derivatives along the n directions."""
    fd = np.empty(n)
    an = np.empty(n)
    xmax = float(np.max(np.abs(x0)))
    for i in range(n):
        if dirs is None:
            h = step * max(1.0, abs(float(x0[i])))
            xp, xm = x0.copy(), x0.copy()
            with np.errstate(all="ignore"):
                xp[i] += h
                xm[i] -= h
                h_eff = (xp[i] - xm[i]) / 2  # the step actually taken after rounding
            an[i] = g[i]
        else:
            h = step * max(1.0, xmax)
            with np.errstate(all="ignore"):
                xp, xm = x0 + h * dirs[i], x0 - h * dirs[i]
            h_eff = h
            an[i] = float(g @ dirs[i])
        # x ± h can both be finite while their difference (2h) overflows: no usable step either
        if not (np.all(np.isfinite(xp)) and np.all(np.isfinite(xm)) and math.isfinite(h_eff)):
            fail("eps", eps, f"the step h = {h:.3g} takes x ± h out of the float64 range; choose a smaller eps")
        fp, fm = _value(f, xp, shape, has_inside), _value(f, xm, shape, has_inside)
        if not (math.isfinite(fp) and math.isfinite(fm)):
            fail("eps", eps, f"f(x ± h) is not finite for the step h = {h:.3g} (direction {i}); choose a smaller eps")
        fd[i] = (fp - fm) / (2 * h_eff) if h_eff > 0 else math.nan  # a vanished step: reported as a mismatch
    return fd, an


# =====================================================================================================
# Multiprecision and scale invariance
# =====================================================================================================
def _as_mp_list(name, value):
    if isinstance(value, str):
        try:
            return [mpmath.mpf(value)], ()
        except (ValueError, TypeError):
            fail(name, value, "must be a number, an mpmath number, a decimal string or an array of those")
    if isinstance(value, (mpmath.mpf,)) or (isinstance(value, numbers.Real) and not isinstance(value, bool)):
        if isinstance(value, numbers.Integral):
            v = mpmath.mpf(int(value))
        elif isinstance(value, np.floating) and not isinstance(value, float) and np.isfinite(value):
            # float16, float32, long double: mpmath takes Python floats only; the ratio is exact
            p, q = value.as_integer_ratio()
            v = mpmath.mpf(p) / q
        else:
            v = mpmath.mpf(float(value)) if isinstance(value, np.floating) else mpmath.mpf(value)
        if not mpmath.isfinite(v):
            fail(name, value, "must be finite")
        return [v], ()
    if isinstance(value, (bool, np.bool_, complex, bytes)) or value is None:
        fail(name, value, "must be a real number, an mpmath number, a decimal string or an array of those")
    try:
        arr = np.asarray(
            value.tolist() if hasattr(value, "tolist") and type(value).__module__.startswith("mpmath") else value,
            dtype=object,
        )
    except Exception:  # noqa: BLE001 - ragged input and the like
        fail(name, value, "must be a number or a rectangular array of numbers")
    if arr.size == 0:
        fail(name, value, "must not be empty")
    out = []
    for v in arr.ravel():
        if isinstance(v, (np.ndarray, list, tuple)):
            fail(name, value, "must be a rectangular array of numbers")
        out += _as_mp_list(name, v.item() if isinstance(v, np.generic) else v)[0]
    return out, arr.shape


@public(
    value=Anything("number, mpf, decimal string or array of those"),
    reference=Anything("number, mpf, decimal string or array of those"),
    digits=Int(min=1, max=1000),
    atol=Real(lo=0),
)
def assert_close_mp(value, reference, *, digits=12, atol=0.0):
    """Assert that ``value`` agrees with a multiprecision ``reference`` to ``digits`` significant digits.

    For each entry, |value − reference| ≤ atol + 10^(−digits)·|reference|, evaluated in mpmath at
    digits + 10 decimal digits (so the comparison itself adds no rounding). Use with the 50-digit
    references of the predictors (``precision="mp"``): e.g. τ to 12 digits (docs/theory.md, Theorem 1).

    Parameters
    ----------
    value, reference : number, mpmath.mpf, decimal string, or array (same number of entries)
    digits : int
        Significant digits required (1 … 1000; a float64 carries about 15.9).
    atol : float
        Absolute slack (default 0; needed where the reference is 0).

    Raises
    ------
    TheoryAssertionError
        With the first failing entry, both values to 20 digits and the digits actually shared.
    """
    with mpmath.workdps(digits + 10):
        # parsed at the comparison's precision: at mpmath's default (15 digits) a decimal string or a
        # high-precision mpf would be rounded first, and any digits >= 16 would pass whatever the error
        vals, vshape = _as_mp_list("value", value)
        refs, rshape = _as_mp_list("reference", reference)
        if len(vals) != len(refs):
            fail("reference", reference, f"must have as many entries as value ({len(vals)}), got {len(refs)}")
        tol_rel = mpmath.mpf(10) ** (-digits)
        for i, (v, r) in enumerate(zip(vals, refs)):
            err = abs(v - r)
            if err > atol + tol_rel * abs(r):
                shared = float(-mpmath.log10(err / abs(r))) if r != 0 and err != 0 else 0.0
                where = f"[{i}]" if len(vals) > 1 else ""
                _fail(
                    f"value{where} = {mpmath.nstr(v, 20)} differs from reference = {mpmath.nstr(r, 20)}: "
                    f"|error| = {mpmath.nstr(err, 3)}, about {shared:.1f} digits agree, {digits} required"
                    + (f" (atol {atol:g})" if atol else "")
                )


@public(
    metric=Anything("callable M -> number or array"),
    M=Array(),
    scales=Real(lo=0, lo_open=True, array=True),
    rtol=Real(lo=0),
    atol=Real(lo=0),
)
def assert_scale_invariant(metric, M, *, scales=(1e-300, 1.0, 1e300), rtol=1e-12, atol=0.0):
    """Assert metric(s·M) = metric(M) for every s in ``scales`` (the project's rule for scale-free metrics).

    Collapse metrics (NC1–NC4, equinorm, the type-I/II/III distances, …) are invariant under positive
    rescaling of their input; the project requires them to rescale first, so that M·1e300 and M·1e-300
    give M's answer (COMMON.md). Each s·M must be exactly representable as normal floats: the largest
    entry times s finite, the smallest non-zero one at least 2.2e-308 (else FCTheoryError naming
    ``scales``: the test would measure the rounding of the input, not the metric).

    Parameters
    ----------
    metric : callable
        metric(M) → number or array, e.g. ``lambda H: fctheory.metrics.nc1(H, y)``.
    M : array
    scales : float or sequence of float
        Positive factors (default (1e-300, 1, 1e300)).
    rtol, atol : float
        |metric(sM) − metric(M)| ≤ atol + rtol·|metric(M)| entrywise (defaults 1e-12, 0).

    Raises
    ------
    TheoryAssertionError
    """
    s_arr = np.atleast_1d(scales).ravel()
    nz = np.abs(M[M != 0])
    with np.errstate(all="ignore"):
        for s in s_arr:
            if nz.size and (not np.isfinite(nz.max() * s) or nz.min() * s < np.finfo(np.float64).tiny):
                fail(
                    "scales",
                    float(s),
                    f"s·M leaves the normal float64 range for M's entries in [{nz.min():.3g}, {nz.max():.3g}]",
                )
        base = np.asarray(metric(M), dtype=np.float64)
    if not np.all(np.isfinite(base)):
        fail("metric", metric, f"returned a non-finite value {base!r} for M")
    for s in s_arr:
        with np.errstate(all="ignore"):
            got = np.asarray(metric(M * s), dtype=np.float64)
        if got.shape != base.shape:
            _fail(f"metric(s·M) has shape {got.shape} for s = {s:g}, metric(M) has shape {base.shape}")
        with np.errstate(all="ignore"):
            err = np.abs(got - base)
            bound = atol + rtol * np.abs(base)
        bad = ~(err <= bound)
        if np.any(bad):
            i = int(np.argmax(np.where(bad, err, -1.0).ravel()))
            idx = f"[{i}]" if base.size > 1 else ""
            _fail(
                f"not scale invariant: metric(M){idx} = {base.ravel()[i]:.17g} but metric({s:g}·M){idx} = "
                f"{got.ravel()[i]:.17g} (|difference| {err.ravel()[i]:.3g} > atol + rtol·|metric(M)| = "
                f"{bound.ravel()[i]:.3g})"
            )
