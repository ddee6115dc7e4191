"""``fctheory diagnose WEIGHTS``: a trained network against the theory (exact or Monte-Carlo risk,
gradient, applicable theorem, collapse distances, figures and a markdown report).

Also defines the task options shared with ``fctheory train`` (:func:`add_task_arguments`,
:func:`task_from_args`).
"""
from __future__ import annotations

import os

import numpy as np

from .._validate import Int, Real, check_mu, fail
from ._output import print_json, say
from ._table import table

_EPS_PYTORCH = 1e-5


# ----------------------------------------------------------------------------- task options (shared with train)
def add_task_arguments(p, *, random_Z: bool) -> None:
    g = p.add_argument_group("task", "the task the network is trained on (a task file, or its parameters)")
    g.add_argument("--task", default=None, metavar="TASK.json", help="task file (n_c, s_c, L, Z, mu; see docs/diagnose.md)")
    g.add_argument("--nc", type=int, default=None, help="concepts n_c")
    g.add_argument("--sc", type=int, default=None, help="words per concept s_c" + ("" if random_Z else
                   " (default: n_w / n_c)"))
    g.add_argument("--L", type=int, default=None, help="sentence length L" + ("" if random_Z else
                   " (default: U's width / d)"))
    g.add_argument("--K", type=int, default=None, help="classes K (default: " + ("n_c^L" if random_Z else
                   "U's rows") + ")")
    g.add_argument("--Z", default=None, metavar="FILE", help="latent variables, K x L concept indices (.npy, .csv, .json)")
    g.add_argument("--mu", default=None, help="word frequencies: uniform, zipf, comma-separated numbers, or a file "
                   "(.npy, .csv, .json)")
    g.add_argument("--normalize-mu", action="store_true", help="divide the frequencies (e.g. counts) by their sum")
    if random_Z:
        g.add_argument("--task-seed", type=int, default=None, help="seed of the random latent variables when K < n_c^L "
                       "and no --Z (default 0)")


def _given(args) -> bool:
    return any(getattr(args, k, None) is not None for k in ("nc", "sc", "L", "K", "Z"))


def _mu_from_arg(text, s_c, normalize):
    from ..diagnosis import load_frequencies  # noqa: PLC0415

    if text in ("uniform", "zipf"):
        return text
    if os.path.exists(text):
        return load_frequencies(text, s_c=s_c, normalize=normalize)
    try:
        vals = np.array([float(v) for v in text.split(",")])
    except ValueError:
        fail("--mu", text, "must be uniform, zipf, comma-separated numbers or an existing file")
    if normalize:
        if np.any(~np.isfinite(vals)) or np.any(vals <= 0):
            fail("--mu", text, "frequencies must be finite and strictly positive")
        vals = vals / vals.sum()
    return check_mu(vals, s_c, name="--mu")


