"""Tutorial: neural collapse of an MLP on scikit-learn's digits, against the regularised UFM optimum.

An MLP is trained with cross-entropy, weight decay λ_W on its last layer and the UFM's feature penalty
(λ_H/2)‖H‖² (over all N training samples) well into the terminal phase, with an
:class:`fctheory.torch.NCMonitor` attached to its penultimate layer. After every training epoch the
monitor measures the training features in an evaluation pass; at the end
:func:`fctheory.nc_diagnosis.diagnose_features` compares the final features with the UFM optimum.

The training set is the whole data set, with its own class counts (174 to 183 images per class): the UFM
optimum compared with is the certified optimum for those counts (``fctheory.ufm.ce(counts=...)``), not the
balanced closed form. ``n_train=k`` instead takes k images of every class (balanced) and tests on the rest.

Run ``python docs/tutorials/digits.py`` (the full run: 400 epochs, a minute or two on a CPU); the page
docs/tutorial-digits.md quotes its numbers. ``main(epochs=..., out=...)`` is what the tests call.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time

import numpy as np
import torch
from sklearn.datasets import load_digits

from fctheory.nc_diagnosis import diagnose_features
from fctheory.torch import NCMonitor

LAM_W = 1e-2  # weight decay on the last layer W
LAM_H = 5e-4  # the UFM feature penalty (λ_H/2)‖H‖², ‖H‖² summed over the N training samples
WD = 5e-4  # weight decay on the other layers


def balanced_split(n_train, seed=0):
    """Digits as float32 tensors: ``n_train`` training images per class (balanced), the rest for testing;
    ``n_train=None``: every image for training (the data set's own counts, 174 to 183 per class), no test set."""
    X, y = load_digits(return_X_y=True)
    X = (X / 16.0).astype(np.float32)
    rng = np.random.default_rng(seed)
    if n_train is None:
        train = rng.permutation(len(y))
    else:
        train = np.concatenate([rng.permutation(np.flatnonzero(y == k))[:n_train] for k in range(10)])
    test = np.setdiff1d(np.arange(len(y)), train)
    t = lambda a: torch.from_numpy(np.ascontiguousarray(a))  # noqa: E731
    return t(X[train]), t(y[train]), t(X[test]), t(y[test])


def build(d=32, width=128):
    backbone = torch.nn.Sequential(
        torch.nn.Linear(64, width),
        torch.nn.ReLU(),
        torch.nn.Linear(width, width),
        torch.nn.ReLU(),
        torch.nn.Linear(width, d),
    )
    fc = torch.nn.Linear(d, 10)
    return backbone, fc


def train_epoch(backbone, fc, opt, X, y, batch, N, gen, monitor=None):
    """One epoch of CE + (λ_W/2)‖W‖² + (λ_H/2)·N·mean_batch‖h‖² (the UFM objective's minibatch estimate).

    With a ``monitor`` hooked to ``backbone``, the training forwards feed it (as the Lightning callback does).
    """
    backbone.train()
    total, seen = 0.0, 0
    for idx in torch.randperm(len(y), generator=gen).split(batch):
        with monitor.batch(y[idx]) if monitor is not None else contextlib.nullcontext():
            h = backbone(X[idx])
        loss = torch.nn.functional.cross_entropy(fc(h), y[idx])
        reg = 0.5 * LAM_W * fc.weight.pow(2).sum() + 0.5 * LAM_H * N * h.pow(2).sum(dim=1).mean()
        opt.zero_grad()
        (loss + reg).backward()
        opt.step()
        total += float(loss.detach()) * len(idx)
        seen += len(idx)
    return total / seen


def optimizer(backbone, fc, lr, epochs):
    """SGD with momentum, weight decay WD on the backbone only (λ_W is in the loss), cosine schedule."""
    params = [{"params": backbone.parameters(), "weight_decay": WD}, {"params": fc.parameters(), "weight_decay": 0.0}]
    opt = torch.optim.SGD(params, lr=lr, momentum=0.9)
    return opt, torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)


