"""``fctheory risk``: weights from files, exact R next to the prediction."""

import json
import re

import numpy as np
import pytest

import fctheory as fc

from fctheory import Task
from fctheory.cli import main
from fctheory.configurations import type1_configuration, type2_configuration
from fctheory.risk import load_weights, true_risk


@pytest.fixture
def type1_file(tmp_path):
    task = Task.full(3, 2, 2)
    W, U = type1_configuration(task, d=4, lam=0.01, seed=0)
    p = tmp_path / "w.npz"
    np.savez(p, W=W, U=U)
    return p, task, W, U


def test_cli_json_reports_exact_risk_and_theorem1_prediction(type1_file, capsys):
    p, task, W, U = type1_file
    assert main(["risk", str(p), "--lam", "0.01", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["results"]
    assert out["R"] == pytest.approx(true_risk(task, W, U, 0.01), rel=1e-14)
    assert out["theorem"].startswith("Theorem 1")
    assert out["R_minus_predicted"] == pytest.approx(0.0, abs=1e-12)  # W, U is Theorem 1's optimum
    assert out["grad_norm"] < 1e-12


def test_cli_table_and_task_from_file(tmp_path, capsys):
    task = Task.full(3, 3, 2, mu="zipf")
    W, U = type2_configuration(task, d=4, lam=0.01, seed=0)
    p = tmp_path / "w2.npz"
    np.savez(p, W=W, U=U, Z=task.Z, mu=task.mu)
    assert main(["risk", str(p), "--lam", "0.01", "--layernorm"]) == 0
    text = capsys.readouterr().out
    assert "Theorem 3" in text and "R_minus_predicted" in text


def test_cli_partial_latent_set_without_theorem(tmp_path, capsys):
    rng = np.random.default_rng(0)
    p = tmp_path / "w3.npz"
    np.savez(p, W=rng.normal(size=(3, 6)), U=rng.normal(size=(5, 6)))
    with fc.budget(max_seconds=0.05):  # no theorem, and no budget for the certified optimum by enumeration
        assert main(["risk", str(p), "--mu", "0.7,0.3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["results"]
    assert out["theorem"] == "none" and "no theorem" in out["no_prediction_because"]
    assert out["predicted_R"] is None and out["R_minus_predicted"] is None  # strict JSON: null, never NaN


def test_cli_table_leaves_a_prediction_that_does_not_exist_empty_and_keeps_the_reason(tmp_path, capsys):
    rng = np.random.default_rng(0)
    p = tmp_path / "w3.npz"
    np.savez(p, W=rng.normal(size=(3, 6)), U=rng.normal(size=(5, 6)))
    with fc.budget(max_seconds=0.05):  # no theorem, and no budget for the certified optimum by enumeration
        assert main(["risk", str(p), "--mu", "0.7,0.3"]) == 0
    text = capsys.readouterr().out
    assert not re.search(r"\bnan\b", text, re.I)
    rows = {line.split()[0]: line.split()[1:] for line in text.splitlines()[2:] if line.strip()}
    assert rows["predicted_R"] == [] and rows["predicted_R0"] == [] and rows["R_minus_predicted"] == []
    assert "no theorem" in text and rows["theorem"] == ["none"]


@pytest.mark.parametrize(
    "argv,match",
    [
        (["risk", "/nonexistent/w.npz"], "does not exist"),
        (["risk", "{p}", "--nc", "4"], "--nc"),
        (["risk", "{p}", "--lam", "-1"], "lam"),
    ],
)
def test_cli_errors_exit_2_with_message(type1_file, capsys, argv, match):
    p = type1_file[0]
    assert main([a.format(p=p) for a in argv]) == 2
    assert match in capsys.readouterr().err


def test_load_weights_rejects_npz_without_arrays(tmp_path):
    from fctheory import FCTheoryError

    p = tmp_path / "bad.npz"
    np.savez(p, A=np.zeros(2))
    with pytest.raises(FCTheoryError, match="'W'"):
        load_weights(p)


def test_state_dict_of_the_authors_layout(tmp_path, capsys):
    torch = pytest.importorskip("torch", reason="needs torch: pip install 'fctheory[torch]'")
    task = Task.full(3, 2, 2)
    W, U = type1_configuration(task, d=4, lam=0.01, seed=0)
    p = tmp_path / "net.pt"
    torch.save({"emb.weight": torch.tensor(W.T), "clf.weight": torch.tensor(U)}, p)
    W2, U2, _ = load_weights(p)
    np.testing.assert_array_equal(W2, W)
    np.testing.assert_array_equal(U2, U)
    assert main(["risk", str(p), "--lam", "0.01", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["results"]["R"] == pytest.approx(true_risk(task, W, U, 0.01), rel=1e-14)
