"""What the training-framework callbacks share (:mod:`fctheory.torch.lightning`, :mod:`fctheory.torch.hf`):
finding the named modules, reading λ_W from an optimizer, the logged numbers of a row, the files written when
training ends. Imports neither framework."""

from __future__ import annotations

import os

import torch

from .._validate import fail

__all__ = ["check_names", "logged_numbers", "submodule", "weight_decay", "write_outputs"]


def check_names(**names) -> None:
    """Each given name (a submodule's dotted name, a metric prefix) is None or a str; refused naming it."""
    for name, value in names.items():
        if value is not None and not isinstance(value, str):
            fail(name, value, "must be a str")


def submodule(model, name, what):
    """``model``'s submodule at the dotted ``name``; refused naming the parameter ``what`` if there is none."""
    try:
        return model.get_submodule(name)
    except AttributeError:
        fail(what, name, f"must name a submodule of the {type(model).__name__} (see named_modules())")


def weight_decay(optimizers, weight) -> float:
    """The weight decay the ``optimizers`` apply to ``weight`` (the UFM's λ_W for an L2-coupled decay).

    A wrapped optimizer (``accelerate``'s, which holds the real one as ``.optimizer``) is judged by the one it
    wraps; AdamW (a decoupled decay) and a zero decay are refused naming ``lam_W``.
    """
    for opt in optimizers:
        inner = opt
        while isinstance(getattr(inner, "optimizer", None), torch.optim.Optimizer):
            inner = inner.optimizer
        for group in opt.param_groups:
            if any(p is weight for p in group["params"]):
                if isinstance(inner, torch.optim.AdamW):
                    fail(
                        "lam_W",
                        None,
                        "cannot be read from AdamW, whose decoupled weight decay is no (λ_W/2)‖W‖² loss term: "
                        "pass lam_W",
                    )
                decay = float(group.get("weight_decay", 0.0))
                if not decay > 0.0:
                    fail("lam_W", None, f"cannot be read: the optimizer's weight decay of the classifier is {decay}")
                return decay
    fail("lam_W", None, "cannot be read: no optimizer holds the classifier's weight (pass lam_W)")


def logged_numbers(row, prefix) -> dict:
    """The numbers of a monitor row, keyed ``prefix + column`` (the epoch counters and flags left out)."""
    return {
        prefix + k: float(v)
        for k, v in row.items()
        if k not in ("epoch", "trainer_epoch") and isinstance(v, (int, float)) and not isinstance(v, bool)
    }


def write_outputs(monitor, out, figure) -> None:
    """``nc_history.parquet`` and (``figure``) ``nc_history.png`` of the monitor in the folder ``out``, and its
    per-class values ``nc_classes.parquet`` and ``nc_classes.png`` (against class frequency) when it has them."""
    if out is None or monitor is None or not monitor.rows:
        return
    os.makedirs(out, exist_ok=True)
    monitor.save(os.path.join(out, "nc_history.parquet"))
    if figure:
        monitor.plot(os.path.join(out, "nc_history.png"))
    if monitor.per_class and not monitor.class_table().empty:
        monitor.save_classes(os.path.join(out, "nc_classes.parquet"))
        if figure:
            monitor.plot_classes(os.path.join(out, "nc_classes.png"))
