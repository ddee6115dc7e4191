"""docs/metrics-peers.md, tested: every peer-library metric reproduced by a fctheory.metrics call.

For every row of the table, the PEER's formula (as written in the table's last column) is re-implemented
here independently, in mpmath at 50 digits with plain loops over the samples and pairs (never calling
fctheory), and compared with the fctheory call to 1e-12 relative. The inputs cover random unbalanced
classes, a large common offset (1e6), rank-deficient Σ_B (d < K−1 and means in a subspace) and
near-collapsed features. A last test parses the table and fails if a row has no test here.
"""

import functools
import math
import pathlib
import re

import mpmath as mp
import numpy as np
import pytest

from fctheory import FCTheoryError
from fctheory.metrics import (
    cdnv,
    class_statistics,
    equiangularity,
    equinorm,
    nc1,
    nc2,
    nc3,
    nc4,
    nc5,
    uniform_duality,
    uniformity,
)

mp.mp.dps = 50
REL = 1e-12
EPS = np.finfo(np.float64).eps
DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "metrics-peers.md"


# ------------------------------------------------------------------------------------------- inputs
def _case(name):
    rng = np.random.default_rng(sum(map(ord, name)))
    if name == "rank_deficient":  # d = 3 < K − 1 = 4: Σ_B has rank 3
        counts, d = [2, 3, 4, 2, 3], 3
    elif name == "subspace":  # the means differ only in 2 of 5 coordinates: rank Σ_B = 2 < K − 1 = 3
        counts, d = [3, 4, 2, 5], 5
    else:
        counts, d = [3, 5, 2, 7], 6
    K = len(counts)
    y = np.repeat(np.arange(K), counts)
    rng.shuffle(y)
    means = 3.0 * rng.standard_normal((K, d))
    noise = rng.standard_normal((y.size, d))
    H = means[y] + (1e-9 if name == "near_collapsed" else 0.7) * noise
    if name == "subspace":
        H[:, 2:] = 0.0
    if name == "offset":
        H = H + 1e6
    W = means - means.mean(axis=0) + 0.5 * rng.standard_normal((K, d))
    return dict(
        H=H, y=y, W=W, b=0.3 * rng.standard_normal(K), ood=rng.standard_normal(d), K=K, d=d, counts=np.asarray(counts)
    )


CASES = ["random", "offset", "rank_deficient", "subspace", "near_collapsed"]


@functools.lru_cache(maxsize=None)
def data(name):
    return _case(name)


# ------------------------------------------------------------------------------ mpmath oracles
@functools.lru_cache(maxsize=None)
def mstats(name, gm="class_means", ddof=0):
    """Class means, counts, μ_G, Σ_W, Σ_B, v_k, centred means of the case, in mpmath (plain loops)."""
    c = data(name)
    H, y, K, d = c["H"], c["y"], c["K"], c["d"]
    n = [0] * K
    sums = [[mp.mpf(0)] * d for _ in range(K)]
    for i in range(len(y)):
        k = int(y[i])
        n[k] += 1
        for a in range(d):
            sums[k][a] += mp.mpf(float(H[i, a]))
    mu = [[s / n[k] for s in sums[k]] for k in range(K)]
    if gm == "class_means":
        mG = [mp.fsum(mu[k][a] for k in range(K)) / K for a in range(d)]
    else:
        N = len(y)
        mG = [mp.fsum(mp.mpf(float(H[i, a])) for i in range(N)) / N for a in range(d)]
    SW = mp.zeros(d, d)
    v = [mp.mpf(0)] * K
    for i in range(len(y)):
        k = int(y[i])
        dev = [mp.mpf(float(H[i, a])) - mu[k][a] for a in range(d)]
        v[k] += mp.fsum(t * t for t in dev)
        for a in range(d):
            for b_ in range(d):
                SW[a, b_] += dev[a] * dev[b_]
    SW = SW / len(y)
    v = [v[k] / (n[k] - ddof) for k in range(K)]
    mc = [[mu[k][a] - mG[a] for a in range(d)] for k in range(K)]
    SB = mp.zeros(d, d)
    for k in range(K):
        for a in range(d):
            for b_ in range(d):
                SB[a, b_] += mc[k][a] * mc[k][b_]
    SB = SB / K
    return dict(mu=mu, n=n, mG=mG, SW=SW, SB=SB, v=v, mc=mc, K=K, d=d)


