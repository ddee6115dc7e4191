"""Latent sets shared by the tests of fctheory.assumptions: full sets, a Hypothesis strategy of small sets, and
the right-hand side of (35) written out independently of the library."""

from fractions import Fraction
from math import comb

import numpy as np
from hypothesis import strategies as st

FULL = [(2, 1), (2, 2), (2, 3), (3, 2), (3, 3), (4, 2), (2, 5)]


def rhs35(K, n_c, L, r, same):
    if same:
        return Fraction(K * comb(L - 1, r) * (n_c - 1) ** r, n_c**L)
    return Fraction(K * comb(L - 1, r - 1) * (n_c - 1) ** (r - 1), n_c**L)


@st.composite
def latent_sets(draw, max_K=12):
    n_c = draw(st.integers(2, 4))
    L = draw(st.integers(1, 3))
    N = n_c**L
    K = draw(st.integers(1, min(N, max_K)))
    idx = draw(st.lists(st.integers(0, N - 1), min_size=K, max_size=K, unique=True))
    Z = np.array([[(i // n_c**p) % n_c for p in range(L - 1, -1, -1)] for i in idx], dtype=np.int64)
    return n_c, Z
