"""The networks h and h* of section 2 and the weight-layout conventions.

h_{W,U}(x)  = U · concat(w_{x_1}, …, w_{x_L})            (no bias, no nonlinearity)
h*_{W,U}(x) = U · concat(φ(w_{x_1}), …, φ(w_{x_L}))      (φ: LayerNorm without parameters)

W is d×n_w; U is K×(L·d) with u_{k,ℓ} = U[k, ℓd:(ℓ+1)d]; the paper's Û ∈ R^{d×KL} has column
k·L+ℓ equal to u_{k,ℓ}.
"""

from __future__ import annotations

import numpy as np

from ._backend import array_namespace_of
from ._budget import check_work
from ._numerics import column_exponents
from ._validate import Array, Bool, Int, Real, fail, public

__all__ = ["phi", "phi_jacobian_vjp", "U_hat", "U_from_hat", "scores", "check_weights"]


@public(W=Array(ndim=(1, 2)), eps=Real(lo=0), legacy_positional=("eps",))
def phi(W, *, eps: float = 0.0):
    """Column-wise LayerNorm without affine parameters: (v − mean(v)1)/σ(v).

    σ is the *biased* standard deviation, σ² = mean((v − mean v)²); with ``eps`` > 0 it is
    √(σ² + eps) as in ``torch.nn.LayerNorm`` (eps = 1e-5 there); ``eps=0`` is the paper's φ.
    Works on NumPy or CuPy arrays. Each column is first scaled by a power of two (exact), so
    entries near the float limits (1e300 or 1e-300) neither overflow nor underflow: with eps = 0,
    φ(aW) = φ(W) for every a > 0.
    """
    xp = array_namespace_of(W)
    # power-of-two column scale 2^e ≥ max|w|: dividing by it is exact, and φ(W) = (C/2^e)/√(σ²/4^e + eps/4^e)
    e = column_exponents(W, xp, keepdims=True)
    Ws = xp.ldexp(W, -e)
    C = Ws - Ws.mean(axis=0, keepdims=True)
    var = (C * C).mean(axis=0, keepdims=True)
    if eps == 0.0 and bool(xp.any(var == 0)):
        fail("W", "a column with zero variance", "φ (LayerNorm with eps=0) is undefined for constant columns")
    if eps == 0.0:
        return C / xp.sqrt(var)
    with np.errstate(over="ignore"):
        eps_s = xp.ldexp(xp.full(e.shape, float(eps)), -2 * e)
    den = xp.sqrt(var + eps_s)
    # a constant column of huge entries: σ² = 0 and eps/4^e underflows, but C = 0 there and φ = 0
    out = C / xp.where(den > 0, den, 1.0)
    big = ~xp.isfinite(eps_s)  # tiny columns: σ² is negligible next to eps, φ ≈ (w − mean)/√eps
    if bool(xp.any(big)):
        out = xp.where(big, xp.ldexp(C, e) / np.sqrt(eps), out)
    return out


def phi_jacobian_vjp(W, G, eps: float = 0.0):
    """Back-propagate G = ∂f/∂φ(W) to ∂f/∂W through the column-wise LayerNorm.

    J_φ(w) = (1/σ)(I − 11ᵀ/d − φφᵀ/d) (Lemma S), applied column by column.
    """
    xp = array_namespace_of(W)
    d = W.shape[0]
    # the same exact power-of-two column scaling as :func:`phi`: with W = 2^e·Ws, σ = 2^e·σ_s, so
    # J_φ(w)ᵀg = 2^-e·(g − mean g − φ(φ·g)/d)/σ_s, and neither 1e300 nor 1e-300 columns over/underflow
    e = column_exponents(W, xp, keepdims=True)
    Ws = xp.ldexp(W, -e)
    C = Ws - Ws.mean(axis=0, keepdims=True)
    with np.errstate(over="ignore"):
        eps_s = xp.ldexp(xp.full(e.shape, float(eps)), -2 * e)
    sig_s = xp.sqrt((C * C).mean(axis=0, keepdims=True) + eps_s)
    finite = xp.isfinite(sig_s) & (sig_s > 0)
    safe = xp.where(finite, sig_s, 1.0)
    Y = C / safe
    out = xp.ldexp((G - G.mean(axis=0, keepdims=True) - Y * (Y * G).sum(axis=0, keepdims=True) / d) / safe, -e)
    if bool(xp.any(~finite)) and eps > 0:
        # tiny columns: eps dominates σ², φ ≈ (w − mean)/√eps is ~0 and J_φᵀg = (g − mean g)/√eps
        out = xp.where(finite, out, (G - G.mean(axis=0, keepdims=True)) / np.sqrt(eps))
    return out


