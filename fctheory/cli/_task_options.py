"""The task options shared by ``fctheory train`` and ``fctheory diagnose``: ``--task`` or ``--nc --sc --L --K --Z
--mu``, turned into a :class:`~fctheory.Task` by :func:`task_from_args` (through :func:`fctheory.io.task_from_sizes`).
"""

from __future__ import annotations

import os

import numpy as np

from .._validate import Int, PathIn, check_mu, fail
from ..io import load_frequencies, load_latent, load_task, task_from_sizes
from ..task import Task

__all__ = ["add_task_arguments", "task_from_args"]

#: refusals of the task builder name the command-line options (the sizes were checked here, on their options)
_OPTION_NAMES = {"K": "--K", "Z": "--Z"}


def add_task_arguments(
    p, *, random_Z: bool, description: str = "the task the network is trained on (a task file, or its parameters)"
) -> None:
    """Add the ``task`` option group; ``random_Z`` (train) adds ``--task-seed`` and draws Z when K < n_c^L."""
    g = p.add_argument_group("task", description)
    g.add_argument(
        "--task", default=None, metavar="TASK.json", help="task file (n_c, s_c, L, Z, mu; see docs/diagnose.md)"
    )
    g.add_argument("--nc", type=int, default=None, help="concepts n_c")
    g.add_argument(
        "--sc", type=int, default=None, help="words per concept s_c" + ("" if random_Z else " (default: n_w / n_c)")
    )
    g.add_argument(
        "--L", type=int, default=None, help="sentence length L" + ("" if random_Z else " (default: U's width / d)")
    )
    g.add_argument(
        "--K", type=int, default=None, help="classes K (default: " + ("n_c^L" if random_Z else "U's rows") + ")"
    )
    g.add_argument(
        "--Z", default=None, metavar="FILE", help="latent variables, K x L concept indices (.npy, .csv, .json)"
    )
    g.add_argument(
        "--mu",
        default=None,
        help="word frequencies: uniform, zipf, comma-separated numbers, or a file (.npy, .csv, .json)",
    )
    g.add_argument("--normalize-mu", action="store_true", help="divide the frequencies (e.g. counts) by their sum")
    if random_Z:
        g.add_argument(
            "--task-seed",
            type=int,
            default=None,
            help="seed of the random latent variables when K < n_c^L and no --Z (default 0)",
        )


def _given(args) -> bool:
    return any(getattr(args, k, None) is not None for k in ("nc", "sc", "L", "K", "Z"))


def _mu_from_arg(text, s_c, normalize):
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
    if args.task is not None:
        PathIn()("--task", args.task)
        if _given(args) or args.mu is not None:
            fail("--task", args.task, "cannot be combined with --nc/--sc/--L/--K/--Z/--mu (the file defines the task)")
        return load_task(args.task)
    if args.Z is not None:
        PathIn()("--Z", args.Z)
    if not _given(args):
        if file_task is None:
            fail("--task", None, "the task is needed: pass --task TASK.json, or --nc (and --sc, --L, --Z as needed)")
        if args.mu is None:
            return file_task
        mu = _mu_from_arg(args.mu, file_task.s_c, args.normalize_mu)
        return Task(file_task.n_c, file_task.s_c, file_task.L, file_task.Z, mu)
    n_c, s_c, L, K = _sizes(args, W, U, file_task)
    Z = None
    if args.Z is not None:
        Z = load_latent(args.Z, n_c=n_c, L=args.L, K=K)  # one row per class
        L = Z.shape[1]
    mu = _mu_from_arg(args.mu, s_c, args.normalize_mu) if args.mu is not None else "uniform"
    seed = getattr(args, "task_seed", None)
    seed = Int(min=0, max=2**63 - 1)("--task-seed", 0 if seed is None else seed) if random_Z else None
    return task_from_sizes(
        n_c,
        s_c,
        L,
        K=K,
        Z=Z,
        mu=mu,
        seed=seed,
        random_Z=random_Z,
        names=_OPTION_NAMES,
        hint="; pass --Z FILE (K x L concept indices, in class order) or --task TASK.json",
    )


def _sizes(args, W, U, file_task):
    """(n_c, s_c, L, K) from the options, defaults from the weights (W d×n_w, U K×L·d) and the file's task.

    L is None when neither --L nor U gives it and --Z will; K is None when neither --K nor U gives it.
    """
    n_w = W.shape[1] if W is not None else None
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
    return n_c, s_c, _length(args, W, U), _classes(args, U)


def _length(args, W, U):
    d = W.shape[0] if W is not None else None
    if args.L is not None:
        L = Int(min=1, max=10**4)("--L", args.L)
        if U is not None and U.shape[1] != L * d:
            fail("--L", L, f"L * d must equal U's width {U.shape[1]} (d = {d})")
        return L
    if U is not None and d:
        return U.shape[1] // d
    if args.Z is None:
        fail("--L", None, "is required (sentence length)")
    return None


def _classes(args, U):
    if args.K is not None:
        K = Int(min=1, max=10**7)("--K", args.K)
        if U is not None and K != U.shape[0]:
            fail("--K", K, f"must equal the number of rows of U ({U.shape[0]})")
        return K
    return U.shape[0] if U is not None else None
