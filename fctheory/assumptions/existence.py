"""The existence question the paper leaves open: for which small (n_c, L, K < n_c^L) do latent sets satisfying
Assumption A (resp. Lemma B) exist? Exhaustive searches under a time budget, and the divisibility argument."""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass

import numpy as np

from .._budget import check_work, get_budget
from .._validate import Bool, Choice, Int, fail, public, result_type
from ._common import _hamming

# the checkers are looked up on their modules at call time: a wrapper set on a checker's home (a test counting
# calls, a proofs_check mutant) is what the searches run
from . import assumption_a, lemma_b

__all__ = ["ExistenceResult", "search_assumption_A", "search_lemma_B"]


@result_type
@dataclass
class ExistenceResult:
    """Result of :func:`search_assumption_A` / :func:`search_lemma_B` for one (n_c, L).

    Attributes
    ----------
    n_c, L : int
    property : str
        "assumption A" or "lemma B".
    method : str
        "exhaustive" (every subset of 𝒵 of each size) or "integrality" (the divisibility argument).
    counts : dict
        K → number of latent sets (subsets of 𝒵 of size K) with the property.
    examples : dict
        K → one such latent set (K×L int array), for every K with counts[K] > 0.
    n_sets : int
        Number of subsets examined.
    """

    n_c: int
    L: int
    property: str
    method: str
    counts: dict
    examples: dict
    n_sets: int

    @public()
    def sizes(self):
        """The K < n_c^L for which a latent set with the property exists."""
        return sorted(k for k, v in self.counts.items() if v and k < self.n_c**self.L)


_MAX_EXHAUSTIVE = 2**16


def _all_latent(n_c, L):
    return np.array(list(itertools.product(range(n_c), repeat=L)), dtype=np.int64)


def _subsets_balanced(n_c, L, K, with_origin: bool = False, deadline=None):
    """Subsets of 𝒵 of size K, as index tuples, pruned by (37) (needed by A and by Lemma B(ii)).

    With ``with_origin`` only the subsets containing z = (0, …, 0) (index 0) are generated.
    """
    allz = _all_latent(n_c, L)
    N = len(allz)
    if K % n_c:
        return
    target = K // n_c
    # depth-first search keeping per-(ℓ, α) counts ≤ target
    cnt = np.zeros((L, n_c), dtype=np.int64)
    chosen = []
    pos = np.arange(L)
    if with_origin:
        chosen.append(0)
        cnt[pos, allz[0]] += 1

    def rec(start):
        if deadline is not None:
            deadline()
        if len(chosen) == K:
            yield tuple(chosen)
            return
        for i in range(start, N - (K - len(chosen)) + 1):
            z = allz[i]
            if np.any(cnt[pos, z] >= target):
                continue
            cnt[pos, z] += 1
            chosen.append(i)
            yield from rec(i + 1)
            chosen.pop()
            cnt[pos, z] -= 1

    yield from rec(1 if with_origin else 0)


class _Deadline:
    """The time budget of an exhaustive search, checked as it runs (its size is only bounded loosely
    up front): past ``max_seconds`` the search stops with the project error and the reason."""

    def __init__(self, name, value, what):
        self._clock = time.perf_counter
        self.t0 = self._clock()
        self.limit = get_budget().max_seconds
        self.name, self.value, self.what = name, value, what
        self.n = 0

    def tick(self, n_sets):
        self.n += 1
        if self.n % 64 == 0 and self._clock() - self.t0 > self.limit:
            fail(
                self.name,
                self.value,
                f"{self.what} stopped after {self._clock() - self.t0:.3g} s with {n_sets} sets examined: "
                f"over the budget max_seconds={self.limit:.3g} (give one K, or raise it with "
                "fctheory.set_budget(max_seconds=...))",
            )


def _search(n_c, L, prop, test, Ks, with_origin=False, deadline=None):
    allz = _all_latent(n_c, L)
    counts, examples, n_sets = {}, {}, 0
    for K in Ks:
        c = 0
        for sub in _subsets_balanced(n_c, L, K, with_origin, deadline=lambda: deadline.tick(n_sets)):
            n_sets += 1
            Zs = allz[list(sub)]
            if test(Zs):
                c += 1
                examples.setdefault(K, Zs)
        counts[K] = c
    return ExistenceResult(
        n_c, L, prop, "exhaustive (sets containing 0^L)" if with_origin else "exhaustive", counts, examples, n_sets
    )


def _check_search_args(n_c, L, K, limit):
    """Sizes checked in logs before n_c**L is formed (L may be huge)."""
    if L > 62 or L * math.log2(n_c) > 62:
        fail("L", L, f"n_c**L = {n_c}**{L} is far too many latent variables (limit n_c**L <= {limit})")
    N = n_c**L
    if K is not None and K > N:
        fail("K", K, f"must be <= n_c**L = {N}")
    return N, (list(range(1, N + 1)) if K is None else [K])


