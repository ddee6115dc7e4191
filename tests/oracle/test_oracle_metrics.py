"""Oracles for every public number of fctheory.metrics.

References are written here from the definitions (review §2.3 eqs. (4)–(9), (51); Papyan's
equinorm/equiangularity; docs/ufm.md "Metrics"): explicit loops over samples and pairs, statistics
module population std, np.linalg.pinv, orthogonal Procrustes in closed form (nuclear norm) for the
frame fits. Regimes: unbalanced classes, large offsets added to the features (two-pass statistics,
Σ_B rank cap), exact ties in argmax/argmin (integer data, exact in float), K > m.

Checklist (field -> test)
-------------------------
ClassStatistics.means, .global_mean, .counts, .sigma_W, .sigma_B, .class_var, .K, .N
                                   -> test_class_statistics_equal_loops_and_survive_offsets
nc1 "papyan"                       -> test_nc1_papyan_equals_pinv_definition[offset], test_nc1_rank_cap_with_large_offset
nc1 "trace_ratio"                  -> test_nc1_trace_ratio_equals_definition
nc2 "etf","identity","zhu","cosine", center -> test_nc2_variants_equal_definitions
equinorm (population std)          -> test_equinorm_is_population_std_over_mean
equiangularity "max_angle","std"   -> test_equiangularity_variants_equal_pair_loops
nc3 "duality","duality_squared","etf","cosine" -> test_nc3_variants_equal_definitions
nc4 (ties, bias, means=)           -> test_nc4_equals_per_sample_rules_with_ties
cdnv (mean, matrix)                -> test_cdnv_equals_pair_loop
NCAccumulator .statistics/.nc1/.cdnv/.nc2/.nc3 -> test_accumulator_equals_batch_oracles
etf_gram                           -> test_nc2_variants_equal_definitions
WithinConceptSpread.spread, .angular_spread, .per_concept, .centres -> test_within_concept_spread_equals_loops
FrameAlignment.distance, .c, .frame, .cosines, .max_cosine_error, .norm_cv
                                   -> test_frame_alignment_equals_procrustes[h, h*]
CollapseDistance (I, II, III).distance, .frame, .c, .c_prime, .r, .W_star, .U_star, .kind
                                   -> test_collapse_distance_fields_are_consistent_and_optimal[...],
                                      test_collapse_distance_zero_at_exact_configurations
"""

import math
import statistics

import numpy as np
import pytest

import fctheory as fc
from tests.oracle import oracles as O
from fctheory import metrics as M
from fctheory.metrics import collapse as C


def _data(seed=0, K=4, m=6, counts=(3, 5, 2, 7), offset=0.0, spread=0.3):
    rng = np.random.default_rng(seed)
    mus = 2 * rng.standard_normal((K, m))
    H, y = [], []
    for k, c in enumerate(counts):
        H.append(mus[k] + spread * rng.standard_normal((c, m)))
        y += [k] * c
    return np.vstack(H) + offset, np.array(y)


def _stats(H, y):
    """Class statistics by explicit loops (exact two-pass definitions)."""
    K = int(y.max()) + 1
    N, m = H.shape
    means = np.array([H[y == k].mean(axis=0) for k in range(K)])
    mu_G = means.mean(axis=0)
    SW = np.zeros((m, m))
    var = np.zeros(K)
    for i in range(N):
        dv = H[i] - means[y[i]]
        SW += np.outer(dv, dv)
        var[y[i]] += dv @ dv
    SW /= N
    var /= np.bincount(y)
    SB = sum(np.outer(mu - mu_G, mu - mu_G) for mu in means) / K
    return means, mu_G, SW, SB, var


