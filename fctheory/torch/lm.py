"""A small causal language model trained on the sentences of a :class:`fctheory.Task`, watched by
:class:`fctheory.torch.NCMonitor`: neural collapse with the next word as the class (K = n_w).

The sentences are those of the task model of section 2 (:meth:`fctheory.Task.sample`: a latent variable
z_k, then at each position ℓ a word (z_{k,ℓ}, β_ℓ) with β_ℓ ~ μ). A causal transformer (randomly
initialised: nothing is downloaded) reads the words x_0 … x_{ℓ−1} and predicts x_ℓ; its penultimate
features are the outputs of the final LayerNorm at the positions 0 … L−2, each labelled by the word that
follows it, and the last layer (``head``, n_w × d, no bias, as in GPT-2) is the classifier W of the UFM.
The objective is the UFM's with the network in place of free features: the cross-entropy averaged over the
N = (number of sentences)·(L − 1) next-word predictions, + (λ_W/2)‖W‖² + (λ_H/2)‖H‖² (‖H‖² summed over the
N features; in a minibatch (λ_H/2)·N·mean‖h‖²).

:func:`train_lm` runs it (one evaluation pass over the training sentences per epoch feeds the monitor);
``python -m fctheory.torch.lm`` is its command line (``--help``; a small default that runs in about a minute
on one CPU thread). :func:`next_token_pairs` (features and next-token labels of a causal LM's hidden states)
is shared with the Hugging Face callback (:mod:`fctheory.torch.hf`).

The lowest training cross-entropy any causal model can reach is the empirical conditional entropy of the next
word given its prefix (:func:`prefix_entropy`); with s_c > 1 the word β_ℓ is independent of its prefix, so
the words of one concept have one feature distribution, and their class means separate only by sampling noise.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import torch

from .._files import atomic_path
from .._plot import pyplot
from .._validate import Anything, Bool, Instance, Int, PathOut, Real, Seed, fail, public, public_class
from ..task import Task, as_rng
from .monitor import NCMonitor

__all__ = [
    "CausalLM",
    "next_token_pairs",
    "plot_lm",
    "prefix_accuracy",
    "prefix_entropy",
    "task_sentences",
    "train_lm",
]


@public_class
class CausalLM(torch.nn.Module):
    """A small pre-LayerNorm causal transformer (GPT-2's layout) over a vocabulary of ``vocab`` words.

    Parameters
    ----------
    vocab : int
        Number of words (input embeddings and classes of the last layer).
    max_len : int
        Longest sentence (learned position embeddings).
    d : int
        Width of the residual stream, the penultimate feature dimension.
    n_layer, n_head : int
        Transformer blocks and attention heads per block (``d`` divisible by ``n_head``).

    Notes
    -----
    ``features(x)`` is the output of the final LayerNorm ``ln_f`` (B, T, d), the input of ``head`` (the
    classifier W, ``vocab`` × d, without bias); ``forward(x)`` gives the logits (B, T, vocab). The attention is
    causal: position t sees the positions 0 … t only. No dropout (the runs are deterministic for a seed).
    """

    @public(vocab=Int(min=2), max_len=Int(min=2), d=Int(min=1), n_layer=Int(min=1), n_head=Int(min=1))
    def __init__(self, vocab: int, max_len: int, *, d: int = 32, n_layer: int = 2, n_head: int = 4):
        if d % n_head:
            fail("n_head", n_head, f"must divide d = {d}")
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, d)
        self.pos = torch.nn.Embedding(max_len, d)
        self.blocks = torch.nn.ModuleList(
            torch.nn.TransformerEncoderLayer(
                d, n_head, dim_feedforward=4 * d, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
            )
            for _ in range(n_layer)
        )
        self.ln_f = torch.nn.LayerNorm(d)
        self.head = torch.nn.Linear(d, vocab, bias=False)
        self.max_len = max_len

    def features(self, x):
        """The penultimate features (B, T, d) of the word ids ``x`` (B, T)."""
        T = x.shape[1]
        if T > self.max_len:
            fail("x", f"sentences of length {T}", f"must be at most max_len = {self.max_len} long")
        h = self.embed(x) + self.pos(torch.arange(T, device=x.device))
        mask = torch.nn.Transformer.generate_square_subsequent_mask(T, device=x.device, dtype=h.dtype)
        for block in self.blocks:
            h = block(h, src_mask=mask, is_causal=True)
        return self.ln_f(h)

    def forward(self, x):
        return self.head(self.features(x))


@public(
    hidden=Anything("a (B, T, d) tensor"),
    labels=Anything("a (B, T) integer tensor"),
    ignore_index=Int(),
)
def next_token_pairs(hidden, labels, *, ignore_index: int = -100):
    """The features and labels of next-token prediction: ``hidden[:, t]`` labelled ``labels[:, t + 1]``.

    Parameters
    ----------
    hidden : torch.Tensor, shape (B, T, d)
        A causal model's penultimate hidden states (the input of its output layer).
    labels : torch.Tensor of int, shape (B, T)
        The token ids of the sequences (Hugging Face's ``labels``: the inputs, with ``ignore_index`` where no
        loss is taken, e.g. padding).
    ignore_index : int
        Label of the positions left out (as in ``torch.nn.functional.cross_entropy``).

    Returns
    -------
    features : torch.Tensor, shape (M, d)
        ``hidden[b, t]`` for every t < T − 1 whose next label ``labels[b, t + 1]`` is not ``ignore_index``
        (detached, in the order b, then t).
    next_labels : torch.Tensor of int64, shape (M,)
    """
    if not isinstance(hidden, torch.Tensor) or hidden.ndim != 3:
        fail("hidden", getattr(hidden, "shape", hidden), "must be a (batch, positions, features) tensor")
    if not isinstance(labels, torch.Tensor) or tuple(labels.shape) != tuple(hidden.shape[:2]):
        shape = tuple(getattr(labels, "shape", ()))
        fail("labels", f"shape {shape}", f"must be a tensor of shape (batch, positions) = {tuple(hidden.shape[:2])}")
    H = hidden[:, :-1].detach().reshape(-1, hidden.shape[2])
    y = labels[:, 1:].reshape(-1).to(device=H.device, dtype=torch.int64)
    keep = y != ignore_index
    if bool(keep.all()):
        return H, y
    return H[keep], y[keep]


@public(task=Instance(Task), n_spl=Int(min=1), seed=Seed())
def task_sentences(task, n_spl: int, *, seed=None):
    """``n_spl`` sentences per class of ``task`` (:meth:`fctheory.Task.sample`) as a word-id tensor.

    Returns
    -------
    torch.Tensor of int64, shape (K·n_spl, L)
        Word ids α·s_c + β, class-major. Every word of the vocabulary occurs as a next word (at a position
        1 … L−1) somewhere in them, since the monitor needs every class in each epoch; otherwise the request
        is refused naming ``n_spl`` (or ``task`` when L = 1 or when a concept never occurs at those positions).
    """
    if task.L < 2:
        fail("task", task, "must have sentences of length L >= 2 (a next word to predict)")
    missing = np.setdiff1d(np.arange(task.n_c), task.Z[:, 1:])
    if missing.size:
        fail("task", task, f"must use every concept at a position 1..L-1 (concepts {missing[:5].tolist()} never are)")
    X, _ = task.sample(n_spl, seed=as_rng(seed))
    seen = np.bincount(X[:, 1:].ravel(), minlength=task.n_w)
    if not seen.all():
        fail(
            "n_spl",
            n_spl,
            f"must be large enough for every word to occur as a next word ({int((seen == 0).sum())} of the "
            f"n_w = {task.n_w} words never do)",
        )
    return torch.from_numpy(X)


def _prefix_counts(sentences):
    """Per position ℓ = 1 … L−1, for each sentence: the id of its prefix x_0 … x_{ℓ−1}, how many sentences share
    that prefix and how many share the prefix and the next word x_ℓ."""
    X = np.asarray(sentences.numpy() if isinstance(sentences, torch.Tensor) else sentences)
    if X.ndim != 2 or X.shape[1] < 2 or X.shape[0] < 1 or not np.issubdtype(X.dtype, np.integer):
        fail("sentences", f"array of shape {X.shape} and dtype {X.dtype}", "must be (S, L) integers, L >= 2")
    for ell in range(1, X.shape[1]):
        _, prefix, n_prefix = np.unique(X[:, :ell], axis=0, return_inverse=True, return_counts=True)
        _, pair, n_pair = np.unique(X[:, : ell + 1], axis=0, return_inverse=True, return_counts=True)
        prefix = prefix.ravel()
        yield prefix, n_prefix[prefix], n_pair[pair.ravel()]


@public(sentences=Anything("a (S, L) integer tensor or array"))
def prefix_entropy(sentences) -> float:
    """The empirical conditional entropy of the next word given its prefix, in nats per prediction.

    The mean over the predictions x_ℓ (ℓ = 1 … L−1 of every sentence) of −log p̂(x_ℓ | x_0 … x_{ℓ−1}), p̂ the
    frequencies in ``sentences``: the minimum over every function of the prefix of the training cross-entropy,
    so the loss no causal model can go below on these sentences (equality needs the predicted distribution to
    be p̂ itself, at every prefix).
    """
    total, n = 0.0, 0
    for _, n_prefix, n_pair in _prefix_counts(sentences):
        total -= float(np.log(n_pair / n_prefix).sum())
        n += n_pair.size
    return total / n


@public(sentences=Anything("a (S, L) integer tensor or array"))
def prefix_accuracy(sentences) -> float:
    """The best next-word accuracy any function of the prefix reaches on ``sentences``.

    At each prefix the most frequent next word (in ``sentences``) is the best single answer: the bound is the
    sum over the distinct prefixes of that word's count, over the number of predictions (S·(L−1)). It is 1
    exactly when every prefix determines its next word.
    """
    hits, n = 0, 0
    for prefix, _, n_pair in _prefix_counts(sentences):
        best = np.zeros(int(prefix.max()) + 1, dtype=np.int64)
        np.maximum.at(best, prefix, n_pair)
        hits += int(best.sum())
        n += n_pair.size
    return hits / n


def _train_epoch(model, opt, X, batch, gen, lam_W, lam_H):
    """One epoch over the sentences ``X`` in random minibatches: CE + (λ_W/2)‖W‖² + (λ_H/2)·N·mean‖h‖²."""
    model.train()
    N = X.shape[0] * (X.shape[1] - 1)
    total = 0.0
    for idx in torch.randperm(X.shape[0], generator=gen).split(batch):
        x = X[idx]
        h = model.features(x)[:, :-1]
        logits = model.head(h)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[2]), x[:, 1:].reshape(-1))
        reg = 0.5 * lam_W * model.head.weight.pow(2).sum() + 0.5 * lam_H * N * h.pow(2).sum(dim=2).mean()
        opt.zero_grad()
        (loss + reg).backward()
        opt.step()
        total += float(loss.detach()) * len(idx)
    return total / X.shape[0]


def _measure(model, X, monitor, chunk=1024):
    """The training sentences through the model in evaluation mode: feeds the monitor (features at positions
    0 … L−2, labelled by the next word) and returns the cross-entropy and next-word accuracy of the pass."""
    model.eval()
    ce, correct = 0.0, 0
    with torch.no_grad():
        for x in X.split(chunk):
            H, y = next_token_pairs(model.features(x), x)
            monitor.update(H, y)
            logits = model.head(H)
            ce += float(torch.nn.functional.cross_entropy(logits, y, reduction="sum"))
            correct += int((logits.argmax(dim=1) == y).sum())
    n = X.shape[0] * (X.shape[1] - 1)
    return ce / n, correct / n


@public(
    task=Instance(Task),
    n_spl=Int(min=1),
    epochs=Int(min=1),
    d=Int(min=1),
    n_layer=Int(min=1),
    n_head=Int(min=1),
    batch=Int(min=1),
    lr=Real(lo=0.0, lo_open=True),
    lam_W=Real(lo=0.0, lo_open=True),
    lam_H=Real(lo=0.0, lo_open=True),
    weight_decay=Real(lo=0.0),
    seed=Int(min=0, max=2**63 - 1),
    threads=Int(min=1),
    progress=Bool(),
    out=PathOut(dir=True).or_none(),
    figures=Bool(),
)
def train_lm(
    task,
    *,
    n_spl: int = 1,
    epochs: int = 100,
    d: int = 32,
    n_layer: int = 2,
    n_head: int = 4,
    batch: int = 16,
    lr: float = 3e-3,
    lam_W: float = 5e-3,
    lam_H: float = 1e-5,
    weight_decay: float = 1e-4,
    seed: int = 0,
    threads: int = 1,
    progress: bool = True,
    out=None,
    figures: bool = True,
) -> dict:
    """Train a :class:`CausalLM` on ``task``'s sentences, monitoring neural collapse of the next word per epoch.

    Parameters
    ----------
    task : fctheory.Task
        The language: its K·n_spl sampled sentences (:func:`task_sentences`) are the training set, its n_w
        words the classes of the monitor.
    n_spl : int
        Sentences per latent variable (with s_c = 1 a latent variable has a single sentence: use 1).
    epochs, batch, lr : int, int, float
        Epochs, sentences per minibatch, Adam's learning rate (cosine decay to 0 over the epochs).
    d, n_layer, n_head : int
        The model (:class:`CausalLM`).
    lam_W, lam_H : float
        The UFM's penalties in the objective: (λ_W/2)‖W‖² on the last layer and (λ_H/2)‖H‖² on the N
        next-word features (eq. of the regularised UFM, see docs/ufm.md); the monitor's optimum uses them.
    weight_decay : float
        Decoupled (AdamW) weight decay of the other parameters.
    seed : int
        Seeds the sentences, the initialisation and the minibatch order: a seed gives the same numbers.
    threads : int
        PyTorch's CPU threads while it runs (restored afterwards).
    progress : bool
        The monitor's tqdm bar.
    out : path, optional
        Folder for ``history.parquet``, and with ``figures`` ``nc_history.png`` (the monitor's figure) and
        ``lm_curves.png`` (:func:`plot_lm`).
    figures : bool
        Draw the figures into ``out`` (needs matplotlib; a few seconds).

    Returns
    -------
    dict
        ``table`` (pandas, one row per epoch: the monitor's columns, ``train_loss`` (mean minibatch CE), ``loss``
        and ``accuracy`` (of the evaluation pass after the epoch), their bounds ``prefix_entropy`` and
        ``prefix_accuracy``), ``monitor``, ``model``, ``sentences``, ``prefix_entropy``, ``seconds``.
    """
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        torch.manual_seed(seed)
        X = task_sentences(task, n_spl, seed=seed)
        model = CausalLM(task.n_w, task.L, d=d, n_layer=n_layer, n_head=n_head)
        monitor = NCMonitor(
            task.n_w, lam_W=lam_W, lam_H=lam_H, classifier=model.head, total_epochs=epochs, progress=progress
        )
        t0 = time.perf_counter()
        _fit(model, X, monitor, epochs, batch, lr, weight_decay, lam_W, lam_H, seed)
        seconds = time.perf_counter() - t0
        monitor.close()
    finally:
        torch.set_num_threads(previous)
    table = monitor.table()
    if out is not None:
        os.makedirs(out, exist_ok=True)
        monitor.save(os.path.join(out, "history.parquet"))
        if figures:
            monitor.plot(os.path.join(out, "nc_history.png"))
            plot_lm(table, os.path.join(out, "lm_curves.png"), title=f"{task!r}, d = {d}, {n_layer} layers")
    floor = float(table["prefix_entropy"].iloc[0])
    return dict(table=table, monitor=monitor, model=model, sentences=X, prefix_entropy=floor, seconds=seconds)


def _fit(model, X, monitor, epochs, batch, lr, weight_decay, lam_W, lam_H, seed):
    """The epochs of :func:`train_lm`: AdamW with a cosine schedule, then an evaluation pass feeding the monitor."""
    floor, best = prefix_entropy(X), prefix_accuracy(X)
    groups = [
        {"params": [p for n, p in model.named_parameters() if not n.startswith("head.")]},
        {"params": model.head.parameters(), "weight_decay": 0.0},  # λ_W is in the objective
    ]
    opt = torch.optim.AdamW(groups, lr=lr, weight_decay=weight_decay)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    gen = torch.Generator().manual_seed(seed)
    for _ in range(epochs):
        train_loss = _train_epoch(model, opt, X, batch, gen, lam_W, lam_H)
        sched.step()
        with monitor.epoch() as extra:
            extra["loss"], extra["accuracy"] = _measure(model, X, monitor)
            extra["train_loss"], extra["prefix_entropy"], extra["prefix_accuracy"] = train_loss, floor, best


# (columns, title, log scale)
_CURVES = (
    (("loss", "prefix_entropy"), "training cross-entropy (nats) and its floor", False),
    (("accuracy", "prefix_accuracy"), "next-word accuracy and its ceiling", False),
    (("nc1", "nc1_trace_ratio", "cdnv"), "NC1 (Papyan; tr Σ_W/tr Σ_B), CDNV", True),
    (("nc2", "nc2_W", "nc3"), "NC2 (means, W), NC3", True),
    (("dist_W_gram", "dist_means_gram"), "relative distance of W Wᵀ, M Mᵀ to the UFM optimum", True),
)


@public(table=Anything("the table of train_lm, a pandas DataFrame"), path=PathOut(), title=Instance(str))
def plot_lm(table, path, *, title: str = ""):
    """The language model's curves over the epochs: loss and accuracy against their bounds, NC1/CDNV, NC2/NC3,
    the Gram distances to the UFM optimum."""
    plt = pyplot("path", path)
    fig, axes = plt.subplots(1, len(_CURVES), figsize=(18, 3.4))
    x = table["epoch"].to_numpy()
    for ax, (cols, name, log) in zip(axes, _CURVES):
        for c in cols:
            if c in table:
                v = table[c].to_numpy(dtype=float)
                ax.plot(
                    x, np.where(v > 0, v, np.nan) if log else v, label=c, ls="--" if c.startswith("prefix_") else "-"
                )
        if log:
            ax.set_yscale("log")
        ax.set_title(name, fontsize=8)
        ax.set_xlabel("epoch", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=6)
    if title:
        fig.suptitle(title, fontsize=9)
    fig.subplots_adjust(left=0.04, right=0.99, bottom=0.15, top=0.82, wspace=0.3)  # tight_layout costs seconds
    with atomic_path(path, name="path") as tmp:
        fig.savefig(tmp, dpi=90, format="png")
    plt.close(fig)
    return path


def main(argv=None) -> dict:
    """``python -m fctheory.torch.lm``: train on a random task and print the monitor's table (see ``--help``)."""
    p = argparse.ArgumentParser(
        prog="python -m fctheory.torch.lm",
        description="Train a small causal language model on the sentences of a random fctheory.Task and print the "
        "neural-collapse monitor's table: the next word is the class (K = n_w), the final LayerNorm's outputs are "
        "the features, the output layer is the classifier.",
    )
    p.add_argument("--n-c", type=int, default=16, help="concepts n_c (default 16)")
    p.add_argument("--s-c", type=int, default=1, help="words per concept s_c (default 1: n_w = n_c)")
    p.add_argument("--L", type=int, default=6, help="sentence length L (default 6)")
    p.add_argument("--K", type=int, default=256, help="latent variables K (default 256)")
    p.add_argument("--zipf", action="store_true", help="Zipf word frequencies within a concept (default uniform)")
    p.add_argument("--n-spl", type=int, default=1, help="sentences per latent variable (default 1)")
    p.add_argument("--epochs", type=int, default=100, help="passes over the training sentences (default 100)")
    p.add_argument("--d", type=int, default=32, help="embedding and feature dimension d (default 32)")
    p.add_argument("--layers", type=int, default=2, help="transformer blocks (default 2)")
    p.add_argument("--heads", type=int, default=4, help="attention heads per block; must divide d (default 4)")
    p.add_argument("--batch", type=int, default=16, help="sentences per minibatch (default 16)")
    p.add_argument(
        "--lr",
        type=float,
        default=3e-3,
        help="learning rate of AdamW, decayed to 0 over the epochs (cosine; default 3e-3)",
    )
    p.add_argument("--lam-W", type=float, default=5e-3, help="weight decay lambda_W of the classifier (default 5e-3)")
    p.add_argument(
        "--lam-H", type=float, default=1e-5, help="penalty lambda_H on the features, (lambda_H/2)|H|^2 (default 1e-5)"
    )
    p.add_argument(
        "--seed", type=int, default=0, help="seed of the task, the initialisation and the batches (default 0)"
    )
    p.add_argument("--threads", type=int, default=1, help="CPU threads of PyTorch (default 1)")
    p.add_argument("--out", default="out/lm", help="folder for the table and the figures (default out/lm)")
    p.add_argument("--no-figures", action="store_true", help="write the table only")
    a = p.parse_args(argv)
    task = Task.random(a.n_c, a.s_c, a.L, a.K, mu="zipf" if a.zipf else "uniform", seed=a.seed)
    kw = dict(n_spl=a.n_spl, epochs=a.epochs, d=a.d, n_layer=a.layers, n_head=a.heads, batch=a.batch, lr=a.lr)
    res = train_lm(
        task, **kw, lam_W=a.lam_W, lam_H=a.lam_H, seed=a.seed, threads=a.threads, out=a.out, figures=not a.no_figures
    )
    df = res["table"]
    cols = ["epoch", "train_loss", "loss", "accuracy", "nc1", "nc1_trace_ratio", "cdnv", "nc2", "nc2_W", "nc3"]
    cols += ["nc4", "dist_W_gram", "dist_means_gram", "W_norm_sq_ratio", "H_norm_sq_ratio"]
    rows = sorted({0, len(df) // 10, len(df) // 4, len(df) // 2, len(df) - 1})
    best = float(df["prefix_accuracy"].iloc[0])
    print(
        task, f"N = {int(df['N'].iloc[0])} next-word predictions; least CE {res['prefix_entropy']:.4f} nats,", end=" "
    )
    print(f"best accuracy {best:.4f}")
    print(df[[c for c in cols if c in df]].iloc[rows].to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    mon = float(df["monitor_seconds"].sum())
    print(f"{res['seconds']:.1f} s, of which monitor {mon:.2f} s; written to {a.out}")
    return res


if __name__ == "__main__":  # pragma: no cover - the command line
    main()