@functools.lru_cache(maxsize=None)
def mstats_M(name, gm="class_means"):
    """Centred rows of the float class means M handed to the peer (as the peer would get them):
    centre = mean row, or Σ n_k m_k / N (the sample mean) for gm = "samples"."""
    c = data(name)
    M = _mp_rows(_means(name))
    K, d = len(M), len(M[0])
    if gm == "class_means":
        centre = [mp.fsum(M[k][a] for k in range(K)) / K for a in range(d)]
    else:
        n = [int(t) for t in c["counts"]]
        centre = [mp.fsum(n[k] * M[k][a] for k in range(K)) / sum(n) for a in range(d)]
    return dict(M=M, mc=[[M[k][a] - centre[a] for a in range(d)] for k in range(K)], K=K, d=d)


def _trace(A):
    return mp.fsum(A[i, i] for i in range(A.rows))


def o_pinv_nc1(name, gm, rtol=None, top=None):
    """tr(Σ_W Σ_B⁺)/K with Σ_B⁺ from the eigenpairs of Σ_B: λ > rtol·λ_max, or the top `top` ones."""
    s = mstats(name, gm)
    E, Q = mp.eigsy(s["SB"])
    lam = [E[i] for i in range(s["d"])]
    lmax = max(lam)
    order = sorted(range(s["d"]), key=lambda i: -lam[i])
    keep = order[:top] if top is not None else [i for i in order if lam[i] > rtol * lmax]
    tot = mp.mpf(0)
    for i in keep:
        q = [Q[a, i] for a in range(s["d"])]
        quad = mp.fsum(q[a] * s["SW"][a, b_] * q[b_] for a in range(s["d"]) for b_ in range(s["d"]))
        tot += quad / lam[i]
    return tot / s["K"]


def o_trace_fraction(name, gm, which):
    s = mstats(name, gm)
    tw, tb = _trace(s["SW"]), _trace(s["SB"])
    return {"ratio": tw / tb, "between": tb / (tb + tw), "within": tw / (tb + tw)}[which]


def _pairs(K):
    return [(i, j) for i in range(K) for j in range(i + 1, K)]


def _norm(x):
    return mp.sqrt(mp.fsum(t * t for t in x))


def _reduce(xs, how, ddof=0):
    m = mp.fsum(xs) / len(xs)
    if how == "mean":
        return m
    var = mp.fsum((x - m) ** 2 for x in xs) / (len(xs) - ddof)
    return var if how == "var" else mp.sqrt(var) / m


def o_cdnv_pairs(name, ddof=0, p=1):
    s = mstats(name, "class_means", ddof)
    out = {}
    for i, j in _pairs(s["K"]):
        dist2 = mp.fsum((s["mu"][i][a] - s["mu"][j][a]) ** 2 for a in range(s["d"]))
        out[i, j] = (s["v"][i] + s["v"][j]) / 2 / dist2**p
    return out


def _unit_rows(rows):
    return [[t / _norm(r) for t in r] for r in rows]


def _centred_means(name, gm):
    return mstats_M(name, gm)["mc"]


def o_kernel(name, gm, kernel):
    s = mstats_M(name, gm)
    u = _unit_rows(s["mc"])
    S = s["d"] - 2
    vals = []
    for i, j in _pairs(s["K"]):
        dist = _norm([u[i][a] - u[j][a] for a in range(s["d"])])
        if kernel == "distance":
            vals.append(dist)
        elif kernel == "log":
            vals.append(mp.log(1 / dist))
        else:
            vals.append(mp.mpf(math.copysign(1, S)) * dist ** (-S))
    return vals


def _mp_rows(A):
    return [[mp.mpf(float(t)) for t in row] for row in A]


def _dot(a, b):
    return mp.fsum(x * y for x, y in zip(a, b))


