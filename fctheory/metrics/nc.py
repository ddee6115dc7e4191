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
from .._validate import check_choice, fail

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
def _features(H, name="H"):
    xp = array_namespace_of(H)
    H = xp.asarray(H)
    if H.ndim != 2:
        fail(name, to_numpy(H), "must be a 2-D array (samples x features)")
    if H.dtype.kind not in "iuf":
        fail(name, to_numpy(H), f"must be real numbers, got dtype {H.dtype}")
    H = H.astype(xp.float64, copy=False)
    if not bool(xp.all(xp.isfinite(H))):
        fail(name, "array with non-finite entries", "must be finite")
    return xp, H


def _labels(y, N, K=None, xp=np):
    yh = np.asarray(to_numpy(y))
    if yh.ndim != 1 or yh.shape[0] != N:
        fail("y", yh, f"must be a 1-D label array of length N = {N}")
    if yh.dtype.kind not in "iu":
        if yh.dtype.kind == "f" and np.all(yh == np.round(yh)):
            yh = yh.astype(np.int64)
        else:
            fail("y", yh, "must be integer class labels")
    if yh.size and yh.min() < 0:
        fail("y", yh, "labels must be >= 0")
    Kd = int(yh.max()) + 1 if yh.size else 0
    if K is None:
        K = Kd
    elif Kd > K:
        fail("y", yh, f"labels must be < K = {K}")
    counts = np.bincount(yh, minlength=K)
    if K < 2:
        fail("y", yh, "needs at least 2 classes")
    if np.any(counts == 0):
        fail("y", yh, f"every class 0..K-1 must occur (class {int(np.argmin(counts))} is empty)")
    return xp.asarray(yh.astype(np.int64)), K, counts


def _onehot(xp, y, K):
    Y = xp.zeros((y.shape[0], K), dtype=xp.float64)
    Y[xp.arange(y.shape[0]), y] = 1.0
    return Y


# ----------------------------------------------------------------------------- statistics
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
    """(xp, H, y, K, counts, Y one-hot, class means, deviations D = H − μ_y) without any m×m matrix."""
    xp, H = _features(H)
    y, K, counts = _labels(y, H.shape[0], K, xp)
    Y = _onehot(xp, y, K)
    means = (Y.T @ H) / xp.asarray(counts.astype(np.float64))[:, None]
    return xp, H, y, K, counts, Y, means, H - means[y]


def class_statistics(H, y, K: int | None = None) -> ClassStatistics:
    """Class means, global mean, Σ_W and Σ_B of the review's §2.3 (two-pass, float64)."""
    xp, H = _features(H)
    y, K, counts = _labels(y, H.shape[0], K, xp)
    Y = _onehot(xp, y, K)
    cnt = xp.asarray(counts.astype(np.float64))
    means = (Y.T @ H) / cnt[:, None]
    D = H - means[y]  # second pass: deviations from the class means
    N = H.shape[0]
    sigma_W = (D.T @ D) / N
    class_var = (Y.T @ xp.sum(D * D, axis=1)) / cnt
    mu_G = means.mean(axis=0)
    Mc = means - mu_G
    sigma_B = (Mc.T @ Mc) / K
    return ClassStatistics(means, mu_G, counts, sigma_W, sigma_B, class_var)


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


def _between_directions(xp, Mc, K):
    """Right singular vectors V (m×r) and singular values of the centred means M̃ kept for Σ_B⁺."""
    _, s, Vt = xp.linalg.svd(Mc, full_matrices=False)
    s_h = to_numpy(s)
    tol = _pinv_rank_tol(s_h, Mc.shape)
    # centred means have rank ≤ K−1; a K-th singular value is rounding noise of the centring
    keep = (s_h > tol) & (np.arange(s_h.size) < K - 1)
    if not keep.any():
        fail("H", "features whose class means coincide", "NC1 is undefined when Σ_B = 0")
    idx = xp.asarray(np.nonzero(keep)[0])
    return Vt[idx].T, s[idx]


