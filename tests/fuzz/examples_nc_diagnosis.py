"""Valid, fast examples for fctheory.nc_diagnosis and fctheory.torch (the PyTorch training monitor).

Tiny feature sets (K = 3 classes, d = 4, four samples per class, a few well-separated class means).
The fctheory.torch examples are registered only where PyTorch imports: without it the harness does not
discover fctheory.torch either, and tests/fuzz/test_fuzz.py reports one skip for the package. The monitor
is fed NumPy arrays (which ``NCMonitor.update`` accepts like tensors), so that the harness' shape variants
and mutation checks apply to them. Files go into a fresh scratch folder per call
(:func:`harness.scratch_dir`: under pytest's ``tmp_path_factory`` when run by the tests).
"""

from __future__ import annotations

import functools
import os

import numpy as np

import fctheory as fc
from fctheory import nc_diagnosis as ncd

from .harness import scratch_dir, unavailable_packages

K, D, N_PER = 3, 4, 4
LAM_W, LAM_H = 5e-3, 1e-2
_RNG = np.random.default_rng(0)
Y = np.repeat(np.arange(K), N_PER)  # class-major labels, every class present
MEANS = 3.0 * _RNG.standard_normal((K, D))
H = MEANS[Y] + 0.3 * _RNG.standard_normal((K * N_PER, D))  # samples x features
W = _RNG.standard_normal((K, D))
B = _RNG.standard_normal(K)


def _tmp():
    return scratch_dir("nc-diagnosis-")


def _moments():
    """One-pass moments of H shifted per class by its first sample (what the monitor accumulates)."""
    shift = H[np.searchsorted(Y, np.arange(K))]
    dev = H - shift[Y]
    sums = np.stack([dev[Y == k].sum(axis=0) for k in range(K)])
    sq = np.array([np.sum(dev[Y == k] ** 2) for k in range(K)])
    return dict(counts=np.bincount(Y, minlength=K), sums=sums, scatter=dev.T @ dev, sq=sq, shift=shift)


@functools.lru_cache(maxsize=None)
def _statistics():
    return ncd.feature_statistics(H, Y, K=K)


def _diagnosis():
    return ncd.diagnose_features(H, Y, W, B, lam_W=LAM_W, lam_H=LAM_H, loss="ce")


EXAMPLES = {
    "fctheory.diagnose_features": lambda: dict(
        H=H, y=Y, W=W, b=B, lam_W=LAM_W, lam_H=LAM_H, lam_b=0.0, loss="ce", rtol=0.1
    ),
    "fctheory.nc_diagnosis.applicable_result": lambda: dict(
        loss="mse", K=K, d=D, counts=np.full(K, N_PER), lam_W=LAM_W, lam_H=LAM_H, lam_b=0.0, bias=True
    ),
    "fctheory.nc_diagnosis.feature_statistics": lambda: dict(H=H, y=Y, K=K),
    "fctheory.nc_diagnosis.statistics_from_moments": _moments,
    "fctheory.nc_diagnosis.nc_metrics": lambda: dict(st=_statistics(), W=W),
    "fctheory.nc_diagnosis.ufm_optimum": lambda: dict(loss="ce", K=K, n_spl=N_PER, lam_W=LAM_W, lam_H=LAM_H, bias=True),
    "fctheory.nc_diagnosis.ufm_distances": lambda: dict(
        st=_statistics(),
        W=W,
        b=B,
        opt=fc.ufm.ce(K=K, n_spl=N_PER, lam_W=LAM_W, lam_H=LAM_H, bias=True),
        n_spl=N_PER,
    ),
    # methods of the result: (instance, kwargs); the figures take a fraction of a second (matplotlib)
    "fctheory.FeatureDiagnosis.plot": lambda: (_diagnosis(), dict(out=os.path.join(_tmp(), "fig"))),
    "fctheory.FeatureDiagnosis.report": lambda: (_diagnosis(), dict(out=os.path.join(_tmp(), "rep"))),
}

SKIP = {}

# NaN where a quantity is undefined (nc_metrics: "Undefined values are NaN"), inf where the observation is
# divided by the trivial optimum's zero norms
_UNDEFINED_W = "NaN by design: undefined for W = 0 (no classifier direction)"
_TRIVIAL = "inf by design: an observed norm > 0 against the trivial optimum W = H = 0 (lam_W·lam_H large)"
ALLOW_NONFINITE = {
    "fctheory.diagnose_features": {
        "metrics": "NaN by design where a metric is undefined (all class means equal, W = 0): see nc_metrics",
        "checks.NC1 (tr Σ_W/tr Σ_B)": "NaN with NC1 when all class means coincide (tr Σ_B = 0)",
        "distances.h_over_w": _UNDEFINED_W,
        "distances.H_norm_sq_ratio": _TRIVIAL,
        "distances.W_norm_sq_ratio": _TRIVIAL,
    },
    "fctheory.nc_diagnosis.nc_metrics": {k: _UNDEFINED_W for k in ("nc2_W", "equinorm_W", "mean_cos_W", "nc3")},
    "fctheory.nc_diagnosis.ufm_distances": {"h_over_w": _UNDEFINED_W},
}


# ------------------------------------------------------------------------------------ fctheory.torch
def _torch():
    import torch  # noqa: PLC0415 - optional dependency: only where PyTorch is installed

    return torch


def _classifier():
    torch = _torch()
    torch.manual_seed(0)
    return torch.nn.Linear(D, K)


