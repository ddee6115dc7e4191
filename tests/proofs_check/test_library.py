"""proofs_check checks the library: pinned tolerances, declared library functions and oracles (the planted
library bugs: test_library_mutants.py)."""

import ast
import importlib
import inspect


import fctheory
from proofs_check import get_checks

# Every tolerance of every check, pinned: loosening one in proofs_check (say 1e-12 -> 1e-3) fails this test.
TOLERANCES = {
    "empirical-certificate": {"balance": 1e-10, "gap": 1e-10, "rel": 1e-12},
    "empirical-certify-sound": {"rel": 1e-12},
    "empirical-star-relaxation": {"gap": 1e-09, "rel": 1e-12, "search": 1e-07},
    "empirical-interval": {"gap": 1e-10, "rel": 1e-15, "solve": 1e-12, "rho": 1e-12, "ball": 1e-6},
    "lemmaB-i-pascal": {},
    "lemmaB-ii-sums": {},
    "lemmaB-iii-theta": {},
    "binomial-identity-H": {"rel": 1e-12},
    "H-strict-convexity": {"rel": 1e-12},
    "tau-trivial-threshold": {"rel": 1e-12},
    "lemmaF-claimA-value": {"rel": 1e-12},
    "lemmaM-claimD-value": {"rel": 1e-12},
    "lemmaK-lemmaR-constants": {"rel": 1e-12},
    "eq148-149-to-7-8": {"rel": 1e-12},
    "propD-monotonicity": {"rel": 1e-12},
    "lemmaB-enum-full": {},
    "lemmaK-eq92": {"rel": 1e-12},
    "lemmaR-eq124": {"rel": 1e-12},
    "propC-gradient": {"abs": 1e-13},
    "thm2-critical-point": {"lam_max_rel": 1e-14, "residual": 1e-12, "grad": 1e-12},
    "assumptionB-lemmaC": {},
    "assumptionA-random": {},
    "assumptionB-certificates": {"min_eig": 1e-06, "distance": 0.001, "residual": 1e-10},
    "existence-assumptionA": {},
    "lemmaB-weaker-than-A": {},
    "lemmaB-iii-forced": {},
    "thmG-nuclear-inequality": {"rel": 1e-10, "imbalance": 0.001, "strict": 1e-12, "nonzero": 1e-06},
    "thmD-lower-bound": {"rel": 1e-12},
    "lemmaF-lemmaM-bounds": {"rel": 1e-12},
    "convex-f-crosscheck": {"rel": 1e-12},
    "thm1-convex-optimum": {"claim_H": 1e-09, "gap": 1e-10, "rel": 1e-12, "cvx": 1e-06},
    "thm2-type3-conjecture": {"grad": 1e-11, "claim_H": 1e-09, "gap": 1e-09, "cvx": 1e-06},
    "thmG-random-K": {"gap": 1e-06},
    "lemmaB-sets-collapse": {"cvx": 1e-07, "H_Z": 1e-09},
    "type3-closed-form-gradient": {"enum": 1e-14, "engine": 1e-13},
    "type3-spectrum-certificate": {"rho": 1e-12, "gap": 1e-12, "spectrum": 1e-12},
    "type3-origin-threshold": {"closed": 1e-14, "engine": 1e-12},
    "type1-full-certified": {"bound": 1e-13, "balance": 1e-12},
    "type1-partial-refuted": {"margin": 0.01, "gap": 0.001},
    "type3-proof-factorisation": {},
    "type3-proof-spectrum": {"gram": 1e-15},
    "type3-proof-critical": {"rel": 1e-12},
    "type3-proof-balance": {"rel": 1e-12},
    "type3-proof-origin": {"rel": 1e-14},
    "predictors-mpmath": {"rel": 1e-12, "residual_rel": 0.2, "residual_abs": 1e-18, "near": 1e-05, "above": 1e-09},
    "risk-engine": {"rel": 1e-12, "grad_abs": 1e-12, "fd_rel": 1e-06, "fd_step": 1e-05},
    "predictions-configurations": {"rel": 1e-12, "abs": 1e-12, "grad": 1e-11},
    "convex-lower-bound": {"slack": 1e-12, "tight": 1e-10},
    "interval-enclosures": {"tight": 1e-15, "near": 1e-10, "shift": 1e-20},
    "optimum-certificate": {"rel": 1e-12, "gap": 1e-10, "balance": 1e-10},
    "optimum-interval": {"gap": 1e-10, "visible": 1e-6},
    "lemmaB-optimal-scale": {"rel": 1e-12, "scale": 1e-8},
    "collapsed-optimum": {"rel": 1e-12, "gap": 1e-10},
    "collapsed-optimum-star": {"rel": 1e-12, "sdp": 1e-6, "tau": 1e-6},
}

# checks of a statement that no fctheory function computes (the reason is the oracle's text)
STATEMENT_ONLY = {"thmG-nuclear-inequality", "type3-proof-factorisation"}


def test_every_check_tolerance_is_pinned():
    assert {c.id: dict(c.tol) for c in get_checks()} == TOLERANCES


def _check_bodies():
    for c in get_checks():
        fn = ast.parse(inspect.getsource(c.func)).body[0]
        yield c, fn, inspect.getsourcelines(c.func)[1]


def test_no_tolerance_literal_outside_the_declared_table():
    """Tolerances live in ``register(..., tol=...)`` only: a small float literal in a check's body would be an
    unpinned tolerance."""
    found = []
    for c, fn, line0 in _check_bodies():
        for node in ast.walk(ast.Module(body=fn.body, type_ignores=[])):
            if isinstance(node, ast.Constant) and isinstance(node.value, float) and 0 < abs(node.value) < 1e-3:
                found.append(f"{c.id}: {node.value!r} at line {line0 + node.lineno - 1}")
    assert not found, found


def test_every_check_reads_its_tolerances_from_the_table():
    for c, fn, _ in _check_bodies():
        if not c.tol:
            continue
        src = ast.unparse(fn)
        assert f'tolerances("{c.id}")' in src or f"tolerances('{c.id}')" in src, c.id


def _public(name):
    """The public fctheory object named ``name`` (``X``, ``module.X`` with X in the module's __all__, or
    ``Class.method``), or None."""
    head, _, tail = name.rpartition(".")
    if not head:
        return getattr(fctheory, name, None) if name in fctheory.__all__ else None
    if head[0].isupper():
        cls = getattr(fctheory, head, None)
        return getattr(cls, tail, None) if cls is not None and not tail.startswith("_") else None
    mod = importlib.import_module(f"fctheory.{head}")
    return getattr(mod, tail, None) if tail in getattr(mod, "__all__", ()) else None


def test_every_check_compares_a_public_fctheory_function_with_an_independent_oracle():
    for c in get_checks():
        assert c.oracle, f"{c.id} declares no independent oracle"
        if c.id in STATEMENT_ONLY:
            assert not c.library
            continue
        assert c.library, f"{c.id} compares no fctheory function"
        for name in c.library:
            assert _public(name) is not None, f"{c.id}: {name} is not a public fctheory function"


# --- planted library bugs ---------------------------------------------------------------------------


# --- the rigorous lower bound ------------------------------------------------------------------------


# --- symbolic proofs for symbolic L --------------------------------------------------------------------


# --- no files left behind ----------------------------------------------------------------------------------
