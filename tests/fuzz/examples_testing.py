"""Valid fast examples for fctheory.testing: strategies and assertion helpers.

Keys are public dotted paths; values build keyword arguments. Strategies only build a Hypothesis
strategy (nothing is drawn), so they are instant; the assertion helpers run on tiny exact optima.
"""

import numpy as np

import fctheory as fc


def _task(mu="uniform"):
    return fc.Task.full(n_c=2, s_c=2, L=2, mu=mu)


def _optimum(kind, mu="uniform"):
    task = _task(mu)
    W, U = getattr(fc, f"{kind}_configuration")(task, d=3, lam=0.05, seed=0)
    return dict(task=task, W=W, U=U, lam=0.05)


def _square(x):
    return float(np.sum(x * x))


def _square_grad(x):
    return 2 * x


def _normalised_sum(M):
    return float(np.sum(M) / np.sum(np.abs(M)))


EXAMPLES = {
    # ---- strategies (return a SearchStrategy; validated eagerly)
    "fctheory.testing.tasks": lambda: dict(full=True, n_c=2, L=2, max_K=8),
    "fctheory.testing.word_distributions": lambda: dict(s_c=3),
    "fctheory.testing.predictor_params": lambda: dict(name="tau", domain="precision"),
    "fctheory.testing.weights": lambda: dict(task=_task(), d=3),
    "fctheory.testing.configurations": lambda: dict(task=_task(), d=2, kind="type1"),
    "fctheory.testing.labels_and_features": lambda: dict(K=3, d=2),
    # ---- assertion helpers
    "fctheory.testing.assert_type1_optimal": lambda: _optimum("type1"),
    "fctheory.testing.assert_type2_optimal": lambda: _optimum("type2"),
    "fctheory.testing.assert_type3_optimal": lambda: _optimum("type3", mu="zipf"),
    "fctheory.testing.assert_critical_point": lambda: _optimum("type1"),
    "fctheory.testing.check_gradient": lambda: dict(f=_square, x=np.array([1.0, -2.0, 0.5]), grad=_square_grad),
    "fctheory.testing.assert_close_mp": lambda: dict(value=0.1, reference="0.1", digits=15),
    "fctheory.testing.assert_scale_invariant": lambda: dict(
        metric=_normalised_sum, M=np.array([[1.0, 2.0], [3.0, 4.0]])
    ),
}
