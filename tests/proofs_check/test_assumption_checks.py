"""proofs_check.assumption_checks: the checks' direct recounts (the independent side of Assumption A and (44))
against counts written here, and Assumption A's count identity on a full latent set."""

import itertools

import numpy as np

from proofs_check.assumption_checks import _count_direct, _gamma_direct
from tests.oracle import oracles as O


def test_count_direct_on_a_full_latent_set_is_the_binomial_count_of_assumption_A():
    n_c, L = 3, 3
    Z = O.full_Z(n_c, L)
    k = 5
    for r in range(L + 1):
        for ell in range(L):
            for alpha in range(n_c):
                hand = sum(
                    1
                    for z in itertools.product(range(n_c), repeat=L)
                    if sum(a != b for a, b in zip(z, Z[k])) == r and z[ell] == alpha
                )
                assert _count_direct(Z, k, r, ell, alpha) == hand


def test_gamma_direct_is_the_product_of_one_hot_matrices():
    Z = np.array([[0, 1, 2], [2, 1, 0]])
    G = _gamma_direct(Z, 3, 0, 1)
    Zj = np.eye(3)[:, Z[0]]  # column ℓ is the one-hot vector of z_{0,ℓ}
    Zk = np.eye(3)[:, Z[1]]
    np.testing.assert_array_equal(G, Zj @ (Zj - Zk).T)
    assert np.trace(G) == np.sum(Z[0] != Z[1])  # ⟨I, Γ⟩ = number of positions that differ
