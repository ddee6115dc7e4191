"""proofs_check.convex: the rigorous lower bound on the convex relaxation is tight enough that each weakened
variant of it is detected; the bound lies below g(X) = f(X) + λ‖X‖_* everywhere."""

import numpy as np
import pytest

from proofs_check import CheckFailed


def _weakened(kind):
    from proofs_check import _risk

    def lb(S, X, lam):
        f, G = _risk.f_grad(S, X)
        gop = float(np.linalg.norm(G, 2))
        B = np.log(S.K) / lam
        if kind == "no-linear-term":
            return f + B * min(0.0, lam - gop), gop / lam
        if kind == "no-nuclear-term":
            return f - float(np.sum(G * X)), gop / lam
        if kind == "max-instead-of-min":
            return f - float(np.sum(G * X)) + B * max(0.0, lam - gop), gop / lam
        if kind == "B-without-1/lambda":
            return f - float(np.sum(G * X)) + np.log(S.K) * min(0.0, lam - gop), gop / lam
        raise AssertionError(kind)

    return lb


@pytest.mark.parametrize("kind", ["no-linear-term", "no-nuclear-term", "max-instead-of-min", "B-without-1/lambda"])
def test_a_weakened_lower_bound_is_detected(monkeypatch, kind):
    import proofs_check.convex as cx
    from proofs_check.library import check_lower_bound

    check_lower_bound(quick=True)
    monkeypatch.setattr(cx, "lower_bound", _weakened(kind))
    with pytest.raises(CheckFailed):
        check_lower_bound(quick=True)


def test_lower_bound_from_any_candidate_is_below_g_everywhere():
    import fctheory as fc
    from proofs_check import _risk
    from proofs_check.convex import g_value, lower_bound

    task = fc.Task.full(2, 2, 2)
    S = _risk.enumerate_sentences(task)
    rng = np.random.default_rng(0)
    shape = (task.K * task.L, task.n_w)
    lam = 0.05
    for _ in range(5):
        bound, _ = lower_bound(S, rng.normal(size=shape), lam)
        assert all(bound <= g_value(S, rng.normal(size=shape) * s, lam) + 1e-12 for s in (0.0, 0.3, 3.0))


def test_g_value_is_the_enumerated_risk_plus_the_nuclear_norm():
    import fctheory as fc
    from proofs_check import _risk
    from proofs_check.convex import g_value

    task = fc.Task.full(2, 2, 2)
    S = _risk.enumerate_sentences(task)
    X = np.random.default_rng(1).normal(size=(task.K * task.L, task.n_w))
    nuc = float(np.sum(np.linalg.svd(X, compute_uv=False)))
    assert g_value(S, X, 0.1) == pytest.approx(_risk.f_value(S, X) + 0.1 * nuc, rel=1e-14)
