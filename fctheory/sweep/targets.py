"""What a sweep point runs: targets resolved by name at run time, their parameters and outputs.

* Any predictor or function of fctheory by name (``"tau"``, ``"predict_type1"``, ``"solve_type3"``,
  ``"ufm.ce"``, …) or any importable ``"package.module:function"``: the point's parameters are
  passed by name. Conveniences: ``n_w`` defaults to n_c·s_c, ``K`` to n_c^L (the full task),
  ``mu`` is built from ``s_c`` and ``zipf`` (exponent a: μ_β ∝ β^−a), a ``task`` argument is built
  from the task parameters, ``W``/``U`` from a weights recipe, and a ``seed`` argument the point
  does not set is derived from the point's id (so it is the same whoever runs the point).
* ``train`` (:func:`fctheory.train`; ``lam`` sets λ_W = λ_U): the measurements of the trained run;
  compatible points are trained as one batch (:func:`fctheory.trainer.batched.train_batched`).
* ``true_risk`` (the exact risk of a weights recipe), ``minimize_true_risk``, ``diagnose``
  (:func:`fctheory.diagnose` when it exists).
* ``theory``: the applicable theorem and its prediction (:func:`fctheory.predictions.applicable_theorem`,
  the dispatcher ``train`` and ``diagnose`` report from; ``lam`` sets λ_W = λ_U, ``d`` defaults to 4).

Task parameters: ``n_c``, ``s_c``, ``L``, ``K`` (default n_c^L: ``Task.full``; otherwise
``Task.random`` drawn from ``task_seed``, default 0), ``mu`` (``"uniform"``, ``"zipf"`` or a list),
``zipf`` (exponent). Weights recipe (``weights``): ``"random"`` (N(0,1)·``scale``, from the seed),
``"type1"``/``"type2"``/``"type3"`` (the collapse configuration at ``lam``), ``"minimize"`` (the
exact-risk minimizer from the seed), ``"train"`` (SGD with the ``train`` parameters).
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import numbers

import numpy as np

from .._validate import check_mu, fail
from ..configurations import type1_configuration, type2_configuration, type3_configuration
from ..diagnosis import diagnose
from ..io import task_from_sizes
from ..predictions import applicable_theorem
from ..risk import evaluate_risk
from ..risk.minimize import minimize_true_risk
from ..trainer.batched import BATCH_AXES, train_batched
from ..trainer.core import train

__all__ = [
    "TARGETS",
    "resolve_target",
    "check_params",
    "run_point",
    "run_train_batch",
    "train_batch_key",
    "TASK_PARAMS",
]

TASK_PARAMS = ("n_c", "s_c", "L", "K", "mu", "zipf", "task_seed")
_WEIGHT_RECIPES = ("random", "type1", "type2", "type3", "minimize", "train")
_TRAIN_EXCLUDED = (
    "task",
    "checkpoint",
    "checkpoint_every",
    "resume",
    "progress",
    "callback",
    "measure",
    "measure_every",
    "keep_data",
)
_MAX_LIST = 256  # longer arrays in an output are left out of the table

# registered names that are not plain fctheory attributes
_SPECIAL = {
    "train": train,
    "true_risk": evaluate_risk,
    "minimize_true_risk": minimize_true_risk,
    "diagnose": diagnose,
    "theory": applicable_theorem,
}
_CONFIGURATIONS = {"type1": type1_configuration, "type2": type2_configuration, "type3": type3_configuration}


def _import(path: str):
    mod, _, attr = path.partition(":")
    obj = importlib.import_module(mod)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def resolve_target(name: str):
    """The callable behind a target name (raises FCTheoryError naming ``target`` if unknown)."""
    try:
        if name in _SPECIAL:
            return _SPECIAL[name]
        if ":" in name:
            fn = _import(name)
        else:
            fn = _import("fctheory:" + name)
    except (ImportError, AttributeError, ValueError) as exc:
        fail(
            "target",
            name,
            f"cannot be resolved ({type(exc).__name__}: {exc}); use a name such as 'tau', "
            "'train', 'true_risk' or 'package.module:function'",
        )
    if not callable(fn):
        fail("target", name, "does not name a function")
    return fn


def _sig(fn):
    return inspect.signature(fn).parameters


def accepted_params(target: str) -> set:
    """Parameter names a point of ``target`` may set."""
    fn = resolve_target(target)
    if target == "train":
        names = {n for n in _sig(fn) if n not in _TRAIN_EXCLUDED}
        return names | set(TASK_PARAMS) | {"lam"}
    if target in ("true_risk", "diagnose"):
        base = {n for n in _sig(fn) if n not in ("task", "W", "U", "progress", "grad")}
        return base | set(TASK_PARAMS) | _weights_params() | {"lam"}
    names = set(_sig(fn))
    out = {n for n in names if n not in ("task", "W", "U", "callback", "progress", "W0", "U0")}
    out |= set(_renamed(fn))  # the 0.x names (ufm: n, m) are still accepted
    if "task" in names or "mu" in names:
        out |= set(TASK_PARAMS)
    if "n_w" in names:
        out |= {"s_c"}
    if "W" in names and "U" in names:
        out |= _weights_params()
    return out


def _weights_params() -> set:
    return {"weights", "d", "scale", "seed", "lam", "layernorm", "eps"} | {
        n for n in _sig(train) if n not in _TRAIN_EXCLUDED
    }


def check_params(target: str, spec) -> None:
    """Refuse (naming ``fixed.x`` / ``grid.x`` / ``random.x``) a parameter the target does not take,
    and values that the target's declared parameter kinds refuse."""
    ok = accepted_params(target)
    fn = resolve_target(target)
    kinds = getattr(fn, "__fc_params__", {}) or {}
    for section, names in (("fixed", spec.fixed), ("grid", spec.grid), ("random", spec.random)):
        for k in names:
            if section == "random" and k in ("n", "seed"):
                continue
            if k not in ok:
                fail(f"{section}.{k}", names[k], f"is not a parameter of target {target!r}; it takes {sorted(ok)}")
            kind = kinds.get(_renamed(fn).get(k, k))
            if kind is None or section == "random":
                continue
            values = [names[k]] if section == "fixed" else names[k]
            for v in values:
                try:
                    kind(k, v)
                except Exception as exc:  # noqa: BLE001 - report it under the spec's key
                    fail(f"{section}.{k}", v, str(exc).split(" is invalid: ", 1)[-1])


