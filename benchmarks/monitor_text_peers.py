"""Benchmark: NCMonitor against rhubarbwu/neural-collapse on the features of a language model of real English text.

The features are those the language-model example writes (``python -m fctheory.torch.lm --corpus pydoc --features``:
``features.npz``, the trained model's penultimate features at every next-word position of pydoc_data.topics,
labelled by the next word; K = the 3,100-word vocabulary, Zipf-distributed counts, some words absent). Without
``--features`` the features of an untrained model of the same text are made here (same shapes and labels).

Both libraries see the same float32 batches and accumulate in float64. The peer (not on PyPI; ``--peer`` is the
folder of a checkout, put on ``sys.path``, never installed or copied here) needs the class means before the second
moments: pass 1 ``MeanAccumulator``, pass 2 ``CovarAccumulator`` and ``VarNormAccumulator`` with those means, then
``covariance_ratio`` (NC1, "pinv", and Tirer's "quotient") and ``variability_cdnv`` over the classes present
(``filter_indices_by_n_samples(1)``: the peer's own way to leave absent classes out). On these features the CDNV
of all present classes is undefined in both (a few words seen once share their mean); both are also compared,
untimed, over the classes seen at least twice. NCMonitor makes one pass
(``update`` per batch); its ``end_epoch`` computes the whole row (NC1–NC4, CDNV, norms, angles, the distances to
the UFM optimum) and, by default, every present class's values (``per_class``): more than the peer's two
metrics, timed all the same. Times are CPU seconds of the process (``time.process_time``: every thread; the
figure to compare on a shared machine) and wall seconds, medians of ``--reps`` interleaved repetitions after one
warm-up each. NC1 is compared under the peer's convention (``torch.linalg.pinv``'s cut-off d·eps on Σ_B's
eigenvalues: fctheory's ``pinv_rtol=d·eps``, from the monitor's statistics; with κ² of the centred means near
1/eps the default rank rules of the two libraries keep different directions, and the script prints both); the
script stops if it differs by more than ``--rtol`` (default 1e-6: NC1 divides by the squared singular values).

Run:  python benchmarks/monitor_text_peers.py --peer /path/to/neural-collapse [--features out/lm-text/features.npz]
      [--batch 1024] [--reps 3] [--threads 2] [--peer-tile 512]
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np
import torch

from fctheory._files import load_npz
from fctheory.metrics import ClassStatistics, cdnv_from_statistics, nc1_from_statistics
from fctheory.torch import NCMonitor
from fctheory.torch.lm import CausalLM, next_token_pairs
from fctheory.torch.text import pydoc_corpus


def load_features(path, length=32, d=32, seed=0):
    """(H float32 (N × d), y int64 (N,), K): from ``features.npz``, else an untrained model of pydoc's text."""
    if path:
        z = load_npz(path, kind="lm_features", name="--features", required=("H", "y", "K"))
        return torch.from_numpy(z["H"]), torch.from_numpy(z["y"]), int(z["K"])
    corpus = pydoc_corpus()
    X = torch.from_numpy(corpus.sequences(length))
    torch.manual_seed(seed)
    model = CausalLM(corpus.vocab_size, length, d=d).eval()
    with torch.no_grad():
        pairs = [next_token_pairs(model.features(x), x) for x in X.split(1024)]
    return torch.cat([h for h, _ in pairs]).float(), torch.cat([t for _, t in pairs]), corpus.vocab_size


