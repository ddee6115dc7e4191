"""Time per epoch of the reference trainer on the fig3 setting, against the same model and loop in PyTorch.

Setting (paper figure 3): n_c = 3, n_w = 1200, L = 15, K = 1000, d = 100, n_spl = 5 (5000 sentences,
50 SGD steps of batch 100 per epoch), lr 0.1, weight decay 1e-3 on W and U. Every engine gets the
same data, the same shuffles and the same initial weights; the PyTorch loop is the authors' notebook
loop (Embedding → view → Linear(bias=False), F.cross_entropy, SGD with one weight decay per layer,
accuracy and loss.item() per step) on CPU, same dtype and thread count.

Epochs of the engines are interleaved (A B C A B C …) so that load from other processes hits them
alike; the median epoch time is reported and the ratio is PyTorch / ours, measured in this run.
torch is optional (``pip install torch`` only for this benchmark): without it the PyTorch rows are
skipped. With CuPy and a GPU, the CuPy engine (and torch on CUDA when available) are added.

    python benchmarks/trainer.py [--rounds 5] [--threads 2] [--dtypes float32,float64] [--quick]
"""

from __future__ import annotations

import argparse
import os
import sys

_ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
_ap.add_argument("--rounds", type=int, default=5, help="timed epochs per engine (interleaved)")
_ap.add_argument("--threads", type=int, default=os.cpu_count(), help="BLAS / torch threads for every engine")
_ap.add_argument("--dtypes", default="float32,float64")
_ap.add_argument("--engines", default="numba,numpy,torch,cupy,torch-cuda")
_ap.add_argument("--quick", action="store_true", help="tiny setting, 2 rounds (smoke test)")
ARGS = _ap.parse_args()
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(ARGS.threads)  # before numpy / torch load their thread pools

import time  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from fctheory import Task  # noqa: E402
from fctheory.trainer._engines import ENGINES  # noqa: E402
from fctheory.trainer.data import TrainConfig, epoch_permutation, init_weights, make_data  # noqa: E402


class TorchEngine:
    """The notebook's model and loop in PyTorch (CPU or CUDA)."""

    def __init__(self, E, U, data, cfg, device="cpu"):
        import torch  # noqa: PLC0415

        self.torch = torch
        self.dev = torch.device(device)
        dt = getattr(torch, cfg.dtype)
        torch.set_num_threads(ARGS.threads)
        n_w, d = E.shape
        K, Ld = U.shape
        self.emb = torch.nn.Embedding(n_w, d).to(self.dev, dt)
        self.lin = torch.nn.Linear(Ld, K, bias=False).to(self.dev, dt)
        with torch.no_grad():
            self.emb.weight.copy_(torch.from_numpy(np.asarray(E)))
            self.lin.weight.copy_(torch.from_numpy(np.asarray(U)))
        self.opt = torch.optim.SGD(
            [
                {"params": self.emb.parameters(), "weight_decay": cfg.lam_W},
                {"params": self.lin.parameters(), "weight_decay": cfg.lam_U},
            ],
            lr=cfg.lr,
        )
        self.X = torch.from_numpy(data.X_train).to(self.dev)
        self.y = torch.from_numpy(data.y_train).to(self.dev)
        self.bsz = cfg.batch
        self.Ld = Ld

    def epoch(self, perm):
        torch = self.torch
        perm = torch.from_numpy(perm).to(self.dev)
        loss_sum, correct = 0.0, 0
        for b0 in range(0, perm.shape[0], self.bsz):
            rows = perm[b0 : b0 + self.bsz]
            x, y = self.X[rows], self.y[rows]
            scores = self.lin(self.emb(x).view(x.shape[0], self.Ld))
            loss = torch.nn.functional.cross_entropy(scores, y)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            loss_sum += loss.detach().item() * x.shape[0]
            correct += int((scores.argmax(dim=1) == y).sum())
        if self.dev.type == "cuda":
            torch.cuda.synchronize()
        return loss_sum, correct

    def weights(self):
        return (self.emb.weight.detach().cpu().numpy().copy(), self.lin.weight.detach().cpu().numpy().copy())