# --------------------------------------------------------------------------------- builders
def derived_seed(pid: str) -> int:
    """The seed of a point that does not set one: from its id, so it does not depend on scheduling."""
    return int(pid[:15], 16)


def _mu(p: dict):
    s_c = p.get("s_c")
    if "zipf" in p and p["zipf"] is not None:
        if s_c is None:
            fail("zipf", p["zipf"], "needs s_c (words per concept)")
        a = float(p["zipf"])
        w = np.arange(1, int(s_c) + 1, dtype=np.float64) ** (-a)
        return w / w.sum()
    mu = p.get("mu", "uniform")
    if isinstance(mu, list):
        return np.asarray(mu, dtype=np.float64)
    return mu


def build_task(p: dict):
    """The Task of a point from n_c, s_c, L, K, mu / zipf, task_seed (K < n_c^L: Z drawn from task_seed)."""
    for k in ("n_c", "s_c", "L"):
        if k not in p:
            fail(k, None, "is required (task parameters n_c, s_c, L; optional K, mu, zipf, task_seed)")
    ts = p.get("task_seed")
    seed = np.random.default_rng([0 if ts is None else int(ts), 0])
    return task_from_sizes(p["n_c"], p["s_c"], p["L"], K=p.get("K"), mu=_mu(p), seed=seed)


def _renamed(fn) -> dict:
    """0.x parameter names of ``fn`` → 1.0 names (CHANGELOG.md); specs written before 1.0 keep working."""
    return getattr(fn, "__fc_renamed__", None) or {}


def _call(fn, p: dict, skip=()):
    """Call ``fn`` with the parameters of ``p`` it takes (0.x names translated, without a warning)."""
    sig = _sig(fn)
    old = _renamed(fn)
    q = {old.get(k, k): v for k, v in p.items() if not (k in old and old[k] in p)}
    return fn(**{k: v for k, v in q.items() if k in sig and k not in skip})


def _train_kwargs(p: dict) -> dict:
    q = dict(p)
    if "lam" in q:
        lam = q.pop("lam")
        q.setdefault("lam_W", lam)
        q.setdefault("lam_U", lam)
    sig = _sig(train)
    return {k: v for k, v in q.items() if k in sig and k not in _TRAIN_EXCLUDED}


