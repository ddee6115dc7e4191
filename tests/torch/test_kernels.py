"""The monitor's CPU kernels (fctheory.torch._kernels) against NumPy oracles: the per-batch moments (shifts,
sums, squared norms, the scatter's upper triangle) in every chunking, layout and dtype, NC4's disagreements
against a brute-force argmax/argmin, labels refused before anything is added, and the per-epoch call
against the public functions it stands for."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs torch: pip install 'fctheory[torch]'")

from fctheory.torch import _kernels as tk  # noqa: E402

K = 5


def _state(d, shift=None):
    """Fresh moments: (shift, have, counts, sums, sq, scatter)."""
    have = np.zeros(K, dtype=bool) if shift is None else np.ones(K, dtype=bool)
    shift = np.zeros((K, d)) if shift is None else shift.copy()
    return shift, have, np.zeros(K, np.int64), np.zeros((K, d)), np.zeros(K), np.zeros((d, d))


def _oracle(H, y, shift):
    """The moments of the rows shifted by their class's reference (float64, plain NumPy)."""
    D = H.astype(np.float64) - shift[y]
    sums = np.zeros_like(shift)
    np.add.at(sums, y, D)
    return np.bincount(y, minlength=K), sums, np.bincount(y, weights=(D * D).sum(1), minlength=K), D.T @ D


def _batch(seed, B, d, dtype=np.float32):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, B)
    H = (10.0 + rng.standard_normal((K, d))[y] + 0.5 * rng.standard_normal((B, d))).astype(dtype)
    return H, y


NO_W, NO_B = np.empty((0, 0)), np.empty(0)


@pytest.mark.parametrize("B", [1, 63, 64, 65, 200, 467])
@pytest.mark.parametrize("d", [1, 2, 3, 31, 32, 33, 70])
def test_add_batch_moments_equal_numpy_in_every_chunking(B, d):
    H, y = _batch(B * 100 + d, B, d)
    ref_shift = np.random.default_rng(0).standard_normal((K, d)) + 10.0
    shift, have, counts, sums, sq, scatter = _state(d, ref_shift)
    Dt, n4 = tk.add_batch(H, y, shift, have, counts, sums, sq, scatter, True, np.empty((0, d)), NO_B, shift, sq)
    assert n4 == 0 and Dt.size == 0
    c, s, q, S = _oracle(H, y, ref_shift)
    np.testing.assert_array_equal(counts, c)
    np.testing.assert_allclose(sums, s, rtol=1e-13, atol=1e-13 * np.abs(s).max())
    np.testing.assert_allclose(sq, q, rtol=1e-13)
    np.testing.assert_allclose(np.triu(scatter), np.triu(S), rtol=1e-12, atol=1e-13 * np.abs(S).max())


@pytest.mark.parametrize("layout", ["float64", "strided", "transposed"])
def test_add_batch_reads_any_dtype_and_layout(layout):
    H, y = _batch(1, 90, 12, np.float64)
    if layout == "strided":
        H = np.repeat(H, 2, axis=1)[:, ::2]
    elif layout == "transposed":
        H = np.ascontiguousarray(H.T).T
    ref = np.ones((K, 12))
    shift, have, counts, sums, sq, scatter = _state(12, ref)
    tk.add_batch(H, y, shift, have, counts, sums, sq, scatter, True, np.empty((0, 12)), NO_B, shift, sq)
    c, s, q, S = _oracle(H, y, ref)
    np.testing.assert_allclose(sums, s, rtol=1e-13, atol=1e-12)
    np.testing.assert_allclose(np.triu(scatter), np.triu(S), rtol=1e-12, atol=1e-10)


def test_a_class_seen_first_is_shifted_by_its_first_row():
    H, y = _batch(2, 40, 6, np.float64)
    shift, have, counts, sums, sq, scatter = _state(6)
    have[3] = True  # class 3 keeps its given shift (0)
    tk.add_batch(H, y, shift, have, counts, sums, sq, scatter, True, np.empty((0, 6)), NO_B, shift, sq)
    assert have.all()
    for k in range(K):
        expected = np.zeros(6) if k == 3 else H[np.flatnonzero(y == k)[0]]
        np.testing.assert_array_equal(shift[k], expected)
    _, s, q, _ = _oracle(H, y, shift)
    np.testing.assert_allclose(sums, s, atol=1e-12)


def test_without_the_scatter_the_shifted_rows_come_back_as_columns():
    H, y = _batch(3, 30, 9)
    ref = np.full((K, 9), 10.0)
    shift, have, counts, sums, sq, scatter = _state(9, ref)
    Dt, _ = tk.add_batch(H, y, shift, have, counts, sums, sq, scatter, False, np.empty((0, 9)), NO_B, shift, sq)
    np.testing.assert_array_equal(Dt, (H.astype(np.float64) - ref[y]).T)
    assert not scatter.any()


