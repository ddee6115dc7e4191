"""Sweep specifications: a target, fixed parameters, grid and random axes, seeds, executor, output.

A spec is a TOML file (or the equivalent dict)::

    target = "train"             # a registered target (fctheory.sweep.TARGETS) or "package.module:function"
    output = "lam-seed"          # dataset folder (relative to the spec file); results.parquet inside
    executor = "local"           # "local" (process pool; workers = 1 runs here) or "dask"
    workers = 2                  # processes (local) or LocalCluster workers (dask)
    address = "tcp://host:8786"  # dask only: an existing scheduler instead of a LocalCluster
    seeds = [0, 1, 2]            # shorthand for grid.seed (an integer n means 0 … n−1)
    batch = true                 # train: group compatible points into batched runs
    max_batch = 64

    [fixed]                      # parameters shared by every point
    n_c = 3
    s_c = 4
    L = 3
    n_spl = 5

    [grid]                       # the Cartesian product of these lists
    lam = [1e-3, 1e-2, 1e-1]

    [random]                     # a random design, drawn from `seed` (crossed with the grid)
    n = 8
    seed = 0
    lr = { log_uniform = [0.01, 0.5] }   # also uniform, int_uniform (inclusive), choice

Every point is a dict of parameters; its id is a stable hash of the target and the parameters,
so re-running a spec skips the points already in the output and a seed is attached to a point,
not to the order in which points run.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import numbers
import os
import tomllib
from dataclasses import dataclass, field, replace

import numpy as np

from .._validate import Anything, Bool, Choice, Instance, Int, PathIn, PathOut, fail, public, result_type
from .plots import KINDS
from .targets import check_params, resolve_target

__all__ = ["SweepSpec", "load_spec", "point_id"]

_TOP_KEYS = {
    "target",
    "output",
    "executor",
    "workers",
    "address",
    "seeds",
    "batch",
    "max_batch",
    "fixed",
    "grid",
    "random",
    "chunk",
    "name",
    "description",
    "plot",
}
_DISTS = {"uniform", "log_uniform", "int_uniform", "choice"}


def _scalar_ok(v) -> bool:
    return (
        v is None
        or isinstance(v, (bool, str, numbers.Real))
        or (isinstance(v, list) and all(isinstance(x, (numbers.Real, str)) and not isinstance(x, bool) for x in v))
    )


def _norm(v):
    """A parameter value in canonical plain-Python form (hashing, Parquet)."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, (list, tuple, np.ndarray)):
        return [_norm(x) for x in list(v)]
    return v