def task_from_args(args, *, W=None, U=None, file_task=None, random_Z=False):
    """The Task named by --task / --nc --sc --L --K --Z --mu (weights give defaults; a file task is the fallback).

    With weights (W, U) every given size must fit them, so a mismatch is reported on the option.
    """
    import math  # noqa: PLC0415

    from .._validate import PathIn  # noqa: PLC0415
    from ..diagnosis import load_latent, load_task  # noqa: PLC0415
    from ..task import Task  # noqa: PLC0415

    if args.task is not None:
        PathIn()("--task", args.task)
        if _given(args) or args.mu is not None:
            fail("--task", args.task, "cannot be combined with --nc/--sc/--L/--K/--Z/--mu (the file defines the task)")
        return load_task(args.task)
    if args.Z is not None:
        PathIn()("--Z", args.Z)
    if not _given(args):
        if file_task is not None:
            if args.mu is None:
                return file_task
            mu = _mu_from_arg(args.mu, file_task.s_c, args.normalize_mu)
            return Task(file_task.n_c, file_task.s_c, file_task.L, file_task.Z, mu)
        fail("--task", None, "the task is needed: pass --task TASK.json, or --nc (and --sc, --L, --Z as needed)")
    n_w = W.shape[1] if W is not None else None
    d = W.shape[0] if W is not None else None
    # caps keep sizes sane before anything is built (the weights' sizes are checked against the budget later)
    if args.nc is not None:
        n_c = Int(min=2, max=10**6)("--nc", args.nc)
    elif file_task is not None:
        n_c = file_task.n_c
    else:
        fail("--nc", None, "is required with --sc/--L/--K/--Z (the number of concepts)")
    if n_w is not None and n_w % n_c:
        fail("--nc", n_c, f"must divide the vocabulary size n_w = {n_w} (columns of W)")
    if args.sc is not None:
        s_c = Int(min=1, max=10**7)("--sc", args.sc)
        if n_w is not None and s_c * n_c != n_w:
            fail("--sc", s_c, f"n_c * s_c must equal n_w = {n_w} (columns of W)")
    elif n_w is not None:
        s_c = n_w // n_c
    else:
        fail("--sc", None, "is required (words per concept)")
    if args.L is not None:
        L = Int(min=1, max=10**4)("--L", args.L)
        if U is not None and U.shape[1] != L * d:
            fail("--L", L, f"L * d must equal U's width {U.shape[1]} (d = {d})")
    elif U is not None and d:
        L = U.shape[1] // d
    elif args.Z is None:
        fail("--L", None, "is required (sentence length)")
    if args.K is not None:
        K = Int(min=1, max=10**7)("--K", args.K)
        if U is not None and K != U.shape[0]:
            fail("--K", K, f"must equal the number of rows of U ({U.shape[0]})")
    else:
        K = U.shape[0] if U is not None else None
    Z = None
    if args.Z is not None:
        Z = load_latent(args.Z, n_c=n_c, L=args.L, K=K)  # one row per class
        L = Z.shape[1]
    mu = _mu_from_arg(args.mu, s_c, args.normalize_mu) if args.mu is not None else "uniform"
    if Z is not None:
        return Task(n_c, s_c, L, Z, mu)
    huge = L * math.log(n_c) > math.log(10**7)
    N = None if huge else n_c**L
    if K is None:
        if N is None:
            fail("--K", None, f"is required: n_c^L = {n_c}^{L} latent variables are too many for a full task")
        K = N
    if N is not None and K > N:
        fail("--K", K, f"must be <= n_c^L = {N} (the number of distinct latent variables)")
    if K == N:
        return Task.full(n_c, s_c, L, mu=mu)
    if not random_Z:
        fail("--Z", None, f"the latent variables are needed: K = {K} < n_c^L = {n_c}^{L}, and a random Z would be a "
             "different task; pass --Z FILE (K x L concept indices, in class order) or --task TASK.json")
    seed = getattr(args, "task_seed", None)
    return Task.random(n_c, s_c, L, K, mu=mu, seed=Int(min=0, max=2**63 - 1)("--task-seed", 0 if seed is None else seed))


# ----------------------------------------------------------------------------- the command
def register(sub) -> None:
    p = sub.add_parser(
        "diagnose",
        help="a trained network against the theory: exact/Monte-Carlo risk, gradient, theorem, collapse, report",
        description="Load trained weights (a run directory of 'fctheory train --out', an .npz, a PyTorch "
        "state_dict or a .safetensors file in the authors' notebook layout: emb.weight n_w x d, clf.weight "
        "K x L*d), compute the true risk (exact when it fits --max-seconds, else Monte Carlo with a "
        "confidence interval), its gradient norm, the applicable theorem's prediction and why it may not "
        "apply, distances to collapse configurations, norms, spectra and cosines; with --out write "
        "report.md, diagnosis.json and PNG figures.",
    )
    p.add_argument("weights", help="run directory, .npz, .pt/.pth state_dict, .safetensors or trainer checkpoint")
    add_task_arguments(p, random_Z=False)
    p.add_argument("--lam-W", type=float, default=None, help="weight decay on W (default: from the run's config)")
    p.add_argument("--lam-U", type=float, default=None, help="weight decay on U (default: from the run's config)")
    p.add_argument("--layernorm", action="store_true", default=None, help="network h* (LayerNorm φ on the embeddings)")
    p.add_argument("--eps", type=float, default=None,
                   help=f"LayerNorm epsilon (default: the run's, else {_EPS_PYTORCH:g} as PyTorch; 0 is the paper's φ)")
    p.add_argument("--method", default="auto", choices=("auto", "exact", "mc"),
                   help="exact enumeration, Monte Carlo, or auto (exact when within --max-seconds)")
    p.add_argument("--samples", type=int, default=None, help="Monte-Carlo sentences per class")
    p.add_argument("--seed", type=int, default=0, help="Monte-Carlo seed (default 0)")
    p.add_argument("--confidence", type=float, default=0.95, help="level of the Monte-Carlo interval (default 0.95)")
    p.add_argument("--max-seconds", type=float, default=60.0, help="longest exact enumeration 'auto' accepts (default 60)")
    p.add_argument("--rtol", type=float, default=1e-6, help="tolerance of the critical-point / match verdicts")
    p.add_argument("--backend", default="numpy", choices=("numpy", "numba", "cupy"))
    p.add_argument("--no-assumptions", action="store_true", help="skip the Assumption A/B checks of Z")
    p.add_argument("--unsafe-pickle", action="store_true",
                   help="also read a fully pickled nn.Module: EXECUTES CODE FROM THE FILE (trusted files only)")
    p.add_argument("--out", default=None, help="folder for report.md, diagnosis.json and the figures")
    p.add_argument("--json", action="store_true", help="print the diagnosis as the fctheory/1 JSON object")
    p.set_defaults(func=run)


