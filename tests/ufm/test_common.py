"""fctheory.ufm._common: the shared numerics of the UFM solvers (stable cross-entropy and its gradient,
labels, float64-range guards, L-BFGS multistart)."""

import math

import numpy as np
import pytest

import fctheory as fc
from fctheory.ufm._common import exp_or_fail, exp_or_none, labels, lbfgs_multistart, softmax_ce


def _ce_reference(Z, y):
    # per column: log Σ_j e^{z_j} − z_y, with Python's math.fsum on the shifted exponentials
    out = []
    for i, k in enumerate(y):
        z = Z[:, i]
        m = max(z)
        out.append(m + math.log(math.fsum(math.exp(v - m) for v in z)) - z[k])
    return sum(out) / len(out)


def test_softmax_ce_equals_the_plain_formula():
    rng = np.random.default_rng(0)
    Z, y = rng.normal(size=(4, 9)) * 3, np.array([0, 0, 0, 1, 1, 1, 2, 2, 3])
    assert softmax_ce(Z, y)[0] == pytest.approx(_ce_reference(Z, y), rel=1e-14)


def test_softmax_ce_gradient_matches_central_differences():
    rng = np.random.default_rng(1)
    Z, y = rng.normal(size=(3, 4)), np.array([0, 2, 1, 1])
    _, G = softmax_ce(Z, y)
    h = 1e-6
    for idx in np.ndindex(Z.shape):
        E = np.zeros_like(Z)
        E[idx] = h
        fd = (softmax_ce(Z + E, y)[0] - softmax_ce(Z - E, y)[0]) / (2 * h)
        assert G[idx] == pytest.approx(fd, rel=1e-6, abs=1e-10)


def test_softmax_ce_keeps_relative_accuracy_for_tiny_losses_and_huge_logits():
    Z = np.array([[800.0], [760.0]])
    loss, _ = softmax_ce(Z, np.array([0]))
    assert loss == pytest.approx(math.log1p(math.exp(-40.0)), rel=1e-14)


def test_labels_are_class_major():
    assert labels(3, 2).tolist() == [0, 0, 1, 1, 2, 2]


def test_exp_guards_at_the_edge_of_float64():
    assert exp_or_none(709.0) == math.exp(709.0) and exp_or_none(710.0) is None
    with pytest.raises(fc.FCTheoryError, match="beyond the float64 range"):
        exp_or_fail("K", 10**400, 921.0, "K·n")


def test_lbfgs_multistart_returns_the_best_start_on_a_double_well():
    def fun(x):  # minima at x = ±1 with values −0.3·x, the deeper one at x = 1
        f = (x[0] ** 2 - 1) ** 2 - 0.3 * x[0]
        return f, np.array([4 * x[0] * (x[0] ** 2 - 1) - 0.3])

    out = lbfgs_multistart(fun, [np.array([-1.5]), np.array([1.5])])
    x = out[0]
    assert x[0] == pytest.approx(1.0, abs=0.1) and out[1] == pytest.approx(min(out[2]), rel=0, abs=0)