def build_weights(task, p: dict):
    """(W, U) of a point's weights recipe."""
    recipe = p.get("weights", "random")
    if isinstance(recipe, bool) or recipe not in _WEIGHT_RECIPES:
        fail("weights", recipe, f"must be one of {list(_WEIGHT_RECIPES)}")
    d = p.get("d", 4)
    lam = p.get("lam", p.get("lam_U", 1e-3))
    seed = p["seed"]
    if recipe == "random":
        rng = np.random.default_rng([seed, 7])
        scale = float(p.get("scale", 1.0))
        return rng.standard_normal((d, task.n_w)) * scale, rng.standard_normal((task.K, task.L * d)) * scale
    if recipe in ("type1", "type2", "type3"):
        return _CONFIGURATIONS[recipe](task, d=d, lam=lam, seed=seed)
    if recipe == "minimize":
        W, U, _ = minimize_true_risk(
            task, d=d, lam=lam, layernorm=bool(p.get("layernorm", False)), seed=seed, eps=float(p.get("eps", 0.0))
        )
        return W, U
    kw = _train_kwargs(p)
    run = train(task, measure=False, **kw)
    return np.asarray(run.W, np.float64), np.asarray(run.U, np.float64)


# --------------------------------------------------------------------------------- outputs
def flatten(obj, prefix: str = "") -> dict:
    """A result as flat table columns: scalars, short numeric lists; nested dicts joined by '.'."""
    if prefix == "" and (obj is None or isinstance(obj, (numbers.Number, str, np.generic))):
        return {"value": _scalar(obj)}
    if hasattr(obj, "to_dict") and callable(obj.to_dict):
        obj = obj.to_dict()
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        obj = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    if isinstance(obj, (np.ndarray, list, tuple)) and prefix == "":
        obj = {"value": obj}
    out = {}
    if not isinstance(obj, dict):
        return {prefix.rstrip(".") or "value": _scalar(obj)}
    for k, v in obj.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) or (hasattr(v, "to_dict") and not isinstance(v, np.ndarray)):
            out.update(flatten(v, key + "."))
        elif isinstance(v, (np.ndarray, list, tuple)):
            arr = np.asarray(v, dtype=object) if not isinstance(v, np.ndarray) else v
            if arr.size == 0:
                out[key] = []
            elif arr.size <= _MAX_LIST and arr.ndim <= 1:
                try:
                    out[key] = [float(x) for x in arr.ravel()]
                except (TypeError, ValueError):
                    out[key] = [str(x) for x in arr.ravel()]
            elif arr.size == 1:
                out[key] = _scalar(arr.ravel()[0])
        elif v is None or isinstance(v, (numbers.Number, str, np.generic)):
            out[key] = _scalar(v)
    return out


def _scalar(v):
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, numbers.Integral) and not isinstance(v, bool):
        return int(v) if abs(v) < 2**63 else float(v)
    if isinstance(v, numbers.Real) and not isinstance(v, bool):
        return float(v)
    return v


def _train_outputs(run) -> dict:
    out = {
        "epochs_done": run.epochs_done,
        "final_loss": float(run.history["loss"][-1]) if run.epochs_done else float("nan"),
        "final_train_acc": float(run.history["train_acc"][-1]) if run.epochs_done else float("nan"),
        "final_test_acc": run.final_test_acc,
    }
    if run.measurements is not None:
        m = flatten(run.measurements)
        out.update(m)
        dist = [v for k, v in m.items() if k.startswith("distances.") and isinstance(v, float)]
        # distance to collapse: the nearest configuration the theory allows for this network
        out["collapse_distance"] = min(dist) if dist else float("nan")
    return out


# --------------------------------------------------------------------------------- running
def _decays(p: dict) -> dict:
    """The point with ``lam_W``/``lam_U``: ``lam`` sets both (as for ``train``), 0 when neither is given."""
    q = dict(p)
    if "lam" in q:
        q.setdefault("lam_W", q["lam"])
        q.setdefault("lam_U", q["lam"])
    q.setdefault("lam_W", 0.0)
    q.setdefault("lam_U", 0.0)
    return q


