"""``fctheory diagnose``: one command from a state_dict to JSON, a markdown report and PNGs; user errors exit 2."""

from __future__ import annotations

import json

import numpy as np
import pytest

import fctheory as fc
from fctheory.cli import main
from fctheory.risk import true_risk_bruteforce


@pytest.fixture
def notebook_state_dict(tmp_path):
    """A state_dict of the paper's network (emb n_w×d, clf K×L·d) at Theorem 1's optimum, K = n_c^L."""
    torch = pytest.importorskip("torch", reason="needs torch: pip install 'fctheory[torch]'")
    task = fc.Task.full(3, 2, 2)
    W, U = fc.type1_configuration(task, d=4, lam=0.01, seed=0)
    p = tmp_path / "net.pt"
    torch.save({"emb.weight": torch.tensor(W.T), "clf.weight": torch.tensor(U)}, p)
    return p, task, W, U


def test_one_command_gives_json_report_and_pngs(notebook_state_dict, tmp_path, capsys):
    p, task, W, U = notebook_state_dict
    out = tmp_path / "diag"
    rc = main(["diagnose", str(p), "--nc", "3", "--lam-W", "0.01", "--lam-U", "0.01", "--out", str(out), "--json"])
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    d = doc["results"]
    assert d["R"] == pytest.approx(true_risk_bruteforce(task, W, U, 0.01).R, rel=1e-12)
    assert isinstance(d["R"], float) and isinstance(doc["task"], dict) and doc["task"]["K"] == 9
    assert d["theory"]["theorem"] == "Theorem 1" and d["matches_theorem"] is True
    assert doc["fctheory_version"] and "torch" in doc["versions"]
    assert (out / "report.md").exists() and (out / "diagnosis.json").exists()
    for name in ("pca_W", "pca_U", "norm_by_rank", "u_norms", "spectra"):
        assert (out / f"{name}.png").read_bytes()[:4] == b"\x89PNG"


def test_table_output(notebook_state_dict, capsys):
    p = notebook_state_dict[0]
    assert main(["diagnose", str(p), "--nc", "3", "--lam-W", "0.01", "--lam-U", "0.01"]) == 0
    text = capsys.readouterr().out
    assert "verdict: matches Theorem 1" in text and "distance to type I" in text


def test_latent_variables_from_a_file_are_used(tmp_path, capsys):
    task = fc.Task.random(3, 2, 2, 5, seed=3)
    rng = np.random.default_rng(0)
    W, U = rng.standard_normal((3, 6)), rng.standard_normal((5, 6))
    np.savez(tmp_path / "w.npz", W=W, U=U)
    np.save(tmp_path / "z.npy", task.Z)
    assert (
        main(
            [
                "diagnose",
                str(tmp_path / "w.npz"),
                "--nc",
                "3",
                "--Z",
                str(tmp_path / "z.npy"),
                "--lam-W",
                "0.01",
                "--lam-U",
                "0.01",
                "--json",
            ]
        )
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    d = doc["results"]
    assert d["R"] == pytest.approx(true_risk_bruteforce(task, W, U, 0.01).R, rel=1e-12)
    assert doc["task"]["Z"] == task.Z.tolist()
    assert d["theory"]["applies"] is False


@pytest.mark.parametrize(
    "extra, match",
    [
        ([], "--Z"),  # K = 5 < n_c^L: Z needed, never drawn at random
        (["--Z", "{zbad}"], "Z="),  # Z of the wrong shape
        (["--Z", "{z}", "--lam-W", "-1"], "--lam-W"),
        (["--Z", "{z}", "--confidence", "1.5"], "--confidence"),
        (["--task", "{z}", "--nc", "3"], "--task"),
        (["--Z", "{z}", "--out", "{file}"], "--out"),
    ],
)
def test_user_errors_exit_2_with_one_line(tmp_path, capsys, extra, match):
    task = fc.Task.random(3, 2, 2, 5, seed=3)
    np.savez(tmp_path / "w.npz", W=np.ones((3, 6)), U=np.ones((5, 6)))
    np.save(tmp_path / "z.npy", task.Z)
    np.save(tmp_path / "zbad.npy", task.Z[:4])
    (tmp_path / "file").write_text("x")
    fmt = {"z": str(tmp_path / "z.npy"), "zbad": str(tmp_path / "zbad.npy"), "file": str(tmp_path / "file")}
    argv = ["diagnose", str(tmp_path / "w.npz"), "--nc", "3", "--lam-W", "0.01", "--lam-U", "0.01"]
    argv += [a.format(**fmt) for a in extra]
    if "--task" in extra:
        argv.remove("--nc"), argv.remove("3")
        argv += ["--nc", "3"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert match in err and len(err.splitlines()) == 1


def test_missing_and_damaged_weights_exit_2(tmp_path, capsys):
    assert main(["diagnose", str(tmp_path / "nope.pt"), "--nc", "3", "--lam-W", "0", "--lam-U", "0"]) == 2
    (tmp_path / "bad.pt").write_bytes(b"garbage")
    assert main(["diagnose", str(tmp_path / "bad.pt"), "--nc", "3", "--lam-W", "0", "--lam-U", "0"]) == 2
    err = capsys.readouterr().err
    assert "nope.pt" in err and "bad.pt" in err