@public(
    n_c=Int(min=2),
    L=Int(min=1),
    K=Int(min=1).or_none(),
    method=Choice("exhaustive", "integrality"),
    legacy_positional=("n_c", "L", "K"),
)
def search_assumption_A(*, n_c: int, L: int, K: int | None = None, method: str = "exhaustive") -> ExistenceResult:
    """For which K ≤ n_c^L do latent sets of K distinct z ∈ 𝒵 satisfy Assumption A exactly?

    Parameters
    ----------
    n_c, L : int
    K : int, optional
        One size to examine (default: every K = 1..n_c^L).
    method : {"exhaustive", "integrality"}
        "exhaustive" runs :func:`check_assumption_A` on every subset of 𝒵 of size K that satisfies
        (37) (a consequence of A; n_c^L ≤ 16 only); "integrality" applies the divisibility
        argument: (35) at r = 1, z_{k,ℓ} ≠ α demands the integer K/n_c^L, so only
        K = n_c^L can work, and there 𝒵 itself is the only subset (it satisfies A by Lemma C's
        counting). With K omitted it reports every K = 1..n_c^L, so n_c^L is limited by the
        budget's ``max_items`` (and the example 𝒵 by ``max_bytes``).

    Returns
    -------
    ExistenceResult

    Raises
    ------
    FCTheoryError
        On invalid input, n_c^L > 16 for the exhaustive method, or a request over the budget
        (the exhaustive search also stops when it runs past ``max_seconds``).
    """
    if method == "integrality":
        N, _ = _check_search_args(n_c, L, K, "2**62")
        if K is None:
            check_work(
                "L",
                L,
                items=N,
                bytes=200 * N,
                what=f"search_assumption_A(method='integrality') over all K <= n_c**L = {N}",
            )
        if K is None or K == N:
            check_work("L", L, bytes=8 * N * (L + 1) * 4, what="the example latent set 𝒵 (n_c**L × L)")
        Ks = list(range(1, N + 1)) if K is None else [K]
        counts = {k: int(k % N == 0) for k in Ks}
        ex = {N: _all_latent(n_c, L)} if N in Ks else {}
        return ExistenceResult(n_c, L, "assumption A", "integrality", counts, ex, 0)
    N, Ks = _check_search_args(n_c, L, K, 16)
    if N > 16:
        fail("L", L, f"exhaustive search is limited to n_c**L <= 16, got {N} (use method='integrality')")
    return _search(
        n_c,
        L,
        "assumption A",
        lambda Zs: assumption_a.check_assumption_A(Zs, n_c=n_c).holds,
        Ks,
        deadline=_Deadline("K" if K is not None else "L", K if K is not None else L, "search_assumption_A"),
    )


@public(n_c=Int(min=2), L=Int(min=1), K=Int(min=1).or_none(), with_origin=Bool(), legacy_positional=("n_c", "L", "K"))
def search_lemma_B(*, n_c: int, L: int, K: int | None = None, with_origin: bool = False) -> ExistenceResult:
    """Exhaustively find the latent sets (subsets of 𝒵) satisfying Lemma B (i)–(iii).

    The collapse proofs only use Lemma B, so these sets (which exist for some K < n_c^L, unlike
    Assumption A) are the ones for which the appendix-C/D arguments go through.

    Parameters
    ----------
    n_c, L : int
    K : int, optional
        One size to examine (default: every K).
    with_origin : bool
        Only examine sets containing z = (0, …, 0). Lemma B is invariant under relabelling the concepts
        of each position separately, and these relabellings move any z to 0^L, so a Lemma-B set of size K
        exists iff one containing 0^L does (the count of such sets is the total times K/n_c^L). Allows
        n_c^L ≤ 27 (otherwise ≤ 16).

    Raises
    ------
    FCTheoryError
        On invalid input, n_c^L over the limit, or when the search runs past the budget's
        ``max_seconds`` (e.g. every K for n_c = 3, L = 3: give one K).
    """
    limit = 27 if with_origin else 16
    N, Ks = _check_search_args(n_c, L, K, limit)
    if N > limit:
        fail(
            "L",
            L,
            f"exhaustive search is limited to n_c**L <= {limit}, got {N}"
            + ("" if with_origin else " (27 with with_origin=True)"),
        )

    def test(Zs):
        D = _hamming(Zs)
        S = np.stack([(D == r).sum(1) for r in range(1, L + 1)], 1)
        return bool(np.all(S == S[0])) and lemma_b.lemma_B_properties(Zs, n_c=n_c).holds  # (i) first: cheap filter

    return _search(
        n_c,
        L,
        "lemma B",
        test,
        Ks,
        with_origin,
        deadline=_Deadline("K" if K is not None else "L", K if K is not None else L, "search_lemma_B"),
    )


# public names of the enumeration helpers, for the independent checks in proofs_check
all_latent = _all_latent
subsets_balanced = _subsets_balanced
