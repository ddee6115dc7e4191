"""Random tasks and weights shared by the tests of the exact engine (evaluation, plan, layout, enumeration), and the
comparison of a result with the brute-force reference.

Tolerances: R, R₀ and the gradient agree with the brute-force log-sum-exp reference to 1e-12 relative (norm-wise
for gradients).
"""

import numpy as np
from hypothesis import strategies as st

from fctheory import Task

RTOL = 1e-12


@st.composite
def setups(draw, layernorm=None, full=None):
    n_c = draw(st.integers(2, 3))
    s_c = draw(st.integers(1, 3))
    L = draw(st.integers(1, 4 if n_c == 2 else 3))
    N = n_c**L
    is_full = draw(st.booleans()) if full is None else full
    K = N if is_full or N == 1 else draw(st.integers(1, N - 1))
    seed = draw(st.integers(0, 2**31 - 1))
    ln = draw(st.booleans()) if layernorm is None else layernorm
    d = draw(st.integers(2 if ln else 1, 4))
    scale = draw(st.sampled_from([0.05, 0.7, 3.0]))
    rng = np.random.default_rng(seed)
    mu = rng.dirichlet(np.ones(s_c)) if s_c > 1 else np.ones(1)
    task = Task.random(n_c, s_c, L, K, mu=mu / mu.sum(), seed=seed)
    W = scale * rng.standard_normal((d, task.n_w))
    U = scale * rng.standard_normal((K, L * d))
    lam = float(rng.uniform(0.0, 0.1))
    return task, W, U, lam, ln


def rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    nb = np.linalg.norm(b)
    return np.linalg.norm(a - b) / nb if nb > 0 else np.linalg.norm(a)


def assert_matches(r, ref, rtol=RTOL):
    assert abs(r.R - ref.R) <= rtol * abs(ref.R) + 1e-300
    assert abs(r.R0 - ref.R0) <= rtol * abs(ref.R0) + 1e-300
    # norm-wise on the whole gradient (∂R/∂W, ∂R/∂U): with h* and d = 2, φ is locally constant
    # and ∂R/∂W is exactly 0, so only rounding noise is left in it
    g = np.concatenate([np.ravel(r.grad_W), np.ravel(r.grad_U)])
    g_ref = np.concatenate([np.ravel(ref.grad_W), np.ravel(ref.grad_U)])
    assert rel(g, g_ref) <= rtol
