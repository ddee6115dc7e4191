"""Valid fast examples for fctheory.finite_sample."""

import numpy as np

import fctheory as fc


def _task():
    return fc.Task.full(3, 2, 2)


def _data():
    return _task().sample(2, seed=0)


def _w():
    rng = np.random.default_rng(0)
    return rng.standard_normal((2, 6)), rng.standard_normal((9, 4))


EXAMPLES = {
    "fctheory.finite_sample.word_counts": lambda: dict(task=_task(), X=_data()[0]),
    "fctheory.finite_sample.norms": lambda: dict(task=_task(), W=_w()[0], U=_w()[1]),
    "fctheory.finite_sample.empirical_risk_grad": lambda: dict(
        task=_task(), W=_w()[0], U=_w()[1], X=_data()[0], y=_data()[1], lam=0.01
    ),
    "fctheory.finite_sample.minimize_empirical_risk": lambda: dict(
        task=_task(), X=_data()[0], y=_data()[1], d=2, lam=0.01, seed=0, maxiter=50
    ),
    "fctheory.finite_sample.predict_plugin": lambda: dict(task=_task(), X=_data()[0], lam=0.01),
    "fctheory.finite_sample.predict_perturbation": lambda: dict(task=_task(), X=_data()[0], y=_data()[1], lam=0.01),
    "fctheory.finite_sample.predict_reduced": lambda: dict(
        task=_task(), X=_data()[0], y=_data()[1], lam=0.01, maxiter=50
    ),
    "fctheory.finite_sample.predict_on_optimum": lambda: dict(
        task=_task(), X=_data()[0], y=_data()[1], lam=0.01, gtol=1e-9, maxiter=50
    ),
    "fctheory.finite_sample.predict_training_optimum": lambda: dict(
        task=_task(), X=_data()[0], y=_data()[1], lam=0.05, d=None, tol=1e-6, max_seconds=60.0
    ),
    "fctheory.finite_sample.perturbation_full": lambda: dict(
        task=_task(),
        X=_data()[0],
        y=_data()[1],
        lam=0.01,
        W=fc.type1_configuration(_task(), d=2, lam=0.01)[0],
        U=fc.type1_configuration(_task(), d=2, lam=0.01)[1],
        maxiter=20,
    ),
}
SKIP = {}
