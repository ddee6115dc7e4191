"""Valid fast examples for the metrics and UFM areas: fctheory.metrics and fctheory.ufm.

Every example is a tiny, well-conditioned problem (a few classes, a few samples) that runs in well
under 0.2 s, so the fuzz suite can call each one many times with bad and extreme values.
"""

import os

import numpy as np

import fctheory as fc
from fctheory import metrics, ufm

from .harness import scratch_dir

_RNG = np.random.default_rng(0)
K, M, N_PER = 3, 4, 3
Y = np.repeat(np.arange(K), N_PER)  # class-major labels, every class present
MEANS = 3.0 * _RNG.standard_normal((K, M))
H = MEANS[Y] + 0.5 * _RNG.standard_normal((K * N_PER, M))  # samples x features
W = _RNG.standard_normal((K, M))
B = _RNG.standard_normal(K)

TASK = fc.Task.full(3, 2, 2)  # n_c = 3, s_c = 2, L = 2: n_w = 6, K = 9
D = 4
W_TASK = _RNG.standard_normal((D, TASK.n_w))
U_TASK = _RNG.standard_normal((TASK.K, TASK.L * D))

# perturbation model: W is K x d, H is d x N (columns class-major), N = K n
PK, PN, PD = 2, 2, 3
PH = _RNG.standard_normal((PD, PK * PN)) + np.repeat(2.0 * _RNG.standard_normal((PD, PK)), PN, axis=1)
PW = _RNG.standard_normal((PK, PD))


def _acc():
    acc = metrics.NCAccumulator(K=K, d=M)
    acc.update(H[:5], Y[:5])
    acc.update(H[5:], Y[5:])
    return acc


def _ce_point():
    # W K x d, H d x (K n_spl): a random point of the regularised UFM (d = 3, K = 3, n_spl = 2)
    rng = np.random.default_rng(1)
    return dict(
        W=rng.standard_normal((3, 3)),
        H=rng.standard_normal((3, 6)),
        b=rng.standard_normal(3),
        n_spl=2,
        lam_W=0.01,
        lam_H=0.02,
    )


def _phase():
    return ufm.minority_phase_diagram(
        K_maj=1, K_min=2, n_maj=20, ratios=np.array([1.0, 4.0]), lams=np.array([0.01, 0.02]), loss="mse"
    )


def _response():
    return ufm.first_order_response(PW, PH, K=PK, lam_W=0.5, lam_H=0.3, beta=2.0)