def _config_value(args_value, config, key, flag, kind):
    if args_value is not None:
        return kind(flag, args_value)
    if key in config and config[key] is not None:
        return kind(flag, config[key])
    return None


def run(args) -> int:
    from .._validate import Bool, PathOut  # noqa: PLC0415
    from ..diagnosis import diagnose, load_run  # noqa: PLC0415

    if args.out is not None:
        PathOut(dir=True)("--out", args.out)  # refused before any work
    rf = load_run(args.weights, allow_pickle=args.unsafe_pickle)
    task = task_from_args(args, W=rf.W, U=rf.U, file_task=rf.task)
    cfg = rf.config
    lam_W = _config_value(args.lam_W, cfg, "lam_W", "--lam-W", Real(lo=0))
    lam_U = _config_value(args.lam_U, cfg, "lam_U", "--lam-U", Real(lo=0))
    if lam_W is None:
        fail("--lam-W", None, "is required (the weight decay the network was trained with)")
    if lam_U is None:
        fail("--lam-U", None, "is required (the weight decay the network was trained with)")
    layernorm = True if args.layernorm else bool(Bool()("layernorm (config)", cfg.get("layernorm", False)))
    eps = _config_value(args.eps, cfg, "eps", "--eps", Real(lo=0))
    if eps is None:
        eps = _EPS_PYTORCH if layernorm else 0.0
    n = Int(min=2, max=10**9)("--samples", args.samples) if args.samples is not None else None
    D = diagnose(W=rf.W, U=rf.U, task=task, lam_W=lam_W, lam_U=lam_U, layernorm=layernorm, eps=eps, method=args.method, n_samples=n,
                 seed=Int(min=0, max=2**63 - 1)("--seed", args.seed),
                 confidence=Real(lo=0, hi=1 - 1e-12, lo_open=True)("--confidence", args.confidence),
                 max_seconds=Real(lo=0, lo_open=True)("--max-seconds", args.max_seconds),
                 rtol=Real(lo=0)("--rtol", args.rtol), backend=args.backend, assumptions=not args.no_assumptions)
    report = D.report(args.out) if args.out is not None else None
    if args.json:
        out = D.to_dict()
        out.pop("task", None)
        out.pop("versions", None)  # the envelope lists them
        out["source"] = {"path": os.path.abspath(args.weights), "kind": rf.source}
        if report:
            out["report"] = os.path.abspath(report)
        params = {"weights": args.weights, "lam_W": D.lam_W, "lam_U": D.lam_U, "layernorm": bool(layernorm),
                  "eps": eps, "method": args.method, "samples": n, "seed": args.seed, "confidence": args.confidence,
                  "max_seconds": args.max_seconds, "rtol": args.rtol, "backend": args.backend,
                  "assumptions": not args.no_assumptions, "out": None if args.out is None else os.path.abspath(args.out)}
        print_json("diagnose", task=D.task, parameters=params, results=out)
        return 0
    t = D.task
    say(f"{rf.source} {args.weights}: network {D.network}, d={D.d}, {t!r}, λ_W={D.lam_W:g}, λ_U={D.lam_U:g}")
    if D.method == "exact":
        print(f"true risk (exact): R = {D.R:.12g}, R0 = {D.R0:.12g}")
    else:
        lo, hi = D.R_ci
        say(f"true risk (Monte Carlo, {D.n_samples}/class): R = {D.R:.8g} ± {D.R_stderr:.2g} "
            f"({D.confidence:.0%}: [{lo:.8g}, {hi:.8g}])")
    th = D.theory
    say(f"theory: {th.theorem or 'none'}" + (f" — {th.statement}" if th.theorem else ""))
    for r in th.reasons:
        say(f"  does not apply exactly: {r}")
    for n_ in th.notes:
        say(f"  note: {n_}")
    print(table([[q, o, p] for q, o, p in D.comparison()], ["quantity", "observed", "theory"]))
    say(f"verdict: {D.verdict}")
    if report:
        say(f"report: {os.path.abspath(report)}")
    return 0
