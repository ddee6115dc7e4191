"""Neural-collapse metrics NC1–NC4 and CDNV (Kothapalli's review §2.3, eqs. (4)–(9), (51);
Súkeník et al. Def. 3.4; the perturbation paper §1.5).

Conventions
-----------
* ``H`` is samples × features (N × m), ``y`` integer labels in {0, …, K−1}; every class must occur.
  Classes may be unbalanced; the global mean is the mean of the class means, μ_G = (1/K)Σ_k μ_k
  (the review's definition; it is the sample mean for balanced classes).
* ``W`` is the classifier, K × m (row k = a_k), ``M`` a K × m matrix of class means (or classifier rows).
* Statistics are computed in float64 with two passes (means first, then deviations), never as
  E[x²] − E[x]², so collapsed data give exact zeros.
* Inputs may be NumPy or CuPy arrays; the computation stays on the array's device and scalars
  are returned as Python floats.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._backend import array_namespace_of, to_numpy
from .._budget import check_work
from .._validate import Array, Bool, Choice, Int, fail, public, public_class, result_type

__all__ = [
    "ClassStatistics",
    "class_statistics",
    "nc1",
    "nc2",
    "nc3",
    "nc4",
    "cdnv",
    "equinorm",
    "equiangularity",
    "etf_gram",
    "NCAccumulator",
]


# ----------------------------------------------------------------------------- input checks
# parameter kinds shared by the public functions (checked by @public before any work)
_H = Array(ndim=2)
_M = Array(ndim=2)
_Y = Array(ndim=1, integer=True, min=0)
_KOPT = Int(min=2).or_none()


def _features(H, name="H"):
    xp = array_namespace_of(H)
    H = xp.asarray(H)
    if H.ndim != 2:
        fail(name, to_numpy(H), "must be a 2-D array (samples x features)")
    if H.dtype.kind not in "iuf":
        fail(name, to_numpy(H), f"must be real numbers, got dtype {H.dtype}")
    if H.size == 0:
        fail(name, to_numpy(H), f"must not be empty, got shape {tuple(H.shape)}")
    H = H.astype(xp.float64, copy=False)
    if not bool(xp.all(xp.isfinite(H))):
        fail(name, "array with non-finite entries", "must be finite")
    return xp, H


def _labels(y, N, K=None, xp=np):
    yh = np.asarray(to_numpy(y))
    if yh.ndim != 1 or yh.shape[0] != N:
        fail("y", yh, f"must be a 1-D label array of length N = {N} (one label per row of H), got shape {yh.shape}")
    if yh.dtype.kind not in "iu":
        if yh.dtype.kind == "f" and np.all(np.isfinite(yh)) and np.all(yh == np.round(yh)):
            yh = yh.astype(np.int64)
        else:
            fail("y", yh, "must be integer class labels")
    if yh.size and yh.min() < 0:
        fail("y", yh, "labels must be >= 0 (negative labels are refused, never wrapped)")
    Kd = int(yh.max()) + 1 if yh.size else 0
    if K is None:
        if Kd > N:
            # labels up to Kd-1 with only N samples: some class is empty; refuse before counting
            # (np.bincount would allocate Kd counters, possibly billions)
            fail("y", yh, f"every class 0..K-1 must occur, impossible with N = {N} samples and labels up to {Kd - 1}")
        K = Kd
        if K < 2:
            fail("y", yh, "needs at least 2 classes")
    else:
        if Kd > K:
            fail("K", K, f"is smaller than the number of classes in y (labels up to {Kd - 1})")
        if K > N:
            fail("K", K, f"every class 0..K-1 must occur in y, impossible with N = {N} samples")
    counts = np.bincount(yh, minlength=K)
    if np.any(counts == 0):
        fail("y", yh, f"every class 0..K-1 must occur (class {int(np.argmin(counts))} is empty)")
    return xp.asarray(yh.astype(np.int64)), K, counts


def _onehot(xp, y, K):
    Y = xp.zeros((y.shape[0], K), dtype=xp.float64)
    Y[xp.arange(y.shape[0]), y] = 1.0
    return Y


def _exponent(xp, A) -> int:
    """e with max|A|·2^-e in [0.5, 1) (0 for A = 0): scaling by 2^-e is exact and cannot overflow.

    Scale-invariant metrics work on A·2^-e, so A·1e300 (whose squares overflow) and A·1e-300 (whose
    squares underflow) give the same answer as A.
    """
    a = float(xp.max(xp.abs(A))) if A.size else 0.0
    return int(np.frexp(a)[1]) if a > 0.0 else 0


def _unit(xp, A):
    """(A·2^-e, e) with max|A·2^-e| < 1 (exact rescaling)."""
    e = _exponent(xp, A)
    return (xp.ldexp(A, -e) if e else A), e


def _scale_back(name, value, A, e, what):
    """A·2^e (second moments: the caller passes 2e); refuse if the result overflows float64."""
    if e == 0:
        return A
    xp = array_namespace_of(A)
    with np.errstate(over="ignore", under="ignore"):
        out = xp.ldexp(xp.asarray(A, dtype=xp.float64), e)
    if not bool(xp.all(xp.isfinite(out))):
        fail(name, value, f"{what} overflows float64 at this scale (entries up to 2^{e}); rescale the features")
    return float(out) if np.ndim(A) == 0 else out


# ----------------------------------------------------------------------------- statistics
@result_type
@dataclass(frozen=True)
class ClassStatistics:
    """Two-pass class statistics of features H (N × m) with labels y.

    Attributes
    ----------
    means : (K, m) class means μ_k.
    global_mean : (m,) μ_G = (1/K)Σ_k μ_k.
    counts : (K,) samples per class (NumPy).
    sigma_W : (m, m) within-class covariance (1/N)Σ (h − μ_{y})(h − μ_{y})ᵀ.
    sigma_B : (m, m) between-class covariance (1/K)Σ_k (μ_k − μ_G)(μ_k − μ_G)ᵀ.
    class_var : (K,) Var_k = mean over class k of ‖h − μ_k‖² (CDNV's numerator terms).
    """

    means: object
    global_mean: object
    counts: np.ndarray
    sigma_W: object
    sigma_B: object
    class_var: object

    @property
    def K(self) -> int:
        return int(self.means.shape[0])

    @property
    def N(self) -> int:
        return int(self.counts.sum())


def _first_pass(H, y, K):
    """(xp, H, y, K, counts, Y one-hot, class means, deviations D = H − μ_y, e) without any m×m matrix.

    H is rescaled exactly by 2^-e first (every quantity below is then of H·2^-e).
    """
    xp, H = _features(H)
    y, K, counts = _labels(y, H.shape[0], K, xp)
    H, e = _unit(xp, H)
    Y = _onehot(xp, y, K)
    means = (Y.T @ H) / xp.asarray(counts.astype(np.float64))[:, None]
    return xp, H, y, K, counts, Y, means, H - means[y], e


def _check_scatter_size(name, value, m, what):
    # Σ_W and Σ_B are m×m: size them before they are formed
    check_work(name, value, bytes=3 * 8 * int(m) ** 2, what=what)


@public(H=_H, y=_Y, K=_KOPT)
def class_statistics(H, y, K: int | None = None) -> ClassStatistics:
    """Class means, global mean, Σ_W and Σ_B of the review's §2.3 (two-pass, float64).

    Parameters
    ----------
    H : array_like, (N, m)
        Features, one sample per row (NumPy or CuPy).
    y : array_like of int, (N,)
        Labels in {0, …, K−1}; every class must occur.
    K : int, optional
        Number of classes (default: max(y) + 1).

    The statistics are computed on H·2^-e (an exact rescaling) and scaled back, so features of any
    magnitude give finite statistics whenever these are representable in float64.
    """
    xp, Hf = _features(H)
    _check_scatter_size("H", to_numpy(Hf) if Hf.size <= 6 else f"array of shape {tuple(Hf.shape)}", Hf.shape[1],
                        "class_statistics (m x m covariances)")
    xp, Hs, y, K, counts, Y, means, D, e = _first_pass(Hf, y, K)
    cnt = xp.asarray(counts.astype(np.float64))
    N = Hs.shape[0]
    sigma_W = (D.T @ D) / N
    class_var = (Y.T @ xp.sum(D * D, axis=1)) / cnt
    mu_G = means.mean(axis=0)
    Mc = means - mu_G
    sigma_B = (Mc.T @ Mc) / K
    show = f"array of shape {tuple(Hf.shape)}"
    return ClassStatistics(
        _scale_back("H", show, means, e, "the class means"),
        _scale_back("H", show, mu_G, e, "the global mean"),
        counts,
        _scale_back("H", show, sigma_W, 2 * e, "Σ_W"),
        _scale_back("H", show, sigma_B, 2 * e, "Σ_B"),
        _scale_back("H", show, class_var, 2 * e, "the class variances"),
    )


def _pinv_rank_tol(s, shape):
    return 10.0 * float(s.max()) * max(shape) * np.finfo(np.float64).eps if s.size else 0.0


def _nc1_from_stats(xp, means, mu_G, sigma_W, K, variant):
    Mc = means - mu_G
    if variant == "trace_ratio":
        trB = float(xp.sum(Mc * Mc)) / K
        trW = float(xp.trace(sigma_W))
        if trB == 0.0:
            fail("H", "features whose class means coincide", "NC1 is undefined when tr(Σ_B) = 0")
        return trW / trB
    # tr(Σ_W Σ_B⁺)/K with Σ_B = M̃ᵀM̃/K = V S² Vᵀ/K  ⇒  Σ_B⁺ = K V S⁻² Vᵀ
    V, s_k = _between_directions(xp, Mc, K)
    T = (V.T @ sigma_W @ V) / (s_k[:, None] * s_k[None, :])
    return float(xp.trace(T))


def _svd(xp, A, name):
    try:
        return xp.linalg.svd(A, full_matrices=False)
    except np.linalg.LinAlgError as exc:  # pragma: no cover - LAPACK non-convergence on finite input
        fail(name, f"array of shape {tuple(A.shape)}", f"the SVD did not converge ({exc})")


def _between_directions(xp, Mc, K):
    """Right singular vectors V (m×r) and singular values of the centred means M̃ kept for Σ_B⁺."""
    _, s, Vt = _svd(xp, Mc, "H")
    s_h = to_numpy(s)
    tol = _pinv_rank_tol(s_h, Mc.shape)
    # centred means have rank ≤ K−1; a K-th singular value is rounding noise of the centring
    keep = (s_h > tol) & (np.arange(s_h.size) < K - 1)
    if not keep.any():
        fail("H", "features whose class means coincide", "NC1 is undefined when Σ_B = 0")
    idx = xp.asarray(np.nonzero(keep)[0])
    return Vt[idx].T, s[idx]


@public(H=_H, y=_Y, variant=Choice("papyan", "trace_ratio"), K=_KOPT)
def nc1(H, y, variant: str = "papyan", *, K: int | None = None) -> float:
    """NC1 within-class variability collapse.

    Parameters
    ----------
    H : array_like, (N, m)
    y : array_like of int, (N,)
    variant : {"papyan", "trace_ratio"}
        ``"papyan"`` (default): (1/K)·tr(Σ_W Σ_B⁺), review eq. (4) (Papyan et al.);
        ``"trace_ratio"``: tr(Σ_W)/tr(Σ_B) (Súkeník et al. Def. 3.4; the perturbation paper's ÑC1, eq. 3).
    K : int, optional
        Number of classes (default max(y) + 1); every class must occur.

    Both are 0 iff every feature equals its class mean (zero within-class scatter gives exactly 0),
    and invariant under H → sQH (s ≠ 0, Q orthogonal) and under relabelling of classes; H is
    rescaled exactly by a power of two first, so H·1e300 and H·1e-300 give the value of H. Σ_B⁺ keeps
    at most K−1 singular directions of the centred means (their rank, so a rank-deficient Σ_B is
    handled), those above 10·max(K, m)·eps relative to the largest. Undefined (FCTheoryError) when
    all class means coincide (Σ_B = 0).
    """
    xp, H, y, K, counts, Y, means, D, _ = _first_pass(H, y, K)
    N = H.shape[0]
    Mc = means - means.mean(axis=0)
    if variant == "trace_ratio":
        trB = float(xp.sum(Mc * Mc)) / K
        if trB == 0.0:
            fail("H", "features whose class means coincide", "NC1 is undefined when tr(Σ_B) = 0")
        return float(xp.sum(D * D)) / N / trB
    # tr(Σ_W Σ_B⁺)/K = ‖D V S⁻¹‖²/N with M̃ = U S Vᵀ: only the ≤ K−1 between-class directions
    # are needed, O(N·m·K) instead of forming the m×m Σ_W and its pseudo-inverse
    V, s_k = _between_directions(xp, Mc, K)
    T = (D @ V) / s_k[None, :]
    return float(xp.sum(T * T)) / N


@public(K=Int(min=1))
def etf_gram(K: int) -> np.ndarray:
    """E_K = I_K − 11ᵀ/K: the Gram matrix of K centred simplex vertices up to scale (K/(K−1)).

    Parameters
    ----------
    K : int
        Size (≥ 1); the K×K result is sized against the memory budget before it is formed.
    """
    check_work("K", K, bytes=2 * 8 * K * K, what="etf_gram (a K x K matrix)")
    return _etf_gram(K)


def _etf_gram(K):
    E = np.full((K, K), -1.0 / K)
    E[np.diag_indices(K)] += 1.0
    return E


def _as_K_by_m(name, M):
    xp, M = _features(M, name)
    if M.shape[0] < 2:
        fail(name, to_numpy(M), "needs at least 2 rows (classes)")
    return xp, M


def _nearest_scaled(G, T):
    # min_{c ≥ 0} ‖G − cT‖_F / ‖G‖_F, closed form c* = max(0, ⟨G,T⟩/‖T‖²)
    nG = float((G * G).sum()) ** 0.5
    if nG == 0.0:
        fail("M", "a zero matrix", "the distance to a scaled frame is undefined for M = 0")
    c = max(0.0, float((G * T).sum()) / float((T * T).sum()))
    R = G - c * T
    return float((R * R).sum()) ** 0.5 / nG


def _check_gram_size(name, value, K, what):
    check_work(name, value, bytes=4 * 8 * int(K) ** 2, what=what)


def _centred_unit(xp, M, center):
    """The (optionally centred) rows of M, rescaled exactly so that the largest entry is < 1."""
    M = _unit(xp, M)[0]  # first: the mean of 1e308 entries would overflow
    Mc = M - M.mean(axis=0) if center else M
    return _unit(xp, Mc)[0]


@public(M=_M, variant=Choice("etf", "identity", "zhu", "cosine"), center=Bool())
def nc2(M, variant: str = "etf", *, center: bool = True) -> float:
    """NC2: distance of the rows of M (class means or classifier rows, K × m) to a simplex ETF.

    Parameters
    ----------
    M : array_like, (K, m)
    variant : {"etf", "identity", "zhu", "cosine"}
        ``"etf"`` (default): min_{c≥0} ‖GG − c·E_K‖_F/‖GG‖_F with GG = M̃M̃ᵀ, E_K = I − 11ᵀ/K
        (Súkeník et al.'s NC2A with the corrected E_K): 0 iff the rows are a scaled simplex ETF
        (equinorm *and* equiangular); in [0, 1].
        ``"identity"``: the same distance to c·I_K (NC2B, bias-free MSE optima); use ``center=False``.
        ``"zhu"``: ‖GG/‖GG‖_F − E_K/√(K−1)‖_F (Zhu et al., unnormalised centred rows).
        ``"cosine"``: the review's eq. (7), the same with row-normalised M̃ (equiangularity only,
        blind to unequal norms).
    center : bool
        Subtract the mean row first (M̃ = M − 1μ_Gᵀ). Default True.

    All variants are invariant under M → sMQ (s ≠ 0, Q orthogonal); M̃ is rescaled exactly by a
    power of two first, so M·1e300 and M·1e-300 give the value of M. Undefined (FCTheoryError) for
    M̃ = 0, and for ``"cosine"`` when a row of M̃ is zero.
    """
    xp, M = _as_K_by_m("M", M)
    K = M.shape[0]
    _check_gram_size("M", f"array of shape {tuple(M.shape)}", K, "nc2 (K x K Gram matrices)")
    Mc = _centred_unit(xp, M, center)
    if variant == "cosine":
        nr = xp.sqrt(xp.sum(Mc * Mc, axis=1))
        if bool(xp.any(nr == 0)):
            fail("M", "a matrix with a zero (centred) row", "cosines are undefined for zero rows")
        Mc = Mc / nr[:, None]
    G = to_numpy(Mc @ Mc.T)
    E = _etf_gram(K)
    if variant == "etf":
        return _nearest_scaled(G, E)
    if variant == "identity":
        return _nearest_scaled(G, np.eye(K))
    nG = np.linalg.norm(G)
    if nG == 0.0:
        fail("M", "a zero matrix", "NC2 is undefined for M = 0")
    return float(np.linalg.norm(G / nG - E / np.sqrt(K - 1)))


@public(M=_M, center=Bool())
def equinorm(M, *, center: bool = True) -> float:
    """Papyan's equinorm statistic std_k ‖m̃_k‖ / mean_k ‖m̃_k‖ (0 iff all centred rows have equal norm).

    A population standard deviation of non-negative norms: deviations cannot cancel. Scale
    invariant (M̃ is rescaled exactly first); undefined (FCTheoryError) when every row of M̃ is zero.
    """
    xp, M = _as_K_by_m("M", M)
    Mc = _centred_unit(xp, M, center)
    nr = to_numpy(xp.sqrt(xp.sum(Mc * Mc, axis=1)))
    mean = nr.mean()
    if mean == 0.0:
        fail("M", "a zero matrix", "equinorm is undefined when every row is zero")
    return float(np.sqrt(np.mean((nr - mean) ** 2)) / mean)


@public(M=_M, variant=Choice("max_angle", "std"), center=Bool())
def equiangularity(M, variant: str = "max_angle", *, center: bool = True) -> float:
    """Equiangularity of the (centred) rows of M.

    ``"max_angle"`` (default): mean_{k≠k'} |cos(m̃_k, m̃_k') + 1/(K−1)| (Papyan's "max-angle"; absolute
    values, so errors of opposite sign cannot cancel); ``"std"``: std_{k≠k'} cos(m̃_k, m̃_k')
    (Papyan's equiangularity, 0 for any equiangular set, not only the simplex). Scale invariant
    (M̃ is rescaled exactly first); undefined (FCTheoryError) when a row of M̃ is zero.
    """
    xp, M = _as_K_by_m("M", M)
    K = M.shape[0]
    _check_gram_size("M", f"array of shape {tuple(M.shape)}", K, "equiangularity (a K x K cosine matrix)")
    Mc = _centred_unit(xp, M, center)
    nr = xp.sqrt(xp.sum(Mc * Mc, axis=1))
    if bool(xp.any(nr == 0)):
        fail("M", "a matrix with a zero (centred) row", "cosines are undefined for zero rows")
    C = to_numpy((Mc @ Mc.T) / (nr[:, None] * nr[None, :]))
    off = C[~np.eye(K, dtype=bool)]
    if variant == "max_angle":
        return float(np.mean(np.abs(off + 1.0 / (K - 1))))
    return float(np.sqrt(np.mean((off - off.mean()) ** 2)))


def _check_W(W, K, m):
    xp, W = _features(W, "W")
    if W.shape != (K, m):
        fail("W", to_numpy(W), f"must have shape (K, m) = ({K}, {m}), got {tuple(W.shape)}")
    return W


def _nc3_from(xp, W, means, mu_G, H, y, variant):
    """NC3 of (W, M̃); W and the means may be given at any scale (each is rescaled exactly)."""
    K = W.shape[0]
    W = _unit(xp, W)[0]
    Mc = _unit(xp, means - mu_G)[0]
    if variant == "duality" or variant == "duality_squared":
        nW = float(xp.sqrt(xp.sum(W * W)))
        nM = float(xp.sqrt(xp.sum(Mc * Mc)))
        if nW == 0.0 or nM == 0.0:
            fail("W", "zero classifier or coinciding class means", "self-duality is undefined")
        D = W / nW - Mc / nM
        val = float(xp.sum(D * D))
        return val if variant == "duality_squared" else val**0.5
    if variant == "etf":
        G = to_numpy(W @ Mc.T)
        nG = np.linalg.norm(G)
        if nG == 0.0:
            fail("W", "W orthogonal to the centred means", "NC3 ('etf') is undefined when W M̃ᵀ = 0")
        return float(np.linalg.norm(G / nG - _etf_gram(K) / np.sqrt(K - 1)))
    # "cosine": 1 − (1/N)Σ_i cos(h_i, w_{y_i}) (Súkeník et al.); per-row norms of unit-scaled rows
    H = _unit(xp, H)[0]
    Wy = W[y]
    nh = xp.sqrt(xp.sum(H * H, axis=1))
    nw = xp.sqrt(xp.sum(Wy * Wy, axis=1))
    if bool(xp.any(nh == 0)) or bool(xp.any(nw == 0)):
        fail("H", "a zero feature or classifier row", "cosines are undefined for zero vectors")
    # normalise each row before the product: the cosine of two tiny rows cannot underflow
    num = xp.sum((H / nh[:, None]) * (Wy / nw[:, None]), axis=1)
    return float(1.0 - xp.mean(num))


@public(W=_M, H=_H, y=_Y, variant=Choice("duality", "duality_squared", "etf", "cosine"), K=_KOPT)
def nc3(W, H, y, variant: str = "duality", *, K: int | None = None) -> float:
    """NC3 self-duality of the classifier W (K × m) and the centred class means M̃ of H.

    Parameters
    ----------
    W : array_like, (K, m)
    H : array_like, (N, m)
    y : array_like of int, (N,)
    variant : {"duality", "duality_squared", "etf", "cosine"}
        ``"duality"`` (default): ‖W/‖W‖_F − M̃/‖M̃‖_F‖_F (Papyan et al.; ``"duality_squared"`` is its
        square, as Papyan plots it); 0 iff W ∝ M̃ (positive factor).
        ``"etf"``: ‖WM̃ᵀ/‖WM̃ᵀ‖_F − E_K/√(K−1)‖_F (review eq. (8), Zhu et al.); 0 does not imply W ∝ M̃.
        ``"cosine"``: 1 − (1/N)Σ_i cos(h_i, w_{y_i}) (Súkeník et al., per sample, uncentred).
    K : int, optional

    Invariant under (W, H) → (sWQᵀ, tHQᵀ) for s, t > 0 and Q orthogonal; W and H are rescaled exactly
    first, so any magnitude gives the same value.
    """
    xp, Hf, yy, K, _, _, means, _, _ = _first_pass(H, y, K)
    W = _check_W(W, K, means.shape[1])
    return _nc3_from(xp, W, means, means.mean(axis=0), Hf, yy, variant)


def _ncc_disagreements(xp, W, b, H, means):
    """Disagreements of argmax(Wh + b) and argmin ‖h − μ_c‖, free of overflow at any scale.

    argmax is invariant under a positive rescaling of (W, b) and argmin under a common one of
    (H, means); the cross term ⟨h, w⟩ is formed from unit-scaled factors and only then compared
    with b, so neither a huge nor a tiny scale changes the predictions.
    """
    Hs, eh = _unit(xp, H)
    Ms = xp.ldexp(means, -eh) if eh else means
    if b is not None:
        Wb, ew = _unit(xp, xp.concatenate([W, b[:, None]], axis=1))
        Ws, bs = Wb[:, :-1], Wb[:, -1]
    else:
        Ws, ew = _unit(xp, W)
        bs = None
    logits = Hs @ Ws.T  # true logits·2^-(eh+ew), minus the bias term
    if bs is not None and bool(xp.any(bs != 0)):
        # compare in the bias's scale when H is small, in the features' scale when H is large
        if eh >= 0:
            with np.errstate(under="ignore"):
                logits = logits + xp.ldexp(bs, -eh)[None, :]
        else:
            with np.errstate(under="ignore"):
                logits = xp.ldexp(logits, eh) + bs[None, :]
    pred = xp.argmax(logits, axis=1)
    # ‖h − μ_c‖² = ‖h‖² − 2⟨h, μ_c⟩ + ‖μ_c‖²; the ‖h‖² term does not change the argmin
    with np.errstate(over="ignore"):
        dist = -2.0 * (Hs @ Ms.T) + xp.sum(Ms * Ms, axis=1)[None, :]
    ncc = xp.argmin(dist, axis=1)
    return int(xp.sum(pred != ncc))


@public(W=_M, H=_H, y=_Y, b=Array(ndim=1).or_none(), means=_M.or_none(), K=_KOPT)
def nc4(W, H, y, b=None, *, means=None, K: int | None = None) -> float:
    """NC4: disagreement rate between the classifier argmax_c(⟨w_c, h⟩ + b_c) and the nearest class
    centre argmin_c ‖h − μ_c‖ (review eq. (9); a disagreement rate, not an error rate).

    Parameters
    ----------
    W : array_like, (K, m)
    H : array_like, (N, m)
    y : array_like of int, (N,)
        Labels (used for the class means when ``means`` is None).
    b : array_like, (K,), optional
    means : array_like, (K, m), optional
        Class means (e.g. from :class:`NCAccumulator`), to evaluate batches of a feature set that does
        not fit in memory; the counts are then additive over batches.
    K : int, optional

    Ties are broken towards the lowest class index in both rules. Invariant under (W, b) → s(W, b)
    and (H, means) → t(H, means) for s, t > 0, whatever the magnitudes.
    """
    xp, Hf = _features(H)
    if means is None:
        _, Hs, _, _, _, _, ms, _, e = _first_pass(Hf, y, K)
        means = xp.ldexp(ms, e) if e else ms
    else:
        _, means = _features(means, "means")
        if means.shape[1] != Hf.shape[1]:
            fail("means", to_numpy(means), f"must have m = {Hf.shape[1]} columns like H, got shape {tuple(means.shape)}")
        if K is not None and means.shape[0] != K:
            fail("K", K, f"must equal the number of rows of means ({means.shape[0]})")
        if means.shape[0] < 2:
            fail("means", to_numpy(means), "needs at least 2 rows (classes)")
        yh = np.asarray(to_numpy(y))
        if yh.ndim != 1 or yh.shape[0] != Hf.shape[0]:
            fail("y", yh, f"must be a 1-D label array of length N = {Hf.shape[0]} (one label per row of H)")
        if yh.size and int(yh.max()) >= means.shape[0]:
            fail("y", yh, f"labels must be < K = {means.shape[0]} (the rows of means)")
    Kc, m = means.shape
    W = _check_W(W, Kc, m)
    if b is not None:
        _, b2 = _features(xp.asarray(b).reshape(1, -1), "b")
        if b2.shape[1] != Kc:
            fail("b", to_numpy(b), f"must have K = {Kc} entries")
        b = b2[0]
    return _ncc_disagreements(xp, W, b, Hf, means) / Hf.shape[0]


def _cdnv_from(means, class_var, matrix):
    """CDNV from (unit-scaled) means and class variances: a ratio, so any common scale cancels."""
    mu = to_numpy(means)
    v = to_numpy(class_var)
    K, m = mu.shape
    # exact differences (no ‖a‖² + ‖b‖² − 2⟨a, b⟩ cancellation for close means), in row chunks so
    # the K×K×m temporary never exceeds ~32 MB whatever K is
    d2 = np.empty((K, K))
    step = max(1, 2**22 // max(1, K * m))
    for i in range(0, K, step):
        d2[i : i + step] = ((mu[i : i + step, None, :] - mu[None, :, :]) ** 2).sum(-1)
    off = ~np.eye(K, dtype=bool)
    if np.any(d2[off] == 0):
        fail("H", "two classes with the same mean", "CDNV is undefined when class means coincide")
    V = np.zeros((K, K))
    V[off] = ((v[:, None] + v[None, :]) / (2.0 * np.where(off, d2, 1.0)))[off]
    return V if matrix else float(V[off].mean())


@public(H=_H, y=_Y, matrix=Bool(), K=_KOPT)
def cdnv(H, y, *, matrix: bool = False, K: int | None = None):
    """Class-distance normalised variance (Galanti et al.; review eq. (51)).

    V(i, j) = (Var_i + Var_j) / (2‖μ_i − μ_j‖²) with Var_i = mean_{h in class i} ‖h − μ_i‖².
    Returns the average over the K(K−1) ordered pairs (the intended reading of the review's
    2/(s(s−1))·Σ_{i≠i′}, which doubles it; see docs/errata.md), or the K×K matrix (zero diagonal)
    with ``matrix=True``. Invariant under H → sQH + t (H is rescaled exactly first, so any magnitude
    gives the same value); 0 when every feature equals its class mean; undefined (FCTheoryError) when
    two class means coincide.
    """
    xp, H, y, K, counts, Y, means, D, _ = _first_pass(H, y, K)
    check_work("K", K, bytes=4 * 8 * K * K, what="cdnv (K x K pair matrices)")
    class_var = (Y.T @ xp.sum(D * D, axis=1)) / xp.asarray(counts.astype(np.float64))
    return _cdnv_from(means, class_var, matrix)


# ----------------------------------------------------------------------------- streaming
@public_class
class NCAccumulator:
    """Streaming class statistics for feature sets that do not fit in memory.

    Feed batches with :meth:`update`; per class it keeps the count, the mean and the scatter
    Σ (h − μ_k)(h − μ_k)ᵀ, merged with Chan et al.'s pairwise update (each batch's own statistics
    are two-pass), so the result equals :func:`class_statistics` on the concatenated data up to
    rounding. Memory: K·m + K·m² floats (use ``full_scatter=False`` to keep only the per-class
    traces, enough for :meth:`cdnv` and ``nc1(variant="trace_ratio")``), sized against the budget
    when the accumulator is built.

    The statistics are stored for the features rescaled exactly by a power of two 2^-e (e the
    largest exponent seen so far, earlier statistics rescaled when a larger batch arrives), so
    features of any magnitude never overflow; the scale-invariant metrics are computed in that scale
    and :meth:`statistics` scales back.

    Parameters
    ----------
    K : int
        Number of classes (≥ 2).
    m : int
        Feature dimension (≥ 1).
    full_scatter : bool
        Keep the m×m scatter of every class (needed by :meth:`statistics`, :meth:`nc1` "papyan").
    backend : {"numpy", "numba", "cupy"}

    Example
    -------
    >>> acc = NCAccumulator(K=10, m=512)
    >>> for Hb, yb in batches: acc.update(Hb, yb)          # doctest: +SKIP
    >>> acc.nc1(), acc.cdnv(), acc.nc2(), acc.nc3(W)        # doctest: +SKIP
    """

    @public(K=Int(min=2), m=Int(min=1), full_scatter=Bool(), backend=Choice("numpy", "numba", "cupy"))
    def __init__(self, K: int, m: int, *, full_scatter: bool = True, backend: str = "numpy"):
        from .._backend import get_namespace

        floats = K * m + 2 * K + (K * m * m if full_scatter else 0)
        check_work("m" if full_scatter else "K", m if full_scatter else K, bytes=8 * floats,
                   what="NCAccumulator (K*m means" + (" and K*m*m scatters)" if full_scatter else ")"))
        self.K = K
        self.m = m
        self.xp = get_namespace(backend)
        xp = self.xp
        self.full = bool(full_scatter)
        self.n = np.zeros(self.K, dtype=np.int64)
        self.mean = xp.zeros((self.K, self.m))
        self.scatter = xp.zeros((self.K, self.m, self.m)) if self.full else None
        self.sq = xp.zeros(self.K)  # trace of the scatter per class
        self._e = None  # the stored statistics are those of H·2^-e

    def _rescale(self, k):
        # the stored statistics were of H·2^-e_old; make them of H·2^-(e_old + k)
        xp = self.xp
        with np.errstate(under="ignore"):
            self.mean = xp.ldexp(self.mean, -k)
            self.sq = xp.ldexp(self.sq, -2 * k)
            if self.full:
                self.scatter = xp.ldexp(self.scatter, -2 * k)

    @public(H=_H, y=_Y)
    def update(self, H, y) -> "NCAccumulator":
        """Add a batch: features H (N × m) with labels y (N,) in [0, K−1]; returns the accumulator.

        Everything is checked before anything is changed, so a refused batch leaves the
        accumulator as it was. Negative labels are refused (never wrapped).
        """
        xp = self.xp
        _, Hb = _features(H)
        Hb = xp.asarray(Hb)
        if Hb.shape[1] != self.m:
            fail("H", to_numpy(Hb), f"must have m = {self.m} columns, got shape {tuple(Hb.shape)}")
        yh = np.asarray(to_numpy(y))
        if yh.ndim != 1 or yh.shape[0] != Hb.shape[0] or yh.dtype.kind not in "iu":
            fail("y", yh, f"must be a 1-D integer label array of length N = {Hb.shape[0]} (one label per row of H)")
        if yh.size and (yh.min() < 0 or yh.max() >= self.K):
            fail("y", yh, f"labels must lie in [0, K-1] = [0, {self.K - 1}]")
        e = _exponent(xp, Hb)
        if self._e is None:
            self._e = e
        elif e > self._e:
            self._rescale(e - self._e)
            self._e = e
        with np.errstate(under="ignore"):
            Hb = xp.ldexp(Hb, -self._e) if self._e else Hb
        for k in np.unique(yh):
            idx = xp.asarray(np.nonzero(yh == k)[0])
            Xk = Hb[idx]
            nb = Xk.shape[0]
            mb = Xk.mean(axis=0)
            Dk = Xk - mb
            na = int(self.n[k])
            tot = na + nb
            delta = mb - self.mean[k]
            self.mean[k] = self.mean[k] + delta * (nb / tot)
            w = na * nb / tot
            self.sq[k] = self.sq[k] + xp.sum(Dk * Dk) + w * xp.sum(delta * delta)
            if self.full:
                self.scatter[k] = self.scatter[k] + Dk.T @ Dk + w * xp.outer(delta, delta)
            self.n[k] = tot
        return self

    def _check_all(self):
        if np.any(self.n == 0):
            fail("y", f"counts {self.n.tolist()}", f"every class must have been seen (class {int(np.argmin(self.n))} is empty)")

    def _scaled_statistics(self) -> ClassStatistics:
        self._check_all()
        if not self.full:
            fail("full_scatter", False, "Σ_W needs full_scatter=True")
        xp = self.xp
        N = int(self.n.sum())
        sigma_W = self.scatter.sum(axis=0) / N
        mu_G = self.mean.mean(axis=0)
        Mc = self.mean - mu_G
        sigma_B = (Mc.T @ Mc) / self.K
        cnt = xp.asarray(self.n.astype(np.float64))
        return ClassStatistics(self.mean.copy(), mu_G, self.n.copy(), sigma_W, sigma_B, self.sq / cnt)

    @public()
    def statistics(self) -> ClassStatistics:
        """The :class:`ClassStatistics` of everything seen so far (needs ``full_scatter``)."""
        st = self._scaled_statistics()
        e, show = self._e, "the accumulated features"
        return ClassStatistics(
            _scale_back("H", show, st.means, e, "the class means"),
            _scale_back("H", show, st.global_mean, e, "the global mean"),
            st.counts,
            _scale_back("H", show, st.sigma_W, 2 * e, "Σ_W"),
            _scale_back("H", show, st.sigma_B, 2 * e, "Σ_B"),
            _scale_back("H", show, st.class_var, 2 * e, "the class variances"),
        )

    @public(variant=Choice("papyan", "trace_ratio"))
    def nc1(self, variant: str = "papyan") -> float:
        """NC1 of everything seen so far (see :func:`nc1`)."""
        self._check_all()
        xp = self.xp
        if variant == "trace_ratio" and not self.full:
            mu_G = self.mean.mean(axis=0)
            Mc = self.mean - mu_G
            trB = float(xp.sum(Mc * Mc)) / self.K
            if trB == 0.0:
                fail("H", "features whose class means coincide", "NC1 is undefined when tr(Σ_B) = 0")
            return float(xp.sum(self.sq)) / int(self.n.sum()) / trB
        st = self._scaled_statistics()
        return _nc1_from_stats(xp, st.means, st.global_mean, st.sigma_W, self.K, variant)

    @public(matrix=Bool())
    def cdnv(self, *, matrix: bool = False):
        """CDNV of everything seen so far (see :func:`cdnv`)."""
        self._check_all()
        cnt = self.xp.asarray(self.n.astype(np.float64))
        return _cdnv_from(self.mean, self.sq / cnt, matrix)

    @public(variant=Choice("etf", "identity", "zhu", "cosine"))
    def nc2(self, variant: str = "etf") -> float:
        """NC2 of the class means seen so far (see :func:`nc2`)."""
        self._check_all()
        return nc2(self.mean, variant)

    @public(W=_M, variant=Choice("duality", "duality_squared", "etf", "cosine"))
    def nc3(self, W, variant: str = "duality") -> float:
        """NC3 of the classifier W (K × m) against the class means seen so far (see :func:`nc3`)."""
        if variant == "cosine":
            fail("variant", variant, "the per-sample cosine NC3 needs the samples; use nc3(W, H, y)")
        self._check_all()
        W = _check_W(W, self.K, self.m)
        return _nc3_from(self.xp, W, self.mean, self.mean.mean(axis=0), None, None, variant)