EXAMPLES = {
    # ------------------------------------------------------------------ neural-collapse metrics
    "fctheory.metrics.nc1": lambda: dict(
        H=H, y=Y, variant="papyan", K=K, global_mean="samples", pinv_rtol=1e-15, rank="auto"
    ),
    "fctheory.metrics.nc2": lambda: dict(M=MEANS, variant="etf", center=True, counts=np.array([3.0, 3.0, 3.0])),
    "fctheory.metrics.nc3": lambda: dict(W=W, H=H, y=Y, variant="duality", K=K, global_mean="class_means"),
    "fctheory.metrics.nc4": lambda: dict(W=W, H=H, y=Y, b=B, means=None, K=K, average="samples"),
    "fctheory.metrics.nc5": lambda: dict(M=MEANS, ood_mean=B[:1].repeat(M) + np.arange(M)),
    "fctheory.metrics.cdnv": lambda: dict(H=H, y=Y, matrix=False, K=K, ddof=1, dist_exp=1.0, reduction="mean"),
    "fctheory.metrics.equinorm": lambda: dict(
        M=MEANS, center=True, counts=None, log=False, pairs=False, reduction="cv"
    ),
    "fctheory.metrics.equiangularity": lambda: dict(M=MEANS, variant="max_angle", center=True, counts=None),
    "fctheory.metrics.uniformity": lambda: dict(M=MEANS, kernel="log", reduction="var", center=True, counts=None),
    "fctheory.metrics.uniform_duality": lambda: dict(
        W=W, H=H, y=Y, pairs="matching", cos=True, reduction="cv", ddof=0, K=K, global_mean="class_means"
    ),
    "fctheory.metrics.etf_gram": lambda: dict(K=4),
    "fctheory.metrics.class_statistics": lambda: dict(H=H, y=Y, K=K, global_mean="class_means", ddof=0),
    "fctheory.metrics.class_statistics_from_moments": lambda: dict(
        counts=np.full(K, N_PER),
        sums=N_PER * (MEANS - MEANS[0]),
        scatter=np.eye(M),
        sq=np.full(K, 2.0),
        shift=np.repeat(MEANS[:1], K, axis=0),
        global_mean="class_means",
    ),
    "fctheory.metrics.nc1_from_statistics": lambda: dict(
        st=metrics.class_statistics(H, Y), variant="papyan", global_mean="samples", pinv_rtol=None, rank="auto"
    ),
    "fctheory.metrics.cdnv_from_statistics": lambda: dict(
        st=metrics.class_statistics(H, Y), matrix=False, dist_exp=1.0, reduction="mean"
    ),
    "fctheory.metrics.nc3_from_statistics": lambda: dict(
        W=W, st=metrics.class_statistics(H, Y), variant="duality", global_mean="class_means"
    ),
    "fctheory.metrics.nc_summary": lambda: dict(st=metrics.class_statistics(H, Y), W=W),
    "fctheory.metrics.per_class": lambda: dict(st=metrics.class_statistics(H, Y), W=W),
    "fctheory.metrics.nc_summary_from_moments": lambda: dict(
        counts=np.full(K, N_PER),
        sums=N_PER * (MEANS - MEANS[0]),
        scatter=np.eye(M),
        sq=np.full(K, 2.0),
        shift=np.repeat(MEANS[:1], K, axis=0),
        W=W,
        upper=False,
    ),
    "fctheory.metrics.NCAccumulator": lambda: dict(K=K, d=M, full_scatter=True, backend="numpy"),
    "fctheory.metrics.NCAccumulator.update": lambda: (metrics.NCAccumulator(K=K, d=M), dict(H=H, y=Y)),
    "fctheory.metrics.NCAccumulator.statistics": lambda: (_acc(), dict(global_mean="class_means", ddof=0)),
    "fctheory.metrics.NCAccumulator.nc1": lambda: (
        _acc(),
        dict(variant="papyan", global_mean="class_means", pinv_rtol=None, rank="auto"),
    ),
    "fctheory.metrics.NCAccumulator.cdnv": lambda: (_acc(), dict(matrix=False, ddof=0, dist_exp=1.0, reduction="mean")),
    "fctheory.metrics.NCAccumulator.nc2": lambda: (_acc(), dict(variant="etf", global_mean="class_means")),
    "fctheory.metrics.NCAccumulator.nc3": lambda: (_acc(), dict(W=W, variant="duality", global_mean="class_means")),
    # ------------------------------------------------------------------ feature-collapse metrics
    "fctheory.metrics.within_concept_spread": lambda: dict(task=TASK, W=W_TASK, layernorm=False),
    "fctheory.metrics.frame_alignment": lambda: dict(task=TASK, W=W_TASK, layernorm=False, max_iter=50, tol=1e-12),
    "fctheory.metrics.distance_to_type1": lambda: dict(task=TASK, W=W_TASK, U=U_TASK, max_iter=50, tol=1e-12),
    "fctheory.metrics.distance_to_type2": lambda: dict(task=TASK, W=W_TASK, U=U_TASK, max_iter=50, tol=1e-12),
    "fctheory.metrics.distance_to_type3": lambda: dict(task=TASK, W=W_TASK, U=U_TASK, max_iter=50, tol=1e-12),
    # ------------------------------------------------------------------ regularised UFM
    "fctheory.ufm.ce": lambda: dict(K=4, n_spl=5, lam_W=0.01, lam_H=0.02, bias=False),
    "fctheory.ufm.mse": lambda: dict(K=4, n_spl=5, lam_W=0.01, lam_H=0.02, bias=True),
    "fctheory.ufm.ce_objective": _ce_point,
    "fctheory.ufm.mse_objective": _ce_point,
    "fctheory.ufm.solve_ce": lambda: dict(K=2, n_spl=1, d=2, lam_W=0.1, lam_H=0.1, bias=False, n_starts=1, seed=0),
    "fctheory.ufm.solve_mse": lambda: dict(K=2, n_spl=1, d=2, lam_W=0.1, lam_H=0.1, bias=False, n_starts=1, seed=0),
    "fctheory.ufm.convex_ce": lambda: dict(K=2, n_spl=1, lam_W=0.1, lam_H=0.1, bias=False, solver="CLARABEL"),
    "fctheory.ufm.convex_mse": lambda: dict(K=2, n_spl=1, lam_W=0.1, lam_H=0.1, bias=False, solver="CLARABEL"),
    # ------------------------------------------------------------------ unregularised / norm-constrained
    "fctheory.ufm.max_margin": lambda: dict(K=3, n_spl=4),
    "fctheory.ufm.norm_constrained_ce": lambda: dict(K=3, Omega_W=1.0, Omega_H=2.0),
    "fctheory.ufm.output_ball": lambda: dict(K=3, R=2.0),
    "fctheory.ufm.solve_max_margin": lambda: dict(K=2, n_spl=1, d=1, n_starts=1, seed=0),
    "fctheory.ufm.solve_norm_constrained_ce": lambda: dict(
        K=2, n_spl=1, d=2, Omega_W=1.0, Omega_H=1.0, n_starts=1, seed=0
    ),
    "fctheory.ufm.solve_output_ball": lambda: dict(K=3, R=2.0, k=1, n_starts=1, seed=0),
    # ------------------------------------------------------------------ LayerNorm UFM
    "fctheory.ufm.layernorm_ce": lambda: dict(K=3, d=4, lam=0.01, n_starts=1, seed=0),
    "fctheory.ufm.layernorm_mse": lambda: dict(K=3, d=5, lam=0.01, bias=False, n_starts=1, seed=0),
    "fctheory.ufm.layernorm_features": lambda: dict(G=_RNG.standard_normal((4, 5))),
    "fctheory.ufm.solve_layernorm_ce": lambda: dict(K=2, n_spl=1, d=3, lam=0.1, n_starts=1, seed=0),
    "fctheory.ufm.solve_layernorm_mse": lambda: dict(K=2, n_spl=1, d=3, lam=0.1, bias=True, n_starts=1, seed=0),
    # ------------------------------------------------------------------ perturbation paper
    "fctheory.ufm.collapsed_minimizer": lambda: dict(K=3, n_spl=2, d=4, lam_W=0.5, lam_H=0.3, R=None, seed=0),
    "fctheory.ufm.anchored_objective": lambda: dict(W=PW, H=PH, H0=PH + 0.1, K=PK, lam_W=0.5, lam_H=0.3, beta=2.0),
    "fctheory.ufm.optimal_W": lambda: dict(H=PH, K=PK, lam_W=0.5),
    "fctheory.ufm.central_path_loss": lambda: dict(H=PH, K=PK, lam_W=0.5, lam_H=0.3, method="closed"),
    "fctheory.ufm.central_path_gradient": lambda: dict(H=PH, K=PK, lam_W=0.5, lam_H=0.3),
    "fctheory.ufm.solve_anchored": lambda: dict(
        H0=PH, K=PK, lam_W=0.5, lam_H=0.3, beta=2.0, H_init=None, newton=True, max_newton=3
    ),
    "fctheory.ufm.gradient_flow": lambda: dict(
        H0=PH, K=PK, lam_W=0.5, lam_H=0.3, t_max=0.5, n_eval=3, rtol=1e-6, atol=1e-9
    ),
    "fctheory.ufm.hessian_blocks": lambda: dict(W=PW, H=PH, K=PK, lam_W=0.5, lam_H=0.3, beta=2.0),
    "fctheory.ufm.first_order_response": lambda: dict(W=PW, H=PH, K=PK, lam_W=0.5, lam_H=0.3, beta=2.0, kind="exact"),
    # a method: (instance, kwargs); dH0 is a perturbation of the anchor H0 (same shape as H)
    "fctheory.ufm.FirstOrderResponse.apply": lambda: (_response(), dict(dH0=0.01 * np.ones_like(PH))),
    "fctheory.ufm.class_blocks": lambda: dict(F=np.eye(PK * PD * PN), K=PK, n_spl=PN, d=PD),
    "fctheory.ufm.block_spectra": lambda: dict(K=2, n_spl=2, d=3, lam_W=0.5, lam_H=0.3, beta=2.0),
    "fctheory.ufm.nc1_tilde": lambda: dict(H=PH, K=PK),
    # ------------------------------------------------------------------ any class counts, minority collapse
    "fctheory.ufm.minority_collapse_threshold": lambda: dict(K_maj=2, K_min=3, n_maj=100, lam_W=0.003, lam_H=0.003),
    "fctheory.ufm.MinorityThreshold.collapsed": lambda: (
        ufm.minority_collapse_threshold(K_maj=2, K_min=3, n_maj=100, lam_W=0.003, lam_H=0.003),
        dict(r=10.0),
    ),
    "fctheory.ufm.collapsed_classes": lambda: dict(counts=np.array([5, 5, 2, 2, 0]), lam_W=0.01, lam_H=0.01),
    "fctheory.ufm.seli_geometry": lambda: dict(counts=np.array([5, 2, 1])),
    "fctheory.ufm.within_group_spread": lambda: dict(
        counts=np.array([5, 2, 2]), lam_W=0.01, lam_H=0.01, loss="ce", bias=False, exchangeable=True
    ),
    "fctheory.ufm.minority_phase_diagram": lambda: dict(
        K_maj=1, K_min=2, n_maj=20, ratios=np.array([1.0, 4.0]), lams=np.array([0.01, 0.02]), loss="mse"
    ),
    "fctheory.ufm.PhaseDiagram.plot": lambda: (_phase(), dict(out=os.path.join(scratch_dir("phase-"), "p.png"))),
}

