"""The task model of section 2: concepts, words, latent variables and their sentences.

Conventions (used everywhere in fctheory):

* concepts α ∈ {0, …, n_c−1}, words-in-concept β ∈ {0, …, s_c−1} (0-based; β = 0 is the most
  frequent word under Zipf); word (α, β) has vocabulary index ``α·s_c + β``;
* ``Z`` is a K×L integer array, ``Z[k, ℓ]`` the concept of position ℓ of latent variable z_k;
* W is d×n_w (column = word embedding), U is K×(L·d) with u_{k,ℓ} = U[k, ℓd:(ℓ+1)d].
"""

from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass, field
from math import comb

import numpy as np
from scipy.special import gammaln

from ._budget import check_work
from ._validate import Array, Bool, Int, Prob, Seed, check_mu, fail, public

__all__ = ["Task", "task_first"]


def as_rng(seed):
    """``seed`` as a NumPy Generator (a Generator is used as is; an int or None seeds a new one)."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or isinstance(seed, (int, np.integer)):
        return np.random.default_rng(seed)
    fail("seed", seed, "must be a numpy Generator, an integer seed or None")


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
        Latent variables z_k (0-based concept indices), mutually distinct unless ``allow_duplicates``.
    mu : {"uniform", "zipf"} or array_like, shape (s_c,)
        Word frequencies μ_β within each concept (positive, summing to 1); the same law in
        every concept, as in section 3 of the paper.
    allow_duplicates : bool, keyword-only
        Accept equal rows of Z (the authors' notebooks draw the latent variables with replacement,
        see :meth:`Task.random`). Classes with equal latent variables have the same sentence
        distribution, so no classifier tells them apart: the best test accuracy is
        :attr:`accuracy_cap` = (number of distinct rows)/K. The paper's theorems assume distinct rows.

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
    allow_duplicates: bool = field(default=False, kw_only=True)

    def __post_init__(self):
        # the declared kinds (Task.__fc_params__), applied in order; Z's bounds depend on n_c
        n_c = _KINDS["n_c"]("n_c", self.n_c)
        s_c = _KINDS["s_c"]("s_c", self.s_c)
        L = _KINDS["L"]("L", self.L)
        _check_vocabulary(n_c, s_c)
        Z = Array(ndim=2, integer=True, min=0, max=n_c - 1)("Z", self.Z)
        if Z.shape[1] != L:
            fail("Z", self.Z, f"must have shape (K, L) = (K, {L}), got {Z.shape}")
        allow = _KINDS["allow_duplicates"]("allow_duplicates", self.allow_duplicates)
        check_work(
            "Z", self.Z, bytes=_unique_bytes(Z.shape), what="Task (checking that the latent variables are distinct)"
        )
        if not allow:
            dup = _first_duplicate(Z)
            if dup is not None:
                fail(
                    "Z",
                    self.Z,
                    f"latent variables (rows) must be mutually distinct (rows {dup[0]} and {dup[1]} "
                    "are equal; pass allow_duplicates=True to keep duplicated classes)",
                )
        self._freeze(n_c, s_c, L, Z, _KINDS["mu"]("mu", self.mu), allow)

    def _freeze(self, n_c, s_c, L, Z, mu, allow_duplicates=False):
        """Store the checked fields (read-only arrays); ``mu`` is resolved against s_c here."""
        check_work("s_c", s_c, bytes=16 * s_c, what="Task (word frequencies mu)")
        mu = check_mu(mu, s_c)
        if mu.ndim != 1:
            fail("mu", mu, "must be one frequency vector of length s_c")
        Z = np.ascontiguousarray(Z, dtype=np.int64)
        Z.setflags(write=False)
        mu = mu.copy()
        mu.setflags(write=False)
        object.__setattr__(self, "n_c", n_c)
        object.__setattr__(self, "s_c", s_c)
        object.__setattr__(self, "L", L)
        object.__setattr__(self, "Z", Z)
        object.__setattr__(self, "mu", mu)
        object.__setattr__(self, "allow_duplicates", bool(allow_duplicates))
        # distinct rows: K unless duplicates are allowed (then counted once, O(K L log K))
        n_distinct = int(np.unique(Z, axis=0).shape[0]) if allow_duplicates and Z.shape[0] > 1 else int(Z.shape[0])
        object.__setattr__(self, "_n_distinct", n_distinct)

    @classmethod
    def _trusted(cls, n_c, s_c, L, Z, mu, allow_duplicates=False) -> "Task":
        """A Task from rows known to be in range, and distinct unless ``allow_duplicates`` (Task.full/Task.random)."""
        self = object.__new__(cls)
        _check_vocabulary(n_c, s_c)
        self._freeze(n_c, s_c, L, Z, mu, allow_duplicates)
        return self

    # ----------------------------------------------------------------- constructors
    @classmethod
    @public(n_c=Int(min=2), s_c=Int(min=1), L=Int(min=1), mu=Prob(), legacy_positional=("mu",))
    def full(cls, n_c: int, s_c: int, L: int, *, mu="uniform") -> "Task":
        """All n_c**L latent variables, in lexicographic order (z_0 = (0,…,0)).

        Limited to n_c**L <= 10**7 latent variables and to the memory budget
        (:func:`fctheory.set_budget`): the size is checked in logs *before* n_c**L is formed.
        """
        # compare in logs first: n_c**L itself may be astronomically large (n_c=3, L=2**70)
        if L > 24 or L * math.log(n_c) > math.log(10**7) + 1e-9:
            fail("L", L, f"Task.full would hold n_c**L = {_show_power(n_c, L)} latent variables (limit 10**7)")
        N = n_c**L
        if N > 10**7:
            fail("L", L, f"Task.full would hold n_c**L = {N} latent variables (limit 10**7)")
        # measured peak ≈ 8·N·(L + 4) bytes (the N×L output, idx and rem); 1.5× for safety
        check_work("L", L, bytes=12 * N * (L + 4), what=f"Task.full(n_c={n_c}, s_c={s_c}, L={L})")
        check_work("s_c", s_c, bytes=16 * s_c, what="Task (word frequencies mu)")
        return cls._trusted(n_c, s_c, L, _digits(np.arange(N, dtype=np.int64), n_c, L), mu)

    @classmethod
    @public(
        n_c=Int(min=2),
        s_c=Int(min=1),
        L=Int(min=1),
        K=Int(min=1, max=10**7),
        mu=Prob(),
        seed=Seed(),
        replace=Bool(),
        legacy_positional=("mu", "seed"),
    )
    def random(cls, n_c: int, s_c: int, L: int, K: int, *, mu="uniform", seed=None, replace=False) -> "Task":
        """K latent variables drawn uniformly at random from C^L: distinct by default, or i.i.d.

        Parameters
        ----------
        n_c, s_c, L, K : int
            Concepts, words per concept, sentence length, classes (K ≤ 10**7 and the memory budget).
        mu : {"uniform", "zipf"} or array_like
            Word frequencies.
        seed : None, int or numpy Generator
        replace : bool
            False (default): K mutually distinct rows, uniform among the K-subsets of C^L (needs
            K ≤ n_c^L), as the paper assumes. True: the K rows are drawn i.i.d. uniformly, *with*
            replacement, as in the authors' notebooks; the Task then has ``allow_duplicates=True``.
            A row equals at least one of the other K − 1 with probability 1 − (1 − n_c^{-L})^{K−1},
            and duplicated classes cannot be told apart, so the test accuracy of any classifier is at
            most :attr:`accuracy_cap` = (distinct rows)/K (e.g. about 0.95 for n_c = 3, L = 6, K = 70).
        """
        if replace:
            check_work(
                "K",
                K,
                bytes=8 * K * L * 4 + 16 * K,
                what=f"Task.random(n_c={n_c}, s_c={s_c}, L={L}, K={K}, replace=True)",
            )
            check_work("s_c", s_c, bytes=16 * s_c, what="Task (word frequencies mu)")
            _check_vocabulary(n_c, s_c)
            Z = as_rng(seed).integers(0, n_c, size=(K, L), dtype=np.int64)
            return cls._trusted(n_c, s_c, L, Z, mu, allow_duplicates=True)
        if L < 64 and (math.log(K) > L * math.log(n_c) + 1e-9 or (L * math.log2(n_c) < 64 and K > n_c**L)):
            fail("K", K, f"must be <= n_c**L = {_show_power(n_c, L)} (the number of distinct latent variables)")
        small = L < 62 and L * math.log2(n_c) < 62
        N = n_c**L if small else None
        dense = small and (N <= 4 * K or N <= 10**6)
        # measured peaks: the dense path holds a permutation of N and the K×L digits; the rejection path
        # keeps up to 3K+8 candidate rows, which np.unique(axis=0) copies a few times
        need = 12 * K * (L + 4) + 8 * N if dense else 8 * (3 * K + 8) * (4 * L + 2)
        check_work("K", K, bytes=need, what=f"Task.random(n_c={n_c}, s_c={s_c}, L={L}, K={K})")
        check_work("s_c", s_c, bytes=16 * s_c, what="Task (word frequencies mu)")
        _check_vocabulary(n_c, s_c)
        rng = as_rng(seed)
        if dense:
            idx = rng.choice(N, size=K, replace=False)
            Z = _digits(idx.astype(np.int64), n_c, L)
        else:  # sparse (N > 4K): rejection sampling of whole rows
            Z = _distinct_rows(rng, n_c, L, K)
        return cls._trusted(n_c, s_c, L, Z, mu)

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
        """|𝒵| = n_c**L, the number of possible latent variables (an exact int).

        Refused (FCTheoryError) when n_c**L has more than 2**22 bits (over a million digits):
        use ``L * log(n_c)`` instead.
        """
        bits = self.L * math.log2(self.n_c)
        if bits > 2**22:
            fail(
                "L",
                self.L,
                f"n_latent = n_c**L = {_show_power(self.n_c, self.L)} has about {bits:.3g} bits; "
                "use L*log(n_c) instead of the exact integer",
            )
        return self.n_c**self.L

    @property
    def is_full(self) -> bool:
        """True when {z_1, …, z_K} = 𝒵 (K = n_c**L distinct rows)."""
        # K rows are in memory, so a latent space of more than 2**63 elements is never full
        return self.L * math.log2(self.n_c) < 63 and self.K == self._n_distinct == self.n_c**self.L

    @property
    def n_distinct(self) -> int:
        """Number of distinct latent variables (rows of Z); K unless the task allows duplicates."""
        return self._n_distinct

    @property
    def accuracy_cap(self) -> float:
        """Best expected test accuracy of any classifier on balanced classes: n_distinct / K.

        Classes with equal latent variables have the same sentence distribution D_z; a classifier
        answers one class per sentence, so a group of m equal classes contributes at most 1/m of its
        test sentences. 1.0 when the rows are distinct.
        """
        return self._n_distinct / self.K

    @property
    def is_uniform(self) -> bool:
        """True when every word of a concept has the same frequency μ_β = 1/s_c."""
        return bool(np.all(self.mu == self.mu[0]))

    @public(alpha=Array(integer=True, min=0, max=2**62), beta=Array(integer=True, min=0, max=2**62))
    def word_index(self, alpha, beta):
        """Vocabulary index of word (α, β): α·s_c + β (arrays broadcast).

        α must lie in [0, n_c − 1] and β in [0, s_c − 1]: negative indices are refused, never wrapped.
        """
        for name, v, hi in (("alpha", alpha, self.n_c), ("beta", beta, self.s_c)):
            if v.size and int(v.max()) >= hi:
                fail(name, int(v.max()), f"must be < {'n_c' if name == 'alpha' else 's_c'} = {hi}")
        try:
            shape = np.broadcast_shapes(alpha.shape, beta.shape)
        except ValueError:
            fail("beta", beta, f"must broadcast against alpha (shapes {alpha.shape} and {beta.shape})")
        check_work("alpha", alpha, bytes=16 * math.prod(shape), what="word_index")
        out = alpha * self.s_c + beta  # < n_w <= 2**62: no int64 overflow
        return out[()] if out.ndim == 0 else out

    def _n_w_array(self, what: str, per_word: int = 8) -> None:
        check_work("s_c", self.s_c, bytes=per_word * self.n_w, what=f"Task.{what} (n_w = {self.n_w} words)")

    @property
    def word_concept(self) -> np.ndarray:
        """Concept α of each vocabulary word (length n_w)."""
        self._n_w_array("word_concept")
        return np.repeat(np.arange(self.n_c), self.s_c)

    @property
    def word_rank(self) -> np.ndarray:
        """Index β of each vocabulary word inside its concept (length n_w)."""
        self._n_w_array("word_rank")
        return np.tile(np.arange(self.s_c), self.n_c)

    @property
    def word_freq(self) -> np.ndarray:
        """μ_β of each vocabulary word (length n_w)."""
        self._n_w_array("word_freq")
        return np.tile(self.mu, self.n_c)

    # ----------------------------------------------------------------- matrices of appendix B
    @property
    def P(self) -> np.ndarray:
        """P ∈ R^{n_c×n_w}: P ζ(α,β) = e_α."""
        self._n_w_array("P", 16 * self.n_c)
        return np.kron(np.eye(self.n_c), np.ones((1, self.s_c)))

    @property
    def Q(self) -> np.ndarray:
        """Q ∈ R^{n_c×n_w}: Q ζ(α,β) = μ_β e_α (so PQᵀ = I)."""
        self._n_w_array("Q", 16 * self.n_c)
        return np.kron(np.eye(self.n_c), self.mu[None, :])

    @property
    def Z_onehot(self) -> np.ndarray:
        """The paper's Z = [Z_1 … Z_K] ∈ R^{n_c×KL}; column k·L+ℓ is e_{z_{k,ℓ}}."""
        check_work("n_c", self.n_c, bytes=8 * self.n_c * self.K * self.L, what="Task.Z_onehot")
        out = np.zeros((self.n_c, self.K * self.L))
        out[self.Z.ravel(), np.arange(self.K * self.L)] = 1.0
        return out

    @public()
    def hamming(self) -> np.ndarray:
        """K×K matrix of Hamming distances dist(z_k, z_j)."""
        K, L = self.K, self.L
        check_work("K", K, bytes=K * K * (L + 16), seconds=K * K * L // 10**9, what="Task.hamming (K×K×L comparisons)")
        return (self.Z[:, None, :] != self.Z[None, :, :]).sum(-1)

    @public()
    def S_r_counts(self) -> np.ndarray:
        """|S_r| predicted by Lemma B(i) for r = 0..L: (K/n_c^L)·C(L,r)(n_c−1)^r.

        Exact rational arithmetic (correctly rounded floats) while the integers stay small; for large
        L·log n_c the same numbers from log-gamma (relative error ~1e-13).
        """
        K, L, n_c = self.K, self.L, self.n_c
        check_work("L", L, bytes=8 * (L + 1), what="Task.S_r_counts")
        if L * L * math.log2(n_c) <= 1e8:
            N = n_c**L
            return np.array([K * comb(L, r) * (n_c - 1) ** r / N for r in range(L + 1)])
        r = np.arange(L + 1, dtype=np.float64)
        logs = (
            math.log(K)
            + gammaln(L + 1.0)
            - gammaln(r + 1)
            - gammaln(L - r + 1)
            + r * math.log(n_c - 1)
            - L * math.log(n_c)
        )
        return np.exp(logs)

    # ----------------------------------------------------------------- sampling
    @public(n_spl=Int(min=1), seed=Seed(), renamed={"rng": "seed"}, legacy_positional=("seed",))
    def sample(self, n_spl: int, *, seed=None):
        """Draw ``n_spl`` sentences per class, class-major as in the authors' notebooks.

        Parameters
        ----------
        n_spl : int
            Sentences per class (the K·n_spl×L result must fit the memory budget).
        seed : None, int or numpy Generator
            Seed or generator (``rng`` before 1.0).

        Returns
        -------
        X : ndarray of int64, shape (K·n_spl, L)
            Word indices α·s_c + β.
        y : ndarray of int64, shape (K·n_spl,)
            Class labels k (row block k·n_spl … (k+1)·n_spl−1 has label k).
        """
        n = self.K * n_spl
        check_work("n_spl", n_spl, bytes=8 * n * (3 * self.L + 2) + 8 * self.s_c, what=f"Task.sample ({n} sentences)")
        rng = as_rng(seed)
        y = np.repeat(np.arange(self.K, dtype=np.int64), n_spl)
        beta = rng.choice(self.s_c, size=(n, self.L), p=self.mu)
        X = self.Z[y] * self.s_c + beta
        return X.astype(np.int64), y

    def __repr__(self) -> str:
        law = "uniform" if self.is_uniform else f"mu=[{self.mu[0]:.4g}, …, {self.mu[-1]:.4g}]"
        dup = f", {self.K - self._n_distinct} duplicated rows" if self.allow_duplicates else ""
        return f"Task(n_c={self.n_c}, s_c={self.s_c}, L={self.L}, K={self.K}, {law}{dup})"


# the constructor's parameter kinds (checked in __post_init__; read by the fuzz suite)
_KINDS = dict(
    n_c=Int(min=2),
    s_c=Int(min=1),
    L=Int(min=1),
    Z=Array(ndim=2, integer=True, min=0),
    mu=Prob(),
    allow_duplicates=Bool(),
)
Task.__fc_params__ = _KINDS


def task_first(*, deprecated: bool):
    """Also accept ``f(W, U, task, ...)`` for ``f(task, W, U, ...)`` (recognised by the Task in third place).

    A 0.x-compatibility shim (the other ones are in :mod:`fctheory._compat`): ``deprecated=True`` warns (an
    order being phased out); ``False`` accepts both orders silently (a Task is never an array, so the call is
    unambiguous). Apply it above ``@public``.
    """

    def deco(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if len(args) >= 3 and isinstance(args[2], Task) and not isinstance(args[0], Task):
                if deprecated:
                    warnings.warn(
                        f"{fn.__qualname__}(W, U, task, ...) is deprecated: call "
                        f"{fn.__qualname__}(task, W, U, ...) (see CHANGELOG.md)",
                        DeprecationWarning,
                        stacklevel=2,
                    )
                args = (args[2], args[0], args[1], *args[3:])
            return fn(*args, **kwargs)

        return wrapper

    return deco


def _check_vocabulary(n_c: int, s_c: int) -> None:
    """Word indices α·s_c + β are int64: n_w = n_c·s_c must stay below 2**62."""
    if n_c * s_c > 2**62:
        fail("s_c", s_c, f"n_w = n_c*s_c = {n_c}*{s_c} must be <= 2**62 (word indices are int64)")


def _unique_bytes(shape) -> int:
    """Working memory of the distinct-rows check on a K×L int64 array (a copy and the row hashes)."""
    K, L = (int(v) for v in shape)
    return 8 * K * L * 2 + 32 * K


def _first_duplicate(Z: np.ndarray):
    """(i, j) with rows i < j of Z equal, or None; O(K·L) time and O(K) extra memory.

    Rows are hashed by a random linear map mod 2**64 (np.unique(axis=0) is pathologically slow for
    wide rows); rows with equal hashes are then compared exactly, so the answer is exact.
    """
    K = Z.shape[0]
    if K < 2:
        return None
    w = np.random.default_rng(0x5EED).integers(1, 2**63, size=Z.shape[1], dtype=np.uint64)
    with np.errstate(over="ignore"):
        h = np.ascontiguousarray(Z).view(np.uint64) @ w  # wraps mod 2**64
    order = np.argsort(h, kind="stable")
    hs = h[order]
    starts = np.nonzero(hs[1:] == hs[:-1])[0]
    for i in starts:  # each equal-hash run: compare its rows exactly (a true collision is ~K²/2**64 likely)
        j = i + 1
        while j + 1 < K and hs[j + 1] == hs[i]:
            j += 1
        seen = {}
        for k in sorted(order[i : j + 1].tolist()):
            key = Z[k].tobytes()
            if key in seen:
                return seen[key], k
            seen[key] = k
    return None


def _show_power(n_c: int, L: int) -> str:
    """n_c**L for a message, exact when short, else as a power of ten (never formed in full)."""
    if L < 100 and L * math.log10(n_c) < 30:
        return str(n_c**L)
    if L > 10**300:
        return f"{n_c}**{L}"
    return f"{n_c}**{L} ≈ 10^{L * math.log10(n_c):.6g}"


def digits(idx: np.ndarray, n_c: int, L: int) -> np.ndarray:
    """Base-n_c digits of idx, most significant first (lexicographic order)."""
    out = np.empty((idx.size, L), dtype=np.int64)
    rem = idx.copy()
    for ell in range(L - 1, -1, -1):
        out[:, ell] = rem % n_c
        rem //= n_c
    return out


_digits = digits  # the former private name, still used inside this module


def _distinct_rows(rng, n_c: int, L: int, K: int) -> np.ndarray:
    """K distinct uniform rows of C^L by rejection (used when n_c**L >> K)."""
    rows = np.empty((0, L), dtype=np.int64)
    while rows.shape[0] < K:
        extra = rng.integers(0, n_c, size=(2 * (K - rows.shape[0]) + 8, L))
        allr = np.concatenate([rows, extra])
        _, first = np.unique(allr, axis=0, return_index=True)
        rows = allr[np.sort(first)]
    return rows[:K]