def peer_epoch(nc, data, K, d, tile):
    """The peer's two passes and its NC1 ("pinv", "quotient") and CDNV over the present classes: (numbers, CPU s,
    wall s)."""
    c0, t0 = time.process_time(), time.perf_counter()
    f64 = dict(dtype=torch.float64)
    means = nc.MeanAccumulator(K, d, **f64)
    for H, y in data:
        means.accumulate(H, y)
    idxs = means.filter_indices_by_n_samples(1)
    M, _ = means.compute()
    covar, varnorm = nc.CovarAccumulator(K, d, M=M, **f64), nc.VarNormAccumulator(K, d, M=M, **f64)
    for H, y in data:
        covar.accumulate(H, y, M)
        varnorm.accumulate(H, y, M)
    Mp, m_G = means.compute(idxs)
    V_intra, V_norms = covar.compute(), varnorm.compute(idxs)[0]
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)  # the peer's CDNV grid is allocated in the default dtype
    try:
        out = dict(
            nc1=float(nc.covariance_ratio(V_intra, Mp, m_G)),
            nc1_trace_ratio=float(nc.covariance_ratio(V_intra, Mp, m_G, metric="quotient")),
            cdnv=float(nc.variability_cdnv(V_norms, Mp, tile_size=tile)),
            K_present=int(idxs.numel()),
        )
    finally:
        torch.set_default_dtype(previous)
    return out, time.process_time() - c0, time.perf_counter() - t0, (means, varnorm)


def peer_cdnv_seen_twice(nc, accumulators, tile):
    """The peer's CDNV over the classes seen at least twice (untimed): finite where the words seen once share
    means."""
    means, varnorm = accumulators
    idxs = means.filter_indices_by_n_samples(2)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        return float(nc.variability_cdnv(varnorm.compute(idxs)[0], means.compute(idxs)[0], tile_size=tile))
    finally:
        torch.set_default_dtype(previous)


def ours_cdnv_seen_twice(st):
    """fctheory's CDNV over the classes seen at least twice, from the monitor's statistics."""
    sel = st.counts >= 2
    means = st.means[sel]
    sub = ClassStatistics(means, means.mean(0), st.counts[sel], st.sigma_W, st.sigma_B, st.class_var[sel])
    return cdnv_from_statistics(sub)


def monitor_epoch(mon, data):
    """One NCMonitor epoch: (row, CPU s, wall s)."""
    c0, t0 = time.process_time(), time.perf_counter()
    with mon.epoch():
        for H, y in data:
            mon.update(H, y)
    return mon.rows[-1], time.process_time() - c0, time.perf_counter() - t0