@public(U=Array(ndim=2), L=Int(min=1), legacy_positional=("L",))
def U_hat(U, *, L: int):
    """Û ∈ R^{d×KL} from U ∈ R^{K×Ld} (column k·L+ℓ is u_{k,ℓ})."""
    K, Ld = U.shape
    if Ld % L:
        fail("U", U, f"must have L*d columns (a multiple of L = {L}), got {Ld}")
    d = Ld // L
    return U.reshape(K * L, d).T


@public(Uh=Array(ndim=2), L=Int(min=1), legacy_positional=("L",))
def U_from_hat(Uh, *, L: int):
    """Inverse of :func:`U_hat`: U ∈ R^{K×Ld} from Û ∈ R^{d×KL}."""
    d, KL = Uh.shape
    if KL % L:
        fail("Uh", Uh, f"must have K*L columns (a multiple of L = {L}), got {KL}")
    return Uh.T.reshape(KL // L, L * d)


def check_weights(task, W, U, *, name_W: str = "W", name_U: str = "U"):
    """Validate shapes and finiteness of (W, U) for ``task``; return d."""
    if W.ndim != 2 or W.shape[1] != task.n_w:
        fail(name_W, W, f"must have shape (d, n_w) = (d, {task.n_w}), got {tuple(W.shape)}")
    d = W.shape[0]
    if U.ndim != 2 or U.shape != (task.K, task.L * d):
        fail(name_U, U, f"must have shape (K, L*d) = ({task.K}, {task.L * d}), got {tuple(U.shape)}")
    xp = array_namespace_of(W)
    if not bool(xp.all(xp.isfinite(W))):
        fail(name_W, W, "must be finite")
    if not bool(xp.all(xp.isfinite(U))):
        fail(name_U, U, "must be finite")
    return d


@public(
    W=Array(ndim=2),
    U=Array(ndim=2),
    X=Array(ndim=2, integer=True, min=0, max=2**62),
    layernorm=Bool(),
    eps=Real(lo=0),
    legacy_positional=("layernorm", "eps"),
)
def scores(W, U, X, *, layernorm: bool = False, eps: float = 0.0):
    """Class scores h(x) (or h*(x)) for word-index sentences X (n×L) → n×K.

    Parameters
    ----------
    W : array (d, n_w)
    U : array (K, L·d)
    X : int array (n, L)
        Word indices in [0, n_w − 1] (negative indices are refused, never wrapped).
    layernorm : bool
        Score with h* (φ applied to the word embeddings) instead of h.
    eps : float
        LayerNorm's eps (see :func:`phi`).
    """
    xp = array_namespace_of(W)
    d, n_w = W.shape
    n, L = X.shape
    if U.shape[1] != L * d:
        fail(
            "U",
            U,
            f"must have L*d = {L}*{d} = {L * d} columns (X has L = {L} positions, W has d = {d} rows), "
            f"got {U.shape[1]}",
        )
    if int(X.max()) >= n_w:
        fail("X", int(X.max()), f"word indices must be < n_w = {n_w} (the columns of W)")
    check_work("X", X, bytes=8 * n * (L * d + 2 * U.shape[0]), what=f"scores ({n} sentences)")
    V = phi(W, eps=eps) if layernorm else W
    X = xp.asarray(X)
    feats = V.T[X].reshape(n, L * V.shape[0])  # concat(w_{x_1}, …, w_{x_L}), position-major
    with np.errstate(over="ignore", invalid="ignore"):
        out = feats @ U.T
    if not bool(xp.all(xp.isfinite(out))):
        fail("U", "the scores", "h(x) overflows the float64 range for these weights (entries too large)")
    return out
