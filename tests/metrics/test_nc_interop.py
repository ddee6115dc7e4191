"""The NC metrics on arrays of other libraries: PyTorch tensors (CPU, CUDA) and CuPy arrays give NumPy's
numbers, computed on the input's device in float64, with array results in the input's library."""

import math
from dataclasses import dataclass

import numpy as np
import pytest

from fctheory import FCTheoryError
from fctheory.metrics import (
    NCAccumulator,
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

RTOL = 1e-12


@dataclass
class Data:
    H: np.ndarray
    y: np.ndarray
    W: np.ndarray
    b: np.ndarray
    ood: np.ndarray
    counts: np.ndarray

    @property
    def means(self):
        return np.stack([self.H[self.y == k].mean(axis=0) for k in range(self.W.shape[0])])


def _data(seed, K, d, balanced, spread):
    """Seeded features around K random class centres; ``spread`` 1e-6 gives nearly collapsed classes."""
    rng = np.random.default_rng(seed)
    n = rng.integers(2, 6, size=K) if not balanced else np.full(K, 4)
    y = rng.permutation(np.repeat(np.arange(K), n))
    centres = 3.0 * rng.standard_normal((K, d)) + rng.standard_normal(d)
    H = centres[y] + spread * rng.standard_normal((y.size, d))
    W = rng.standard_normal((K, d))
    return Data(H, y, W, rng.standard_normal(K), rng.standard_normal(d), n.astype(np.int64))


# K = 4..10, d = 3..50, balanced and unbalanced, random and nearly collapsed (d < K − 1 included)
CASES = [
    _data(0, 4, 3, True, 1.0),
    _data(1, 6, 12, False, 1.0),
    _data(2, 10, 50, False, 1e-6),
    _data(3, 5, 8, True, 1e-6),
    _data(4, 10, 5, False, 0.5),
]

# every public metric of fctheory.metrics.nc and the options that change the computation
CALLS = {
    "class_statistics": lambda a, D: class_statistics(a(D.H), a(D.y)),
    "class_statistics_samples_ddof1": lambda a, D: class_statistics(a(D.H), a(D.y), global_mean="samples", ddof=1),
    "nc1_papyan": lambda a, D: nc1(a(D.H), a(D.y)),
    "nc1_papyan_samples": lambda a, D: nc1(a(D.H), a(D.y), global_mean="samples"),
    "nc1_pinv_rtol": lambda a, D: nc1(a(D.H), a(D.y), pinv_rtol=1e-10),
    "nc1_rank_K-1": lambda a, D: nc1(a(D.H), a(D.y), rank="K-1"),
    "nc1_trace_ratio": lambda a, D: nc1(a(D.H), a(D.y), variant="trace_ratio"),
    "nc1_within_fraction": lambda a, D: nc1(a(D.H), a(D.y), variant="within_fraction"),
    "nc1_between_fraction": lambda a, D: nc1(a(D.H), a(D.y), variant="between_fraction", global_mean="samples"),
    "cdnv": lambda a, D: cdnv(a(D.H), a(D.y)),
    "cdnv_matrix": lambda a, D: cdnv(a(D.H), a(D.y), matrix=True),
    "cdnv_ddof1_p": lambda a, D: cdnv(a(D.H), a(D.y), ddof=1, dist_exp=0.75),
    "cdnv_cv": lambda a, D: cdnv(a(D.H), a(D.y), reduction="cv"),
    "nc2_etf": lambda a, D: nc2(a(D.means)),
    "nc2_identity": lambda a, D: nc2(a(D.W), variant="identity", center=False),
    "nc2_zhu_counts": lambda a, D: nc2(a(D.means), variant="zhu", counts=a(D.counts)),
    "nc2_cosine": lambda a, D: nc2(a(D.means), variant="cosine"),
    "nc3_duality": lambda a, D: nc3(a(D.W), a(D.H), a(D.y)),
    "nc3_duality_squared": lambda a, D: nc3(a(D.W), a(D.H), a(D.y), variant="duality_squared", global_mean="samples"),
    "nc3_etf": lambda a, D: nc3(a(D.W), a(D.H), a(D.y), variant="etf"),
    "nc3_cosine": lambda a, D: nc3(a(D.W), a(D.H), a(D.y), variant="cosine"),
    "nc4": lambda a, D: nc4(a(D.W), a(D.H), a(D.y)),
    "nc4_bias_classes": lambda a, D: nc4(a(D.W), a(D.H), a(D.y), b=a(D.b), average="classes"),
    "nc4_means": lambda a, D: nc4(a(D.W), a(D.H), a(D.y), means=a(D.means)),
    "nc5": lambda a, D: nc5(a(D.means), a(D.ood)),
    "equinorm": lambda a, D: equinorm(a(D.means)),
    "equinorm_log_pairs": lambda a, D: equinorm(a(D.means), log=True, pairs=True, reduction="mean"),
    "equinorm_mean_counts": lambda a, D: equinorm(a(D.means), counts=a(D.counts), reduction="mean"),
    "equiangularity_max_angle": lambda a, D: equiangularity(a(D.means)),
    "equiangularity_std": lambda a, D: equiangularity(a(D.means), variant="std"),
    "equiangularity_shifted_cv": lambda a, D: equiangularity(a(D.means), variant="shifted_cv"),
    "uniformity_log_var": lambda a, D: uniformity(a(D.means)),
    "uniformity_distance_mean": lambda a, D: uniformity(a(D.means), kernel="distance", reduction="mean"),
    "uniformity_riesz_cv": lambda a, D: uniformity(a(D.means), kernel="riesz", reduction="cv"),
    "uniform_duality": lambda a, D: uniform_duality(a(D.W), a(D.H), a(D.y)),
    "uniform_duality_dot_var": lambda a, D: uniform_duality(a(D.W), a(D.H), a(D.y), cos=False, reduction="var"),
    "uniform_duality_upper_mean": lambda a, D: uniform_duality(a(D.W), a(D.H), a(D.y), pairs="upper", reduction="mean"),
}


def _host(x, backend):
    """x as NumPy, after checking it is a Python float or an array of ``backend`` on its device."""
    if isinstance(x, float):
        return x
    assert backend.owns(x), f"{type(x).__module__}.{type(x).__name__} is not a {backend} array"
    return np.asarray(x.get() if backend.name == "cupy" else x.cpu().numpy() if backend.name != "numpy" else x)


def _fields(st):
    return {k: getattr(st, k) for k in ("means", "global_mean", "sigma_W", "sigma_B", "class_var")}


def _assert_same(got, want, backend, what, rtol=RTOL):
    """``got`` (of ``backend``) equals the NumPy result ``want`` to rtol, relative to want's largest entry."""
    if hasattr(want, "sigma_W"):
        assert isinstance(got.counts, np.ndarray) and np.array_equal(got.counts, want.counts), what
        for k, w in _fields(want).items():
            _assert_same(getattr(got, k), w, backend, f"{what}.{k}", rtol)
        return
    if isinstance(want, float):
        assert type(got) is float, f"{what}: got {type(got).__name__}, not a Python float"
        assert math.isclose(got, want, rel_tol=rtol, abs_tol=rtol * 1e-3), f"{what}: {got!r} != {want!r}"
        return
    g = _host(got, backend)
    scale = float(np.max(np.abs(want))) or 1.0
    np.testing.assert_allclose(g, want, rtol=0, atol=rtol * scale, err_msg=what)


def _outcome(fn):
    try:
        return fn(), None
    except FCTheoryError as exc:
        return None, str(exc)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_float64_input_gives_numpys_numbers_on_the_inputs_device(array_backend, name):
    for i, D in enumerate(CASES):
        want, werr = _outcome(lambda D=D: CALLS[name](np.asarray, D))
        got, gerr = _outcome(lambda D=D: CALLS[name](array_backend.asarray, D))
        assert gerr == werr, f"case {i}: refusals differ"
        if werr is None:
            _assert_same(got, want, array_backend, f"{name}, case {i}")


@pytest.mark.parametrize("name", sorted(CALLS))
def test_float32_input_accumulates_in_float64(array_backend, name):
    """float32 input = NumPy on the same (float32-rounded) values in float64, to float64 accuracy."""

    def a32(x):
        x = np.asarray(x)
        return array_backend.asarray(x, np.float32 if x.dtype.kind == "f" else None)

    def r32(x):
        x = np.asarray(x)
        return x.astype(np.float32).astype(np.float64) if x.dtype.kind == "f" else x

    for i, D in enumerate(CASES[:2]):
        want, werr = _outcome(lambda D=D: CALLS[name](r32, D))
        got, gerr = _outcome(lambda D=D: CALLS[name](a32, D))
        assert gerr == werr, f"case {i}: refusals differ"
        if werr is None:
            _assert_same(got, want, array_backend, f"{name}, case {i}")


def test_float32_features_with_a_large_offset_keep_their_class_structure(array_backend):
    # classes 0.25 apart on top of an offset 4096: a float32 accumulation of the means would round them
    # (ulp(4096) in float32 is 2^-11), and the within-class variance 2^-16 would be lost entirely
    rng = np.random.default_rng(7)
    K, d = 4, 6
    y = np.repeat(np.arange(K), 8)
    H = 4096.0 + 0.25 * rng.integers(-4, 5, size=(K, d))[y] + 2.0**-8 * rng.integers(-1, 2, size=(y.size, d))
    H32 = H.astype(np.float32)
    assert np.array_equal(H32.astype(np.float64), H)  # the data are exact in float32
    for fn in (lambda X: nc1(X, y), lambda X: cdnv(X, y), lambda X: nc1(X, y, variant="trace_ratio")):
        assert math.isclose(fn(array_backend.asarray(H32)), fn(H), rel_tol=RTOL)
    st = class_statistics(array_backend.asarray(H32), y)
    np.testing.assert_allclose(_host(st.sigma_W, array_backend), class_statistics(H, y).sigma_W, rtol=0, atol=1e-17)
    assert str(st.sigma_W.dtype).endswith("float64")


def test_labels_and_classifier_may_come_from_another_library(array_backend):
    D = CASES[1]
    H = array_backend.asarray(D.H)
    assert math.isclose(nc3(D.W, H, D.y), nc3(D.W, D.H, D.y), rel_tol=RTOL)
    assert math.isclose(nc4(D.W, H, D.y, b=D.b), nc4(D.W, D.H, D.y, b=D.b), rel_tol=RTOL)
    assert math.isclose(nc1(D.H, array_backend.asarray(D.y)), nc1(D.H, D.y), rel_tol=RTOL)


def _accumulate(D, convert, batch=7, **kw):
    acc = NCAccumulator(K=D.W.shape[0], d=D.H.shape[1], **kw)
    for i in range(0, D.y.size, batch):
        acc.update(convert(D.H[i : i + batch]), convert(D.y[i : i + batch]))
    return acc


ACC_CALLS = {
    "nc1": lambda acc, a, D: acc.nc1(),
    "nc1_trace_ratio_samples": lambda acc, a, D: acc.nc1(variant="trace_ratio", global_mean="samples"),
    "cdnv": lambda acc, a, D: acc.cdnv(),
    "cdnv_matrix_ddof1": lambda acc, a, D: acc.cdnv(matrix=True, ddof=1, dist_exp=0.5),
    "nc2": lambda acc, a, D: acc.nc2(),
    "nc3": lambda acc, a, D: acc.nc3(a(D.W)),
    "statistics": lambda acc, a, D: acc.statistics(global_mean="samples"),
}


@pytest.mark.parametrize("name", sorted(ACC_CALLS))
def test_accumulator_on_batches_of_another_library_gives_numpys_numbers(array_backend, name):
    for i, D in enumerate(CASES):
        want = ACC_CALLS[name](_accumulate(D, np.asarray), np.asarray, D)
        acc = _accumulate(D, array_backend.asarray)
        assert array_backend.owns(acc.mean)  # the statistics live on the batches' device
        _assert_same(ACC_CALLS[name](acc, array_backend.asarray, D), want, array_backend, f"{name}, case {i}")


def test_accumulator_keeps_the_trace_only_statistics_on_the_device(array_backend):
    D = CASES[2]
    acc = _accumulate(D, lambda x: array_backend.asarray(x, np.float32 if x.dtype.kind == "f" else None))
    want = _accumulate(D, lambda x: x.astype(np.float32).astype(np.float64) if x.dtype.kind == "f" else x)
    assert str(acc.mean.dtype).endswith("float64")
    assert math.isclose(acc.cdnv(), want.cdnv(), rel_tol=RTOL)
    slim = _accumulate(D, array_backend.asarray, full_scatter=False)
    assert array_backend.owns(slim.sq) and slim.scatter is None
    want = _accumulate(D, np.asarray, full_scatter=False)
    assert math.isclose(slim.nc1(variant="trace_ratio"), want.nc1(variant="trace_ratio"), rel_tol=RTOL)
    assert math.isclose(slim.cdnv(), want.cdnv(), rel_tol=RTOL)


@pytest.mark.parametrize(
    ("call", "param"),
    [
        (lambda a, D: nc1(a(np.where(D.H > 1, np.nan, D.H)), a(D.y)), "H"),
        (lambda a, D: nc1(a(D.H[:, 0]), a(D.y)), "H"),
        (lambda a, D: nc1(a(D.H > 0), a(D.y)), "H"),
        (lambda a, D: nc1(a(D.H), a(-D.y)), "y"),
        (lambda a, D: cdnv(a(D.H), a(D.y + 0.5)), "y"),
        (lambda a, D: nc3(a(D.W[:, 1:]), a(D.H), a(D.y)), "W"),
        (lambda a, D: nc4(a(D.W), a(D.H), a(D.y), b=a(D.b[1:])), "b"),
        (lambda a, D: nc5(a(D.means), a(D.ood[1:])), "ood_mean"),
        (lambda a, D: nc2(a(D.means), counts=a(D.counts[1:])), "counts"),
        (lambda a, D: NCAccumulator(K=6, d=12).update(a(D.H[:, 1:]), a(D.y)), "H"),
    ],
)
def test_bad_input_of_another_library_is_refused_naming_the_parameter(array_backend, call, param):
    with pytest.raises(FCTheoryError, match=rf"\b{param}\b"):
        call(array_backend.asarray, CASES[1])


def test_non_finite_features_of_another_library_are_refused_with_the_whole_message(array_backend):
    # NumPy data are checked entry by entry when the call is validated; tensors and CuPy arrays on their device
    H = np.where(CASES[1].H > 1, np.nan, CASES[1].H)
    msg = (
        r"^H=nan is invalid: must be finite \(entry"
        if array_backend.name == "numpy"
        else r"^H='array with non-finite entries' is invalid: must be finite$"
    )
    with pytest.raises(FCTheoryError, match=msg):
        nc1(array_backend.asarray(H), array_backend.asarray(CASES[1].y))


def test_an_accumulator_fed_one_batch_keeps_its_statistics_in_that_batchs_library(array_backend):
    D = CASES[1]
    acc = NCAccumulator(K=int(D.y.max()) + 1, d=D.H.shape[1]).update(
        array_backend.asarray(D.H), array_backend.asarray(D.y)
    )
    assert array_backend.owns(acc.mean) and array_backend.owns(acc.statistics().sigma_W)
