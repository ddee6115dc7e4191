"""``fctheory diagnose-features FILE``: .npz and .pt inputs, --json, one-line user errors with exit 2."""

import json
import math

import numpy as np
import pytest

from fctheory import ufm
from fctheory.cli import main

K, N_SPL, D = 4, 5, 6
LAM_W, LAM_H = 5e-3, 2e-3


def _optimum():
    """Features and classifier at the closed-form CE optimum (a simplex ETF, h = √(λ_W/(nλ_H))·w_y)."""
    opt = ufm.ce(K=K, n_spl=N_SPL, lam_W=LAM_W, lam_H=LAM_H)
    W = np.zeros((K, D))
    W[:, :K] = math.sqrt(opt.W_norm_sq / (K - 1)) * (np.eye(K) - 1.0 / K)
    y = np.repeat(np.arange(K), N_SPL)
    return opt.extras["h_over_w"] * W[y], y, W


@pytest.fixture
def npz(tmp_path):
    H, y, W = _optimum()
    path = tmp_path / "features.npz"
    np.savez(path, H=H, y=y, W=W, b=np.zeros(K))
    return str(path)


def test_npz_input_matches_the_optimum(npz, capsys):
    assert main(["diagnose-features", npz, "--lam-W", str(LAM_W), "--lam-H", str(LAM_H)]) == 0
    out = capsys.readouterr().out
    assert "ce+bias UFM" in out and "verdict: matches" in out


def test_pt_input_with_json(tmp_path, capsys):
    torch = pytest.importorskip("torch", reason="needs torch: pip install 'fctheory[torch]'")
    H, y, W = _optimum()
    path = tmp_path / "features.pt"
    torch.save({"H": torch.as_tensor(H, dtype=torch.float32), "y": torch.as_tensor(y), "W": torch.as_tensor(W)}, path)
    assert main(["diagnose-features", str(path), "--lam-W", str(LAM_W), "--lam-H", str(10 * LAM_H), "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["command"] == "diagnose-features" and obj["schema"] == "fctheory/1"
    res = obj["results"]
    assert res["result"]["model"] == "ce" and res["matches"] is False
    assert res["N"] == K * N_SPL
    assert obj["parameters"]["lam_H"] == pytest.approx(10 * LAM_H)


def test_out_writes_the_report(npz, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    out = tmp_path / "rep"
    assert main(["diagnose-features", npz, "--lam-W", str(LAM_W), "--lam-H", str(LAM_H), "--out", str(out)]) == 0
    assert (out / "report.md").is_file() and (out / "diagnosis.json").is_file()


@pytest.mark.parametrize(
    "extra, needle",
    [(["--lam-W", "-1", "--lam-H", "1e-3"], "--lam-W"), (["--lam-W", "1e-3", "--lam-H", "0"], "--lam-H")],
)
def test_bad_option_exits_2_with_one_line(npz, capsys, extra, needle):
    assert main(["diagnose-features", npz, *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and needle in err


def test_missing_entry_and_unknown_suffix_exit_2(tmp_path, capsys):
    bad = tmp_path / "f.npz"
    np.savez(bad, H=np.zeros((4, 2)), y=np.arange(4))
    assert main(["diagnose-features", str(bad), "--lam-W", "1e-3", "--lam-H", "1e-3"]) == 2
    assert "'W'" in capsys.readouterr().err
    other = tmp_path / "f.csv"
    other.write_text("1,2\n")
    assert main(["diagnose-features", str(other), "--lam-W", "1e-3", "--lam-H", "1e-3"]) == 2
    assert ".npz" in capsys.readouterr().err


def test_safetensors_input(tmp_path, capsys):
    st = pytest.importorskip("safetensors.numpy")
    H, y, W = _optimum()
    path = tmp_path / "features.safetensors"
    st.save_file({"H": H, "y": y.astype(np.int64), "W": W}, str(path))
    assert main(["diagnose-features", str(path), "--lam-W", str(LAM_W), "--lam-H", str(LAM_H), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["results"]["matches"] is True
