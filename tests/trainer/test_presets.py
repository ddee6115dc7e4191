"""Presets and the command line: every --quick preset reaches 100% training accuracy."""
import json

import numpy as np
import pytest

from fctheory.cli import main
from fctheory.trainer import PRESETS, get_preset
from fctheory.trainer.reproduce import acceptance


def test_full_presets_match_the_notebooks():
    """Derivations A.2/A.4 (the garbled table read as: weight decays 1e-3, fig4c λ_W = 0)."""
    for name in ("fig3", "fig4a", "fig4b", "fig4c"):
        p = get_preset(name)
        assert (p.n_c, p.s_c, p.L, p.K, p.d, p.lr, p.batch, p.lam_U, p.init_scale) == (
            3, 400, 15, 1000, 100, 0.1, 100, 1e-3, 1e-3)
    assert [get_preset(n).epochs for n in ("fig3", "fig4a", "fig4b", "fig4c")] == [1200, 10, 3000, 500]
    assert [get_preset(n).n_spl for n in ("fig3", "fig4a", "fig4b", "fig4c")] == [5, 500, 5, 5]
    assert get_preset("fig4c").layernorm and get_preset("fig4c").lam_W == 0
    assert get_preset("fig3").mu == "uniform" and get_preset("fig4b").mu == "zipf"
    k50 = get_preset("k50")
    assert (k50.K, k50.n_spl, k50.mu) == (50, 100, "uniform")
    t = get_preset("fig3").task()
    assert (t.K, t.n_w) == (1000, 1200) and np.array_equal(t.Z, get_preset("fig3").task().Z)


def test_every_quick_preset_reaches_full_train_accuracy_via_cli(tmp_path, capsys):
    for name in PRESETS:
        assert main(["train", "--preset", name, "--quick", "--json", "--out", str(tmp_path)]) == 0
        out = json.loads(capsys.readouterr().out)["results"]  # the CLI's JSON schema: results under "results"
        assert out["measurements"]["train_acc"] == 1.0, name
        assert out["acceptance"] == {"train accuracy = 100%": True}
        assert (tmp_path / f"{name}-quick.ckpt.npz").exists()
        assert (tmp_path / f"{name}-quick_pca_W.png").stat().st_size > 1000
    # a second call reuses the finished checkpoint (no training)
    assert main(["train", "--preset", "k50", "--quick", "--json", "--out", str(tmp_path)]) == 0
    assert json.loads(capsys.readouterr().out)["results"]["epochs_done"] == get_preset("k50", quick=True).epochs


def test_reproduce_quick_writes_the_report(tmp_path, capsys):
    # reuse checkpoints so the report is built without retraining where possible
    assert main(["reproduce", "--quick", "--json", "--out", str(tmp_path), "--presets", "fig3,fig4c"]) == 0
    res = json.loads(capsys.readouterr().out)["results"]
    assert all(all(v.values()) for v in res["acceptance"].values())
    text = (tmp_path / "report.md").read_text()
    assert "### fig3 (quick)" in text and "### fig4c (quick)" in text and "Theorem 3" in text
    assert "![fig4c pca_U](fig4c-quick_pca_U.png)" in text
    assert (tmp_path / "fig4c-quick_norm_by_rank.png").exists()


def test_reproduce_no_train_reports_existing_checkpoints_only(tmp_path, capsys):
    from fctheory import Task, train

    p = get_preset("fig4c", quick=True)
    kw = p.train_kwargs()
    kw["epochs"] = 3  # a partial run of the quick preset
    train(p.task(), n_spl=p.n_spl, d=p.d, **kw, checkpoint=tmp_path / "fig4c-quick.ckpt.npz", measure=False)
    kw["epochs"] = p.epochs
    assert main(["reproduce", "--quick", "--no-train", "--json", "--out", str(tmp_path), "--presets",
                 "fig3,fig4c"]) == 0
    res = json.loads(capsys.readouterr().out)["results"]
    assert list(res["acceptance"]) == ["fig4c"]
    assert res["acceptance"]["fig4c"]["training completed all epochs"] is False
    text = (tmp_path / "report.md").read_text()
    assert "Not run (no checkpoint" in text and "3/100 epochs" in text
    assert not (tmp_path / "fig3-quick.ckpt.npz").exists()  # nothing was trained


def test_cli_errors_exit_2(capsys):
    assert main(["reproduce", "--quick", "--presets", "fig9"]) == 2
    assert "--presets" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["train", "--preset", "fig9"])
    assert e.value.code == 2


def test_acceptance_criteria_of_the_issue():
    """The acceptance function encodes the issue's thresholds (checked on synthetic measurements)."""
    from types import SimpleNamespace as NS

    m = NS(test_acc=1.0, W_norm_mean=1.40, pca_W=np.array([34.0, 35.5, 0.5]), U_norm_mean=0.1)
    run = NS(measurements=m, epochs_done=1200, config=NS(epochs=1200))
    assert all(acceptance("fig3", run).values())
    m.pca_W = np.array([34.0, 36.0, 0.5])  # 36/34.835 − 1 = 3.3% > 3%
    assert not acceptance("fig3", run)["σ₁, σ₂ of W within 3% of √(τ/2) = 34.835"]
    m.test_acc = 0.71
    assert not acceptance("fig4b", run)["final test accuracy ≤ 70%"]
    m.U_norm_mean = 0.0975470857 * 1.06
    assert not acceptance("fig4c", run)["mean ‖u‖ within 5% of τ*/√(KL) = 0.09755"]
