"""Input validation of the exact-risk engine and the trainer: every bad input refused cleanly, one test per root cause.

Each test fails on the code before the fix (the symptom is named in its docstring).
"""

import json
import math
import os
import time
import zipfile

import numpy as np
import pytest

import fctheory as fc
from fctheory import FCTheoryError, Task
from fctheory._files import load_npz, write_npz
from fctheory.risk import class_sentences, estimate_cost, evaluate_risk, expected_margins, minimize_true_risk
from fctheory.risk import true_risk, true_risk_bruteforce
from fctheory.trainer import (
    TrainConfig,
    TrainData,
    epoch_permutation,
    init_weights,
    load_checkpoint,
    make_data,
    measure,
    resume,
    theory_prediction,
    train,
)
from fctheory.trainer.core import CHECKPOINT_KIND

TASK = Task.random(3, 2, 2, 4, seed=0)
FULL = Task.full(3, 2, 2)
KW = dict(n_spl=3, d=3, batch=4, lr=0.3, init_scale=0.3, backend="numpy", dtype="float64", measure=False)


def _weights(task, d=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((d, task.n_w)), rng.standard_normal((task.K, task.L * d))


@pytest.fixture
def ckpt(tmp_path):
    path = tmp_path / "run.npz"
    train(TASK, epochs=2, checkpoint=path, **KW)
    return path


def _rewrite(path, **changes):
    """The checkpoint at ``path`` with some entries replaced (written as a valid, current-format file)."""
    z = load_npz(path, kind=CHECKPOINT_KIND)
    z.update(changes)
    write_npz(str(path), z, kind=CHECKPOINT_KIND)
    return path


# ----------------------------------------------------------------------------- kinds (Bool, Seed, budget args)
def test_string_boolean_is_refused_not_read_as_true():
    """true_risk(task, W, U, lam, "False") used to compute the LayerNorm risk (a non-empty string is truthy)."""
    W, U = _weights(FULL)
    with pytest.raises(FCTheoryError, match=r"layernorm='False' is invalid"):
        true_risk(FULL, W, U, 0.01, layernorm="False")
    with pytest.raises(FCTheoryError, match="layernorm"):
        expected_margins(FULL, W, U, layernorm=1)


@pytest.mark.parametrize(
    "call",
    [
        lambda: make_data(TASK, n_spl=2, seed=-1),
        lambda: init_weights(TASK, d=3, seed=-1),
        lambda: epoch_permutation(seed=-1, epoch=0, n=5),
        lambda: train(TASK, seed=-1, **KW),
        lambda: TrainConfig(n_spl=2, seed=-1),
        lambda: minimize_true_risk(FULL, d=2, lam=0.1, seed=-1),
    ],
)
def test_negative_seed_is_refused_naming_seed(call):
    """Negative seeds reached numpy's own ValueError ('expected non-negative integer')."""
    with pytest.raises(FCTheoryError, match=r"seed=-1 is invalid"):
        call()


@pytest.mark.parametrize(
    "kw,name",
    [
        (dict(max_seconds=-1.0), "max_seconds"),
        (dict(max_seconds="10"), "max_seconds"),
        (dict(max_bytes=float("nan")), "max_bytes"),
        (dict(max_bytes=0), "max_bytes"),
    ],
)
def test_budget_arguments_are_validated(kw, name):
    W, U = _weights(FULL)
    with pytest.raises(FCTheoryError, match=name):
        true_risk(FULL, W, U, 0.01, **kw)


def test_budget_refusal_names_the_estimate_and_uses_the_global_budget():
    """max_seconds=None now means the budget in force (fctheory.budget), refused before any allocation."""
    task = Task.full(3, 6, 6)
    W, U = np.zeros((4, task.n_w)), np.zeros((task.K, 24))
    est = estimate_cost(task, d=4)
    with fc.budget(max_seconds=est.seconds / 2):
        with pytest.raises(FCTheoryError, match=r"task=.* estimated time [0-9.e+]+ s .* exceeds the time budget"):
            true_risk(task, W, U, 0.1)
    with fc.budget(max_bytes=10_000):
        with pytest.raises(FCTheoryError, match=r"estimated working memory .* MiB .* exceeds the memory budget"):
            true_risk(task, W, U, 0.1)


def test_explicit_budget_arguments_override_the_global_budget():
    W, U = _weights(FULL)
    ref = true_risk(FULL, W, U, 0.01)
    with fc.budget(max_seconds=1e-9):
        with pytest.raises(FCTheoryError, match="max_seconds"):
            true_risk(FULL, W, U, 0.01)
        assert true_risk(FULL, W, U, 0.01, max_seconds=math.inf) == ref  # inf: no limit


def test_astronomical_task_is_refused_without_overflow():
    """s_c**L beyond the float range made estimate_cost raise OverflowError (int too large to convert)."""
    task = Task.random(3, 1000, 200, 5, seed=0)
    est = estimate_cost(task, d=4)
    assert est.seconds == math.inf and est.tiles == (0, 0) and est.pairs == 5 * 1000**200 * 5
    t0 = time.perf_counter()
    with pytest.raises(FCTheoryError, match=r"task=.*10\^601 sentence-class pairs"):
        true_risk(task, np.ones((4, task.n_w)), np.ones((5, 800)), 0.1)
    assert time.perf_counter() - t0 < 1.0


def test_weight_shapes_tied_to_the_task_are_checked_first():
    W, U = _weights(FULL)
    with pytest.raises(FCTheoryError, match=r"W=.*shape \(d, n_w\) = \(d, 6\)"):
        evaluate_risk(FULL, W.T, U)
    with pytest.raises(FCTheoryError, match=r"U=.*\(9, 6\)"):
        true_risk_bruteforce(FULL, W, U[:, :5])
    with pytest.raises(FCTheoryError, match=r"W0=.*\(2, 6\)"):
        minimize_true_risk(FULL, d=2, lam=0.1, W0=np.ones((3, 6)))


def test_scores_overflowing_float64_are_refused_not_nan():
    """W = 1e200·W made the engine return R = nan (inf − inf in the softmax)."""
    W, U = _weights(FULL)
    with pytest.raises(FCTheoryError, match=r"(W|U)=.*overflow"):
        true_risk(FULL, W * 1e200, U * 1e200, 0.0)
    with pytest.raises(FCTheoryError, match=r"W=.*penalty .* overflows"):
        true_risk(FULL, W * 1e160, U, 0.01)


def test_class_index_out_of_range_is_refused():
    """class_sentences(task, K) used to raise a raw IndexError."""
    with pytest.raises(FCTheoryError, match=r"k=4 is invalid: must be a class index < K = 4"):
        class_sentences(TASK, 4)


# ----------------------------------------------------------------------------- checkpoints
def test_checkpoint_is_atomic_versioned_and_verified(ckpt):
    assert os.listdir(ckpt.parent) == ["run.npz"]  # no temporary file left
    with zipfile.ZipFile(ckpt) as zf:
        assert "__format__.npy" in zf.namelist()
    header = json.loads(str(np.load(ckpt)["__format__"]))
    assert header["kind"] == CHECKPOINT_KIND and header["version"] >= 1
    ck = load_checkpoint(ckpt)
    assert ck["E"].shape == (TASK.n_w, 3) and ck["U"].shape == (TASK.K, TASK.L * 3) and ck["epochs_done"] == 2


@pytest.mark.parametrize("keep", [0.3, 0.9])
def test_truncated_checkpoint_is_refused(ckpt, keep):
    """A truncated file raised zipfile.BadZipFile / EOFError from np.load."""
    data = ckpt.read_bytes()
    ckpt.write_bytes(data[: int(len(data) * keep)])
    with pytest.raises(FCTheoryError, match=r"path=.*is (not a readable|damaged)"):
        load_checkpoint(ckpt)
    with pytest.raises(FCTheoryError, match=r"resume=.*is (not a readable|damaged)"):
        train(TASK, epochs=4, resume=ckpt, **KW)


def test_checkpoint_with_mismatched_shapes_is_refused(ckpt):
    """E of the wrong shape was handed to the engine: resumed runs returned weights of the wrong shape."""
    z = load_npz(ckpt, kind=CHECKPOINT_KIND)
    _rewrite(ckpt, E=np.zeros((z["E"].shape[0], 5)))
    with pytest.raises(
        FCTheoryError, match=r"does not match its configuration: E has shape \(6, 5\), expected \(6, 3\)"
    ):
        load_checkpoint(ckpt)


def test_checkpoint_whose_task_indexes_out_of_range_is_refused(ckpt):
    """Z with a concept ≥ n_c made the numba engine read out of bounds (word indices ≥ n_w)."""
    z = load_npz(ckpt, kind=CHECKPOINT_KIND)
    Z = z["Z"].copy()
    Z[0, 0] = 7
    _rewrite(ckpt, Z=Z)
    with pytest.raises(FCTheoryError, match=r"resume=.*invalid task .*Z="):
        train(TASK, epochs=4, resume=ckpt, **{**KW, "backend": "numba"})


@pytest.mark.parametrize(
    "change,match",
    [
        (dict(E=np.zeros((6, 3), dtype=np.float32)), "dtype float32, configured float64"),
        (dict(epochs_done=np.array(9)), r"epochs_done=9 is outside \[0, epochs=2\]"),
        (dict(hist_loss=np.array([0.5])), "history 'loss' must have one number per epoch"),
        (dict(hist_epoch=np.array([1.0, 3.0])), "epoch numbers"),
        (dict(hist_train_acc=np.array([0.5, 1.5])), r"'train_acc' has entries outside \[0.0, 1.0\]"),
        (dict(U=np.full((4, 6), np.nan)), "U has non-finite entries"),
        (dict(config=np.array('{"n_spl": 0}')), "invalid configuration .*n_spl=0"),
        (dict(version=np.array(99)), "format 99"),
    ],
)
def test_checkpoint_inconsistent_with_its_configuration_is_refused(ckpt, change, match):
    _rewrite(ckpt, **change)
    with pytest.raises(FCTheoryError, match=match):
        load_checkpoint(ckpt)


def test_foreign_npz_is_refused_as_checkpoint(tmp_path):
    p = tmp_path / "weights.npz"
    np.savez(p, W=np.zeros((3, 6)), U=np.zeros((4, 6)))
    with pytest.raises(FCTheoryError, match="path="):
        load_checkpoint(p)


def test_old_format_checkpoint_is_read_and_resumes_identically(tmp_path, ckpt):
    """Checkpoints of format 1 (plain np.savez, no header) are still read — and verified."""
    z = load_npz(ckpt, kind=CHECKPOINT_KIND)
    z["version"] = np.array(1)
    old = tmp_path / "old.npz"
    np.savez(old, **z)
    a = train(TASK, epochs=4, resume=old, **KW)
    b = train(TASK, epochs=4, **KW)
    assert np.array_equal(a.W, b.W) and np.array_equal(a.U, b.U)
    np.savez(old, **{**z, "E": np.zeros((2, 2))})
    with pytest.raises(FCTheoryError, match="does not match its configuration"):
        load_checkpoint(old)


def test_bad_checkpoint_path_is_refused_before_training(tmp_path):
    """checkpoint=<unwritable path> used to train the whole run, then fail on writing and lose it."""
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    t0 = time.perf_counter()
    with pytest.raises(FCTheoryError, match=r"checkpoint=.*cannot be created"):
        train(TASK, epochs=10**5, checkpoint=blocker / "run.npz", **KW)
    with pytest.raises(FCTheoryError, match=r"checkpoint=.*existing folder"):
        train(TASK, epochs=10**5, checkpoint=tmp_path, **KW)
    assert time.perf_counter() - t0 < 1.0  # 10**5 epochs would take minutes


def test_resume_refuses_unknown_options_and_missing_files(ckpt, tmp_path):
    with pytest.raises(FCTheoryError, match=r"lr=0.1 is invalid: is not an option of resume"):
        resume(ckpt, lr=0.1)
    with pytest.raises(FCTheoryError, match=r"path=.*existing file"):
        resume(tmp_path / "missing.npz")
    with pytest.raises(FCTheoryError, match=r"epochs=1 is invalid: must be >= the 2 epochs"):
        resume(ckpt, epochs=1)


# ----------------------------------------------------------------------------- trainer numerics and data
def test_divergence_is_an_error_never_nan_weights():
    """lr far too large: the run must stop with an error naming lr, not return NaN weights."""
    with pytest.raises(FCTheoryError, match=r"lr=1e\+20 is invalid: training diverged .* at epoch 1"):
        train(TASK, **{**KW, "lr": 1e20, "init_scale": 1.0, "dtype": "float32"}, epochs=3)


def test_batch_beyond_the_data_is_the_whole_set(host_backend):
    """batch=10**9 allocated a 10**9-row minibatch buffer in the numba kernel (MemoryError)."""
    N = TASK.K * KW["n_spl"]
    a = train(TASK, epochs=3, **{**KW, "batch": 10**9, "backend": host_backend})
    b = train(TASK, epochs=3, **{**KW, "batch": N, "backend": host_backend})
    assert np.array_equal(a.W, b.W) and np.array_equal(a.U, b.U)


def test_seed_none_is_drawn_and_recorded():
    run = train(TASK, epochs=2, seed=None, **{k: v for k, v in KW.items()})
    assert isinstance(run.config.seed, int) and 0 <= run.config.seed < 2**63
    again = train(TASK, epochs=2, seed=run.config.seed, **KW)
    assert np.array_equal(run.W, again.W)


def test_train_data_out_of_range_is_refused_by_measure():
    """Word indices ≥ n_w in TrainData raised a raw IndexError inside measure."""
    W, U = _weights(TASK)
    bad = TrainData(np.array([[0, 6]]), np.array([0]), np.zeros((0, 2), int), np.zeros(0, int))
    with pytest.raises(FCTheoryError, match=r"data=.*word indices must be < n_w = 6"):
        measure(TASK, W, U, data=bad, distances=False)
    with pytest.raises(FCTheoryError, match="y_train"):
        TrainData(np.array([[0, 1]]), np.array([0, 1]), np.zeros((0, 2), int), np.zeros(0, int))
    with pytest.raises(FCTheoryError, match="X_train"):
        TrainData(np.array([[0, -1]]), np.array([0]), np.zeros((0, 2), int), np.zeros(0, int))


def test_measure_rescales_scale_invariant_quantities():
    """Norms, PCA and cosines of 1e200·W: the squares used to overflow (inf norms, NaN cosines)."""
    W, U = _weights(TASK)
    data = make_data(TASK, n_spl=2, seed=0, n_test=1)
    a = measure(TASK, W, U, distances=False, predict=False)
    with np.errstate(all="raise"):
        b = measure(TASK, W * 1e200, U * 1e-200, distances=False, predict=False)
    assert b.W_norm_mean == pytest.approx(a.W_norm_mean * 1e200, rel=1e-13)
    assert b.W_norm_std == pytest.approx(a.W_norm_std * 1e200, rel=1e-12)
    np.testing.assert_allclose(b.pca_W, a.pca_W * 1e200, rtol=1e-12)
    assert b.cos_W_within == pytest.approx(a.cos_W_within, rel=1e-12)
    assert b.cos_U_across == pytest.approx(a.cos_U_across, rel=1e-12)
    with pytest.raises(FCTheoryError, match=r"(W|U)=.*overflow"):
        measure(TASK, W * 1e200, U * 1e200, data=data, distances=False, predict=False)


def test_theory_prediction_at_edge_penalties_is_finite_or_empty():
    for lam in (1e-300, 1e-3, 1e300):
        p = theory_prediction(FULL, d=4, layernorm=False, lam_W=lam, lam_U=lam)
        vals = [v for v in p.values() if isinstance(v, (float, np.ndarray))]
        assert p["theorem"].startswith("Theorem 1") and all(np.all(np.isfinite(v)) for v in vals)
    assert theory_prediction(FULL, d=4, layernorm=False, lam_W=1e300, lam_U=1e300)["tau"] == 0.0  # λ ≥ trivial: τ = 0
    with pytest.raises(FCTheoryError, match="lam_W"):
        theory_prediction(FULL, d=4, layernorm=False, lam_W=-1.0, lam_U=0.1)


def test_train_config_fields_are_checked():
    with pytest.raises(FCTheoryError, match="n_spl=0"):
        TrainConfig(n_spl=0)
    with pytest.raises(FCTheoryError, match="dtype='float16'"):
        TrainConfig(n_spl=2, dtype="float16")
    assert TrainConfig(n_spl=2, dtype=np.float64).dtype == "float64"
    with pytest.raises(FCTheoryError, match=r"TrainConfig.__init__\(\)"):
        TrainConfig()