def _cos(a, b):
    return _dot(a, b) / (_norm(a) * _norm(b))


def o_similarities(name, gm, cos, pairs):
    s = mstats(name, gm)
    W = _mp_rows(data(name)["W"])
    f = _cos if cos else _dot
    if pairs == "matching":
        return [f(W[k], s["mc"][k]) for k in range(s["K"])]
    return [f(W[i], s["mc"][j]) for i, j in _pairs(s["K"])]


def o_etf_error(A, B, K):
    """‖B Aᵀ/‖B Aᵀ‖_F − (I − 11ᵀ/K)/√(K−1)‖_F (rhubarbwu structure_error)."""
    G = [[_dot(B[i], A[j]) for j in range(K)] for i in range(K)]
    nG = mp.sqrt(mp.fsum(G[i][j] ** 2 for i in range(K) for j in range(K)))
    tot = mp.fsum(
        (G[i][j] / nG - ((1 if i == j else 0) - mp.mpf(1) / K) / mp.sqrt(K - 1)) ** 2
        for i in range(K)
        for j in range(K)
    )
    return mp.sqrt(tot)


def o_agreement(name, use_b, per_class=False):
    c, s = data(name), mstats(name)
    W, b = _mp_rows(c["W"]), [mp.mpf(float(t)) for t in c["b"]]
    K = c["K"]
    hits = [0] * K
    for i in range(len(c["y"])):
        h = [mp.mpf(float(t)) for t in c["H"][i]]
        lin = max(range(K), key=lambda k: _dot(W[k], h) + (b[k] if use_b else 0))
        ncc = min(range(K), key=lambda k: _norm([h[a] - s["mu"][k][a] for a in range(c["d"])]))
        hits[int(c["y"][i])] += lin == ncc
    if per_class:
        return mp.fsum(mp.mpf(hits[k]) / s["n"][k] for k in range(K)) / K
    return mp.mpf(sum(hits)) / len(c["y"])


def _means(name):
    return class_statistics(data(name)["H"], data(name)["y"]).means


# ------------------------------------------------------------------------------ the rows
# id -> (fctheory(case) -> float | array, oracle(case) -> mpf | list of mpf); the oracle is the peer's formula
ROWS = {}


def row(rid, applies=lambda name: True):
    def deco(pair):
        ROWS[rid] = (pair[0], pair[1], applies)
        return pair

    return deco


def _full_rank(name):
    return name not in ("rank_deficient", "subspace")


def _HY(name):
    c = data(name)
    return c["H"], c["y"]


row("RW-nc1-pinv")(
    (
        lambda n: nc1(*_HY(n), pinv_rtol=data(n)["d"] * EPS),
        lambda n: o_pinv_nc1(n, "class_means", rtol=data(n)["d"] * EPS),
    )
)
row("RW-nc1-pinv-weighted")(
    (
        lambda n: nc1(*_HY(n), pinv_rtol=data(n)["d"] * EPS, global_mean="samples"),
        lambda n: o_pinv_nc1(n, "samples", rtol=data(n)["d"] * EPS),
    )
)
row("RW-nc1-svd", _full_rank)(
    (lambda n: nc1(*_HY(n), rank="K-1"), lambda n: o_pinv_nc1(n, "class_means", top=data(n)["K"] - 1))
)
row("RW-nc1-quotient")(
    (lambda n: nc1(*_HY(n), variant="trace_ratio"), lambda n: o_trace_fraction(n, "class_means", "ratio"))
)
row("RW-cdnv")((lambda n: cdnv(*_HY(n)), lambda n: _reduce(list(o_cdnv_pairs(n).values()), "mean")))
row("RW-cdnv-exp")(
    (lambda n: cdnv(*_HY(n), dist_exp=1.5), lambda n: _reduce(list(o_cdnv_pairs(n, p=mp.mpf(1.5)).values()), "mean"))
)


def _grid(n):
    V = cdnv(*_HY(n), matrix=True, dist_exp=0.5)
    return [V[i, j] for i, j in _pairs(data(n)["K"])] + [V[j, i] for i, j in _pairs(data(n)["K"])]