def _monitor(epochs=0):
    """A monitor with a classifier after ``epochs`` ended epochs (the second has a finite NC4: it compares
    with the first epoch's class means)."""
    mon = fc.torch.NCMonitor(K, lam_W=LAM_W, lam_H=LAM_H, classifier=_classifier(), progress=False)
    for e in range(epochs):
        mon.update(H + 0.01 * e, Y)
        mon.end_epoch(loss=1.0 / (e + 1))
    return mon


def _plotted_monitor():
    """Two epochs whose rows keep only the NC1 columns: the figure has one panel, drawn in about half a
    second where the full grid takes two on a loaded machine (tests/torch/test_monitor.py draws the full one)."""
    mon = _monitor(2)
    mon.rows = [{k: row[k] for k in ("epoch", "nc1", "nc1_trace_ratio")} for row in mon.rows]
    return mon


def _classes_monitor():
    """Two epochs whose per-class values keep only one plotted column (var_rel): the per-class figure has one
    panel (tests/torch/test_plots.py draws the full one)."""
    mon = _monitor(2)
    keep = ("class", "count", "frequency", "var_rel")
    mon._class_rows = [(e, {k: cols[k] for k in keep}) for e, cols in mon._class_columns()]
    return mon


def _fed_monitor():
    """Two ended epochs and a third one holding a batch, ready for ``end_epoch``."""
    mon = _monitor(2)
    mon.update(H, Y)
    return mon


def _shifted_moments():
    """The moments of H about its first samples as tensors, with new shifts (the class means)."""
    torch = _torch()
    m = _moments()
    new = np.stack([H[Y == k].mean(axis=0) for k in range(K)])
    t = {k: torch.as_tensor(v) for k, v in m.items()}
    return dict(**t, new_shift=torch.as_tensor(new))


TORCH_EXAMPLES = {
    "fctheory.torch.rebase_moments": _shifted_moments,
    "fctheory.torch.sync_active": lambda: dict(sync=None, group=None),
    "fctheory.torch.NCMonitor": lambda: dict(
        num_classes=K,
        lam_W=LAM_W,
        lam_H=LAM_H,
        loss="ce",
        classifier=_classifier(),
        bias=True,
        lam_b=0.0,
        total_epochs=3,
        progress=False,
        sync=None,
        process_group=None,
        per_class=True,
    ),
    "fctheory.torch.NCMonitor.update": lambda: (_monitor(1), dict(features=H, labels=Y)),
    "fctheory.torch.NCMonitor.attach": lambda: (_monitor(), dict(module=_torch().nn.Identity())),
    "fctheory.torch.NCMonitor.batch": lambda: (_monitor(), dict(labels=Y)),
    "fctheory.torch.NCMonitor.begin_epoch": lambda: (_monitor(), {}),
    "fctheory.torch.NCMonitor.end_epoch": lambda: (_fed_monitor(), {}),
    "fctheory.torch.NCMonitor.detach": lambda: (_monitor().attach(_torch().nn.Identity()), {}),
    "fctheory.torch.NCMonitor.close": lambda: (_monitor(), {}),
    "fctheory.torch.NCMonitor.table": lambda: (_monitor(2), {}),
    "fctheory.torch.NCMonitor.save": lambda: (_monitor(2), dict(path=os.path.join(_tmp(), "history.parquet"))),
    "fctheory.torch.NCMonitor.plot": lambda: (_plotted_monitor(), dict(path=os.path.join(_tmp(), "history.png"))),
    "fctheory.torch.NCMonitor.class_table": lambda: (_monitor(2), {}),
    "fctheory.torch.NCMonitor.save_classes": lambda: (
        _monitor(2),
        dict(path=os.path.join(_tmp(), "classes.parquet")),
    ),
    "fctheory.torch.NCMonitor.plot_classes": lambda: (
        _classes_monitor(),
        dict(path=os.path.join(_tmp(), "classes.png"), epochs=None),
    ),
    "fctheory.torch.plot_classes": lambda: dict(
        df=_classes_monitor().class_table(), path=os.path.join(_tmp(), "classes.png"), epochs=[0, 1], title="tiny"
    ),
    "fctheory.torch.plot_history": lambda: dict(
        df=_plotted_monitor().table(), path=os.path.join(_tmp(), "history.png"), title="tiny"
    ),
}

TORCH_SKIP = {
    "fctheory.torch.all_reduce_moments": "collective calls: needs an initialised torch.distributed process group "
    "(which would change every later monitor of the process); tests/torch/test_distributed.py runs it in two "
    "processes",
    "fctheory.torch.NCMonitor.epoch": "a context manager whose block must feed a batch before it exits (the "
    "harness enters it with an empty block, which end_epoch rightly refuses); tests/torch/test_monitor.py "
    "runs it with batches",
}

# the methods that return the monitor itself: its first epoch's row has NC4 = NaN by design (NC4 compares the
# classifier with the previous epoch's class means; NCMonitor's docstring)
_FIRST_EPOCH_NC4 = {"rows.nc4": "NaN in the first epoch by design: no previous epoch's class means to compare with"}
TORCH_ALLOW_NONFINITE = {
    f"fctheory.torch.NCMonitor.{m}": _FIRST_EPOCH_NC4 for m in ("update", "attach", "batch", "begin_epoch")
}

if "fctheory.torch" not in unavailable_packages():  # the harness discovers fctheory.torch exactly then
    EXAMPLES.update(TORCH_EXAMPLES)
    SKIP.update(TORCH_SKIP)
    ALLOW_NONFINITE.update(TORCH_ALLOW_NONFINITE)
