"""Valid fast examples for every public callable of the analytic core (the fuzz suite).

Keys are public dotted paths; values build keyword arguments (functions, constructors) or
``(instance, kwargs)`` (methods). Each call takes well under 0.2 s. The fuzz suite replaces one
argument at a time with a bad value of its declared kind.
"""

import numpy as np

import fctheory as fc


def _task():
    return fc.Task.full(3, 2, 2)


def _zipf_task():
    return fc.Task.full(3, 3, 2, mu="zipf")


def _pred1():
    return fc.predict_type1(n_c=3, n_w=6, L=2, K=9, lam=0.01)


def _config1():
    return fc.type1_configuration(_task(), d=4, c=0.5)


EXAMPLES = {
    # ---- task model (section 2)
    "fctheory.Task": lambda: dict(n_c=3, s_c=2, L=2, Z=np.array([[0, 1], [2, 0], [1, 1]]), mu=np.array([0.75, 0.25])),
    "fctheory.Task.full": lambda: dict(n_c=2, s_c=2, L=2, mu="uniform"),
    "fctheory.Task.random": lambda: dict(n_c=3, s_c=2, L=3, K=5, mu="zipf", seed=0),
    "fctheory.Task.sample": lambda: (_task(), dict(n_spl=3, seed=0)),
    "fctheory.Task.word_index": lambda: (_task(), dict(alpha=np.array([0, 2]), beta=1)),
    "fctheory.Task.hamming": lambda: (_task(), dict()),
    "fctheory.Task.S_r_counts": lambda: (_task(), dict()),
    # ---- frames and the network
    "fctheory.equiangular_frame": lambda: dict(n_c=3, d=4, mean_zero=True, seed=1),
    "fctheory.equiangular_gram": lambda: dict(n_c=4),
    "fctheory.is_equiangular": lambda: dict(F=fc.equiangular_frame(3, 3), mean_zero=False, atol=1e-12),
    "fctheory.phi": lambda: dict(W=np.arange(12.0).reshape(3, 4) ** 2, eps=1e-5),
    "fctheory.scores": lambda: dict(
        W=_config1()[0], U=_config1()[1], X=np.array([[0, 5], [3, 2]]), layernorm=False, eps=0.0
    ),
    "fctheory.U_hat": lambda: dict(U=np.arange(24.0).reshape(3, 8), L=2),
    "fctheory.U_from_hat": lambda: dict(Uh=np.arange(24.0).reshape(4, 6), L=2),
    # ---- Theorem 1
    "fctheory.H": lambda: dict(t=1.5, n_c=3, n_w=12, L=2, K=4, lam=0.01),
    "fctheory.H_prime": lambda: dict(t=np.array([0.0, 1.5]), n_c=3, n_w=12, L=2, K=4, lam=0.01),
    "fctheory.lambda_trivial": lambda: dict(n_c=3, n_w=12, L=2, K=4),
    "fctheory.tau": lambda: dict(n_c=3, n_w=12, L=2, K=4, lam=0.01, precision="float", dps=30, backend="numpy"),
    # ---- Theorem 3
    "fctheory.H_star": lambda: dict(t=1.5, n_c=3, L=2, K=4, d=5, lam=0.01),
    "fctheory.H_star_prime": lambda: dict(t=1.5, n_c=3, L=2, K=4, d=5, lam=0.01),
    "fctheory.tau_star": lambda: dict(n_c=3, L=2, K=4, d=5, lam=0.01, precision="float", dps=30, backend="numba"),
    # ---- Theorem 2
    "fctheory.lambda_max_type3": lambda: dict(mu=np.array([0.5, 0.3, 0.2]), n_c=3, L=2),
    "fctheory.solve_type3": lambda: dict(mu=np.array([0.5, 0.3, 0.2]), n_c=3, L=2, lam=0.02, precision="float", dps=30),
    # ---- predictions
    "fctheory.predict_type1": lambda: dict(n_c=3, n_w=12, L=2, K=4, lam=0.01),
    "fctheory.predict_type2": lambda: dict(n_c=3, L=2, K=4, d=5, lam=0.01, n_w=12),
    "fctheory.predict_type3": lambda: dict(mu=np.array([0.5, 0.3, 0.2]), n_c=3, L=2, lam=0.02),
    "fctheory.predict": lambda: dict(task=_task(), lam=0.01, network="h*", d=4),
    "fctheory.TypeIPrediction.to_dict": lambda: (_pred1(), dict()),
    "fctheory.TypeIPrediction.pca_W": lambda: (_pred1(), dict()),
    "fctheory.TypeIPrediction.pca_U": lambda: (_pred1(), dict()),
    # ---- configurations (Definitions 1-3)
    "fctheory.type1_configuration": lambda: dict(task=_task(), d=4, lam=0.01, c=None, c_prime=None, frame=None, seed=0),
    "fctheory.type2_configuration": lambda: dict(
        task=_task(), d=4, lam=None, c=0.5, frame=None, seed=1, scale=np.linspace(0.5, 2.0, 6), shift=0.25
    ),
    "fctheory.type3_configuration": lambda: dict(
        task=_zipf_task(),
        d=3,
        lam=None,
        c=1.0,
        r=np.array([2.0, 1.5, 1.0]),
        frame=fc.equiangular_frame(3, 3),
        seed=None,
    ),
    # ---- assumption checkers (appendix B)
    "fctheory.check_assumption_A": lambda: dict(Z=np.array([[0, 1], [1, 0], [1, 1]]), n_c=2, expected=None),
    "fctheory.lemma_B_properties": lambda: dict(Z=np.array([[0, 0], [1, 1]]), n_c=2),
    "fctheory.check_assumption_B": lambda: dict(
        Z=fc.Task.random(3, 1, 2, 5, seed=0), n_c=3, sdp=False, solver=None, A_space=None
    ),
    "fctheory.search_assumption_A": lambda: dict(n_c=2, L=2, K=2, method="exhaustive"),
    "fctheory.search_lemma_B": lambda: dict(n_c=2, L=2, K=2, with_origin=True),
    "fctheory.lemma_b_scale": lambda: dict(
        task=fc.Task(2, 2, 2, np.array([[0, 0], [1, 1]]), "uniform"), lam=0.05, precision="float", dps=30
    ),
    "fctheory.collapsed_optimum": lambda: dict(
        task=fc.Task.random(3, 2, 2, 4, seed=0), lam=0.05, tol=1e-10, maxiter=200, max_seconds=None
    ),
    "fctheory.collapsed_risk": lambda: dict(task=fc.Task.random(3, 2, 2, 4, seed=0), V=np.ones((8, 3)), lam=0.05),
    "fctheory.collapsed_optimum_star": lambda: dict(
        task=fc.Task.random(3, 2, 2, 4, seed=0), lam=0.05, d=4, tol=1e-10, maxiter=200
    ),
    "fctheory.ExistenceResult.sizes": lambda: (fc.search_lemma_B(n_c=2, L=2), dict()),
    # ---- budget (fctheory._budget)
    "fctheory.get_budget": lambda: dict(),
    "fctheory.budget": lambda: dict(max_bytes=2 * 2**30, max_seconds=600.0, max_items=1e8),
}

SKIP = {
    "fctheory.set_budget": "changes the process-wide budget the fuzz run itself relies on (fctheory.budget, "
    "a context manager with the same parameters, is fuzzed instead)",
}

# documented overflows: the true value exceeds the float64 range
ALLOW_NONFINITE = {
    "fctheory.collapsed_optimum": {"cosines": "NaN for a zero concept vector (documented), e.g. at the origin"},
    "fctheory.H": {"": "H(t) = G + λt is inf where λt > 1.8e308 (docstring of H)"},
    "fctheory.H_star": {"": "H*(t) = G + λt²/2 is inf where λt²/2 > 1.8e308 (docstring of H_star)"},
    "fctheory.H_star_prime": {"": "H*′(t) = λt − … is inf where λt > 1.8e308"},
    "fctheory.budget": {
        "max_bytes": "inf means no limit",
        "max_seconds": "inf means no limit",
        "max_items": "inf means no limit",
    },
}
