"""Problems shared by the tests of fctheory.ufm.perturbation: small anchored UFMs drawn by Hypothesis, and integer
features whose NC1 traces are exact rationals."""

from fractions import Fraction

import numpy as np
from hypothesis import strategies as st

lam = st.floats(-1.0, 0.5).map(lambda e: 10.0**e)


@st.composite
def problem(draw):
    K = draw(st.integers(2, 4))
    n = draw(st.integers(1, 3))
    d = K + draw(st.integers(0, 2))
    seed = draw(st.integers(0, 2**31))
    return K, n, d, np.random.default_rng(seed)


def exact_traces(H, K):
    """(tr Σ_W, tr Σ_B) as Fractions, summing over the samples one by one."""
    d, N = H.shape
    n = N // K
    cols = [[Fraction(int(v)) for v in H[:, j]] for j in range(N)]
    means = [[sum(cols[k * n + i][r] for i in range(n)) / n for r in range(d)] for k in range(K)]
    glob = [sum(means[k][r] for k in range(K)) / K for r in range(d)]
    trW = sum((cols[k * n + i][r] - means[k][r]) ** 2 for k in range(K) for i in range(n) for r in range(d)) / N
    trB = sum((means[k][r] - glob[r]) ** 2 for k in range(K) for r in range(d)) / K
    return trW, trB


def features(K, n, d, seed, unbalanced_means=True):
    rng = np.random.default_rng(seed)
    H = rng.integers(-5, 6, size=(d, K * n)).astype(float)
    if unbalanced_means:  # class offsets: the mean of the class means differs from 0 and from any one class
        H += np.repeat(rng.integers(-20, 21, size=(d, K)), n, axis=1)
    return H
