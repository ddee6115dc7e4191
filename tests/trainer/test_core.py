"""fctheory.trainer.core: data, initialisation, shuffles and one SGD step of train(), against hand computations
(the step's gradient by central finite differences of the minibatch cross-entropy written here)."""

import numpy as np
import pytest

import fctheory as fc
from fctheory.trainer import epoch_permutation, init_weights, make_data, train

TASK = fc.Task.full(2, 2, 2, mu="zipf")


def test_make_data_has_n_spl_then_n_test_sentences_per_class_of_the_task():
    data = make_data(TASK, n_spl=3, seed=4, n_test=2)
    assert np.array_equal(np.bincount(data.y_train, minlength=TASK.K), np.full(TASK.K, 3))
    assert np.array_equal(np.bincount(data.y_test, minlength=TASK.K), np.full(TASK.K, 2))
    # every word of a sentence of class k is a word of concept z_{k,ℓ} (word = concept·s_c + rank)
    assert np.array_equal(data.X_train // TASK.s_c, TASK.Z[data.y_train])
    assert np.array_equal(data.X_test // TASK.s_c, TASK.Z[data.y_test])


def test_make_data_is_a_function_of_the_seed():
    a, b, c = (make_data(TASK, n_spl=20, seed=s) for s in (1, 1, 2))
    assert np.array_equal(a.X_train, b.X_train) and np.array_equal(a.X_test, b.X_test)
    assert not np.array_equal(a.X_train, c.X_train)


def test_init_weights_scales_and_bounds():
    d, s = 50, 0.01
    E, U = init_weights(fc.Task.full(3, 4, 3), d=d, seed=0, init_scale=s)
    assert E.shape == (12, d) and U.shape == (27, 3 * d)
    assert abs(E.std() / s - 1) < 0.05  # N(0, 1)·s over 600 entries
    assert np.abs(U).max() <= s / np.sqrt(3 * d) and np.abs(U).max() > 0.9 * s / np.sqrt(3 * d)


def test_init_weights_float32_is_the_cast_of_float64():
    E64, U64 = init_weights(TASK, d=4, seed=3, dtype="float64")
    E32, U32 = init_weights(TASK, d=4, seed=3, dtype="float32")
    assert E32.dtype == np.float32 and np.array_equal(E32, E64.astype(np.float32))
    assert np.array_equal(U32, U64.astype(np.float32))


def test_epoch_permutation_is_a_permutation_that_changes_with_the_epoch():
    p0, p0b, p1 = (epoch_permutation(seed=7, epoch=e, n=100) for e in (0, 0, 1))
    assert sorted(p0) == list(range(100)) and np.array_equal(p0, p0b) and not np.array_equal(p0, p1)


def _mean_ce(E, U, X, y):
    d = E.shape[1]
    L = X.shape[1]
    scores = np.zeros((X.shape[0], U.shape[0]))
    for i, x in enumerate(X):
        for ell in range(L):
            scores[i] += U[:, ell * d : (ell + 1) * d] @ E[x[ell]]
    m = scores.max(axis=1, keepdims=True)
    logz = m[:, 0] + np.log(np.exp(scores - m).sum(axis=1))
    return float(np.mean(logz - scores[np.arange(len(y)), y]))


def _fd(f, A, h=1e-6):
    g = np.zeros_like(A)
    for idx in np.ndindex(A.shape):
        Ap, Am = A.copy(), A.copy()
        Ap[idx] += h
        Am[idx] -= h
        g[idx] = (f(Ap) - f(Am)) / (2 * h)
    return g


def test_one_full_batch_epoch_is_one_gradient_step_with_weight_decay(host_backend):
    d, lr, lam_W, lam_U, seed = 3, 0.5, 0.01, 0.02, 5
    data = make_data(TASK, n_spl=2, seed=seed)
    E0, U0 = init_weights(TASK, d=d, seed=seed, init_scale=1.0)
    N = data.X_train.shape[0]
    run = train(
        TASK,
        n_spl=2,
        d=d,
        lr=lr,
        batch=N,
        epochs=1,
        lam_W=lam_W,
        lam_U=lam_U,
        seed=seed,
        backend=host_backend,
        dtype="float64",
        init_scale=1.0,
        measure=False,
    )
    gE = _fd(lambda E: _mean_ce(E, U0, data.X_train, data.y_train), E0)
    gU = _fd(lambda U: _mean_ce(E0, U, data.X_train, data.y_train), U0)
    np.testing.assert_allclose(run.W, (E0 - lr * (gE + lam_W * E0)).T, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(run.U, U0 - lr * (gU + lam_U * U0), rtol=1e-7, atol=1e-9)


def test_full_batch_epoch_loss_is_the_cross_entropy_at_the_weights_before_the_step():
    data = make_data(TASK, n_spl=2, seed=6)
    E0, U0 = init_weights(TASK, d=3, seed=6, init_scale=1.0)
    run = train(
        TASK,
        n_spl=2,
        d=3,
        epochs=2,
        batch=data.X_train.shape[0],
        seed=6,
        backend="numpy",
        dtype="float64",
        init_scale=1.0,
        lam_W=0.0,
        lam_U=0.0,
        measure=False,
    )
    assert list(run.history["epoch"]) == [1, 2]
    assert run.history["loss"][0] == pytest.approx(_mean_ce(E0, U0, data.X_train, data.y_train), rel=1e-12)


def test_resume_of_a_finished_run_continues_to_the_new_epoch_count(tmp_path):
    kw = dict(n_spl=2, d=3, batch=3, seed=1, backend="numpy", dtype="float64", measure=False)
    full = train(TASK, epochs=4, **kw)
    train(TASK, epochs=2, checkpoint=str(tmp_path / "c.npz"), **kw)
    cont = fc.trainer.resume(str(tmp_path / "c.npz"), epochs=4)
    assert cont.epochs_done == 4 and np.array_equal(cont.W, full.W)


@pytest.mark.parametrize("bad", [dict(n_spl=0), dict(lr=-1.0), dict(batch=0)])
def test_invalid_settings_are_refused_naming_the_parameter(bad):
    name = next(iter(bad))
    with pytest.raises(fc.FCTheoryError, match=name):
        train(TASK, **{**dict(n_spl=2, d=3, epochs=1, measure=False), **bad})
