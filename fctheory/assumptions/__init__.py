"""Checkers for the paper's assumptions on the latent variables (appendix B).

* :func:`check_assumption_A` — the latent-symmetry counts (35), in exact integer arithmetic,
  reporting every violated quadruple (k, r, ℓ, α);
* :func:`lemma_B_properties` — the three properties (i)–(iii) of Lemma B that the collapse proofs
  actually use, with θ_r and A_r recovered as exact rationals;
* :func:`check_assumption_B` — the linear system (44) over symmetric matrices, solved exactly, and a
  semidefinite certificate (cvxpy) of a PSD solution outside 𝒜 = span{I, 11ᵀ} when one exists;
* :func:`search_assumption_A` / :func:`search_lemma_B` — the existence question the paper leaves open:
  for which small (n_c, L, K < n_c^L) do latent sets satisfying Assumption A (resp. Lemma B) exist?

Every function accepts a :class:`~fctheory.Task` or a K×L integer array of latent variables
(then ``n_c`` is needed). Latent variables are rows z_k with 0-based concepts, as in ``Task.Z``.

The checkers live in one module per object of the paper: :mod:`.assumption_a`, :mod:`.lemma_b`,
:mod:`.assumption_b` and :mod:`.existence` (their shared latent-set handling in ``_common``).
"""

from .assumption_a import AssumptionAResult, AssumptionAViolation, assumption_A_counts, check_assumption_A
from .assumption_b import AssumptionBResult, check_assumption_B
from .existence import ExistenceResult, search_assumption_A, search_lemma_B

# the enumeration helpers, outside __all__, for the independent checks in proofs_check
from .existence import all_latent as all_latent, subsets_balanced as subsets_balanced
from .lemma_b import LemmaBResult, lemma_B_properties

__all__ = [
    "AssumptionAViolation",
    "AssumptionAResult",
    "LemmaBResult",
    "AssumptionBResult",
    "ExistenceResult",
    "check_assumption_A",
    "lemma_B_properties",
    "check_assumption_B",
    "search_assumption_A",
    "search_lemma_B",
    "assumption_A_counts",
]
