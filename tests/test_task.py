"""fctheory.task: the task model and its conventions; Task.random(replace=True), the authors' sampling of latent
variables with replacement."""

import math

import numpy as np
import pytest

import fctheory as fc


def test_default_draw_is_distinct_and_replace_false_is_the_same_draw():
    a = fc.Task.random(3, 2, 4, 60, seed=5)
    b = fc.Task.random(3, 2, 4, 60, seed=5, replace=False)
    assert np.array_equal(a.Z, b.Z) and not a.allow_duplicates
    assert np.unique(a.Z, axis=0).shape[0] == 60 and a.n_distinct == 60 and a.accuracy_cap == 1.0


def test_replace_true_draws_iid_uniform_rows_from_the_seed():
    # the authors' notebooks: each z_k uniform on C^L, independently (rng.integers, the same stream)
    t = fc.Task.random(3, 2, 4, 50, seed=7, replace=True)
    assert t.allow_duplicates
    assert np.array_equal(t.Z, np.random.default_rng(7).integers(0, 3, size=(50, 4)))


def test_replace_true_allows_K_above_n_c_to_the_L():
    t = fc.Task.random(2, 1, 2, 10, seed=0, replace=True)  # 10 classes, only 4 possible latent variables
    assert t.K == 10 and t.n_distinct <= 4 and not t.is_full
    with pytest.raises(fc.FCTheoryError, match="^K="):
        fc.Task.random(2, 1, 2, 10, seed=0)


def test_duplicate_rate_matches_its_expectation():
    # P(row k equals at least one of the other K−1 rows) = 1 − (1 − 1/N)^(K−1), N = n_c^L.
    # 400 independent draws of K = 30 rows from N = 27: the mean rate over 12,000 rows has standard
    # error below 0.005 (rows of one draw are positively correlated; bounded by the per-draw spread).
    n_c, L, K, reps = 3, 3, 30, 400
    N = n_c**L
    want = 1 - (1 - 1 / N) ** (K - 1)
    rng = np.random.default_rng(2024)
    rates = []
    for _ in range(reps):
        Z = fc.Task.random(n_c, 1, L, K, seed=rng, replace=True).Z
        _, inv, counts = np.unique(Z, axis=0, return_inverse=True, return_counts=True)
        rates.append(np.mean(counts[inv.ravel()] > 1))
    se = np.std(rates, ddof=1) / math.sqrt(reps)
    assert abs(np.mean(rates) - want) < 4 * se + 1e-3, (np.mean(rates), want, se)


def test_distinct_fraction_matches_its_expectation():
    # E[#distinct] = N(1 − (1 − 1/N)^K): the accuracy cap in expectation
    n_c, L, K, reps = 2, 4, 20, 400
    N = n_c**L
    want = N * (1 - (1 - 1 / N) ** K) / K
    rng = np.random.default_rng(11)
    caps = [fc.Task.random(n_c, 1, L, K, seed=rng, replace=True).accuracy_cap for _ in range(reps)]
    se = np.std(caps, ddof=1) / math.sqrt(reps)
    assert abs(np.mean(caps) - want) < 4 * se + 1e-3


def test_accuracy_of_the_collapse_configuration_equals_the_cap_exactly():
    # duplicated classes get identical rows of U, hence identical scores: argmax keeps the first of each
    # group, so on class-balanced test data the accuracy is exactly (#distinct)/K, and 1 without duplicates
    t = fc.Task.random(3, 2, 3, 40, seed=0, replace=True)
    assert t.n_distinct < t.K
    W, U = fc.type1_configuration(t, d=3, c=1.0, c_prime=1.0, seed=0)
    X, y = t.sample(5, seed=1)
    acc = np.mean(np.argmax(fc.scores(W, U, X), axis=1) == y)
    assert acc == t.n_distinct / t.K == t.accuracy_cap
    distinct = fc.Task.random(3, 2, 3, 20, seed=0)
    W, U = fc.type1_configuration(distinct, d=3, c=1.0, c_prime=1.0, seed=0)
    X, y = distinct.sample(5, seed=1)
    assert np.mean(np.argmax(fc.scores(W, U, X), axis=1) == y) == 1.0 == distinct.accuracy_cap


