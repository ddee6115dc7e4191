"""No proofs_check check takes a tolerance from anywhere but its ``register(..., tol=...)`` table.

The scan walks each check's body (its decorator, which holds the table, excluded) and reports
(i) a numeric literal or constant expression (``1e-9``, ``-1e-12``, ``10 ** -9``, ``1 / 1e9``) with
0 < |value| < 1e-3 — 1e-3 and above are inputs here (a LayerNorm ε, a distance to λ_max), never a
precision; (ii) a comparison helper called with its default (hidden) relative tolerance:
``isclose``/``allclose``/``assert_allclose``/``approx`` without ``rtol`` (``rel_tol``, ``rel``).
Each form is planted into a real check's source and must be reported; the unmodified checks must not be.
"""

import ast
import inspect
import re
import textwrap

import pytest

from proofs_check import get_checks

_TOL_CALLS = {"isclose", "allclose", "assert_allclose", "approx", "assert_array_almost_equal", "assert_almost_equal"}
_REL_KEYS = {"rtol", "rel_tol", "rel", "decimal"}
_CONST_NODES = (ast.Constant, ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop)


def _value(node):
    """The number a constant-only expression evaluates to, or None."""
    if not all(isinstance(n, _CONST_NODES) for n in ast.walk(node)):
        return None
    try:
        v = eval(compile(ast.Expression(node), "<constant>", "eval"), {"__builtins__": {}}, {})  # noqa: S307 - constants only
    except Exception:  # noqa: BLE001 - e.g. 1 / 0 in dead code: not a tolerance
        return None
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def inline_tolerances(fn: ast.FunctionDef) -> list:
    """(line, text) of every inline or hidden tolerance in the body of ``fn``."""
    found, inside = [], set()
    for node in ast.walk(ast.Module(body=fn.body, type_ignores=[])):
        if id(node) in inside:
            continue
        if isinstance(node, (ast.Constant, ast.BinOp, ast.UnaryOp)):
            v = _value(node)
            if v is not None:
                inside.update(id(n) for n in ast.walk(node))  # report the outermost constant expression once
                if 0 < abs(v) < 1e-3:
                    found.append((node.lineno, ast.unparse(node)))
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name in _TOL_CALLS and not _REL_KEYS & {k.arg for k in node.keywords}:
                found.append((node.lineno, ast.unparse(node)))
    return found


def _function(source: str) -> ast.FunctionDef:
    return ast.parse(textwrap.dedent(source)).body[0]


CHECKS = {c.id: c for c in get_checks()}


@pytest.mark.parametrize("cid", list(CHECKS))
def test_check_takes_every_tolerance_from_its_table(cid):
    assert inline_tolerances(_function(inspect.getsource(CHECKS[cid].func))) == []


def _planted(replacement: str) -> list:
    """lemmaK-eq92 with its first ``T["rel"]`` replaced by ``replacement``: what the scan reports."""
    src = inspect.getsource(CHECKS["lemmaK-eq92"].func)
    assert inline_tolerances(_function(src)) == []
    new, n = re.subn(r'T\["rel"\]', replacement, src, count=1)
    assert n == 1
    return inline_tolerances(_function(new))


@pytest.mark.parametrize("literal", ["1e-9", "-1e-12", "5e-4", "10 ** -9", "1 / 1e9", "2.0 ** -30", "(1e-6 * 1e-3)"])
def test_a_planted_inline_tolerance_is_reported(literal):
    found = _planted(literal)
    assert len(found) == 1 and ast.unparse(ast.parse(literal)) in found[0][1]


def test_a_planted_comparison_with_a_hidden_default_tolerance_is_reported():
    src = textwrap.dedent(inspect.getsource(CHECKS["lemmaK-eq92"].func))
    for call in (
        "np.isclose(R, Hc)",
        "math.isclose(R, Hc)",
        "np.allclose(R, Hc, atol=0.0)",
        "pytest.approx(Hc) == R",
        "np.testing.assert_allclose(R, Hc)",
    ):
        new = src.replace('err <= T["rel"]', call, 1)
        assert new != src
        assert len(inline_tolerances(_function(new))) == 1, call
    ok = src.replace('err <= T["rel"]', "np.isclose(R, Hc, rtol=T['rel'], atol=0.0)", 1)
    assert inline_tolerances(_function(ok)) == []


def test_inputs_of_1e_3_and_above_and_table_lookups_are_not_tolerances():
    fn = _function("""
        def check():
            T = tolerances("x")
            for eps in (1e-3, 0.01, 2 ** 10):
                expect(abs(a - b) <= T["rel"] * abs(b), "message")
            return 0.0
    """)
    assert inline_tolerances(fn) == []
