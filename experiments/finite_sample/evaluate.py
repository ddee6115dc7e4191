"""Predicted against trained norms: per-word R², std ratios, scatter plots (docs/finite-sample.md).

    python experiments/finite_sample/evaluate.py --sgd experiments/finite_sample/results/sgd \
        --out experiments/finite_sample/results --fig docs/finite-sample [--settings fig3,k50,small]

For every setting and seed: regenerate the training sentences (make_data(task, n_spl, seed)), run
the predictors of fctheory.finite_sample, compare with the trained network's norms. Writes
results/metrics.csv (one row per setting × seed × predictor × quantity) and summary.md, and the
scatter plots <fig>/<setting>_words.png and <setting>_u.png.
"""

import argparse
import os
import sys
import time

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(__file__))
from settings import SETTINGS  # noqa: E402

from fctheory import finite_sample as fs  # noqa: E402
from fctheory.trainer.core import make_data  # noqa: E402


def r2(pred, true):
    return 1.0 - np.sum((pred - true) ** 2) / np.sum((true - true.mean()) ** 2)


def r2_centred(pred, true):
    """R² after removing each side's mean (the spread alone, not the offset of the mean)."""
    return r2(pred - pred.mean() + true.mean(), true)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sgd", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--fig", required=True)
    ap.add_argument("--settings", default="small,k50,fig3")
    ap.add_argument("--methods", default="plugin,perturbation,reduced")
    ap.add_argument("--append", action="store_true", help="add to an existing metrics.csv")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    os.makedirs(a.fig, exist_ok=True)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    csv = os.path.join(a.out, "metrics.csv")
    rows = pd.read_csv(csv).to_dict("records") if a.append and os.path.exists(csv) else []
    for name in a.settings.split(","):
        s = SETTINGS[name]
        task = s["task"]()
        z = np.load(os.path.join(a.sgd, f"{name}.npz"))
        WN, UN = z["word_norm"], z["u_norm"]
        figw, axw = plt.subplots(1, 3, figsize=(13, 4))
        figu, axu = plt.subplots(1, 3, figsize=(13, 4))
        for si, seed in enumerate(z["seeds"]):
            data = make_data(task, n_spl=s["n_spl"], seed=int(seed), n_test=0)
            X, y = data.X_train, data.y_train
            counts = fs.word_counts(task, X)
            wn, un = WN[si], UN[si]
            # the collapsed component of each trained word: its projection on its concept's mean direction
            Wt = z["W"][si].astype(np.float64)
            conc = np.arange(task.n_w) // task.s_c
            dirs = np.stack([Wt[:, conc == a].mean(axis=1) for a in range(task.n_c)], axis=1)
            dirs /= np.linalg.norm(dirs, axis=0)
            proj = np.sum(Wt * dirs[:, conc], axis=0)
            rows.append(
                dict(
                    setting=name,
                    seed=int(seed),
                    method="counts",
                    quantity="word",
                    corr=np.corrcoef(counts, wn)[0, 1],
                    R2=np.nan,
                    R2_centred=np.nan,
                    std_pred=np.nan,
                    std_true=wn.std(),
                    mean_pred=np.nan,
                    mean_true=wn.mean(),
                    seconds=0.0,
                )
            )
            for mi, m in enumerate(a.methods.split(",")):
                t0 = time.perf_counter()
                if m == "plugin":
                    p = fs.predict_plugin(task, X, s["lam"])
                elif m == "perturbation":
                    p = fs.predict_perturbation(task, X, y, s["lam"])
                else:
                    p = fs.predict_reduced(task, X, y, s["lam"], gtol=1e-7, maxiter=3000)
                sec = time.perf_counter() - t0
                for q, pred, true in (
                    ("word", p.word_norm, wn),
                    ("u", p.u_norm.ravel(), un.ravel()),
                    ("word_collapsed", p.word_norm, proj),
                ):
                    rows.append(
                        dict(
                            setting=name,
                            seed=int(seed),
                            method=m,
                            quantity=q,
                            corr=np.corrcoef(pred, true)[0, 1] if pred.std() > 0 else np.nan,
                            R2=r2(pred, true),
                            R2_centred=r2_centred(pred, true),
                            std_pred=pred.std(),
                            std_true=true.std(),
                            mean_pred=pred.mean(),
                            mean_true=true.mean(),
                            seconds=sec,
                        )
                    )
                if si == 0:
                    axw[mi].scatter(p.word_norm, wn, s=4, alpha=0.5)
                    lo, hi = min(p.word_norm.min(), wn.min()), max(p.word_norm.max(), wn.max())
                    axw[mi].plot([lo, hi], [lo, hi], "k--", lw=0.8)
                    axw[mi].set_title(f"{name} seed {seed}: {m}\nR²={r2(p.word_norm, wn):.3f}")
                    axw[mi].set_xlabel("predicted ‖w‖")
                    axw[mi].set_ylabel("trained ‖w‖")
                    pu = p.u_norm.ravel()
                    axu[mi].scatter(pu, un.ravel(), s=2, alpha=0.3)
                    lo, hi = min(pu.min(), un.min()), max(pu.max(), un.max())
                    axu[mi].plot([lo, hi], [lo, hi], "k--", lw=0.8)
                    axu[mi].set_title(f"{name} seed {seed}: {m}\nR²={r2(pu, un.ravel()):.3f}")
                    axu[mi].set_xlabel("predicted ‖u_kℓ‖")
                    axu[mi].set_ylabel("trained ‖u_kℓ‖")
                print(
                    f"{name} seed {seed} {m}: {sec:.1f} s, R2 word {rows[-3]['R2']:.3f}, std ratio "
                    f"{rows[-3]['std_pred'] / rows[-3]['std_true']:.3f}; R2 u {rows[-2]['R2']:.3f}; "
                    f"R2 collapsed part {rows[-1]['R2']:.3f}",
                    flush=True,
                )
        figw.tight_layout()
        figw.savefig(os.path.join(a.fig, f"{name}_words.png"), dpi=90)
        figu.tight_layout()
        figu.savefig(os.path.join(a.fig, f"{name}_u.png"), dpi=90)
        plt.close("all")
        df = pd.DataFrame(rows)
        df.to_csv(os.path.join(a.out, "metrics.csv"), index=False)
    df = pd.DataFrame(rows)
    df["std_ratio"] = df["std_pred"] / df["std_true"]
    g = df.groupby(["setting", "quantity", "method"]).agg(
        R2=("R2", "mean"),
        R2_sd=("R2", "std"),
        R2_centred=("R2_centred", "mean"),
        corr=("corr", "mean"),
        std_ratio=("std_ratio", "mean"),
        std_ratio_sd=("std_ratio", "std"),
        mean_pred=("mean_pred", "mean"),
        mean_true=("mean_true", "mean"),
        std_true=("std_true", "mean"),
        seconds=("seconds", "mean"),
        seeds=("seed", "count"),
    )
    with open(os.path.join(a.out, "summary.md"), "w") as f:
        t = g.reset_index()
        f.write("| " + " | ".join(t.columns) + " |\n|" + "---|" * len(t.columns) + "\n")
        for _, row in t.iterrows():
            f.write("| " + " | ".join(f"{v:.4g}" if isinstance(v, float) else str(v) for v in row) + " |\n")
    print(g.to_string())


if __name__ == "__main__":
    main()