row("RW-cdnv-grid")((_grid, lambda n: list(o_cdnv_pairs(n, p=mp.mpf(0.5)).values()) * 2))
row("RW-etf")(
    (
        lambda n: nc2(_means(n), variant="zhu"),
        lambda n: o_etf_error(_centred_means(n, "class_means"), _centred_means(n, "class_means"), data(n)["K"]),
    )
)
row("RW-dual")(
    (
        lambda n: nc3(data(n)["W"], *_HY(n), variant="etf"),
        lambda n: o_etf_error(mstats(n)["mc"], _mp_rows(data(n)["W"]), data(n)["K"]),
    )
)
for _k, _kn in (("dist", "distance"), ("log", "log"), ("riesz", "riesz")):
    for _r in ("mean", "var"):
        row(f"RW-{_k}-{_r}")(
            (
                lambda n, kn=_kn, r=_r: uniformity(_means(n), kernel=kn, reduction=r),
                lambda n, kn=_kn, r=_r: _reduce(o_kernel(n, "class_means", kn), r),
            )
        )
row("RW-unidual-dot")(
    (
        lambda n: uniform_duality(data(n)["W"], *_HY(n), cos=False, reduction="var", ddof=1),
        lambda n: _reduce(o_similarities(n, "class_means", False, "matching"), "var", 1),
    )
)
row("RW-unidual-cos")(
    (
        lambda n: uniform_duality(data(n)["W"], *_HY(n), reduction="var", ddof=1),
        lambda n: _reduce(o_similarities(n, "class_means", True, "matching"), "var", 1),
    )
)
row("RW-agree")((lambda n: 1 - nc4(data(n)["W"], *_HY(n), means=_means(n)), lambda n: o_agreement(n, False)))
row("RW-agree-classes")(
    (
        lambda n: 1 - nc4(data(n)["W"], *_HY(n), means=_means(n), average="classes"),
        lambda n: o_agreement(n, False, per_class=True),
    )
)
row("RW-nc5")(
    (
        lambda n: nc5(_means(n), ood_mean=data(n)["ood"]),
        lambda n: (
            mp.fsum(abs(_cos(m, [mp.mpf(float(t)) for t in data(n)["ood"]])) for m in mstats_M(n)["M"]) / data(n)["K"]
        ),
    )
)
row("RW-varnorm")((lambda n: list(class_statistics(*_HY(n)).class_var), lambda n: mstats(n)["v"]))


def _flat(A):
    return [A[i, j] for i in range(A.rows) for j in range(A.cols)] if isinstance(A, mp.matrix) else list(np.ravel(A))


row("RW-covar")((lambda n: _flat(class_statistics(*_HY(n)).sigma_W), lambda n: _flat(mstats(n)["SW"])))
row("NT-nc1-strong")(
    (
        lambda n: nc1(*_HY(n), global_mean="samples", pinv_rtol=1e-15),
        lambda n: o_pinv_nc1(n, "samples", rtol=mp.mpf("1e-15")),
    )
)
row("NT-nc1-weak-between")(
    (
        lambda n: nc1(*_HY(n), variant="between_fraction", global_mean="samples"),
        lambda n: o_trace_fraction(n, "samples", "between"),
    )
)
row("NT-nc1-weak-within")(
    (
        lambda n: nc1(*_HY(n), variant="within_fraction", global_mean="samples"),
        lambda n: o_trace_fraction(n, "samples", "within"),
    )
)
row("NT-cdnv")((lambda n: cdnv(*_HY(n), ddof=1), lambda n: _reduce(list(o_cdnv_pairs(n, ddof=1).values()), "mean")))
row("NT-cdnv-cov")(
    (lambda n: cdnv(*_HY(n), ddof=1, reduction="cv"), lambda n: _reduce(list(o_cdnv_pairs(n, ddof=1).values()), "cv"))
)


def _logdiffs(n):
    s = mstats_M(n, "samples")
    ln = [mp.log(_norm(r)) for r in s["mc"]]
    return [ln[i] - ln[j] for i, j in _pairs(s["K"])]


