"""Valid fast examples for the sweep area: fctheory.sweep and batched training."""

import numpy as np

import fctheory as fc


def _tiny_spec():
    return {"target": "lambda_trivial", "workers": 1, "fixed": {"n_c": 3, "s_c": 2, "L": 2}, "grid": {"K": [2, 4]}}


EXAMPLES = {
    "fctheory.sweep": lambda: dict(spec=_tiny_spec(), progress=False),
    "fctheory.train_batched": lambda: dict(
        task=fc.Task.full(2, 2, 2),
        n_spl=2,
        d=2,
        seed=[0, 1],
        lr=[0.1, 0.2],
        epochs=1,
        batch=3,
        backend="numpy",
        measure=False,
        n_test=1,
    ),
}

ALLOW_NONFINITE = {
    # a run's history has NaN test accuracy/loss at epochs without evaluation (documented, as fctheory.train)
    "fctheory.train_batched": {
        "history": "NaN test_acc/test_loss at epochs not evaluated (documented)",
        "measurements": "documented NaN sentinels of Measurements",
    },
}

# Public callables of the sweep area that discovery does not reach today: ``fctheory.sweep`` is the
# function (it shadows the package attribute, as ``fctheory.train`` would), and
# ``fctheory.risk.distributed`` is not exported from ``fctheory.risk``. Their examples, ready to move into
# EXAMPLES once they are exported (keys as they would then be):
UNDISCOVERED = {
    "fctheory.sweep.load_spec": lambda: dict(spec=_tiny_spec()),
    "fctheory.sweep.plot": lambda: dict(
        table=fc.sweep(_tiny_spec(), progress=False), path="/tmp/fc-fuzz-plot.png", kind="line", y="value"
    ),
    "fctheory.risk.distributed.true_risk_distributed": lambda: dict(
        task=fc.Task.full(2, 2, 2), W=np.ones((2, 4)) * 0.3, U=np.ones((4, 4)) * 0.2, lam=0.01, blocks=2
    ),
    "fctheory.risk.distributed.plan_distributed": lambda: dict(task=fc.Task.full(2, 2, 2), d=2, workers=2),
    "fctheory.risk.distributed.class_blocks": lambda: dict(task=fc.Task.full(2, 2, 2), blocks=2),
}
