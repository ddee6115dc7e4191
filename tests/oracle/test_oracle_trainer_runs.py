"""Oracles for the trainer's run-level public numbers: TrainRun.summary(),
Measurements.to_dict(), the measurements attached to a run and its snapshots.

summary() and to_dict() are compared field by field with the dataclass fields they serialise
(a hand-written converter: NaN/inf → None, arrays → lists, nested dicts), and must survive a strict
JSON round trip. The run's final measurements are recomputed here from its final weights and its
training/test sentences (per-sample CE in softplus form, argmax with ties to the lowest class);
every snapshot is compared with the final measurements of a shorter run with the same seed (the run
is deterministic, so epoch e of a long run is the end of an e-epoch run).

Checklist (field -> test)
-------------------------
TrainRun.summary(): task, config, epochs_done, wall_time_s, last_epoch, measurements
                                                      -> test_summary_equals_the_run_fields
Measurements.to_dict(): every field                   -> test_measurements_to_dict_equals_every_field
TrainRun.measurements.train_acc/test_acc/train_ce/test_ce at the final weights
                                                      -> test_run_measurements_equal_hand_evaluation_of_final_weights[ln]
TrainRun.snapshots (epoch, Measurements)              -> test_snapshots_equal_shorter_runs
TrainRun.history["time"], wall_time                   -> test_summary_equals_the_run_fields
"""

import dataclasses
import json
import math

import numpy as np
import pytest

import fctheory as fc
from tests.oracle import oracles as O
from fctheory.trainer import core

TASK = fc.Task.full(3, 2, 2, mu=[0.7, 0.3])
KW = dict(
    d=4, lr=0.3, batch=4, lam_W=1e-3, lam_U=2e-3, seed=3, backend="numpy", dtype="float64", init_scale=0.5, n_test=2
)


def _plain(v):
    """Independent JSON conversion: floats (NaN/inf → None), ints, arrays → nested lists, dicts, lists."""
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, np.ndarray):
        return [_plain(x) for x in v.tolist()]
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return float(v) if math.isfinite(v) else None
    return v