@pytest.mark.parametrize("offset", [0.0, 1e6])
def test_class_statistics_equal_loops_and_survive_offsets(offset):
    H0, y = _data()
    H = H0 + offset
    st = M.class_statistics(H, y)
    means, mu_G, SW, SB, var = _stats(H0, y)  # offset-free: the scatter matrices are translation invariant
    np.testing.assert_allclose(st.means, means + offset, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(st.global_mean, mu_G + offset, rtol=1e-14, atol=1e-14)
    np.testing.assert_array_equal(st.counts, np.bincount(y))
    tol = 1e-12 if offset == 0 else 1e-8  # inputs themselves carry 1e6·eps = 2e-10 absolute
    assert O.rel(st.sigma_W, SW) <= tol and O.rel(st.sigma_B, SB) <= tol and O.rel(st.class_var, var) <= tol
    assert st.K == 4 and st.N == len(y)


@pytest.mark.parametrize("offset", [0.0, 1e4])
def test_nc1_papyan_equals_pinv_definition(offset):
    H0, y = _data(1)
    _, _, SW, SB, _ = _stats(H0, y)
    ref = np.trace(SW @ np.linalg.pinv(SB, rcond=1e-10)) / 4
    assert abs(M.nc1(H0 + offset, y) - ref) <= (1e-12 if offset == 0 else 1e-7) * ref


def test_nc1_rank_cap_with_large_offset():
    """m > K−1: Σ_B has rank K−1; with an offset of 1e8 centring leaves a spurious K-th direction
    of size ~1e-8 that must not enter Σ_B⁺ (it would add ~1e14)."""
    H0, y = _data(2, K=3, m=8, counts=(4, 6, 5))
    _, _, SW, SB, _ = _stats(H0, y)
    ref = np.trace(SW @ np.linalg.pinv(SB, rcond=1e-10)) / 3
    for off in (1e6, 1e8):
        assert abs(M.nc1(H0 + off, y) - ref) <= 1e-4 * ref


def test_nc1_trace_ratio_equals_definition():
    H0, y = _data(3)
    _, _, SW, SB, _ = _stats(H0, y)
    assert abs(M.nc1(H0, y, variant="trace_ratio") - np.trace(SW) / np.trace(SB)) <= 1e-13 * np.trace(SW) / np.trace(SB)


def _nearest(G, T):
    # min over c ≥ 0 of ‖G − cT‖/‖G‖ = sin of the angle between G and T (1 when the angle is obtuse)
    cos = max(0.0, float(np.sum(G * T)) / (np.linalg.norm(G) * np.linalg.norm(T)))
    return math.sqrt(max(0.0, 1 - cos * cos))


def test_nc2_variants_equal_definitions():
    rng = np.random.default_rng(4)
    K = 5
    E = np.eye(K) - 1.0 / K
    np.testing.assert_allclose(M.etf_gram(K), E, atol=0)
    for Mx in (rng.standard_normal((K, 7)), rng.standard_normal((K, 3)) + 50.0):
        for center in (True, False):
            Mc = Mx - Mx.mean(axis=0) if center else Mx
            G = Mc @ Mc.T
            assert abs(M.nc2(Mx, variant="etf", center=center) - _nearest(G, E)) <= 1e-12
            assert abs(M.nc2(Mx, variant="identity", center=center) - _nearest(G, np.eye(K))) <= 1e-12
            zhu = np.linalg.norm(G / np.linalg.norm(G) - E / math.sqrt(K - 1))
            assert abs(M.nc2(Mx, variant="zhu", center=center) - zhu) <= 1e-13
            Mn = Mc / np.linalg.norm(Mc, axis=1, keepdims=True)
            Gn = Mn @ Mn.T
            cos = np.linalg.norm(Gn / np.linalg.norm(Gn) - E / math.sqrt(K - 1))
            assert abs(M.nc2(Mx, variant="cosine", center=center) - cos) <= 1e-13
    # a simplex ETF (scaled, rotated) is at distance 0; anti-correlated Gram is at distance 1 (c clipped to 0)
    Q, _ = np.linalg.qr(rng.standard_normal((6, 6)))
    etf = 3.0 * (np.eye(K, 6) - np.eye(K, 6).mean(axis=0)) @ Q
    assert M.nc2(etf) <= 1e-14
    assert M.nc2(np.eye(K) * 2, variant="identity", center=False) <= 1e-15


def test_equinorm_is_population_std_over_mean():
    rng = np.random.default_rng(5)
    for K in (2, 3, 6):
        Mx = rng.standard_normal((K, 4)) * rng.uniform(0.5, 3, size=(K, 1)) + 1e3
        for center in (True, False):
            if K == 2 and center:
                # two centred rows are ±(m0 − m1)/2: equal norms, so the exact value is 0 (a float reference
                # gives rounding noise ~1e-14 here, which is not a relative error of the metric)
                assert M.equinorm(Mx, center=center) <= 1e-15
                continue
            Mc = Mx - Mx.mean(axis=0) if center else Mx
            nr = [math.sqrt(sum(v * v for v in row)) for row in Mc]
            ref = statistics.pstdev(nr) / statistics.fmean(nr)  # ddof = 0
            assert abs(M.equinorm(Mx, center=center) - ref) <= 1e-12 * ref


def test_equiangularity_variants_equal_pair_loops():
    rng = np.random.default_rng(6)
    K = 5
    Mx = rng.standard_normal((K, 6)) + 1e3
    Mc = Mx - Mx.mean(axis=0)
    cos = [
        float(Mc[i] @ Mc[j] / np.linalg.norm(Mc[i]) / np.linalg.norm(Mc[j]))
        for i in range(K)
        for j in range(K)
        if i != j
    ]
    ma = statistics.fmean(abs(c + 1 / (K - 1)) for c in cos)
    sd = statistics.pstdev(cos)
    assert abs(M.equiangularity(Mx) - ma) <= 1e-9 * ma
    assert abs(M.equiangularity(Mx, variant="std") - sd) <= 1e-9 * sd


def test_nc3_variants_equal_definitions():
    H, y = _data(7, K=4, m=5, counts=(3, 4, 5, 2))
    rng = np.random.default_rng(7)
    W = rng.standard_normal((4, 5))
    means, mu_G, *_ = _stats(H, y)
    Mc = means - mu_G
    dual = np.linalg.norm(W / np.linalg.norm(W) - Mc / np.linalg.norm(Mc))
    assert abs(M.nc3(W, H, y) - dual) <= 1e-13
    assert abs(M.nc3(W, H, y, variant="duality_squared") - dual**2) <= 1e-13
    G = W @ Mc.T
    etf = np.linalg.norm(G / np.linalg.norm(G) - (np.eye(4) - 0.25) / math.sqrt(3))
    assert abs(M.nc3(W, H, y, variant="etf") - etf) <= 1e-13
    cs = statistics.fmean(float(H[i] @ W[y[i]] / np.linalg.norm(H[i]) / np.linalg.norm(W[y[i]])) for i in range(len(y)))
    assert abs(M.nc3(W, H, y, variant="cosine") - (1 - cs)) <= 1e-13


def _nc4_loop(W, H, means, b):
    K = means.shape[0]
    dis = 0
    for h in H:
        logit = W @ h + (0 if b is None else b)
        pred = min(range(K), key=lambda k: (-logit[k], k))  # ties: lowest class index
        dist = [float(np.sum((h - mu) ** 2)) for mu in means]
        ncc = min(range(K), key=lambda k: (dist[k], k))
        dis += pred != ncc
    return dis / len(H)


def test_nc4_equals_per_sample_rules_with_ties():
    # integer data with exact class means (mirrored samples): every score and distance is exact,
    # so the tie points below are exact ties of the nearest-centre rule (and of the classifier)
    c = np.array([[0, 0], [4, 0], [0, 4]], float)
    offs = [(1, 0), (-1, 0), (0, 1), (0, -1)]
    H = [c[k] + o for k in range(3) for o in offs]
    y = [k for k in range(3) for _ in offs]
    H += [[2, 0], [-2, 0], [2, 2], [6, -2], [2, 2], [-2, 6]]  # (2,0): centres 0|1 tie; (2,2): all three
    y += [0, 0, 1, 1, 2, 2]
    H, y = np.array(H, float), np.array(y)
    means = np.array([H[y == k].mean(axis=0) for k in range(3)])
    np.testing.assert_array_equal(means, c)
    W = np.array([[1, 0], [1, 0], [0, 1]], float)  # rows 0 and 1 tie on every sample
    for b in (None, np.array([0.0, 0.0, -1.0]), np.array([0.0, 0.0, 2.0])):
        ref = _nc4_loop(W, H, means, b)
        assert M.nc4(W, H, y, b=b) == ref
        assert M.nc4(W, H[-6:], y[-6:], b=b, means=means) == _nc4_loop(W, H[-6:], means, b)
    assert 0 < _nc4_loop(W, H, means, None) < 1


def test_cdnv_equals_pair_loop():
    H, y = _data(9)
    means, _, _, _, var = _stats(H, y)
    K = 4
    V = np.zeros((K, K))
    for i in range(K):
        for j in range(K):
            if i != j:
                V[i, j] = (var[i] + var[j]) / (2 * np.sum((means[i] - means[j]) ** 2))
    np.testing.assert_allclose(M.cdnv(H, y, matrix=True), V, rtol=1e-13, atol=0)
    assert abs(M.cdnv(H, y) - V.sum() / (K * (K - 1))) <= 1e-13 * V.max()
    assert abs(M.cdnv(H + 1e5, y) - V.sum() / (K * (K - 1))) <= 1e-7 * V.max()


def test_accumulator_equals_batch_oracles():
    H, y = _data(10, offset=1e3)
    W = np.random.default_rng(0).standard_normal((4, 6))
    for full in (True, False):
        acc = M.NCAccumulator(4, 6, full_scatter=full)
        for sl in (slice(0, 5), slice(5, 6), slice(6, 17)):
            acc.update(H[sl], y[sl])
        means, mu_G, SW, SB, var = _stats(H - 1e3, y)
        assert abs(acc.cdnv() - M.cdnv(H, y)) <= 1e-12 * M.cdnv(H, y)
        assert abs(acc.nc1(variant="trace_ratio") - np.trace(SW) / np.trace(SB)) <= 1e-12 * np.trace(SW) / np.trace(SB)
        assert abs(acc.nc2() - M.nc2(means)) <= 1e-12
        if full:
            st = acc.statistics()
            np.testing.assert_allclose(st.means, means + 1e3, rtol=1e-13)
            assert O.rel(st.class_var, var) <= 1e-12 and O.rel(st.sigma_B, SB) <= 1e-12
            np.testing.assert_array_equal(st.counts, np.bincount(y))
            assert O.rel(st.sigma_W, SW) <= 1e-12
            ref = np.trace(SW @ np.linalg.pinv(SB, rcond=1e-10)) / 4
            assert abs(acc.nc1() - ref) <= 1e-12 * ref
            Mc = means - mu_G
            assert abs(acc.nc3(W) - np.linalg.norm(W / np.linalg.norm(W) - Mc / np.linalg.norm(Mc))) <= 1e-12


# ------------------------------------------------------------------------------------------ collapse.py
def test_within_concept_spread_equals_loops():
    t = fc.Task.random(3, 4, 2, 5, seed=0)
    rng = np.random.default_rng(11)
    W = rng.standard_normal((5, t.n_w))
    W[:, 5] = 0.0  # a zero word vector: excluded from the angular statistic
    for ln in (False, True):
        V = O.my_phi(W + np.arange(5)[:, None]) if ln else W
        Win = W + np.arange(5)[:, None] if ln else W
        res = C.within_concept_spread(t, Win, layernorm=ln)
        num, den, per, cen, ang, nz = 0.0, 0.0, [], [], 0.0, 0
        for a in range(3):
            cols = [V[:, a * 4 + b] for b in range(4)]
            c = sum(cols) / 4
            na = sum(float((v - c) @ (v - c)) for v in cols)
            da = sum(float(v @ v) for v in cols)
            num, den = num + na, den + da
            per.append(na / da)
            cen.append(c)
            units = [v / np.linalg.norm(v) if np.linalg.norm(v) > 0 else 0 * v for v in cols]
            uc = sum(units) / 4
            ang += sum(float((u - uc) @ (u - uc)) for u in units)
            nz += sum(1 for v in cols if np.linalg.norm(v) > 0)
        assert abs(res.spread - num / den) <= 1e-13
        np.testing.assert_allclose(res.per_concept, per, rtol=1e-13)
        np.testing.assert_allclose(res.centres, np.array(cen).T, rtol=1e-13, atol=1e-15)
        assert abs(res.angular_spread - ang / nz) <= 1e-13


def _procrustes_distance(Mx, n_c, mean_zero):
    """min_{c ≥ 0, F equiangular} ‖M − cF‖/‖M‖ in closed form: every equiangular frame is an isometric
    image of one reference frame, so the minimum is √(1 − ‖B ᵀM F₀ᵀ‖_*²/(n_c‖M‖²))."""
    d = Mx.shape[0]
    if mean_zero:
        Q, _ = np.linalg.qr(np.eye(d) - 1.0 / d)
        B = Q[:, : d - 1]
        dd = d - 1
    else:
        B, dd = np.eye(d), d
    F0 = O.simplex_frame(n_c, dd)
    nuc = np.linalg.svd(B.T @ Mx @ F0.T, compute_uv=False).sum()
    return math.sqrt(max(0.0, 1 - nuc**2 / (n_c * np.sum(Mx * Mx)))), nuc / n_c


@pytest.mark.parametrize("ln", [False, True])
def test_frame_alignment_equals_procrustes(ln):
    t = fc.Task.random(3, 2, 2, 5, seed=1)
    rng = np.random.default_rng(12)
    d = 4
    W = rng.standard_normal((d, t.n_w))
    res = C.frame_alignment(t, W, layernorm=ln)
    V = O.my_phi(W) if ln else W
    Mx = V.reshape(d, 3, 2).mean(axis=2)
    dist, c = _procrustes_distance(Mx, 3, ln)
    assert abs(res.distance - dist) <= 1e-9
    assert abs(res.c - c) <= 1e-9 * c
    F = res.frame
    np.testing.assert_allclose(F.T @ F, 1.5 * np.eye(3) - 0.5, atol=1e-10)  # κI − 11ᵀ/(n_c−1), κ = 3/2
    if ln:
        assert np.abs(F.sum(axis=0)).max() <= 1e-10
    assert abs(np.linalg.norm(Mx - res.c * F) / np.linalg.norm(Mx) - res.distance) <= 1e-12
    nr = np.linalg.norm(Mx, axis=0)
    cos = (Mx.T @ Mx) / np.outer(nr, nr)
    np.testing.assert_allclose(res.cosines, cos, rtol=1e-13)
    assert abs(res.max_cosine_error - max(abs(cos[i, j] + 0.5) for i in range(3) for j in range(3) if i != j)) <= 1e-14
    assert abs(res.norm_cv - statistics.pstdev(nr) / statistics.fmean(nr)) <= 1e-13


def _objective(task, W, U, dist_res, ln):
    d = W.shape[0]
    V = O.my_phi(W) if ln else W
    Uh = U.reshape(task.K * task.L, d).T
    Us = dist_res.U_star.reshape(task.K * task.L, d).T
    return math.sqrt((np.sum((V - dist_res.W_star) ** 2) + np.sum((Uh - Us) ** 2)) / (np.sum(V * V) + np.sum(Uh * Uh)))


@pytest.mark.parametrize("kind", ["I", "II", "III"])
def test_collapse_distance_fields_are_consistent_and_optimal(kind):
    t = fc.Task.full(3, 2, 2, mu=[0.7, 0.3])
    d = 4
    F = O.simplex_frame(3, d, mean_zero=(kind == "II"))
    Q, _ = np.linalg.qr(np.random.default_rng(1).standard_normal((d, d)))
    if kind == "II":
        Q = np.eye(d)  # (rotations must preserve 1_d for mean-zero frames)
    r = [1.3, 0.6] if kind == "III" else [1.1, 1.1]
    W, U = O.type3_weights(t.Z, 3, 2, 2, d, 0.8, r, F=Q @ F)
    if kind == "II":
        W = np.sqrt(d) * W / np.linalg.norm(W, axis=0)
    rng = np.random.default_rng(2)
    W = W + 0.05 * rng.standard_normal(W.shape)
    U = U + 0.05 * rng.standard_normal(U.shape)
    fn = {"I": C.distance_to_type1, "II": C.distance_to_type2, "III": C.distance_to_type3}[kind]
    res = fn(t, W, U)
    ln = kind == "II"
    assert res.kind == kind
    # the reported distance is the distance to the reported nearest configuration …
    assert abs(res.distance - _objective(t, W, U, res, ln)) <= 1e-12
    # … which is built from the reported frame and constants
    Fr = res.frame
    np.testing.assert_allclose(Fr.T @ Fr, 1.5 * np.eye(3) - 0.5, atol=1e-10)
    if kind == "I":
        np.testing.assert_allclose(res.W_star, res.c * Fr[:, t.word_concept], atol=1e-13)
        np.testing.assert_allclose(res.U_star.reshape(-1, d).T, res.c_prime * Fr[:, t.Z.ravel()], atol=1e-13)
    elif kind == "III":
        np.testing.assert_allclose(res.W_star, Fr[:, t.word_concept] * np.asarray(res.r)[t.word_rank], atol=1e-13)
        np.testing.assert_allclose(res.U_star.reshape(-1, d).T, res.c * Fr[:, t.Z.ravel()], atol=1e-13)
        assert res.c_prime is None
    else:
        np.testing.assert_allclose(res.W_star, np.sqrt(d) * Fr[:, t.word_concept], atol=1e-12)
        assert np.abs(Fr.sum(axis=0)).max() <= 1e-10
    # … and no nearby configuration is closer: random small rotations of the frame, with the
    # constants refitted by least squares (a local-optimality oracle independent of the fit)
    V = O.my_phi(W) if ln else W
    Uh = U.reshape(-1, d).T
    tot = np.sum(V * V) + np.sum(Uh * Uh)
    for s in range(6):
        A = rng.standard_normal((d, d))
        A = A - A.T
        if ln:  # stay inside rotations fixing 1_d
            P = np.eye(d) - 1.0 / d
            A = P @ A @ P
        from scipy.linalg import expm

        F2 = expm(1e-3 * A) @ Fr
        FU = F2[:, t.Z.ravel()]
        cu = max(0.0, np.sum(Uh * FU) / np.sum(FU * FU))
        obj = np.sum((Uh - cu * FU) ** 2)
        if kind == "I":
            FW = F2[:, t.word_concept]
            obj += np.sum((V - max(0.0, np.sum(V * FW) / np.sum(FW * FW)) * FW) ** 2)
        elif kind == "III":
            for b in range(2):
                cols = t.word_rank == b
                FW = F2[:, t.word_concept[cols]]
                Vb = V[:, cols]
                obj += np.sum((Vb - max(0.0, np.sum(Vb * FW) / np.sum(FW * FW)) * FW) ** 2)
        else:
            obj += np.sum((V - np.sqrt(d) * F2[:, t.word_concept]) ** 2)
        assert math.sqrt(obj / tot) >= res.distance - 1e-12


@pytest.mark.parametrize("kind", ["I", "II", "III"])
def test_collapse_distance_zero_at_exact_configurations(kind):
    t = fc.Task.random(3, 3, 2, 6, mu=[0.5, 0.3, 0.2], seed=3)
    d = 5
    F = O.simplex_frame(3, d, mean_zero=(kind == "II"))
    r = [2.0, 1.0, 0.5] if kind == "III" else [1.7] * 3
    W, U = O.type3_weights(t.Z, 3, 3, 2, d, 0.9, r, F=F)
    if kind == "II":
        W = np.sqrt(d) * W / np.linalg.norm(W, axis=0) * 3.0 + 1.0  # φ removes scale and shift
    res = {"I": C.distance_to_type1, "II": C.distance_to_type2, "III": C.distance_to_type3}[kind](t, W, U)
    assert res.distance <= 1e-10
    assert abs(res.c - (1.7 if kind == "I" else 0.9)) <= 1e-10
    if kind == "I":
        assert abs(res.c_prime - 0.9) <= 1e-10
    if kind == "III":
        np.testing.assert_allclose(res.r, r, rtol=1e-10)
