"""``fctheory risk``: exact true risk of given weights, next to the theory's prediction."""

from __future__ import annotations

import numpy as np

from .. import risk
from .._errors import FCTheoryError
from .._validate import Array, check_mu, fail
from ..predictions import predict
from ..predictions.verdict import verdict
from ..task import Task
from ._output import add_format_options, print_csv, print_json
from ._table import integer, real, table


def register(sub) -> None:
    p = sub.add_parser(
        "risk",
        help="exact true risk R, R0 and gradient norm of weights (W, U) from a file",
        description="Load W (d x n_w) and U (K x L*d) from an .npz (arrays W, U; optionally Z, mu) or "
        "a PyTorch state_dict (embedding n_w x d, bias-free linear K x L*d; needs torch), compute "
        "the exact true risk (5) - or (10) with --layernorm - by enumerating every sentence, and "
        "print it with the applicable theorem's prediction for the same task.",
    )
    p.add_argument("weights", help="path to .npz or PyTorch .pt/.pth state_dict")
    p.add_argument("--nc", type=integer(min=2), default=None, help="concepts n_c (default: from Z in the file, else 3)")
    p.add_argument(
        "--L", type=integer(min=1), default=None, help="sentence length (default: from Z, else U's width / d)"
    )
    p.add_argument(
        "--K", type=integer(min=1), default=None, help="classes (default: rows of U); K < n_c^L draws Z at random"
    )
    p.add_argument(
        "--task-seed",
        type=integer(min=0, max=2**63 - 1),
        default=0,
        help="seed of the random latent variables (K < n_c^L)",
    )
    p.add_argument(
        "--mu",
        default=None,
        help="word frequencies: uniform, zipf, or comma-separated (default: from the file, else uniform)",
    )
    p.add_argument("--lam", type=real(), default=1e-3, help="weight decay lambda >= 0 (default 1e-3)")
    p.add_argument("--layernorm", action="store_true", help="network h* and risk (10) (W not penalized)")
    p.add_argument("--eps", type=real(), default=0.0, help="LayerNorm epsilon (PyTorch: 1e-5; paper: 0)")
    p.add_argument(
        "--backend",
        default="numpy",
        choices=("numpy", "numba", "cupy"),
        help="engine of the exact risk: NumPy (default), numba kernels, or CuPy on a CUDA device",
    )
    p.add_argument(
        "--max-seconds",
        type=real(lo=0.0, lo_open=True, inf_ok=True),
        default=None,
        help="refuse runs estimated longer (default: the budget, 600 s unless FCTHEORY_MAX_SECONDS; inf: none)",
    )
    p.add_argument(
        "--max-bytes",
        type=real(lo=0.0, lo_open=True, inf_ok=True),
        default=None,
        help="refuse runs needing more working memory (default: the budget, 2 GiB; inf: none)",
    )
    add_format_options(p, csv_ok=True)
    p.set_defaults(func=run)


def _task(args, W, U, extra):
    d, n_w = W.shape
    if "Z" in extra and args.K is None:
        Z = Array(ndim=2, integer=True, min=0)("Z (in the weights file)", extra["Z"])
        n_c = args.nc if args.nc is not None else max(int(Z.max()) + 1, 2)
        L = Z.shape[1]
    else:
        Z = None
        n_c = args.nc if args.nc is not None else 3
        if args.L is not None:
            L = args.L
        else:
            if U.shape[1] % d:
                fail(
                    "weights",
                    args.weights,
                    f"U has {U.shape[1]} columns, not a multiple of d = {d} (rows of W); give --L or fix the file",
                )
            L = U.shape[1] // d
    if n_w % n_c:
        fail("--nc", n_c, f"must divide the vocabulary size n_w = {n_w} (columns of W)")
    s_c = n_w // n_c
    if args.mu is not None:
        if args.mu in ("uniform", "zipf"):
            mu = args.mu
        else:
            try:
                values = np.array([float(v) for v in args.mu.split(",")])
            except ValueError:
                fail("--mu", args.mu, "must be uniform, zipf or comma-separated numbers")
            mu = check_mu(values, s_c, name="--mu")
    elif "mu" in extra:
        mu = check_mu(extra["mu"], s_c, name="mu (in the weights file)")
    else:
        mu = "uniform"
    if Z is not None:
        return Task(n_c, s_c, L, Z, mu)
    K = args.K if args.K is not None else U.shape[0]
    if K == n_c**L:
        return Task.full(n_c, s_c, L, mu=mu)
    return Task.random(n_c, s_c, L, K, mu=mu, seed=args.task_seed)


def run(args) -> int:
    # ranges are checked here (exit status 2 with one line naming the option), parsing by argparse
    for opt, v in (("--lam", args.lam), ("--eps", args.eps)):
        if v < 0:
            fail(opt, v, "must be >= 0")
    W, U, extra = risk.load_weights(args.weights)
    task = _task(args, W, U, extra)
    res = risk.evaluate_risk(  # looked up when called: tests replace fctheory.risk.evaluate_risk
        task,
        W,
        U,
        args.lam,
        layernorm=args.layernorm,
        grad=True,
        eps=args.eps,
        backend=args.backend,
        max_seconds=args.max_seconds,
        max_bytes=args.max_bytes,
    )
    network = "h*" if args.layernorm else "h"
    try:
        pred = predict(task, lam=args.lam, network=network, d=W.shape[0])
        # the label from the same dispatcher as predict, train and diagnose (lam is both decays for h, lam_U for h*)
        v = verdict(
            task, W.shape[0], 0.0 if args.layernorm else args.lam, args.lam, layernorm=args.layernorm, assumptions=False
        )
        theorem, provenance = v.theorem or "none", v.provenance
        pred_risk = float(pred.risk)
        pred_ce = float(pred.ce)
        why = ""
    except FCTheoryError as exc:
        theorem, provenance, pred_risk, pred_ce, why = "none", "", float("nan"), float("nan"), str(exc)
    results = {
        "network": network,
        "d": int(W.shape[0]),
        "R": res.R,
        "R0": res.R0,
        "penalty": res.penalty,
        "grad_norm": res.grad_norm,
        "n_fallback": res.n_fallback,
        "pairs": res.pairs,
        "seconds": res.seconds,
        "theorem": theorem,
        "provenance": provenance,
        "predicted_R": pred_risk,
        "predicted_R0": pred_ce,
        "R_minus_predicted": res.R - pred_risk,
    }
    if why:
        results["no_prediction_because"] = why
    params = {
        "weights": args.weights,
        "lam": args.lam,
        "layernorm": bool(args.layernorm),
        "eps": args.eps,
        "backend": args.backend,
    }
    if args.json:
        print_json("risk", task=task, parameters=params, results=results)
    elif args.csv:
        print_csv([{"weights": args.weights, "lam": args.lam, **results}])
    else:
        print(
            table(
                [["task", repr(task)], ["lam", args.lam]] + [[k, v] for k, v in results.items()], ["quantity", "value"]
            )
        )
    return 0