_C = lambda n: data(n)["counts"]  # noqa: E731
row("NT-equinorm")(
    (
        lambda n: equinorm(_means(n), counts=_C(n), log=True, pairs=True, reduction="mean"),
        lambda n: _reduce(_logdiffs(n), "mean"),
    )
)
row("NT-equinorm-cov")(
    (lambda n: equinorm(_means(n), counts=_C(n), log=True, pairs=True), lambda n: _reduce(_logdiffs(n), "cv"))
)


def _shifted_cos(n):
    s = mstats_M(n, "samples")
    return [_cos(s["mc"][i], s["mc"][j]) + mp.mpf(1) / (s["K"] - 1) for i, j in _pairs(s["K"])]


row("NT-equiangle")(
    (
        lambda n: equiangularity(_means(n), variant="shifted_mean", counts=_C(n)),
        lambda n: _reduce(_shifted_cos(n), "mean"),
    )
)
row("NT-equiangle-cov")(
    (lambda n: equiangularity(_means(n), variant="shifted_cv", counts=_C(n)), lambda n: _reduce(_shifted_cos(n), "cv"))
)
row("NT-gnc2")(
    (
        lambda n: uniformity(_means(n), reduction="mean", counts=_C(n)),
        lambda n: _reduce(o_kernel(n, "samples", "log"), "mean"),
    )
)
row("NT-gnc2-cov")(
    (
        lambda n: uniformity(_means(n), reduction="cv", counts=_C(n)),
        lambda n: _reduce(o_kernel(n, "samples", "log"), "cv"),
    )
)


def _selfdual(n):
    s = mstats(n, "samples")
    W = _mp_rows(data(n)["W"])
    nW = mp.sqrt(mp.fsum(t * t for r in W for t in r))
    nM = mp.sqrt(mp.fsum(t * t for r in s["mc"] for t in r))
    return mp.sqrt(mp.fsum((W[k][a] / nW - s["mc"][k][a] / nM) ** 2 for k in range(s["K"]) for a in range(s["d"])))


row("NT-nc3")((lambda n: nc3(data(n)["W"], *_HY(n), global_mean="samples"), _selfdual))
row("NT-unc3")(
    (
        lambda n: uniform_duality(data(n)["W"], *_HY(n), pairs="upper", reduction="mean", global_mean="samples"),
        lambda n: _reduce(o_similarities(n, "samples", True, "upper"), "mean"),
    )
)
row("NT-unc3-cov")(
    (
        lambda n: uniform_duality(data(n)["W"], *_HY(n), pairs="upper", global_mean="samples"),
        lambda n: _reduce(o_similarities(n, "samples", True, "upper"), "cv"),
    )
)
row("NT-agree")(
    (lambda n: 1 - nc4(data(n)["W"], *_HY(n), b=data(n)["b"], means=_means(n)), lambda n: o_agreement(n, True))
)
row("NT-sigma-b")(
    (
        lambda n: _flat(class_statistics(*_HY(n), global_mean="samples").sigma_B),
        lambda n: _flat(mstats(n, "samples")["SB"]),
    )
)
row("NT-sigma-w")((lambda n: _flat(class_statistics(*_HY(n)).sigma_W), lambda n: _flat(mstats(n)["SW"])))
row("NT-classvar")((lambda n: list(class_statistics(*_HY(n), ddof=1).class_var), lambda n: mstats(n, ddof=1)["v"]))
row("PAPER-papyan")((lambda n: nc1(*_HY(n)), lambda n: o_pinv_nc1(n, "class_means", rtol=mp.mpf("1e-30"))))


def _logcv(n):
    return _reduce([mp.log(_norm(r)) for r in mstats_M(n)["mc"]], "cv")


row("PAPER-logequinorm")((lambda n: equinorm(_means(n), log=True), _logcv))
row("PAPER-unc3")(
    (
        lambda n: uniform_duality(data(n)["W"], *_HY(n)),
        lambda n: _reduce(o_similarities(n, "class_means", True, "matching"), "cv"),
    )
)