def make_engine(name, E, U, data, cfg):
    if name in ("torch", "torch-cuda"):
        try:
            import torch  # noqa: PLC0415
        except ImportError:
            return None, "torch not installed"
        if name == "torch-cuda" and not torch.cuda.is_available():
            return None, "no CUDA for torch"
        return TorchEngine(E, U, data, cfg, "cuda" if name == "torch-cuda" else "cpu"), None
    if name == "cupy":
        try:
            import cupy  # noqa: PLC0415, F401

            cupy.cuda.runtime.getDeviceCount()
        except Exception as exc:  # noqa: BLE001
            return None, f"CuPy unavailable ({type(exc).__name__})"
    cfg2 = TrainConfig(**{**cfg.to_dict(), "backend": name})
    return ENGINES[name](E, U, data, cfg2), None


class _Sync:
    @staticmethod
    def after(eng):
        if getattr(eng, "xp", np) is not np:  # the CuPy engine: wait for the epoch's kernels
            eng.xp.cuda.Stream.null.synchronize()


def main():
    if ARGS.quick:
        task = Task.random(3, 40, 5, 100, seed=0)
        n_spl, d, rounds = 5, 20, 2
    else:
        task = Task.random(3, 400, 15, 1000, seed=np.random.default_rng([0, 0]))
        n_spl, d, rounds = 5, 100, ARGS.rounds
    data = make_data(task, n_spl=n_spl, seed=0)
    N = data.X_train.shape[0]
    print(
        f"fig3 setting: n_w={task.n_w}, L={task.L}, K={task.K}, d={d}, {N} sentences, batch 100 "
        f"({-(-N // 100)} steps/epoch); threads={ARGS.threads}; {os.cpu_count()} CPUs; rounds={rounds}"
    )
    names = [s for s in ARGS.engines.split(",") if s]
    results = {}
    for dtype in ARGS.dtypes.split(","):
        cfg = TrainConfig(n_spl=n_spl, d=d, lr=0.1, batch=100, lam_W=1e-3, lam_U=1e-3, dtype=dtype)
        E0, U0 = init_weights(task, d=d, seed=0, init_scale=1e-3, dtype=dtype)
        engines = {}
        for n in names:
            eng, why = make_engine(n, E0, U0, data, cfg)
            if eng is None:
                print(f"  [{dtype}] {n}: skipped ({why})")
            else:
                engines[n] = eng
        times = {n: [] for n in engines}
        for n, eng in engines.items():  # warm-up epoch (numba load/compile, torch allocator)
            eng.epoch(epoch_permutation(seed=0, epoch=0, n=N))
        for r in range(rounds):
            perm = epoch_permutation(seed=0, epoch=r + 1, n=N)
            for n, eng in engines.items():
                t = time.perf_counter()
                eng.epoch(perm)
                _Sync.after(eng)
                times[n].append(time.perf_counter() - t)
        # every engine ran the same epochs from the same start: their weights must agree
        ref_E = engines[next(iter(engines))].weights()[0] if engines else None
        for n, eng in engines.items():
            med = float(np.median(times[n]))
            diff = float(np.abs(eng.weights()[0] - ref_E).max() / max(np.abs(ref_E).max(), 1e-300))
            results[(dtype, n)] = med
            print(
                f"  [{dtype}] {n:>10}: {med * 1e3:9.1f} ms/epoch (median of {rounds}; min "
                f"{min(times[n]) * 1e3:.1f}); max rel. weight diff vs {next(iter(engines))}: {diff:.1e}"
            )
        base = results.get((dtype, "torch"))
        if base is not None:
            for n in engines:
                if n != "torch":
                    print(f"  [{dtype}] speed-up of {n} over PyTorch CPU: {base / results[(dtype, n)]:.2f}x")
        gbase = results.get((dtype, "torch-cuda"))
        if gbase is not None and (dtype, "cupy") in results:
            print(f"  [{dtype}] speed-up of cupy over PyTorch CUDA: {gbase / results[(dtype, 'cupy')]:.2f}x")


if __name__ == "__main__":
    main()
