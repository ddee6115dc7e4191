"""``fctheory.trainer.data``: the configuration, the sentences, the initial weights and the shuffles of a run,
each a function of its seed through the documented independent streams."""

import math

import numpy as np
import pytest

from fctheory import FCTheoryError, Task
from fctheory.trainer.data import (
    CONFIG_KINDS,
    TrainConfig,
    TrainData,
    check_data,
    epoch_permutation,
    init_weights,
    int_seed,
    make_data,
)

TASK = Task.random(3, 4, 2, 5, seed=0, mu="zipf")


# ------------------------------------------------------------------ TrainConfig
def test_config_defaults_and_dict_round_trip():
    cfg = TrainConfig(n_spl=10)
    assert cfg.to_dict() == {
        "n_spl": 10, "d": 100, "layernorm": False, "eps": 1e-5, "lr": 0.1, "batch": 100, "epochs": 100,
        "lam_W": 1e-3, "lam_U": 1e-3, "seed": 0, "backend": "numba", "dtype": "float32", "init_scale": 1e-3,
        "n_test": 5, "eval_every": None,
    }  # fmt: skip
    assert TrainConfig(**cfg.to_dict()) == cfg


def test_config_fields_are_the_declared_kinds():
    assert set(CONFIG_KINDS) == set(TrainConfig(n_spl=1).to_dict())


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("n_spl", 0),
        ("d", 0),
        ("lr", 0.0),
        ("lr", float("nan")),
        ("eps", -1e-9),
        ("batch", 0),
        ("epochs", -1),
        ("lam_W", -0.1),
        ("seed", -1),
        ("seed", 2**63),
        ("backend", "jax"),
        ("dtype", "float16"),
        ("init_scale", 0.0),
        ("init_scale", 2e6),
        ("eval_every", 0),
        ("layernorm", "yes"),
    ],
)
def test_config_refuses_bad_fields_naming_them(field, value):
    kw = {"n_spl": 5, field: value}
    with pytest.raises(FCTheoryError, match=rf"\b{field}\b"):
        TrainConfig(**kw)


def test_config_accepts_numpy_dtypes_as_names():
    assert TrainConfig(n_spl=1, dtype=np.float64).dtype == "float64"
    assert TrainConfig(n_spl=1, dtype=np.dtype("float32")).dtype == "float32"


def test_config_layernorm_without_eps_needs_two_dimensions():
    with pytest.raises(FCTheoryError, match=r"^d\b.*LayerNorm"):
        TrainConfig(n_spl=1, d=1, layernorm=True, eps=0.0)
    assert TrainConfig(n_spl=1, d=2, layernorm=True, eps=0.0).d == 2
    assert TrainConfig(n_spl=1, d=1, layernorm=True, eps=1e-5).d == 1


# ------------------------------------------------------------------ make_data
def test_make_data_shapes_and_labels():
    data = make_data(TASK, n_spl=3, seed=4, n_test=2)
    assert data.X_train.shape == (TASK.K * 3, TASK.L) and data.X_test.shape == (TASK.K * 2, TASK.L)
    np.testing.assert_array_equal(data.y_train, np.repeat(np.arange(TASK.K), 3))
    np.testing.assert_array_equal(data.y_test, np.repeat(np.arange(TASK.K), 2))
    assert data.X_train.dtype == np.int64 and data.y_train.dtype == np.int64


def test_make_data_equals_task_sample_on_the_documented_streams():
    data = make_data(TASK, n_spl=7, seed=11, n_test=3)
    X, y = TASK.sample(7, seed=np.random.default_rng([11, 1]))
    Xt, yt = TASK.sample(3, seed=np.random.default_rng([11, 2]))
    for got, want in ((data.X_train, X), (data.y_train, y), (data.X_test, Xt), (data.y_test, yt)):
        np.testing.assert_array_equal(got, want)