@pytest.mark.parametrize("with_scatter", [True, False])
def test_without_a_classifier_no_disagreement_is_counted(with_scatter):
    H, y = _batch(5, 30, 9)
    state = _state(9, np.full((K, 9), 10.0))
    _, n4 = tk.add_batch(H, y, *state, with_scatter, np.empty((0, 9)), NO_B, state[0], state[4])
    assert n4 == 0


@pytest.mark.parametrize("at", [0, 37])  # the first row too: its index 0 is the report
@pytest.mark.parametrize("bad", [-1, K])
def test_a_label_out_of_range_is_reported_and_nothing_is_added(bad, at):
    H, y = _batch(4, 50, 4)
    y[at] = bad
    state = _state(4, np.zeros((K, 4)))
    before = [a.copy() for a in state]
    _, n4 = tk.add_batch(H, y, *state, True, np.empty((0, 4)), NO_B, state[0], state[4])
    assert n4 == -1
    for a, b in zip(state, before):
        np.testing.assert_array_equal(a, b)
    assert tk.first_bad_label(y, K) == at


def _nc4_oracle(H, W, b, mu):
    """Brute force: the classifier's argmax against the nearest mean's argmin (first index on ties)."""
    H = H.astype(np.float64)
    logits = H @ W.astype(np.float64).T + (0.0 if b.size == 0 else b.astype(np.float64))
    dist = ((H[:, None, :] - mu[None, :, :]) ** 2).sum(-1)
    return int((logits.argmax(1) != dist.argmin(1)).sum())


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nc4_disagreements_equal_brute_force(bias, dtype):
    rng = np.random.default_rng(5)
    d = 7
    mu = 3.0 * rng.standard_normal((K, d))
    y = rng.integers(0, K, 300)
    H = (mu[y] + 1.5 * rng.standard_normal((300, d))).astype(dtype)
    W = (mu + 2.0 * rng.standard_normal((K, d))).astype(dtype)
    b = rng.standard_normal(K).astype(dtype) if bias else np.empty(0, dtype)
    got = tk.nc4_disagreements(H.astype(np.float64), W, b, 2.0 * mu, -(mu * mu).sum(1))
    expected = _nc4_oracle(H, W, b, mu)
    assert 5 < expected < 280 and got == expected  # enough disagreements that a wrong count shows


def test_nc4_ties_go_to_the_first_class_and_nan_wins_as_in_torch():
    """w_0 = w_1 tie the logits (the first class wins: 0, as the nearest mean μ_0 does): no disagreement, where
    taking the last of tied classes would count one; a NaN logit is the classifier's decision, as torch's
    argmax makes it."""
    mu = np.array([[1.0, 0.0], [0.9, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
    W = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
    H = np.array([[2.0, 0.0], [0.0, 3.0]])
    args = (np.empty(0), 2.0 * mu, -(mu * mu).sum(1))
    assert tk.nc4_disagreements(H, W, *args) == 0
    W[3, 0] = math.nan
    logits = torch.as_tensor(H @ W.T)
    ncc = torch.as_tensor(H @ (2.0 * mu).T - (mu * mu).sum(1))
    expected = int((logits.argmax(1) != ncc.argmax(1)).sum())
    assert expected == 2 and tk.nc4_disagreements(H, W, *args) == expected


def test_add_batch_counts_nc4_like_the_separate_kernel():
    H, y = _batch(6, 150, 8)
    rng = np.random.default_rng(6)
    mu = np.full((K, 8), 10.0) + rng.standard_normal((K, 8))
    W, b = rng.standard_normal((K, 8)).astype(np.float32), rng.standard_normal(K).astype(np.float32)
    state = _state(8, mu)
    _, n4 = tk.add_batch(H, y, *state, True, W, b, 2.0 * mu, -(mu * mu).sum(1))
    assert n4 == _nc4_oracle(H, W, b, mu)


def test_add_batch_counts_nc4_over_several_chunks_of_rows():
    """B = 300 rows of width 40: five chunks of 64 rows, each chunk's rows kept in place for NC4's product."""
    d = 40
    H, y = _batch(7, 300, d)
    rng = np.random.default_rng(7)
    mu = np.full((K, d), 10.0) + rng.standard_normal((K, d))
    W, b = rng.standard_normal((K, d)), rng.standard_normal(K)
    state = _state(d, mu)
    _, n4 = tk.add_batch(H, y, *state, True, W, b, 2.0 * mu, -(mu * mu).sum(1))
    expected = _nc4_oracle(H, W, b, mu)
    assert 5 < expected < 295 and n4 == expected