SKIP = {}

# documented NaN fields: quantities the model does not define (docs/ufm.md, UFMOptimum docstring)
ALLOW_NONFINITE = {
    "fctheory.metrics.per_class": {
        "w_cos": "NaN by design: the cosine of a zero classifier row (W = 0) is undefined",
        "var_rel": "NaN by design: undefined when every class mean coincides (tr Σ_B = 0)",
        "cdnv": "NaN by design: undefined for a class whose mean coincides with another's",
    },
    "fctheory.ufm.norm_constrained_ce": {"H_norm_sq": "NaN by design: ‖H‖² = N·Ω_H depends on n, not an argument"},
    "fctheory.ufm.output_ball": {"W_norm_sq": "NaN by design: the output-ball model has no classifier W"},
    "fctheory.ufm.layernorm_ce": {"H_norm_sq": "NaN by design (closed form): LayerNorm fixes ‖x_i‖² = d, N is free"},
    "fctheory.ufm.layernorm_mse": {"H_norm_sq": "NaN by design (closed form): LayerNorm fixes ‖x_i‖² = d, N is free"},
    "fctheory.metrics.nc_summary": {
        k: "NaN by design: undefined for a zero (centred) classifier (W = 0, or equal rows)"
        for k in ("nc2_W", "equinorm_W", "mean_cos_W", "nc3")
    },
    "fctheory.metrics.nc_summary_from_moments": {
        **{
            k: "NaN by design: undefined for a zero (centred) classifier (W = 0, or equal rows)"
            for k in ("nc2_W", "equinorm_W", "mean_cos_W", "nc3")
        },
        **{
            k: "NaN by design: undefined when the class means coincide (zero sums and equal shifts, "
            "or sums negligible against the shifts)"
            for k in ("nc1", "nc1_trace_ratio", "cdnv", "nc2", "equinorm_means", "equiangularity_means")
        },
        **{k: "NaN by design: no cosine of a zero centred mean" for k in ("mean_cos_means",)},
        "mean_norm_means": "NaN by design: undefined when every centred mean is zero",
    },
}