def point_id(target: str, params: dict) -> str:
    """Stable id of a point: the first 16 hex digits of SHA-256 of (target, sorted parameters)."""
    blob = json.dumps(
        {"target": target, "params": {k: _norm(v) for k, v in params.items()}},
        sort_keys=True,
        separators=(",", ":"),
        allow_nan=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


@result_type
@dataclass(frozen=True)
class SweepSpec:
    """A validated sweep specification (see the module docstring for the TOML form).

    Attributes
    ----------
    target : str
    fixed : dict
        Parameters shared by every point.
    grid : dict of list
        Axes of the Cartesian product (``seeds`` becomes ``grid["seed"]``).
    random : dict
        ``n`` points drawn from ``seed`` with per-parameter distributions.
    output : str or None
        Dataset folder (absolute once loaded from a file).
    executor : {"local", "dask"}
    workers : int or None
        Processes (local) or LocalCluster workers (dask); default: the number of cores.
    address : str or None
        Dask scheduler address (dask only).
    batch : bool
        Group compatible ``train`` points into batched runs (:func:`fctheory.trainer.batched.train_batched`).
    max_batch : int
        Largest batch.
    chunk : int or None
        Points per work unit for other targets (default: about 4 units per worker).
    """

    target: str
    fixed: dict = field(default_factory=dict)
    grid: dict = field(default_factory=dict)
    random: dict = field(default_factory=dict)
    output: str | None = None
    executor: str = "local"
    workers: int | None = None
    address: str | None = None
    batch: bool = True
    max_batch: int = 64
    chunk: int | None = None
    name: str = ""
    plot: str | None = None

    def points(self) -> list:
        """Every point (a dict of parameters), in a fixed order: grid (last axis fastest) × random."""
        axes = list(self.grid.items())
        grid = [dict(zip([a for a, _ in axes], combo)) for combo in itertools.product(*[v for _, v in axes])]
        rand = _draw_random(self.random)
        out = []
        for g in grid:
            for r in rand:
                p = dict(self.fixed)
                p.update(r)
                p.update(g)
                out.append(p)
        return out

    def to_dict(self) -> dict:
        return {
            "target": self.target,
            "fixed": self.fixed,
            "grid": self.grid,
            "random": self.random,
            "output": self.output,
            "executor": self.executor,
            "workers": self.workers,
            "address": self.address,
            "batch": self.batch,
            "max_batch": self.max_batch,
            "chunk": self.chunk,
            "name": self.name,
            "plot": self.plot,
        }


def _draw_random(rnd: dict) -> list:
    if not rnd:
        return [{}]
    n = rnd["n"]
    rng = np.random.default_rng([int(rnd.get("seed", 0)), 11])
    params = {k: v for k, v in rnd.items() if k not in ("n", "seed")}
    cols = {}
    for name in sorted(params):  # sorted: the draw does not depend on the order of the TOML keys
        ((dist, arg),) = params[name].items()
        if dist == "uniform":
            cols[name] = rng.uniform(arg[0], arg[1], n).tolist()
        elif dist == "log_uniform":
            cols[name] = np.exp(rng.uniform(math.log(arg[0]), math.log(arg[1]), n)).tolist()
        elif dist == "int_uniform":
            cols[name] = rng.integers(int(arg[0]), int(arg[1]) + 1, n).tolist()
        else:
            cols[name] = [arg[i] for i in rng.integers(0, len(arg), n)]
    return [{k: cols[k][i] for k in params} for i in range(n)]


# the scalar settings of a spec: their kinds and defaults (in the order they are checked)
_SCALARS = {
    "executor": (Choice("local", "dask"), "local"),
    "workers": (Int(min=1, max=4096).or_none(), None),
    "batch": (Bool(), True),
    "max_batch": (Int(min=1, max=4096), 64),
    "chunk": (Int(min=1, max=10**6).or_none(), None),
    "name": (Instance(str, label="string"), ""),
    "plot": (Choice(*KINDS).or_none(), None),
}
_SEED = Int(min=0, max=2**63 - 1)


def _check_target(d) -> str:
    if not isinstance(d, dict):
        fail("spec", d, "must be a table (dict) of sweep settings")
    for k in d:
        if k not in _TOP_KEYS:
            fail(k, d[k], f"is not a sweep setting; known keys are {sorted(_TOP_KEYS)}")
    if "target" not in d:
        fail("target", None, 'is required (e.g. target = "train" or "tau")')
    target = d["target"]
    if not isinstance(target, str) or not target:
        fail("target", target, "must be a target name or 'package.module:function'")
    resolve_target(target)  # unknown names fail here, naming the key
    return target


def _check_fixed_and_grid(d) -> tuple[dict, dict]:
    fixed = d.get("fixed", {})
    if not isinstance(fixed, dict):
        fail("fixed", fixed, "must be a table of parameter = value")
    for k, v in fixed.items():
        if not _scalar_ok(v):
            fail(f"fixed.{k}", v, "must be a number, string, boolean or a list of numbers/strings")
    if not isinstance(d.get("grid", {}), dict):
        fail("grid", d.get("grid"), "must be a table of parameter = [values]")
    grid = dict(d.get("grid", {}))
    for k, v in grid.items():
        if not isinstance(v, list) or not v:
            fail(f"grid.{k}", v, "must be a non-empty list of values")
        if not all(_scalar_ok(x) for x in v):
            fail(f"grid.{k}", v, "values must be numbers, strings, booleans or lists of numbers")
    return fixed, grid


def _check_seeds(s, grid: dict, fixed: dict) -> list:
    """``seeds = n`` (seeds 0…n−1) or a non-empty list of seeds, as the list of seeds."""
    if isinstance(s, list):
        if not s:
            fail("seeds", s, "must be a count n (seeds 0…n−1) or a non-empty list of integers")
        seeds = [_SEED("seeds", x) for x in s]
    else:
        seeds = list(range(Int(min=1, max=10**6)("seeds", s)))
    if "seed" in grid or "seed" in fixed:
        fail("seeds", s, "conflicts with a 'seed' parameter in [grid] or [fixed]; give the seeds once")
    return seeds


def _check_distribution(k: str, v) -> None:
    """One ``[random]`` parameter: ``{dist = [...]}``."""
    if not isinstance(v, dict) or len(v) != 1 or next(iter(v)) not in _DISTS:
        fail(f"random.{k}", v, f"must be {{dist = [...]}} with dist one of {sorted(_DISTS)}")
    ((dist, arg),) = v.items()
    where = f"random.{k}.{dist}"
    if not isinstance(arg, list) or not arg:
        fail(where, arg, "must be a non-empty list")
    if dist == "choice":
        return
    finite = all(isinstance(a, numbers.Real) and not isinstance(a, bool) and math.isfinite(a) for a in arg)
    if not (len(arg) == 2 and finite and arg[0] <= arg[1]):
        fail(where, arg, "must be [low, high] with finite low <= high")
    if dist == "log_uniform" and arg[0] <= 0:
        fail(where, arg, "bounds must be > 0")
    if dist == "int_uniform" and not all(float(a).is_integer() for a in arg):
        fail(where, arg, "bounds must be integers")


def _check_random(rnd, grid: dict, fixed: dict) -> dict:
    if not isinstance(rnd, dict):
        fail("random", rnd, "must be a table with n, seed and parameter = {distribution = [...]}")
    if not rnd:
        return {}
    rnd = dict(rnd, n=Int(min=1, max=10**7)("random.n", rnd.get("n")))
    if "seed" in rnd:
        rnd["seed"] = _SEED("random.seed", rnd["seed"])
    for k, v in rnd.items():
        if k in ("n", "seed"):
            continue
        _check_distribution(k, v)
        if k in grid or k in fixed:
            fail(f"random.{k}", v, "is also in [grid] or [fixed]; give each parameter once")
    return rnd


def _check_output(d, base: str | None, executor: str) -> tuple:
    """The dask scheduler address and the output folder (relative to ``base``, the spec file's folder)."""
    address = d.get("address")
    if address is not None and (not isinstance(address, str) or not address):
        fail("address", address, "must be a dask scheduler address such as 'tcp://host:8786'")
    if address is not None and executor != "dask":
        fail("address", address, "is only used with executor = 'dask'")
    output = d.get("output")
    if output is not None:
        if not isinstance(output, str) or not output:
            fail("output", output, "must be a folder path")
        if base is not None and not os.path.isabs(output):
            output = os.path.join(base, output)
    return address, output


def _check_spec_dict(d: dict, base: str | None) -> SweepSpec:
    target = _check_target(d)
    fixed, grid = _check_fixed_and_grid(d)
    if "seeds" in d:
        grid["seed"] = _check_seeds(d["seeds"], grid, fixed)
    rnd = _check_random(d.get("random", {}), grid, fixed)
    for k in grid:
        if k in fixed:
            fail(f"grid.{k}", grid[k], "is also in [fixed]; give each parameter once")
    scalars = {key: kind(key, d.get(key, default)) for key, (kind, default) in _SCALARS.items()}
    address, output = _check_output(d, base, scalars["executor"])
    spec = SweepSpec(target=target, fixed=dict(fixed), grid=grid, random=rnd, output=output, address=address, **scalars)
    n = math.prod(len(v) for v in grid.values()) * (rnd["n"] if rnd else 1)
    if n > 10**7:
        fail("grid", {k: len(v) for k, v in grid.items()}, f"gives {n} points; a sweep holds at most 10**7")
    # every parameter must be one the target takes (checked on one point per distinct key set)
    check_params(target, spec)
    return spec


@public(
    spec=Anything("a path to a TOML file, a dict, or a SweepSpec"),
    output=Anything("a folder path overriding the spec's output, or None"),
    legacy_positional=("output",),
)
def load_spec(spec, *, output=None):
    """Read and validate a sweep specification.

    Parameters
    ----------
    spec : str, os.PathLike, dict or SweepSpec
        A TOML file (see the module docstring), the same as a dict, or an already-loaded spec.
        Relative ``output`` paths in a file are relative to the file's folder.
    output : str or None
        Overrides the spec's ``output``.

    Returns
    -------
    SweepSpec

    Raises
    ------
    FCTheoryError
        A missing or unreadable file, TOML syntax errors, or a setting that breaks a rule
        (the message names the key, e.g. ``grid.lam`` or ``random.K.int_uniform``).
    """
    if isinstance(spec, SweepSpec):
        s = spec
    elif isinstance(spec, dict):
        s = _check_spec_dict(spec, None)
    elif isinstance(spec, (str, os.PathLike)):
        path = PathIn()("spec", spec)
        try:
            with open(path, "rb") as f:
                d = tomllib.load(f)
        except tomllib.TOMLDecodeError as exc:
            fail("spec", path, f"is not valid TOML ({exc})")
        except (OSError, UnicodeDecodeError) as exc:
            fail("spec", path, f"cannot be read ({type(exc).__name__}: {exc})")
        s = _check_spec_dict(d, os.path.dirname(os.path.abspath(path)))
    else:
        fail("spec", spec, "must be a path to a TOML file, a dict or a SweepSpec")
    if output is not None:
        s = replace(s, output=PathOut(dir=True)("output", output))
    return s
