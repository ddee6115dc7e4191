"""The language-model example (fctheory.torch.lm): a causal transformer trained on a Task's sentences, with the
next word as the class, watched by NCMonitor. It runs at a small size through its command line; the loss falls
towards (and never below) the prefix-entropy floor, NC1 falls, a seed repeats its numbers; the pieces (the
next-token pairs, the floor, the causal mask, the sentences) against independent oracles."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs torch: pip install 'fctheory[torch]'")
pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")
pytest.importorskip("matplotlib")

from fctheory import FCTheoryError, Task  # noqa: E402
from fctheory.torch.lm import (  # noqa: E402
    CausalLM,
    main,
    next_token_pairs,
    plot_lm,
    prefix_accuracy,
    prefix_entropy,
    task_sentences,
    train_lm,
)

# the small size: 6 words, 64 sentences of 5 words (N = 256 next-word predictions), 4 minibatches per epoch
EPOCHS = 30
SMALL = ["--n-c", "6", "--L", "5", "--K", "64", "--epochs", str(EPOCHS), "--d", "32", "--layers", "1", "--heads", "4"]
SMALL += ["--batch", "16", "--lr", "1e-2", "--lam-H", "1e-4"]
KW = dict(epochs=EPOCHS, d=32, n_layer=1, n_head=4, batch=16, lr=1e-2, lam_H=1e-4, progress=False)
STEPS = EPOCHS * 4  # optimizer steps of the small run
EPS32 = float(np.finfo(np.float32).eps)
METRICS = ["nc1", "nc1_trace_ratio", "cdnv", "nc2", "nc2_W", "nc3", "dist_W_gram", "dist_means_gram", "W_norm_sq"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("lm")
    return main([*SMALL, "--seed", "0", "--out", str(out), "--no-figures"]), out


def test_the_command_line_trains_and_writes_its_outputs(run, capsys):
    res, out = run
    df = res["table"]
    assert df["epoch"].tolist() == list(range(EPOCHS))
    assert (df["N"] == 64 * 4).all()
    pd.testing.assert_frame_equal(pd.read_parquet(out / "history.parquet"), df)
    assert not (out / "nc_history.png").exists()
    assert np.isfinite(df[METRICS + ["loss", "accuracy", "train_loss"]].to_numpy(dtype=float)).all()
    assert math.isnan(df["nc4"].iloc[0]) and np.isfinite(df["nc4"].iloc[1:]).all()  # NC4 needs a previous epoch


def test_the_curves_are_drawn(run, tmp_path):
    path = plot_lm(run[0]["table"], tmp_path / "curves.png", title="small")
    assert open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"


def test_loss_falls_towards_and_never_below_the_prefix_entropy(run):
    """The training cross-entropy of the evaluation pass falls, and stays above the empirical conditional entropy
    of the next word given its prefix, the least any causal model can reach (a model that saw the future, e.g.
    without the causal mask, would go below it)."""
    res, _ = run
    df, floor = res["table"], res["prefix_entropy"]
    loss = df["loss"].to_numpy()
    assert loss[-1] < 0.7 * loss[0], loss
    assert loss[-1] - floor < 0.5 * (loss[0] - floor), (loss, floor)
    assert (loss >= floor * (1 - 1e-6)).all(), (loss, floor)
    assert df["accuracy"].iloc[-1] > 2 * df["accuracy"].iloc[0]
    # no function of the prefix answers more next words right than the most frequent one after each prefix
    assert (df["accuracy"] <= df["prefix_accuracy"]).all() and df["prefix_accuracy"].iloc[0] < 1


def test_nc1_falls_over_training(run):
    df = run[0]["table"]
    nc1 = df["nc1"].to_numpy()
    assert nc1[-1] < 0.2 * nc1[0], nc1
    assert df["cdnv"].iloc[-1] < 0.2 * df["cdnv"].iloc[0]
    assert (df["nc1"].iloc[-4:] < df["nc1"].iloc[:4].min()).all()


def test_a_seed_repeats_its_numbers(run):
    """The same seed (same process and thread count) repeats the run's float32 arithmetic; the allowance is one
    float32 rounding per optimizer step, relative, 8·S·ε₃₂, far below what another seed changes."""
    first = run[0]["table"]
    task = Task.random(6, 1, 5, 64, seed=0)  # the command line's task for --seed 0
    again = train_lm(task, seed=0, **KW)["table"]
    other = train_lm(task, seed=1, **KW)["table"]
    cols = METRICS + ["loss", "accuracy", "train_loss"]
    a, b, c = (t[cols].to_numpy(dtype=float) for t in (first, again, other))
    tol = 8 * STEPS * EPS32
    np.testing.assert_allclose(b, a, rtol=tol, atol=0)
    assert np.max(np.abs(c - a) / np.abs(a)) > 100 * tol


# ------------------------------------------------------------------------------------------ the pieces
def test_next_token_pairs_against_a_loop():
    g = torch.Generator().manual_seed(0)
    hidden = torch.randn(3, 5, 4, generator=g)
    labels = torch.randint(0, 7, (3, 5), generator=g)
    labels[1, 3] = labels[2, 1] = labels[0, 0] = -100  # the first position is never a next token
    H, y = next_token_pairs(hidden, labels)
    rows = [(hidden[b, t], labels[b, t + 1]) for b in range(3) for t in range(4) if labels[b, t + 1] != -100]
    assert H.shape == (len(rows), 4) == (10, 4)
    torch.testing.assert_close(H, torch.stack([r[0] for r in rows]), rtol=0, atol=0)
    assert y.tolist() == [int(r[1]) for r in rows] and y.dtype == torch.int64
    H, y = next_token_pairs(hidden, labels.clamp(min=0))
    assert H.shape == (12, 4)
    with pytest.raises(FCTheoryError, match="labels"):
        next_token_pairs(hidden, labels[:, :4])
    with pytest.raises(FCTheoryError, match="hidden"):
        next_token_pairs(hidden[0], labels)


def test_prefix_entropy_by_hand():
    # after (0): next 1 or 2, once each; after (1): 1; after (0, 1): 3; after (0, 2): 3 or 4; after (1, 1): 0
    X = np.array([[0, 1, 3], [0, 2, 3], [1, 1, 0], [0, 2, 4]])
    # predictions x_1: -log(1/3), -log(2/3), 0, -log(2/3); x_2: 0, -log(1/2), 0, -log(1/2)
    want = (math.log(3) + 2 * math.log(3 / 2) + 2 * math.log(2)) / 8
    assert prefix_entropy(X) == pytest.approx(want, rel=1e-14)
    assert prefix_entropy(torch.as_tensor(X)) == pytest.approx(want, rel=1e-14)
    assert prefix_entropy(np.array([[0, 1], [2, 1]])) == 0.0
    # best answers: x_1 after (0): 2 (twice of 3), after (1): 1; x_2 after (0, 1): 3, (0, 2): 3 or 4, (1, 1): 0
    assert prefix_accuracy(X) == (3 + 3) / 8
    assert prefix_accuracy(np.array([[0, 1], [2, 1]])) == 1.0
    for f in (prefix_entropy, prefix_accuracy):
        with pytest.raises(FCTheoryError, match="sentences"):
            f(np.zeros((3, 1), dtype=int))


def test_prefix_entropy_and_accuracy_are_the_bounds():
    """The empirical next-word frequencies per prefix reach the least cross-entropy, any other prediction is above
    it; the most frequent next word per prefix reaches the best accuracy (brute force over the sentences)."""
    X = task_sentences(Task.random(3, 2, 4, 9, seed=1), 3, seed=2).numpy()
    floor = prefix_entropy(X)
    rng = np.random.default_rng(0)
    ce_emp, ce_noisy, hits = 0.0, 0.0, 0
    for ell in range(1, X.shape[1]):
        keys = [tuple(r) for r in X[:, :ell]]
        for i, key in enumerate(keys):
            same = [j for j, k in enumerate(keys) if k == key]
            p = np.bincount(X[same, ell], minlength=6) / len(same)
            q = 0.9 * p + 0.1 * rng.dirichlet(np.ones(6))
            ce_emp -= math.log(p[X[i, ell]])
            ce_noisy -= math.log(q[X[i, ell]])
            hits += int(X[i, ell] == np.argmax(p))
    n = X.shape[0] * (X.shape[1] - 1)
    assert ce_emp / n == pytest.approx(floor, rel=1e-12)
    assert ce_noisy / n > floor
    assert prefix_accuracy(X) == hits / n < 1


def test_the_model_is_causal():
    """Changing the words after position t leaves the features at positions 0..t unchanged."""
    torch.manual_seed(0)
    model = CausalLM(7, 6, d=8, n_layer=2, n_head=2).eval()
    x = torch.randint(0, 7, (4, 6))
    y = x.clone()
    y[:, 3:] = (y[:, 3:] + 1) % 7
    with torch.no_grad():
        hx, hy = model.features(x), model.features(y)
    torch.testing.assert_close(hx[:, :3], hy[:, :3], rtol=64 * EPS32, atol=64 * EPS32)
    assert (hx[:, 3:] - hy[:, 3:]).abs().max() > 1e-3
    assert model(x).shape == (4, 6, 7)
    with pytest.raises(FCTheoryError, match="n_head"):
        CausalLM(7, 6, d=8, n_head=3)


def test_task_sentences():
    task = Task.random(4, 2, 3, 10, seed=0)
    X = task_sentences(task, 5, seed=3)
    assert X.dtype == torch.int64 and X.shape == (50, 3)
    np.testing.assert_array_equal(X.numpy(), task.sample(5, seed=3)[0])
    assert np.array_equal(np.unique(X[:, 1:].numpy()), np.arange(task.n_w))
    with pytest.raises(FCTheoryError, match="n_spl"):  # 2 sentences cannot show 4 words per concept
        task_sentences(Task.random(2, 8, 3, 2, seed=0), 1, seed=0)
    with pytest.raises(FCTheoryError, match="task"):
        task_sentences(Task.random(3, 1, 1, 3, seed=0), 1)
    with pytest.raises(FCTheoryError, match="task"):  # concept 2 never after the first position
        task_sentences(Task(3, 1, 2, np.array([[2, 0], [0, 1], [1, 0]])), 1)


def test_train_lm_refuses_bad_arguments():
    task = Task.random(3, 1, 3, 9, seed=0)
    with pytest.raises(FCTheoryError, match="lam_H"):
        train_lm(task, lam_H=0.0)
    with pytest.raises(FCTheoryError, match="task"):
        train_lm("not a task")
