"""The trainer's minibatch gradient (reference step) against central finite differences.

Loss: mean cross-entropy of h (eq. (2) without the penalty) or h* (eq. (3)), over a minibatch.
Central differences with step 1e-6 in float64 have error O(1e-10) here; tolerance 1e-7 absolute
plus 1e-6 relative.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fctheory.trainer import _reference as ref


def _mean_ce(E, U, Xb, yb, layernorm, eps):
    b, L = Xb.shape
    V = ref.layernorm_rows(np, E, eps)[0] if layernorm else E
    S = V[Xb].reshape(b, -1) @ U.T
    m = S.max(axis=1)
    return float(np.mean(m + np.log(np.exp(S - m[:, None]).sum(axis=1)) - S[np.arange(b), yb]))


def _fd(f, A, h=1e-6):
    G = np.zeros_like(A)
    for idx in np.ndindex(A.shape):
        old = A[idx]
        A[idx] = old + h
        fp = f()
        A[idx] = old - h
        fm = f()
        A[idx] = old
        G[idx] = (fp - fm) / (2 * h)
    return G


@settings(max_examples=20)
@given(
    n_w=st.integers(2, 6),
    d=st.integers(2, 4),
    L=st.integers(1, 3),
    K=st.integers(2, 4),
    b=st.integers(1, 5),
    layernorm=st.booleans(),
    eps=st.sampled_from([0.0, 1e-5, 0.3]),
    seed=st.integers(0, 10**6),
)
def test_minibatch_gradient_matches_finite_differences_eq2_eq3(n_w, d, L, K, b, layernorm, eps, seed):
    rng = np.random.default_rng(seed)
    E = rng.standard_normal((n_w, d))
    U = rng.standard_normal((K, L * d))
    Xb = rng.integers(0, n_w, size=(b, L))
    yb = rng.integers(0, K, size=b)
    loss, correct, dE, dU = ref.minibatch_grad(np, E, U, Xb, yb, layernorm, eps, np.add.at)
    f = lambda: _mean_ce(E, U, Xb, yb, layernorm, eps)  # noqa: E731
    assert loss / b == pytest.approx(f(), rel=1e-13, abs=1e-14)
    np.testing.assert_allclose(dE, _fd(f, E), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(dU, _fd(f, U), rtol=1e-6, atol=1e-7)


def test_sgd_step_is_torch_sgd_with_weight_decay():
    """w ← w − lr·(∂w + λ·w), with separate λ for W and U (PyTorch SGD(weight_decay=λ))."""
    rng = np.random.default_rng(1)
    E = rng.standard_normal((6, 3))
    U = rng.standard_normal((4, 6))
    Xb = rng.integers(0, 6, size=(5, 2))
    yb = rng.integers(0, 4, size=5)
    _, _, dE, dU = ref.minibatch_grad(np, E, U, Xb, yb, False, 0.0, np.add.at)
    E1, U1 = E.copy(), U.copy()
    ref.sgd_step(np, E1, U1, Xb, yb, 0.3, 0.01, 0.02, False, 0.0, np.add.at)
    np.testing.assert_allclose(E1, E - 0.3 * (dE + 0.01 * E), rtol=0, atol=1e-15)
    np.testing.assert_allclose(U1, U - 0.3 * (dU + 0.02 * U), rtol=0, atol=1e-15)