def _eq(a, b):
    """Exact equality of two JSON trees (floats compared exactly)."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_eq(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_eq(x, y) for x, y in zip(a, b))
    return (
        type(a) is type(b)
        and a == b
        or (
            isinstance(a, (int, float))
            and isinstance(b, (int, float))
            and not isinstance(a, bool)
            and float(a) == float(b)
        )
    )


@pytest.fixture(scope="module")
def run():
    return fc.train(TASK, n_spl=3, epochs=3, eval_every=3, keep_data=True, **KW)


def test_summary_equals_the_run_fields(run):
    s = run.summary()
    json.dumps(s, allow_nan=False)  # strict JSON: no NaN/inf left
    # the task as the one task codec writes it (fctheory.io.task_object): read back, it is the same task
    assert s["task"] == {"n_c": 3, "s_c": 2, "L": 2, "K": 9, "n_w": 6, "mu": [0.7, 0.3], "Z": "full"}
    back = fc.io.task_from_dict(s["task"])
    assert np.array_equal(back.Z, TASK.Z) and np.array_equal(back.mu, TASK.mu)
    assert s["config"] == {f.name: getattr(run.config, f.name) for f in dataclasses.fields(run.config)}
    assert s["config"]["seed"] == 3 and s["config"]["epochs"] == 3 and s["config"]["n_spl"] == 3
    assert s["epochs_done"] == run.epochs_done == 3
    assert s["wall_time_s"] == run.wall_time
    assert _eq(s["last_epoch"], {k: _plain(v[-1]) for k, v in run.history.items()})
    assert s["last_epoch"]["epoch"] == 3
    assert _eq(s["measurements"], _plain(dataclasses.asdict(run.measurements)))
    t = run.history["time"]
    assert np.all(np.diff(t) >= 0) and t[0] >= 0 and run.wall_time >= t[-1] * (1 - 1e-9)
    # eval_every=3: epochs 1, 3 (a multiple, and the last) evaluated, epoch 2 not (NaN → None in JSON)
    assert not math.isnan(run.history["test_acc"][0]) and math.isnan(run.history["test_acc"][1])
    assert run.final_test_acc == run.history["test_acc"][-1]


def test_summary_of_an_untrained_run_has_no_last_epoch():
    r0 = fc.train(TASK, n_spl=3, epochs=0, measure=False, **KW)
    s = r0.summary()
    assert s["epochs_done"] == 0 and "last_epoch" not in s and "measurements" not in s


def test_measurements_to_dict_equals_every_field(run):
    m = run.measurements
    d = m.to_dict()
    json.dumps(d, allow_nan=False)
    names = [f.name for f in dataclasses.fields(m)]
    assert list(d) == names
    for name in names:
        assert _eq(d[name], _plain(getattr(m, name))), name
    # NaN fields become None, not dropped: a layer-free h has phiW_norm_mean None
    assert d["phiW_norm_mean"] is None


def _hand_eval(W, U, X, y, ln, eps):
    V = O.my_phi(W, eps) if ln else W
    K, L = U.shape[0], X.shape[1]
    d = W.shape[0]
    tot, cor = [], 0
    for i in range(X.shape[0]):
        s = O.my_scores(V, U, list(X[i]), K, L, d)
        tot.append(O.my_ce_and_dy(s, int(y[i]))[0])
        cor += int(min(range(K), key=lambda k: (-s[k], k)) == y[i])
    return math.fsum(tot) / X.shape[0], cor / X.shape[0]


@pytest.mark.parametrize("ln", [False, True])
def test_run_measurements_equal_hand_evaluation_of_final_weights(ln, run):
    r = run if not ln else fc.train(TASK, n_spl=3, epochs=3, layernorm=ln, keep_data=True, **KW)
    data = core.make_data(TASK, n_spl=3, seed=3, n_test=2)
    np.testing.assert_array_equal(r.data.X_train, data.X_train)
    ce, acc = _hand_eval(r.W, r.U, data.X_train, data.y_train, ln, 1e-5)
    assert abs(r.measurements.train_ce - ce) <= 1e-12 * ce and r.measurements.train_acc == acc
    ce_t, acc_t = _hand_eval(r.W, r.U, data.X_test, data.y_test, ln, 1e-5)
    assert abs(r.measurements.test_ce - ce_t) <= 1e-12 * ce_t and r.measurements.test_acc == acc_t
    # the history's last test entries are the same evaluation
    assert r.history["test_acc"][-1] == acc_t
    assert abs(r.history["test_loss"][-1] - ce_t) <= 1e-12 * ce_t
    # norms from the final weights: W_norm_mean over words, U_norm_mean over (k, ℓ) blocks
    wn = [float(np.linalg.norm(r.W[:, j])) for j in range(TASK.n_w)]
    assert abs(r.measurements.W_norm_mean - math.fsum(wn) / len(wn)) <= 1e-13 * r.measurements.W_norm_mean
    d = KW["d"]
    un = [float(np.linalg.norm(r.U[k, l * d : (l + 1) * d])) for k in range(TASK.K) for l in range(TASK.L)]
    assert abs(r.measurements.U_norm_mean - math.fsum(un) / len(un)) <= 1e-13 * r.measurements.U_norm_mean


def test_snapshots_equal_shorter_runs():
    long = fc.train(TASK, n_spl=3, epochs=3, measure_every=1, **KW)
    epochs = [e for e, _ in long.snapshots]
    assert epochs[:3] == [1, 2, 3] or epochs == [1, 2, 3]
    for e, m in long.snapshots:
        short = fc.train(TASK, n_spl=3, epochs=e, **KW)
        for name in ("train_acc", "test_acc"):
            assert getattr(m, name) == getattr(short.measurements, name), (e, name)
        for name in ("train_ce", "test_ce", "W_norm_mean", "U_norm_mean", "cos_W_within", "cos_U_across"):
            a, b = getattr(m, name), getattr(short.measurements, name)
            assert abs(a - b) <= 1e-12 * abs(b), (e, name)


def test_summary_and_to_dict_map_non_finite_values_to_none():
    """n_test=0: no test set, so test_acc/test_loss are NaN in the history and the measurements;
    the JSON forms carry None there (and inside arrays), never NaN."""
    r = fc.train(TASK, n_spl=3, epochs=2, **{**KW, "n_test": 0})
    s = r.summary()
    json.dumps(s, allow_nan=False)
    assert s["last_epoch"]["test_acc"] is None and s["last_epoch"]["test_loss"] is None
    assert s["measurements"]["test_acc"] is None and s["measurements"]["test_ce"] is None
    assert s["last_epoch"]["loss"] == float(r.history["loss"][-1])
    m = dataclasses.replace(r.measurements, pca_W=np.array([1.5, np.nan, np.inf]))
    d = m.to_dict()
    json.dumps(d, allow_nan=False)
    assert d["pca_W"] == [1.5, None, None]
