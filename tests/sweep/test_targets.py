"""fctheory.sweep.targets: the diagnose target runs; a point's seed is derived from the point when not given."""

import numpy as np
import pytest

import fctheory as fc

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")


def test_seed_is_derived_from_the_point_when_not_given(tmp_path):
    spec = {
        "target": "true_risk",
        "workers": 1,
        "fixed": {"n_c": 2, "s_c": 2, "L": 2, "d": 3, "scale": 0.5},
        "grid": {"lam": [0.0, 0.1]},
    }
    t1, t2 = fc.sweep(spec), fc.sweep(spec)
    assert (t1["seed"] == t2["seed"]).all() and t1["seed"].nunique() == 2
    task = fc.Task.full(2, 2, 2)
    rng = np.random.default_rng([int(t1["seed"].iloc[1]), 7])
    W, U = rng.standard_normal((3, 4)) * 0.5, rng.standard_normal((4, 6)) * 0.5
    assert abs(t1["R"].iloc[1] - fc.true_risk(task, W, U, 0.1)) <= 1e-12 * t1["R"].iloc[1]


@pytest.mark.skipif(not hasattr(fc, "diagnose"), reason="fctheory.diagnose not available yet")
def test_diagnose_target_runs(tmp_path):
    t = fc.sweep(
        {
            "target": "diagnose",
            "workers": 1,
            "fixed": {"n_c": 3, "s_c": 2, "L": 2, "d": 4, "weights": "type1"},
            "grid": {"lam": [0.01, 0.05]},
        }
    )
    assert (t["status"] == "ok").all(), t["error"].tolist()
