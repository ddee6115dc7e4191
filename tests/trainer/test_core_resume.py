"""Checkpoints: atomic writes, resume bitwise identical to an uninterrupted run, Ctrl-C, tqdm."""

import os
import signal

import numpy as np
import pytest

from fctheory import FCTheoryError, Task, train
from fctheory.trainer import TrainingInterrupted, load_checkpoint, resume

TASK = Task.random(3, 4, 3, 12, mu="zipf", seed=5)
KW = dict(n_spl=6, d=5, batch=8, lr=0.4, init_scale=0.3, measure=False)


def _same(a, b):
    assert np.array_equal(a.W, b.W) and np.array_equal(a.U, b.U)
    for k in ("epoch", "loss", "train_acc", "test_acc", "test_loss"):
        np.testing.assert_array_equal(a.history[k], b.history[k])


@pytest.mark.parametrize("layernorm", [False, True])
def test_resume_is_bitwise_identical(tmp_path, host_backend, layernorm):
    full = train(TASK, epochs=6, backend=host_backend, layernorm=layernorm, eval_every=2, **KW)
    ck = tmp_path / "run.npz"
    part = train(TASK, epochs=3, backend=host_backend, layernorm=layernorm, eval_every=2, checkpoint=ck, **KW)
    assert load_checkpoint(ck)["epochs_done"] == 3 == part.epochs_done
    cont = train(TASK, epochs=6, backend=host_backend, layernorm=layernorm, eval_every=2, resume=ck, **KW)
    _same(full, cont)
    assert cont.epochs_done == 6


def test_checkpoint_every_is_atomic_and_resumable(tmp_path):
    ck = tmp_path / "sub" / "c.npz"
    train(TASK, epochs=5, checkpoint=ck, checkpoint_every=2, **KW)
    assert sorted(os.listdir(ck.parent)) == ["c.npz"]  # no temporary file left behind
    assert load_checkpoint(ck)["epochs_done"] == 5
    again = resume(ck, epochs=7, measure=False)
    full = train(TASK, epochs=7, **KW)
    _same(full, again)


@pytest.fixture
def default_sigint():
    """Python's own SIGINT handler during the test, whatever the runner inherited (a job started in the
    background, e.g. with nohup, runs with SIGINT ignored), and the inherited one restored afterwards."""
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, inherited)


def test_ctrl_c_saves_a_checkpoint_and_resumes_identically(tmp_path, default_sigint):
    ck = tmp_path / "int.npz"

    def press_ctrl_c(epoch, info):
        if epoch == 2:
            os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(TrainingInterrupted) as exc:
        train(TASK, epochs=6, checkpoint=ck, callback=press_ctrl_c, **KW)
    assert exc.value.checkpoint == ck and exc.value.run.epochs_done == 2
    assert load_checkpoint(ck)["epochs_done"] == 2
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # handler restored
    cont = train(TASK, epochs=6, resume=ck, **KW)
    _same(train(TASK, epochs=6, **KW), cont)


def test_resume_refuses_a_different_configuration(tmp_path):
    ck = tmp_path / "c.npz"
    train(TASK, epochs=2, checkpoint=ck, **KW)
    with pytest.raises(FCTheoryError, match="lr"):
        train(TASK, epochs=4, resume=ck, **{**KW, "lr": 0.1})
    with pytest.raises(FCTheoryError, match="task"):
        train(Task.random(3, 4, 3, 12, mu="zipf", seed=6), epochs=4, resume=ck, **KW)
    with pytest.raises(FCTheoryError, match="epochs"):
        train(TASK, epochs=1, resume=ck, **KW)
    with pytest.raises(FCTheoryError, match="resume"):
        train(TASK, epochs=4, resume=tmp_path / "missing.npz", **KW)


def test_progress_bar_shows_loss_and_accuracy(capsys):
    train(TASK, epochs=2, progress=True, **KW)
    err = capsys.readouterr().err
    assert "loss=" in err and "train=" in err and "test=" in err
