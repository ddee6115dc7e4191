"""The task model of section 2: concepts, words, latent variables and their sentences.

Conventions (used everywhere in fctheory):

* concepts α ∈ {0, …, n_c−1}, words-in-concept β ∈ {0, …, s_c−1} (0-based; β = 0 is the most
  frequent word under Zipf); word (α, β) has vocabulary index ``α·s_c + β``;
* ``Z`` is a K×L integer array, ``Z[k, ℓ]`` the concept of position ℓ of latent variable z_k;
* W is d×n_w (column = word embedding), U is K×(L·d) with u_{k,ℓ} = U[k, ℓd:(ℓ+1)d].
"""
from __future__ import annotations

from dataclasses import dataclass, field
from math import comb

import numpy as np

from ._validate import check_int, check_mu, fail

__all__ = ["Task"]


def _as_rng(rng):
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, (int, np.integer)):
        return np.random.default_rng(rng)
    fail("rng", rng, "must be a numpy Generator, an integer seed or None")


@dataclass(frozen=True, eq=False)
class Task:
    """A feature-collapse task: K classes, each a latent sequence of L concepts.

    Parameters
    ----------
    n_c : int
        Number of concepts (≥ 2).
    s_c : int
        Words per concept (≥ 1); the vocabulary has n_w = n_c·s_c words.
    L : int
        Sentence length (≥ 1).
    Z : array_like of int, shape (K, L)
        Latent variables z_k (0-based concept indices), mutually distinct.
    mu : {"uniform", "zipf"} or array_like, shape (s_c,)
        Word frequencies μ_β within each concept (positive, summing to 1); the same law in
        every concept, as in section 3 of the paper.

    Notes
    -----
    A sentence x ~ D_{z_k} has word (z_{k,ℓ}, β_ℓ) at position ℓ with β_ℓ drawn i.i.d. from μ,
    so D_{z_k}(x) = Π_ℓ μ_{β_ℓ} when the concepts of x match z_k and 0 otherwise.
    """

    n_c: int
    s_c: int
    L: int
    Z: np.ndarray
    mu: np.ndarray = field(default="uniform")

    def __post_init__(self):
        n_c = check_int("n_c", self.n_c, min=2)
        s_c = check_int("s_c", self.s_c, min=1)
        L = check_int("L", self.L, min=1)
        Z = np.asarray(self.Z)
        if Z.dtype.kind not in "iu":
            if Z.dtype.kind == "f" and Z.size and np.all(Z == np.round(Z)):
                Z = Z.astype(np.int64)
            else:
                fail("Z", self.Z, "must be an integer array of concept indices")
        if Z.ndim != 2 or Z.shape[1] != L:
            fail("Z", self.Z, f"must have shape (K, L) = (K, {L}), got {Z.shape}")
        if Z.shape[0] < 1:
            fail("Z", self.Z, "must contain at least one latent variable (K >= 1)")
        if Z.min() < 0 or Z.max() >= n_c:
            fail("Z", self.Z, f"entries must be concept indices in [0, n_c-1] = [0, {n_c - 1}]")
        Z = np.ascontiguousarray(Z, dtype=np.int64)
        uniq = np.unique(Z, axis=0)
        if uniq.shape[0] != Z.shape[0]:
            fail("Z", self.Z, "latent variables (rows) must be mutually distinct")
        mu = check_mu(self.mu, s_c)
        if mu.ndim != 1:
            fail("mu", self.mu, "must be one frequency vector of length s_c")
        Z.setflags(write=False)
        mu = mu.copy()
        mu.setflags(write=False)
        object.__setattr__(self, "n_c", n_c)
        object.__setattr__(self, "s_c", s_c)
        object.__setattr__(self, "L", L)
        object.__setattr__(self, "Z", Z)
        object.__setattr__(self, "mu", mu)

    # ----------------------------------------------------------------- constructors
    @classmethod
    def full(cls, n_c: int, s_c: int, L: int, mu="uniform") -> "Task":
        """All n_c**L latent variables, in lexicographic order (z_0 = (0,…,0))."""
        n_c = check_int("n_c", n_c, min=2)
        L = check_int("L", L, min=1)
        N = n_c**L
        if N > 10**7:
            fail("L", L, f"Task.full would hold n_c**L = {N} latent variables (limit 10**7)")
        return cls(n_c, s_c, L, _digits(np.arange(N, dtype=np.int64), n_c, L), mu)

    @classmethod
    def random(cls, n_c: int, s_c: int, L: int, K: int, mu="uniform", seed=None) -> "Task":
        """K mutually distinct latent variables drawn uniformly at random from C^L."""
        n_c = check_int("n_c", n_c, min=2)
        L = check_int("L", L, min=1)
        N = n_c**L
        K = check_int("K", K, min=1)
        if K > N:
            fail("K", K, f"must be <= n_c**L = {N} (the number of distinct latent variables)")
        if K > 10**7:
            fail("K", K, "must be <= 10**7 for an explicit task")
        rng = _as_rng(seed)
        if N <= 2**62:
            if N <= 4 * K or N <= 10**6:
                idx = rng.choice(N, size=K, replace=False)
                Z = _digits(idx.astype(np.int64), n_c, L)
            else:  # sparse: rejection sampling of whole rows
                Z = _distinct_rows(rng, n_c, L, K)
        else:
            Z = _distinct_rows(rng, n_c, L, K)
        return cls(n_c, s_c, L, Z, mu)

    # ----------------------------------------------------------------- properties
    @property
    def K(self) -> int:
        """Number of classes (latent variables)."""
        return int(self.Z.shape[0])

    @property
    def n_w(self) -> int:
        """Vocabulary size n_c·s_c."""
        return self.n_c * self.s_c

    @property
    def n_latent(self) -> int:
        """|𝒵| = n_c**L, the number of possible latent variables."""
        return self.n_c**self.L

    @property
    def is_full(self) -> bool:
        """True when {z_1, …, z_K} = 𝒵 (K = n_c**L)."""
        return self.K == self.n_latent

    @property
    def is_uniform(self) -> bool:
        return bool(np.all(self.mu == self.mu[0]))

    def word_index(self, alpha, beta):
        """Vocabulary index of word (α, β): α·s_c + β."""
        return np.asarray(alpha) * self.s_c + np.asarray(beta)

    @property
    def word_concept(self) -> np.ndarray:
        """Concept α of each vocabulary word (length n_w)."""
        return np.repeat(np.arange(self.n_c), self.s_c)

    @property
    def word_rank(self) -> np.ndarray:
        """Index β of each vocabulary word inside its concept (length n_w)."""
        return np.tile(np.arange(self.s_c), self.n_c)

    @property
    def word_freq(self) -> np.ndarray:
        """μ_β of each vocabulary word (length n_w)."""
        return np.tile(self.mu, self.n_c)

    # ----------------------------------------------------------------- matrices of appendix B
    @property
    def P(self) -> np.ndarray:
        """P ∈ R^{n_c×n_w}: P ζ(α,β) = e_α."""
        return np.kron(np.eye(self.n_c), np.ones((1, self.s_c)))

    @property
    def Q(self) -> np.ndarray:
        """Q ∈ R^{n_c×n_w}: Q ζ(α,β) = μ_β e_α (so PQᵀ = I)."""
        return np.kron(np.eye(self.n_c), self.mu[None, :])

    @property
    def Z_onehot(self) -> np.ndarray:
        """The paper's Z = [Z_1 … Z_K] ∈ R^{n_c×KL}; column k·L+ℓ is e_{z_{k,ℓ}}."""
        out = np.zeros((self.n_c, self.K * self.L))
        out[self.Z.ravel(), np.arange(self.K * self.L)] = 1.0
        return out

    def hamming(self) -> np.ndarray:
        """K×K matrix of Hamming distances dist(z_k, z_j)."""
        return (self.Z[:, None, :] != self.Z[None, :, :]).sum(-1)

    def S_r_counts(self) -> np.ndarray:
        """|S_r| predicted by Lemma B(i) for r = 0..L: (K/n_c^L)·C(L,r)(n_c−1)^r."""
        return np.array(
            [self.K * comb(self.L, r) * (self.n_c - 1) ** r / self.n_latent for r in range(self.L + 1)]
        )

    # ----------------------------------------------------------------- sampling
    def sample(self, n_spl: int, rng=None):
        """Draw ``n_spl`` sentences per class, class-major as in the authors' notebooks.

        Returns
        -------
        X : ndarray of int64, shape (K·n_spl, L)
            Word indices α·s_c + β.
        y : ndarray of int64, shape (K·n_spl,)
            Class labels k (row block k·n_spl … (k+1)·n_spl−1 has label k).
        """
        n_spl = check_int("n_spl", n_spl, min=1)
        rng = _as_rng(rng)
        y = np.repeat(np.arange(self.K, dtype=np.int64), n_spl)
        beta = rng.choice(self.s_c, size=(self.K * n_spl, self.L), p=self.mu)
        X = self.Z[y] * self.s_c + beta
        return X.astype(np.int64), y

    def __repr__(self) -> str:
        law = "uniform" if self.is_uniform else f"mu=[{self.mu[0]:.4g}, …, {self.mu[-1]:.4g}]"
        return f"Task(n_c={self.n_c}, s_c={self.s_c}, L={self.L}, K={self.K}, {law})"


def _digits(idx: np.ndarray, n_c: int, L: int) -> np.ndarray:
    """Base-n_c digits of idx, most significant first (lexicographic order)."""
    out = np.empty((idx.size, L), dtype=np.int64)
    rem = idx.copy()
    for ell in range(L - 1, -1, -1):
        out[:, ell] = rem % n_c
        rem //= n_c
    return out


def _distinct_rows(rng, n_c: int, L: int, K: int) -> np.ndarray:
    """K distinct uniform rows of C^L by rejection (used when n_c**L >> K)."""
    rows = np.empty((0, L), dtype=np.int64)
    while rows.shape[0] < K:
        extra = rng.integers(0, n_c, size=(2 * (K - rows.shape[0]) + 8, L))
        allr = np.concatenate([rows, extra])
        _, first = np.unique(allr, axis=0, return_index=True)
        rows = allr[np.sort(first)]
    return rows[:K]
