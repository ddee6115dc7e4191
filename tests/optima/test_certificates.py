"""fctheory.optima.certificates: the ball-arithmetic certificate of the optimum of (5) (certify_optimality)."""

import numpy as np
import pytest

import fctheory as fc
from fctheory import FCTheoryError, Task
from fctheory.optima import certify_optimality, optimum

REL = 1e-10  # the relative certified gap fc.optimum reaches by default


def test_interval_bounds_contain_the_float_result():
    pytest.importorskip("flint")
    task, lam = Task.random(3, 2, 2, 5, seed=0, mu=np.array([0.7, 0.3])), 0.02
    res = optimum(task, lam=lam, precision="interval")
    iv = res.interval
    lo, hi = iv["R"]
    assert lo <= hi and hi - lo <= 1e-14 * res.R
    assert lo - 4e-16 * res.R <= res.R <= hi + 4e-16 * res.R  # the float R: its rounding only
    assert iv["lower_bound"] <= res.lower_bound + 1e-13 and iv["lower_bound"] <= lo
    assert 0 <= iv["gap"] <= REL * res.R and iv["rho"] >= res.rho - 1e-12
    # at a perturbed point the rigorous gap is positive and the bound still below the optimum
    W = res.W * 1.01
    bad = certify_optimality(task, W, res.U, lam)
    assert bad["gap"] > 1e-6 and bad["lower_bound"] <= res.R


def test_interval_is_for_h_only_and_needs_small_tasks():
    pytest.importorskip("flint")
    task, lam = Task.random(2, 2, 3, 3, seed=0), 0.05
    with pytest.raises(FCTheoryError, match="precision"):
        optimum(task, lam=lam, network="h*", precision="interval")
    W, U = fc.type1_configuration(task, d=2, lam=lam)
    with pytest.raises(FCTheoryError, match="max_pairs"):
        certify_optimality(task, W, U, lam, max_pairs=10)
