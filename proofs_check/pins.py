"""Pinned assertion counts of every proofs_check check, next to the registry (proofs_check/registry.py).

``ASSERTIONS[id] = (expect() calls, distinct expect() call sites)`` of the check in quick mode (the full-grid
run of a slow check makes more). Deleting or bypassing one of a check's assertions changes these numbers, so
it cannot go unnoticed: tests/proofs_check/test_registry.py compares every check with its pin. After a
deliberate change of a check, regenerate the table with ``python -m proofs_check.pins``.
"""

from .registry import count_expects, get_checks

__all__ = ["ASSERTIONS", "measure"]

ASSERTIONS = {
    "lemmaB-i-pascal": (17, 3),
    "lemmaB-ii-sums": (25, 6),
    "lemmaB-iii-theta": (12, 6),
    "binomial-identity-H": (25, 6),
    "H-strict-convexity": (9, 4),
    "tau-trivial-threshold": (11, 5),
    "lemmaF-claimA-value": (12, 4),
    "lemmaM-claimD-value": (15, 3),
    "lemmaK-lemmaR-constants": (63, 7),
    "eq148-149-to-7-8": (5, 4),
    "propD-monotonicity": (8, 6),
    "lemmaB-enum-full": (38, 5),
    "lemmaK-eq92": (48, 2),
    "lemmaR-eq124": (24, 2),
    "propC-gradient": (4, 2),
    "thm2-critical-point": (6, 3),
    "assumptionB-lemmaC": (8, 2),
    "assumptionA-random": (411, 2),
    "assumptionB-certificates": (20, 4),
    "existence-assumptionA": (9, 3),
    "lemmaB-weaker-than-A": (7, 2),
    "lemmaB-iii-forced": (48, 3),
    "thmG-nuclear-inequality": (250, 5),
    "thmD-lower-bound": (60, 3),
    "lemmaF-lemmaM-bounds": (156, 6),
    "convex-f-crosscheck": (4, 1),
    "thm1-convex-optimum": (4, 4),
    "thm2-type3-conjecture": (8, 4),
    "thmG-random-K": (2, 1),
    "lemmaB-sets-collapse": (15, 2),
    "type3-closed-form-gradient": (8, 2),
    "type3-spectrum-certificate": (9, 3),
    "type3-origin-threshold": (4, 2),
    "type1-full-certified": (8, 2),
    "type1-partial-refuted": (3, 3),
    "type3-proof-factorisation": (10, 2),
    "type3-proof-spectrum": (22, 5),
    "type3-proof-critical": (12, 8),
    "type3-proof-balance": (8, 5),
    "type3-proof-origin": (6, 4),
    "predictors-mpmath": (176, 3),
    "risk-engine": (56, 6),
    "predictions-configurations": (57, 6),
    "convex-lower-bound": (20, 3),
    "interval-enclosures": (38, 2),
    "optimum-certificate": (11, 6),
    "optimum-interval": (10, 4),
    "lemmaB-optimal-scale": (7, 4),
    "collapsed-optimum": (8, 4),
    "collapsed-optimum-star": (16, 4),
    "empirical-certificate": (14, 7),
    "empirical-certify-sound": (42, 6),
    "empirical-interval": (7, 7),
    "empirical-star-relaxation": (14, 5),
}


def measure() -> dict:
    """The (expect() calls, distinct call sites) of every registered check, run in quick mode."""
    out = {}
    for c in get_checks():
        with count_expects() as box:
            c.func(quick=True)
        out[c.id] = (box.n, len(box.sites))
    return out


if __name__ == "__main__":
    for cid, pin in measure().items():
        print(f"    {cid!r}: {pin},")