def test_no_classifier_beats_the_cap():
    # the Bayes classifier knows Z: for a sentence from a duplicated group it can only name one class;
    # its exact expected accuracy (enumerating the groups) is the cap
    t = fc.Task.random(2, 1, 3, 12, seed=3, replace=True)
    _, inv, counts = np.unique(t.Z, axis=0, return_inverse=True, return_counts=True)
    bayes = sum(1 / counts[g] for g in inv.ravel()) / t.K  # each class k is right w.p. 1/m(k) at best
    assert bayes == pytest.approx(t.accuracy_cap, rel=1e-15)


def test_constructor_refuses_duplicates_unless_allowed():
    Z = np.array([[0, 1], [0, 1], [1, 0]])
    with pytest.raises(fc.FCTheoryError, match="allow_duplicates=True"):
        fc.Task(2, 2, 2, Z)
    t = fc.Task(2, 2, 2, Z, allow_duplicates=True)
    assert t.K == 3 and t.n_distinct == 2 and t.accuracy_cap == pytest.approx(2 / 3)
    with pytest.raises(fc.FCTheoryError, match="^allow_duplicates="):
        fc.Task(2, 2, 2, Z, allow_duplicates="yes")


def test_a_task_with_duplicates_round_trips_through_a_task_file(tmp_path):
    t = fc.Task.random(3, 2, 3, 40, seed=0, replace=True)
    fc.save_task(t, tmp_path / "t.json")
    back = fc.load_task(tmp_path / "t.json")
    assert back.allow_duplicates and np.array_equal(back.Z, t.Z) and back.n_distinct == t.n_distinct


def test_task_full_is_lexicographic_and_complete():
    t = fc.Task.full(3, 2, 3)
    assert t.K == 27 and t.is_full and t.n_w == 6
    assert t.Z[0].tolist() == [0, 0, 0] and t.Z[1].tolist() == [0, 0, 1] and t.Z[-1].tolist() == [2, 2, 2]


def test_task_random_distinct_and_seeded():
    a = fc.Task.random(3, 2, 6, 100, seed=5)
    b = fc.Task.random(3, 2, 6, 100, seed=5)
    assert np.array_equal(a.Z, b.Z) and len({tuple(r) for r in a.Z}) == 100
    big = fc.Task.random(10, 2, 40, 50, seed=1)  # n_c^L = 1e40 > 2^62
    assert big.K == 50 and len({tuple(r) for r in big.Z}) == 50


def test_task_mu_named_laws():
    t = fc.Task.full(2, 4, 1, mu="zipf")
    np.testing.assert_allclose(t.mu, np.array([1, 1 / 2, 1 / 3, 1 / 4]) / (25 / 12))


def test_word_index_convention_and_matrices():
    t = fc.Task.full(3, 4, 2, mu="zipf")
    assert t.word_index(2, 1) == 9
    assert t.word_concept[9] == 2 and t.word_rank[9] == 1
    np.testing.assert_allclose(t.P @ t.Q.T, np.eye(3), atol=1e-15)  # PQᵀ = I
    Z = t.Z_onehot
    np.testing.assert_allclose(Z @ Z.T, t.K * t.L / t.n_c * np.eye(3))  # Lemma B: ZZᵀ = (KL/n_c)I


def test_sample_is_class_major_and_respects_latents():
    t = fc.Task.full(2, 3, 4, mu=np.array([0.5, 0.3, 0.2]))
    X, y = t.sample(7, seed=np.random.default_rng(0))
    assert X.shape == (t.K * 7, 4) and np.array_equal(y, np.repeat(np.arange(t.K), 7))
    np.testing.assert_array_equal(X // t.s_c, t.Z[y])
    X2, _ = t.sample(7, seed=0)  # an int seed is deterministic too
    X3, _ = t.sample(7, seed=0)
    np.testing.assert_array_equal(X2, X3)


def test_sample_word_frequencies_follow_mu():
    t = fc.Task.full(2, 3, 1, mu=np.array([0.6, 0.3, 0.1]))
    X, _ = t.sample(20000, seed=1)
    freq = np.bincount(X.ravel() % 3, minlength=3) / X.size
    np.testing.assert_allclose(freq, t.mu, atol=0.01)