def run_point(target: str, p: dict) -> dict:
    """Run one point; returns its outputs (raises what the target raises)."""
    fn = resolve_target(target)
    if target == "train":
        task = build_task(p)
        return _train_outputs(fn(task, **_train_kwargs(p)))
    if target == "true_risk":
        task = build_task(p)
        W, U = build_weights(task, p)
        q = {k: v for k, v in p.items() if k not in ("W", "U", "task")}
        q.setdefault("lam", 0.0)
        r = _call(fn, {**q, "task": task, "W": W, "U": U})
        return {"R": r.R, "R0": r.R0, "penalty": r.penalty, "n_fallback": r.n_fallback, "pairs": float(r.pairs)}
    if target == "minimize_true_risk":
        task = build_task(p)
        W, U, res = _call(fn, {**p, "task": task})
        out = {k: v for k, v in flatten(res).items() if k != "history"}
        out["norm_W"] = float(np.linalg.norm(W))
        out["norm_U"] = float(np.linalg.norm(U))
        return out
    if target == "diagnose":
        task = build_task(p)
        W, U = build_weights(task, p)
        q = _decays(p)
        return flatten(_call(fn, {**{k: v for k, v in q.items() if k not in ("d",)}, "task": task, "W": W, "U": U}))
    if target == "theory":
        q = _decays(p)
        q.setdefault("d", 4)
        return flatten(_call(fn, {**q, "task": build_task(p)}))
    # generic function
    sig = _sig(fn)
    q = dict(p)
    if "n_w" in sig and "n_w" not in q and "n_c" in q and "s_c" in q:
        q["n_w"] = q["n_c"] * q["s_c"]
    if "K" in sig and "K" not in q and "n_c" in q and "L" in q and "task" not in sig:
        q["K"] = q["n_c"] ** q["L"]
    if "mu" in sig and ("zipf" in q or isinstance(q.get("mu"), str) or "mu" not in q) and "s_c" in q:
        q["mu"] = _mu(q)
        if isinstance(q["mu"], str):
            q["mu"] = check_mu(q["mu"], int(q["s_c"]))
    if "task" in sig:
        q["task"] = build_task(p)
    if "W" in sig and "U" in sig:
        q["W"], q["U"] = build_weights(q["task"] if "task" in q else build_task(p), p)
    return flatten(_call(fn, q))


def train_batch_key(p: dict) -> tuple:
    """Points of ``train`` with equal keys can share one batched run."""
    kw = _train_kwargs(p)
    task_part = tuple(sorted((k, repr(p.get(k))) for k in TASK_PARAMS))
    return task_part + tuple(sorted((k, repr(v)) for k, v in kw.items() if k not in BATCH_AXES))


def run_train_batch(ps: list) -> list:
    """Train the points ``ps`` (equal :func:`train_batch_key`) as one batch; outputs or exceptions per point."""
    task = build_task(ps[0])
    kws = [_train_kwargs(p) for p in ps]
    shared = {k: v for k, v in kws[0].items() if k not in BATCH_AXES}
    per = {}
    for ax in BATCH_AXES:
        vals = [kw.get(ax) for kw in kws]
        if all(v is None for v in vals):
            continue
        if any(v is None for v in vals):  # default for the points that do not set it
            default = _sig(train)[ax].default
            vals = [default if v is None else v for v in vals]
        per[ax] = vals
    runs = train_batched(task, errors="return", **shared, **per)
    return [r if isinstance(r, Exception) else _train_outputs(r) for r in runs]


def seed_needed(target: str) -> bool:
    """Whether the target's function takes a ``seed`` a point may leave to the sweep."""
    if target in ("true_risk", "diagnose"):
        return True
    try:
        return "seed" in _sig(resolve_target(target))
    except Exception:  # noqa: BLE001
        return False


TARGETS = {
    "train": "fctheory.train: SGD on h / h* (lam sets lam_W = lam_U); measurements per run; batched",
    "true_risk": "fctheory.evaluate_risk on a weights recipe: R, R0, penalty",
    "minimize_true_risk": "fctheory.minimize_true_risk: R, R0, grad_norm, nit, ‖W‖, ‖U‖",
    "diagnose": "fctheory.diagnose on a weights recipe (default: random; weights='train' trains first)",
    "theory": "fctheory.predictions.applicable_theorem: the theorem and its prediction (lam sets lam_W = lam_U)",
    "tau": "fctheory.tau (n_w defaults to n_c·s_c, K to n_c^L)",
    "tau_star": "fctheory.tau_star",
    "lambda_trivial": "fctheory.lambda_trivial",
    "predict_type1": "fctheory.predict_type1 (all fields)",
    "predict_type2": "fctheory.predict_type2",
    "predict_type3": "fctheory.predict_type3 (mu from s_c and zipf)",
    "solve_type3": "fctheory.solve_type3 (mu from s_c and zipf)",
    "lambda_max_type3": "fctheory.lambda_max_type3",
    "<module>:<function>": "any importable function; parameters passed by name",
}