def measurement_pass(backbone, fc, X, y, monitor=None):
    """The training set through the network in evaluation mode, in chunks of 512; a ``monitor`` hooked to the
    backbone sees the features. Returns the training accuracy (1 from the start of the terminal phase on)."""
    backbone.eval()
    correct = 0
    with torch.no_grad():
        for idx in torch.arange(len(y)).split(512):
            with monitor.batch(y[idx]) if monitor is not None else contextlib.nullcontext():
                h = backbone(X[idx])
            correct += int((fc(h).argmax(1) == y[idx]).sum())
    return correct / len(y)


def accuracy(backbone, fc, X, y):
    if len(y) == 0:  # no test set (every image trains)
        return float("nan")
    with torch.no_grad():
        return float((fc(backbone(X)).argmax(1) == y).float().mean())


def main(epochs=400, out="out/digits", *, n_train=None, batch=128, lr=0.1, seed=0, progress=True, threads=1):
    """Train, monitor, diagnose; writes ``history.parquet``, ``nc_history.png`` and the diagnosis report
    (``report.md``, ``grams.png``, ``metrics.png``) into ``out``; returns a dict of the numbers.

    ``threads`` limits PyTorch's CPU threads while it runs (a network this small runs fastest on one).
    """
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        return _run(epochs, out, n_train, batch, lr, seed, progress)
    finally:
        torch.set_num_threads(previous)


def _run(epochs, out, n_train, batch, lr, seed, progress):
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    Xtr, ytr, Xte, yte = balanced_split(n_train, seed)
    N = len(ytr)
    backbone, fc = build()
    opt, sched = optimizer(backbone, fc, lr, epochs)
    monitor = NCMonitor(10, lam_W=LAM_W, lam_H=LAM_H, classifier=fc, total_epochs=epochs, progress=progress)
    monitor.attach(backbone)
    t0 = time.perf_counter()
    for _ in range(epochs):
        loss = train_epoch(backbone, fc, opt, Xtr, ytr, batch, N, gen)
        sched.step()
        with monitor.epoch() as extra:
            extra["train_accuracy"] = measurement_pass(backbone, fc, Xtr, ytr, monitor)
            extra["train_loss"] = loss
            extra["test_accuracy"] = accuracy(backbone, fc, Xte, yte)
    seconds = time.perf_counter() - t0
    monitor.close()
    os.makedirs(out, exist_ok=True)
    monitor.save(os.path.join(out, "history.parquet"))
    monitor.plot(os.path.join(out, "nc_history.png"))
    with torch.no_grad():
        H = backbone(Xtr).double().numpy()
    W, b = fc.weight.detach().double().numpy(), fc.bias.detach().double().numpy()
    # the final features, for `fctheory diagnose-features features.npz --lam-W .. --lam-H ..`
    np.savez(os.path.join(out, "features.npz"), H=H, y=ytr.numpy(), W=W, b=b)
    D = diagnose_features(H, ytr.numpy(), W, b, lam_W=LAM_W, lam_H=LAM_H)
    D.report(out)
    df = monitor.table()
    return {
        "monitor": monitor,
        "diagnosis": D,
        "table": df,
        "seconds": seconds,
        "monitor_seconds": float(df["monitor_seconds"].sum()),
        "out": out,
    }


if __name__ == "__main__":
    res = main(*(int(a) for a in sys.argv[1:2]))
    df, D = res["table"], res["diagnosis"]
    cols = [
        "epoch",
        "train_loss",
        "train_accuracy",
        "test_accuracy",
        "nc1",
        "nc2",
        "nc3",
        "nc4",
        "dist_W_gram",
        "dist_means_gram",
        "W_norm_sq_ratio",
        "H_norm_sq_ratio",
    ]
    with np.printoptions(precision=4):
        print(df[cols].iloc[[0, 9, 49, 99, 199, len(df) - 1]].to_string(index=False))
    print(f"training {res['seconds']:.1f} s, of which monitor {res['monitor_seconds']:.2f} s")
    print(D.verdict)
    z = np.load(os.path.join(res["out"], "features.npz"))
    wrong = diagnose_features(z["H"], z["y"], z["W"], z["b"], lam_W=LAM_W, lam_H=10 * LAM_H)
    print("with lam_H x 10:", wrong.verdict)
