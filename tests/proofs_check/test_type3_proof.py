"""proofs_check.type3_proof: the machine-checked algebra of the type-III proof (docs/conjecture-type3.md, steps
2-5, 7, 8) holds, and every check refuses its deliberately wrong statement."""

import itertools
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

from proofs_check import CheckFailed, get_checks
from proofs_check import type3_proof as tp

PROOF_CHECKS = get_checks("type3-proof-")


def test_every_proof_step_has_a_registered_quick_check():
    ids = {c.id for c in PROOF_CHECKS}
    assert ids == {f"type3-proof-{s}" for s in ("factorisation", "spectrum", "critical", "balance", "origin")}
    assert all(c.quick for c in PROOF_CHECKS)


@pytest.mark.parametrize("check", PROOF_CHECKS, ids=lambda c: c.id)
def test_proof_step_identity_holds(check):
    assert check(quick=True)


@pytest.mark.parametrize("check", PROOF_CHECKS, ids=lambda c: c.id)
def test_proof_step_mutant_is_caught(check):
    with pytest.raises(CheckFailed):
        check(mutant=True, quick=True)


def test_IJ_algebra_agrees_with_explicit_matrices():
    """The (alpha, beta) <-> alpha I + beta 11^T algebra used for symbolic n_c multiplies, traces and diagonalises
    like the explicit n_c x n_c matrices."""
    x, y = tp.IJ(2, -sp.Rational(1, 3)), tp.IJ(sp.Rational(1, 2), 5)
    for nv in (2, 3, 5):

        def mat(e, nv=nv):
            return (e.alpha * sp.eye(nv) + e.beta * sp.ones(nv, nv)).subs(tp.n, nv)

        prod = x * y
        assert mat(prod) == mat(x) * mat(y)
        assert prod.trace().subs(tp.n, nv) == mat(prod).trace()
        eig = mat(prod).eigenvals()
        assert eig.get(prod.eig_on_complement().subs(tp.n, nv)) == nv - 1
        assert prod.eig_on_ones().subs(tp.n, nv) in eig


def test_spectrum_formula_matches_numpy_svd_of_the_gradient():
    """Independent oracle for step 4: numpy's singular values of -(S^(L-1)/K) E Gamma P_v on the full set."""
    rng = np.random.default_rng(3)
    for nv, s_c, Lv in [(3, 2, 2), (4, 3, 2), (2, 3, 3)]:
        Zs = list(itertools.product(range(nv), repeat=Lv))
        E = np.zeros((len(Zs) * Lv, nv))
        for k, z in enumerate(Zs):
            E[k * Lv + np.arange(Lv), list(z)] = 1
        v = rng.uniform(0.1, 1, s_c)
        Sv = 0.8
        Gam = (nv * np.eye(nv) - 1) / (nv - 1)
        P = np.kron(np.eye(nv), v[None, :])
        grad = -(Sv ** (Lv - 1)) / len(Zs) * E @ Gam @ P
        sv = np.linalg.svd(grad, compute_uv=False)
        s = float(tp.s_closed(float(np.linalg.norm(v)), S_=Sv, K_=len(Zs), L_=Lv, n_=nv))
        np.testing.assert_allclose(sv[: nv - 1], s, rtol=1e-13)
        assert np.all(sv[nv - 1 :] <= 1e-14 * s)


def test_enumerated_gradient_differs_from_a_wrong_sigma():
    """The exact comparison of steps 2-3 can fail: sigma with n_c instead of n_c - 1 changes every entry."""
    mu, t = [Fraction(1, 3), Fraction(1, 2)], [Fraction(1, 3), Fraction(5, 2)]
    Zs, G = tp.gradient_enumerated(3, 2, 2, mu, t)
    assert G == tp.gradient_closed_form(Zs, 3, 2, 2, mu, t)
    wrong = tp.gradient_closed_form(Zs, 3, 2, 2, mu, [x * Fraction(3, 2) for x in t])
    assert all(g != w for row, wrow in zip(G, wrong) for g, w in zip(row, wrow))


def test_general_spectrum_refuses_a_wrong_kappa():
    _, steps = tp.spectrum_general(kappa_factor=sp.Integer(1))
    assert [what for ok, what in steps if not ok] and all(ok for ok, _ in steps[:-1])


def test_machine_checked_section_of_the_report_matches_its_template_and_the_registry():
    """docs/conjecture-type3.md's "Machine-checked" section is the generator's text, and names registered checks."""
    import pathlib
    import re

    from proofs_check import atlas_report

    tpl = atlas_report._TEMPLATE
    section = tpl[tpl.index("## Machine-checked") : tpl.index("## What the certificates")]
    section = section.replace("{{", "{").replace("}}", "}")
    md = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "conjecture-type3.md").read_text(encoding="utf-8")
    assert section in md
    named = set(re.findall(r"`(type3-proof-[a-z]+)`", section))
    assert named == {c.id for c in PROOF_CHECKS}


def test_IJ_is_zero_only_when_both_coefficients_simplify_to_zero():
    assert tp.IJ(tp.n - tp.n, (tp.n + 1) ** 2 - tp.n**2 - 2 * tp.n - 1).is_zero()
    assert not tp.IJ(1, 0).is_zero()
    assert not tp.IJ(0, tp.n).is_zero()
    assert not (tp.IJ(0, 1) * tp.IJ(0, 1)).is_zero()  # J² = n_c J ≠ 0


def test_zero_refuses_expressions_that_simplify_to_one():
    n = tp.n
    assert tp._zero((n**2 - 1) / (n - 1) - n - 1)  # zero only after cancelling n − 1
    assert not tp._zero(sp.Integer(1))
    assert not tp._zero((n**2 - 1) / (n - 1) - n)  # simplifies to 1, directly and after expansion
    assert not tp._zero(sp.expand((n + 1) ** 2) - n**2 - 2 * n)


def test_general_spectrum_names_each_step_of_the_proof():
    _, steps = tp.spectrum_general()
    assert all(ok for ok, _ in steps)
    names = [what for _, what in steps]
    assert names[:6] + names[7:8] == [
        "J^2 = n_c J",
        "I - 11^T/n_c is a projector",
        "eigenvalues of I - 11^T/n_c: 0, 1",
        "Gamma entries",
        "Gamma^2 = kappa^2 (I - 11^T/n_c)",
        "Gamma^4 = kappa^2 Gamma^2",
        "Gamma^2 annihilates 1 (rank n_c - 1)",
    ]
    # the two computed statements name the computed multiplicity and s² (sympy's printing of them may vary)
    assert names[6].startswith("multiplicity tr(G)/s^2 = ") and names[6].endswith(" != n_c - 1")
    assert names[8].startswith("s^2 = ") and " != claimed " in names[8]
    assert len(names) == 9