def test_make_data_words_belong_to_the_class_concepts():
    data = make_data(TASK, n_spl=6, seed=2)
    np.testing.assert_array_equal(data.X_train // TASK.s_c, TASK.Z[data.y_train])


def test_make_data_is_deterministic_by_seed():
    a, b, c = (make_data(TASK, n_spl=20, seed=s) for s in (5, 5, 6))
    np.testing.assert_array_equal(a.X_train, b.X_train)
    np.testing.assert_array_equal(a.X_test, b.X_test)
    assert not np.array_equal(a.X_train, c.X_train)


def test_make_data_test_set_does_not_depend_on_n_spl():
    np.testing.assert_array_equal(
        make_data(TASK, n_spl=2, seed=3, n_test=4).X_test, make_data(TASK, n_spl=9, seed=3, n_test=4).X_test
    )


def test_make_data_without_test_sentences():
    data = make_data(TASK, n_spl=2, seed=0, n_test=0)
    assert data.X_test.shape == (0, TASK.L) and data.y_test.shape == (0,)


def test_make_data_refuses_bad_arguments():
    with pytest.raises(FCTheoryError, match="n_spl"):
        make_data(TASK, n_spl=0, seed=0)
    with pytest.raises(FCTheoryError, match="task"):
        make_data("not a task", n_spl=1, seed=0)
    with pytest.raises(FCTheoryError, match="n_spl"):
        make_data(Task.full(10, 1000, 4), n_spl=10**9, seed=0)  # over the memory budget


# ------------------------------------------------------------------ TrainData / check_data
def test_train_data_needs_one_label_per_row():
    with pytest.raises(FCTheoryError, match="y_train"):
        TrainData(np.zeros((3, 2), int), np.zeros(2, int), np.zeros((0, 2), int), np.zeros(0, int))
    with pytest.raises(FCTheoryError, match="X_test"):
        TrainData(np.zeros((3, 2), int), np.zeros(3, int), np.zeros((1, 3), int), np.zeros(1, int))


def test_check_data_refuses_sentences_of_another_task():
    data = make_data(TASK, n_spl=2, seed=0)
    check_data(TASK, data)
    with pytest.raises(FCTheoryError, match=r"(?s)^data=.*L = 3 words"):
        check_data(Task.full(3, 4, 3), data)
    with pytest.raises(FCTheoryError, match=r"word indices must be < n_w = 6"):
        check_data(Task.full(3, 2, 2), data)
    with pytest.raises(FCTheoryError, match=r"labels must be < K = 2"):
        check_data(Task(3, 4, 2, TASK.Z[:2]), data)


# ------------------------------------------------------------------ init_weights
def test_init_weights_shapes_and_dtype():
    E, U = init_weights(TASK, d=6, seed=0, dtype="float32")
    assert E.shape == (TASK.n_w, 6) and U.shape == (TASK.K, TASK.L * 6)
    assert E.dtype == np.float32 and U.dtype == np.float32


def test_init_weights_equal_the_documented_stream():
    d, s = 5, 0.3
    E, U = init_weights(TASK, d=d, seed=9, init_scale=s)
    rng = np.random.default_rng([9, 3])
    np.testing.assert_array_equal(E, rng.standard_normal((TASK.n_w, d)) * s)
    bound = 1.0 / math.sqrt(TASK.L * d)
    np.testing.assert_array_equal(U, rng.uniform(-bound, bound, (TASK.K, TASK.L * d)) * s)


def test_init_weights_scale_statistics():
    task, d, s = Task.full(4, 50, 2), 40, 0.01
    E, U = init_weights(task, d=d, seed=1, init_scale=s)
    # E ~ N(0, s²): the sample std of 8000 draws is within 5 % of s; U within ±s/√(Ld), std s/√(3Ld)
    assert E.std() == pytest.approx(s, rel=0.05)
    assert np.abs(U).max() <= s / math.sqrt(task.L * d)
    assert U.std() == pytest.approx(s / math.sqrt(3 * task.L * d), rel=0.05)


def test_init_weights_is_deterministic_by_seed_and_cast_from_float64():
    E1, U1 = init_weights(TASK, d=3, seed=2)
    E2, U2 = init_weights(TASK, d=3, seed=2)
    E3, _ = init_weights(TASK, d=3, seed=3)
    E32, U32 = init_weights(TASK, d=3, seed=2, dtype=np.float32)
    np.testing.assert_array_equal(E1, E2)
    np.testing.assert_array_equal(U1, U2)
    assert not np.array_equal(E1, E3)
    np.testing.assert_array_equal(E32, E1.astype(np.float32))
    np.testing.assert_array_equal(U32, U1.astype(np.float32))


def test_init_weights_independent_of_data_stream():
    # same seed: the weights' stream [seed, 3] differs from the sentences' stream [seed, 1]
    E, _ = init_weights(TASK, d=3, seed=0, init_scale=1.0)
    assert not np.array_equal(E[:, 0], np.random.default_rng([0, 1]).standard_normal(TASK.n_w))


def test_init_weights_refuses_bad_arguments():
    for kw, name in ((dict(d=0), "d"), (dict(init_scale=0.0), "init_scale"), (dict(dtype="int8"), "dtype")):
        with pytest.raises(FCTheoryError, match=rf"\b{name}\b"):
            init_weights(TASK, seed=0, **{"d": 3, **kw})


# ------------------------------------------------------------------ epoch_permutation
def test_epoch_permutation_is_a_permutation():
    p = epoch_permutation(seed=3, epoch=2, n=257)
    np.testing.assert_array_equal(np.sort(p), np.arange(257))


def test_epoch_permutation_depends_on_seed_and_epoch_only():
    p = epoch_permutation(seed=3, epoch=2, n=100)
    np.testing.assert_array_equal(p, np.random.default_rng([3, 4, 2]).permutation(100))
    make_data(TASK, n_spl=2, seed=3)  # drawing anything else in between changes nothing
    np.testing.assert_array_equal(p, epoch_permutation(seed=3, epoch=2, n=100))
    assert not np.array_equal(p, epoch_permutation(seed=3, epoch=3, n=100))
    assert not np.array_equal(p, epoch_permutation(seed=4, epoch=2, n=100))


def test_epoch_permutation_of_nothing_is_empty():
    assert epoch_permutation(seed=0, epoch=0, n=0).shape == (0,)


def test_epoch_permutation_legacy_positional_call_warns():
    with pytest.warns(DeprecationWarning):
        p = epoch_permutation(1, 0, 10)
    np.testing.assert_array_equal(p, epoch_permutation(seed=1, epoch=0, n=10))


def test_epoch_permutation_refuses_negative_epoch():
    with pytest.raises(FCTheoryError, match="epoch"):
        epoch_permutation(seed=0, epoch=-1, n=3)


# ------------------------------------------------------------------ int_seed
def test_int_seed_forms():
    assert int_seed(17) == 17
    g1, g2 = np.random.default_rng(5), np.random.default_rng(5)
    assert int_seed(g1) == int(g2.integers(0, 2**63 - 1))
    s = int_seed(None)
    assert isinstance(s, int) and 0 <= s < 2**63 - 1
