"""Invalid arguments raise FCTheoryError naming the parameter."""

import pytest

from fctheory import FCTheoryError, Task, train

TASK = Task.random(3, 2, 2, 4, seed=0)


@pytest.mark.parametrize(
    "kw,name",
    [
        (dict(n_spl=0), "n_spl"),
        (dict(n_spl=2, d=0), "d"),
        (dict(n_spl=2, lr=0.0), "lr"),
        (dict(n_spl=2, lr=float("nan")), "lr"),
        (dict(n_spl=2, batch=0), "batch"),
        (dict(n_spl=2, epochs=-1), "epochs"),
        (dict(n_spl=2, lam_W=-1e-3), "lam_W"),
        (dict(n_spl=2, lam_U="x"), "lam_U"),
        (dict(n_spl=2, seed=-1), "seed"),
        (dict(n_spl=2, backend="torch"), "backend"),
        (dict(n_spl=2, dtype="float16"), "dtype"),
        (dict(n_spl=2, eps=-1.0), "eps"),
        (dict(n_spl=2, layernorm="yes"), "layernorm"),
        (dict(n_spl=2, init_scale=0.0), "init_scale"),
        (dict(n_spl=2, checkpoint_every=2), "checkpoint_every"),
        (dict(n_spl=2, callback=3), "callback"),
    ],
)
def test_invalid_arguments_raise_named_errors(kw, name):
    with pytest.raises(FCTheoryError, match=name):
        train(TASK, **kw, measure=False)


def test_task_must_be_a_task():
    with pytest.raises(FCTheoryError, match="task"):
        train("fig3", n_spl=5)


def test_divergence_is_reported():
    with pytest.raises(FCTheoryError, match="diverged"):
        train(TASK, n_spl=5, d=4, lr=1e30, init_scale=1.0, epochs=10, measure=False, backend="numpy", dtype="float64")


def test_cupy_backend_without_cupy_is_a_named_error():
    try:
        import cupy  # noqa: F401

        pytest.skip("CuPy is installed here")
    except ImportError:
        pass
    with pytest.raises(FCTheoryError, match="backend"):
        train(TASK, n_spl=2, d=3, backend="cupy", epochs=1, measure=False)