def nc1(H, y, variant: str = "papyan", *, K: int | None = None) -> float:
    """NC1 within-class variability collapse.

    Parameters
    ----------
    H : array_like, (N, m)
    y : array_like of int, (N,)
    variant : {"papyan", "trace_ratio"}
        ``"papyan"`` (default): (1/K)·tr(Σ_W Σ_B⁺), review eq. (4) (Papyan et al.);
        ``"trace_ratio"``: tr(Σ_W)/tr(Σ_B) (Súkeník et al. Def. 3.4; the perturbation paper's ÑC1, eq. 3).

    Both are 0 iff every feature equals its class mean, and invariant under H → sQH (s ≠ 0, Q
    orthogonal) and under relabelling of classes. Σ_B⁺ keeps at most K−1 singular directions of
    the centred means (their rank), those above 10·max(K, m)·eps relative to the largest.
    """
    check_choice("variant", variant, {"papyan", "trace_ratio"})
    xp, H, y, K, counts, Y, means, D = _first_pass(H, y, K)
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


def etf_gram(K: int) -> np.ndarray:
    """E_K = I_K − 11ᵀ/K: the Gram matrix of K centred simplex vertices up to scale (K/(K−1))."""
    return np.eye(K) - np.ones((K, K)) / K


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

    All variants are invariant under M → sMQ (s ≠ 0, Q orthogonal).
    """
    check_choice("variant", variant, {"etf", "identity", "zhu", "cosine"})
    xp, M = _as_K_by_m("M", M)
    K = M.shape[0]
    Mc = M - M.mean(axis=0) if center else M
    if variant == "cosine":
        nr = xp.sqrt(xp.sum(Mc * Mc, axis=1))
        if bool(xp.any(nr == 0)):
            fail("M", "a matrix with a zero (centred) row", "cosines are undefined for zero rows")
        Mc = Mc / nr[:, None]
    G = to_numpy(Mc @ Mc.T)
    E = etf_gram(K)
    if variant == "etf":
        return _nearest_scaled(G, E)
    if variant == "identity":
        return _nearest_scaled(G, np.eye(K))
    nG = np.linalg.norm(G)
    if nG == 0.0:
        fail("M", "a zero matrix", "NC2 is undefined for M = 0")
    return float(np.linalg.norm(G / nG - E / np.sqrt(K - 1)))


def equinorm(M, *, center: bool = True) -> float:
    """Papyan's equinorm statistic std_k ‖m̃_k‖ / mean_k ‖m̃_k‖ (0 iff all centred rows have equal norm).

    A population standard deviation of non-negative norms: deviations cannot cancel.
    """
    xp, M = _as_K_by_m("M", M)
    Mc = M - M.mean(axis=0) if center else M
    nr = to_numpy(xp.sqrt(xp.sum(Mc * Mc, axis=1)))
    mean = nr.mean()
    if mean == 0.0:
        fail("M", "a zero matrix", "equinorm is undefined when every row is zero")
    return float(np.sqrt(np.mean((nr - mean) ** 2)) / mean)


def equiangularity(M, variant: str = "max_angle", *, center: bool = True) -> float:
    """Equiangularity of the (centred) rows of M.

    ``"max_angle"`` (default): mean_{k≠k'} |cos(m̃_k, m̃_k') + 1/(K−1)| (Papyan's "max-angle"; absolute
    values, so errors of opposite sign cannot cancel); ``"std"``: std_{k≠k'} cos(m̃_k, m̃_k')
    (Papyan's equiangularity, 0 for any equiangular set, not only the simplex).
    """
    check_choice("variant", variant, {"max_angle", "std"})
    xp, M = _as_K_by_m("M", M)
    K = M.shape[0]
    Mc = M - M.mean(axis=0) if center else M
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
    K = W.shape[0]
    Mc = means - mu_G
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
        return float(np.linalg.norm(G / nG - etf_gram(K) / np.sqrt(K - 1)))
    # "cosine": 1 − (1/N)Σ_i cos(h_i, w_{y_i}) (Súkeník et al.)
    Wy = W[y]
    num = xp.sum(H * Wy, axis=1)
    den = xp.sqrt(xp.sum(H * H, axis=1) * xp.sum(Wy * Wy, axis=1))
    if bool(xp.any(den == 0)):
        fail("H", "a zero feature or classifier row", "cosines are undefined for zero vectors")
    return float(1.0 - xp.mean(num / den))


def nc3(W, H, y, variant: str = "duality", *, K: int | None = None) -> float:
    """NC3 self-duality of the classifier W (K × m) and the centred class means M̃ of H.

    Parameters
    ----------
    variant : {"duality", "duality_squared", "etf", "cosine"}
        ``"duality"`` (default): ‖W/‖W‖_F − M̃/‖M̃‖_F‖_F (Papyan et al.; ``"duality_squared"`` is its
        square, as Papyan plots it); 0 iff W ∝ M̃ (positive factor).
        ``"etf"``: ‖WM̃ᵀ/‖WM̃ᵀ‖_F − E_K/√(K−1)‖_F (review eq. (8), Zhu et al.); 0 does not imply W ∝ M̃.
        ``"cosine"``: 1 − (1/N)Σ_i cos(h_i, w_{y_i}) (Súkeník et al., per sample, uncentred).

    Invariant under (W, H) → (sWQᵀ, tHQᵀ) for s, t > 0 and Q orthogonal.
    """
    check_choice("variant", variant, {"duality", "duality_squared", "etf", "cosine"})
    xp, Hf, yy, K, _, _, means, _ = _first_pass(H, y, K)
    W = _check_W(W, K, means.shape[1])
    return _nc3_from(xp, W, means, means.mean(axis=0), Hf, yy, variant)


def _ncc_disagreements(xp, W, b, H, means):
    logits = H @ W.T
    if b is not None:
        logits = logits + b[None, :]
    pred = xp.argmax(logits, axis=1)
    # ‖h − μ_c‖² = ‖h‖² − 2⟨h, μ_c⟩ + ‖μ_c‖²; the ‖h‖² term does not change the argmin
    dist = -2.0 * (H @ means.T) + xp.sum(means * means, axis=1)[None, :]
    ncc = xp.argmin(dist, axis=1)
    return int(xp.sum(pred != ncc))


def nc4(W, H, y, b=None, *, means=None, K: int | None = None) -> float:
    """NC4: disagreement rate between the classifier argmax_c(⟨w_c, h⟩ + b_c) and the nearest class
    centre argmin_c ‖h − μ_c‖ (review eq. (9); a disagreement rate, not an error rate).

    ``means`` (K × m) may be given (e.g. from :class:`NCAccumulator`) to evaluate batches of a
    feature set that does not fit in memory; the counts are then additive over batches. Ties are
    broken towards the lowest class index in both rules.
    """
    xp, Hf = _features(H)
    if means is None:
        means = _first_pass(Hf, y, K)[6]
    else:
        _, means = _features(means, "means")
    Kc, m = means.shape
    W = _check_W(W, Kc, m)
    if b is not None:
        _, b2 = _features(xp.asarray(b).reshape(1, -1), "b")
        if b2.shape[1] != Kc:
            fail("b", to_numpy(b), f"must have K = {Kc} entries")
        b = b2[0]
    return _ncc_disagreements(xp, W, b, Hf, means) / Hf.shape[0]


def _cdnv_from(means, class_var, matrix):
    mu = to_numpy(means)
    v = to_numpy(class_var)
    K = mu.shape[0]
    d2 = ((mu[:, None, :] - mu[None, :, :]) ** 2).sum(-1)
    off = ~np.eye(K, dtype=bool)
    if np.any(d2[off] == 0):
        fail("H", "two classes with the same mean", "CDNV is undefined when class means coincide")
    V = np.zeros((K, K))
    V[off] = ((v[:, None] + v[None, :]) / (2.0 * np.where(off, d2, 1.0)))[off]
    return V if matrix else float(V[off].mean())


def cdnv(H, y, *, matrix: bool = False, K: int | None = None):
    """Class-distance normalised variance (Galanti et al.; review eq. (51)).

    V(i, j) = (Var_i + Var_j) / (2‖μ_i − μ_j‖²) with Var_i = mean_{h in class i} ‖h − μ_i‖².
    Returns the average over the K(K−1) ordered pairs (the intended reading of the review's
    2/(s(s−1))·Σ_{i≠i′}, which doubles it; see docs/errata.md), or the K×K matrix (zero diagonal)
    with ``matrix=True``. Invariant under H → sQH + t.
    """
    xp, H, y, K, counts, Y, means, D = _first_pass(H, y, K)
    class_var = (Y.T @ xp.sum(D * D, axis=1)) / xp.asarray(counts.astype(np.float64))
    return _cdnv_from(means, class_var, matrix)


# ----------------------------------------------------------------------------- streaming
class NCAccumulator:
    """Streaming class statistics for feature sets that do not fit in memory.

    Feed batches with :meth:`update`; per class it keeps the count, the mean and the scatter
    Σ (h − μ_k)(h − μ_k)ᵀ, merged with Chan et al.'s pairwise update (each batch's own statistics
    are two-pass), so the result equals :func:`class_statistics` on the concatenated data up to
    rounding. Memory: K·m + K·m² floats (use ``full_scatter=False`` to keep only the per-class
    traces, enough for :meth:`cdnv` and ``nc1(variant="trace_ratio")``).

    Example
    -------
    >>> acc = NCAccumulator(K=10, m=512)
    >>> for Hb, yb in batches: acc.update(Hb, yb)          # doctest: +SKIP
    >>> acc.nc1(), acc.cdnv(), acc.nc2(), acc.nc3(W)        # doctest: +SKIP
    """

    def __init__(self, K: int, m: int, *, full_scatter: bool = True, backend: str = "numpy"):
        from .._backend import get_namespace
        from .._validate import check_int

        self.K = check_int("K", K, min=2)
        self.m = check_int("m", m, min=1)
        self.xp = get_namespace(backend)
        xp = self.xp
        self.full = bool(full_scatter)
        self.n = np.zeros(self.K, dtype=np.int64)
        self.mean = xp.zeros((self.K, self.m))
        self.scatter = xp.zeros((self.K, self.m, self.m)) if self.full else None
        self.sq = xp.zeros(self.K)  # trace of the scatter per class

    def update(self, H, y) -> "NCAccumulator":
        xp = self.xp
        _, Hb = _features(H)
        Hb = xp.asarray(Hb)
        if Hb.shape[1] != self.m:
            fail("H", to_numpy(Hb), f"must have m = {self.m} columns")
        yh = np.asarray(to_numpy(y))
        if yh.ndim != 1 or yh.shape[0] != Hb.shape[0] or yh.dtype.kind not in "iu":
            fail("y", yh, "must be a 1-D integer label array matching H's rows")
        if yh.size and (yh.min() < 0 or yh.max() >= self.K):
            fail("y", yh, f"labels must lie in [0, K-1] = [0, {self.K - 1}]")
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

    def statistics(self) -> ClassStatistics:
        """The :class:`ClassStatistics` of everything seen so far (needs ``full_scatter``)."""
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

    def nc1(self, variant: str = "papyan") -> float:
        check_choice("variant", variant, {"papyan", "trace_ratio"})
        self._check_all()
        xp = self.xp
        if variant == "trace_ratio" and not self.full:
            mu_G = self.mean.mean(axis=0)
            Mc = self.mean - mu_G
            trB = float(xp.sum(Mc * Mc)) / self.K
            if trB == 0.0:
                fail("H", "features whose class means coincide", "NC1 is undefined when tr(Σ_B) = 0")
            return float(xp.sum(self.sq)) / int(self.n.sum()) / trB
        st = self.statistics()
        return _nc1_from_stats(xp, st.means, st.global_mean, st.sigma_W, self.K, variant)

    def cdnv(self, *, matrix: bool = False):
        self._check_all()
        cnt = self.xp.asarray(self.n.astype(np.float64))
        return _cdnv_from(self.mean, self.sq / cnt, matrix)

    def nc2(self, variant: str = "etf") -> float:
        self._check_all()
        return nc2(self.mean, variant)

    def nc3(self, W, variant: str = "duality") -> float:
        if variant == "cosine":
            fail("variant", variant, "the per-sample cosine NC3 needs the samples; use nc3(W, H, y)")
        check_choice("variant", variant, {"duality", "duality_squared", "etf"})
        self._check_all()
        W = _check_W(W, self.K, self.m)
        return _nc3_from(self.xp, W, self.mean, self.mean.mean(axis=0), None, None, variant)