# ------------------------------------------------------------------------------ the tests
def _close(got, want):
    if isinstance(want, list):
        assert len(got) == len(want)
        scale = max(abs(w) for w in want)
        for g, w in zip(got, want):
            # matrices: each entry to 1e-12 relative, entries far below the largest to 1e-12 of it
            assert abs(mp.mpf(float(g)) - w) <= REL * max(abs(w), mp.mpf("1e-4") * scale), (g, w)
        return
    assert abs(mp.mpf(float(got)) - want) <= REL * abs(want) + 1e-300, (got, float(want))


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("rid", sorted(ROWS))
def test_peer_formula_reproduced(rid, case):
    fct, oracle, applies = ROWS[rid]
    if not applies(case):
        # the peer divides by a zero eigenvalue here (rank Σ_B < K − 1): fctheory refuses instead
        with pytest.raises(FCTheoryError, match="rank"):
            fct(case)
        return
    _close(fct(case), oracle(case))


def _table_ids():
    ids = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^\|\s*([A-Z]+-[A-Za-z0-9-]+)\s*\|", line)
        if m:
            ids.append(m.group(1))
    return ids


def test_every_table_row_has_a_test_and_every_test_a_row():
    ids = _table_ids()
    assert len(ids) == len(set(ids)), "duplicate ids in docs/metrics-peers.md"
    assert set(ids) == set(ROWS), (sorted(set(ids) - set(ROWS)), sorted(set(ROWS) - set(ids)))


def _np_means(H, y):
    return np.stack([H[y == k].mean(axis=0) for k in range(int(y.max()) + 1)])


SCALE_INVARIANT = [
    lambda H, y, W: nc1(H, y, variant="within_fraction", global_mean="samples"),
    lambda H, y, W: nc1(H, y, pinv_rtol=1e-15, global_mean="samples"),
    lambda H, y, W: nc1(H, y, rank="K-1"),
    lambda H, y, W: cdnv(H, y, ddof=1, reduction="cv"),
    lambda H, y, W: cdnv(H, y, ddof=1),
    lambda H, y, W: uniform_duality(W, H, y, pairs="upper"),
    lambda H, y, W: nc3(W, H, y, global_mean="samples"),
    lambda H, y, W: uniformity(_np_means(H, y), kernel="riesz", reduction="cv"),
    lambda H, y, W: equiangularity(_np_means(H, y), variant="shifted_cv", counts=np.bincount(y)),
    lambda H, y, W: nc2(_np_means(H, y), variant="zhu", counts=np.bincount(y)),
    lambda H, y, W: nc5(_np_means(H, y), ood_mean=W[0]),
]


@pytest.mark.parametrize("i", range(len(SCALE_INVARIANT)))
def test_scale_invariant_variants_survive_extreme_scales(i):
    c = data("random")
    f = SCALE_INVARIANT[i]
    ref = f(c["H"], c["y"], c["W"])
    for s in (1e300, 1e-300):
        assert f(c["H"] * s, c["y"], c["W"] * s) == pytest.approx(ref, rel=1e-13)


def test_dot_product_duality_scales_with_the_product_of_scales():
    c = data("random")
    ref = uniform_duality(c["W"], c["H"], c["y"], cos=False, reduction="var", ddof=1)
    got = uniform_duality(c["W"] * 2.0**-300, c["H"] * 2.0**-200, c["y"], cos=False, reduction="var", ddof=1)
    assert got == pytest.approx(ref * 2.0 ** (-1000), rel=1e-13)


def test_log_equinorm_shifts_by_log_scale_not_invariant():
    M = _means("random")
    ref = equinorm(M, log=True, reduction="mean")
    assert equinorm(M * 2.0**700, log=True, reduction="mean") == pytest.approx(ref + 700 * math.log(2), rel=1e-13)


def test_unbiased_class_variance_needs_two_samples():
    H = np.arange(12.0).reshape(4, 3)
    with pytest.raises(FCTheoryError, match="^ddof=1"):
        cdnv(H, np.array([0, 1, 1, 1]), ddof=1)