def _kappa(H, y):
    """s_max/s_min of the centred class means of the present classes (NC1's conditioning)."""
    present = torch.unique(y)
    M = torch.stack([H[y == k].double().mean(0) for k in present]).numpy()
    s = np.linalg.svd(M - M.mean(0), compute_uv=False)
    return float(s[0] / s[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--peer", required=True, help="folder of a rhubarbwu/neural-collapse checkout (on sys.path)")
    ap.add_argument("--features", default=None, help="features.npz of the LM example (default: an untrained model)")
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rtol", type=float, default=1e-6)
    ap.add_argument("--peer-tile", type=int, default=512, help="the peer's CDNV tile_size (its K×K×d differences)")
    args = ap.parse_args()
    sys.path.insert(0, args.peer)
    import neural_collapse.accumulate as acc  # noqa: PLC0415 - the peer, from the given checkout
    import neural_collapse.measure as meas  # noqa: PLC0415

    nc = argparse.Namespace(**{n: getattr(acc, n) for n in ("MeanAccumulator", "CovarAccumulator")})
    nc.VarNormAccumulator, nc.covariance_ratio, nc.variability_cdnv = (
        acc.VarNormAccumulator,
        meas.covariance_ratio,
        meas.variability_cdnv,
    )
    torch.set_num_threads(args.threads)
    H, y, K = load_features(args.features)
    N, d = H.shape
    data = list(zip(H.split(args.batch), y.split(args.batch)))
    print(f"torch {torch.__version__}, {args.threads} thread(s); features {args.features or 'of an untrained model'}")
    print(f"N = {N}, d = {d}, K = {K}, present {int(torch.unique(y).numel())}, batch {args.batch}")
    runs = {"NCMonitor": [], "NCMonitor (per_class=False)": [], "peer": []}
    monitors = {
        "NCMonitor": NCMonitor(K, lam_W=1e-3, lam_H=1e-6, progress=False),
        "NCMonitor (per_class=False)": NCMonitor(K, lam_W=1e-3, lam_H=1e-6, progress=False, per_class=False),
    }
    for rep in range(args.reps + 1):  # the first: warm-up (numba's caches, the UFM optimum, the peer's kernels)
        for name, mon in monitors.items():
            row, cpu, wall = monitor_epoch(mon, data)
            if rep:
                runs[name].append((row, cpu, wall))
        got = peer_epoch(nc, data, K, d, args.peer_tile)
        if rep:
            runs["peer"].append(got)
        print(f"rep {rep}: CPU s " + ", ".join(f"{n} {r[-1][1]:.2f}" for n, r in runs.items() if rep), flush=True)
    peer, row = runs["peer"][-1][0], runs["NCMonitor"][-1][0]
    kappa = _kappa(H, y)
    # the peer's Σ_B⁺ is torch.linalg.pinv's (eigenvalues below d·eps·λ_max dropped); fctheory's default keeps the
    # ≤ K−1 directions with s_i > 10·max(K, d)·eps·s_max. With κ² near 1/eps the two rules can keep different
    # directions: the peer's convention is fctheory's pinv_rtol=d·eps, from the monitor's own statistics
    eps = float(np.finfo(np.float64).eps)
    ours_pinv = nc1_from_statistics(monitors["NCMonitor"].statistics, pinv_rtol=d * eps)
    print(f"NC1 (Papyan), fctheory's default rank rule: {row['nc1']:.12g}; with the peer's cut-off: {ours_pinv:.12g}")
    rel = abs(ours_pinv - peer["nc1"]) / abs(peer["nc1"])
    rel_q = abs(row["nc1_trace_ratio"] - peer["nc1_trace_ratio"]) / abs(peer["nc1_trace_ratio"])
    print(f"present classes: NCMonitor {row['K_present']}, peer {peer['K_present']}; κ = {kappa:.3g}")
    print(f"NC1 (Papyan, the peer's cut-off): NCMonitor {ours_pinv:.12g}, peer {peer['nc1']:.12g}, rel. diff {rel:.1e}")
    print(
        f"NC1 (tr Σ_W/tr Σ_B): NCMonitor {row['nc1_trace_ratio']:.12g}, peer {peer['nc1_trace_ratio']:.12g}, ", end=""
    )
    print(f"rel. diff {rel_q:.1e}")
    cd_o, cd_p = row["cdnv"], peer["cdnv"]
    same_cdnv = (math.isnan(cd_o) and not math.isfinite(cd_p)) or abs(cd_o - cd_p) <= 1e-9 * abs(cd_p)
    print(f"CDNV: NCMonitor {cd_o:.12g}, peer {cd_p:.12g} (NaN/inf: two classes with the same mean) ", end="")
    print("same" if same_cdnv else "DIFFERENT")
    cd2_o, cd2_p = (
        ours_cdnv_seen_twice(monitors["NCMonitor"].statistics),
        peer_cdnv_seen_twice(nc, runs["peer"][-1][3], args.peer_tile),
    )
    rel_cd = abs(cd2_o - cd2_p) / abs(cd2_p)
    print(
        f"CDNV over the classes seen twice or more: NCMonitor {cd2_o:.12g}, peer {cd2_p:.12g}, rel. diff {rel_cd:.1e}"
    )
    if rel > args.rtol or rel_q > 1e-12 or not same_cdnv or rel_cd > 1e-10 or row["K_present"] != peer["K_present"]:
        raise SystemExit("the two libraries disagree (see above)")
    print("| | CPU s (median) | wall s (median) | CPU ratio peer / this |")
    print("|---|---|---|---|")
    peer_cpu = float(np.median([r[1] for r in runs["peer"]]))
    for name, rs in runs.items():
        cpu, wall = float(np.median([r[1] for r in rs])), float(np.median([r[2] for r in rs]))
        print(f"| {name} | {cpu:.2f} | {wall:.2f} | **{peer_cpu / cpu:.2f}×** |")


if __name__ == "__main__":
    main()
