"""The certificate of a network's own training objective in :func:`fctheory.diagnose`.

Oracles: :func:`fctheory.certify` called directly, the plain-NumPy training objective with unequal decays
(:func:`fctheory.risk.empirical.empirical_risk` at λ = 0 plus the two penalties), and the certified optimum R*
(a sound gap covers R − R* on perturbed optima).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import fctheory as fc
from fctheory.diagnosis.certificate import balanced_decays
from fctheory.io import training_sentences
from fctheory.risk.empirical import empirical_risk

LAM = 0.03


@pytest.fixture(scope="module")
def problem():
    task = fc.Task.random(3, 2, 3, 5, seed=2)
    S, y = training_sentences(task, n_spl=3, seed=1)
    opt = fc.optimum(task, lam=LAM, data=(S, y))
    return task, S, y, opt


def _training_objective(task, W, U, S, y, lam_W, lam_U):
    ce = empirical_risk(task, W, U, S, y, 0.0, grad=False)[0]
    return ce + 0.5 * lam_W * float(np.sum(W * W)) + 0.5 * lam_U * float(np.sum(U * U))


def test_the_diagnosis_carries_the_certificate_of_its_training_objective(problem):
    task, S, y, opt = problem
    rng = np.random.default_rng(0)
    W, U = opt.W + 0.05 * rng.standard_normal(opt.W.shape), opt.U + 0.05 * rng.standard_normal(opt.U.shape)
    D = fc.diagnose(task, W, U, lam_W=LAM, lam_U=LAM, data=(S, y), certificate="network", distances=False)
    c = D.certificate
    ref = fc.certify(task, W, U, lam=LAM, data=(S, y), solve=False)
    assert c["available"] and c["bound"] == "network" and "no solve" in c["bound_description"]
    for key in ("R", "lower_bound", "gap", "rel_gap"):
        assert c[key] == pytest.approx(getattr(ref, key), rel=1e-12)
    assert c["gap"] >= c["R"] - opt.R - 1e-12  # sound: at least the excess over the certified optimum
    assert "within" in c["message"] and "its own training objective" in c["message"]
    assert D.to_dict()["certificate"]["R"] == pytest.approx(c["R"], rel=1e-15)
    # auto on a small sample also solves: the bound is then (almost) min R̂
    A = fc.diagnose(task, W, U, lam_W=LAM, lam_U=LAM, data=(S, y), distances=False)
    assert A.certificate["bound"] == "optimum"
    assert A.certificate["gap"] == pytest.approx(c["R"] - opt.R, rel=1e-6, abs=1e-9)


def test_unequal_decays_are_the_same_objective_at_one_decay(problem):
    task, S, y, opt = problem
    lam_W, lam_U = 4 * LAM, LAM / 4  # sqrt(lam_W lam_U) = LAM: the optimum's objective, rescaled
    a = (lam_U / lam_W) ** 0.25
    W, U = a * opt.W, opt.U / a  # the optimum in the unequal-decay coordinates
    Wb, Ub, lam = balanced_decays(W, U, lam_W, lam_U)
    assert lam == pytest.approx(LAM, rel=1e-15)
    R_unequal = _training_objective(task, W, U, S, y, lam_W, lam_U)
    assert _training_objective(task, Wb, Ub, S, y, lam, lam) == pytest.approx(R_unequal, rel=1e-13)
    D = fc.diagnose(task, W, U, lam_W=lam_W, lam_U=lam_U, data=(S, y), certificate="network", distances=False)
    assert D.certificate["R"] == pytest.approx(R_unequal, rel=1e-12)
    assert D.certificate["rel_gap"] <= 1e-8 and D.certificate["lam"] == pytest.approx(LAM, rel=1e-15)


def test_the_trainers_data_object_is_accepted(problem):
    task = fc.Task.random(3, 2, 3, 5, seed=2)
    run = fc.train(task, n_spl=3, d=4, epochs=2, seed=1, backend="numpy", keep_data=True, lam_W=LAM, lam_U=LAM)
    a = fc.diagnose(task, run.W, run.U, lam_W=LAM, lam_U=LAM, data=run.data, certificate="network")
    b = fc.diagnose(task, run.W, run.U, lam_W=LAM, lam_U=LAM, data=(run.data.X_train, run.data.y_train),
                    certificate="network")  # fmt: skip
    assert a.certificate["R"] == b.certificate["R"] and a.certificate["N"] == 15


def test_no_certificate_where_none_applies(problem):
    task, S, y, opt = problem
    D = fc.diagnose(task, opt.W, opt.U, lam_W=0.0, lam_U=LAM, data=(S, y), distances=False)
    assert not D.certificate["available"] and "zero weight decay" in D.certificate["reason"]
    W = opt.W + np.linspace(0, 1, opt.W.size).reshape(opt.W.shape)  # no constant column: phi is defined
    D = fc.diagnose(task, W, opt.U, lam_W=0.0, lam_U=LAM, layernorm=True, data=(S, y), distances=False)
    assert not D.certificate["available"] and "h*" in D.certificate["reason"]
    assert fc.diagnose(task, opt.W, opt.U, lam_W=LAM, lam_U=LAM, distances=False).certificate is None


def test_bad_data_names_the_parameter(problem):
    task, S, y, opt = problem
    with pytest.raises(fc.FCTheoryError, match="data="):
        fc.diagnose(task, opt.W, opt.U, lam_W=LAM, lam_U=LAM, data=(S[:, :2], y))
    with pytest.raises(fc.FCTheoryError, match="data="):
        fc.diagnose(task, opt.W, opt.U, lam_W=LAM, lam_U=LAM, data=(S, y[:-1]))
    with pytest.raises(fc.FCTheoryError, match="data="):
        fc.diagnose(task, opt.W, opt.U, lam_W=LAM, lam_U=LAM, data=S)
    with pytest.raises(fc.FCTheoryError, match="certificate="):
        fc.diagnose(task, opt.W, opt.U, lam_W=LAM, lam_U=LAM, data=(S, y), certificate="solve")
    assert math.isfinite(opt.R)
